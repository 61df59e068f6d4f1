"""What a batch's workers run: a task's jobs answered one after another.

A worker keeps what it builds between tasks, in its own memory: battlefields
by (map, ruleset) with the terrain layers and cost grids built on them (a
`GridCache`, least recently used dropped first past its budget), rulesets, and
Moving AI maps with their routers and scenario files.  A file is known by its
path, size and time of change, an inline map by a hash of its content, so a
map's grids are built once per worker, however many of its jobs the worker
answers.  Each job's answer is the JSON its command prints with ``--json``
(`engine.answers`), or its error in one line.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Hashable
from functools import lru_cache, partial
from typing import Any, TypeVar

from ..answers import (
    charge_answer,
    flow_answer,
    manoeuvre_answer,
    network_answer,
    price_answer,
    reach_answer,
    route_answer,
    strict,
    threat_answer,
    visible_answer,
)
from ..errors import EngineError
from ..maps.battlefield import Battlefield
from ..maps.geojson import load_map
from ..maps.movingai import GridMap, Scenario, load_grid_map, load_scenarios, map_for
from ..rules.load import load_rules
from ..rules.ruleset import Ruleset
from ..search.raw import GridRouter
from ..search.scenarios import run_scenarios
from ..serve.cache import GridCache
from ..terrain.costgrid import CostGrid, cost_grid
from .jobs import Job, MovingAIQuery

__all__ = ["answer_task"]

_T = TypeVar("_T")

# The questions asked of a unit's cost grid, and those asked of the battlefield.
_ON_GRID: dict[str, Callable[[Any, CostGrid], dict]] = {
    "reach": lambda q, g: reach_answer(g, q.at, q.probes, lattice=q.lattice)[1],
    "route": lambda q, g: route_answer(g, q.start, q.goal, lattice=q.lattice)[1],
    "price": lambda q, g: price_answer(g, q.path)[1],
    "manoeuvre": lambda q, g: manoeuvre_answer(g, q.at, q.kind, q.figures)[1],
    "charge": lambda q, g: charge_answer(g, q.start, q.target, bonus=q.bonus,
                                         min_range=q.min_range, climbed=q.climbed)[1],
    "network": lambda q, g: network_answer(g, q.tolerance)[1],
    "flow": lambda q, g: flow_answer(g, q.goals, q.starts,
                                     math.inf if q.limit is None else q.limit)[1],
}
_ON_MAP: dict[str, Callable[[Any, Battlefield, Ruleset], dict]] = {
    "visible": lambda q, bf, rules: visible_answer(bf, rules, q.observer, q.target,
                                                   flying=q.flying, height=q.height)[2],
    "threat": lambda q, bf, rules: threat_answer(
        bf, rules, [(rules.unit(e.race), tuple(e.at)) for e in q.enemies],
        charge=q.charge, probes=q.probes)[1],
}


def _stamp(path: str) -> tuple[int, ...]:
    """A file's time of change and size (nothing for a name that is not a file), so
    that a file edited between tasks is read again."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=1)
def _grids(budget: int) -> GridCache:
    """The worker's battlefields, ``budget`` bytes at most."""
    return GridCache(budget)


@lru_cache(maxsize=32)
def _rules(source: str, stamp: tuple[int, ...]) -> Ruleset:
    return load_rules(source)


@lru_cache(maxsize=16)
def _scenarios(path: str, stamp: tuple[int, ...]) -> list[Scenario]:
    return load_scenarios(path)


@lru_cache(maxsize=8)
def _grid_map(path: str, stamp: tuple[int, ...]) -> tuple[GridMap, dict[str, GridRouter],
                                                           threading.Lock]:
    """A Moving AI map, the routers built on it by cell class, and the lock its
    routers are used under (a router's workspace serves one search at a time)."""
    return load_grid_map(path), {}, threading.Lock()


def _loaded(load: Callable[[], _T], group: Hashable, refused: dict[Hashable, str]) -> _T:
    """``load()``; when it fails, its one line is kept in ``refused`` for ``group`` too,
    so that the task's other jobs on that map are refused without reading it again."""
    try:
        return load()
    except EngineError as exc:
        refused[group] = str(exc)
        raise


def _movingai(job: Job, refused: dict[Hashable, str]) -> dict:
    q = job.query
    scenarios = _loaded(lambda: _scenarios(q.scen, _stamp(q.scen)), job.group, refused)
    map_path = q.map or str(map_for(q.scen, scenarios))
    grid_map, routers, lock = _loaded(lambda: _grid_map(map_path, _stamp(map_path)),
                                      job.group, refused)
    with lock:
        return run_scenarios(grid_map, scenarios[q.first:], q.limit, routers=routers).as_dict()


def _ask(job: Job, budget: int, refused: dict[Hashable, str]) -> dict:
    """The answer's JSON of ``job`` (not yet strict)."""
    q = job.query
    if isinstance(q, MovingAIQuery):
        return _movingai(job, refused)
    rules = _loaded(lambda: _rules(q.rules, _stamp(q.rules)), job.group, refused)
    key: Hashable = (job.group, _stamp(q.map) if isinstance(q.map, str) else (),
                     _stamp(q.rules))
    load = partial(_loaded, partial(load_map, q.map), job.group, refused)
    with _grids(budget).battlefield(key, load) as bf:
        if job.command in _ON_MAP:
            return _ON_MAP[job.command](q, bf, rules)
        race = q.race if q.race is not None else rules.default_race
        unit = rules.unit(race, **q.unit_options())
        return _ON_GRID[job.command](q, cost_grid(bf, rules, unit))


def _answer(job: Job, budget: int, refused: dict[Hashable, str]) -> dict:
    """``job``'s line of the results; ``refused`` holds the task's groups whose map,
    rules or scenario file could not be loaded."""
    if job.group in refused:
        return {"id": job.id, "error": refused[job.group]}
    try:
        return {"id": job.id, "result": strict(_ask(job, budget, refused))}
    except EngineError as exc:
        error = str(exc)
    except MemoryError:
        error = "out of memory for this question (a larger cell or a smaller map)"
    except Exception as exc:  # one job's bug never stops the batch
        what = " ".join(str(exc).split())[:200]
        error = f"internal error: {type(exc).__name__}: {what} (please report it)"
    return {"id": job.id, "error": error}


def answer_task(jobs: list[Job], cache_bytes: int) -> list[dict]:
    """Answer ``jobs`` in turn: each one's line of the results, ``{"id", "result"}``
    or ``{"id", "error"}``.

    Parameters
    ----------
    jobs : list of Job
        Jobs of `engine.batch.jobs.read_jobs` (or `movingai_jobs`).
    cache_bytes : int
        The most the worker's battlefields and their grids may hold.

    Examples
    --------
    >>> from engine.batch.jobs import Job
    >>> from engine.serve.models import RouteQuery
    >>> q = RouteQuery.model_validate({"map": "demo", "race": "orcs", "from": [30, 40],
    ...                                "to": [60, 40]})
    >>> [line] = answer_task([Job("a", 1, "route", q, (("map", "demo"), q.rules))], 2**28)
    >>> line["id"], line["result"]["turns"]
    ('a', 2)
    """
    refused: dict[Hashable, str] = {}
    return [_answer(job, cache_bytes, refused) for job in jobs]
