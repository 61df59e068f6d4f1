"""Rulesets as data: terrain kinds, layers, races and their multipliers (TOML).

A rules file has these tables (see ``engine/rules/fantasy-warlord.toml``):

``[ruleset]``
    ``name``, ``units`` (``"cm"`` or ``"in"``), ``rank_depth`` (table units per
    rank) and optionally ``break_formation_distance`` and ``sight_height`` (how
    far above the ground a figure sees and is seen, for lines of sight over
    hills; default 0).
``[layers]``
    Each thing a profile sheet prices, with its class: ``"area"``,
    ``"obstacle"``, ``"slope"`` or ``"water"``.
``[terrain.<kind>]``
    ``layers`` (list of layer names; composites list several, which multiply),
    ``role`` (``"ground"`` default, ``"river"``, ``"crossing"``, ``"building"``,
    ``"gateway"`` or ``"hill"``), ``cancels`` (layer classes it cancels, e.g.
    a road cancels ``"area"``), ``impassable`` (bool) and, for hills,
    ``steep_layers`` (priced uphill only, on hills marked steep).  Optional
    effects besides movement (`TerrainEffects`): ``conceals`` (a distance > 0:
    units inside are seen only from within it and see no farther through it),
    ``cover`` (``"light"``, ``"medium"`` or ``"heavy"``), ``cover_contact``
    (bool: cover only in base contact), ``cover_ranks`` (cover only for this
    many ranks from the front), ``disorders`` (a charge in it disorders
    ``"close order"`` units or ``"any"`` unit) and ``pikes`` (``"yes"``,
    ``"no"`` or ``"stationary"``).
``[defaults.multipliers]``
    A multiplier for every layer: what a race pays unless it says otherwise.
``[races.<name>]``
    ``move`` (the allowance), optional ``ranks``, ``rank_depth``, ``flying``,
    ``swimming`` and ``multipliers`` (layer -> number >= 1 or
    ``"impassable"``).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import InputError, RulesError

__all__ = [
    "COVERS",
    "DISORDERS",
    "LAYER_CLASSES",
    "PIKES",
    "ROLES",
    "Ruleset",
    "TerrainEffects",
    "TerrainKind",
    "Unit",
    "load_rules",
    "shipped_rulesets",
]

LAYER_CLASSES = ("area", "obstacle", "slope", "water")
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
    effects: TerrainEffects = TerrainEffects()


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
    """

    race: str
    move: float
    depth: float
    flying: bool = False
    swimming: bool = False
    multipliers: dict[str, float] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> tuple:
        """Everything that changes a cost grid, hashable (for caching)."""
        return (
            self.race,
            self.depth,
            self.flying,
            self.swimming,
            tuple(sorted(self.multipliers.items())),
        )


@dataclass(frozen=True)
class Ruleset:
    """A loaded, validated rules file."""

    name: str
    units: str
    rank_depth: float
    break_formation_distance: float | None
    layers: dict[str, str]
    terrain: dict[str, TerrainKind]
    defaults: dict[str, float]
    races: dict[str, dict[str, Any]]
    source: str
    sight_height: float = 0.0

    def unit(
        self,
        race: str,
        *,
        move: float | None = None,
        ranks: int | None = None,
        depth: float | None = None,
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

        Examples
        --------
        >>> rules = load_rules("fantasy-warlord")
        >>> rules.unit("humans", ranks=2).depth
        4.0
        >>> rules.unit("wood elves").multipliers["woods"]
        1.25
        """
        if race not in self.races:
            known = ", ".join(sorted(self.races))
            raise RulesError(f"unknown race {race!r} in {self.name}; known races: {known}")
        spec = self.races[race]
        if move is None:
            move = spec["move"]
        if not (_is_number(move) and math.isfinite(move) and move >= 0):
            raise InputError(f"move must be a finite number >= 0, got {move!r}")
        if depth is None:
            if ranks is None:
                ranks = spec.get("ranks", 1)
            if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
                raise InputError(f"ranks must be a whole number >= 1, got {ranks!r}")
            depth = ranks * spec.get("rank_depth", self.rank_depth)
        if not (_is_number(depth) and math.isfinite(depth) and depth >= 0):
            raise InputError(f"depth must be a finite number >= 0, got {depth!r}")
        multipliers = dict(self.defaults)
        multipliers.update(spec.get("multipliers", {}))
        return Unit(
            race=race,
            move=float(move),
            depth=float(depth),
            flying=bool(spec.get("flying", False)),
            swimming=bool(spec.get("swimming", False)),
            multipliers=multipliers,
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


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
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < minimum or (strict and value == minimum):
            sign = ">" if strict else ">="
            raise fail(f"{where} must be a finite number {sign} {minimum:g}, got {value!r}")
        return float(value)

    def multiplier(value: Any, where: str) -> float:
        if value == "impassable":
            return math.inf
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or math.isnan(value) or value < 1:
            raise fail(f"{where} must be a number >= 1 or \"impassable\", got {value!r}")
        return float(value)

    def names(value: Any, where: str, known: dict | tuple, what: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(f"{where} must be a list of {what} names")
        for v in value:
            if v not in known:
                raise fail(f"{where} names undefined {what} {v!r}")
        return tuple(value)

    check_keys(data, "the file", {"ruleset", "layers", "terrain", "defaults", "races"}, set())
    head = table(data["ruleset"], "[ruleset]")
    check_keys(head, "[ruleset]", {"name", "units", "rank_depth"},
               {"break_formation_distance", "sight_height"})
    if not isinstance(head["name"], str) or not head["name"].strip():
        raise fail(f"[ruleset] name must be a non-empty string, got {head['name']!r}")
    if head["units"] not in ("cm", "in"):
        raise fail(f"[ruleset] units must be \"cm\" or \"in\", got {head['units']!r}")
    rank_depth = number(head["rank_depth"], "[ruleset] rank_depth")
    bfd = head.get("break_formation_distance")
    if bfd is not None:
        bfd = number(bfd, "[ruleset] break_formation_distance")
    sight_height = number(head.get("sight_height", 0.0), "[ruleset] sight_height")

    layers = table(data["layers"], "[layers]")
    for lname, cls in layers.items():
        if cls not in LAYER_CLASSES:
            raise fail(f"[layers] {lname} has class {cls!r}; valid: {', '.join(LAYER_CLASSES)}")

    terrain: dict[str, TerrainKind] = {}
    for kname, spec in table(data["terrain"], "[terrain]").items():
        where = f"[terrain.{kname!r}]" if " " in kname else f"[terrain.{kname}]"
        spec = table(spec, where)
        check_keys(spec, where, set(),
                   {"layers", "role", "cancels", "impassable", "steep_layers", *_EFFECT_KEYS})
        role = spec.get("role", "ground")
        if role not in ROLES:
            raise fail(f"{where} role {role!r} is not one of {', '.join(ROLES)}")
        impassable = spec.get("impassable", False)
        if not isinstance(impassable, bool):
            raise fail(f"{where} impassable must be true or false")
        if "steep_layers" in spec and role != "hill":
            raise fail(f"{where} steep_layers is only for role \"hill\"")
        terrain[kname] = TerrainKind(
            name=kname,
            layers=names(spec.get("layers", []), f"{where} layers", layers, "layer"),
            role=role,
            cancels=names(spec.get("cancels", []), f"{where} cancels", LAYER_CLASSES, "class"),
            impassable=impassable,
            steep_layers=names(
                spec.get("steep_layers", []), f"{where} steep_layers", layers, "layer"
            ),
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
            spec, where, {"move"}, {"ranks", "rank_depth", "flying", "swimming", "multipliers"}
        )
        race: dict[str, Any] = {"move": number(spec["move"], f"{where} move")}
        if "ranks" in spec:
            ranks = spec["ranks"]
            if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
                raise fail(f"{where} ranks must be a whole number >= 1, got {ranks!r}")
            race["ranks"] = ranks
        if "rank_depth" in spec:
            race["rank_depth"] = number(spec["rank_depth"], f"{where} rank_depth")
        for flag in ("flying", "swimming"):
            if flag in spec:
                if not isinstance(spec[flag], bool):
                    raise fail(f"{where} {flag} must be true or false")
                race[flag] = spec[flag]
        mults = table(spec.get("multipliers", {}), f"{where} multipliers")
        race["multipliers"] = {}
        for lname, value in mults.items():
            if lname not in layers:
                raise fail(f"{where} multipliers names undefined layer {lname!r}")
            race["multipliers"][lname] = multiplier(value, f"{where} multipliers.{lname}")
        races[rname] = race
    if not races:
        raise fail("[races] defines no races")

    return Ruleset(
        name=str(head["name"]),
        units=head["units"],
        rank_depth=rank_depth,
        break_formation_distance=bfd,
        layers=dict(layers),
        terrain=terrain,
        defaults=defaults,
        races=races,
        source=source,
        sight_height=sight_height,
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
        _is_number(conceals) and math.isfinite(conceals) and conceals > 0
    ):
        raise fail(f"{where} conceals must be a distance > 0 in table units, got {conceals!r}")
    contact = spec.get("cover_contact", False)
    if not isinstance(contact, bool):
        raise fail(f"{where} cover_contact must be true or false, got {contact!r}")
    ranks = spec.get("cover_ranks")
    if ranks is not None and (not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1):
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
