"""`price_path`'s numba walk (`skern.walk_path`) against a walk written in Python.

The reference below walks each segment through `engine.grid.segment_cells` and
prices it cell by cell with the trail's own `skern.trail.advance`, as the pricer
did before its walk was compiled, and names the ground as it did; it names
blocked ground, obstacles, passages and quanta with the pricer's own helpers.
Every piece must come out the same, bit for bit: points, lengths, costs,
multipliers, terrain and kind.
"""

import dataclasses
import itertools
import math
import random
from pathlib import Path

import numpy as np
import pytest

import engine
from engine.errors import MapError
from engine.grid import segment_cells
from engine.search import _kernels as skern
from engine.search.pricing import Leg, _Pricer
from engine.terrain import _kernels as tkern

from .conftest import battlefield, feature, rect

MAPS = sorted(Path(__file__).resolve().parent.parent.glob("maps/**/*.geojson"))


class ReferencePricer(_Pricer):
    """The walk in Python: one segment at a time, one cell at a time."""

    def reference(self, points: list) -> list[Leg]:
        self.pieces: list[Leg] = []
        self.stand(points[0], points[1])
        self.quantum = self.g.quantum[self.g.combo].ravel() if self.g.quantum.any() else None
        self.q, self.qd, self.qm, self.qcell = 0.0, 0.0, 1.0, -1
        for p, q in itertools.pairwise(points):
            self.move(p, q)
        self.close(points[-1])
        return self.pieces

    def move(self, p, q) -> None:
        u = self._direction(p, q)
        seg = math.hypot(q[0] - p[0], q[1] - p[1])
        cells, corners = segment_cells(
            (p[0] / self.cell, p[1] / self.cell), (q[0] / self.cell, q[1] / self.cell)
        )
        base = self.flat[0]
        for r, c in corners:
            if 0 <= r < self.rows and 0 <= c < self.cols and base[r * self.cols + c] == math.inf:
                self.pieces.append(Leg(p, q, seg, math.inf, math.inf,
                                       [self._blocked(r * self.cols + c)]))
                return
        enter, narrow = self.g.enter.ravel(), self.g.narrow.ravel()
        rec = (np.empty(tkern.TRAIL + 1), np.empty(tkern.TRAIL + 1),
               np.empty(tkern.TRAIL + 1, dtype=np.int64))
        for r, c, s0, s1 in cells:
            i = min(max(r, 0), self.rows - 1) * self.cols + min(max(c, 0), self.cols - 1)
            a = (p[0] + u[0] * s0 * self.cell, p[1] + u[1] * s0 * self.cell)
            b = q if s1 == cells[-1][3] else (p[0] + u[0] * s1 * self.cell,
                                               p[1] + u[1] * s1 * self.cell)
            length = (s1 - s0) * self.cell
            rr, cc = divmod(i, self.cols)
            ox, oy = p[0] / self.cell - cc - 0.5, p[1] / self.cell - rr - 0.5
            m, cut = float(self.flat[0][i]), (1.0, 1.0, 1.0, 1.0, 1.0)
            if self.flat[1][i] != 1.0:  # each stretch between folds at its own multiplier
                cut = tkern.fold(self.flat[1][i], self.flat[3], self.flat[2][i], *u,
                                 ox + u[0] * s0, oy + u[1] * s0, ox + u[0] * s1, oy + u[1] * s1)
            if m == math.inf:
                self.pieces.append(Leg(a, b, length, math.inf, math.inf, [self._blocked(i)]))
                continue
            if enter[i] > 0.0 and enter[i] != enter[self.at]:
                self.pieces.append(self._entry(skern.OBSTACLE, i, float(enter[i]), a))
            if narrow[i] > 0.0 and narrow[self.at] == 0.0:
                self.pieces.append(self._entry(skern.trail.NARROW, i, float(narrow[i]), a))
            self.at = i
            if self.quantum is not None and self.quantum[i] != self.q:
                self.close(a)
                self.q, self.qd = float(self.quantum[i]), 0.0
            shares = [0.0, cut[0], cut[1], 1.0]
            for part in range(3):
                along, slope = tkern.stretch(cut, part, length)
                if along > 0 or part == 0:
                    f0, f1 = shares[part], shares[part + 1]
                    x0 = (a[0] + f0 * (b[0] - a[0]), a[1] + f0 * (b[1] - a[1]))
                    x1 = b if f1 == 1.0 else (a[0] + f1 * (b[0] - a[0]), a[1] + f1 * (b[1] - a[1]))
                    self.stretch(x0, x1, along, m * slope, i, rec)

    def stretch(self, a, b, length, m, i, rec) -> None:
        """The front moves ``length`` from a to b in cell i over ground ``m``."""
        if self.q > 0:
            self.qd += length
            self.qm, self.qcell = m, i
        _, self.n, nrec = skern.trail.advance(self.lv, self.rem, self.org, self.n, m, i, length,
                                           float(self.g.unit.depth), *rec, True)
        done = 0.0
        for j in range(nrec):
            part, level, origin = float(rec[0][j]), float(rec[1][j]), int(rec[2][j])
            f0, f1 = done / length, (done + part) / length
            done += part
            self.pieces.append(Leg(
                (a[0] + f0 * (b[0] - a[0]), a[1] + f0 * (b[1] - a[1])),
                (a[0] + f1 * (b[0] - a[0]), a[1] + f1 * (b[1] - a[1])),
                part, part * level, level, self.names_of(origin, i, level),
            ))

    def names_of(self, origin: int, front: int, level: float) -> list[str]:
        rc = divmod(origin, self.cols)
        names = [n for n in self.g.combos[self.g.combo[rc]] if n != "clear"]
        if level > self.flat[0][origin]:
            names.append("steep slope (uphill)" if self.g.layers.steep[rc] else "uphill")
        names = names or ["clear"]
        return [f"{n} (rear ranks)" for n in names] if origin != front else names

    def close(self, at) -> None:
        if self.q <= 0:
            return
        started = math.ceil(self.qd / self.q - skern.trail._QUANTUM_TOL)
        extra = (started * self.q - self.qd) * self.qm
        if extra > skern.trail._QUANTUM_TOL:
            self.pieces.append(Leg(at, at, 0.0, extra, 0.0,
                                   [self._quantum(self.qcell, self.qd, started)], "quantum"))
        self.q, self.qd = 0.0, 0.0


def merged(pieces: list[Leg]) -> list[Leg]:
    """Consecutive pieces with the same multiplier and terrain as one leg."""
    legs: list[Leg] = []
    for piece in pieces:
        if legs and (legs[-1].multiplier, legs[-1].terrain) == (piece.multiplier, piece.terrain):
            last = legs.pop()
            piece = Leg(last.start, piece.end, last.length + piece.length,
                        last.cost + piece.cost, last.multiplier, last.terrain, last.kind)
        legs.append(piece)
    return legs


def grids():
    """Every shipped map under every ruleset in its units that knows its kinds, for
    each race, with its rulebook ranks and without rear ranks."""
    out = []
    for name in ("fantasy-warlord", "battlesystem", "reglamento"):
        rules = engine.load_rules(name)
        for path in MAPS:
            bf = engine.load_map(path)
            if bf.units != rules.units:
                continue
            for race in rules.races:
                for unit in (rules.unit(race), rules.unit(race, depth=0)):
                    try:
                        grid = engine.cost_grid(bf, rules, unit)
                    except MapError:  # a kind these rules do not know
                        break
                    out.append(pytest.param(grid, id=f"{name}-{path.stem}-{race}-{unit.depth:g}"))
    return out


def random_paths(grid, rng: random.Random, count: int) -> list[list]:
    """Polylines of two to six points: anywhere, or on cell centres and corners
    (exact diagonals through grid corners; the table's far edges too), sometimes
    with a point repeated."""
    cell, w, h = grid.grid.cell, grid.grid.width, grid.grid.height
    paths = []
    for _ in range(count):
        points = []
        for _ in range(rng.randint(2, 6)):
            if rng.random() < 0.5:
                x = (rng.randrange(int(w / cell) + 1) + rng.choice([0, 0.5])) * cell
                y = (rng.randrange(int(h / cell) + 1) + rng.choice([0, 0.5])) * cell
                points.append((min(x, w), min(y, h)))
            else:
                points.append((rng.uniform(0, w), rng.uniform(0, h)))
        if len(points) > 2 and rng.random() < 0.2:
            points[1] = points[0]
        paths.append(points)
    return paths


@pytest.mark.parametrize("grid", grids())
def test_walk_prices_every_piece_as_the_python_walk(grid):
    rng = random.Random(grid.unit.race + str(grid.grid.shape))
    for path in random_paths(grid, rng, 12):
        moves = [p for p, q in itertools.pairwise(path) if p != q]
        points = [*moves, path[-1]]
        want = ReferencePricer(grid).reference(points)
        got = engine.price_path(grid, path)
        assert [dataclasses.astuple(leg) for leg in got.pieces] == \
            [dataclasses.astuple(leg) for leg in want], path
        assert got.cost == math.fsum(leg.cost for leg in want)
        assert got.length == math.fsum(leg.length for leg in want)
        assert [dataclasses.astuple(leg) for leg in got.legs] == \
            [dataclasses.astuple(leg) for leg in merged(want)]


def test_the_walk_names_every_kind_of_piece():
    """The shipped maps give the comparison above every kind of row to check."""
    kinds = set()
    for param in grids():
        grid = param.values[0]
        for path in random_paths(grid, random.Random(1), 10):
            for leg in engine.price_path(grid, path).pieces:
                kinds.add((leg.kind, math.isinf(leg.cost), "(rear ranks)" in " ".join(leg.terrain),
                           "uphill" in " ".join(leg.terrain)))
    assert {("move", False, False, False), ("move", True, False, False),
            ("move", False, True, False), ("move", False, False, True),
            ("quantum", False, False, False), ("obstacle", False, False, False),
            ("formation change", False, False, False)} <= kinds


def test_legs_merge_pieces_alike():
    rules = engine.load_rules("fantasy-warlord")
    grid = engine.cost_grid(engine.load_map("maps/examples/archers.geojson"), rules,
                            rules.unit("humans", ranks=2))
    priced = engine.price_path(grid, [(0, 3.25), (5, 3.25), (11, 3.25)])
    assert priced.legs == merged(priced.pieces)
    assert len(priced.legs) == 4 < len(priced.pieces)


def test_a_diagonal_through_one_impassable_cell_blocks_that_cell_alone():
    """Cells the segment crosses are priced, blocked or not; only a cell it touches at
    a corner and does not cross blocks the whole segment."""
    rules = engine.load_rules("fantasy-warlord")
    bf = engine.load_map(battlefield([feature("building", rect(4, 4, 4.5, 4.5))]))
    grid = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    through = engine.price_path(grid, [(1, 1), (8, 8)]).pieces
    assert [leg.cost == math.inf for leg in through].count(True) == 1
    assert len(through) == 14
    beside = engine.price_path(grid, [(1, 1.5), (8, 8.5)]).pieces  # a corner of it only
    assert [(leg.length, leg.cost, leg.terrain) for leg in beside] == \
        [(math.hypot(7, 7), math.inf, ["impassable: building"])]


def test_a_path_thousands_of_times_across_the_table_is_refused_in_one_line():
    """Every cell edge a priced path crosses costs about a kilobyte of legs: a path over
    `MAX_CROSSED` of them is refused before it is walked (8,000 points across a
    30 x 6 table, 511,936 edges at 0.5 cells, took gigabytes); a shorter one
    is priced."""
    rules = engine.load_rules("fantasy-warlord")
    grid = engine.cost_grid(engine.load_map(battlefield([], 30, 6)), rules, rules.unit("humans"))
    there_and_back = [(1.0, 1.0), (29.0, 5.0)] * 4000
    with pytest.raises(engine.InputError, match=r"^the path crosses about 511,936 cell edges, "
                                                r"more than the 500,000 one pricing takes"):
        engine.price_path(grid, there_and_back)
    assert engine.price_path(grid, there_and_back[:200]).cost == pytest.approx(
        199 * math.dist((1, 1), (29, 5)))


def test_a_move_too_short_to_show_in_cells_is_no_move():
    rules = engine.load_rules("fantasy-warlord")
    bf = engine.load_map(battlefield([], cell=2.0))
    grid = engine.cost_grid(bf, rules, rules.unit("humans"))
    priced = engine.price_path(grid, [(0.0, 0.0), (5e-324, 0.0)])  # was a ZeroDivisionError
    assert (priced.cost, priced.legs) == (0.0, [])
    assert engine.price_path(grid, [(1.0, 1.0), (1.0, 1.0 + 5e-324), (7.0, 1.0)]).cost == 6.0


@pytest.mark.parametrize(("woods", "paths"), [
    (rect(-1, -1, 41, 5), [[(0, 5), (0, 15)], [(40, 5), (40, 15)], [(20, 5), (20, 15)]]),
    (rect(-1, -1, 5, 31), [[(5, 0), (15, 0)], [(5, 30), (15, 30)], [(5, 10), (15, 10)]])])
def test_ranks_along_the_tables_edge_stand_on_it(rules, woods, paths):
    """Humans one rank deep (2 cm) leaving a wood along the table's edge pay for the
    rank still in it (2 x 2 + 8) on the far edges as on the near ones and inside:
    the front's cells there are the last column or row, and so are the ranks'."""
    g = engine.cost_grid(engine.load_map(battlefield([feature("woods", woods)], 40, 30)),
                         rules, rules.unit("humans", depth=2))
    assert [engine.price_path(g, path).cost for path in paths] == [12, 12, 12]
