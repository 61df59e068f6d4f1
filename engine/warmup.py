"""Compile (or load from numba's disk cache) every kernel once, on tiny maps."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from ._args import flag, shown, whole
from ._coldstart import compile_kernel
from .ai.visibility import viewshed, visible
from .errors import InputError
from .maps.geojson import load_map
from .rules.load import load_rules
from .search.flow import flow_field
from .search.front import reach, reach_many, route
from .search.pricing import price_path
from .search.raw import GridRouter, cost_field
from .terrain.costgrid import cost_grid

__all__ = ["warm_up"]


def _hill():
    return load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 4, "height": 4, "units": "cm"},
        "features": [{
            "type": "Feature", "properties": {"terrain": "hill", "elevation": 1, "steep": True},
            "geometry": {"type": "Polygon", "coordinates": [[[1, 1], [3, 1], [3, 3], [1, 1]]]},
        }],
    })


def _unit(depth: float | None, task: str) -> Callable[[], None]:
    """One task (``"reach"``: reach and reach of many; ``"route"``: route and price;
    ``"flow"``: flow field) for Fantasy Warlord humans with the rules' default depth
    (``None``) or ``depth``."""
    def run() -> None:
        rules = load_rules("fantasy-warlord")
        unit = rules.unit("humans") if depth is None else rules.unit("humans", depth=depth)
        g = cost_grid(_hill(), rules, unit)
        if task == "reach":  # the lattice's kernels (a unit without ranks: `_any_angle`'s)
            reach(g, (0.25, 0.25), 3, any_angle=False)
            reach_many(g, [(0.25, 0.25)], 3, any_angle=False)
        elif task == "route":
            price_path(g, route(g, (0.25, 0.25), (3.75, 3.75), any_angle=False).path)
        else:
            flow_field(g, [(3.75, 3.75)])
    return run


def _any_angle() -> None:
    rules = load_rules("fantasy-warlord")
    g = cost_grid(_hill(), rules, rules.unit("humans", depth=0))
    reach(g, (0.25, 0.25), 3).cost_at((1.1, 1.3))
    reach_many(g, [(0.25, 0.25)], 3)
    route(g, (0.25, 0.25), (3.75, 3.75))
    compile_kernel("straighten")  # a route that bends (the hill's route is straight)
    ranks = cost_grid(_hill(), rules, rules.unit("humans"))
    reach(ranks, (0.25, 0.25), 3).cost_at((1.1, 1.3))
    reach_many(ranks, [(0.25, 0.25)], 3)


def _sight() -> None:
    rules = load_rules("fantasy-warlord")
    viewshed(_hill(), rules, (0.25, 0.25))
    visible(_hill(), rules, (0.25, 0.25), (3.75, 3.75))


def _raw_grids() -> None:
    cost_field(np.ones((4, 4)), (0, 0), directions=8)
    GridRouter(np.ones((4, 4)), directions=8).route((0, 0), (3, 3))


def _quanta() -> None:
    bs = load_rules("battlesystem")  # ground priced per started quantum
    woods = load_map({
        "type": "FeatureCollection",
        "battlefield": {"width": 2, "height": 2, "units": "in"},
        "features": [{"type": "Feature", "properties": {"terrain": "light woods"},
                      "geometry": {"type": "Polygon",
                                   "coordinates": [[[1, 0], [2, 0], [2, 2], [1, 2], [1, 0]]]}}],
    })
    g = cost_grid(woods, bs, bs.unit("infantry", depth=0))
    reach(g, (0.1, 0.1), 3)
    route(g, (0.1, 0.1), (1.9, 1.9))  # its bends moved where the rounding costs least


def _flow_rest() -> None:
    compile_kernel("field_rest")  # a flow field's last search: no tiny map reaches it


# Families of kernels, the longest to compile first (worker processes take them in order).
STEPS: dict[str, Callable[[], None]] = {
    "a unit in ranks: reach": _unit(None, "reach"),
    "a unit as a point: reach": _unit(0, "reach"),
    "a unit in ranks: route": _unit(None, "route"),
    "a unit as a point: route": _unit(0, "route"),
    "a unit in ranks: flow": _unit(None, "flow"),
    "a unit as a point: flow": _unit(0, "flow"),
    "flow fields on large maps": _flow_rest,
    "any-angle reach and route": _any_angle,
    "line of sight": _sight,
    "raw cost grids": _raw_grids,
    "terrain in quanta": _quanta,
}


def _step(name: str) -> None:
    """Run one of `STEPS` (in a worker process)."""
    STEPS[name]()


def warm_up(progress: bool = False, processes: int = 1) -> None:
    """Compile (or load from numba's disk cache) every kernel on a tiny map.

    Parameters
    ----------
    progress : bool, optional
        Show a progress bar on stderr (when it is a terminal), one step per family
        of kernels.  ``engine warm-up`` shows it.
    processes : int, optional
        With more than one, that many worker processes compile the families side
        by side into numba's disk cache, and this process then loads them from
        it.  ``engine warm-up`` uses one per core.

    Raises
    ------
    InputError
        ``progress`` is not a bool, or ``processes`` not a whole number >= 1.
    """
    from tqdm import tqdm

    progress = flag("progress", progress)
    if not whole(processes) or processes < 1:
        raise InputError(f"processes must be a whole number >= 1, got {shown(processes)}")
    with tqdm(total=len(STEPS), file=sys.stderr, disable=None if progress else True,
              unit="step",
              bar_format="compiling kernels: {desc} {n}/{total} {bar} {elapsed}") as bar:
        if processes > 1:
            ctx = multiprocessing.get_context("spawn")  # no fork of numba's threads
            with ProcessPoolExecutor(min(processes, len(STEPS)), mp_context=ctx) as pool:
                futures = {pool.submit(_step, name): name for name in STEPS}
                for done in as_completed(futures):
                    done.result()
                    bar.set_description_str(futures[done])
                    bar.update()
            for step in STEPS.values():  # loaded from the cache the workers filled
                step()
            return
        for name, step in STEPS.items():
            bar.set_description_str(name)
            step()
            bar.update()
