"""The validated battlefield every map reader produces: its size and grid, and its
features clipped to the table (`Battlefield`, `Feature`).

Which terrain kinds exist is the ruleset's business: `Battlefield.check`
refuses kinds a ruleset does not define.

A ford is normally drawn across a river, from bank to bank.  The Fantasy Warlord
text also lets "any length of river" be "declared fordable": a ford drawn along
a river (its ground wholly in the water) fords the river's whole width between
the points where its ends project onto the river's centreline
(`Battlefield.fordable`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from shapely.ops import substring

from .._args import instance
from ..errors import InputError, MapError
from ..grid import GridSpec
from ..rules.ruleset import Ruleset, TerrainKind

__all__ = ["Battlefield", "Feature", "Points"]

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
    origin : str or None
        How the map's own format names the feature, where that is not its
        index in a GeoJSON file: a Tiled map's layer and object or tile
        (``layer 'terrain', object 7 'oak wood'``).  `label` shows it.
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
    origin: str | None = None

    @property
    def label(self) -> str:
        """How messages name this feature: ``feature 3 (id 'north-wood')``, or its
        `origin` in the map's own format."""
        if self.origin is not None:
            return self.origin
        return f"feature {self.index}" + (f" (id {self.id!r})" if self.id is not None else "")


class _NoSuchPoint(InputError, KeyError):
    """A name `Points` does not hold: an `InputError` with a one-line message, and a
    `KeyError` too, so ``in`` and ``get`` work as on any mapping."""

    __str__ = Exception.__str__


class Points(Mapping[str, tuple[float, float]]):
    """A battlefield's named places (unit start points, objectives): name -> (x, y)
    in table units, read-only.

    Looking up a name the map does not have raises an `InputError` (also a
    `KeyError`) that lists the names it has.

    Examples
    --------
    >>> points = Points({"Blue Knights": (12.0, 30.0)}, "field.tmj")
    >>> points["Blue Knights"], "Red Orcs" in points
    ((12.0, 30.0), False)
    >>> try:
    ...     points["Red Orcs"]
    ... except InputError as error:
    ...     print(error)
    field.tmj: no point named 'Red Orcs' (its points: 'Blue Knights')
    """

    def __init__(self, places: Mapping[str, tuple[float, float]] | None = None,
                 source: str = "<memory>"):
        self._places = dict(places or {})
        self._source = source

    def __getitem__(self, name: str) -> tuple[float, float]:
        try:
            return self._places[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            have = ", ".join(repr(n) for n in self._places) or "none"
            raise _NoSuchPoint(f"{self._source}: no point named {str(name)!r:.80} "
                               f"(its points: {have:.400})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._places)

    def __len__(self) -> int:
        return len(self._places)

    def __repr__(self) -> str:
        return f"Points({self._places!r})"


@dataclass(frozen=True, eq=False)
class Battlefield:
    """A validated battlefield: table size, units, grid, features and named points
    (`points`: ``battlefield.points["Blue Knights"]`` is an (x, y))."""

    width: float
    height: float
    units: str
    cell: float
    features: tuple[Feature, ...]
    source: str = "<memory>"
    points: Points = field(default_factory=Points)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def grid(self) -> GridSpec:
        """The raster laid over this table."""
        return GridSpec(self.width, self.height, self.cell)

    def check(self, rules: Ruleset) -> None:
        """Refuse what the ruleset makes wrong: a terrain kind it does not define
        (naming the kinds that exist), a hill that is a line, hill properties on
        other ground, a road, trail or crossing whose centreline is off the table, a
        crossing that does not cross water from bank to bank (but a ford lying
        along a river, `fordable`), a gateway set in no building.

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
                f"{_UNIT_NAMES[rules.units]} (its battlefield's \"units\": \"{rules.units}\") "
                f"or give rules in {_UNIT_NAMES[self.units]}"
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
            if kind.role == "hill" and not f.elevation:
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} needs an elevation "
                               "> 0 (properties.elevation, its crest's height above the ground "
                               "around); without one it would be flat ground")
            if kind.role != "hill" and (f.elevation or f.steep or f.climb is not None):
                raise MapError(f"{self.source}: {f.label}: elevation, steep and climb belong "
                               f"to hills, not to {f.terrain}")
            if f.linear and (kind.cancels or kind.role == "crossing") and not any(
                    part.length > 0 for part in _line_parts(f.centreline)):
                # Its strip may still reach the table, but the network follows centrelines.
                raise MapError(f"{self.source}: {f.label}: a {f.terrain}'s centreline must "
                               "run on the table; it lies wholly off it")
        def wet(kind: TerrainKind) -> bool:
            return kind.role == "river" or _waded(kind, rules)

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
        stretches: dict[int, Any] = {}
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
                if not _waded(rules.terrain[f.terrain], rules):
                    raise MapError(f"{self.source}: {f.label}: a {f.terrain} must reach a bank; "
                                   "it lies wholly in the water")
                stretches[f.index] = self._stretch(f, rules)
                continue
            # Each end on land, or at the table's edge (the bank may lie beyond it).
            lines = _line_parts(f.centreline) if f.linear else []
            ends = [p for line in lines for p in (line.coords[0], line.coords[-1])]
            wet = [0 < x < self.width and 0 < y < self.height
                   and water.contains(shapely.Point(x, y)) for x, y in ends]
            if wet and all(wet) and _waded(rules.terrain[f.terrain], rules):
                raise MapError(f"{self.source}: {f.label}: a {f.terrain} drawn along a river "
                               "must lie wholly in the water; this one is wider than the river")
            for (x, y), in_water in zip(ends, wet, strict=True):
                if in_water:
                    raise MapError(f"{self.source}: {f.label}: a {f.terrain} must reach a "
                                   f"bank at each end; its end ({x:g}, {y:g}) is in the water")
        self._cache[("fordable", id(rules))] = (stretches, rules)  # rules held: its id stays

    def fordable(self, rules: Ruleset) -> dict[int, Any]:
        """The stretches of river made fordable by fords drawn along a river.

        The Fantasy Warlord text: "any length of river can be declared
        fordable".  A ford (a crossing whose own layers include water: it is
        waded) whose ground lies wholly in the water runs along a river rather
        than across it.  The points of its centreline (a polygon's corners)
        are projected onto the centreline of each river it lies in; the
        river's centreline between the first and the last of them, widened by
        the river's half-width with flat ends and cut to the river's ground,
        is the fordable stretch: the river's whole width, bank to bank,
        between the ford's ends.  The ford's own ground is part of it.  Terrain
        layers burn the stretch as the ford (`engine.terrain.layers`), so a
        unit crosses the river anywhere along it, or walks along it, at the
        ford's multiplier.

        Parameters
        ----------
        rules : Ruleset

        Returns
        -------
        dict of int to shapely geometry
            For each such ford, by its index in the map: its stretch, clipped
            to the table.  Fords drawn across a river are not in it.

        Raises
        ------
        MapError
            As `check`: a ford in the water whose ends meet one point of the
            river's centreline (it reaches neither bank nor runs along the
            river), or that lies in no river drawn as a line.
        """
        key = ("fordable", id(rules))
        if key not in self._cache:
            self.check(rules)
        return self._cache[key][0]

    def _stretch(self, f: Feature, rules: Ruleset) -> Any:
        """The stretch of river ford ``f`` (lying wholly in the water) makes fordable
        (`fordable`), or a MapError."""
        tol = 1e-9 * max(self.width, self.height)
        points = shapely.points(shapely.get_coordinates(f.centreline if f.linear else f.area))
        bands, meets = [], None
        for river in self.features:
            kind = rules.terrain[river.terrain]
            if kind.role != "river" or not river.linear or (
                    river.area.intersection(f.area).area <= 0):
                continue
            half = river.width / 2.0
            inside = points[shapely.dwithin(river.area, points, tol)]
            for part in _line_parts(river.centreline):
                near = inside[shapely.distance(part, inside) <= half + tol]
                if not near.size:
                    continue
                along = shapely.line_locate_point(part, near)
                a, b = float(np.min(along)), float(np.max(along))
                if meets is None:
                    meets = part.interpolate(a)
                if b - a <= tol:
                    continue
                band = substring(part, a, b).buffer(half, cap_style="flat")
                band = band.intersection(river.area)
                if band.area > 0:
                    bands.append(band)
        what = (f"{self.source}: {f.label}: a {f.terrain} lying wholly in the water must run "
                "along a river, to ford it bank to bank between its ends")
        if meets is None:
            raise MapError(f"{what}; it lies in no river drawn as a line")
        if not bands:
            raise MapError(f"{what}; this one reaches neither bank nor runs along the river: "
                           f"its ends meet the river's centreline at one point "
                           f"({meets.x:g}, {meets.y:g})")
        return shapely.union_all([*bands, f.area])


def _waded(kind: TerrainKind, rules: Ruleset) -> bool:
    """A kind whose own layers include water: a ford is waded, a bridge is not."""
    return any(rules.layers[n] == "water" for n in kind.layers)


def _line_parts(centreline) -> list:
    """The non-empty line strings of a centreline clipped to the table."""
    if centreline is None or centreline.is_empty:
        return []
    parts = getattr(centreline, "geoms", [centreline])
    return [g for g in parts if g.geom_type == "LineString" and not g.is_empty]
