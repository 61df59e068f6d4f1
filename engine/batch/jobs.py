"""A batch's jobs: read from a JSON Lines file (or made for a folder of Moving AI
files), checked, and grouped into the tasks the cluster runs.

A job is one line, a JSON object: ``{"id": ..., "command": ..., ...}`` with the
fields of the same question over HTTP (`engine.serve.models`, checked by the same
models) or, for ``"movingai"``, those of `MovingAIQuery`.  A line that is not such
a job is not fatal: it becomes an error `Line` of its own.  A map or rules file
named by a relative path is looked for in the job file's folder.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._args import DuplicateKey, shown, strict_json
from .._limits import is_file
from ..errors import EngineError, InputError
from ..maps.movingai import load_scenarios
from ..serve.app import _one_line
from ..serve.library import Library
from ..serve.models import (
    ChargeQuery,
    FlowQuery,
    ManoeuvreQuery,
    NetworkQuery,
    PriceQuery,
    ReachQuery,
    RouteQuery,
    ThreatQuery,
    VisibleQuery,
)

__all__ = ["COMMANDS", "Job", "Line", "MovingAIQuery", "movingai_jobs", "read_jobs", "result_key",
           "tasks"]

# Scenarios a job of `movingai_jobs` solves: a Moving AI file of 12,000 is 121 jobs.
SCENARIOS_PER_JOB = 100
# The most jobs one task answers: a task costs the cluster a few milliseconds.
MAX_TASK_JOBS = 64


class MovingAIQuery(BaseModel):
    """``engine movingai``: solve a Moving AI scenario file, or a stretch of it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    scen: str = Field(min_length=1, description="a .scen file")
    map: str | None = Field(None, min_length=1,
                            description="its .map (default: beside it, as its lines name it)")
    first: int = Field(0, ge=0, description="the first scenario solved, counting from 0")
    limit: int | None = Field(None, ge=1, description="solve this many (default: the rest)")


COMMANDS: dict[str, type[BaseModel]] = {
    "reach": ReachQuery, "route": RouteQuery, "price": PriceQuery,
    "manoeuvre": ManoeuvreQuery, "charge": ChargeQuery, "network": NetworkQuery,
    "visible": VisibleQuery, "threat": ThreatQuery, "flow": FlowQuery,
    "movingai": MovingAIQuery,
}


@dataclass(frozen=True)
class Job:
    """One checked question: its id, its command and its fields (``query``), with
    every file it names made absolute; ``group`` is the map (or scenario file) and
    ruleset it is asked on."""

    id: str | int
    line: int
    command: str
    query: BaseModel
    group: Hashable

    @property
    def key(self) -> Hashable:
        """What its result line answers (`result_key`)."""
        return "id", self.id


@dataclass(frozen=True)
class Line:
    """A line of the job file that is not a job: its id when it has one, else its
    line number, and why it was refused."""

    id: str | int | None
    line: int
    error: str
    command: ClassVar[None] = None  # a line that is not a job asks nothing

    @property
    def key(self) -> Hashable:
        """What its result line answers (`result_key`)."""
        return result_key(self.result())

    def result(self) -> dict:
        """Its line of the results: ``{"id", "error"}`` (and ``"line"`` without an id)."""
        return {"id": self.id, "error": self.error} if self.id is not None else \
            {"id": None, "line": self.line, "error": self.error}


def _id(doc: dict) -> str | int:
    if "id" not in doc:
        raise InputError("the job has no id")
    value = doc["id"]
    if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
        raise InputError(f"id must be a non-empty string or a whole number, got {shown(value)}")
    return value


def _resolved(text: str | None, folder: Path) -> str | None:
    """``text`` as an absolute path when it names a file in ``folder`` (relative) or
    anywhere (absolute); else as it is (a shipped name, or a file that is not there)."""
    if text is None:
        return None
    path = folder / text
    return str(path.resolve()) if is_file(path) else text


@lru_cache(maxsize=1)
def _library() -> Library:
    """What tells inline maps apart (`Library.map_key`: a hash of their content)."""
    return Library()


def _job(ident: str | int, doc: dict, n: int, folder: Path) -> Job:
    """The job ``ident`` of line ``n``'s object ``doc``; `InputError` or
    `ValidationError` when it is not one."""
    fields = {k: v for k, v in doc.items() if k not in ("id", "command")}
    command = doc.get("command")
    if not isinstance(command, str) or command not in COMMANDS:  # ([] is unhashable)
        raise InputError(f"unknown command {shown(command)}; a job is one of "
                         f"{', '.join(COMMANDS)}" if "command" in doc else
                         f"the job has no command (one of {', '.join(COMMANDS)})")
    query = COMMANDS[command].model_validate(fields)
    if isinstance(query, MovingAIQuery):
        query = query.model_copy(update={"scen": _resolved(query.scen, folder),
                                         "map": _resolved(query.map, folder)})
        return Job(ident, n, command, query, ("movingai", query.scen, query.map))
    source = query.map
    if isinstance(source, str):
        source = _resolved(source, folder)
        key = ("map", source)
    else:
        key = _library().map_key(source)
    query = query.model_copy(update={"map": source, "rules": _resolved(query.rules, folder)})
    return Job(ident, n, command, query, (key, query.rules))


def _read(n: int, text: str, folder: Path) -> Job | Line:
    """Line ``n`` of a job file, as a job or as the reason it is not one."""
    try:
        doc = strict_json(text)
    except DuplicateKey as exc:
        return Line(None, n, f"line {n}: {exc}")
    except (ValueError, RecursionError) as exc:
        return Line(None, n, f"line {n} is not JSON: {' '.join(str(exc).split())[:200]}")
    if not isinstance(doc, dict):
        return Line(None, n, f"line {n} is not a JSON object but {type(doc).__name__}")
    try:
        ident = _id(doc)
    except InputError as exc:
        return Line(None, n, f"line {n}: {exc}")
    try:
        return _job(ident, doc, n, folder)
    except ValidationError as exc:
        return Line(ident, n, _one_line(exc)[1])
    except EngineError as exc:
        return Line(ident, n, str(exc))


def read_jobs(path: str | os.PathLike) -> list[Job | Line]:
    """The jobs of a JSON Lines file, one a line (blank lines skipped), each a `Job`
    or, when it is not one, a `Line` saying why.

    Raises
    ------
    InputError
        The file cannot be read, or two jobs have the same id (the message names
        their lines).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "jobs.jsonl")
    >>> _ = open(path, "w").write(
    ...     '{"id": 1, "command": "route", "map": "demo", "race": "orcs", '
    ...     '"from": [30, 40], "to": [60, 40]}\\n'
    ...     '{"id": 2, "command": "fly"}\\n')
    >>> [type(j).__name__ for j in read_jobs(path)]
    ['Job', 'Line']
    >>> read_jobs(path)[1].error.split(";")[0]
    "unknown command 'fly'"
    """
    path = Path(path)
    folder = path.resolve().parent
    out: list[Job | Line] = []
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            for n, text in enumerate(f, start=1):
                if text.strip():
                    out.append(_read(n, text, folder))
    except OSError as exc:
        raise InputError(f"cannot read the job file {str(path)!r}: "
                         f"{exc.strerror or exc}") from None
    _unique(out, str(path))
    return out


def _unique(jobs: list[Job | Line], where: str) -> None:
    """`InputError` naming the lines of the first ids given twice."""
    lines: dict[str | int, list[int]] = defaultdict(list)
    for job in jobs:
        if job.id is not None:
            lines[job.id].append(job.line)
    twice = [(ident, ns) for ident, ns in lines.items() if len(ns) > 1]
    if twice:
        shown_ = "; ".join(f"id {shown(i)} on lines {', '.join(map(str, ns))}"
                           for i, ns in twice[:3])
        more = f" (and {len(twice) - 3} more)" if len(twice) > 3 else ""
        raise InputError(f"{where}: every job needs an id of its own: {shown_}{more}")


def movingai_jobs(folder: str | os.PathLike,
                  per_job: int = SCENARIOS_PER_JOB) -> list[Job | Line]:
    """Jobs solving every Moving AI scenario of a folder: each ``X.map`` that has an
    ``X.map.scen`` beside it, ``per_job`` scenarios a job, with ids such as
    ``"arena.map.scen[0:100]"``.

    Raises
    ------
    InputError
        ``folder`` is not a folder, or holds no such pair.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--movingai {str(folder)!r} is not a folder")
    pairs = [(m, m.with_name(m.name + ".scen")) for m in sorted(folder.glob("*.map"))]
    pairs = [(m.resolve(), s.resolve()) for m, s in pairs if is_file(s)]
    if not pairs:
        raise InputError(f"--movingai {str(folder)!r} holds no X.map with its X.map.scen")
    out: list[Job | Line] = []
    for map_path, scen in pairs:
        try:
            count = len(load_scenarios(scen))
        except InputError as exc:
            out.append(Line(scen.name, 0, str(exc)))
            continue
        for first in range(0, count, per_job):
            n = min(per_job, count - first)
            query = MovingAIQuery(scen=str(scen), map=str(map_path), first=first, limit=n)
            out.append(Job(f"{scen.name}[{first}:{first + n}]", 0, "movingai", query,
                           ("movingai", str(scen), str(map_path))))
    return out


def tasks(jobs: list[Job], workers: int) -> Iterator[list[Job]]:
    """``jobs`` in tasks: the jobs of one group (map and ruleset, or scenario file)
    dealt in turn into tasks of at most `MAX_TASK_JOBS`, and into at least four a
    worker when there are jobs enough, so that the work spreads and a group's dear
    questions (a scenario file's last, longest ones) do not all land in one task.

    >>> from engine.batch.jobs import Job
    >>> jobs = [Job(i, i, "route", None, "demo" if i < 10 else "crossings") for i in range(12)]
    >>> [[j.id for j in t] for t in tasks(jobs, workers=1)]
    [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7], [10], [11]]
    """
    groups: dict[Hashable, list[Job]] = defaultdict(list)
    for job in jobs:
        groups[job.group].append(job)
    for group in groups.values():
        size = max(1, min(MAX_TASK_JOBS, math.ceil(len(group) / (4 * max(1, workers)))))
        count = math.ceil(len(group) / size)
        for i in range(count):
            yield group[i::count]


def result_key(line: dict[str, Any]) -> Hashable:
    """What a result line answers: its id, or for a line without one, its line
    number."""
    return ("line", line.get("line")) if line.get("id") is None else ("id", line["id"])
