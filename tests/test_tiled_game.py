"""examples/tiled_game.py: two armies march across a Tiled map, turn by turn."""

import importlib.util
import itertools
import sys

import pytest

import engine

from .conftest import ROOT


def _game(monkeypatch):
    spec = importlib.util.spec_from_file_location("tiled_game",
                                                  ROOT / "examples" / "tiled_game.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "tiled_game", module)  # its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


def test_every_move_is_one_turn_of_the_cheapest_route(monkeypatch):
    game = _game(monkeypatch)
    lines = []
    history = game.play(turns=4, log=lines.append)
    assert len(history) == 5 and len(lines) == 1 + 4 + 6
    assert lines[1].startswith("turn 1: 6 units in ") and "reach" in lines[1]
    rules = engine.load_rules("fantasy-warlord")
    bf = engine.load_map(game.MAP)
    pieces = game.setup(bf, rules)
    assert [p.at for p in pieces] == history[0]
    for before, after in itertools.pairwise(history):
        for p, old, new in zip(pieces, before, after, strict=True):
            if old == new:
                assert new == p.goal
                continue
            # Straight to a goal within reach, else the cheapest route's first turn:
            # within one allowance, and nearer the goal.
            rt = engine.route(p.grid, old, p.goal)
            if engine.reach(p.grid, old).reachable(p.goal):
                assert new == p.goal
            else:
                assert new == pytest.approx(rt.stops[0])
            assert engine.route(p.grid, old, new).cost <= p.unit.move + 1e-6
            assert new == p.goal or engine.route(p.grid, new, p.goal).cost < rt.cost
    assert all(xy == p.goal for xy, p in zip(history[-1], pieces, strict=True))
    # Each army ends where the other began, having crossed the river.
    assert {p.goal for p in pieces} == set(history[0])
