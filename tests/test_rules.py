"""Rulesets as data: the shipped Fantasy Warlord rules say what the text says, units
resolve from races, a user's own rules file works end to end, and every bad rules file
is refused with a RulesError whose one-line message names the table and key."""

import json
import math
from pathlib import Path

import pytest

import engine
from engine import InputError, RulesError, load_rules, shipped_rulesets
from engine.cli import main

from .conftest import ROOT, battlefield, feature, rect

SHIPPED_FILE = ROOT / "engine" / "rules" / "fantasy-warlord.toml"
SHIPPED_TEXT = SHIPPED_FILE.read_text("utf-8")


def edited(tmp_path, old, new):
    """The shipped rules file with ``old`` replaced (once) by ``new``, written to tmp_path."""
    assert SHIPPED_TEXT.count(old) == 1, f"{old!r} is not unique in the shipped file"
    path = tmp_path / "edited.toml"
    path.write_text(SHIPPED_TEXT.replace(old, new), "utf-8")
    return path


def refused(source, *words):
    """``load_rules(source)`` raises RulesError in one line containing every one of ``words``."""
    with pytest.raises(RulesError) as exc:
        load_rules(source)
    msg = str(exc.value)
    assert msg and "\n" not in msg, f"not one line: {msg!r}"
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    return msg


# --- the shipped ruleset ---------------------------------------------------------------

KINDS = ["clear", "woods", "jungle", "scrub", "broken ground", "bog", "mire", "fen", "swamp",
         "river", "ford", "bridge", "road", "building", "gateway", "wall", "hedge", "fence",
         "hill"]


def test_shipped_ruleset_is_listed():
    assert "fantasy-warlord" in shipped_rulesets()


def test_every_terrain_kind_and_race_of_the_text_exists(rules):
    assert set(KINDS) <= set(rules.terrain)
    assert {"humans", "wood elves", "goblins", "orcs"} <= set(rules.races)
    assert rules.units == "cm" and rules.rank_depth == 2.0


@pytest.mark.parametrize(("race", "layer", "value"), [
    ("humans", "woods", 2.0), ("humans", "broken", 2.0), ("humans", "steep", 2.0),
    ("wood elves", "woods", 1.25), ("wood elves", "ford", 1.25),
    ("goblins", "marsh", 2.0), ("orcs", "wall", 2.0),
])
def test_the_texts_multipliers(rules, race, layer, value):
    assert rules.races[race]["multipliers"][layer] == value  # stated in the race's own entry
    assert rules.unit(race).multipliers[layer] == value


@pytest.mark.parametrize(("kind", "layers"), [
    ("jungle", ("woods", "scrub")), ("fen", ("scrub", "marsh")), ("swamp", ("woods", "marsh")),
    ("bog", ("marsh",)), ("mire", ("marsh",)), ("bridge", ()), ("gateway", ()), ("clear", ()),
])
def test_composite_and_free_kinds(rules, kind, layers):
    assert rules.terrain[kind].layers == layers


def test_roles(rules):
    assert rules.terrain["river"].role == "river"
    assert rules.terrain["hill"].role == "hill"
    assert rules.terrain["hill"].steep_layers == ("steep",)
    assert rules.terrain["road"].cancels == ("area",)


def test_load_by_name_or_path_agree(rules):
    by_path = load_rules(SHIPPED_FILE)
    assert by_path.terrain == rules.terrain and by_path.races == rules.races
    assert by_path.defaults == rules.defaults and by_path.name == rules.name == "Fantasy Warlord"


# --- Ruleset.unit ----------------------------------------------------------------------


def test_unit_depth_move_and_overrides(rules):
    assert rules.unit("humans").depth == 2.0
    assert rules.unit("humans", ranks=3).depth == 6.0
    assert rules.unit("humans", depth=5).depth == 5.0
    with pytest.raises(InputError, match=r"^give ranks or depth, not both \(got ranks 3 and "
                                         r"depth 5\)$"):
        rules.unit("humans", ranks=3, depth=5)  # depth won, where the CLI and HTTP refuse
    assert rules.unit("humans").move == 20.0
    assert rules.unit("humans", move=18).move == 18.0


def test_unknown_race_lists_the_known_ones(rules):
    with pytest.raises(RulesError) as exc:
        rules.unit("ents")
    msg = str(exc.value)
    assert "unknown race 'ents'" in msg and "humans" in msg and "wood elves" in msg
    assert "\n" not in msg


@pytest.mark.parametrize(("override", "words"), [
    ({"move": -1}, "move must be a finite number >= 0, got -1"),
    ({"move": math.nan}, "move must be a finite number >= 0, got nan"),
    ({"depth": -2}, "depth must be a finite number >= 0, got -2"),
    ({"ranks": 0}, "ranks must be a whole number from 1 to 1000000, got 0"),
    ({"ranks": 1.5}, "ranks must be a whole number from 1 to 1000000, got 1.5"),
    ({"ranks": 10**400}, "ranks must be a whole number from 1 to 1000000, got a 401-digit integer"),
    ({"ranks": True}, "ranks must be a whole number from 1 to 1000000, got True"),
], ids=["move-negative", "move-nan", "depth-negative", "ranks-0", "ranks-1.5", "ranks-huge",
        "ranks-bool"])
def test_bad_unit_overrides(rules, override, words):
    with pytest.raises(InputError, match=words.replace(".", r"\.")):
        rules.unit("humans", **override)


# --- refusals --------------------------------------------------------------------------

REFUSALS = {
    # id: (old text, new text, words the message must hold)
    "unknown-top-level-key": ("[ruleset]", "colour = 1\n[ruleset]",
                              "unknown key 'colour' in the file"),
    "unknown-ruleset-key": ("rank_depth = 2.0", "rank_depth = 2.0\nscale = 28",
                            "unknown key 'scale' in [ruleset]"),
    "unknown-terrain-key": ("[terrain.woods]\n", "[terrain.woods]\ncolour = 'green'\n",
                            "unknown key 'colour' in [terrain.woods]"),
    "unknown-race-key": ("move = 16.0", "move = 16.0\nspeed = 3",
                         "unknown key 'speed' in [races.dwarves]"),
    "missing-name": ('name = "Fantasy Warlord"', "", "missing value 'name' in [ruleset]"),
    "missing-units": ('units = "cm"', "", "missing value 'units' in [ruleset]"),
    "missing-rank-depth": ("rank_depth = 2.0", "", "missing value 'rank_depth' in [ruleset]"),
    "missing-move": ("move = 16.0", "", "missing value 'move' in [races.dwarves]"),
    "layer-without-default": ("steep = 2.0\n\n[races", "\n[races",
                              "missing value 'steep' in [defaults.multipliers]"),
    "default-below-1": ("woods = 2.0\nscrub = 2.0", "woods = 0.5\nscrub = 2.0",
                        "[defaults.multipliers] woods must be a number from 1 to 1e+09"),
    "race-below-1": ("woods = 1.25", "woods = 0.5",
                     "[races.'wood elves'] multipliers.woods must be a number from 1 to 1e+09"),
    "multiplier-text": ("woods = 1.25", 'woods = "slow"', "multipliers.woods must be a number"),
    "undefined-layer-in-terrain": ('layers = ["woods", "scrub"]', 'layers = ["woods", "thorns"]',
                                   "[terrain.jungle] layers names undefined layer 'thorns'"),
    "undefined-layer-in-race": ("marsh = 2.0 }", "bog = 2.0 }",
                                "[races.goblins] multipliers names undefined layer 'bog'"),
    "undefined-steep-layer": ('steep_layers = ["steep"]', 'steep_layers = ["cliff"]',
                              "[terrain.hill] steep_layers names undefined layer 'cliff'"),
    "steep-layers-on-non-hill": ("[terrain.scrub]\n", '[terrain.scrub]\nsteep_layers = ["steep"]\n',
                                 "[terrain.scrub] steep_layers is only for role \"hill\""),
    "unknown-role": ('role = "river"', 'role = "lake"', "[terrain.river] role 'lake'"),
    "unknown-layer-class": ('woods = "area"', 'woods = "forest"',
                            "[layers] woods has class 'forest'"),
    "cancels-unknown-class": ('cancels = ["area"]\n\n[terrain.trail]',
                              'cancels = ["mud"]\n\n[terrain.trail]',
                              "[terrain.road] cancels names undefined class 'mud'"),
    "closed-to-unknown-troop": ('closed_to = ["cavalry"]', 'closed_to = ["chariots"]',
                                "[terrain.trail] closed_to names undefined troop type 'chariots'"),
    "race-unknown-troop": ("move = 16.0", 'move = 16.0\ntroop = "chariots"',
                           "[races.dwarves] troop 'chariots' is not one of [ruleset] troops"),
    "empty-troops": ('troops = ["infantry", "cavalry"]', "troops = []",
                     "[ruleset] troops must be a non-empty list"),
    "passage-not-bool": ("passage = true\n\n[terrain.building]", 'passage = "yes"\n\n'
                         "[terrain.building]", "[terrain.trail] passage must be true or false"),
    "narrowing-not-bool": ("passage = true\n\n[terrain.building]", "passage = true\n"
                           'narrowing = "no"\n\n[terrain.building]',
                           "[terrain.trail] narrowing must be true or false"),
    "narrowing-on-non-passage": ("[terrain.scrub]\n", "[terrain.scrub]\nnarrowing = false\n",
                                 "[terrain.scrub] narrowing is only for a passage"),
    "negative-default-depth": ("rank_depth = 2.0", "rank_depth = 2.0\ndefault_depth = -1",
                               "[ruleset] default_depth must be a finite number >= 0"),
    "negative-formation-change": ("formation_change = 5.0", "formation_change = -1",
                                  "[ruleset] formation_change must be a finite number >= 0"),
    "frontage-below-figure": ("frontage = 8.0", "frontage = 1.0",
                              "[ruleset] frontage 1 is narrower than figure_width 2"),
    "quantum-zero": ("woods = 1.25", "woods = { multiplier = 1.5, quantum = 0 }",
                     "multipliers.woods quantum must be a finite number > 0"),
    "rate-unknown-key": ("woods = 1.25", "woods = { multiplier = 1.5, per = 2 }",
                         "unknown key 'per' in [races.'wood elves'] multipliers.woods"),
    "fraction-above-one": ("woods = 1.25", "woods = { fraction = 1.5 }",
                           "multipliers.woods fraction must be <= 1"),
    "rate-impassable-multiplier": ("woods = 1.25",
                                   'woods = { multiplier = "impassable", quantum = 2 }',
                                   "multipliers.woods multiplier must be a number from 1 to 1e+09"),
    "multiplier-past-overflow": ("woods = 1.25", "woods = 1e308",
                                 "multipliers.woods must be a number from 1 to 1e+09, "),
    "multiplier-infinite": ("woods = 1.25", "woods = inf",
                            "multipliers.woods must be a number from 1 to 1e+09, "),
    "integer-beyond-a-float": ("move = 16.0", "move = " + "9" * 401,
                               "[races.dwarves] move must be a finite number >= 0, "
                               "got a 401-digit integer"),
    "number-past-overflow": ("formation_change = 5.0", "formation_change = 1e300",
                             "[ruleset] formation_change must be at most 1e+09, got 1e+300"),
    "integer-beyond-python": ("move = 16.0", "move = " + "9" * 5000,
                              "an integer of more than 4300 digits"),
    "uphill-layers-on-non-hill": ("[terrain.scrub]\n",
                                  '[terrain.scrub]\nuphill_layers = ["steep"]\n',
                                  "[terrain.scrub] uphill_layers is only for role \"hill\""),
    "negative-crossing-cost": ('[terrain.wall]\nlayers = ["wall"]',
                               '[terrain.wall]\nlayers = ["wall"]\ncrossing_cost = -4',
                               "[terrain.wall] crossing_cost must be a finite number >= 0"),
    "unknown-combine": ("formation_change = 5.0", 'formation_change = 5.0\ncombine = "sum"',
                        "[ruleset] combine must be one of product, worst, got 'sum'"),
    "march-below-one": ("formation_change = 5.0", "formation_change = 5.0\nmarch = 0.5",
                        "[ruleset] march must be a finite number >= 1"),
    "irregular-in-unknown-class": ("formation_change = 5.0",
                                   'formation_change = 5.0\nirregular_in = ["forest"]',
                                   "[ruleset] irregular_in names undefined class 'forest'"),
    "unknown-manoeuvre": ("[layers]", "[manoeuvres]\nwheel = 2.0\n\n[layers]",
                          "unknown key 'wheel' in [manoeuvres]"),
    "race-frontage-below-figure": ("move = 16.0", "move = 16.0\nfrontage = 1.5",
                                   "[races.dwarves] frontage is narrower than its figure width"),
    "units-furlongs": ('units = "cm"', 'units = "furlongs"',
                       "[ruleset] units must be \"cm\" or \"in\", got 'furlongs'"),
    "not-toml": ("[ruleset]", "[ruleset", "not valid TOML"),
    "boolean-move": ("move = 16.0", "move = true",
                     "[races.dwarves] move must be a finite number >= 0, got True"),
    "quantum-beyond-any-table": (
        "woods = 1.25, ford", "woods = { multiplier = 1.5, quantum = 1e10 }, ford",
        "[races.'wood elves'] multipliers.woods quantum must be <= 1000 table units, got 1e+10"),
    "frontage-figures-fraction": ("[layers]", "[manoeuvres]\nfrontage_figures = 1.5\n\n[layers]",
                                  "[manoeuvres] frontage_figures must be a whole number of "
                                  "figures, got 1.5"),
    "nested-too-deep": ("[ruleset]", "a = " + "[" * 5000 + "]" * 5000 + "\n[ruleset]",
                        "nested too deeply to be rules"),  # was a RecursionError
}


@pytest.mark.parametrize(("old", "new", "words"), REFUSALS.values(), ids=REFUSALS.keys())
def test_bad_rules_refused(tmp_path, old, new, words):
    path = edited(tmp_path, old, new)
    refused(path, str(path), words)


def test_impassable_multiplier_accepted(tmp_path):
    rules = load_rules(edited(tmp_path, "woods = 1.25", 'woods = "impassable"'))
    assert rules.unit("wood elves").multipliers["woods"] == math.inf


def test_missing_file_lists_the_shipped_rulesets(tmp_path):
    path = tmp_path / "nowhere.toml"
    refused(path, f"no rules file {str(path)!r}",
            "shipped rulesets: battlesystem, fantasy-warlord, reglamento")


# --- a user's own rules, end to end ----------------------------------------------------

VILLAGE = """\
[ruleset]
name = "Village Green"
units = "cm"
rank_depth = 1.0

[layers]
mud = "area"

[terrain.clear]

[terrain.mud]
layers = ["mud"]

[defaults.multipliers]
mud = 3

[races.peasants]
move = 10
"""


@pytest.fixture
def village(tmp_path):
    """(rules path, map path): mud from x = 1 to x = 3 on a 10 x 4 cm table, cell 0.5."""
    rules_path = tmp_path / "village.toml"
    rules_path.write_text(VILLAGE, "utf-8")
    map_path = tmp_path / "green.geojson"
    with map_path.open("w") as fh:
        json.dump(battlefield([feature("mud", rect(1, 0, 3, 4), "puddle")], 10, 4), fh)
    return str(rules_path), str(map_path)


def test_files_saved_with_a_byte_order_mark_load(village):
    """Editors on Windows may begin a UTF-8 file with a byte-order mark: the rules file
    and the map load as they would without it (the map was "not valid JSON")."""
    for path in map(Path, village):
        path.write_text(path.read_text("utf-8"), "utf-8-sig")
    rules = load_rules(village[0])
    assert rules.name == "Village Green"
    assert [f.id for f in engine.load_map(village[1]).features] == ["puddle"]


def test_own_rules_price_mud(village):
    rules = load_rules(village[0])
    assert rules.name == "Village Green" and set(rules.terrain) == {"clear", "mud"}
    bf = engine.load_map(village[1])
    bf.check(rules)
    g = engine.cost_grid(bf, rules, rules.unit("peasants", depth=0))
    assert engine.price_path(g, [(1, 1.25), (3, 1.25)]).cost == pytest.approx(6.0)


def test_own_rules_through_the_cli(village, capsys):
    rules_path, map_path = village
    argv = ["price", map_path, "--rules", rules_path, "--race", "peasants",
            "--path", "0,1.25", "4,1.25", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    # 1 cm clear, 2 cm of mud x3, then 1 cm more while the rank (1 cm deep) leaves the mud.
    assert [leg["cost"] for leg in out["legs"]] == [1.0, 6.0, 3.0]
    assert out["cost"] == pytest.approx(10.0) and out["length"] == pytest.approx(4.0)


def test_cli_bad_rules_file_is_one_error_line(tmp_path, village, capsys):
    bad = edited(tmp_path, 'units = "cm"', 'units = "furlongs"')
    argv = ["price", village[1], "--rules", str(bad), "--race", "humans", "--path", "0,1", "4,1"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("engine: error:")
    assert "furlongs" in err and "Traceback" not in err


# --- inputs that were once accepted or split the message over lines


@pytest.mark.parametrize("override", [{"move": True}, {"depth": True}], ids=["move", "depth"])
def test_unit_refuses_booleans(rules, override):
    with pytest.raises(InputError):
        rules.unit("humans", **override)


def test_ruleset_name_must_be_a_string(tmp_path):
    refused(edited(tmp_path, 'name = "Fantasy Warlord"', "name = { a = 1 }"), "[ruleset] name")


def test_layer_name_with_newline_stays_one_line(tmp_path):
    refused(edited(tmp_path, 'woods = "area"', '"wo\\nods" = "forest"'), "has class 'forest'")
