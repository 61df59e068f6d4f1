"""Reading a rules file (TOML) into a `Ruleset`, and the shipped rulesets."""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from .._args import real, tame, whole
from .._limits import is_file, read_limited
from ..errors import RulesError
from .ruleset import (
    _EFFECT_KEYS,
    _MAX_QUANTUM,
    COMBINES,
    COVERS,
    DISORDERS,
    LAYER_CLASSES,
    PIKES,
    ROLES,
    Rate,
    Ruleset,
    TerrainEffects,
    TerrainKind,
)

__all__ = ["load_rules", "shipped_rulesets"]

# The largest multiplier a layer may have (dearer ground is "impassable"), and the
# largest of any number: past them, the sums a route's price adds up could overflow.
_MAX_MULTIPLIER = 1e9
# Python reads no integer of more digits than this (`sys.get_int_max_str_digits`).
_INT_DIGITS = 4300


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
        if not is_file(path):
            shipped = ", ".join(shipped_rulesets())
            raise RulesError(f"no rules file {name!r} (shipped rulesets: {shipped})")
        try:
            text = read_limited(path).decode("utf-8-sig")
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise RulesError(f"cannot read rules file {name}: {exc}") from None
        source = str(path)
    try:
        data = tame(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise RulesError(f"{source}: nested too deeply to be rules") from None
    except ValueError:  # an integer Python will not read
        raise RulesError(f"{source}: {_huge_integer(text)}") from None
    return _parse(data, source)


def _huge_integer(text: str) -> str:
    """Where ``text`` has an integer of more digits than Python reads."""
    found = re.search(f"[0-9_]{{{_INT_DIGITS + 1},}}", text)
    line = text.count("\n", 0, found.start()) + 1 if found else 0
    return (f"line {line}: " if found else "") + (
        f"an integer of more than {_INT_DIGITS} digits (no rules number needs one)")


# Builds a `RulesError` naming the rules file: every helper below raises ``fail(msg)``.
_Fail = Callable[[str], RulesError]


def _parse(data: dict, source: str) -> Ruleset:
    """A parsed rules file as a `Ruleset`, validated table by table."""

    def fail(msg: str) -> RulesError:
        return RulesError(f"{source}: {msg}")

    _check_keys(data, "the file", {"ruleset", "layers", "terrain", "defaults", "races"},
                {"manoeuvres"}, fail)
    head = _ruleset_head(data["ruleset"], fail)
    layers = _layers(data["layers"], fail)
    terrain = _terrain_kinds(data["terrain"], layers, head["troops"], fail)
    defaults = _defaults(data["defaults"], layers, fail)
    races = _races(data["races"], layers, head, fail)
    manoeuvres = _manoeuvres(data.get("manoeuvres", {}), fail)
    return Ruleset(**head, layers=dict(layers), terrain=terrain, defaults=defaults, races=races,
                   source=source, manoeuvres=manoeuvres)


def _ruleset_head(obj: Any, fail: _Fail) -> dict[str, Any]:
    """The ``[ruleset]`` table, as the `Ruleset` fields it sets."""
    head = _table(obj, "[ruleset]", fail)
    _check_keys(
        head, "[ruleset]", {"name", "units", "rank_depth"},
        {"break_formation_distance", "troops", "frontage", "figure_width", "formation_change",
         "march", "irregular_in", "sight_height", "charge_bonus", "combine", "default_depth"},
        fail,
    )
    if not isinstance(head["name"], str) or not head["name"].strip():
        raise fail(f"[ruleset] name must be a non-empty string, got {head['name']!r}")
    if head["units"] not in ("cm", "in"):
        raise fail(f"[ruleset] units must be \"cm\" or \"in\", got {head['units']!r}")
    rank_depth = _number(head["rank_depth"], "[ruleset] rank_depth", fail)
    default_depth = head.get("default_depth")
    if default_depth is not None:
        default_depth = _number(default_depth, "[ruleset] default_depth", fail)
    bfd = head.get("break_formation_distance")
    if bfd is not None:
        bfd = _number(bfd, "[ruleset] break_formation_distance", fail)
    troops = _troop_types(head.get("troops", ["infantry"]), fail)
    frontage = _number(head.get("frontage", 0.0), "[ruleset] frontage", fail)
    figure_width = _number(head.get("figure_width", 0.0), "[ruleset] figure_width", fail)
    if frontage < figure_width:
        raise fail(f"[ruleset] frontage {frontage:g} is narrower than figure_width "
                   f"{figure_width:g}")
    formation_change = _number(head.get("formation_change", 0.0), "[ruleset] formation_change",
                               fail)
    march = head.get("march")
    if march is not None:
        march = _number(march, "[ruleset] march", fail, minimum=1.0)
    irregular_in = _names(head.get("irregular_in", []), "[ruleset] irregular_in", LAYER_CLASSES,
                          "class", fail)
    combine = head.get("combine", "product")
    if combine not in COMBINES:
        raise fail(f"[ruleset] combine must be one of {', '.join(COMBINES)}, got {combine!r}")
    return {
        "name": str(head["name"]),
        "units": head["units"],
        "rank_depth": rank_depth,
        "default_depth": default_depth,
        "break_formation_distance": bfd,
        "troops": troops,
        "frontage": frontage,
        "figure_width": figure_width,
        "formation_change": formation_change,
        "march": march,
        "irregular_in": irregular_in,
        "combine": combine,
        "sight_height": _number(head.get("sight_height", 0.0), "[ruleset] sight_height", fail),
        "charge_bonus": _number(head.get("charge_bonus", 0.0), "[ruleset] charge_bonus", fail),
    }


def _troop_types(troops: Any, fail: _Fail) -> tuple[str, ...]:
    """``[ruleset] troops``: the troop type names terrain and races may name."""
    if (not isinstance(troops, list) or not troops
            or not all(isinstance(t, str) and t for t in troops)):
        raise fail(f"[ruleset] troops must be a non-empty list of names, got {troops!r}")
    return tuple(troops)


def _layers(obj: Any, fail: _Fail) -> dict[str, str]:
    """The ``[layers]`` table: each layer name with its class."""
    layers = _table(obj, "[layers]", fail)
    for lname, cls in layers.items():
        if cls not in LAYER_CLASSES:
            raise fail(f"[layers] {lname} has class {cls!r}; valid: {', '.join(LAYER_CLASSES)}")
    return layers


def _terrain_kinds(obj: Any, layers: dict[str, str], troops: tuple[str, ...],
                   fail: _Fail) -> dict[str, TerrainKind]:
    """The ``[terrain.<kind>]`` tables, at least one, by kind name."""
    terrain = {kname: _terrain_kind(kname, spec, layers, troops, fail)
               for kname, spec in _table(obj, "[terrain]", fail).items()}
    if not terrain:
        raise fail("[terrain] defines no terrain kinds")
    return terrain


def _terrain_kind(kname: str, obj: Any, layers: dict[str, str], troops: tuple[str, ...],
                  fail: _Fail) -> TerrainKind:
    """One ``[terrain.<kind>]`` table."""
    where = _where("terrain", kname)
    spec = _table(obj, where, fail)
    _check_keys(
        spec, where, set(),
        {"layers", "role", "cancels", "impassable", "steep_layers", "closed_to", "passage",
         "narrowing", "uphill_layers", "crossing_cost", *_EFFECT_KEYS}, fail,
    )
    role = spec.get("role", "ground")
    if role not in ROLES:
        raise fail(f"{where} role {role!r} is not one of {', '.join(ROLES)}")
    impassable = _boolean(spec.get("impassable", False), f"{where} impassable", fail)
    for key in ("steep_layers", "uphill_layers"):
        if key in spec and role != "hill":
            raise fail(f"{where} {key} is only for role \"hill\"")
    passage = _boolean(spec.get("passage", False), f"{where} passage", fail)
    narrowing = _boolean(spec.get("narrowing", True), f"{where} narrowing", fail)
    if "narrowing" in spec and not passage:
        raise fail(f"{where} narrowing is only for a passage (passage = true)")
    return TerrainKind(
        name=kname,
        layers=_names(spec.get("layers", []), f"{where} layers", layers, "layer", fail),
        role=role,
        cancels=_names(spec.get("cancels", []), f"{where} cancels", LAYER_CLASSES, "class",
                       fail),
        impassable=impassable,
        steep_layers=_names(spec.get("steep_layers", []), f"{where} steep_layers", layers,
                            "layer", fail),
        closed_to=_names(spec.get("closed_to", []), f"{where} closed_to", troops, "troop type",
                         fail),
        passage=passage,
        narrowing=narrowing,
        uphill_layers=_names(spec.get("uphill_layers", []), f"{where} uphill_layers", layers,
                             "layer", fail),
        crossing_cost=_number(spec.get("crossing_cost", 0.0), f"{where} crossing_cost", fail),
        effects=_effects(spec, where, fail),
    )


def _effects(spec: dict, where: str, fail: _Fail) -> TerrainEffects:
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
    if ranks is not None:
        _count(ranks, f"{where} cover_ranks", fail)
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


def _defaults(obj: Any, layers: dict[str, str], fail: _Fail) -> dict[str, float | Rate]:
    """``[defaults.multipliers]``: a price for every layer, and for layers only."""
    defaults_table = _table(obj, "[defaults]", fail)
    _check_keys(defaults_table, "[defaults]", {"multipliers"}, set(), fail)
    spec = _table(defaults_table["multipliers"], "[defaults.multipliers]", fail)
    for lname in layers:
        if lname not in spec:
            raise fail(f"missing value {lname!r} in [defaults.multipliers] (every layer needs one)")
    return _layer_prices(spec, "[defaults.multipliers]", " ", layers, fail)


def _races(obj: Any, layers: dict[str, str], head: dict[str, Any],
           fail: _Fail) -> dict[str, dict[str, Any]]:
    """The ``[races.<name>]`` tables (unit profiles), at least one, by race name."""
    races = {rname: _race(rname, spec, layers, head, fail)
             for rname, spec in _table(obj, "[races]", fail).items()}
    if not races:
        raise fail("[races] defines no races")
    return races


def _race(rname: str, obj: Any, layers: dict[str, str], head: dict[str, Any],
          fail: _Fail) -> dict[str, Any]:
    """One ``[races.<name>]`` table: the keys it gives, over ``head``'s defaults."""
    where = _where("races", rname)
    spec = _table(obj, where, fail)
    _check_keys(
        spec, where, {"move"},
        {"ranks", "rank_depth", "flying", "swimming", "multipliers", "troop", "frontage",
         "figure_width", "charge_bonus"}, fail,
    )
    race: dict[str, Any] = {"move": _number(spec["move"], f"{where} move", fail)}
    if "ranks" in spec:
        race["ranks"] = _count(spec["ranks"], f"{where} ranks", fail)
    for key in ("rank_depth", "charge_bonus"):
        if key in spec:
            race[key] = _number(spec[key], f"{where} {key}", fail)
    if "troop" in spec:
        troops = head["troops"]
        if spec["troop"] not in troops:
            raise fail(f"{where} troop {spec['troop']!r} is not one of [ruleset] troops "
                       f"({', '.join(troops)})")
        race["troop"] = spec["troop"]
    for size in ("frontage", "figure_width"):
        if size in spec:
            race[size] = _number(spec[size], f"{where} {size}", fail)
    if race.get("frontage", head["frontage"]) < race.get("figure_width", head["figure_width"]):
        raise fail(f"{where} frontage is narrower than its figure width")
    for key in ("flying", "swimming"):
        if key in spec:
            race[key] = _boolean(spec[key], f"{where} {key}", fail)
    mults = _table(spec.get("multipliers", {}), f"{where} multipliers", fail)
    race["multipliers"] = _layer_prices(mults, f"{where} multipliers", ".", layers, fail)
    return race


def _layer_prices(spec: dict, where: str, sep: str, layers: dict[str, str],
                  fail: _Fail) -> dict[str, float | Rate]:
    """A multipliers table (layer -> price); each entry is named ``where + sep + layer``."""
    prices = {}
    for lname, value in spec.items():
        if lname not in layers:
            raise fail(f"{where} names undefined layer {lname!r}")
        prices[lname] = _multiplier(value, f"{where}{sep}{lname}", fail)
    return prices


def _manoeuvres(obj: Any, fail: _Fail) -> dict[str, float]:
    """The optional ``[manoeuvres]`` table: costs of reforming, facing, frontage changes."""
    manoeuvres = _table(obj, "[manoeuvres]", fail)
    _check_keys(manoeuvres, "[manoeuvres]", set(), {"reform", "face", "frontage",
                                                    "frontage_figures"}, fail)
    costs = {k: _number(v, f"[manoeuvres] {k}", fail, strict=k == "frontage_figures")
             for k, v in manoeuvres.items()}
    if costs.get("frontage_figures", 1.0) % 1:
        raise fail("[manoeuvres] frontage_figures must be a whole number of figures, got "
                   f"{costs['frontage_figures']:g}")
    return costs


# The small validators the tables above share.  Each returns the value it checks
# (as the type the `Ruleset` keeps) or raises ``fail`` naming ``where``.

def _where(section: str, name: str) -> str:
    """How messages name the table ``[section.name]`` (quoting a name with spaces)."""
    return f"[{section}.{name!r}]" if " " in name else f"[{section}.{name}]"


def _table(obj: Any, where: str, fail: _Fail) -> dict:
    """``obj``, which must be a TOML table."""
    if not isinstance(obj, dict):
        raise fail(f"{where} must be a table")
    return obj


def _check_keys(obj: dict, where: str, required: set[str], optional: set[str],
                fail: _Fail) -> None:
    """Raise unless ``obj`` has every key of ``required`` and no key outside both sets."""
    unknown = set(obj) - required - optional
    if unknown:
        allowed = ", ".join(sorted(required | optional))
        raise fail(f"unknown key {sorted(unknown)[0]!r} in {where} (allowed: {allowed})")
    missing = required - set(obj)
    if missing:
        raise fail(f"missing value {sorted(missing)[0]!r} in {where}")


def _number(value: Any, where: str, fail: _Fail, *, minimum: float = 0.0,
            strict: bool = False, maximum: float = _MAX_MULTIPLIER) -> float:
    """A finite number >= ``minimum`` (> it if ``strict``), at most ``maximum`` (no
    rules number needs more than `_MAX_MULTIPLIER`), as a float."""
    ok = real(value)
    if not ok or not math.isfinite(value) or value < minimum or (strict and value == minimum):
        sign = ">" if strict else ">="
        raise fail(f"{where} must be a finite number {sign} {minimum:g}, got {value!r}")
    if value > maximum:
        raise fail(f"{where} must be at most {maximum:g}, got {value:g}")
    return float(value)


def _count(value: Any, where: str, fail: _Fail) -> int:
    """A whole number >= 1, as given."""
    if not whole(value) or value < 1:
        raise fail(f"{where} must be a whole number >= 1, got {value!r}")
    return value


def _boolean(value: Any, where: str, fail: _Fail) -> bool:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise fail(f"{where} must be true or false")
    return value


def _multiplier(value: Any, where: str, fail: _Fail) -> float | Rate:
    """A layer's price: a number >= 1, ``"impassable"`` (inf) or a `Rate` table."""
    if value == "impassable":
        return math.inf
    if isinstance(value, dict):
        return _rate(value, where, fail)
    ok = real(value)
    if not ok or not 1 <= value <= _MAX_MULTIPLIER:  # NaN fails the range
        raise fail(f"{where} must be a number from 1 to {_MAX_MULTIPLIER:g}, \"impassable\" "
                   "or a table { multiplier, quantum } or { fraction, round_to }, "
                   f"got {value!r}")
    return float(value)


def _rate(value: dict, where: str, fail: _Fail) -> Rate:
    """A price table: ``{ fraction, round_to }`` or ``{ multiplier, quantum }``."""
    if "fraction" in value:
        _check_keys(value, where, {"fraction"}, {"round_to"}, fail)
        fraction = _number(value["fraction"], f"{where} fraction", fail, strict=True)
        if fraction > 1:
            raise fail(f"{where} fraction must be <= 1, got {fraction:g}")
        return Rate(fraction=fraction,
                    round_to=_number(value.get("round_to", 0.0), f"{where} round_to", fail))
    _check_keys(value, where, {"multiplier", "quantum"}, set(), fail)
    m = _multiplier(value["multiplier"], f"{where} multiplier", fail)
    if not isinstance(m, float) or math.isinf(m):
        raise fail(f"{where} multiplier must be a number from 1 to {_MAX_MULTIPLIER:g}")
    quantum = _number(value["quantum"], f"{where} quantum", fail, strict=True,
                      maximum=math.inf)
    if quantum > _MAX_QUANTUM:  # a graze of 1e-9 quanta is free: here, of 1e-6 units
        raise fail(f"{where} quantum must be <= {_MAX_QUANTUM:g} table units, "
                   f"got {quantum:g}")
    return Rate(multiplier=m, quantum=quantum)


def _names(value: Any, where: str, known: dict | tuple, what: str,
           fail: _Fail) -> tuple[str, ...]:
    """A list of names, each one of ``known``."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"{where} must be a list of {what} names")
    for v in value:
        if v not in known:
            raise fail(f"{where} names undefined {what} {v!r}")
    return tuple(value)
