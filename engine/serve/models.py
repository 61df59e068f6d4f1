"""The bodies the server's questions take: checked by pydantic, strictly (a number
is a JSON number, a yes/no a JSON boolean, unknown keys refused), and described
in the OpenAPI schema (``/openapi.json``, browsable at ``/docs``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "ChargeQuery", "Enemy", "FlowFieldQuery", "FlowQuery", "ManoeuvreQuery", "MapQuery",
    "NetworkQuery", "PriceQuery", "ReachFieldQuery", "ReachQuery", "RouteQuery", "SightQuery",
    "ThreatFieldQuery", "ThreatQuery", "UnitQuery", "VisibleQuery",
]

# Bounds that keep one question small: points to report on, points of a path, enemies.
MAX_PROBES = 1000
MAX_PATH = 10_000
MAX_ENEMIES = 64

Point = Annotated[list[float], Field(min_length=2, max_length=2,
                                     description="[x, y] in table units, y down")]
Probes = Annotated[list[Point], Field(max_length=MAX_PROBES)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


class MapQuery(BaseModel):
    """A map and a ruleset."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    map: Any = Field(description="a GeoJSON FeatureCollection with a battlefield header, or "
                     "the name of a map of this server (GET /v1/maps)",
                     json_schema_extra={"anyOf": [{"type": "object"}, {"type": "string"}]})
    rules: Name = Field("fantasy-warlord",
                        description="a ruleset of this server, by name (GET /v1/rules)")

    @field_validator("map")
    @classmethod
    def _map(cls, value: Any) -> Any:
        if not isinstance(value, dict | str):
            raise ValueError(f"must be a GeoJSON object or a map's name, got "
                             f"{type(value).__name__}")
        if isinstance(value, str) and not 0 < len(value) <= 200:
            raise ValueError("a map's name has 1 to 200 characters")
        return value


class UnitQuery(MapQuery):
    """A map, a ruleset and a unit, as the command line's unit options describe it."""

    race: Name = Field(description="race or profile, as the rules name it")
    move: float | None = Field(None, ge=0, description="allowance per turn (default: the race's)")
    ranks: int | None = Field(None, ge=1, description="ranks deep (depth = ranks x rank depth)")
    depth: float | None = Field(None, ge=0, description="footprint depth in table units")
    frontage: float | None = Field(None, ge=0, description="width of the unit's front")
    march: bool = Field(False, description="a march move: open ground only")
    formation: Literal["irregular", "regular"] = "irregular"

    @model_validator(mode="after")
    def _deep(self) -> UnitQuery:
        if self.ranks is not None and self.depth is not None:
            raise ValueError("give ranks or depth, not both")
        return self

    def unit_options(self) -> dict[str, Any]:
        """The keywords of `Ruleset.unit` this body gives."""
        return {"move": self.move, "ranks": self.ranks, "depth": self.depth,
                "frontage": self.frontage, "march": self.march, "formation": self.formation}


class ReachFieldQuery(UnitQuery):
    """A reach, cell by cell (``/v1/fields/reach``)."""

    at: Point = Field(description="the unit's position")
    lattice: bool = Field(False, description="search the step lattice from cell centres")


class ReachQuery(ReachFieldQuery):
    """``engine reach``: everywhere the unit can get to this turn."""

    probes: Probes = Field([], description="points to report on")


class RouteQuery(UnitQuery):
    """``engine route``: the cheapest route between two points."""

    start: Point = Field(alias="from", description="where the unit stands")
    goal: Point = Field(alias="to", description="where it goes")
    lattice: bool = False


class PriceQuery(UnitQuery):
    """``engine price``: what a given path costs, leg by leg."""

    path: Annotated[list[Point], Field(min_length=2, max_length=MAX_PATH)] = Field(
        description="the path's points in order, from the unit's position")


class ManoeuvreQuery(UnitQuery):
    """``engine manoeuvre``: a re-form, face or frontage change where the unit stands."""

    at: Point
    kind: Literal["reform", "face", "frontage"]
    figures: int | None = Field(None, ge=1, description="figures changing place (frontage)")


class ChargeQuery(UnitQuery):
    """``engine charge``: whether the unit can charge a target."""

    start: Point = Field(alias="from")
    target: Point = Field(alias="to")
    min_range: float = Field(ge=0, description="minimum charge range")
    bonus: float | None = Field(None, ge=0, description="the charge bonus (default: the race's)")
    climbed: bool = Field(False, description="it has moved uphill this turn")


class NetworkQuery(UnitQuery):
    """``engine network``: roads, trails, bridges and fords, and the chokepoints."""

    race: Name | None = Field(None, description="default: the first in the rules")
    tolerance: float | None = Field(None, ge=0, description="line ends this close join")


class SightQuery(MapQuery):
    """A viewshed, cell by cell (``/v1/fields/visible``)."""

    observer: Point = Field(alias="from")
    flying: bool = False
    height: float | None = Field(None, ge=0, description="sight height (default: the rules')")


class VisibleQuery(SightQuery):
    """``engine visible``: what an observer sees, or whether it sees a target."""

    target: Point | None = Field(None, alias="to", description="without it, the viewshed")


class Enemy(BaseModel):
    """An enemy unit and where it stands."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    race: Name
    at: Point


class ThreatFieldQuery(MapQuery):
    """A threat map, cell by cell (``/v1/fields/threat``)."""

    enemies: Annotated[list[Enemy], Field(min_length=1, max_length=MAX_ENEMIES)]
    charge: bool = Field(False, description="reach as a charge (move plus charge_bonus)")


class ThreatQuery(ThreatFieldQuery):
    """``engine threat``: how many enemies can reach each cell next turn."""

    probes: Probes = Field([], description="points to report on")


class FlowFieldQuery(UnitQuery):
    """A flow field's first steps, sampled (``/v1/fields/flow``)."""

    goals: Annotated[list[Point], Field(min_length=1, max_length=MAX_PROBES)]
    limit: float | None = Field(None, ge=0, description="search costs up to this only "
                                "(default: the whole battlefield)")


class FlowQuery(FlowFieldQuery):
    """``engine flow``: a field leading every cell to the nearest goal."""

    starts: Probes = Field([], alias="from", description="points to follow the field from")
