"""A game loop on a Tiled map: two armies march on each other's camp, turn by turn.

The map is ``maps/tiled/field.tmx``, drawn in the Tiled editor: tile layers of
woods, bog and a hill, an object layer with a river, its bridge, a road and a
copse, and three named points (``Blue Knights``, ``Red Orcs``, ``Objective``)
that place the armies.  Each army marches to where the other stands, across the
river.  A game builds each unit's cost grid once; then each turn, for every unit,
it asks where the unit can go (``reach``): if its goal is within reach it moves
there, else it asks the cheapest way there (``route``) and moves to the end of
the route's first turn.  Each turn prints what the engine's calls took.

Run ``python examples/tiled_game.py --turns 4``.  The first turn's times include
loading the compiled search kernels (compiling them, on a first run).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "maps" / "tiled" / "field.tmx"
# Each army: (race, unit options, offset from its point on the map); it marches on
# the other's point, each unit to the same offset from it.
ARMIES = {
    "Blue Knights": (("humans", {"ranks": 2}, (0, 0)), ("wood elves", {}, (0, 4)),
                     ("dwarves", {}, (4, 0))),
    "Red Orcs": (("orcs", {}, (0, 0)), ("goblins", {}, (0, 4)),
                 ("hill trolls", {}, (4, 0))),
}


@dataclass
class Piece:
    """One unit on the table: its army, profile, cost grid, place and goal."""

    army: str
    unit: engine.Unit
    grid: engine.CostGrid
    at: tuple[float, float]
    goal: tuple[float, float]


def setup(battlefield: engine.Battlefield, rules: engine.Ruleset) -> list[Piece]:
    """Every unit of both armies at its start, with its cost grid (built once)."""
    pieces = []
    for army, units in ARMIES.items():
        x, y = battlefield.points[army]
        gx, gy = next(battlefield.points[a] for a in ARMIES if a != army)
        for race, options, (dx, dy) in units:
            unit = rules.unit(race, **options)
            pieces.append(Piece(army, unit, engine.cost_grid(battlefield, rules, unit),
                                (x + dx, y + dy), (gx + dx, gy + dy)))
    return pieces


def turn(pieces: list[Piece]) -> dict[str, float]:
    """Move every unit one turn toward its goal; the seconds reach and route took."""
    spent = {"reach": 0.0, "route": 0.0}
    for p in pieces:
        if p.at == p.goal:
            continue
        t0 = time.perf_counter()
        there = engine.reach(p.grid, p.at).reachable(p.goal)
        t1 = time.perf_counter()
        spent["reach"] += t1 - t0
        if there:
            p.at = p.goal
            continue
        rt = engine.route(p.grid, p.at, p.goal)
        spent["route"] += time.perf_counter() - t1
        p.at = rt.stops[0] if rt.stops else p.goal  # where this turn's move ends
    return spent


def play(turns: int = 6, log=print) -> list[list[tuple[float, float]]]:
    """Play ``turns`` turns; every unit's place before the first and after each."""
    rules = engine.load_rules("fantasy-warlord")
    t0 = time.perf_counter()
    battlefield = engine.load_map(MAP)
    pieces = setup(battlefield, rules)
    log(f"{MAP.name}: {battlefield.width:g} x {battlefield.height:g} {battlefield.units}, "
        f"{len(battlefield.features)} features; {len(pieces)} cost grids in "
        f"{(time.perf_counter() - t0) * 1000:.0f} ms")
    history = [[p.at for p in pieces]]
    for n in range(1, turns + 1):
        t0 = time.perf_counter()
        spent = turn(pieces)
        total = time.perf_counter() - t0
        there = sum(p.at == p.goal for p in pieces)
        log(f"turn {n}: {len(pieces)} units in {total * 1000:.1f} ms (reach "
            f"{spent['reach'] * 1000:.1f} ms, route {spent['route'] * 1000:.1f} ms); "
            f"{there} at their goal")
        history.append([p.at for p in pieces])
    for p in pieces:
        log(f"  {p.army}: {p.unit.race} at ({p.at[0]:.1f}, {p.at[1]:.1f})")
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=4)
    play(parser.parse_args().turns)


if __name__ == "__main__":
    main()
