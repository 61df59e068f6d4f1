"""Reading a rules file (TOML) into a `Ruleset`, and the shipped rulesets."""

from __future__ import annotations

import math
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from .._args import real, whole
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
