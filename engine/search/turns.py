"""How many turns a route takes, and where each turn ends.

A turn spends at most the allowance and its leftover is not carried over:
each turn goes as far along the route as its allowance pays, the move priced
afresh from where the turn before ended, as `engine.search.reach` from there
prices it.  Where the route's costs are the smooth product of distance and
multiplier (no flat cost, no ground priced per started quantum, no rear ranks,
whose footprint a new move stands afresh), that is where the route's cost
reaches each multiple of the allowance.  Elsewhere a turn that cannot pay a
flat cost (an obstacle, a formation change) or a started quantum whole stops
short of it, and the route can take more turns than its cost over the
allowance.
"""

from __future__ import annotations

import bisect
import itertools
import math

import numpy as np

from ..errors import InputError, NoRouteError
from ..grid import _EPS
from ..terrain.costgrid import CostGrid
from ._state import _SLACK
from .pricing import Pricing, _path_cost, _price

__all__ = ["MAX_TURNS", "route_turns", "turns_for"]

# Most turns a route or `engine.ai.reach_turns` counts (they fit an int16).
MAX_TURNS = 2**15 - 1
# A turn that cannot pay a cost due at once on entering a cell stops this far (times
# the cell or the allowance, the larger) before it: the pricing walk takes a crossing
# closer to a move's start or end than `_EPS` times its length (no turn's move is
# longer than the allowance) or the cell for none, so a stop on the far side of the
# crossing by less would skip the cost.  The next turn's move there costs a
# multiplier times as much more, within a turn's rounding.
_SHORT = 16 * _EPS
# A turn's way is priced this far (times the cell or the allowance) past the allowance:
# farther than a turn's rounding, so the way to there costs more than the turn pays.
_PAST = 1e-6
# A turn that spends less than this share of the allowance is stuck: what is beyond it
# costs more at once (a move into ground priced per started quantum shorter than the
# quantum's rounding tolerance is charged nothing, so its turns would creep on).
_STUCK = 1e-6


def turns_for(cost: float, per_turn: float) -> int:
    """Turns a move costing ``cost`` takes at ``per_turn`` a turn (at least 1), its
    cost spread over them as it falls: the fewest any route of that cost takes.

    Raises
    ------
    InputError
        ``per_turn`` is not > 0, or so small that it takes more than `MAX_TURNS`.
    """
    if not per_turn > 0:
        raise InputError("allowance must be > 0 to count the turns of a route")
    ratio = cost / per_turn  # inf for a subnormal allowance
    turns = max(1, math.ceil(ratio - _SLACK)) if ratio <= MAX_TURNS else MAX_TURNS + 1
    if turns > MAX_TURNS:
        _too_many(per_turn, cost)
    return turns


def _too_many(per_turn: float, cost: float) -> None:
    raise InputError(f"allowance {per_turn:g} is too small: the route costs {cost:g}, "
                     f"more than {MAX_TURNS} turns")


def route_turns(grid: CostGrid, path: list, priced: Pricing, rows: np.ndarray,
                per_turn: float) -> tuple[int, list]:
    """The turns a route along ``path`` (priced ``priced``, its pieces ``rows``,
    `engine.search.pricing._price`'s) takes at ``per_turn`` a turn, and where each
    turn but the last ends (see the module's text).

    Raises
    ------
    InputError
        ``per_turn`` is not > 0, or so small that it takes more than `MAX_TURNS`.
    NoRouteError
        A cost paid at once on the way (or a quantum started) is more than
        ``per_turn`` (`CostGrid.within_turn` blocks the cells that charge it).
    """
    if priced.cost <= _SLACK:
        return 0, []
    turns = turns_for(priced.cost, per_turn)
    if (grid.depth == 0 and not grid.quantum.any()
            and all(leg.kind == "move" for leg in priced.legs)):
        return turns, _even_stops(rows, turns, per_turn)
    along = _Along(path)
    stops: list = []
    s = 0.0
    limit = per_turn * (1.0 + _SLACK)  # what a turn pays, as `turns_for` counts
    while along.total - s > limit or _cost(grid, along, s, along.total) > limit:
        if len(stops) + 1 >= MAX_TURNS:
            _too_many(per_turn, priced.cost)
        t, spent = _turn_end(grid, along, s, per_turn, limit)
        if spent < _STUCK * per_turn:
            _stuck(grid, along, s, per_turn)
        stops.append(along.at(t))
        s = t
    return len(stops) + 1, stops


def _even_stops(rows: np.ndarray, turns: int, per_turn: float) -> list:
    """Where the cost of pieces ``rows`` reaches each multiple of ``per_turn`` short of
    ``turns``: the pieces are straight, so a stop is found within one."""
    spent = list(itertools.accumulate(rows[:, 5].tolist()))  # after each piece, in order
    stops = []
    for k in range(1, turns):
        j = bisect.bisect_left(spent, k * per_turn - _SLACK)
        if j == len(spent):  # the pieces' sum fell short of the fsum by rounding
            break
        x0, y0, x1, y1, _, price, _ = rows[j].tolist()
        f = (k * per_turn - (spent[j - 1] if j else 0.0)) / price
        stops.append((x0 + f * (x1 - x0), y0 + f * (y1 - y0)))
    return stops


class _Along:
    """A polyline measured along its length."""

    def __init__(self, points: list):
        self.points = points
        self.ends = list(itertools.accumulate(
            (math.dist(p, q) for p, q in itertools.pairwise(points)), initial=0.0))
        self.total = self.ends[-1]

    def at(self, s: float) -> tuple[float, float]:
        """The point ``s`` along it."""
        i = min(max(bisect.bisect_right(self.ends, s) - 1, 0), len(self.points) - 2)
        (x0, y0), (x1, y1) = self.points[i], self.points[i + 1]
        span = self.ends[i + 1] - self.ends[i]
        d = min(max(s - self.ends[i], 0.0), span)
        if d >= span:  # its end as it is (the arithmetic may put a hair off the table)
            return x1, y1
        return x0 + d * (x1 - x0) / span, y0 + d * (y1 - y0) / span

    def cut(self, s: float, t: float) -> list:
        """The polyline from ``s`` to ``t`` along it."""
        inner = self.points[bisect.bisect_right(self.ends, s):bisect.bisect_left(self.ends, t)]
        return [self.at(s), *inner, self.at(t)]


def _cost(grid: CostGrid, along: _Along, s: float, t: float) -> float:
    """The price of a move along ``along`` from ``s`` to ``t``, standing afresh at ``s``."""
    return _path_cost(grid, along.cut(s, t))


def _turn_end(grid: CostGrid, along: _Along, s: float, per_turn: float,
              limit: float) -> tuple[float, float]:
    """How far along ``along`` a turn from ``s`` gets at ``per_turn`` (the way on costs
    more than that; a turn pays up to ``limit``, ``per_turn`` and rounding), and what
    the turn spends.

    No move costs less than its length, so no farther than ``per_turn``.  The
    way's pieces to a hair past there (`_PAST`: so that a cost paid at once on
    entering a cell just there is among them), priced from ``s``, add up past
    ``per_turn`` in a move or at a cost paid at once (or a stretch's rounding
    up to whole quanta): in a move, where they reach it, if a move to there
    costs that (no quantum started beyond it); at once, `_SHORT` before it, so
    that the next turn's move crosses into its cell and pays it.  Else the
    last point bisected (to the float) that the turn pays, short of either."""
    short = _SHORT * max(grid.cell, per_turn)
    hi = min(along.total, s + per_turn + _PAST * max(grid.cell, per_turn))
    rows = _price(grid, along.cut(s, hi), pieces=False, checked=True)[1]
    spent = np.cumsum(rows[:, 5])  # past ``limit``: the way on costs more than a turn
    j = min(int(np.searchsorted(spent, limit, side="right")), len(spent) - 1)
    before = float(spent[j - 1]) if j else 0.0
    at = s + float(rows[:j, 4].sum())
    if rows[j, 4] > 0:
        t = at + max(per_turn - before, 0.0) / float(rows[j, 5]) * float(rows[j, 4])
        if j and rows[j - 1, 4] == 0:  # just past a cost paid at once: past its crossing
            t = max(t, at + short)
    else:
        t = at - short
    if not s < t < hi:
        return s, 0.0
    spent = _cost(grid, along, s, t)
    if spent <= limit:
        near = round(t, 9)  # to 9 places where the float is a hair off in a move
        dear = _cost(grid, along, s, near) if rows[j, 4] > 0 and t < near < hi else math.inf
        return (near, dear) if dear <= limit else (t, spent)
    lo, hi, spent = s, t, 0.0
    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # to a round figure where the float is a hair past one
            near = round(lo, 6)
            dear = _cost(grid, along, s, near) if s < near < lo else math.inf
            return (near, dear) if dear <= limit else (lo, spent)
        cost = _cost(grid, along, s, mid)
        if cost <= limit:
            lo, spent = mid, cost
        else:
            hi = mid


def _stuck(grid: CostGrid, along: _Along, s: float, per_turn: float) -> None:
    """`NoRouteError`: from ``s`` along ``along`` the way on costs more than
    ``per_turn`` at once."""
    x, y = along.at(s)
    legs = _price(grid, along.cut(s, min(along.total, s + per_turn)), pieces=False,
                  checked=True)[0].legs
    leg = next((leg for leg in legs if leg.kind != "move"), None)
    what = ("" if leg is None else
            f" (a started quantum of {leg.terrain[0].split(':')[0]})" if leg.kind == "quantum"
            else f" ({leg.kind}, {', '.join(leg.terrain)}: {leg.cost:g})")
    (x0, y0), (x1, y1) = along.points[0], along.points[-1]
    raise NoRouteError(f"no route from ({x0:g}, {y0:g}) to ({x1:g}, {y1:g}) in turns of "
                       f"{per_turn:g}: at ({x:.6g}, {y:.6g}) the way on costs more than a "
                       f"turn's allowance at once{what}")
