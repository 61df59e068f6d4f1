"""Terrain effects as the Fantasy Warlord text gives them: cover, concealment, disorder, pikes;
and the rules file's effect keys, refused in one line when wrong."""

import pytest

import engine
from engine.terrain.effects import charge_disorders, terrain_effects

from .conftest import ROOT, battlefield, feature, line, rect

SHIPPED_TEXT = (ROOT / "engine" / "rules" / "fantasy-warlord.toml").read_text("utf-8")

# One 10 cm square of each area kind along a 100 x 20 table; a river with a ford at x = 95;
# a wall along y = 15 from x = 0 to 20.
AREAS = ["woods", "scrub", "fen", "swamp", "jungle", "bog", "broken ground", "clear"]


@pytest.fixture(scope="module")
def bf():
    feats = [feature(k, rect(10 * i, 0, 10 * i + 10, 10), k) for i, k in enumerate(AREAS)]
    feats += [
        feature("river", line((95, 0), (95, 20)), "river", width=4),
        feature("ford", line((90, 5), (100, 5)), "ford", width=4),
        feature("wall", line((0, 15), (20, 15)), "wall", width=1),
    ]
    return engine.load_map(battlefield(feats, width=100, height=20))


def at(kind):
    return (10 * AREAS.index(kind) + 5.0, 5.0)


@pytest.mark.parametrize(("kind", "cover"), [
    ("woods", "medium"),  # "Any unit occupying a wood automatically receives ... Medium Cover"
    ("swamp", "medium"),  # "all the combat and missile fire benefits usually experienced in woods"
    ("jungle", "medium"),  # "jungles count exactly like woods for ... firing and combat"
    ("scrub", "light"),  # "provides light cover"
    ("fen", "light"),  # "all the combat and missile fire benefits usually experienced in scrub"
    ("bog", None),  # "provide no combat or missile fire advantages"
    ("broken ground", None),  # "conveys no combat or missile fire advantages"
    ("clear", None),
])
def test_cover(rules, bf, kind, cover):
    e = terrain_effects(bf, rules, at(kind))
    assert e.cover == cover and e.cover_from == (kind if cover else None)
    assert e.terrain == (kind,)


def test_ford_gives_no_cover_and_disorders_any_unit(rules, bf):
    e = terrain_effects(bf, rules, (95.0, 5.0), close_order=False)
    assert e.cover is None and e.disorders and e.pikes


@pytest.mark.parametrize(("kind", "conceals"), [
    ("woods", 5.0), ("swamp", 5.0), ("jungle", 3.0), ("scrub", None), ("fen", None), ("bog", None),
])
def test_concealment(rules, bf, kind, conceals):
    assert terrain_effects(bf, rules, at(kind)).conceals == conceals


@pytest.mark.parametrize(("kind", "close", "open_"), [
    ("woods", True, False),  # "Any close order unit that charges in a wood"
    ("fen", True, False),  # "Any close order unit that charges in a fen"
    ("jungle", True, True),  # "Any unit that charges in a jungle"
    ("swamp", True, True),  # "Any unit that charges in a swamp"
    ("scrub", False, False),
    ("bog", False, False),
])
def test_disorder_when_charging_in(rules, bf, kind, close, open_):
    assert terrain_effects(bf, rules, at(kind)).disorders is close
    assert terrain_effects(bf, rules, at(kind), close_order=False).disorders is open_
    c = charge_disorders(bf, rules, [(at(kind)[0], 15.0), at(kind)], close_order=True)
    assert c.disordered is close and c.terrain == (kind if close else None)


def test_charge_across_or_into_a_ford_disorders(rules, bf):
    # "Troops charging ... across or into a ford automatically become disordered."
    across = charge_disorders(bf, rules, [(88.0, 5.0), (99.5, 5.0)], close_order=False)
    assert across.disordered and across.terrain == "ford"
    assert across.reason.startswith("disordered: any unit charging in ford at (")
    into = charge_disorders(bf, rules, [(88.0, 5.0), (94.0, 5.0)], close_order=False)
    assert into.disordered
    clear = charge_disorders(bf, rules, [(71.0, 5.0), (79.0, 5.0)])
    assert not clear.disordered and clear.terrain is None


@pytest.mark.parametrize(("kind", "moving", "still"), [
    ("woods", False, False),  # "Pikes cannot be used in combat in a wood"
    ("jungle", False, False),
    ("swamp", False, False),
    ("fen", False, True),  # "only ... in a fen if the pike unit remains stationary"
    ("scrub", True, True),
])
def test_pikes(rules, bf, kind, moving, still):
    assert terrain_effects(bf, rules, at(kind)).pikes is moving
    assert terrain_effects(bf, rules, at(kind), stationary=True).pikes is still


def test_wall_cover_only_in_base_contact_and_two_ranks_deep(rules, bf):
    # the wall strip is y 14.5 .. 15.5
    touching = terrain_effects(bf, rules, (5.0, 14.5))
    assert touching.cover == "light" and touching.cover_from == "wall"
    assert "light cover from wall (in base contact)" in touching.reasons
    assert terrain_effects(bf, rules, (5.0, 14.5), rank=2).cover == "light"
    third = terrain_effects(bf, rules, (5.0, 14.5), rank=3)
    assert third.cover is None
    assert "only the first 2 ranks are under cover" in " ".join(third.reasons)
    # "Being close to it is not good enough."
    assert terrain_effects(bf, rules, (5.0, 14.3)).cover is None
    assert terrain_effects(bf, rules, (5.0, 14.3), contact=0.25).cover == "light"


def test_best_cover_wins_where_kinds_overlap(rules):
    m = engine.load_map(battlefield([feature("scrub", rect(0, 0, 20, 20)),
                                     feature("woods", rect(5, 5, 15, 15))]))
    assert terrain_effects(m, rules, (10, 10)).cover_from == "woods"
    assert terrain_effects(m, rules, (2, 2)).cover_from == "scrub"


def test_bad_queries_are_one_line_errors(rules, bf):
    with pytest.raises(engine.InputError, match=r"point \(101, 5\) is off the table"):
        terrain_effects(bf, rules, (101, 5))
    with pytest.raises(engine.InputError, match="rank must be a whole number"):
        terrain_effects(bf, rules, (5, 5), rank=0)
    with pytest.raises(engine.InputError, match="at least one point"):
        charge_disorders(bf, rules, [])


BAD_EFFECTS = {
    "conceals-negative": ("conceals = 3.0", "conceals = -3.0",
                          "[terrain.jungle] conceals must be a distance > 0 in table units, "
                          "got -3.0"),
    "conceals-zero": ("conceals = 3.0", "conceals = 0", "conceals must be a distance > 0"),
    "conceals-text": ("conceals = 3.0", 'conceals = "3 cm"', "got '3 cm'"),
    "conceals-bool": ("conceals = 3.0", "conceals = true", "got True"),
    "cover-unknown": ('cover = "light"\n\n', 'cover = "thick"\n\n',
                      '[terrain.scrub] cover must be one of "light", "medium", "heavy"'),
    "disorders-unknown": ('disorders = "any"\npikes = "no"\n\n[terrain.scrub]',
                          'disorders = "some"\npikes = "no"\n\n[terrain.scrub]',
                          '[terrain.jungle] disorders must be one of "close order", "any"'),
    "pikes-unknown": ('pikes = "stationary"', 'pikes = "moving"', "[terrain.fen] pikes must be"),
    "cover-ranks-zero": ('[terrain.wall]\nlayers = ["wall"]\ncover = "light"\n'
                         "cover_contact = true\ncover_ranks = 2",
                         '[terrain.wall]\nlayers = ["wall"]\ncover = "light"\n'
                         "cover_contact = true\ncover_ranks = 0",
                         "[terrain.wall] cover_ranks must be a whole number >= 1, got 0"),
    "contact-without-cover": ('[terrain.bog]\nlayers = ["marsh"]',
                              '[terrain.bog]\nlayers = ["marsh"]\ncover_contact = true',
                              "[terrain.bog] cover_contact and cover_ranks need a cover"),
    "sight-height-negative": ("sight_height = 2.0", "sight_height = -2",
                              "[ruleset] sight_height must be a finite number >= 0"),
}


@pytest.mark.parametrize(("old", "new", "words"), BAD_EFFECTS.values(), ids=BAD_EFFECTS.keys())
def test_bad_effect_keys_refused_in_one_line(tmp_path, old, new, words):
    assert SHIPPED_TEXT.count(old) == 1, old
    path = tmp_path / "edited.toml"
    path.write_text(SHIPPED_TEXT.replace(old, new), "utf-8")
    with pytest.raises(engine.RulesError) as exc:
        engine.load_rules(path)
    msg = str(exc.value)
    assert "\n" not in msg and words in msg and str(path) in msg


def test_effect_keys_are_optional(rules, tmp_path):
    path = tmp_path / "plain.toml"
    text = SHIPPED_TEXT.replace("conceals = 3.0\n", "").replace("sight_height = 2.0\n", "")
    path.write_text(text, "utf-8")
    plain = engine.load_rules(path)
    assert plain.terrain["jungle"].effects.conceals is None and plain.sight_height == 0.0
    assert rules.terrain["jungle"].effects.conceals == 3.0
