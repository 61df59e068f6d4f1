"""What the ground does besides slowing movement: cover, concealment, disorder, pikes.

Each terrain kind's effects are ruleset data (``[terrain.<kind>]`` keys
``conceals``, ``cover``, ``cover_contact``, ``cover_ranks``, ``disorders``
and ``pikes``; see `engine.rules.TerrainEffects`).  Fantasy Warlord:

- **Cover**: woods and swamp Medium, scrub and fen light ("While in a fen, a
  unit receives all the combat and missile fire benefits usually experienced
  in scrub"); walls, hedges and fences only "in contact with the object ...
  Being close to it is not good enough", and "ranks three and over are not
  counted as being under cover".
- **Disorder**: "Any close order unit that charges in a wood [or fen] is
  automatically disordered"; "Any unit that charges in a jungle [or swamp]";
  "Troops charging ... across or into a ford automatically become
  disordered".  A charge is "in" terrain when any ground it covers, from its
  start to its end, is of that kind; a ford drawn along a river is ford
  ground over the whole stretch it makes fordable (`Battlefield.fordable`).
- **Pikes**: not in woods, jungle or swamp; in a fen "only ... if the pike
  unit remains stationary".

Which kinds a point stands in comes from the terrain layers (the cell holding
it); base contact with a wall, hedge or fence is measured on the map's exact
geometry.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from shapely.geometry import Point

from .._args import flag, instance, non_negative, whole
from .._args import points as path_points
from ..errors import InputError
from ..grid import segment_cells
from ..maps.battlefield import Battlefield
from ..rules.ruleset import COVERS, Ruleset
from .raster import kinds_in, layers

__all__ = ["Charge", "Effects", "charge_disorders", "terrain_effects"]

_CONTACT_TOL = 1e-9  # table units: touching, to rounding


@dataclass(frozen=True)
class Effects:
    """The effects of the ground under one position.

    Attributes
    ----------
    at : (x, y)
    terrain : tuple of str
        Kinds covering the position's cell; a kind whose cover needs base
        contact (wall, hedge, fence) only where the position touches one.
    cover : str or None
        The best cover the unit's rank gets here (`engine.rules.ruleset.COVERS`).
    cover_from : str or None
        The kind that gives it.
    conceals : float or None
        Units here are seen only from within this distance (None: not hidden).
    disorders : bool
        A charge here disorders this unit.
    pikes : bool
        Pikes may fight here.
    reasons : tuple of str
        One line per effect, quoting the kind that causes it.
    """

    at: tuple[float, float]
    terrain: tuple[str, ...]
    cover: str | None
    cover_from: str | None
    conceals: float | None
    disorders: bool
    pikes: bool
    reasons: tuple[str, ...]

    def as_dict(self) -> dict:
        """JSON-ready form."""
        return {"at": list(self.at), "terrain": list(self.terrain), "cover": self.cover,
                "cover_from": self.cover_from, "conceals": self.conceals,
                "disorders": self.disorders, "pikes": self.pikes, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Charge:
    """Whether a charge along a path ends disordered.

    Attributes
    ----------
    disordered : bool
    terrain : str or None
        The kind that disorders it.
    at : (x, y) or None
        The first point of the path on that kind (a cell centre).
    reason : str
    """

    disordered: bool
    terrain: str | None
    at: tuple[float, float] | None
    reason: str


def _kinds(battlefield: Battlefield, rules: Ruleset, rc: tuple[int, int]) -> list[str]:
    lay = layers(battlefield, rules)
    return list(kinds_in(lay.kinds, lay.mask[rc]))


def _disorders(rules: Ruleset, kind: str, close_order: bool) -> bool:
    rule = rules.terrain[kind].effects.disorders
    return rule == "any" or (rule == "close order" and close_order)


def terrain_effects(
    battlefield: Battlefield,
    rules: Ruleset,
    at: tuple[float, float],
    *,
    rank: int = 1,
    close_order: bool = True,
    stationary: bool = False,
    contact: float = 0.0,
) -> Effects:
    """Cover, concealment, disorder and pikes for a unit standing at ``at``.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    at : (x, y)
        The unit's position (the middle of its front rank), table units.
    rank : int
        Which rank asks (1 = front): cover with ``cover_ranks`` (walls, hedges,
        fences: 2) does not reach deeper ranks.
    close_order : bool
        The unit is in close order (woods and fens disorder only those).
    stationary : bool
        A pike unit that stays put (pikes fight in a fen only then).
    contact : float
        How near a wall, hedge or fence counts as base contact, beyond
        touching it (default 0: touching).

    Returns
    -------
    Effects

    Raises
    ------
    InputError
        ``at`` is off the table, or a bad ``rank`` or ``contact``.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> bf = load_map("maps/demo.geojson")
    >>> e = terrain_effects(bf, load_rules("fantasy-warlord"), (32.5, 48.5))
    >>> e.terrain, e.cover, e.conceals, e.disorders, e.pikes
    (('woods',), 'medium', 5.0, True, False)
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    close_order = flag("close_order", close_order)
    stationary = flag("stationary", stationary)
    if not whole(rank) or rank < 1:
        raise InputError(f"rank must be a whole number >= 1, got {rank!r}")
    non_negative("contact", contact)
    rc = battlefield.grid.xy_to_rc(at)
    x, y = float(at[0]), float(at[1])
    kinds = [k for k in _kinds(battlefield, rules, rc)
             if not rules.terrain[k].effects.cover_contact]
    point = Point(x, y)
    for f in battlefield.features:
        if (rules.terrain[f.terrain].effects.cover_contact and f.terrain not in kinds
                and f.area.distance(point) <= contact + _CONTACT_TOL):
            kinds.append(f.terrain)
    u = battlefield.units
    reasons = []
    cover, cover_from = None, None
    for k in kinds:
        e = rules.terrain[k].effects
        if e.cover is None:
            continue
        if e.cover_ranks is not None and rank > e.cover_ranks:
            reasons.append(f"no cover from {k} for rank {rank}: only the first {e.cover_ranks} "
                           "ranks are under cover")
            continue
        if cover is None or COVERS.index(e.cover) > COVERS.index(cover):
            cover, cover_from = e.cover, k
    if cover is not None:
        touch = rules.terrain[cover_from].effects.cover_contact
        reasons.append(f"{cover} cover from {cover_from}" + (" (in base contact)" * touch))
    hiding = [(rules.terrain[k].effects.conceals, k) for k in kinds
              if rules.terrain[k].effects.conceals is not None]
    conceals = min(hiding)[0] if hiding else None
    if hiding:
        d, k = min(hiding)
        reasons.append(f"concealed in {k}: seen only from within {d:g} {u}")
    disorders = [k for k in kinds if _disorders(rules, k, close_order)]
    for k in disorders:
        who = "any unit" if rules.terrain[k].effects.disorders == "any" else "a close order unit"
        reasons.append(f"{who} charging in {k} is disordered")
    pikes = True
    for k in kinds:
        rule = rules.terrain[k].effects.pikes
        if rule == "no" or (rule == "stationary" and not stationary):
            pikes = False
            when = "" if rule == "no" else " unless the pike unit stays stationary"
            reasons.append(f"pikes cannot fight in {k}{when}")
    return Effects((x, y), tuple(kinds), cover, cover_from, conceals, bool(disorders), pikes,
                   tuple(reasons))


def charge_disorders(
    battlefield: Battlefield,
    rules: Ruleset,
    path: list[tuple[float, float]],
    *,
    close_order: bool = True,
) -> Charge:
    """Does a charge along ``path`` disorder the unit?

    The charge is in every cell its straight legs cross, from the start to
    the end, so crossing a ford or ending in a wood counts.

    Parameters
    ----------
    battlefield : Battlefield
    rules : Ruleset
    path : list of (x, y)
        The charge's start, any turns, and its end (at least one point).
    close_order : bool
        The unit is in close order.

    Returns
    -------
    Charge

    Raises
    ------
    InputError
        An empty path or a point off the table.

    Examples
    --------
    >>> from engine import load_map, load_rules
    >>> bf = load_map("maps/demo.geojson")
    >>> c = charge_disorders(bf, load_rules("fantasy-warlord"), [(20, 40), (40, 40)])
    >>> c.disordered, c.terrain
    (True, 'woods')
    """
    instance("battlefield", battlefield, Battlefield, "load_map")
    instance("rules", rules, Ruleset, "load_rules")
    close_order = flag("close_order", close_order)
    spec = battlefield.grid
    points = path_points("path", path, spec.xy_to_rc)
    if not points:
        raise InputError("a charge path needs at least one point")
    cells = [spec.xy_to_rc(p) for p in points]
    ordered = [cells[0]]
    for (a, b), end in zip(itertools.pairwise(points), cells[1:], strict=True):
        pieces, _ = segment_cells((a[0] / spec.cell, a[1] / spec.cell),
                                  (b[0] / spec.cell, b[1] / spec.cell))
        rows, cols = spec.shape
        ordered += [(min(r, rows - 1), min(c, cols - 1)) for r, c, _, _ in pieces]
        ordered.append(end)
    for rc in ordered:
        for k in _kinds(battlefield, rules, rc):
            if _disorders(rules, k, close_order):
                x, y = spec.rc_to_xy(rc)
                who = "any unit" if rules.terrain[k].effects.disorders == "any" else \
                    "a close order unit"
                return Charge(True, k, (x, y),
                              f"disordered: {who} charging in {k} at ({x:.2f}, {y:.2f})")
    order = "close order" if close_order else "open order"
    return Charge(False, None, None, f"not disordered: no ground on the way disorders a "
                  f"{order} unit")
