"""Rulesets as data: terrain kinds, layers, races and their multipliers (TOML).

A rules file has these tables (the README's "Rules files" has a full example;
the shipped files in ``engine/rules/`` are commented throughout):

``[ruleset]``
    ``name``, ``units`` (``"cm"`` or ``"in"``), ``rank_depth`` (table units per
    rank) and optionally ``break_formation_distance``, ``sight_height`` (how
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
    ``frontage_figures`` figures), for `engine.checks.manoeuvre`.
``[layers]``
    Each thing a profile sheet prices, with its class: ``"area"``,
    ``"obstacle"``, ``"slope"`` or ``"water"``.
``[terrain.<kind>]``
    ``layers`` (list of layer names; composites list several, which multiply),
    ``role`` (``"ground"`` default, ``"river"``, ``"crossing"``, ``"building"``,
    ``"gateway"`` or ``"hill"``), ``cancels`` (layer classes it cancels, e.g.
    a road cancels ``"area"``), ``impassable`` (bool), ``closed_to`` (troop
    types it gives nothing to), ``passage`` (bool: a narrow way),
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
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ._args import flag, real, whole
from .errors import InputError, RulesError

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
    "load_rules",
    "shipped_rulesets",
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
    """What a terrain kind does besides slowing movement (see `engine.effects`).

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
            Number of ranks; depth = ranks x rank depth.
        depth : float, optional
            Footprint depth in table units; overrides ``ranks``.
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
            move = spec["move"] * (self.march if march else 1.0)
            if march and not math.isfinite(move):
                raise InputError(f"{self.name}'s march multiplier {self.march:g} makes "
                                 f"{race}'s move of {spec['move']:g} infinite")
        if not (real(move) and math.isfinite(move) and move >= 0):
            raise InputError(f"move must be a finite number >= 0, got {move!r}")
        if depth is None:
            if ranks is None:
                ranks = spec.get("ranks", 1)
            if not whole(ranks) or not 1 <= ranks <= _MAX_RANKS:
                raise InputError(f"ranks must be a whole number from 1 to {_MAX_RANKS}, "
                                 f"got {ranks!r:.40}")
            depth = ranks * spec.get("rank_depth", self.rank_depth)
        if not (real(depth) and math.isfinite(depth) and depth >= 0):
            raise InputError(f"depth must be a finite number >= 0, got {depth!r}")
        figure_width = spec.get("figure_width", self.figure_width)
        if frontage is None:
            frontage = spec.get("frontage", self.frontage)
        if not (real(frontage) and math.isfinite(frontage) and frontage >= figure_width):
            raise InputError(
                f"frontage must be a finite number >= the figure width {figure_width:g}, "
                f"got {frontage!r}"
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


def shipped_rulesets() -> list[str]:
    """Names of the rulesets shipped with the engine.

    >>> "fantasy-warlord" in shipped_rulesets()
    True
    """
    folder = resources.files("engine") / "rules"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_rules(name_or_path: str | Path) -> Ruleset:
    """Load and validate a ruleset: a shipped name or a path to a TOML file.

    Parameters
    ----------
    name_or_path : str or Path
        ``"fantasy-warlord"`` (see `shipped_rulesets`) or a file path.

    Returns
    -------
    Ruleset

    Raises
    ------
    RulesError
        The file is missing, not TOML, or breaks the schema; the message
        names the table, key and what is wrong.

    Examples
    --------
    >>> rules = load_rules("fantasy-warlord")
    >>> rules.terrain["jungle"].layers
    ('woods', 'scrub')
    """
    name = str(name_or_path)
    if name in shipped_rulesets():
        text = (resources.files("engine") / "rules" / f"{name}.toml").read_text("utf-8")
        source = name
    else:
        path = Path(name)
        if not path.is_file():
            shipped = ", ".join(shipped_rulesets())
            raise RulesError(f"no rules file {name!r} (shipped rulesets: {shipped})")
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RulesError(f"cannot read rules file {name}: {exc}") from None
        source = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise RulesError(f"{source}: nested too deeply to be rules") from None
    return _parse(data, source)


def _parse(data: dict, source: str) -> Ruleset:
    def fail(msg: str) -> RulesError:
        return RulesError(f"{source}: {msg}")

    def table(obj: Any, where: str) -> dict:
        if not isinstance(obj, dict):
            raise fail(f"{where} must be a table")
        return obj

    def check_keys(obj: dict, where: str, required: set[str], optional: set[str]) -> None:
        unknown = set(obj) - required - optional
        if unknown:
            allowed = ", ".join(sorted(required | optional))
            raise fail(f"unknown key {sorted(unknown)[0]!r} in {where} (allowed: {allowed})")
        missing = required - set(obj)
        if missing:
            raise fail(f"missing value {sorted(missing)[0]!r} in {where}")

    def number(value: Any, where: str, minimum: float = 0.0, strict: bool = False) -> float:
        ok = real(value)
        if not ok or not math.isfinite(value) or value < minimum or (strict and value == minimum):
            sign = ">" if strict else ">="
            raise fail(f"{where} must be a finite number {sign} {minimum:g}, got {value!r}")
        return float(value)

    def multiplier(value: Any, where: str) -> float | Rate:
        if value == "impassable":
            return math.inf
        if isinstance(value, dict):
            return rate(value, where)
        ok = real(value)
        if not ok or math.isnan(value) or value < 1:
            raise fail(f"{where} must be a number >= 1, \"impassable\" or a table "
                       f"{{ multiplier, quantum }} or {{ fraction, round_to }}, got {value!r}")
        return float(value)

    def rate(value: dict, where: str) -> Rate:
        if "fraction" in value:
            check_keys(value, where, {"fraction"}, {"round_to"})
            fraction = number(value["fraction"], f"{where} fraction", strict=True)
            if fraction > 1:
                raise fail(f"{where} fraction must be <= 1, got {fraction:g}")
            return Rate(fraction=fraction,
                        round_to=number(value.get("round_to", 0.0), f"{where} round_to"))
        check_keys(value, where, {"multiplier", "quantum"}, set())
        m = multiplier(value["multiplier"], f"{where} multiplier")
        if not isinstance(m, float) or math.isinf(m):
            raise fail(f"{where} multiplier must be a number >= 1")
        quantum = number(value["quantum"], f"{where} quantum", strict=True)
        if quantum > _MAX_QUANTUM:  # a graze of 1e-9 quanta is free: here, of 1e-6 units
            raise fail(f"{where} quantum must be <= {_MAX_QUANTUM:g} table units, "
                       f"got {quantum:g}")
        return Rate(multiplier=m, quantum=quantum)

    def names(value: Any, where: str, known: dict | tuple, what: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(f"{where} must be a list of {what} names")
        for v in value:
            if v not in known:
                raise fail(f"{where} names undefined {what} {v!r}")
        return tuple(value)

    check_keys(data, "the file", {"ruleset", "layers", "terrain", "defaults", "races"},
               {"manoeuvres"})
    head = table(data["ruleset"], "[ruleset]")
    check_keys(
        head, "[ruleset]", {"name", "units", "rank_depth"},
        {"break_formation_distance", "troops", "frontage", "figure_width", "formation_change",
         "march", "irregular_in", "sight_height", "charge_bonus", "combine"},
    )
    if not isinstance(head["name"], str) or not head["name"].strip():
        raise fail(f"[ruleset] name must be a non-empty string, got {head['name']!r}")
    if head["units"] not in ("cm", "in"):
        raise fail(f"[ruleset] units must be \"cm\" or \"in\", got {head['units']!r}")
    rank_depth = number(head["rank_depth"], "[ruleset] rank_depth")
    bfd = head.get("break_formation_distance")
    if bfd is not None:
        bfd = number(bfd, "[ruleset] break_formation_distance")
    troops = head.get("troops", ["infantry"])
    if (not isinstance(troops, list) or not troops
            or not all(isinstance(t, str) and t for t in troops)):
        raise fail(f"[ruleset] troops must be a non-empty list of names, got {troops!r}")
    frontage = number(head.get("frontage", 0.0), "[ruleset] frontage")
    figure_width = number(head.get("figure_width", 0.0), "[ruleset] figure_width")
    if frontage < figure_width:
        raise fail(f"[ruleset] frontage {frontage:g} is narrower than figure_width "
                   f"{figure_width:g}")
    formation_change = number(head.get("formation_change", 0.0), "[ruleset] formation_change")
    march = head.get("march")
    if march is not None:
        march = number(march, "[ruleset] march", minimum=1.0)
    irregular_in = names(head.get("irregular_in", []), "[ruleset] irregular_in", LAYER_CLASSES,
                         "class")
    combine = head.get("combine", "product")
    if combine not in COMBINES:
        raise fail(f"[ruleset] combine must be one of {', '.join(COMBINES)}, got {combine!r}")
    sight_height = number(head.get("sight_height", 0.0), "[ruleset] sight_height")
    charge_bonus = number(head.get("charge_bonus", 0.0), "[ruleset] charge_bonus")

    layers = table(data["layers"], "[layers]")
    for lname, cls in layers.items():
        if cls not in LAYER_CLASSES:
            raise fail(f"[layers] {lname} has class {cls!r}; valid: {', '.join(LAYER_CLASSES)}")

    terrain: dict[str, TerrainKind] = {}
    for kname, spec in table(data["terrain"], "[terrain]").items():
        where = f"[terrain.{kname!r}]" if " " in kname else f"[terrain.{kname}]"
        spec = table(spec, where)
        check_keys(
            spec, where, set(),
            {"layers", "role", "cancels", "impassable", "steep_layers", "closed_to", "passage",
             "uphill_layers", "crossing_cost", *_EFFECT_KEYS},
        )
        role = spec.get("role", "ground")
        if role not in ROLES:
            raise fail(f"{where} role {role!r} is not one of {', '.join(ROLES)}")
        impassable = spec.get("impassable", False)
        if not isinstance(impassable, bool):
            raise fail(f"{where} impassable must be true or false")
        for key in ("steep_layers", "uphill_layers"):
            if key in spec and role != "hill":
                raise fail(f"{where} {key} is only for role \"hill\"")
        passage = spec.get("passage", False)
        if not isinstance(passage, bool):
            raise fail(f"{where} passage must be true or false")
        terrain[kname] = TerrainKind(
            name=kname,
            layers=names(spec.get("layers", []), f"{where} layers", layers, "layer"),
            role=role,
            cancels=names(spec.get("cancels", []), f"{where} cancels", LAYER_CLASSES, "class"),
            impassable=impassable,
            steep_layers=names(
                spec.get("steep_layers", []), f"{where} steep_layers", layers, "layer"
            ),
            closed_to=names(spec.get("closed_to", []), f"{where} closed_to", tuple(troops),
                            "troop type"),
            passage=passage,
            uphill_layers=names(
                spec.get("uphill_layers", []), f"{where} uphill_layers", layers, "layer"
            ),
            crossing_cost=number(spec.get("crossing_cost", 0.0), f"{where} crossing_cost"),
            effects=_effects(spec, where, fail),
        )
    if not terrain:
        raise fail("[terrain] defines no terrain kinds")

    defaults_table = table(data["defaults"], "[defaults]")
    check_keys(defaults_table, "[defaults]", {"multipliers"}, set())
    defaults_spec = table(defaults_table["multipliers"], "[defaults.multipliers]")
    defaults = {}
    for lname in layers:
        if lname not in defaults_spec:
            raise fail(f"missing value {lname!r} in [defaults.multipliers] (every layer needs one)")
    for lname, value in defaults_spec.items():
        if lname not in layers:
            raise fail(f"[defaults.multipliers] names undefined layer {lname!r}")
        defaults[lname] = multiplier(value, f"[defaults.multipliers] {lname}")

    races: dict[str, dict[str, Any]] = {}
    for rname, spec in table(data["races"], "[races]").items():
        where = f"[races.{rname!r}]" if " " in rname else f"[races.{rname}]"
        spec = table(spec, where)
        check_keys(
            spec, where, {"move"},
            {"ranks", "rank_depth", "flying", "swimming", "multipliers", "troop", "frontage",
             "figure_width", "charge_bonus"},
        )
        race: dict[str, Any] = {"move": number(spec["move"], f"{where} move")}
        if "ranks" in spec:
            ranks = spec["ranks"]
            if not whole(ranks) or ranks < 1:
                raise fail(f"{where} ranks must be a whole number >= 1, got {ranks!r}")
            race["ranks"] = ranks
        if "rank_depth" in spec:
            race["rank_depth"] = number(spec["rank_depth"], f"{where} rank_depth")
        if "charge_bonus" in spec:
            race["charge_bonus"] = number(spec["charge_bonus"], f"{where} charge_bonus")
        if "troop" in spec:
            if spec["troop"] not in troops:
                raise fail(f"{where} troop {spec['troop']!r} is not one of [ruleset] troops "
                           f"({', '.join(troops)})")
            race["troop"] = spec["troop"]
        for size in ("frontage", "figure_width"):
            if size in spec:
                race[size] = number(spec[size], f"{where} {size}")
        if race.get("frontage", frontage) < race.get("figure_width", figure_width):
            raise fail(f"{where} frontage is narrower than its figure width")
        for key in ("flying", "swimming"):
            if key in spec:
                if not isinstance(spec[key], bool):
                    raise fail(f"{where} {key} must be true or false")
                race[key] = spec[key]
        mults = table(spec.get("multipliers", {}), f"{where} multipliers")
        race["multipliers"] = {}
        for lname, value in mults.items():
            if lname not in layers:
                raise fail(f"{where} multipliers names undefined layer {lname!r}")
            race["multipliers"][lname] = multiplier(value, f"{where} multipliers.{lname}")
        races[rname] = race
    if not races:
        raise fail("[races] defines no races")
    manoeuvres = table(data.get("manoeuvres", {}), "[manoeuvres]")
    check_keys(manoeuvres, "[manoeuvres]", set(), {"reform", "face", "frontage",
                                                   "frontage_figures"})
    manoeuvres = {k: number(v, f"[manoeuvres] {k}", strict=k == "frontage_figures")
                  for k, v in manoeuvres.items()}
    if manoeuvres.get("frontage_figures", 1.0) % 1:
        raise fail("[manoeuvres] frontage_figures must be a whole number of figures, got "
                   f"{manoeuvres['frontage_figures']:g}")

    return Ruleset(
        name=str(head["name"]),
        units=head["units"],
        rank_depth=rank_depth,
        break_formation_distance=bfd,
        troops=tuple(troops),
        frontage=frontage,
        figure_width=figure_width,
        formation_change=formation_change,
        layers=dict(layers),
        terrain=terrain,
        defaults=defaults,
        races=races,
        source=source,
        march=march,
        irregular_in=irregular_in,
        combine=combine,
        manoeuvres=manoeuvres,
        sight_height=sight_height,
        charge_bonus=charge_bonus,
    )


def _effects(spec: dict, where: str, fail) -> TerrainEffects:
    """The optional effect keys of one ``[terrain.<kind>]`` table, validated."""

    def choice(key: str, valid: tuple[str, ...]) -> str | None:
        value = spec.get(key)
        if value is not None and value not in valid:
            options = ", ".join(f'"{v}"' for v in valid)
            raise fail(f"{where} {key} must be one of {options}, got {value!r}")
        return value

    conceals = spec.get("conceals")
    if conceals is not None and not (
        real(conceals) and math.isfinite(conceals) and conceals > 0
    ):
        raise fail(f"{where} conceals must be a distance > 0 in table units, got {conceals!r}")
    contact = spec.get("cover_contact", False)
    if not isinstance(contact, bool):
        raise fail(f"{where} cover_contact must be true or false, got {contact!r}")
    ranks = spec.get("cover_ranks")
    if ranks is not None and (not whole(ranks) or ranks < 1):
        raise fail(f"{where} cover_ranks must be a whole number >= 1, got {ranks!r}")
    cover = choice("cover", COVERS)
    if cover is None and (contact or ranks is not None):
        raise fail(f"{where} cover_contact and cover_ranks need a cover")
    return TerrainEffects(
        conceals=None if conceals is None else float(conceals),
        cover=cover,
        cover_contact=contact,
        cover_ranks=ranks,
        disorders=choice("disorders", DISORDERS),
        pikes=choice("pikes", PIKES) or "yes",
    )
