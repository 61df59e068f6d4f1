"""The answers to the questions the command line and the server both take: each
function asks the engine and returns what it computed together with its JSON.

``engine reach ... --json`` prints the JSON of `reach_answer`, and ``POST
/v1/reach`` answers with the same, so a game calling the server gets what a
user of the command line reads.  `strict` makes any of them strict JSON.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import NoRouteError
from .search.front import Reach, Route, reach, route
from .search.pricing import Pricing, price_path

if TYPE_CHECKING:
    from .ai.checks import ChargeCheck, Manoeuvre
    from .ai.threat import Threat
    from .ai.visibility import Sight
    from .maps.battlefield import Battlefield
    from .rules.ruleset import Ruleset, Unit
    from .search.flow import FlowField
    from .terrain.costgrid import CostGrid
    from .terrain.roads import Network

__all__ = [
    "charge_answer", "flow_answer", "manoeuvre_answer", "network_answer", "price_answer",
    "reach_answer", "route_answer", "route_json", "strict", "threat_answer", "visible_answer",
]

Point = tuple[float, float]


def _round(v: float) -> float | None:
    return None if math.isinf(v) else round(v, 6)


def _xy(points) -> list[list[float]]:
    """Points as JSON, not rounded: a route's path sent back to be priced (`price_path`,
    ``POST /v1/price``) must cost what the route does, and a point rounded across a
    cell's edge may stand on other ground."""
    return [[float(x), float(y)] for x, y in points]


def strict(value: Any) -> Any:
    """``value`` with every non-finite float made None: strict JSON has no NaN or inf.

    >>> strict({"cost": float("inf"), "path": [(1.0, float("nan"))]})
    {'cost': None, 'path': [[1.0, None]]}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict(v) for v in value]
    return value


def reach_answer(g: CostGrid, at: Point, probes: Sequence[Point] = (), *,
                 lattice: bool = False) -> tuple[Reach, dict]:
    """Where the grid's unit gets this turn from ``at``, and each probe's cost.

    JSON: ``{"allowance", "area", "cells", "cell", "probes": [{"at", "cost",
    "reachable"}]}``.
    """
    r = reach(g, at, any_angle=not lattice)
    found = [{"at": list(xy), "cost": _round(r.cost_at(xy)), "reachable": r.reachable(xy)}
             for xy in probes]
    return r, {"allowance": r.allowance, "area": round(r.area, 6), "cells": len(r.cells),
               "cell": g.grid.cell, "probes": found}


def route_json(rt: Route) -> dict:
    """A route as JSON: ``{"cost", "length", "turns", "path", "stops", "legs"}``."""
    return {
        "cost": _round(rt.cost), "length": round(rt.length, 6), "turns": rt.turns,
        "path": _xy(rt.path), "stops": _xy(rt.stops),
        "legs": [leg.as_dict() for leg in rt.legs],
    }


def route_answer(g: CostGrid, start: Point, goal: Point, *,
                 lattice: bool = False) -> tuple[Route, dict]:
    """The cheapest route from ``start`` to ``goal`` (`route_json`)."""
    rt = route(g, start, goal, any_angle=not lattice)
    return rt, route_json(rt)


def price_answer(g: CostGrid, path: Sequence[Point]) -> tuple[Pricing, dict]:
    """What ``path`` costs, leg by leg: ``{"cost", "length", "legs"}`` (cost null
    where the unit cannot go)."""
    p = price_path(g, path)
    return p, {"cost": _round(p.cost), "length": round(p.length, 6),
               "legs": [leg.as_dict() for leg in p.legs]}


def manoeuvre_answer(g: CostGrid, at: Point, kind: str,
                     figures: int | None = None) -> tuple[Manoeuvre, dict]:
    """A re-form, face or frontage change at ``at``: ``{"kind", "allowed", "cost",
    "reason"}``."""
    from .ai.checks import manoeuvre

    m = manoeuvre(g, at, kind, figures)
    return m, {"kind": m.kind, "allowed": m.allowed, "cost": _round(m.cost), "reason": m.reason}


def charge_answer(g: CostGrid, start: Point, target: Point, *, bonus: float | None,
                  min_range: float, climbed: bool = False) -> tuple[ChargeCheck, dict]:
    """Whether the unit at ``start`` can charge ``target``: ``{"allowed", "reasons",
    "checks", "route"}`` (the route as `route_json`, or null)."""
    from .ai.checks import can_charge

    c = can_charge(g, start, target, bonus=bonus, minimum_range=min_range, climbed=climbed)
    return c, {"allowed": c.allowed, "reasons": c.reasons, "checks": c.checks,
               "route": None if c.route is None else route_json(c.route)}


def network_answer(g: CostGrid, tolerance: float | None = None) -> tuple[Network, dict]:
    """The road, trail, bridge and ford network and the unit's chokepoints
    (`Network.as_dict`)."""
    from .terrain.roads import describe

    net = describe(g.battlefield, g.rules, g.unit, tolerance)
    return net, net.as_dict()


def visible_answer(bf: Battlefield, rules: Ruleset, observer: Point, target: Point | None = None,
                   *, flying: bool = False, height: float | None = None,
                   viewshed: bool = False) -> tuple[Sight | None, np.ndarray | None, dict]:
    """Whether ``observer`` sees ``target`` (`Sight.as_dict`), or without a target its
    viewshed: ``{"observer", "cells", "of", "cell", "area"}``.

    Returns the sight (None without a target), the viewshed (computed without a
    target, or when ``viewshed`` asks for it; else None) and the JSON.
    """
    from .ai import visibility

    kw = {"flying": flying, "height": height}
    sight = None if target is None else visibility.visible(bf, rules, observer, target, **kw)
    seen = visibility.viewshed(bf, rules, observer, **kw) if viewshed or target is None else None
    if sight is not None:
        return sight, seen, sight.as_dict()
    count = int(seen.sum())
    return None, seen, {"observer": list(observer), "cells": count, "of": int(seen.size),
                        "cell": bf.cell, "area": round(count * bf.cell**2, 6)}


def threat_answer(bf: Battlefield, rules: Ruleset, enemies: Sequence[tuple[Unit, Point]], *,
                  charge: bool = False, probes: Sequence[Point] = ()) -> tuple[Threat, dict]:
    """How many of ``enemies`` (unit, position) can reach each cell next turn:
    ``{"enemies", "charge", "cells", "cell", "area", "most", "probes": [{"at",
    "count", "by": [{"enemy", "race", "margin"}]}]}``."""
    from .ai.threat import threat_map

    t = threat_map(bf, rules, enemies, charge=charge)
    found = []
    for xy in probes:
        by = [{"enemy": i, "race": enemies[i][0].race, "margin": round(m, 6)} for i, m in t.at(xy)]
        found.append({"at": list(xy), "count": len(by), "by": by})
    cells = int((t.count > 0).sum())
    return t, {"enemies": [{"race": u.race, "at": list(xy)} for u, xy in enemies],
               "charge": charge, "cells": cells, "cell": bf.cell,
               "area": round(cells * bf.cell**2, 6), "most": int(t.count.max()),
               "probes": found}


def flow_answer(g: CostGrid, goals: Sequence[Point], probes: Sequence[Point] = (),
                limit: float = math.inf) -> tuple[FlowField, dict]:
    """A field leading every cell to the nearest goal, followed from each probe:
    ``{"goals", "cells", "cell", "probes": [{"from", "cost", "path"}]}`` (an empty
    path and a null cost where no goal is within ``limit``)."""
    from .search.flow import flow_field

    f = flow_field(g, goals, limit)
    found = []
    for xy in probes:
        try:
            path = f.path_from(xy)
        except NoRouteError:
            path = []
        found.append({"from": list(xy), "cost": _round(f.cost_at(xy)), "path": _xy(path)})
    return f, {"goals": [list(xy) for xy in goals], "cells": int(np.isfinite(f.cost).sum()),
               "cell": g.grid.cell, "probes": found}
