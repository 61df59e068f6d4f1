"""Every Fantasy Warlord worked example with numbers, through the API and the CLI.

The example maps (maps/examples/) put every terrain edge on a cell boundary,
so the grid holds the text's geometry exactly; the unit moves along y = 3.25.
"""

import json

import pytest

import engine
from engine.cli import main

from .conftest import EXAMPLES

Y = 3.25


def grid(rules, name, race, **unit):
    bf = engine.load_map(EXAMPLES / f"{name}.geojson")
    return engine.cost_grid(bf, rules, rules.unit(race, **unit))


def farthest(r, start_x):
    """Farthest point straight ahead along y = Y the reach claims (cell centres)."""
    x = start_x
    while r.reachable((x + 0.5, Y)):
        x += 0.5
    return x


def cli_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


class TestArchers:
    """Archers, two ranks (4 cm), move 20, 1 cm from broken ground 5 cm wide (x2)."""

    def test_price(self, rules):
        g = grid(rules, "archers", "humans", ranks=2)
        p = engine.price_path(g, [(0, Y), (1, Y), (11, Y)])
        # "(5 cm + 4 cm) x 2 = 18 cm ... advance a further 1 cm": 1 + 18 + 1 = 20.
        assert p.cost == pytest.approx(20.0)
        assert [(round(leg.length, 9), leg.multiplier) for leg in p.legs] == [
            (1.0, 1.0), (5.0, 2.0), (4.0, 2.0), (1.0, 1.0)]
        assert p.legs[2].terrain == ["broken ground (rear ranks)"]
        assert engine.price_path(g, [(0, Y), (11.5, Y)]).cost == pytest.approx(20.5)

    def test_reach_ends_11_cm_on(self, rules):
        g = grid(rules, "archers", "humans", ranks=2)
        r = engine.reach(g, (0.25, Y))
        assert r.cost_at((11.25, Y)) == pytest.approx(20.0)
        assert farthest(r, 0.25) == pytest.approx(11.25)

    def test_one_rank_pays_less(self, rules):
        # The rule is the depth: one rank (2 cm) pays (5 + 2) x 2 = 14 and gets 5 cm beyond.
        g = grid(rules, "archers", "humans", ranks=1)
        assert engine.price_path(g, [(0, Y), (13, Y)]).cost == pytest.approx(20.0)

    def test_cli(self, capsys):
        out = cli_json(capsys, "route", str(EXAMPLES / "archers.geojson"), "--race", "humans",
                       "--ranks", "2", "--from", f"0,{Y}", "--to", f"11,{Y}", "--json")
        assert out["cost"] == pytest.approx(20.0)
        assert out["turns"] == 1
        out = cli_json(capsys, "reach", str(EXAMPLES / "archers.geojson"), "--race", "humans",
                       "--ranks", "2", "--at", f"0.25,{Y}", "--probe", f"11.25,{Y}",
                       "--probe", f"11.75,{Y}", "--json")
        assert out["allowance"] == 20
        assert out["probes"][0] == {"at": [11.25, Y], "cost": 20.0, "reachable": True}
        assert out["probes"][1]["reachable"] is False


class TestWoodElves:
    """Wood elves, one rank (2 cm), move 24, 3 cm from a ford 8 cm across (x1.25)."""

    def test_price(self, rules):
        g = grid(rules, "wood-elves", "wood elves")
        # 3 + (8 + 2) x 1.25 = 15.5, leaving 8.5 beyond: the front ends 21.5 from the start.
        assert engine.price_path(g, [(0, Y), (13, Y)]).cost == pytest.approx(15.5)
        assert engine.price_path(g, [(0, Y), (21.5, Y)]).cost == pytest.approx(24.0)

    def test_reach(self, rules):
        g = grid(rules, "wood-elves", "wood elves")
        r = engine.reach(g, (0.25, Y))
        assert farthest(r, 0.25) - 0.25 == pytest.approx(21.5)
        assert not r.reachable((7, 0.25))  # the river beside the ford is impassable

    def test_other_races_pay_the_default(self, rules):
        g = grid(rules, "wood-elves", "humans")
        assert engine.price_path(g, [(0, Y), (13, Y)]).cost == pytest.approx(3 + 10 * 2.0)

    def test_cli(self, capsys):
        out = cli_json(capsys, "route", str(EXAMPLES / "wood-elves.geojson"), "--race",
                       "wood elves", "--from", f"0,{Y}", "--to", f"21.5,{Y}", "--json")
        assert out["cost"] == pytest.approx(24.0)
        ford = [leg for leg in out["legs"] if leg["multiplier"] == 1.25]
        assert sum(leg["length"] for leg in ford) == pytest.approx(10.0)


class TestHumansSteepWoodedHill:
    """Humans in mail and plate, move 18, up a steep wooded hillside: 18 -> 9 -> 4.5."""

    def test_price(self, rules):
        g = grid(rules, "humans-hill", "humans", move=18)
        p = engine.price_path(g, [(2, Y), (6.5, Y)])
        assert p.cost == pytest.approx(18.0)
        assert p.legs[0].multiplier == 4.0
        assert "steep slope (uphill)" in p.legs[0].terrain

    def test_reach(self, rules):
        g = grid(rules, "humans-hill", "humans", move=18)
        r = engine.reach(g, (2.25, Y))
        assert farthest(r, 2.25) - 2.25 == pytest.approx(4.5)

    def test_cli(self, capsys):
        out = cli_json(capsys, "reach", str(EXAMPLES / "humans-hill.geojson"), "--race",
                       "humans", "--move", "18", "--at", f"2.25,{Y}", "--probe", f"6.75,{Y}",
                       "--probe", f"7.25,{Y}", "--json")
        assert out["probes"][0]["cost"] == pytest.approx(18.0)
        assert out["probes"][1]["reachable"] is False


class TestOrcsAndTheWall:
    """Unarmoured orcs, move 20, 2 cm from a wall 0.5 cm thick (x2)."""

    def test_deep_unit_gets_9_cm_beyond(self, rules):
        # Deep enough to straddle the wall for the rest of the move: 2 + 18 / 2 = 11 cm
        # in all, 9 cm from the wall's near face (its thickness included).
        g = grid(rules, "orcs", "orcs", depth=10)
        assert engine.price_path(g, [(0, Y), (11, Y)]).cost == pytest.approx(20.0)

    def test_shallow_unit_pays_until_its_last_rank_is_over(self, rules):
        # One rank (2 cm): x2 over the wall and 2 cm beyond it, then clear.
        g = grid(rules, "orcs", "orcs", ranks=1)
        assert engine.price_path(g, [(0, Y), (17.5, Y)]).cost == pytest.approx(2 + 5 + 13)

    def test_reach_within_a_cell(self, rules):
        # The start snaps to a cell centre 1.75 cm from the wall: 1.75 + 2 x (x - 2) = 20.
        g = grid(rules, "orcs", "orcs", depth=10)
        r = engine.reach(g, (0.25, Y))
        assert farthest(r, 0.25) == pytest.approx(10.75)

    def test_other_races_do_not_halve(self, rules):
        g = grid(rules, "orcs", "wood elves", depth=10)
        assert engine.price_path(g, [(0, Y), (11, Y)]).cost == pytest.approx(11 + 9 * 1.0)

    def test_cli(self, capsys):
        out = cli_json(capsys, "route", str(EXAMPLES / "orcs.geojson"), "--race", "orcs",
                       "--depth", "10", "--from", f"0,{Y}", "--to", f"11,{Y}", "--json")
        assert out["cost"] == pytest.approx(20.0)


class TestGoblinsInTheMarsh:
    """Goblins, move 22, 5 cm from a marsh (x2): 8.5 cm in this turn, 11 cm more the next."""

    def test_route_over_two_turns(self, rules):
        g = grid(rules, "goblins", "goblins")
        rt = engine.route(g, (0, Y), (24.5, Y))
        assert rt.cost == pytest.approx(44.0)
        assert rt.turns == 2
        assert rt.stops == [pytest.approx((13.5, Y))]
        assert engine.route(g, (0, Y), (25, Y)).turns == 3

    def test_reach(self, rules):
        g = grid(rules, "goblins", "goblins")
        r = engine.reach(g, (13.75, Y), 22)  # a turn's move inside the marsh: 11 cm
        assert farthest(r, 13.75) - 13.75 == pytest.approx(11.0)

    def test_cli(self, capsys):
        out = cli_json(capsys, "route", str(EXAMPLES / "goblins.geojson"), "--race", "goblins",
                       "--from", f"0,{Y}", "--to", f"24.5,{Y}", "--json")
        assert out["cost"] == pytest.approx(44.0)
        assert out["turns"] == 2
        assert out["stops"] == [[13.5, Y]]
