"""Moving AI's benchmark: solve a map's scenarios and compare with their optimal lengths."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from .._args import instance, listed, whole
from ..errors import InputError, NoRouteError
from ..maps.movingai import GridMap, Scenario
from .raw import GridRouter

__all__ = ["ScenarioResults", "run_scenarios"]


@dataclass(frozen=True)
class ScenarioResults:
    """How the engine did on a scenario file."""

    scenarios: int
    matched: int
    max_error: float
    seconds: float
    lengths: list[float]

    def as_dict(self) -> dict:
        """The JSON of ``engine movingai``."""
        return {
            "scenarios": self.scenarios, "matched": self.matched,
            "max_error": self.max_error, "seconds": round(self.seconds, 6),
        }


def run_scenarios(
    grid_map: GridMap, scenarios: list[Scenario], limit: int | None = None,
    routers: dict[str, GridRouter] | None = None,
) -> ScenarioResults:
    """Solve scenarios with the engine's A* and compare with their optimal lengths.

    ``seconds`` is the search time alone (building each class's router once
    per map included; loading files excluded).  ``routers``: the routers already
    built for ``grid_map``, by cell class; the ones this call builds are added, so
    that a caller solving the map's scenarios in several calls builds each once.
    """
    instance("grid_map", grid_map, GridMap, "load_grid_map")
    scenarios = listed("scenarios", scenarios)
    for i, sc in enumerate(scenarios):
        instance(f"scenarios[{i}]", sc, Scenario, "load_scenarios")
    if limit is not None and (not whole(limit) or limit < 0):
        raise InputError(f"limit must be a whole number >= 0 or None, got {limit!r}")
    if routers is not None and not isinstance(routers, dict):
        raise InputError(f"routers must be a dict or None, got {type(routers).__name__}")
    todo = scenarios if limit is None else scenarios[:int(limit)]
    routers = {} if routers is None else routers
    lengths, matched, worst = [], 0, 0.0
    started = time.perf_counter()
    for sc in todo:
        (sx, sy), (gx, gy) = sc.start, sc.goal
        h, w = grid_map.cells.shape
        if sc.size is not None and sc.size != (w, h):
            raise InputError(f"scenario {sc.start} -> {sc.goal} is for a {sc.size[0]} x "
                             f"{sc.size[1]} map, not the {w} x {h} {grid_map.name}")
        if not (0 <= sx < w and 0 <= sy < h and 0 <= gx < w and 0 <= gy < h):
            raise InputError(f"scenario {sc.start} -> {sc.goal} is off the {w} x {h} map")
        cls = grid_map.classes((sy, sx))
        for what, xy in (("start", sc.start), ("goal", sc.goal)):
            if grid_map.classes((xy[1], xy[0])) == "@":
                raise InputError(f"scenario {what} {xy} is on a blocked cell")
        if cls not in routers:
            routers[cls] = GridRouter(grid_map.multipliers(cls), directions=8)
        try:
            length, _ = routers[cls].route((sy, sx), (gy, gx))
        except (NoRouteError, InputError):
            length = math.inf
        error = abs(length - sc.optimal)
        worst = max(worst, error)
        matched += error <= sc.tolerance
        lengths.append(length)
    return ScenarioResults(len(todo), matched, worst, time.perf_counter() - started, lengths)
