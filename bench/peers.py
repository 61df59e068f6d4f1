"""The engine against other Python pathfinders, on identical inputs; writes bench/RESULTS.md.

Run: ``python bench/peers.py`` (``--quick`` for a short smoke run that writes nothing;
``--json PATH`` writes the comparison table's rows there as JSON instead of writing
bench/RESULTS.md, and skips the accuracy, memory and start-up sections: `bench/ab.py`
runs it so in two revisions of the engine).

Every comparison first computes both answers and checks them equal, under one
convention: the engine answers under the peer's own (``engine.terrain.lattice.steps``:
``pricing``, ``corner_cutting``, ``lengths``), or the peer is given the engine's
step costs (scipy and networkx, as graphs).  Only then is anything timed.
Times are medians of several calls after a warm-up call, in milliseconds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from bench.anyangle import SECTION as ANYANGLE  # noqa: E402
from bench.batch import SECTION as BATCH  # noqa: E402
from bench.cold_start import SECTION, section_of  # noqa: E402
from bench.conftest import median_ms, random_grid  # noqa: E402
from engine.grid import DIRECTIONS  # noqa: E402
from engine.maps import load_grid_map, load_scenarios  # noqa: E402
from engine.search import run_scenarios  # noqa: E402

# Moving AI's benchmark maps: MOVINGAI_DIR, else the folder laid beside the project.
MOVINGAI = Path(os.environ.get("MOVINGAI_DIR") or ROOT.parent / "shared" / "movingai")
TCOD = {"pricing": "destination", "corner_cutting": True, "lengths": (2, 3)}
TCOD_ASTAR = {"pricing": "destination", "corner_cutting": True, "lengths": (1, 1.41)}
SKIMAGE = {"pricing": "midpoint", "corner_cutting": True}
PYASTAR = {"pricing": "destination", "corner_cutting": True, "lengths": (1, 1)}


def graph(m: np.ndarray):
    """The engine's 8-neighbour steps as a scipy CSR graph (segment pricing, no corner cutting)."""
    from scipy.sparse import csr_matrix

    rows, cols = m.shape
    idx = np.arange(m.size).reshape(m.shape)
    src, dst, w = [], [], []
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if dr == dc == 0:
                continue
            a = (slice(max(0, -dr), rows - max(0, dr)), slice(max(0, -dc), cols - max(0, dc)))
            b = (slice(max(0, dr), rows - max(0, -dr)), slice(max(0, dc), cols - max(0, -dc)))
            ok = np.isfinite(m[a]) & np.isfinite(m[b])
            if dr and dc:  # no squeezing between two blocked cells' corner
                ok &= np.isfinite(m[b[0], a[1]]) & np.isfinite(m[a[0], b[1]])
            length = math.hypot(dr, dc)
            src.append(idx[a][ok])
            dst.append(idx[b][ok])
            w.append(length * 0.5 * (m[a][ok] + m[b][ok]))
    return csr_matrix((np.concatenate(w), (np.concatenate(src), np.concatenate(dst))),
                      shape=(m.size, m.size))


def same(a: np.ndarray, b: np.ndarray, what: str) -> None:
    fa, fb = np.isfinite(a), np.isfinite(b)
    assert np.array_equal(fa, fb), f"{what}: different cells reached"
    assert np.allclose(a[fa], b[fb], rtol=1e-9, atol=1e-6), f"{what}: different costs"


class Table:
    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def add(self, workload: str, peer: str, ours: float, theirs: float | None, note: str = ""):
        ratio = f"{ours / theirs:.2f}" if theirs else ""
        theirs_s = f"{theirs:,.2f}" if theirs is not None else ""
        self.rows.append((workload, peer, f"{ours:,.2f}", theirs_s, ratio, note))
        print(f"{workload:40s} {peer:34s} engine {ours:10.2f} ms  peer {theirs_s:>10s} ms  "
              f"{ratio:>6s}  {note}", flush=True)


def full_field(t: Table, n: int, rounds: int) -> None:
    import networkx as nx
    import tcod
    from scipy.sparse.csgraph import dijkstra
    from skimage.graph import MCP_Geometric

    m = random_grid(n)
    s = (n // 2, n // 2)
    r = max(1, rounds if n <= 1024 else rounds // 2)
    name = f"(a) full field {n}x{n}"
    ours = engine.cost_field(m, s, directions=8)
    g = graph(m)
    t0 = time.perf_counter()
    graph(m)
    build = (time.perf_counter() - t0) * 1e3
    theirs = dijkstra(g, indices=s[0] * n + s[1]).reshape(m.shape)
    same(ours, theirs, "scipy")
    t.add(name, "scipy csgraph.dijkstra (engine's costs)",
          median_ms(lambda: engine.cost_field(m, s, directions=8), r),
          median_ms(lambda: dijkstra(g, indices=s[0] * n + s[1]), r),
          f"graph build {build:,.0f} ms, not timed")
    if n <= 256:
        G = nx.from_scipy_sparse_array(g, create_using=nx.DiGraph)
        nxd = nx.single_source_dijkstra_path_length(G, s[0] * n + s[1])
        ref = np.full(m.size, np.inf)
        ref[list(nxd)] = list(nxd.values())
        same(ours, ref.reshape(m.shape), "networkx")
        t.add(name, "networkx single_source_dijkstra",
              median_ms(lambda: engine.cost_field(m, s, directions=8), r),
              median_ms(lambda: nx.single_source_dijkstra_path_length(G, s[0] * n + s[1]),
                        max(1, r // 2)), "graph build not timed")
    cost = np.where(np.isinf(m), 0, m).astype(np.int32)

    def tcod_field():
        d = tcod.path.maxarray(m.shape, dtype=np.int32)
        d[s] = 0
        return tcod.path.dijkstra2d(d, cost, 2, 3, out=d)

    d = tcod_field().astype(float)
    d[d == np.iinfo(np.int32).max] = np.inf
    same(engine.cost_field(m, s, directions=8, **TCOD), d, "tcod")
    t.add(name, "tcod dijkstra2d (its convention)",
          median_ms(lambda: engine.cost_field(m, s, directions=8, **TCOD), r),
          median_ms(tcod_field, r))
    mcp = MCP_Geometric(m, fully_connected=True)
    c, _ = mcp.find_costs([s])
    same(engine.cost_field(m, s, directions=8, **SKIMAGE), c, "skimage")
    t.add(name, "skimage MCP_Geometric (its convention)",
          median_ms(lambda: engine.cost_field(m, s, directions=8, **SKIMAGE), r),
          median_ms(lambda: MCP_Geometric(m, fully_connected=True).find_costs([s]), r))
    t.add(f"{name}, 32 directions", "(engine only: its default accuracy)",
          median_ms(lambda: engine.cost_field(m, s, directions=32), r), None,
          "accuracy: see the table below")


def bounded_reach(t: Table, budget: int, rounds: int) -> None:
    import tcod
    from scipy.sparse.csgraph import dijkstra
    from skimage.graph import MCP_Geometric

    n = 1024
    m = random_grid(n)
    s = (n // 2, n // 2)
    g = graph(m)
    routers = {
        "engine": engine.GridRouter(m, directions=8),
        "tcod": engine.GridRouter(m, directions=8, **TCOD),
        "skimage": engine.GridRouter(m, directions=8, **SKIMAGE),
    }
    cost = np.where(np.isinf(m), 0, m).astype(np.int32)
    name = f"(b) reach, budget {budget}, 1024x1024"
    rr = rounds * (20 if budget == 50 else 3)

    def ours(kind):
        return lambda: routers[kind].reach(s, budget)

    def dense(cells, costs, shape, origin=(0, 0)):
        out = np.full(shape, np.inf)
        out[cells[:, 0] - origin[0], cells[:, 1] - origin[1]] = costs
        return out

    theirs = dijkstra(g, indices=s[0] * n + s[1], limit=budget).reshape(m.shape)
    same(dense(*routers["engine"].reach(s, budget), m.shape), theirs, "scipy limit")
    t.add(name, "scipy dijkstra(limit=budget)", median_ms(ours("engine"), rr),
          median_ms(lambda: dijkstra(g, indices=s[0] * n + s[1], limit=budget), rr))
    # tcod has no early exit: its best honest equivalent is a window the reach cannot leave
    half = budget // 2 + 2  # every tcod step costs at least 2
    win = (slice(s[0] - half, s[0] + half + 1), slice(s[1] - half, s[1] + half + 1))

    def tcod_window():
        d = tcod.path.maxarray(cost[win].shape, dtype=np.int32)
        d[half, half] = 0
        return tcod.path.dijkstra2d(d, cost[win], 2, 3, out=d)

    d = tcod_window().astype(float)
    d[d > budget] = np.inf
    same(dense(*routers["tcod"].reach(s, budget), d.shape, (s[0] - half, s[1] - half)), d,
         "tcod window")
    t.add(name, "tcod dijkstra2d on a cropped window", median_ms(ours("tcod"), rr),
          median_ms(tcod_window, rr), f"window {2 * half + 1}^2")
    half = budget + 2
    win = (slice(s[0] - half, s[0] + half + 1), slice(s[1] - half, s[1] + half + 1))

    def skimage_window():
        return MCP_Geometric(m[win], fully_connected=True).find_costs([(half, half)])[0]

    c = skimage_window()
    c[c > budget] = np.inf
    same(dense(*routers["skimage"].reach(s, budget), c.shape, (s[0] - half, s[1] - half)), c,
         "skimage window")
    t.add(name, "skimage MCP_Geometric on a cropped window", median_ms(ours("skimage"), rr),
          median_ms(skimage_window, rr), f"window {2 * half + 1}^2")


def point_to_point(t: Table, rounds) -> None:
    import pyastar2d
    import tcod
    from skimage.graph import route_through_array

    n = 1024
    m = random_grid(n, seed=2)
    s, goal = (162, 162), (657, 657)  # 700 cells apart
    m[s] = m[goal] = 1.0
    name = "(c) point to point, 1024x1024, 700 apart"
    r = rounds

    def check(kind, cost_theirs, **conv):
        router = engine.GridRouter(m, directions=8, **conv)
        ours, _ = router.route(s, goal)
        assert math.isclose(ours, cost_theirs, rel_tol=1e-5), (kind, ours, cost_theirs)
        return lambda: router.route(s, goal)

    cost = np.where(np.isinf(m), 0, m).astype(np.float32)
    astar = tcod.path.AStar(cost, diagonal=1.41)

    def tcod_cost(path):
        total, prev = 0.0, s
        for q in path:
            diag = q[0] != prev[0] and q[1] != prev[1]
            total += (1.41 if diag else 1.0) * float(cost[q])
            prev = q
        return total

    fn = check("tcod AStar", tcod_cost(astar.get_path(*s, *goal)), **TCOD_ASTAR)
    t.add(name, "tcod AStar (its convention)", median_ms(fn, r),
          median_ms(lambda: astar.get_path(*s, *goal), r))

    icost = np.where(np.isinf(m), 0, m).astype(np.int32)

    def tcod_pathfinder():
        graph_ = tcod.path.SimpleGraph(cost=icost, cardinal=2, diagonal=3)
        graph_.set_heuristic(cardinal=2, diagonal=3)
        pf = tcod.path.Pathfinder(graph_)
        pf.add_root(s)
        pf.resolve(goal)
        return float(pf.distance[goal])

    fn = check("tcod Pathfinder", tcod_pathfinder(), **TCOD)
    t.add(name, "tcod Pathfinder + heuristic (2, 3)", median_ms(fn, r),
          median_ms(tcod_pathfinder, r))

    _, c = route_through_array(m, s, goal, fully_connected=True, geometric=True)
    fn = check("skimage", c, **SKIMAGE)
    t.add(name, "skimage route_through_array", median_ms(fn, r),
          median_ms(lambda: route_through_array(m, s, goal, fully_connected=True,
                                                geometric=True), r))

    w = m.astype(np.float32)
    path = pyastar2d.astar_path(w, s, goal, allow_diagonal=True)
    fn = check("pyastar2d", float(w[tuple(path[1:].T)].sum()), **PYASTAR)
    t.add(name, "pyastar2d (its convention)", median_ms(fn, r),
          median_ms(lambda: pyastar2d.astar_path(w, s, goal, allow_diagonal=True), r))


def moving_ai(t: Table, limit: int | None) -> list[str]:
    import tcod

    lines = []
    for mp in sorted(MOVINGAI.glob("*.map")):
        grid_map = load_grid_map(mp)
        scen = load_scenarios(Path(f"{mp}.scen"))[:limit]
        bench = run_scenarios(grid_map, scen)
        assert bench.matched == bench.scenarios, bench  # every published optimum, exactly
        lines.append(f"| {grid_map.name} | {bench.scenarios} | {bench.matched} | "
                     f"{bench.max_error:.2g} | {bench.seconds * 1e3:,.0f} |")
        # The same scenarios under tcod's A* convention (it cuts corners), both timed.
        ours_t = theirs_t = 0.0
        for cls in sorted({grid_map.classes(sc.start[::-1]) for sc in scen}):
            todo = [sc for sc in scen if grid_map.classes(sc.start[::-1]) == cls]
            m = grid_map.multipliers(cls)
            router = engine.GridRouter(m, directions=8, **TCOD_ASTAR)
            cost = np.where(np.isinf(m), 0, 1).astype(np.float32)
            astar = tcod.path.AStar(cost, diagonal=1.41)
            t0 = time.perf_counter()
            ours = []
            for sc in todo:
                try:
                    ours.append(router.route(sc.start[::-1], sc.goal[::-1])[0])
                except engine.NoRouteError:
                    ours.append(math.inf)
            ours_t += time.perf_counter() - t0
            t0 = time.perf_counter()
            paths = [astar.get_path(*sc.start[::-1], *sc.goal[::-1]) for sc in todo]
            theirs_t += time.perf_counter() - t0
            for sc, o, p in zip(todo, ours, paths, strict=True):
                prev, total = sc.start[::-1], 0.0
                for q in p:
                    total += 1.41 if (q[0] != prev[0] and q[1] != prev[1]) else 1.0
                    prev = q
                if p or sc.start == sc.goal:
                    assert math.isclose(o, total, rel_tol=1e-5), (grid_map.name, sc, o, total)
        t.add(f"(d) Moving AI {grid_map.name}, {len(scen)} scenarios",
              "tcod AStar (its convention)", ours_t * 1e3, theirs_t * 1e3, "one call each")
    return lines


def many_units(t: Table, ranks: int, rounds: int) -> None:
    """(e) 200 units' 24 cm reaches on the demo battlefield in one call, on every core."""
    rules = engine.load_rules("fantasy-warlord")
    bf = engine.load_map(ROOT / "maps" / "demo.geojson")
    g = engine.cost_grid(bf, rules, rules.unit("humans", move=24, depth=2.0 * ranks))
    rng = np.random.default_rng(0)
    open_cells = np.flatnonzero(np.isfinite(g.base.ravel()))
    starts = [g.grid.rc_to_xy(divmod(int(c), g.grid.shape[1]))
              for c in rng.choice(open_cells, 200)]
    many = engine.reach_many(g, starts)
    for start, got in zip(starts, many, strict=True):
        one = engine.reach(g, start)
        assert np.array_equal(np.sort(got.cells), np.sort(one.cells))
    default = " (one rank: the rules' default)" if ranks == 1 else ""
    t.add(f"(e) 200 reaches, 24 cm, demo map, depth {2 * ranks} cm{default}",
          "the engine one reach at a time", median_ms(lambda: engine.reach_many(g, starts), rounds),
          median_ms(lambda: [engine.reach(g, s) for s in starts], rounds),
          f"reach_many on {numba.get_num_threads()} threads")


def accuracy() -> list[str]:
    lines = []
    n = 201
    for directions in DIRECTIONS:
        router = engine.GridRouter(np.ones((n, n)), directions=directions)
        excess = []
        for deg in range(360):
            a = math.radians(deg)
            goal = (round(100 + 90 * math.sin(a)), round(100 + 90 * math.cos(a)))
            cost, _ = router.route((100, 100), goal)
            excess.append(cost / math.dist((100, 100), goal) - 1)
        cells, _ = router.reach((100, 100), 80.0)
        area = len(cells) / (math.pi * 80.0**2)
        lines.append(f"| {directions} | "
                     f"{max(excess) * 100:.2f}% | {statistics.mean(excess) * 100:.2f}% | "
                     f"{(area - 1) * 100:+.2f}% |")
    return lines


def peak_memory_4096() -> str:
    """A fresh process's high-water mark (VmHWM: getrusage would count the parent's peak)."""
    code = ("import numpy as np, engine;"
            "m = np.ones((4096, 4096));"
            "f = engine.cost_field(m, (2048, 2048), directions=32);"
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    kib = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout)
    return f"{kib / 2**20:.2f} GiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few rounds, no file")
    ap.add_argument("--json", type=Path, help="write the table's rows here, and nothing else")
    args = ap.parse_args()
    t = Table()
    sizes = (256,) if args.quick else (256, 1024, 2048)
    rounds = 2 if args.quick else 5
    for n in sizes:
        full_field(t, n, rounds)
    for budget in (50, 200):
        bounded_reach(t, budget, rounds)
    point_to_point(t, rounds)
    for ranks in (0, 1, 2):  # 1: the rules' default unit
        many_units(t, ranks, 3 * rounds)  # ~50 ms a call: more calls, a steadier median
    movingai = moving_ai(t, 20 if args.quick else None) if MOVINGAI.is_dir() else []
    if args.json:
        keys = ("workload", "peer", "engine_ms", "peer_ms", "ratio", "note")
        args.json.write_text(json.dumps([dict(zip(keys, row, strict=True)) for row in t.rows]))
        return
    acc = accuracy()
    memory = peak_memory_4096() if not args.quick else "not measured (--quick)"
    if args.quick:
        print("\n".join(acc), memory, sep="\n")
        return
    write(t, movingai, acc, memory)


def write(t: Table, movingai, acc, memory) -> None:
    import scipy
    import skimage
    import tcod

    versions = (f"Python {platform.python_version()}, numpy {np.__version__}, numba "
                f"{numba.__version__}, scipy {scipy.__version__}, scikit-image "
                f"{skimage.__version__}, python-tcod {tcod.__version__}, pyastar2d, networkx")
    out = [
        "# Benchmark results",
        "",
        f"Written by `python bench/peers.py` on {dt.date.today().isoformat()}; every number is "
        "what that run printed.",
        f"Machine: {platform.machine()}, {resource.getpagesize()}-byte pages, 2 cores "
        "(shared, noisy), 24 GiB. " + versions + ".",
        "",
        "Each row checks both answers equal before timing (see the script's docstring). "
        "Times are medians in ms; ratio = engine / peer (below 1: the engine is faster).",
        "",
        "| workload | peer | engine (ms) | peer (ms) | ratio | note |",
        "|---|---|---|---|---|---|",
        *("| " + " | ".join(row) + " |" for row in t.rows),
        "",
        "## Moving AI, the benchmark's own convention",
        "",
        "| map | scenarios | matched | largest difference | engine (ms) |",
        "|---|---|---|---|---|",
        *movingai,
        "",
        "## Geometric accuracy on open ground",
        "",
        "Route cost against the straight line from the centre of a 201x201 open grid to 360 "
        "goals 90 cells away, and the area of a reach of 80 against the circle.",
        "",
        "| directions | worst excess | mean excess | reach area vs circle |",
        "|---|---|---|---|",
        *acc,
        "",
        "## Memory",
        "",
        f"Peak resident memory of a process computing a full 32-direction field on 4096x4096: "
        f"{memory}.",
        "",
    ]
    results = ROOT / "bench" / "RESULTS.md"  # the other scripts' sections are kept as they are
    text = results.read_text() if results.exists() else ""
    kept = [line for title in (SECTION, ANYANGLE, BATCH) for line in section_of(text, title)]
    results.write_text("\n".join(out + kept))
    print("wrote bench/RESULTS.md")


if __name__ == "__main__":
    main()
