"""The validated battlefield every map reader produces: its size and grid, and its
features clipped to the table (`Battlefield`, `Feature`).

Which terrain kinds exist is the ruleset's business: `Battlefield.check`
refuses kinds a ruleset does not define.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import shapely

from .._args import instance
from ..errors import MapError
from ..grid import GridSpec
from ..rules.ruleset import Ruleset

__all__ = ["Battlefield", "Feature"]

_DEFAULT_CELL = {"cm": 0.5, "in": 0.25}
_UNIT_NAMES = {"cm": "centimetres", "in": "inches"}


@dataclass(frozen=True)
class Feature:
    """One validated map feature.

    Attributes
    ----------
    index : int
        Position in the file's ``features`` array.
    id : str or None
        The feature's ``id`` (or ``properties.id``).
    terrain : str
        Terrain kind, as the ruleset names it.
    area : shapely geometry
        Ground covered, clipped to the table: the polygon itself, or a line's
        strip of its ``width`` (flat ends).
    full : shapely geometry
        The same before clipping (a hill's slopes are measured from its whole
        outline, even where it runs off the table).
    linear : bool
        Given as a line with a width.
    width : float or None
        A line's width in table units.
    elevation : float
        A hill's crest height (0 for anything else).
    steep : bool
        A hill designated steep.
    centreline : shapely geometry or None
        A line feature's own line, clipped to the table (None for areas).
    cost : float or None
        ``properties.cost``: the flat cost of crossing this feature, overriding
        its kind's ``crossing_cost`` (a deep muddy ditch: 6" where a ditch is 4").
    climb : float or None
        ``properties.climb`` on a hill: what climbing it costs per unit
        travelled, as a scenario sets it (Battlesystem: "3" (or more)").
    """

    index: int
    id: str | None
    terrain: str
    area: Any = field(repr=False)
    full: Any = field(repr=False)
    linear: bool = False
    width: float | None = None
    elevation: float = 0.0
    steep: bool = False
    centreline: Any = field(default=None, repr=False)
    cost: float | None = None
    climb: float | None = None

    @property
    def label(self) -> str:
        """How messages name this feature: ``feature 3 (id 'north-wood')``."""
        return f"feature {self.index}" + (f" (id {self.id!r})" if self.id is not None else "")


@dataclass(frozen=True, eq=False)
class Battlefield:
    """A validated battlefield: table size, units, grid and features."""

    width: float
    height: float
    units: str
    cell: float
    features: tuple[Feature, ...]
    source: str = "<memory>"
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def grid(self) -> GridSpec:
        """The raster laid over this table."""
        return GridSpec(self.width, self.height, self.cell)

    def check(self, rules: Ruleset) -> None:
        """Refuse what the ruleset makes wrong: a terrain kind it does not define
        (naming the kinds that exist), a hill that is a line, hill properties on
        other ground, a road, trail or crossing whose centreline is off the table, a
        crossing that does not cross water from bank to bank, a gateway set in no
        building.

        Raises
        ------
        MapError
            Naming the first offending feature and what is wrong with it.
        """
        instance("rules", rules, Ruleset, "load_rules")
        if rules.units != self.units:
            raise MapError(
                f"{self.source}: the map measures in {_UNIT_NAMES[self.units]} but "
                f"{rules.name} measures in {_UNIT_NAMES[rules.units]}; redraw the map in "
                f"{rules.units} (its battlefield's \"units\") or give rules in {self.units}"
            )
        for f in self.features:
            kind = rules.terrain.get(f.terrain)
            if kind is None:
                known = ", ".join(sorted(rules.terrain))
                raise MapError(
                    f"{self.source}: {f.label}: unknown terrain kind {f.terrain!r} "
                    f"for {rules.name} (known: {known})"
                )
            if kind.role == "hill" and f.linear:
                raise MapError(f"{self.source}: {f.label}: a hill must be a polygon")
            if kind.role != "hill" and (f.elevation or f.steep or f.climb is not None):
                raise MapError(f"{self.source}: {f.label}: elevation, steep and climb belong "
                               f"to hills, not to {f.terrain}")
            if f.linear and (kind.cancels or kind.role == "crossing") and not any(
                    part.length > 0 for part in _line_parts(f.centreline)):
                # Its strip may still reach the table, but the network follows centrelines.
                raise MapError(f"{self.source}: {f.label}: a {f.terrain}'s centreline must "
                               "run on the table; it lies wholly off it")
        def wet(kind) -> bool:
            return kind.role == "river" or any(rules.layers[n] == "water" for n in kind.layers)

        rivers = [f.area for f in self.features
                  if rules.terrain[f.terrain].role != "crossing" and wet(rules.terrain[f.terrain])]
        water = shapely.union_all(rivers) if rivers else None
        walls = [f.area for f in self.features if rules.terrain[f.terrain].role == "building"]
        building = shapely.union_all(walls) if walls else None
        for f in self.features:
            if rules.terrain[f.terrain].role == "gateway" and (
                    building is None or f.area.intersection(building).area <= 0):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must be set in a "
                               "building; it overlaps none")
        for f in self.features:
            if rules.terrain[f.terrain].role != "crossing":
                continue
            if water is None or not f.area.intersects(water):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must cross a river; "
                               "it touches no water")
            if f.area.intersection(water).area <= 0:
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must cross a river; "
                               "it only touches the water's edge")
            if water.contains(f.area):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} must reach a bank; "
                               "it lies wholly in the water")
            # Each end on land, or at the table's edge (the bank may lie beyond it).
            lines = _line_parts(f.centreline) if f.linear else []
            for end in (p for line in lines for p in (line.coords[0], line.coords[-1])):
                x, y = end
                inside = 0 < x < self.width and 0 < y < self.height
                if inside and water.contains(shapely.Point(end)):
                    raise MapError(f"{self.source}: {f.label}: a {f.terrain} must reach a "
                                   f"bank at each end; its end ({x:g}, {y:g}) is in the water")


def _line_parts(centreline) -> list:
    """The non-empty line strings of a centreline clipped to the table."""
    if centreline is None or centreline.is_empty:
        return []
    parts = getattr(centreline, "geoms", [centreline])
    return [g for g in parts if g.geom_type == "LineString" and not g.is_empty]
