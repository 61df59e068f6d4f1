"""The HTTP API and the viewer: a FastAPI application over the engine.

Each question runs on a worker thread, at most ``lanes`` at once, the rest
waiting their turn; each works on its (map, ruleset) battlefield alone
(`GridCache`).  Every refusal is a 4xx with ``{"error": "<one line>"}``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from .._args import DuplicateKey, finite, shown, unique_keys, whole
from .._limits import MIB
from .._threads import usable_cores
from .._version import __version__
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
from ..errors import EngineError, InputError
from ..maps.battlefield import Battlefield
from ..rules.ruleset import Ruleset
from ..search.front import reach
from ..terrain.costgrid import CostGrid, cost_grid
from ..terrain.raster import layers
from . import fields
from .cache import GridCache
from .library import Library, TooLarge
from .models import (
    ChargeQuery,
    FlowFieldQuery,
    FlowQuery,
    ManoeuvreQuery,
    MapQuery,
    NetworkQuery,
    PriceQuery,
    ReachFieldQuery,
    ReachQuery,
    RouteQuery,
    SightQuery,
    ThreatFieldQuery,
    ThreatQuery,
    UnitQuery,
    VisibleQuery,
)

__all__ = ["create_app"]

_DESCRIPTION = """Where a unit can go this turn, the cheapest way there and why it costs what
it costs, priced as the tabletop rules price movement; and the questions an AI
opponent asks. Each answer is the JSON that `engine <command> --json` prints for
the same question. A map is a GeoJSON object or the name of a map of this server
(`GET /v1/maps`); rules are a ruleset's name (`GET /v1/rules`). Every refusal is a
4xx with `{"error": "<one line>"}`."""


class _Engine:
    """The server's state: its maps and rules, its cache, and its worker lanes."""

    def __init__(self, library: Library, cache: GridCache, lanes: int):
        self.library, self.cache = library, cache
        self.lanes = anyio.CapacityLimiter(lanes)

    async def run(self, work: Callable[[], dict]) -> JSONResponse:
        """``work()`` on a worker thread, as strict JSON."""
        return JSONResponse(strict(await anyio.to_thread.run_sync(work, limiter=self.lanes)))

    def _battlefield(self, q: MapQuery):
        key = (self.library.map_key(q.map), q.rules)
        return self.cache.battlefield(key, lambda: self.library.load_map(q.map))

    def on_map(self, q: MapQuery, ask: Callable[[Battlefield, Ruleset], dict]) -> dict:
        """``ask(battlefield, rules)`` for the body's map and rules."""
        rules = self.library.rules(q.rules)
        with self._battlefield(q) as bf:
            return ask(bf, rules)

    def on_unit(self, q: UnitQuery, ask: Callable[[CostGrid], dict]) -> dict:
        """``ask(grid)`` on the cost grid of the body's unit (cached)."""
        rules = self.library.rules(q.rules)
        race = q.race if q.race is not None else rules.default_race
        unit = rules.unit(race, **q.unit_options())
        with self._battlefield(q) as bf:
            return ask(cost_grid(bf, rules, unit))


class _BodyLimit:
    """ASGI middleware refusing a request body over ``limit`` bytes with 413: at once
    when its Content-Length says so, else as soon as more than that arrives."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit
        self.message = (f"the body is larger than the {limit / MIB:g} MiB this server takes "
                        "(engine serve --max-body-mb)")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            await _error(413, self.message)(scope, receive, send)
            return
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise HTTPException(413, self.message)
            return message

        await self.app(scope, counted, send)


class _BodyRefused(HTTPException):
    """A body refused before pydantic reads it, in words of its own (400)."""


class _UniqueKeysRequest(Request):
    """A request whose JSON body may not name one key twice in one object, as a map
    file may not: JSON would let the last one win without a word."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = json.loads(await self.body(), object_pairs_hook=unique_keys)
            except DuplicateKey as exc:
                raise _BodyRefused(400, f"the body: {exc}") from None
        return self._json


class _UniqueKeysRoute(APIRoute):
    """An endpoint that reads its body as `_UniqueKeysRequest`."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def unique(request: Request) -> Any:
            return await handler(_UniqueKeysRequest(request.scope, request.receive))

        return unique


def _field_path(loc: tuple) -> str:
    """A validation error's place in the body: ``enemies[0].race``."""
    out = ""
    for part in loc[1:] if loc and loc[0] == "body" else loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def _one_line(exc: RequestValidationError | ValidationError,
              content_type: str | None = None) -> tuple[int, str]:
    """The status and one-line message of a body pydantic refused, sent as
    ``content_type`` (None: no such header, or not over HTTP).  A body FastAPI did
    not read as JSON (not sent as JSON) reaches pydantic as bytes."""
    errors = exc.errors()
    first = errors[0]
    if first["type"] == "json_invalid":
        return 400, f"malformed JSON: {first.get('ctx', {}).get('error', 'cannot parse')}"
    where = _field_path(tuple(first["loc"]))
    if first["type"] == "missing" and not where:
        return 400, "the body is empty: send a JSON object"
    if first["type"] == "model_attributes_type" and isinstance(first.get("input"), bytes):
        sent = "without a Content-Type" if content_type is None else f"as {shown(content_type)}"
        return 415, f"the body came {sent}: send it as JSON, with Content-Type: application/json"
    if first["type"] == "missing":
        message = f"{where} is missing"
    else:
        message = f"{where}: {first['msg'].removeprefix('Value error, ')}" if where else \
            first["msg"].removeprefix("Value error, ")
    if first["type"] == "model_attributes_type":
        message = f"{where}: must be a JSON object" if where else "the body must be a JSON object"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return 422, " ".join(f"{message}{more}".split())


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


def _handlers(app: FastAPI) -> None:
    """Every refusal as ``{"error": "<one line>"}``."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(*_one_line(exc, request.headers.get("content-type")))

    @app.exception_handler(HTTPException)
    async def http(request: Request, exc: HTTPException) -> JSONResponse:
        if isinstance(exc, _BodyRefused):
            return _error(exc.status_code, exc.detail)
        message = {404: f"no {request.url.path} here: see /docs for what this server answers",
                   405: f"{request.method} is not how {request.url.path} is asked: see /docs",
                   400: "cannot read the body as JSON (nested too deeply, a number of "
                        "thousands of digits, or not UTF-8)",
                   }.get(exc.status_code, exc.detail)
        return _error(exc.status_code, message)

    @app.exception_handler(TooLarge)
    async def too_large(request: Request, exc: TooLarge) -> JSONResponse:
        return _error(413, str(exc))

    @app.exception_handler(EngineError)
    async def refused(request: Request, exc: EngineError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(MemoryError)
    async def no_memory(request: Request, exc: MemoryError) -> JSONResponse:
        return _error(413, "out of memory for this question (a larger cell or a smaller map)")

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        what = " ".join(str(exc).split())[:200]
        return _error(500, f"internal error: {type(exc).__name__}: {what} (please report it)")


def _questions(app: FastAPI, engine: _Engine) -> None:
    """The CLI's questions, one endpoint each, answering its ``--json``."""

    @app.post("/v1/reach", summary="everywhere a unit can get to this turn (engine reach)")
    async def post_reach(q: ReachQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(
            q, lambda g: reach_answer(g, q.at, q.probes, lattice=q.lattice)[1]))

    @app.post("/v1/route", summary="the cheapest route between two points (engine route)")
    async def post_route(q: RouteQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(
            q, lambda g: route_answer(g, q.start, q.goal, lattice=q.lattice)[1]))

    @app.post("/v1/price", summary="what a given path costs, leg by leg (engine price)")
    async def post_price(q: PriceQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(q, lambda g: price_answer(g, q.path)[1]))

    @app.post("/v1/manoeuvre", summary="a re-form, face or frontage change (engine manoeuvre)")
    async def post_manoeuvre(q: ManoeuvreQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(
            q, lambda g: manoeuvre_answer(g, q.at, q.kind, q.figures)[1]))

    @app.post("/v1/charge", summary="whether a unit can charge a target (engine charge)")
    async def post_charge(q: ChargeQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(q, lambda g: charge_answer(
            g, q.start, q.target, bonus=q.bonus, min_range=q.min_range, climbed=q.climbed)[1]))

    @app.post("/v1/network", summary="roads, bridges, fords and chokepoints (engine network)")
    async def post_network(q: NetworkQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(
            q, lambda g: network_answer(g, q.tolerance)[1]))

    @app.post("/v1/visible", summary="what an observer sees, or whether it sees a target "
              "(engine visible)")
    async def post_visible(q: VisibleQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_map(q, lambda bf, rules: visible_answer(
            bf, rules, q.observer, q.target, flying=q.flying, height=q.height)[2]))

    @app.post("/v1/threat", summary="how many enemies can reach each cell next turn "
              "(engine threat)")
    async def post_threat(q: ThreatQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_map(q, lambda bf, rules: threat_answer(
            bf, rules, _enemies(q, rules), charge=q.charge, probes=q.probes)[1]))

    @app.post("/v1/flow", summary="a field leading every cell to the nearest goal (engine flow)")
    async def post_flow(q: FlowQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(q, lambda g: flow_answer(
            g, q.goals, q.starts, _limit(q))[1]))


def _enemies(q: ThreatFieldQuery, rules: Ruleset) -> list:
    return [(rules.unit(e.race), tuple(e.at)) for e in q.enemies]


def _limit(q: FlowFieldQuery) -> float:
    return math.inf if q.limit is None else q.limit


def _described(field: Callable) -> str:
    """An endpoint's description: what its field function's docstring says of its JSON,
    and how grids are sent (`fields`)."""
    return " ".join((field.__doc__ or "").split()) + "\n\n" + " ".join(
        (fields.__doc__ or "").split("\n\n", 1)[-1].split())


def _fields(app: FastAPI, engine: _Engine) -> None:
    """Whole grids, for drawing (`fields`)."""

    @app.post("/v1/terrain", summary="the battlefield as a picture, one pixel a cell, and its "
              "legend", description=_described(fields.terrain_json))
    async def post_terrain(q: MapQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_map(
            q, lambda bf, rules: fields.terrain_json(bf, layers(bf, rules))))

    @app.post("/v1/fields/ground", summary="what each cell costs the unit",
              description=_described(fields.ground_json))
    async def post_ground(q: UnitQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(q, fields.ground_json))

    @app.post("/v1/fields/reach", summary="a reach cell by cell",
              description=_described(fields.reach_field_json))
    async def post_reach_field(q: ReachFieldQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(q, lambda g: fields.reach_field_json(
            g, reach(g, q.at, any_angle=not q.lattice))))

    @app.post("/v1/fields/threat", summary="a threat map cell by cell",
              description=_described(fields.threat_field_json))
    async def post_threat_field(q: ThreatFieldQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_map(q, lambda bf, rules: fields.threat_field_json(
            threat_answer(bf, rules, _enemies(q, rules), charge=q.charge)[0])))

    @app.post("/v1/fields/flow", summary="a flow field's first steps, sampled",
              description=_described(fields.flow_field_json))
    async def post_flow_field(q: FlowFieldQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_unit(q, lambda g: fields.flow_field_json(
            flow_answer(g, q.goals, (), _limit(q))[0])))

    @app.post("/v1/fields/visible", summary="a viewshed cell by cell",
              description=_described(fields.seen_json))
    async def post_seen(q: SightQuery) -> JSONResponse:
        return await engine.run(lambda: engine.on_map(q, lambda bf, rules: fields.seen_json(
            bf, q.observer, visible_answer(bf, rules, q.observer, flying=q.flying,
                                           height=q.height)[1])))


def _catalogue(app: FastAPI, engine: _Engine) -> None:
    """What the server has: its maps and its rulesets."""

    @app.get("/healthz", summary="whether the server is up")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.get("/v1/maps", summary="the maps this server has, by name")
    async def get_maps() -> JSONResponse:
        return await engine.run(lambda: {"maps": [_map_entry(engine.library, name, path)
                                                  for name, path in
                                                  engine.library.maps().items()]})

    @app.get("/v1/rules", summary="the rulesets this server has, by name, with their races")
    async def get_rules() -> JSONResponse:
        return await engine.run(lambda: {"rules": [
            _rules_entry(name, rules) for name, rules in engine.library.rulesets().items()]})


def _map_entry(library: Library, name: str, path) -> dict:
    entry: dict[str, Any] = {"name": name, "source": "shipped" if path is None else "folder"}
    try:
        bf = library.load_map(name)
    except EngineError as exc:
        return {**entry, "error": str(exc)}
    return {**entry, "width": bf.width, "height": bf.height, "units": bf.units, "cell": bf.cell,
            "features": len(bf.features)}


def _rules_entry(name: str, rules: Ruleset) -> dict:
    races = []
    for race in rules.races:
        u = rules.unit(race)
        races.append({"race": race, "move": u.move, "depth": u.depth, "frontage": u.frontage,
                      "troop": u.troop, "flying": u.flying, "swimming": u.swimming})
    return {"name": name, "title": rules.name, "units": rules.units, "races": races}


def create_app(maps: str | os.PathLike | None = None, rules: Sequence[str | os.PathLike] = (),
               *, cache_mb: float = 512, lanes: int | None = None,
               max_body_mb: float = 16) -> FastAPI:
    """The server's application, to run under any ASGI server (``engine serve`` runs it
    under uvicorn).

    Parameters
    ----------
    maps : path, optional
        A folder of ``*.geojson`` maps, asked for by name (``forest.geojson``:
        ``"forest"``), beside the shipped maps.
    rules : sequence of paths
        Rules files, asked for by their file's name beside the shipped rulesets.
    cache_mb : float
        MiB the cached battlefields and cost grids may hold (> 0); a map whose
        grids alone would take more is refused (413).
    lanes : int, optional
        Questions computed at once (default: the cores, at most 4); the rest wait.
    max_body_mb : float
        The largest request body taken, MiB (> 0; 413 beyond).

    Returns
    -------
    fastapi.FastAPI

    Raises
    ------
    InputError, RulesError
        ``maps`` is not a folder, a rules file is broken or its name is taken, or
        a size or ``lanes`` is not a number it can be.

    Examples
    --------
    >>> from fastapi.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> client.post("/v1/route", json={"map": "demo", "race": "humans",
    ...                                "from": [30, 40], "to": [60, 40]}).json()["turns"]
    2
    """
    for name, mib in (("cache_mb", cache_mb), ("max_body_mb", max_body_mb)):
        if not finite(mib) or mib * MIB < 1:  # not a byte: nothing would fit
            raise InputError(f"{name} must be a finite number of MiB, a byte or more, got "
                             f"{shown(mib)}")
    if lanes is not None and (not whole(lanes) or lanes < 1):
        raise InputError(f"lanes must be a whole number >= 1, got {shown(lanes)}")
    budget = int(cache_mb * MIB)
    library = Library(maps, rules, grid_bytes=budget)
    engine = _Engine(library, GridCache(budget), lanes or min(4, usable_cores()))
    app = FastAPI(title="engine", version=__version__, description=_DESCRIPTION)
    app.router.route_class = _UniqueKeysRoute
    app.add_middleware(_BodyLimit, limit=int(max_body_mb * MIB))
    app.state.engine = engine
    _handlers(app)
    _questions(app, engine)
    _fields(app, engine)
    _catalogue(app, engine)
    static = resources.files("engine.serve") / "static"

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def viewer() -> HTMLResponse:
        return HTMLResponse((static / "index.html").read_text("utf-8"))

    app.mount("/static", StaticFiles(packages=[("engine.serve", "static")]), name="static")
    return app
