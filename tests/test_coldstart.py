"""A cold start's helper process (`engine._coldstart`): its signatures are the ones the
engine calls, and a cold command gives the warm answer with the helper's kernels
compiled by the helper, or by itself when the helper fails."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from numba import types

from engine import _coldstart
from engine.cli import _COLD, main

from .conftest import ROOT


def test_the_notation_reads_and_writes_every_kind_of_argument():
    text = "f8 i8 b1 u1[:] i4[:,:] (f8[:] i1[:,:,:]) f4[:,:]"
    sig = _coldstart.signature(text)
    assert sig[0] == types.float64 and sig[2] == types.boolean
    assert sig[4] == types.Array(types.int32, 2, "C")
    assert sig[5] == types.Tuple([types.Array(types.float64, 1, "C"),
                                  types.Array(types.int8, 3, "C")])
    assert _coldstart.describe(sig) == text
    with pytest.raises(ValueError, match="C-ordered"):
        _coldstart.describe((types.Array(types.float64, 1, "A"),))


def test_every_planned_kernel_is_listed():
    planned = {name for helper, ahead in _COLD.values() for name in helper + ahead}
    assert planned <= set(_coldstart.KERNELS)


# Commands that call every kernel of `_coldstart.KERNELS` on a shipped map.
_CALLERS = [
    ["route", "demo", "--race", "humans", "--from", "30,40", "--to", "150,60"],
    ["route", "demo", "--race", "humans", "--depth", "0", "--from", "30,40", "--to", "150,60"],
    ["route", "demo", "--race", "humans", "--depth", "0", "--from", "30,40", "--to", "150,60",
     "--lattice"],
    ["reach", "demo", "--race", "humans", "--depth", "0", "--at", "30,40"],
    ["reach", "demo", "--race", "humans", "--at", "30,40"],
    ["reach", "demo", "--race", "humans", "--depth", "0", "--at", "30,40", "--lattice"],
    ["flow", "demo", "--race", "humans", "--goal", "90.25,75.25", "--from", "20,60"],
]


@pytest.fixture(scope="module")
def engine_called():
    for argv in _CALLERS:
        assert main([*argv, "--json"]) == 0


@pytest.mark.parametrize("name", sorted(_coldstart.KERNELS))
def test_each_signature_is_the_one_the_engine_calls(name, engine_called):
    called = _coldstart._dispatcher(name).signatures
    assert _coldstart.signature(_coldstart.KERNELS[name][2]) in called, (
        f"{name} is called as: " + " | ".join(_coldstart.describe(s) for s in called))


_COLD_RUN = textwrap.dedent("""
    import json, sys
    from numba.core import event
    from engine import _coldstart
    from engine.cli import main

    compiled = []

    class Names(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Names())
    if sys.argv[1] == "broken":  # a helper that ends at once, compiling nothing
        sys.executable = "/bin/false"
    _coldstart.enable()
    code = main(json.loads(sys.argv[2]))
    print(json.dumps(compiled))
    sys.exit(code)
""")


def _cold(tmp_path, how, argv):
    """Run ``argv`` in a fresh process with an empty cache folder: its JSON answer and
    the kernels that process compiled itself."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-c", _COLD_RUN, how, json.dumps(argv)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    *answer, compiled = done.stdout.strip().splitlines()
    return json.loads(answer[-1]), json.loads(compiled)


ROUTE = ["route", "demo", "--race", "humans", "--from", "30,40", "--to", "150,60", "--json"]


def test_a_cold_route_leaves_the_search_to_the_helper(tmp_path, capsys):
    answer, compiled = _cold(tmp_path, "helped", ROUTE)
    assert "search_labels" not in compiled  # the helper compiled it; loaded from the cache
    assert "walk_path" in compiled  # compiled here, while the helper worked
    assert main(ROUTE) == 0
    assert answer == json.loads(capsys.readouterr().out)


def test_a_failing_helper_costs_only_the_compile(tmp_path, capsys):
    argv = ["reach", "demo", "--race", "humans", "--depth", "0", "--at", "30,40", "--json"]
    answer, compiled = _cold(tmp_path, "broken", argv)
    assert "many_theta" in compiled, compiled
    assert main(argv) == 0
    assert answer == json.loads(capsys.readouterr().out)
