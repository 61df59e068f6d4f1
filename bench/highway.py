"""Long routes on a big campaign map: the network highway (landmark A*) against the full grid A*.

Run: ``python bench/highway.py [--size 4096] [--landmarks 8] [--rounds 5]``; it
writes bench/HIGHWAY.md with what it printed (``--quick``: a 1024^2 map, no file).

The map is wild country (``campaign_map``): scrub everywhere, woods, broken
ground and bog over it, and a road grid whose roads bend.  Humans without rear
ranks travel between towns at road ends and junctions, between two points
in open country (each at the middle of a block of roads, as far from a road
as a point gets), and between ten pairs of random points at least a quarter
of the map apart (seeded, the same every run).  Each route is answered by
``engine.route(..., any_angle=False)`` (A* over the whole grid on the step
lattice, straight-line bound), by
``Highway.route`` (an A* from both ends at once, bounded by landmark fields
placed on the road network) and by a ``Highway`` that also keeps the towns
as places (a field of its own for each, which a route to or from a town
takes alone); the costs of their cell paths are checked equal, and the
routes' within a cell's worth of the ground at their ends, before anything
is timed.  Times are medians in milliseconds after a warm-up call; "cells"
is how many cells the search touched.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from bench.conftest import campaign_map, median_ms  # noqa: E402
from engine.search.front import _start_cell  # noqa: E402
from engine.search.highway import Highway  # noqa: E402
from engine.search.paths import _find, _polyline  # noqa: E402


def touched(grid, a, b, find) -> tuple[int, float]:
    """Cells the search touches between two points, and what its cell path costs step
    by step (``find``: `Highway._find`, or None for the full grid A*)."""
    s, t = _start_cell(grid, a, "a"), _start_cell(grid, b, "b")
    cells, n = find(s, t) if find else _find(grid, s, t)
    return n, engine.price_path(grid, _polyline(grid, cells)).cost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--landmarks", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 1024 if args.quick else args.size
    out = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        out.append(line)

    rules = engine.load_rules("fantasy-warlord")
    t = time.perf_counter()
    bf = campaign_map(n)
    grid = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    build = time.perf_counter() - t
    engine.warm_up()
    s = n / 4096
    towns = {"NW": (300 * s, 300 * s), "SE": (3800 * s, 3800 * s), "W": (2 * s, 1700 * s),
             "E": (4090 * s, 2400 * s), "N": (1700 * s, 2 * s), "S": (3100 * s, 4090 * s),
             "NW+100": (400 * s, 300 * s), "NW+400": (700 * s, 300 * s)}
    fields = {"moor": (1350 * s, 2050 * s), "fen": (650 * s, 3450 * s)}  # in open country
    t = time.perf_counter()
    hw = Highway(grid, args.landmarks)
    pre = time.perf_counter() - t
    t = time.perf_counter()
    hp = Highway(grid, args.landmarks, places=list(towns.values()))
    pre_places = time.perf_counter() - t
    say(f"# Network highway on a {n} x {n} campaign map\n")
    say(f"{dt.date.today()}, {platform.machine()}, {platform.python_version()}, "
        f"engine cost grid built in {build:.1f} s; {len(hw.cells)} landmarks on the network "
        f"built in {pre:.1f} s ({hw.fields.nbytes / 2**20:.0f} MiB of float32 fields, "
        f"{0 if hw._blocks is None else hw._blocks.cells.nbytes / 2**20:.0f} MiB of blocks); with "
        f"the {len(hp.places)} towns as places too, {pre_places:.1f} s "
        f"({(hp.fields.nbytes + sum(f.nbytes for f in hp._places.values())) / 2**20:.0f} MiB)."
        "\n")
    say("| route | cost | turns | grid A* ms | cells | highway ms | cells | with places ms "
        "| cells | speed-up, highway / with places |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    where = towns | fields
    trips = [(f"{a} to {b}", where[a], where[b]) for a, b in (
        ("NW", "NW+100"), ("NW", "NW+400"), ("NW", "SE"), ("W", "E"), ("N", "S"), ("SE", "NW"),
        ("moor", "SE"), ("SE", "fen"), ("moor", "fen"))]
    rng = np.random.default_rng(7)
    while len(trips) < 19:
        pa, pb = (tuple(float(v) for v in rng.uniform(0, n, 2)) for _ in range(2))
        if np.hypot(pa[0] - pb[0], pa[1] - pb[1]) >= n / 4:
            trips.append((f"random ({pa[0]:.0f}, {pa[1]:.0f}) to ({pb[0]:.0f}, {pb[1]:.0f})",
                          pa, pb))
    slowest = (0.0, "")
    for label, pa, pb in trips:
        (c_full, d_full), (c_fast, d_fast), (c_placed, d_placed) = (
            touched(grid, pa, pb, find) for find in (None, hw._find, hp._find))
        # Cell to cell the same, but for the order the sums were added in.
        assert max(abs(d_fast - d_full), abs(d_placed - d_full)) <= 1e-9 * d_full, (
            d_full, d_fast, d_placed)
        # Routes: equally cheap cell paths joined to the exact ends can price apart by
        # up to a cell's worth of the ground at the ends.
        worth = grid.cell * max(grid.base[grid.grid.xy_to_rc(p)] for p in (pa, pb))
        full = engine.route(grid, pa, pb, any_angle=False)  # the lattice, as a Highway's
        fast, placed = hw.route(pa, pb), hp.route(pa, pb)
        assert abs(full.cost - fast.cost) <= worth, (full.cost, fast.cost)
        assert abs(full.cost - placed.cost) <= worth, (full.cost, placed.cost)
        t_full = median_ms(lambda pa=pa, pb=pb: engine.route(grid, pa, pb, any_angle=False),
                           args.rounds)
        t_fast = median_ms(lambda pa=pa, pb=pb: hw.route(pa, pb), args.rounds)
        t_placed = median_ms(lambda pa=pa, pb=pb: hp.route(pa, pb), args.rounds)
        say(f"| {label} | {full.cost:.1f} | {full.turns} | {t_full:.0f} | {c_full:,} | "
            f"{t_fast:.0f} | {c_fast:,} | {t_placed:.0f} | {c_placed:,} | "
            f"{t_full / t_fast:.1f}x / {t_full / t_placed:.1f}x |")
        slowest = max(slowest, (t_fast, label))
    say(f"\nSlowest `Highway.route` without places: {slowest[0]:.0f} ms, {slowest[1]}.")
    if not args.quick:
        (ROOT / "bench" / "HIGHWAY.md").write_text("\n".join(out) + "\n", "utf-8")


if __name__ == "__main__":
    main()
