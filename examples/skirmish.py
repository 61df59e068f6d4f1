"""An example AI: two small armies on the demo battlefield, moving turn by turn.

Each turn each side in turn reads the threat of the other side's units (as
a charge), and each of its units moves to the best place `choose_position`
finds: progress toward the objective along the flow field built once per
profile, cover, concealment from the enemy, staying out of enemy reach and
out of ground that disorders a charge.  Units keep a frontage apart from
friends and enemies.  There is no combat: the game shows the movement calls.

Run ``python examples/skirmish.py --turns 10 --out skirmish`` to write one
PNG per turn into ``skirmish/``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import engine
from engine import choose_position, flow_field, threat_map
from engine.render import render_ai_png
from engine.terrain import layers

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "maps" / "demo.geojson"
OBJECTIVE = (90.25, 75.25)  # open ground west of the river, between the roads
SIDES = ("the West", "the East")
ARMIES = (
    # side 0, the West
    (("humans", {"ranks": 2}, (10.25, 30.25)), ("humans", {"ranks": 2}, (10.25, 60.25)),
     ("wood elves", {}, (10.25, 90.25)), ("dwarves", {}, (20.25, 110.25))),
    # side 1, the East
    (("orcs", {}, (172.25, 30.25)), ("orcs", {}, (172.25, 50.25)),
     ("goblins", {}, (172.25, 95.25)), ("goblins", {}, (160.25, 110.25))),
)


@dataclass
class Piece:
    """One unit on the table."""

    side: int
    name: str
    unit: engine.Unit
    at: tuple[float, float]


def play(turns: int = 10, out: Path | None = None, log=print) -> list[list[Piece]]:
    """Play ``turns`` turns; return every unit's state after each turn.

    With ``out``, write ``turn-00.png`` (the start) to ``turn-NN.png`` there,
    each showing the East's threat to the West and the West's flow field.
    """
    rules = engine.load_rules("fantasy-warlord")
    bf = engine.load_map(MAP)
    pieces = [Piece(side, f"{'AB'[side]}{i + 1} {race}", rules.unit(race, **kw), xy)
              for side, army in enumerate(ARMIES) for i, (race, kw, xy) in enumerate(army)]
    flows = {}
    for p in pieces:  # one field per profile, for the whole game
        g = engine.cost_grid(bf, rules, p.unit)
        if p.unit.key not in flows:
            flows[p.unit.key] = flow_field(g, [OBJECTIVE])
    lay = layers(bf, rules)

    def draw(turn: int) -> None:
        if out is None:
            return
        threat = threat_map(bf, rules, [(p.unit, p.at) for p in pieces if p.side == 1],
                            charge=True)
        render_ai_png(out / f"turn-{turn:02d}.png", lay, threat=threat,
                      flow=flows[pieces[0].unit.key],
                      units=[(p.at, p.side, p.name) for p in pieces], sides=SIDES,
                      title=f"turn {turn}: the East's threat and the West's flow to the "
                      f"objective ({bf.units})")

    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    draw(0)
    history = []
    for turn in range(1, turns + 1):
        for side in (0, 1):
            enemies = [p for p in pieces if p.side != side]
            threat = threat_map(bf, rules, [(p.unit, p.at) for p in enemies], charge=True)
            for p in (p for p in pieces if p.side == side):
                g = engine.cost_grid(bf, rules, p.unit)
                others = [q.at for q in pieces if q is not p]
                best = choose_position(g, p.at, flows[p.unit.key], threat, avoid=others, top=1)
                if not best:  # boxed in: stay put
                    continue
                log(f"turn {turn}, {p.name}: ({p.at[0]:g}, {p.at[1]:g}) -> "
                    f"({best[0].at[0]:g}, {best[0].at[1]:g}), cost {best[0].cost:.1f}; "
                    + "; ".join(best[0].reasons))
                p.at = best[0].at
        history.append([Piece(p.side, p.name, p.unit, p.at) for p in pieces])
        draw(turn)
    return history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--out", type=Path, help="folder for one PNG per turn")
    args = parser.parse_args()
    t0 = time.perf_counter()
    play(args.turns, args.out)
    print(f"{args.turns} turns in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
