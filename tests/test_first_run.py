"""What a new user meets first: point forms, shipped maps by name, the compile notice,
the cache folders' pruning, `engine warm-up`, and the help of every option."""

import io
import json
import os
import subprocess
import sys
import textwrap

import numba
import pytest

import engine
from engine import _cache
from engine.cli import _parser, main
from engine.errors import MapError, RulesError

from .conftest import ROOT


def _run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", [
    ["reach", "demo", "--race", "humans", "--json", "--at"],
    ["visible", "demo", "--json", "--from"],
])
def test_a_point_is_x_comma_y_or_x_space_y_everywhere(capsys, command):
    _, comma, _ = _run([*command, "30,40"], capsys)
    _, space, _ = _run([*command, "30", "40"], capsys)
    _, quoted, _ = _run([*command, "30 40"], capsys)  # one argument, as a shell quotes it
    assert comma == space == quoted and '"' in comma


def test_a_path_takes_either_form_and_mixes_them(capsys):
    base = ["price", "demo", "--race", "humans", "--json", "--path"]
    _, a, _ = _run([*base, "10,10", "20,10", "20,20"], capsys)
    _, b, _ = _run([*base, "10", "10", "20,10", "20", "20"], capsys)
    assert a == b and '"legs"' in a


@pytest.mark.parametrize(("tokens", "words"), [
    (["30"], "expected points X,Y or X Y, got '30'"),
    (["30", "40", "50"], "expected points X,Y or X Y"),
    (["30", "40,50"], "expected points X,Y or X Y"),
    (["30,40", "50,60"], "expected one point X,Y or X Y"),
    (["30;40"], "expected points X,Y or X Y, got '30;40'"),
    (["30 40 50"], "expected points X,Y or X Y, got '30 40 50'"),
    (["30,y"], "expected a point X,Y, got '30,y'"),
])
def test_a_bad_point_is_one_line(capsys, tokens, words):
    with pytest.raises(SystemExit) as exc:
        main(["reach", "demo", "--race", "humans", "--at", *tokens])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and words in err, err


def test_every_option_has_help():
    parser = _parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        for action in p._actions:
            assert action.help, f"engine {name} {action.option_strings or action.dest}"


def test_shipped_maps_load_by_name_from_any_folder(tmp_path, monkeypatch, capsys):
    assert engine.shipped_maps() == ["crossings", "demo"]
    here = engine.load_map(ROOT / "maps" / "demo.geojson")
    monkeypatch.chdir(tmp_path)
    bf = engine.load_map("demo")
    assert bf.features == here.features and (bf.width, bf.height) == (here.width, here.height)
    assert engine.load_map("crossings.geojson").width == engine.load_map("crossings").width
    code, out, _ = _run(["reach", "demo", "--race", "humans", "--at", "30,40"], capsys)
    assert code == 0 and "reachable" in out
    with pytest.raises(MapError, match=r"no map file 'dmeo' \(nor a shipped map of that name: "
                       r"crossings, demo\)"):
        engine.load_map("dmeo")


def test_a_local_file_wins_over_a_shipped_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").write_text('{"type": "FeatureCollection", "battlefield": '
                                   '{"width": 3, "height": 2, "units": "cm"}, "features": []}')
    assert engine.load_map("demo").width == 3


def test_manoeuvre_on_rules_without_them_says_which_do(capsys):
    rules = engine.load_rules("fantasy-warlord")
    grid = engine.cost_grid(engine.load_map("demo"), rules, rules.unit("humans"))
    with pytest.raises(RulesError, match="only Battlesystem prices manoeuvres"):
        engine.manoeuvre(grid, (30, 40), "face")


def test_the_compile_notice_is_said_once(monkeypatch):
    monkeypatch.setattr(_cache, "_ANNOUNCED", [])
    said = io.StringIO()
    _cache.announce_compiles(said)
    _cache.announce_compiles(said)  # a second call adds no second listener

    @numba.njit
    def one(x):
        return x + 1

    @numba.njit
    def two(x):
        return one(x) * 2

    assert two(1) == 4 and one(2.0) == 3.0
    assert said.getvalue() == ("engine: compiling kernels, first run only (`engine warm-up` "
                               "compiles them all ahead)\n")


def _aged(folder, name, when):
    path = folder / name
    path.mkdir(parents=True)
    os.utime(path, (when, when))
    return path


def test_prune_keeps_the_current_folder_and_the_two_used_last(tmp_path):
    root = tmp_path / "tabletop-movement"
    current = _aged(root, "numba-0.2.0-cur", 50)
    old = [_aged(root, f"numba-0.1.0-{i}", 100 + i) for i in range(4)]
    other = _aged(root, "not-ours", 1)
    removed = _cache.prune(current)
    assert sorted(removed) == sorted(old[:2])
    assert current.exists() and other.exists() and old[2].exists() and old[3].exists()
    assert not old[0].exists() and not old[1].exists()


def test_configure_marks_its_folder_used_and_prunes_beside_it(tmp_path):
    root = tmp_path / "tabletop-movement"
    stale = [_aged(root, f"numba-0.0.{i}-x", 10 + i) for i in range(3)]
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    subprocess.run([sys.executable, "-c", "import engine"], cwd=tmp_path, env=env, check=True,
                   timeout=120)
    names = sorted(p.name for p in root.iterdir())
    current = f"numba-{engine.__version__}-{_cache.source_hash()}"
    assert names == sorted([current, stale[1].name, stale[2].name])


def test_warm_up_command(capsys):
    code, out, _ = _run(["warm-up"], capsys)
    assert code == 0 and out.startswith("kernels ready in ")


_WOODS = "maps/battlesystem/light-woods.geojson"
# One command of each kind on the shipped maps and rulesets, each of its forms that
# compiles kernels of its own (ranks or none, any-angle or the lattice, ground priced per
# started quantum, line of sight drawn to a picture).
_EVERY_KIND = [
    ["reach", "demo", "--race", "humans", "--at", "30,40"],
    ["reach", "demo", "--race", "humans", "--depth", "0", "--at", "30,40"],
    ["reach", "demo", "--race", "humans", "--at", "30,40", "--lattice"],
    ["route", "demo", "--race", "humans", "--from", "30,40", "--to", "150,60"],
    ["route", "demo", "--race", "humans", "--depth", "0", "--from", "30,40", "--to", "150,60"],
    ["route", "demo", "--race", "humans", "--from", "30,40", "--to", "150,60", "--lattice"],
    ["route", "crossings", "--race", "humans", "--from", "5,5", "--to", "60,40"],
    ["price", "demo", "--race", "humans", "--path", "10,10", "20,10", "20,20"],
    ["visible", "demo", "--from", "30,40", "--png", "{tmp}/sight.png"],
    ["visible", "demo", "--from", "30,40", "--to", "150,60"],
    ["threat", "demo", "--enemy", "humans@30,40", "--enemy", "orcs@150,60"],
    ["flow", "demo", "--race", "humans", "--goal", "90.25,75.25", "--from", "20,60"],
    ["charge", "demo", "--race", "humans", "--from", "30,40", "--to", "40,50",
     "--min-range", "2"],
    ["network", "demo", "--race", "humans"],
    ["route", _WOODS, "--rules", "battlesystem", "--race", "infantry",
     "--from", "2,2", "--to", "8,2"],
    ["reach", _WOODS, "--rules", "battlesystem", "--race", "infantry",
     "--at", "2,2"],
    ["manoeuvre", _WOODS, "--rules", "battlesystem", "--race",
     "infantry", "--at", "2,2", "--kind", "face"],
    ["demo", "--png", "{tmp}/demo.png"],
]

_COMPILED_BY = textwrap.dedent("""
    import contextlib, io, json, sys
    from numba.core import event
    from engine.cli import main

    compiled = {}

    class Names(event.Listener):
        def on_start(self, ev):
            compiled.setdefault(" ".join(argv[:2]), []).append(
                ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Names())
    for argv in json.loads(sys.argv[1]):
        with contextlib.redirect_stdout(io.StringIO()):
            if main([*argv, *(["--json"] if argv[0] != "demo" else [])]):
                sys.exit(f"{argv} failed")
    print(json.dumps(compiled))
""")


@pytest.mark.slow
def test_after_warm_up_no_command_compiles_a_kernel(tmp_path):
    """`engine warm-up` compiles every kernel the commands call: afterwards, in a fresh
    process on the same cache folder, one command of each kind compiles none."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    subprocess.run([sys.executable, "-m", "engine", "warm-up"], cwd=ROOT, env=env,
                   check=True, capture_output=True, timeout=900)
    argv = [[a.format(tmp=tmp_path) for a in command] for command in _EVERY_KIND]
    done = subprocess.run([sys.executable, "-c", _COMPILED_BY, json.dumps(argv)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {}
