"""Roads, trails, bridges and fords as a networkx graph; the crossings a unit depends on.

`network` turns a map's road-like lines (terrain kinds that ``cancel`` a layer
class: roads, trails) and its crossings (bridges, fords) into a
`networkx.MultiGraph`.  Nodes sit at the ends of lines, where lines meet or
cross, and on the banks where a crossing meets a river; edges are the pieces of
line between them.  Lines that nearly meet join: an end within ``tolerance``
(default: one grid cell) of another line is snapped onto it, and points closer
than ``tolerance`` are one node.  A ford drawn along a river
(`Battlefield.fordable`) is its own line in the water; a road or trail that
ends on its fordable stretch (within ``tolerance``) joins it by a straight piece
of ford, from that end (a bank node) to the nearest point of the ford's line.

The grid search prices roads itself (a road cancels area penalties cell by
cell), so routes already use roads where they are cheaper; the graph is for
what an AI asks about the network as a whole.

`chokepoints` answers which crossings a unit cannot do without: bridges, fords
and other passages (a gateway, a road through ground otherwise closed to the
unit) whose loss would cut the battlefield apart for it.  The passable ground
is split into regions, each crossing joins the regions it touches, and a
crossing is a chokepoint when removing it from that region graph leaves more
pieces than before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry import LineString, Point
from shapely.ops import substring

from .._args import instance, non_negative
from ..grid import GridSpec
from ..maps.battlefield import Battlefield, Feature, _line_parts
from ..rules.ruleset import Ruleset, Unit
from .ground import combo_multiplier
from .raster import _cover, ground_of, kinds_in, layers, unit_mask

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Chokepoint", "Network", "Region", "chokepoints", "describe", "network"]

_FOUR = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)


def network(battlefield: Battlefield, rules: Ruleset, tolerance: float | None = None
            ) -> nx.MultiGraph:
    """The map's roads, trails, bridges and fords as a graph (cached on the battlefield).

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
        Decides which kinds are network kinds: those with ``cancels`` (roads,
        trails) and those with role ``"crossing"`` (bridges, fords).  Only
        line features join the graph.
    tolerance : float, optional
        Ends and crossings closer than this (table units) join; default one
        grid cell.

    Returns
    -------
    networkx.MultiGraph
        Node attributes: ``pos`` (x, y), ``kind`` (``"end"``, ``"junction"``
        or ``"bank"``, where a crossing meets a river's edge, or a road or
        trail ends on a fordable stretch).  Edge
        attributes: ``kind`` (the terrain kind), ``length``, ``width``,
        ``feature`` (its label), ``index`` (the feature's index in the map)
        and ``geometry`` (the piece of centreline, a list of points).

    Raises
    ------
    InputError
        A negative tolerance.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> g = network(load_map("maps/crossings.geojson"), load_rules("fantasy-warlord"))
    >>> sorted({k for _, _, k in g.edges(data="kind")})
    ['bridge', 'ford', 'road', 'trail']
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    import networkx as nx  # not at module level: it takes longer to import than the engine
    from scipy.spatial import cKDTree

    tol = battlefield.cell if tolerance is None else tolerance
    non_negative("tolerance", tol)
    key = ("network", id(rules), float(tol))
    cached = battlefield._cache.get(key)
    if cached is not None:
        return cached
    battlefield.check(rules)
    kinds = {n for n, k in rules.terrain.items() if k.cancels or k.role == "crossing"}
    pieces: list[tuple[Feature, LineString]] = [
        (f, part) for f in battlefield.features if f.terrain in kinds and f.linear
        for part in _line_parts(f.centreline) if part.length > 0
    ]
    lines = [p for _, p in pieces]
    tree = shapely.STRtree(lines)
    cuts: list[list[float]] = [[0.0, line.length] for line in lines]
    banks: list[Point] = []

    # Where lines cross or touch, and where an end comes within tol of another line.
    for i, line in enumerate(lines):
        for j in tree.query(line, predicate="dwithin", distance=tol):
            if j <= i:
                continue
            for p in _points(line.intersection(lines[j])):
                cuts[i].append(line.project(p))
                cuts[j].append(lines[j].project(p))
        for end in (Point(line.coords[0]), Point(line.coords[-1])):
            for j in tree.query(end, predicate="dwithin", distance=tol):
                if j != i:
                    cuts[j].append(lines[j].project(end))
    # A crossing's banks: where its line meets the edge of a river.
    rivers = [f.area for f in battlefield.features if rules.terrain[f.terrain].role == "river"]
    if rivers:
        edge = shapely.union_all(rivers).boundary
        for i, (f, line) in enumerate(pieces):
            if rules.terrain[f.terrain].role == "crossing":
                for p in _points(line.intersection(edge)):
                    cuts[i].append(line.project(p))
                    banks.append(p)
    links = _ford_links(battlefield.fordable(rules), pieces, tree, tol)
    for j, end, i, foot in links:
        cuts[i].append(foot)
        banks.append(lines[j].interpolate(end))

    # One node per cluster of cut points within tol.
    points, owner = [], []
    for i, line in enumerate(lines):
        cuts[i] = sorted(set(cuts[i]))
        for d in cuts[i]:
            p = line.interpolate(d)
            points.append((p.x, p.y))
            owner.append((i, d))
    node_of: dict[tuple[int, float], int] = {}
    graph = nx.MultiGraph()
    if points:
        xy = np.array(points)
        # Points the lines share are found from each line, a rounding error apart.
        join = max(tol, 1e-9 * max(battlefield.width, battlefield.height))
        pairs = cKDTree(xy).query_pairs(join, output_type="ndarray")
        same = nx.Graph()
        same.add_nodes_from(range(len(points)))
        same.add_edges_from(map(tuple, pairs))
        for n, members in enumerate(nx.connected_components(same)):
            members = sorted(members)
            x, y = xy[members].mean(axis=0)
            graph.add_node(n, pos=(float(x), float(y)), kind="junction")
            for m in members:
                node_of[owner[m]] = n

    for i, (f, line) in enumerate(pieces):
        for d0, d1 in zip(cuts[i], cuts[i][1:], strict=False):
            u, v = node_of[(i, d0)], node_of[(i, d1)]
            if u == v and d1 - d0 <= 2 * tol:
                continue
            part = substring(line, d0, d1)
            graph.add_edge(u, v, kind=f.terrain, length=float(d1 - d0), width=f.width,
                           feature=f.label, index=f.index,
                           geometry=[tuple(map(float, c)) for c in part.coords])
    for j, end, i, foot in links:
        f, a, b = pieces[i][0], lines[j].interpolate(end), lines[i].interpolate(foot)
        if node_of[(j, end)] != node_of[(i, foot)]:
            graph.add_edge(node_of[(j, end)], node_of[(i, foot)], kind=f.terrain,
                           length=float(a.distance(b)), width=f.width, feature=f.label,
                           index=f.index, geometry=[(a.x, a.y), (b.x, b.y)])
    bank_xy = np.array([(p.x, p.y) for p in banks]).reshape(-1, 2)
    for n, data in graph.nodes(data=True):
        if bank_xy.size and np.hypot(*(bank_xy - data["pos"]).T).min() <= tol + 1e-9:
            data["kind"] = "bank"
        elif graph.degree(n) <= 1:
            data["kind"] = "end"
    battlefield._cache[key] = graph
    return graph


def _ford_links(fords: dict[int, Any], pieces: list[tuple[Feature, LineString]], tree,
                tol: float) -> list[tuple[int, float, int, float]]:
    """Where the network's lines reach a ford drawn along a river.

    Parameters
    ----------
    fords : dict of int to shapely geometry
        The fordable stretches (`Battlefield.fordable`).
    pieces : list of (Feature, LineString)
        The network's lines and their features.
    tree : shapely.STRtree
        Of the lines.
    tol : float
        How near an end must come to a stretch to reach it.

    Returns
    -------
    list of (int, float, int, float)
        ``(j, end, i, foot)``: line ``j``'s end at ``end`` along it lies on
        the stretch of ford line ``i``, whose nearest point lies ``foot``
        along it.  Ends already within ``tol`` of the ford's line join it
        as any nearly meeting lines do, and are left out.
    """
    links = []
    for i, (f, line) in enumerate(pieces):
        stretch = fords.get(f.index)
        if stretch is None:
            continue
        for j in tree.query(stretch, predicate="dwithin", distance=tol):
            other = pieces[j][1]
            if pieces[j][0] is f:
                continue
            for end, xy in ((0.0, other.coords[0]), (other.length, other.coords[-1])):
                p = Point(xy)
                if p.distance(stretch) <= tol < p.distance(line):
                    links.append((int(j), end, i, line.project(p)))
    return links


def _points(geom) -> list[Point]:
    """Points where two lines meet: points themselves, and both ends of shared stretches."""
    out = []
    for g in getattr(geom, "geoms", [geom]):
        if g.is_empty:
            continue
        if isinstance(g, Point):
            out.append(g)
        elif isinstance(g, LineString):
            out.extend((Point(g.coords[0]), Point(g.coords[-1])))
    return out


@dataclass(frozen=True)
class Region:
    """A piece of ground a unit can cross without any crossing.

    Attributes
    ----------
    id : int
        Numbered from 1 in the order the grid is scanned (top row first).
    area : float
        Square table units.
    at : tuple of float
        A point inside it (the cell nearest its centre of mass).
    """

    id: int
    area: float
    at: tuple[float, float]


@dataclass(frozen=True)
class Chokepoint:
    """A crossing whose loss would cut the battlefield apart for a unit.

    Attributes
    ----------
    feature : str
        The map feature (its label: index and id).
    kind : str
        Its terrain kind (``"bridge"``, ``"ford"``, ``"gateway"``, ...).
    at : tuple of float
        A point on the crossing (the middle of the ground it opens).
    joins : tuple of Region
        The regions it touches.
    """

    feature: str
    kind: str
    at: tuple[float, float]
    joins: tuple[Region, ...]


def chokepoints(battlefield: Battlefield, rules: Ruleset, unit: Unit
                ) -> tuple[list[Chokepoint], list[Region]]:
    """The crossings a unit cannot do without, and the regions they join.

    A crossing is a feature that opens ground the unit could not enter
    without it: a bridge or ford over a river (a ford drawn along a river
    opens its whole fordable stretch), a gateway into a building, a
    road or trail through ground closed to the unit.  The passable ground
    left when every crossing is taken away splits into regions (4-connected,
    as steps never squeeze through a blocked corner); each crossing joins the
    regions it borders.  A chokepoint is a crossing whose removal leaves the
    unit's ground in more pieces than before.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    unit : Unit

    Returns
    -------
    chokepoints : list of Chokepoint
        In map order.
    regions : list of Region
        Every region, by id.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> rules = load_rules("fantasy-warlord")
    >>> found, regions = chokepoints(load_map("maps/crossings.geojson"), rules,
    ...                              rules.unit("humans"))
    >>> [c.kind for c in found], len(regions)
    (['bridge', 'bridge', 'ford'], 4)
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    rules.check_unit(unit)
    import networkx as nx  # not at module level: both take longer to import than the engine
    from scipy import ndimage

    lay = layers(battlefield, rules)
    spec = lay.grid
    mask = unit_mask(lay, rules, unit)
    prices: dict[int, float] = {}

    def passable(bits: np.ndarray) -> np.ndarray:
        out = np.empty(bits.shape, dtype=bool)
        for b in np.unique(bits):
            if int(b) not in prices:
                kinds = kinds_in(lay.kinds, b)
                prices[int(b)] = combo_multiplier(kinds, rules, unit)
            out[bits == b] = math.isfinite(prices[int(b)])
        return out

    ground = passable(mask)
    bit = {k: np.uint64(1) << np.uint64(i) for i, k in enumerate(lay.kinds)}
    covers: dict[int, tuple] = {}

    fords = battlefield.fordable(rules)

    def cover(f: Feature) -> tuple:
        if f.index not in covers:
            covers[f.index] = _cover(spec, *ground_of(f, fords))
        return covers[f.index]

    opened: dict[int, np.ndarray] = {}
    for f in battlefield.features:
        kind = rules.terrain[f.terrain]
        if not (kind.role in ("crossing", "gateway") or kind.cancels):
            continue
        window, cells = cover(f)
        without = mask[window] & ~bit[f.terrain]
        for g in battlefield.features:  # others of its kind still cover their cells
            if g is not f and g.terrain == f.terrain and ground_of(g, fords)[0].intersects(
                    ground_of(f, fords)[0]):
                gw, gc = cover(g)
                keep = np.zeros(spec.shape, dtype=bool)
                keep[gw][gc] = True
                without[keep[window]] |= bit[f.terrain] & mask[window][keep[window]]
        lost = ground[window] & cells & ~passable(without)
        if lost.any():
            full = np.zeros(spec.shape, dtype=bool)
            full[window] = lost
            opened[f.index] = full

    land = ground.copy()
    for cells in opened.values():
        land &= ~cells
    labels, n = ndimage.label(land, structure=_FOUR)
    regions = _regions(labels, n, spec)

    graph = nx.Graph()
    graph.add_nodes_from(("region", i) for i in range(1, n + 1))
    touches: dict[int, set[int]] = {}
    for index, cells in opened.items():
        near = ndimage.binary_dilation(cells, structure=_FOUR)
        touches[index] = {int(r) for r in np.unique(labels[near & land])}
        graph.add_edges_from((("crossing", index), ("region", r)) for r in touches[index])
    for a, ca in opened.items():  # crossings that meet each other (a road onto a bridge)
        near = ndimage.binary_dilation(ca, structure=_FOUR)
        for b, cb in opened.items():
            if b > a and (near & cb).any():
                graph.add_edge(("crossing", a), ("crossing", b))

    pieces = nx.number_connected_components(graph)
    found = []
    for f in battlefield.features:
        if f.index not in opened:
            continue
        cut = graph.copy()
        cut.remove_node(("crossing", f.index))
        if nx.number_connected_components(cut) > pieces:
            rr, cc = np.nonzero(opened[f.index])
            mid = int(np.argmin((rr - rr.mean()) ** 2 + (cc - cc.mean()) ** 2))
            found.append(Chokepoint(
                feature=f.label, kind=f.terrain,
                at=spec.rc_to_xy((int(rr[mid]), int(cc[mid]))),
                joins=tuple(regions[r - 1] for r in sorted(touches[f.index])),
            ))
    return found, regions


def _round6(v) -> float:
    return round(float(v), 6)


def _regions(labels: np.ndarray, n: int, spec: GridSpec) -> list[Region]:
    """Each labelled region's area and the cell of it nearest its centre of mass."""
    from scipy import ndimage

    out = []
    for i, box in enumerate(ndimage.find_objects(labels, n), start=1):
        rr, cc = np.nonzero(labels[box] == i)
        rr, cc = rr + box[0].start, cc + box[1].start
        mid = int(np.argmin((rr - rr.mean()) ** 2 + (cc - cc.mean()) ** 2))
        out.append(Region(id=i, area=float(rr.size * spec.cell**2),
                          at=spec.rc_to_xy((int(rr[mid]), int(cc[mid])))))
    return out


@dataclass(frozen=True)
class Network:
    """A map's network and what it means for one unit (`describe`).

    Attributes
    ----------
    graph : networkx.MultiGraph
        From `network`.
    chokepoints : list of Chokepoint
    regions : list of Region
        From `chokepoints`.
    """

    graph: Any
    chokepoints: list[Chokepoint]
    regions: list[Region]

    def as_dict(self) -> dict:
        """JSON-ready form: counts, chokepoints, regions and the graph itself."""
        r6 = _round6
        return {
            "nodes": self.graph.number_of_nodes(),
            "edges": self.graph.number_of_edges(),
            "chokepoints": [
                {"at": [r6(c.at[0]), r6(c.at[1])], "kind": c.kind, "feature": c.feature,
                 "joins": [r.id for r in c.joins]}
                for c in self.chokepoints
            ],
            "regions": [
                {"id": r.id, "area": r6(r.area), "at": [r6(r.at[0]), r6(r.at[1])]}
                for r in self.regions
            ],
            "graph": {
                "nodes": [
                    {"id": n, "at": [r6(d["pos"][0]), r6(d["pos"][1])], "kind": d["kind"]}
                    for n, d in self.graph.nodes(data=True)
                ],
                "edges": [
                    {"from": u, "to": v, "kind": d["kind"], "length": r6(d["length"]),
                     "width": d["width"], "feature": d["feature"]}
                    for u, v, d in self.graph.edges(data=True)
                ],
            },
        }


def describe(battlefield: Battlefield, rules: Ruleset, unit: Unit,
             tolerance: float | None = None) -> Network:
    """`network` and `chokepoints` together, for pictures and JSON.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    unit : Unit
        The unit whose chokepoints are found (the graph is the same for all).
    tolerance : float, optional
        As for `network`: ends and crossings closer than this join; default one
        grid cell.

    Returns
    -------
    Network
        The graph, the chokepoints and the regions; ``as_dict()`` for JSON.

    Raises
    ------
    InputError
        A battlefield, rules or unit of the wrong type or not of these rules, or
        a negative tolerance.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> rules = load_rules("fantasy-warlord")
    >>> net = describe(load_map("maps/crossings.geojson"), rules, rules.unit("humans"))
    >>> d = net.as_dict()
    >>> d["nodes"], d["edges"], [c["kind"] for c in d["chokepoints"]]
    (19, 18, ['bridge', 'bridge', 'ford'])
    """
    found, regions = chokepoints(battlefield, rules, unit)
    return Network(network(battlefield, rules, tolerance), found, regions)
