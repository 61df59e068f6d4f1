"""examples/skirmish.py: the example AI plays a short game on the demo battlefield."""

import importlib.util
import math
import sys

import engine

from .conftest import ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _skirmish(monkeypatch):
    spec = importlib.util.spec_from_file_location("skirmish", ROOT / "examples" / "skirmish.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "skirmish", module)  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def test_a_short_game_moves_every_side_within_reach(tmp_path, monkeypatch):
    skirmish = _skirmish(monkeypatch)
    lines = []
    history = skirmish.play(turns=2, out=tmp_path, log=lines.append)
    assert len(history) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["turn-00.png", "turn-01.png",
                                                          "turn-02.png"]
    assert all(p.read_bytes().startswith(PNG_MAGIC) for p in tmp_path.iterdir())
    bf = engine.load_map(skirmish.MAP)
    rules = engine.load_rules("fantasy-warlord")
    before = [p.at for p in history[0]]
    for after_turn in history[1:]:
        for old, piece in zip(before, after_turn, strict=True):
            g = engine.cost_grid(bf, rules, piece.unit)
            assert engine.reach(g, old).reachable(piece.at)
        before = [p.at for p in after_turn]
    final = history[-1]
    moved = {p.side for p, (_, _, xy) in zip(history[0], [u for a in skirmish.ARMIES for u in a],
                                             strict=True) if p.at != xy}
    assert moved == {0, 1}
    for a in final:
        for b in final:
            assert a is b or math.dist(a.at, b.at) >= a.unit.frontage - 1e-9
    assert len(lines) == 2 * len(final) and "turn 1, A1 humans" in lines[0]
