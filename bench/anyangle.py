"""Any-angle search against the 32-direction lattice and scikit-fmm: time and worst
open-ground error, from one run; writes its section of bench/RESULTS.md.

Run: ``python bench/anyangle.py`` (``--quick``: small sizes, prints, writes nothing;
``--print``: full sizes, prints, writes nothing).

Workloads (Fantasy Warlord humans as a point, depth 0):

- full field n x n: the whole of `bench.conftest.campaign_map` (n cm square at 1 cm
  cells: scrub, woods, broken ground, bog and roads) from its centre, by `engine.reach`
  with an allowance past every cell (any-angle, the default; ``any_angle=False``: the
  lattice), and by scikit-fmm's order-2 ``travel_time`` on the same multipliers
  (speed = 1 / multiplier, impassable cells masked, the start a circle of one cell);
  the same on an open table of that size (no terrain);
- 200 reaches of one turn (24 cm) on the demo battlefield: `engine.reach_many` either
  way, and scikit-fmm once per unit with a narrow band of the allowance, on the window
  of the grid that band can reach;
- the same 200 reaches for humans with Fantasy Warlord's default rank (2 cm deep), whose
  rear ranks scikit-fmm cannot price: any-angle against the lattice;
- both again on `campaign_map(1024)` (1 cm cells, scrub under everything, roads the only
  x1 ground), 200 starts drawn the same way;
- the demo map's 200 reaches (without ranks and with one) as a game asks them, one
  `engine.reach` call at a time (a round: every start any-angle, then every start on
  the lattice; a call between two of the other method's would find the caches
  cold): each start's median over the rounds, the totals, and how the ratio spreads
  over the starts (its 10th, 50th and 90th percentiles, the slowest tenth's share of
  the any-angle time, the slowest start).

Worst open-ground error, beside each time: the same search on an open grid of the same
size and cell, from a point on a cell corner in its middle; for every cell centre at
least 10 cells away, the answer against the straight-line distance from the unit's
point (the lattice measures from its start cell's centre: its error is counted from
there, in its favour).  Times are medians of several rounds after a warm-up call of
each, ms: a round calls every method once in turn (`interleaved_ms`), so that a slow
spell of the shared machine weighs on all of them alike.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from bench.cold_start import replace_section  # noqa: E402
from bench.conftest import campaign_map, interleaved_ms  # noqa: E402

SECTION = "## Any-angle, lattice and fast marching"
RULES = engine.load_rules("fantasy-warlord")
PEER = "scikit-fmm travel_time, order 2"
NEAR = 10  # cells: the error is taken from this far out (a start circle's own size)


def open_map(width: float, height: float, cell: float) -> engine.Battlefield:
    return engine.load_map({"type": "FeatureCollection", "features": [], "battlefield": {
        "width": width, "height": height, "units": "cm", "cell": cell}})


def fmm(g, at, narrow: float = 0.0) -> tuple[np.ndarray, tuple[slice, slice]]:
    """scikit-fmm's travel times over ``g``'s multipliers from the point ``at`` (a circle
    of one cell round it), ``inf`` where it does not reach, over the window of the grid
    holding every cell within ``narrow`` (its narrow band; 0: the whole grid) at the
    least multiplier, and that window."""
    import skfmm

    rows, cols = g.base.shape
    win = (slice(0, rows), slice(0, cols))
    if narrow > 0:
        far = narrow / g.least + 2 * g.cell
        r0, r1 = (min(max(int((at[1] + d) / g.cell), 0), rows - 1) for d in (-far, far))
        c0, c1 = (min(max(int((at[0] + d) / g.cell), 0), cols - 1) for d in (-far, far))
        win = (slice(r0, r1 + 1), slice(c0, c1 + 1))
    base = g.base[win]
    y, x = (np.mgrid[win] + 0.5) * g.cell
    phi = np.ma.MaskedArray(np.hypot(x - at[0], y - at[1]) - g.cell, ~np.isfinite(base))
    speed = 1.0 / np.where(np.isfinite(base), base, 1.0)
    t = skfmm.travel_time(phi, speed, dx=g.cell, order=2, narrow=narrow)
    return np.ma.filled(t + g.cell, np.inf), win  # the circle's radius back on: from the point


def errors(cost: np.ndarray, g, at) -> float:
    """Worst relative error of per-cell costs (flat, ``inf`` unreached) against the
    straight line from ``at`` to each cell centre, beyond `NEAR` cells."""
    rows, cols = g.base.shape
    y, x = (np.mgrid[0:rows, 0:cols] + 0.5) * g.cell
    d = np.hypot(x - at[0], y - at[1]).ravel()
    keep = (d >= NEAR * g.cell) & np.isfinite(cost)
    return float(np.max(np.abs(cost[keep] / d[keep] - 1.0)))


def _pasted(g, t: np.ndarray, win: tuple[slice, slice]) -> np.ndarray:
    """`fmm`'s window of times ``t`` on the whole grid (``inf`` beyond it), flat."""
    out = np.full(g.base.shape, np.inf)
    out[win] = t
    return out.ravel()


def dense(r, size: int) -> np.ndarray:
    out = np.full(size, np.inf)
    out[r.cells] = r.cost
    return out


def open_errors(n: int, cell: float, budget: float, depth: float = 0.0) -> dict[str, float]:
    """Worst open-ground error of each method on an n x n open grid of ``cell``, for
    humans ``depth`` deep."""
    side = n * cell
    g = engine.cost_grid(open_map(side, side, cell), RULES, RULES.unit("humans", depth=depth))
    at = (side / 2, side / 2)  # a cell corner
    centre = tuple((np.array(g.grid.xy_to_rc(at))[::-1] + 0.5) * cell)
    return {
        "any-angle": errors(dense(engine.reach(g, at, budget), g.base.size), g, at),
        "lattice": errors(dense(engine.reach(g, at, budget, any_angle=False), g.base.size),
                          g, centre),
        PEER: errors(_pasted(g, *fmm(g, at, narrow=budget)), g, at),
    }


def full_field(n: int, rounds: int) -> list[str]:
    """The whole field from the centre of `campaign_map` (n cm at 1 cm cells) and of an
    open table of the same size, by each method."""
    far = 1e9  # past every cell
    err = open_errors(n, 1.0, far)
    rows = []
    for where, bf in (("", campaign_map(n)), (", open ground", open_map(n, n, 1.0))):
        g = engine.cost_grid(bf, RULES, RULES.unit("humans", depth=0))
        at = (n / 2, n / 2)
        ours = dense(engine.reach(g, at, far), g.base.size)
        peer = fmm(g, at)[0].ravel()
        both = np.isfinite(peer) & np.isfinite(ours) & (ours > 0)
        agree = np.median(np.abs(ours[both] / peer[both] - 1.0))
        times = interleaved_ms({
            "any-angle": lambda g=g, at=at: engine.reach(g, at, far),
            "lattice": lambda g=g, at=at: engine.reach(g, at, far, any_angle=False),
            PEER: lambda g=g, at=at: fmm(g, at),
        }, rounds)
        rows += [f"| full field {n}x{n}{where} | {m} | {times[m]:,.1f} | "
                 f"{times[m] / times[PEER]:.2f} | {err[m] * 100:.3f}% | {note} |"
                 for m, note in (("any-angle", f"median difference from {PEER}: {agree:.2%}"),
                                 ("lattice", "32 directions"), (PEER, ""))]
    return rows


def unit_starts(depth: float, campaign: bool = False) -> tuple:
    """The grid for humans ``depth`` deep (24 cm move) on the demo map, or on
    `campaign_map` (1024 cm, 1 cm cells), and the 200 starts of the reach workloads:
    cell centres drawn at random from its passable cells."""
    bf = campaign_map(1024) if campaign else engine.load_map(ROOT / "maps" / "demo.geojson")
    g = engine.cost_grid(bf, RULES, RULES.unit("humans", move=24, depth=depth))
    rng = np.random.default_rng(0)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    return g, [g.grid.rc_to_xy(divmod(int(c), g.grid.shape[1]))
               for c in rng.choice(open_cells, 200)]


def many_units(rounds: int, depth: float = 0.0, campaign: bool = False) -> list[str]:
    """200 one-turn reaches on the demo map, or on `campaign_map` (1024 cm, 1 cm cells)."""
    g, starts = unit_starts(depth, campaign)
    where = "campaign map 1024x1024" if campaign else "demo map"
    err = open_errors(int(2 * 30 / g.cell), g.cell, 24.0, depth)
    fns = {
        "any-angle": lambda: engine.reach_many(g, starts),
        "lattice": lambda: engine.reach_many(g, starts, any_angle=False),
    }
    if depth == 0:  # no peer prices rear ranks
        fns[PEER] = lambda: [fmm(g, s, narrow=24.0) for s in starts]
    times = interleaved_ms(fns, rounds)
    threads = f"reach_many on {numba.get_num_threads()} threads"
    if depth > 0:
        return [f"| 200 reaches, 24 cm, {where}, one rank ({depth:g} cm deep) | {m} | "
                f"{times[m]:,.1f} | - | {err[m] * 100:.3f}% | {threads}; "
                f"{times[m] / times['lattice']:.2f} x the lattice |"
                for m in ("any-angle", "lattice")]
    return [f"| 200 reaches, 24 cm, {where} | {m} | {times[m]:,.1f} | "
            f"{times[m] / times[PEER]:.2f} | {err[m] * 100:.3f}% | {note} |"
            for m, note in (("any-angle", f"{threads}; {times['any-angle'] / times['lattice']:.2f}"
                                          " x the lattice"),
                            ("lattice", threads),
                            (PEER, "one unit at a time, narrow band 24 cm, on its window"))]


def one_at_a_time(rounds: int, depth: float = 0.0) -> str:
    """The demo map's 200 one-turn reaches as a game asks them, one `engine.reach` call
    at a time: each start's median over ``rounds`` (a round reaches from every start
    any-angle, then from every start on the lattice), their totals, and how the ratio
    spreads over the starts."""
    g, starts = unit_starts(depth)
    fns = (lambda s: engine.reach(g, s), lambda s: engine.reach(g, s, any_angle=False))
    times = np.zeros((rounds, len(starts), 2))
    for s in starts:  # warm-up
        for fn in fns:
            fn(s)
    for k in range(rounds):
        for m, fn in enumerate(fns):
            for i, s in enumerate(starts):
                t = time.perf_counter()
                fn(s)
                times[k, i, m] = time.perf_counter() - t
    each = np.median(times, axis=0) * 1e3
    ratio = each[:, 0] / each[:, 1]
    slow = np.sort(each[:, 0])[::-1]
    worst = int(np.argmax(each[:, 0]))
    deep = f", one rank ({depth:g} cm deep)" if depth > 0 else ""
    return (f"| 200 reaches one at a time, 24 cm, demo map{deep} | {each[:, 0].sum():,.1f} | "
            f"{each[:, 1].sum():,.1f} | {each[:, 0].sum() / each[:, 1].sum():.2f} | "
            + " / ".join(f"{q:.2f}" for q in np.quantile(ratio, [0.1, 0.5, 0.9]))
            + f" | {slow[:len(slow) // 10].sum() / slow.sum():.0%} | "
            f"({starts[worst][0]:g}, {starts[worst][1]:g}): {each[worst, 0]:.2f} against "
            f"{each[worst, 1]:.2f} |")


def section(rows: list[str], single: list[str]) -> list[str]:
    import skfmm

    return [
        SECTION,
        "",
        f"Written by `python bench/anyangle.py` on {dt.date.today().isoformat()}, one run, "
        f"{numba.get_num_threads()} cores (shared, noisy); scikit-fmm {skfmm.__version__}. "
        "Fantasy Warlord humans as a point (no rear ranks), but where the workload says "
        "one rank. Full fields: the whole of a "
        "generated campaign map (1 cm cells: scrub under everything, woods, broken ground, "
        "bog, and roads, the only x1 ground) from its centre, and of an open table of the "
        "same size (no terrain); the campaign reaches are on the 1024x1024 map. Times "
        "are medians in ms of rounds that call every method once in turn; ratio = method "
        "/ scikit-fmm. Worst open-ground error: the same search on an open grid of the "
        "same size and cell, "
        f"every cell centre at least {NEAR} cells from the unit, against the straight "
        "line (the lattice's from its start cell's centre, the others' from the unit's "
        "point).",
        "",
        "| workload | method | time (ms) | ratio | worst open-ground error | note |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "The demo map's reaches as a game asks them, one `engine.reach` call at a time "
        "(one thread each): each start's median time over the rounds (a round: every "
        "start any-angle, then every start on the lattice), added up; how the ratio "
        "(any-angle / lattice) spreads over the starts; the share of the any-angle time "
        "the slowest tenth of the starts take; and the slowest start (ms).",
        "",
        "| workload | any-angle (ms) | lattice (ms) | ratio | ratio per start: 10th / 50th "
        "/ 90th percentile | slowest tenth's share | slowest start |",
        "|---|---|---|---|---|---|---|",
        *single,
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, print, write nothing")
    ap.add_argument("--print", action="store_true", help="print the table, write nothing")
    args = ap.parse_args()
    sizes, rounds = ((256,), 2) if args.quick else ((1024, 2048), 3)
    rows = [row for n in sizes for row in full_field(n, rounds)]
    many = rounds if args.quick else 11
    rows += many_units(many) + many_units(many, depth=2.0)
    rows += many_units(many, campaign=True) + many_units(many, depth=2.0, campaign=True)
    single = [one_at_a_time(rounds + 2), one_at_a_time(rounds + 2, depth=2.0)]
    lines = section(rows, single)
    if args.quick or args.print:
        print("\n".join(lines))
        return
    path = ROOT / "bench" / "RESULTS.md"
    path.write_text(replace_section(path.read_text(), lines, SECTION))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
