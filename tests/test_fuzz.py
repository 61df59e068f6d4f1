"""Fuzzing: malformed maps (GeoJSON and Tiled), rules files, Moving AI files, command
lines and API arguments end in an `EngineError` (on the command line: one line, exit 2), never
in any other exception, a traceback or a crash.

Each check runs twice: a short run of 100 cases in every test run, and a
long one (``pytest -m fuzz``; ``ENGINE_FUZZ_EXAMPLES`` cases, default 2000) that
is skipped unless selected. The mutations are structural (a value of a document
replaced by a hostile one, a key dropped or added, a list grown) and byte-level
(bytes flipped, dropped, repeated, the text cut short). Grids are sized against
a 512 MB memory budget here (``ENGINE_MEMORY_MB``), so a map blown up to a vast
table is refused as quickly as it would be on a small machine.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.cli import main
from engine.maps.movingai import load_grid_map, load_scenarios
from engine.search.scenarios import run_scenarios

from .conftest import MAPS

RULES_DIR = Path(engine.__file__).parent / "rules"
MAP_FILES = sorted([*(MAPS / "battlesystem").glob("*.geojson"),
                    *(MAPS / "examples").glob("*.geojson"),
                    *(MAPS / "reglamento").glob("*.geojson")])
RULE_FILES = sorted(RULES_DIR.glob("*.toml"))
SHORT = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                 suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=int(os.environ.get("ENGINE_FUZZ_EXAMPLES", "2000")),
                deadline=None, suppress_health_check=list(HealthCheck))

# Integers written into a document's text by their digit count (json.dumps cannot
# write one of over 4300 digits, and a Python literal that long is refused too).
_BIG = re.compile(r'"@(-?)(\d+)-digits@"')
_HOSTILE = [
    0, -1, -0.5, 0.5, 3, 1e-310, 5e-324, 1e-9, 1e9, 1e308, 1.7976931348623157e308,
    200000, 2**63, -(2**63), "@400-digits@", "@-400-digits@", "@5000-digits@",
    math.nan, math.inf, -math.inf, "", "x", "woods", "river", None, True, False,
    [], {}, [1], [[1, 2]], [[[0, 0], [1, 1]]], {"type": "Point"}, "\x00", "é" * 3,
]


def _text(doc) -> str:
    """``doc`` as JSON text, with every "@N-digits@" string an N-digit integer."""
    return _BIG.sub(lambda m: m.group(1) + "9" * int(m.group(2)),
                    json.dumps(doc, allow_nan=True))


def _python(value):
    """``value`` with every "@N-digits@" string the integer it names (as an API
    caller's dict would hold it)."""
    if isinstance(value, str) and (m := _BIG.fullmatch(f'"{value}"')):
        return int(m.group(1) + "9" * min(int(m.group(2)), 4000))
    if isinstance(value, dict):
        return {k: _python(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_python(v) for v in value]
    return value


def _slots(doc, where=()):
    """Every place in ``doc`` a value sits: paths of keys and indices."""
    yield where
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(
        doc, list) else ()
    for key, value in items:
        yield from _slots(value, (*where, key))


@st.composite
def mutated(draw, doc):
    """``doc`` (a parsed JSON document) with one to three structural mutations."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        slots = list(_slots(doc))
        where = draw(st.sampled_from(slots))
        if not where:
            continue
        parent = doc
        for key in where[:-1]:
            parent = parent[key]
        key = where[-1]
        action = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add", "grow"]))
        if action == "replace":
            parent[key] = copy.deepcopy(draw(st.sampled_from(_HOSTILE)))
        elif action == "drop":
            del parent[key]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["terrain", "bogus", "x-note", "cell", "width"]))] = (
                copy.deepcopy(draw(st.sampled_from(_HOSTILE))))
        elif action == "grow" and isinstance(parent, list):
            parent.extend([copy.deepcopy(parent[key])] * draw(st.sampled_from([1, 10, 3000])))
    return doc


@st.composite
def mangled(draw, data: bytes):
    """``data`` with one to four byte-level mutations."""
    b = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        if not b:
            break
        i = draw(st.integers(0, len(b) - 1))
        n = draw(st.integers(1, 16))
        action = draw(st.sampled_from(["flip", "drop", "repeat", "cut", "insert"]))
        if action == "flip":
            b[i] ^= 1 << draw(st.integers(0, 7))
        elif action == "drop":
            del b[i:i + n]
        elif action == "repeat":
            b[i:i] = b[i:i + n] * draw(st.sampled_from([2, 50]))
        elif action == "cut":
            del b[i:]
        else:
            b[i:i] = draw(st.sampled_from([b"9" * 400, b"-", b"e999", b"\xff\xfe", b"\x00",
                                           b"NaN", b"[", b"}", b'"', b"\n"]))
    return bytes(b)


@pytest.fixture(scope="module", autouse=True)
def small_memory():
    """Grids sized against 512 MB, whatever this machine has."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ENGINE_MEMORY_MB", "512")
        yield


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def _one_line(exc: engine.EngineError) -> None:
    text = str(exc)
    assert text and "\n" not in text and "Traceback" not in text, text


def _rules_for(path: Path) -> str:
    """The shipped ruleset a shipped map is drawn for."""
    return path.parent.name if path.parent.name in ("battlesystem", "reglamento") else (
        "fantasy-warlord")


def _answers(bf: engine.Battlefield, rules: engine.Ruleset) -> None:
    """A map that loads answers a reach and a route (or refuses them cleanly)."""
    race = next(iter(rules.races))
    w, h = bf.width, bf.height
    try:
        g = engine.cost_grid(bf, rules, rules.unit(race))
        engine.reach(g, (w / 2, h / 2), min(w, h) / 4)
        engine.price_path(g, engine.route(g, (w / 4, h / 4), (3 * w / 4, 3 * h / 4)).path)
    except engine.EngineError as exc:
        _one_line(exc)


def _load(source, rules: str) -> None:
    try:
        bf = engine.load_map(source)
    except engine.EngineError as exc:
        _one_line(exc)
        return
    _answers(bf, engine.load_rules(rules))


def check_map_documents(case):
    doc, rules = case
    _load(_python(doc), rules)


def check_map_files(case, scratch):
    data, rules = case
    path = scratch / "mutated.geojson"
    path.write_bytes(data)
    _load(path, rules)


def _twice(check, **strategies):
    """The short and the long (``-m fuzz``) test of ``check`` over ``strategies``."""
    return (SHORT(given(**strategies)(check)),
            pytest.mark.fuzz(LONG(given(**strategies)(check))))


_shipped_map = st.sampled_from(MAP_FILES)
_map_docs = _shipped_map.flatmap(
    lambda p: st.tuples(mutated(json.loads(p.read_text())), st.just(_rules_for(p))))
_map_texts = _shipped_map.flatmap(lambda p: st.tuples(
    mutated(json.loads(p.read_text())).map(lambda doc: _text(doc).encode()),
    st.just(_rules_for(p))))
_map_bytes = _shipped_map.flatmap(
    lambda p: st.tuples(mangled(p.read_bytes()), st.just(_rules_for(p))))
test_map_documents, test_map_documents_long = _twice(check_map_documents, case=_map_docs)
test_map_texts, test_map_texts_long = _twice(check_map_files, case=_map_texts)
test_map_bytes, test_map_bytes_long = _twice(check_map_files, case=_map_bytes)


# Tiled maps: the shipped example's .tmj mutated as a document, its .tmx byte by byte, each
# read beside the external tileset both use.
TILED = MAPS / "tiled"


def check_tiled_files(case, scratch):
    data, suffix = case
    shutil.copy(TILED / "terrain.tsx", scratch / "terrain.tsx")
    path = scratch / f"mutated{suffix}"
    path.write_bytes(data)
    _load(path, "fantasy-warlord")


_tiled_texts = st.tuples(mutated(json.loads((TILED / "field.tmj").read_text())).map(
    lambda doc: _text(doc).encode()), st.just(".tmj"))
_tiled_bytes = st.tuples(mangled((TILED / "field.tmx").read_bytes()), st.just(".tmx"))
test_tiled_texts, test_tiled_texts_long = _twice(check_tiled_files, case=_tiled_texts)
test_tiled_bytes, test_tiled_bytes_long = _twice(check_tiled_files, case=_tiled_bytes)


# Rules files: a number replaced by a hostile one, a line dropped or repeated, bytes.
_NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?([eE][-+]?\d+)?(?![\w.])")
_HOSTILE_TOML = ["0", "-1", "1e-310", "1e308", "1e309", "inf", "nan", "9" * 400, "9" * 5000,
                 '"x"', "[]", "{}", "true", "0.0", "-0.0", "1_000", "0x10"]
_HOME_MAP = {"fantasy-warlord": MAPS / "examples" / "humans-hill.geojson",
             "battlesystem": MAPS / "battlesystem" / "uphill-woods.geojson",
             "reglamento": MAPS / "reglamento" / "march.geojson"}


@st.composite
def mutated_rules(draw, path: Path):
    """The text of a shipped rules file with one to three mutations of its lines."""
    lines = path.read_text().splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        numbers = list(_NUMBER.finditer(lines[i]))
        action = draw(st.sampled_from(["number", "number", "number", "drop", "repeat"]))
        if action == "number" and numbers:
            m = draw(st.sampled_from(numbers))
            lines[i] = lines[i][:m.start()] + draw(st.sampled_from(_HOSTILE_TOML)) + lines[
                i][m.end():]
        elif action == "drop":
            del lines[i]
        elif action == "repeat":
            lines.insert(i, lines[i])
    return "\n".join(lines)


def _check_rules(path: Path, home: str) -> None:
    try:
        rules = engine.load_rules(path)
    except engine.EngineError as exc:
        _one_line(exc)
        return
    _answers(engine.load_map(_HOME_MAP[home]), rules)


def check_rules_files(case, scratch):
    data, home = case
    path = scratch / "mutated.toml"
    path.write_bytes(data)
    _check_rules(path, home)


_shipped_rules = st.sampled_from(RULE_FILES)
_rules_texts = _shipped_rules.flatmap(
    lambda p: st.tuples(mutated_rules(p).map(str.encode), st.just(p.stem)))
_rules_bytes = _shipped_rules.flatmap(
    lambda p: st.tuples(mangled(p.read_bytes()), st.just(p.stem)))
test_rules_texts, test_rules_texts_long = _twice(check_rules_files, case=_rules_texts)
test_rules_bytes, test_rules_bytes_long = _twice(check_rules_files, case=_rules_bytes)


# Moving AI files: a small octile map and its scenarios, mutated by field and by byte.
_GRID = "type octile\nheight 5\nwidth 8\nmap\n........\n.@@@..T.\n...@....\n.S.@.WW.\n........\n"
_SCEN = ("version 1\n0\tsmall.map\t8\t5\t0\t0\t7\t4\t8.24264069\n"
         "0\tsmall.map\t8\t5\t7\t0\t0\t4\t8.65685425\n")
_HOSTILE_FIELDS = ["-1", "0", "99999999", "9" * 400, "1e308", "nan", "inf", "x", "", "1.5",
                   "octile", "@", "map", "\t"]


@st.composite
def mutated_fields(draw, text: str):
    """``text`` with one to three of its whitespace-separated fields replaced."""
    fields = re.split(r"(\s+)", text)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(fields) - 1))
        fields[i] = draw(st.sampled_from(_HOSTILE_FIELDS))
    return "".join(fields)


def check_movingai(case, scratch):
    grid_text, scen_text = case
    (scratch / "small.map").write_bytes(grid_text)
    (scratch / "small.map.scen").write_bytes(scen_text)
    try:
        scenarios = load_scenarios(scratch / "small.map.scen")
        result = run_scenarios(load_grid_map(scratch / "small.map"), scenarios)
    except engine.EngineError as exc:
        _one_line(exc)
        return
    assert result.scenarios == len(scenarios)
    rc, out, err = _cli(["movingai", str(scratch / "small.map.scen"), "--json"], scratch)
    assert rc == 0, err
    assert json.loads(out, parse_constant=_not_json)["scenarios"] == len(scenarios)


def _either(text: str):
    """``text`` as bytes: mangled, field-mutated or as it is."""
    return st.one_of(mangled(text.encode()), mutated_fields(text).map(str.encode),
                     st.just(text.encode()))


_movingai = st.tuples(_either(_GRID), _either(_SCEN))
test_movingai, test_movingai_long = _twice(check_movingai, case=_movingai)


# The command line, in-process: a shipped command line with tokens replaced,
# dropped or added. ``--debug`` is always given, so anything but an EngineError
# raises here with its traceback instead of ending in exit status 3.
def _not_json(constant: str):
    raise AssertionError(f"--json printed {constant}, which is not JSON")


def _cli(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(["--debug", *argv])
            except SystemExit as exc:  # argparse: --help, --version or a usage error
                rc = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
    return rc, out.getvalue(), err.getvalue()


_EX, _BS = MAPS / "examples", MAPS / "battlesystem"
_ARGVS = [
    ["reach", f"{_EX}/archers.geojson", "--race", "humans", "--ranks", "2", "--at", "0.25,3.25",
     "--probe", "11.25,3.25", "--json"],
    ["route", f"{_EX}/goblins.geojson", "--race", "goblins", "--from", "0,3.25", "--to",
     "24.5,3.25", "--json"],
    ["price", f"{_BS}/light-woods.geojson", "--rules", "battlesystem", "--race", "infantry",
     "--depth", "0", "--path", "2,2.125", "8.5,2.125", "--json"],
    ["manoeuvre", f"{_BS}/manoeuvres.geojson", "--rules", "battlesystem", "--race", "infantry",
     "--at", "5,5", "--kind", "frontage", "--figures", "2", "--json"],
    ["charge", f"{_BS}/charge.geojson", "--rules", "battlesystem", "--race", "infantry",
     "--from", "1,5", "--to", "10,5", "--min-range", "2", "--json"],
    ["network", f"{_EX}/wood-elves.geojson", "--race", "wood elves", "--json"],
    ["visible", f"{_EX}/humans-hill.geojson", "--from", "2,3", "--to", "40,3", "--json"],
    ["threat", f"{_EX}/orcs.geojson", "--enemy", "orcs@5,3", "--probe", "20,3", "--json"],
    ["flow", f"{_EX}/goblins.geojson", "--race", "goblins", "--goal", "24.5,3.25", "--from",
     "0,3.25", "--json"],
    ["route", f"{_EX}/goblins.geojson", "--race", "goblins", "--from", "0,3.25", "--to",
     "24.5,3.25", "--png", "route.svg"],
    ["reach", f"{TILED}/field.tmx", "--race", "humans", "--at", "@Blue Knights", "--probe",
     "@Objective", "--json"],
    ["threat", f"{TILED}/field.tmj", "--enemy", "orcs@@Red Orcs", "--probe", "@Objective",
     "--json"],
]
_HOSTILE_TOKENS = [
    "1e-320", "-1", "nan", "inf", "1e308", "9" * 400, "", "x,y", ",", "1,2,3", "--", "-",
    "--json", "--png", "out.jpg", "out.pdf", "/dev/zero", "/nonexistent.geojson", "demo", "0",
    "-0", "1e-300", "humans", "hill trolls", "@", "orcs@", "orcs@1e308,0", "0,0", "-5,-5",
    "1e9,1e9", "--ranks", "1000000", "--depth", "--move", "--frontage", "0.0001", "--march",
    "--rules", "battlesystem", "--formation", "regular", "--help", "x" * 5000, "a\x00b",
    "maps", ".", "~", "@Red Orcs", "@", "@@", "goblins@@Objective", "@Nowhere",
]


@st.composite
def command_lines(draw):
    argv = list(draw(st.sampled_from(_ARGVS)))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(argv)))
        action = draw(st.sampled_from(["replace", "replace", "drop", "insert"]))
        if action == "insert" or i == len(argv):
            argv.insert(i, draw(st.sampled_from(_HOSTILE_TOKENS)))
        elif action == "replace":
            argv[i] = draw(st.sampled_from(_HOSTILE_TOKENS))
        else:
            del argv[i]
    return argv


def check_command_lines(argv, scratch):
    rc, out, err = _cli(argv, scratch)
    assert rc in (0, 2), (argv, rc, err)
    if rc == 2 and not err.startswith("usage:"):
        assert err.count("\n") == 1 and err.startswith("engine"), (argv, err)
    if rc == 0 and "--json" in argv and "--help" not in argv and out:
        json.loads(out, parse_constant=_not_json)


test_command_lines, test_command_lines_long = _twice(check_command_lines, argv=command_lines())


# The Python API: every public call given hostile arguments.
_POINTS = [(1.0, 1.0), np.array([1.0, 1.0]), [3, 2], (np.float32(1), np.int64(2)),
           (math.nan, 1.0), (1e308, 1.0), (-1.0, 1.0), "1,1", (1, 2, 3), None, (True, 1),
           (10**400, 1), np.array([[1.0, 1.0]]), (), {"x": 1}]
_NUMBERS = [0, 1, 2.5, -1, 1e-320, 1e308, math.inf, math.nan, 10**400, True, "3", None,
            np.float64(2), np.int8(3), 2**70, [1]]
_CELLS = [(0, 0), (1, 2), (-1, 0), (99, 99), (1.5, 0), np.array([0, 1]), (True, 0), None,
          (10**400, 0), "0,0"]


class _Table(tuple):
    """(battlefield, rules, cost grid), shown briefly in hypothesis's reports."""

    def __repr__(self) -> str:
        return "<humans-hill.geojson, fantasy-warlord, humans>"


@pytest.fixture(scope="module")
def api():
    rules = engine.load_rules("fantasy-warlord")
    bf = engine.load_map(MAPS / "examples" / "humans-hill.geojson")
    return _Table((bf, rules, engine.cost_grid(bf, rules, rules.unit("humans"))))


_P, _N, _C = (st.sampled_from(v) for v in (_POINTS, _NUMBERS, _CELLS))
_K = st.sampled_from(["reform", "face", "frontage", "", "humans", None, 3])
_CALLS = st.one_of(
    st.tuples(st.just(lambda a, p, n: engine.reach(a[2], p, n)), _P, _N),
    st.tuples(st.just(lambda a, p, q: engine.route(a[2], p, q)), _P, _P),
    st.tuples(st.just(lambda a, p, q: engine.price_path(a[2], [p, q])), _P, _P),
    st.tuples(st.just(lambda a, p, q: engine.price_path(a[2], p)), _P, _P),
    st.tuples(st.just(lambda a, p, n: engine.reach_many(a[2], [p], n)), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.flow_field(a[2], [p], n)), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.visible(a[0], a[1], p, (9, 3), height=n)), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.viewshed(a[0], a[1], p, height=n)), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.reach_turns(a[2], p, n)), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.can_charge(a[2], (2, 3), p, minimum_range=n)),
              _P, _N),
    st.tuples(st.just(lambda a, p, k: engine.manoeuvre(a[2], p, k)), _P, _K),
    st.tuples(st.just(lambda a, p, n: engine.connected(a[2], p, (9, 3)) and n), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.terrain_effects(a[0], a[1], p, rank=n)), _P, _N),
    st.tuples(st.just(lambda a, p, n: engine.choose_position(a[2], p, allowance=n)), _P, _N),
    st.tuples(st.just(lambda a, c, n: engine.cost_field(np.ones((4, 4)), c, cell=n)), _C, _N),
    st.tuples(st.just(lambda a, c, n: engine.cost_field(np.ones((4, 4)), c, allowance=n)),
              _C, _N),
    st.tuples(st.just(lambda a, c, d: engine.grid_route(np.ones((4, 4)), c, d)), _C, _C),
    st.tuples(st.just(lambda a, n, m: a[1].unit("humans", move=n, depth=m)), _N, _N),
    st.tuples(st.just(lambda a, n, m: a[1].unit("humans", ranks=n, frontage=m)), _N, _N),
    st.tuples(st.just(lambda a, k, n: a[1].unit(k, move=n)), _K, _N),
    st.tuples(st.just(lambda a, k, n: engine.load_map(k)), _K, _N),
    st.tuples(st.just(lambda a, k, n: engine.load_rules(k)), _K, _N),
)


def check_api(call, api):
    fn, x, y = call
    try:
        fn(api, x, y)
    except engine.EngineError as exc:
        _one_line(exc)


test_api, test_api_long = _twice(check_api, call=_CALLS)

