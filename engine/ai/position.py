"""Where to move: candidate positions scored by progress, cover, concealment, threat
and disorder (`choose_position`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._args import finite, flag, instance, listed, non_negative, point, shown, whole
from ..errors import InputError
from ..maps.battlefield import Battlefield
from ..rules.ruleset import COVERS, Ruleset
from ..search.flow import FlowField
from ..search.front import _start_cell, reach
from ..terrain.costgrid import CostGrid
from ..terrain.raster import kind_cells, layers
from .threat import Threat

__all__ = ["DEFAULT_WEIGHTS", "Option", "choose_position"]

DEFAULT_WEIGHTS: dict[str, float] = {
    "progress": 1.0,
    "cover": 1.5,
    "concealment": 3.0,
    "threat": -4.0,
    "disorder": -2.0,
}
"""Weights of `choose_position`'s parts, each multiplying a part's value:
``progress`` (table units gained toward the objective), ``cover`` (0 none, 1
light, 2 medium, 3 heavy), ``concealment`` (share of the enemies that cannot
see the cell), ``threat`` (enemies that can reach it next turn) and
``disorder`` (1 where a charge disorders the unit).  Negative weights
penalise."""


@dataclass(frozen=True)
class Option:
    """One place a unit could move to this turn, scored.

    Attributes
    ----------
    at : (x, y)
        The cell centre.
    cost : float
        Allowance spent to get there.
    score : float
        Sum of `parts`.
    parts : dict of str to float
        Each part's weighted contribution (`DEFAULT_WEIGHTS` names them).
    reasons : tuple of str
        One line per part that contributes.
    """

    at: tuple[float, float]
    cost: float
    score: float
    parts: dict
    reasons: tuple[str, ...]

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"at": [round(v, 6) for v in self.at], "cost": round(self.cost, 6),
                "score": round(self.score, 6),
                "parts": {k: round(v, 6) for k, v in self.parts.items()},
                "reasons": list(self.reasons)}


def _ground(battlefield: Battlefield, rules: Ruleset, close_order: bool):
    """Per cell: cover level (0 none, then `COVERS` + 1) and the kind giving it (-1 none),
    and the kind whose charge disorders (-1 none); cached on the battlefield."""
    key = ("ai-ground", id(rules), close_order)
    cached = battlefield._cache.get(key)
    if cached is not None:
        return cached
    lay = layers(battlefield, rules)
    level = np.zeros(lay.grid.shape, dtype=np.int8)
    cover_from = np.full(lay.grid.shape, -1, dtype=np.int16)
    disorder_from = np.full(lay.grid.shape, -1, dtype=np.int16)
    for i, name in enumerate(lay.kinds):
        e = rules.terrain[name].effects
        on = kind_cells(lay.mask, i)
        if e.cover is not None:
            better = on & (COVERS.index(e.cover) + 1 > level)
            level[better] = COVERS.index(e.cover) + 1
            cover_from[better] = i
        if e.disorders == "any" or (e.disorders == "close order" and close_order):
            disorder_from[on & (disorder_from < 0)] = i
    battlefield._cache[key] = result = (lay.kinds, level, cover_from, disorder_from)
    return result


def _weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    out = dict(DEFAULT_WEIGHTS)
    if weights is not None and not isinstance(weights, Mapping):
        raise InputError(f"weights must be a mapping of names to numbers, got "
                         f"{type(weights).__name__}")
    for name, w in (weights or {}).items():
        if name not in DEFAULT_WEIGHTS:
            raise InputError(f"unknown weight {name!r}; valid: {', '.join(DEFAULT_WEIGHTS)}")
        if not finite(w):
            raise InputError(f"weight {name} must be a finite number, got {shown(w)}")
        out[name] = float(w)
    return out


def choose_position(
    grid: CostGrid,
    at: tuple[float, float],
    flow: FlowField | None = None,
    threat: Threat | None = None,
    *,
    allowance: float | None = None,
    weights: Mapping[str, float] | None = None,
    top: int = 3,
    avoid: Sequence[tuple[float, float]] = (),
    spacing: float | None = None,
    close_order: bool = True,
) -> list[Option]:
    """The best few cells a unit can reach this turn, by a weighted score, with reasons.

    Each reachable cell scores the sum of ``weight * value`` over the parts
    of `DEFAULT_WEIGHTS`: progress toward ``flow``'s goals along cheapest
    routes (its cost here minus its cost at the cell; cells from which no
    goal is reachable are left out), the cover of the cell's terrain
    (walls, hedges and fences count for the cells their strip covers),
    concealment (share of ``threat``'s enemies whose viewshed misses the
    cell), threat (``threat.count``) and disorder (a charge in the cell
    would disorder the unit).  Ties go to the cheaper cell.

    Parameters
    ----------
    grid : CostGrid
    at : (x, y)
    flow : FlowField, optional
        Toward the objective; without it progress is 0.  Built for this
        unit's profile (``flow.grid`` the same grid).
    threat : Threat, optional
        The enemy; without it concealment and threat are 0.
    allowance : float, optional
        Defaults to the unit's move.
    weights : mapping of str to float, optional
        Overrides of `DEFAULT_WEIGHTS` (any subset).
    top : int
        How many options to return (>= 1).
    avoid : sequence of (x, y)
        Points (friends' positions, say) no option may be within ``spacing`` of.
    spacing : float, optional
        Least distance between options, and from ``avoid``; default the
        unit's frontage, at least one cell.
    close_order : bool
        The unit fights in close order (woods and fens disorder only those).

    Returns
    -------
    list of Option
        Best first, at least ``spacing`` apart; fewer than ``top`` if the
        reach holds fewer such cells.

    Raises
    ------
    InputError
        Bad position, allowance, weights, ``top`` or ``spacing``; a flow
        field or threat map from another battlefield or profile.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid, flow_field
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/demo.geojson"), rules, rules.unit("humans", depth=0))
    >>> best = choose_position(g, (20, 20), flow_field(g, [(90, 30)]))[0]
    >>> best.cost <= 20, best.parts["progress"] > 19
    (True, True)
    """
    instance("grid", grid, CostGrid, "cost_grid")
    close_order = flag("close_order", close_order)
    w = _weights(weights)
    if not whole(top) or top < 1:
        raise InputError(f"top must be a whole number >= 1, got {top!r}")
    spec = grid.grid
    if spacing is None:
        spacing = max(grid.unit.frontage, spec.cell)
    non_negative("spacing", spacing)
    if flow is not None:
        instance("flow", flow, FlowField, "flow_field")
    if threat is not None:
        instance("threat", threat, Threat, "threat_map")
    if flow is not None and flow.grid is not grid:
        raise InputError("the flow field was built for another cost grid (unit or battlefield)")
    if threat is not None and threat.battlefield is not grid.battlefield:
        raise InputError("the threat map is of another battlefield")
    r = reach(grid, at, allowance)
    cells, cost = r.cells, r.cost
    kinds, level, cover_from, disorder_from = _ground(grid.battlefield, grid.rules, close_order)
    values = {name: np.zeros(len(cells)) for name in DEFAULT_WEIGHTS}
    if flow is not None:
        here = flow.cost.flat[_start_cell(grid, at, "start")]
        there = flow.cost.flat[cells]
        if math.isinf(here) and math.isfinite(flow.limit):
            raise InputError(f"the unit at ({at[0]:g}, {at[1]:g}) is beyond the flow field's "
                             f"limit ({flow.limit:g}): no progress can be measured; build it "
                             "with a larger limit")
        if math.isfinite(here):
            keep = np.isfinite(there)
            cells, cost, there = cells[keep], cost[keep], there[keep]
            values = {name: v[keep] for name, v in values.items()}
            values["progress"] = here - there
    values["cover"] = level.flat[cells].astype(float)
    values["disorder"] = (disorder_from.flat[cells] >= 0).astype(float)
    n_enemies = 0 if threat is None else len(threat.enemies)
    if n_enemies:
        values["concealment"] = 1.0 - threat.seen_by.flat[cells] / n_enemies
        values["threat"] = threat.count.flat[cells].astype(float)
    with np.errstate(over="ignore", invalid="ignore"):
        score = sum(w[name] * v for name, v in values.items())
    if not np.isfinite(score).all():
        raise InputError("the weights are too large: a score overflows")
    order = np.lexsort((cost, -score))
    cols = spec.shape[1]
    xs = (cells % cols + 0.5) * spec.cell
    ys = (cells // cols + 0.5) * spec.cell
    taken = [point(xy) for xy in listed("avoid", avoid)]
    units = grid.battlefield.units
    out = []
    for j in order:
        xy = (float(xs[j]), float(ys[j]))
        if any(math.dist(xy, p) < spacing for p in taken):
            continue
        taken.append(xy)
        parts = {name: w[name] * float(v[j]) for name, v in values.items()}
        reasons = []
        gain = values["progress"][j]
        if gain:
            way = "closer to" if gain > 0 else "farther from"
            reasons.append(f"{abs(gain):.2f} {units} {way} the objective")
        if level.flat[cells[j]]:
            reasons.append(f"{COVERS[level.flat[cells[j]] - 1]} cover from "
                           f"{kinds[cover_from.flat[cells[j]]]}")
        if n_enemies:
            seen = int(threat.seen_by.flat[cells[j]])
            reasons.append(f"seen by {seen} of {n_enemies} enemies")
            hit = int(threat.count.flat[cells[j]])
            if hit:
                reasons.append(f"{hit} enem{'y' if hit == 1 else 'ies'} can reach it next turn "
                               f"(margin up to {threat.margin.flat[cells[j]]:.2f} {units})")
        if disorder_from.flat[cells[j]] >= 0:
            reasons.append(f"a charge here is disordered ({kinds[disorder_from.flat[cells[j]]]})")
        out.append(Option(xy, float(cost[j]), float(score[j]), parts, tuple(reasons)))
        if len(out) == top:
            break
    return out
