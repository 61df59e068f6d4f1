"""Rulesets as data: terrain kinds, layers, races and their multipliers (TOML).

A rules file has these tables (docs/rules.md has a full example;
the shipped files in ``engine/rules/`` are commented throughout):

``[ruleset]``
    ``name``, ``units`` (``"cm"`` or ``"in"``), ``rank_depth`` (table units per
    rank) and optionally ``default_depth`` (the footprint depth of a unit given
    neither ranks nor a depth, where its race names no ranks; default: one
    rank), ``break_formation_distance``, ``sight_height`` (how
    far above the ground a figure sees and is seen, for lines of sight over
    hills; default 0), ``troops`` (troop type names), ``figure_width`` and
    ``frontage`` (default sizes), ``formation_change`` (flat cost of narrowing
    to pass a passage), ``march`` (march move multiplier; open ground only)
    ``irregular_in`` (layer classes a regular unit may not enter),
    ``combine`` (``"product"``, default: a cell's layers multiply; ``"worst"``:
    the costliest applies, climbing included) and ``charge_bonus`` (distance
    a charging unit may move beyond its allowance; default 0).
``[manoeuvres]`` (optional)
    Costs on clear ground of ``reform``, ``face`` and ``frontage`` (per
    ``frontage_figures`` figures), for `engine.ai.checks.manoeuvre`.
``[layers]``
    Each thing a profile sheet prices, with its class: ``"area"``,
    ``"obstacle"``, ``"slope"`` or ``"water"``.
``[terrain.<kind>]``
    ``layers`` (list of layer names; composites list several, which multiply),
    ``role`` (``"ground"`` default, ``"river"``, ``"crossing"``, ``"building"``,
    ``"gateway"`` or ``"hill"``), ``cancels`` (layer classes it cancels, e.g.
    a road cancels ``"area"``), ``impassable`` (bool), ``closed_to`` (troop
    types it gives nothing to), ``passage`` (bool: a narrow way),
    ``narrowing`` (bool, default true: a unit wider than the passage pays
    ``formation_change`` to enter it),
    ``crossing_cost`` (flat cost per crossing) and, for hills,
    ``uphill_layers`` (priced uphill on every hill) and ``steep_layers``
    (priced uphill on hills marked steep).  Optional effects besides movement
    (`TerrainEffects`): ``conceals`` (a distance > 0: units inside are seen
    only from within it and see no farther through it), ``cover``
    (``"light"``, ``"medium"`` or ``"heavy"``), ``cover_contact`` (bool: cover
    only in base contact), ``cover_ranks`` (cover only for this many ranks
    from the front), ``disorders`` (a charge in it disorders ``"close
    order"`` units or ``"any"`` unit) and ``pikes`` (``"yes"``, ``"no"`` or
    ``"stationary"``).
``[defaults.multipliers]``
    A price for every layer: what a race pays unless it says otherwise.  A
    number >= 1, ``"impassable"``, ``{ multiplier, quantum }`` (charged per
    started quantum) or ``{ fraction, round_to }`` (a fraction of the move,
    rounded; see `Rate`).
``[races.<name>]``
    ``move`` (the allowance), optional ``ranks``, ``rank_depth``, ``flying``,
    ``swimming``, ``troop``, ``frontage``, ``figure_width``, ``charge_bonus``
    (overrides the ruleset's) and ``multipliers`` (layer -> price, as in the
    defaults).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .._args import finite, flag, non_negative, shown, whole
from ..errors import InputError, RulesError

__all__ = [
    "COVERS",
    "DISORDERS",
    "LAYER_CLASSES",
    "PIKES",
    "ROLES",
    "Rate",
    "Ruleset",
    "TerrainEffects",
    "TerrainKind",
    "Unit",
]

LAYER_CLASSES = ("area", "obstacle", "slope", "water")
# How a cell's layers combine: multiply (Fantasy Warlord's cumulative modifiers)
# or take the worst (the Reglamento's categories).
COMBINES = ("product", "worst")
# More ranks than this is no unit (and 10**400 of them overflow a float).
_MAX_RANKS = 1_000_000
# A quantum larger than this is larger than any table ("per started 2 inches").
_MAX_QUANTUM = 1000.0
ROLES = ("ground", "river", "crossing", "building", "gateway", "hill")
COVERS = ("light", "medium", "heavy")  # weakest first
DISORDERS = ("close order", "any")
PIKES = ("yes", "no", "stationary")
_EFFECT_KEYS = ("conceals", "cover", "cover_contact", "cover_ranks", "disorders", "pikes")


@dataclass(frozen=True)
class TerrainEffects:
    """What a terrain kind does besides slowing movement (see `engine.terrain.effects`).

    Attributes
    ----------
    conceals : float or None
        Units inside are seen only from within this distance, and see no
        farther through it (None: the kind hides nobody).
    cover : str or None
        One of `COVERS`, or None.
    cover_contact : bool
        The cover counts only for units in base contact with the feature.
    cover_ranks : int or None
        The cover counts only for this many ranks from the front.
    disorders : str or None
        A charge in it disorders ``"close order"`` units or ``"any"`` unit.
    pikes : str
        ``"yes"``, ``"no"`` or ``"stationary"`` (only a pike unit that stays put).
    """

    conceals: float | None = None
    cover: str | None = None
    cover_contact: bool = False
    cover_ranks: int | None = None
    disorders: str | None = None
    pikes: str = "yes"


@dataclass(frozen=True)
class TerrainKind:
    """One terrain kind a map may name (``properties.terrain``)."""

    name: str
    layers: tuple[str, ...] = ()
    role: str = "ground"
    cancels: tuple[str, ...] = ()
    impassable: bool = False
    steep_layers: tuple[str, ...] = ()
    closed_to: tuple[str, ...] = ()
    passage: bool = False
    narrowing: bool = True
    uphill_layers: tuple[str, ...] = ()
    crossing_cost: float = 0.0
    effects: TerrainEffects = TerrainEffects()


@dataclass(frozen=True)
class Rate:
    """A layer's price when it is not a plain multiplier.

    Either ``multiplier`` charged per started ``quantum`` of distance
    (Battlesystem: "3" per 2" or fraction of 2"" is 1.5 per quantum 2), or a
    ``fraction`` of the move rounded to the nearest ``round_to``, halves up
    (the Reglamento's quarter move: 15 / 4 = 3.75 -> 4 cm): the multiplier is
    then the move over that rounded distance.
    """

    multiplier: float | None = None
    quantum: float | None = None
    fraction: float | None = None
    round_to: float | None = None

    def resolve(self, move: float) -> float:
        """The multiplier for a unit with this ``move``."""
        if self.fraction is None:
            return self.multiplier
        step = self.round_to or 0.0
        reach = move * self.fraction
        if step > 0:
            reach = math.floor(reach / step + 0.5 + 1e-9) * step
        if reach <= 0:
            return math.inf if move > 0 else 1.0
        return move / reach


@dataclass(frozen=True)
class Unit:
    """A unit profile resolved against a ruleset: what the searches price.

    Attributes
    ----------
    race : str
        Race or profile name as the rules name it.
    move : float
        Allowance per turn in table units.
    depth : float
        Footprint depth ``D`` (ranks x rank depth) in table units.
    flying, swimming : bool
        Capabilities.
    multipliers : dict
        Layer name -> multiplier (``math.inf`` for impassable).
    troop : str
        Troop type (one of the ruleset's ``troops``): terrain kinds may be
        closed to it (``closed_to``).
    frontage : float
        Width of the unit's front in table units: a passage narrower than this
        costs a formation change to enter.
    figure_width : float
        Width of one figure: a passage narrower than this is closed to the unit.
    quanta : dict
        Layer name -> quantum: the layer is charged per started quantum of
        distance (`Rate`).
    march : bool
        A march move: the ruleset's march allowance, open ground only.
    formation : str
        ``"irregular"``, or ``"regular"``: kept out of the layer classes the
        ruleset reserves for irregular formation (``irregular_in``).
    charge_bonus : float
        Extra distance a charge may cover beyond ``move`` (Battlesystem's
        charge bonus; 0 where the rules give none).  Not part of `key`: it
        changes no cost, only how far a charge reaches.
    """

    race: str
    move: float
    depth: float
    flying: bool = False
    swimming: bool = False
    troop: str = "infantry"
    frontage: float = 0.0
    figure_width: float = 0.0
    multipliers: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    quanta: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    march: bool = False
    formation: str = "irregular"
    charge_bonus: float = 0.0

    @property
    def key(self) -> tuple:
        """Everything that changes a cost grid, hashable (for caching)."""
        return (
            self.race,
            self.depth,
            self.flying,
            self.swimming,
            self.troop,
            self.frontage,
            self.figure_width,
            tuple(sorted(self.multipliers.items())),
            tuple(sorted(self.quanta.items())),
        )


@dataclass(frozen=True)
class Ruleset:
    """A loaded, validated rules file."""

    name: str
    units: str
    rank_depth: float
    default_depth: float | None
    break_formation_distance: float | None
    troops: tuple[str, ...]
    frontage: float
    figure_width: float
    formation_change: float
    layers: dict[str, str]
    terrain: dict[str, TerrainKind]
    defaults: dict[str, float | Rate]
    races: dict[str, dict[str, Any]]
    source: str
    march: float | None = None
    irregular_in: tuple[str, ...] = ()
    combine: str = "product"
    manoeuvres: dict[str, float] = field(default_factory=dict)
    sight_height: float = 0.0
    charge_bonus: float = 0.0

    @property
    def default_race(self) -> str:
        """The race a question that names none is asked for: the first in the rules."""
        return next(iter(self.races))

    def check_unit(self, unit: Unit) -> None:
        """`InputError` unless ``unit`` is one of this ruleset's (made by `unit`)."""
        if not isinstance(unit, Unit) or set(unit.multipliers) != set(self.layers):
            raise InputError(f"{getattr(unit, 'race', unit)!r} is not a unit of {self.name}: "
                             "make it with that ruleset's unit()")

    def unit(
        self,
        race: str,
        *,
        move: float | None = None,
        ranks: int | None = None,
        depth: float | None = None,
        frontage: float | None = None,
        march: bool = False,
        formation: str = "irregular",
    ) -> Unit:
        """Resolve a race into a `Unit`, with optional overrides.

        Parameters
        ----------
        race : str
            A race named in the rules.
        move : float, optional
            Allowance; defaults to the race's ``move``.
        ranks : int, optional
            Number of ranks; depth = ranks x rank depth.  Without ranks or a
            depth: the race's ranks, else the ruleset's ``default_depth``
            where it has one (Battlesystem: 0, a point), else one rank.
        depth : float, optional
            Footprint depth in table units (instead of ``ranks``: give one, not
            both).
        frontage : float, optional
            Width of the unit's front; defaults to the race's ``frontage``,
            else the ruleset's.
        march : bool
            A march move: the move times the ruleset's ``march`` (unless
            ``move`` is given), and every layer impassable (open ground only;
            a road still cancels what it cancels).
        formation : str
            ``"irregular"`` (default) or ``"regular"``: a regular unit may not
            enter the layer classes in the ruleset's ``irregular_in``.

        Examples
        --------
        >>> from engine import load_rules
        >>> rules = load_rules("fantasy-warlord")
        >>> rules.unit("humans", ranks=2).depth
        4.0
        >>> rules.unit("wood elves").multipliers["woods"]
        1.25
        """
        if not isinstance(race, str) or race not in self.races:
            known = ", ".join(sorted(self.races))
            raise RulesError(f"unknown race {race!r} in {self.name}; known races: {known}")
        march = flag("march", march)
        if march and self.march is None:
            raise InputError(f"{self.name} has no march moves ([ruleset] march)")
        if formation not in ("irregular", "regular"):
            raise InputError(f"formation must be 'irregular' or 'regular', got {formation!r}")
        spec = self.races[race]
        if move is None:
            move = spec["move"] * (self.march if march else 1.0)  # each at most 1e9
        non_negative("move", move)
        if depth is not None and ranks is not None:
            raise InputError(f"give ranks or depth, not both (got ranks {shown(ranks)} and depth "
                             f"{shown(depth)})")
        if depth is None and ranks is None and "ranks" not in spec:
            depth = self.default_depth
        if depth is None:
            if ranks is None:
                ranks = spec.get("ranks", 1)
            if not whole(ranks) or not 1 <= ranks <= _MAX_RANKS:
                raise InputError(f"ranks must be a whole number from 1 to {_MAX_RANKS}, "
                                 f"got {shown(ranks)}")
            depth = ranks * spec.get("rank_depth", self.rank_depth)
        non_negative("depth", depth)
        figure_width = spec.get("figure_width", self.figure_width)
        if frontage is None:
            frontage = spec.get("frontage", self.frontage)
        if not (finite(frontage) and frontage >= figure_width):
            raise InputError(
                f"frontage must be a finite number >= the figure width {figure_width:g}, "
                f"got {shown(frontage)}"
            )
        rates = dict(self.defaults)
        rates.update(spec.get("multipliers", {}))
        multipliers, quanta = {}, {}
        for name, rate in rates.items():
            if isinstance(rate, Rate):
                multipliers[name] = rate.resolve(float(move))
                if rate.quantum:
                    quanta[name] = rate.quantum
            else:
                multipliers[name] = rate
            if march or (formation == "regular" and self.layers[name] in self.irregular_in):
                multipliers[name] = math.inf
        return Unit(
            race=race,
            move=float(move),
            depth=float(depth),
            flying=bool(spec.get("flying", False)),
            swimming=bool(spec.get("swimming", False)),
            troop=spec.get("troop", self.troops[0]),
            frontage=float(frontage),
            figure_width=float(figure_width),
            multipliers=multipliers,
            quanta=quanta,
            march=march,
            formation=formation,
            charge_bonus=float(spec.get("charge_bonus", self.charge_bonus)),
        )
