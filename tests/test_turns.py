"""A route's turns: each spends at most the allowance, none carries leftover over, so
a cost paid at once (an obstacle, a formation change) or a quantum started that a
turn cannot pay whole waits for the next turn.  Checked against the rules' worked
cases and, on the shipped maps, against pricing each turn afresh."""

import itertools
import math

import numpy as np
import pytest

import engine
from engine.errors import NoRouteError

from .conftest import MAPS, battlefield, cut, farther, feature, line, rect

Y = 2.125  # a row of cell centres of the Battlesystem maps (0.25" cells)


@pytest.fixture(scope="module")
def bs():
    return engine.load_rules("battlesystem")


def _turn_costs(g, rt):
    """Each turn of ``rt`` priced afresh from where the one before ended."""
    ends = [rt.path[0], *rt.stops, rt.path[-1]]
    return [engine.price_path(g, cut(rt.path, a, b)).cost for a, b in itertools.pairwise(ends)]


def test_a_turn_in_light_woods_stops_at_the_last_quantum_it_pays(bs):
    """Light woods, per started 2" (x1.5 here): 10" a turn gets 6" in, to x = 8 (a
    7th inch would start a 4th quantum, 12 in all); from 2 to 22, four turns, not
    the three its 30" of cost over 10 would say."""
    g = engine.cost_grid(engine.load_map(MAPS / "battlesystem" / "light-woods.geojson"), bs,
                         bs.unit("infantry", move=10, depth=0))
    rt = engine.route(g, (2, Y), (22, Y))
    assert rt.cost == pytest.approx(30) and rt.turns == 4
    assert rt.stops == [pytest.approx((x, Y), abs=1e-6) for x in (8, 14, 20)]
    here = (2.0, Y)
    for stop in rt.stops:  # each stop is as far as a turn's reach from the last gets
        reach = engine.reach(g, here, 10)
        assert reach.reachable(stop) and not reach.reachable((stop[0] + 0.01, Y))
        here = stop
    short = engine.route(g, (2, Y), (8.5, Y))
    assert (short.cost, short.turns, short.stops) == (pytest.approx(12), 2,
                                                      [pytest.approx((8, Y), abs=1e-6)])


def test_a_turn_that_cannot_pay_a_hedge_stops_before_it(bs):
    """Battlesystem's hedge costs 4" to cross: infantry (12" a turn) 10.75" from it end
    the first turn there with 1.25" left, cross in the second (4 + 0.25 in the hedge
    + 7.75 on: to 18.75) and arrive in the third."""
    bf = engine.load_map(battlefield([feature("hedge", line((11, 0), (11, 10)), width=0.25)],
                                     30, 10, units="in", cell=0.25))
    g = engine.cost_grid(bf, bs, bs.unit("infantry", depth=0))
    rt = engine.route(g, (0, 5), (19.5, 5))
    assert rt.cost == pytest.approx(23.5) and rt.turns == 3
    (x1, y1), (x2, y2) = rt.stops
    assert 10.75 - 1e-6 < x1 < 10.75 and y1 == 5
    assert (x2, y2) == (pytest.approx(18.75, abs=1e-6), 5)
    assert _turn_costs(g, rt) == [pytest.approx(10.75), pytest.approx(12), pytest.approx(0.75)]


def test_a_turn_that_cannot_narrow_onto_a_bridge_stops_before_it(rules):
    """Fantasy Warlord humans (20 cm) narrowing onto a bridge 5 wide (5 cm): 16 cm of
    clear ground and 2 of bridge approach the first turn, the change and 15 cm the
    second, the last centimetre the third."""
    bf = engine.load_map(battlefield([feature("river", line((-1, 20), (21, 20)), width=4),
                                      feature("bridge", line((10, 16), (10, 24)), width=5)],
                                     20, 40))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    rt = engine.route(g, (10, 0), (10, 34))
    assert rt.cost == pytest.approx(39) and rt.turns == 3
    (x1, y1), (x2, y2) = rt.stops
    assert x1 == 10 and 18 - 1e-6 < y1 < 18
    assert (x2, y2) == (10, pytest.approx(33, abs=1e-6))
    assert _turn_costs(g, rt) == [pytest.approx(18), pytest.approx(20), pytest.approx(1)]
    with pytest.raises(NoRouteError, match=r"in turns of 4: at \(10, 18\) the way on costs "
                       r"more than a turn's allowance at once \(formation change, bridge"):
        engine.route(g, (10, 0), (10, 34), 4)
    assert engine.route(g, (10, 0), (10, 34), 5).turns == 9  # 16, 2; 5; then 4 x 4 of 16
    # 18 cm: the first turn ends on the bridge's edge, the second pays the change there.
    assert engine.route(g, (10, 0), (10, 34), 18).turns == 3


def test_a_turn_that_ends_where_a_hedge_begins_leaves_its_crossing_to_the_next(bs):
    """A hedge whose strip begins on a cell's edge 12" away: infantry (12") end the first
    turn at it, cross it in the second (4 + 0.25 + 7.75) and arrive in the third."""
    bf = engine.load_map(battlefield([feature("hedge", line((12.125, 0), (12.125, 10)),
                                              width=0.25)], 30, 10, units="in", cell=0.25))
    g = engine.cost_grid(bf, bs, bs.unit("infantry", depth=0))
    rt = engine.route(g, (0, 5), (24, 5))
    assert rt.cost == pytest.approx(28) and rt.turns == 3
    assert _turn_costs(g, rt) == [pytest.approx(12), pytest.approx(12), pytest.approx(4)]


def test_a_way_round_a_cost_no_turn_can_pay(rules):
    """Two bridges, 5 and 12 wide: humans in turns of 4 cm cannot narrow onto the near
    one (5 cm at once), so the route goes by the far one; in turns of 20, by the near."""
    bf = engine.load_map(battlefield([feature("river", line((-1, 20), (61, 20)), width=4),
                                      feature("bridge", line((10, 16), (10, 24)), width=5),
                                      feature("bridge", line((40, 16), (40, 24)), width=12)],
                                     60, 40))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    near = engine.route(g, (10, 0), (10, 34))
    assert near.cost == pytest.approx(39) and near.turns == 3
    far = engine.route(g, (10, 0), (10, 34), 4)
    assert all(x > 30 for x, _ in far.path[1:-1]) and far.cost > near.cost
    assert engine.price_path(g, far.path).cost == far.cost
    assert far.turns == math.ceil(far.cost / 4) and max(_turn_costs(g, far)) <= 4 * (1 + 1e-9)


def test_ground_whose_first_quantum_no_turn_can_pay_is_no_route(bs):
    """Light woods (x1.5 per started 2"): a turn of 2.9" cannot start one (3")."""
    g = engine.cost_grid(engine.load_map(MAPS / "battlesystem" / "light-woods.geojson"), bs,
                         bs.unit("infantry", move=10, depth=0))
    with pytest.raises(NoRouteError, match=r"in turns of 2\.9: at \(2, 0\.5\) the way on costs "
                       r"more than a turn's allowance at once \(a started quantum of light woods"):
        engine.route(g, (0.5, 0.5), (23.5, 0.5), 2.9)


def test_ranks_stood_afresh_each_turn_can_save_a_turn(rules):
    """Humans one rank deep (2 cm) in a wood, 3 cm a turn, leave it by its edge and
    go on along the edge: the route pays x2 to the edge (0.92) and until the
    ranks, trailing through the wood, clear it 2 cm on (12.59 in all: 4.2 turns
    of 3).  Its first turn ends 0.58 along the edge; the next stands its ranks
    straight behind the unit, on the edge, out of the wood, so the rest costs
    8.16, not 9.59, and the route takes 1 + 3 turns, not 5."""
    bf = engine.load_map(battlefield([feature("woods", rect(23, 0, 26, 13))], 40, 30))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=2))
    rt = engine.route(g, (25.2, 6.8), (26, 16), 3)
    assert rt.path[1][0] == 26 and rt.path[2] == (26, 16)
    assert [(leg.multiplier, leg.length) for leg in rt.legs] == [
        (2, pytest.approx(math.dist(rt.path[0], rt.path[1]))), (2, pytest.approx(2)),
        (1, pytest.approx(16 - rt.path[1][1] - 2))]
    assert rt.stops[0] == pytest.approx((26, rt.path[1][1] + (3 - rt.legs[0].cost) / 2))
    rest = engine.price_path(g, cut(rt.path, rt.stops[0], rt.path[-1])).cost
    assert rest == pytest.approx(16 - rt.stops[0][1])  # all of it at x1
    assert rt.turns == 1 + math.ceil(rest / 3) == 4 < math.ceil(rt.cost / 3)
    assert max(_turn_costs(g, rt)) <= 3 * (1 + 1e-9)


def test_a_turn_never_ends_where_it_costs_more_than_the_allowance(rules):
    """Humans 2 cm deep, 3 cm a turn, go round the corner (19, 23) of a swamp and up
    along its edge, a ten-millionth of a cm off it.  Each new turn stands the ranks
    straight behind the unit, through the corner itself, and whether they touch the
    swamp turns on the last digit of the stop.  A turn's end found by halving was
    then put on a round figure whose turn cost 6.38 (the ranks in the swamp): a
    round figure is kept only if its turn costs no more than the allowance."""
    bf = engine.load_map(battlefield([feature("swamp", rect(19, 23, 22, 30)),
                                      feature("woods", rect(0, 0, 3, 3))], 40, 30))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=2))
    rt = engine.route(g, (35.0, 15.0), (19.323346453761943, 28.75), 3)
    assert (19, 23) in rt.path and rt.turns == len(rt.stops) + 1 > 8
    assert max(_turn_costs(g, rt)) <= 3 * (1 + 1e-9)


def test_a_turn_along_the_edge_of_woods_goes_as_far_as_it_can(rules):
    """As above, with woods (19, 22)-(23, 30): the route goes round their corner and up
    along their edge, and each new turn stands the ranks through the corner.  Each
    turn spends its 3 cm, and a hair farther costs more: the ranks stand beside the
    woods, not in them, whatever the last digit of the stop."""
    bf = engine.load_map(battlefield([feature("woods", rect(19, 22, 23, 30)),
                                      feature("woods", rect(0, 0, 3, 3))], 40, 30))
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=2))
    rt = engine.route(g, (34.0, 13.0), (19.0, 28.75), 3)
    assert (19, 22) in rt.path and rt.turns == len(rt.stops) + 1 == 9
    assert _turn_costs(g, rt)[:-1] == pytest.approx([3] * 8, rel=1e-9)
    ends = [rt.path[0], *rt.stops]
    for here, stop in itertools.pairwise(ends):
        on = farther(rt.path, stop, 1e-6)
        assert engine.price_path(g, cut(rt.path, here, on)).cost > 3


@pytest.mark.parametrize(("name", "unit"), [("demo", {"depth": 0}), ("demo", {"ranks": 2}),
                                            ("crossings", {"depth": 0}),
                                            ("crossings", {"ranks": 2})])
def test_each_turn_pays_its_way_and_goes_as_far_as_it_can(rules, name, unit):
    """On the shipped maps (bridges, fords, hedges, woods; rear ranks or none): each
    turn, priced afresh from where the last ended, spends at most the allowance, and
    a hair farther would cost more.  Without rear ranks no route takes fewer turns
    than its cost over the allowance, and where nothing is paid at once, no more."""
    g = engine.cost_grid(engine.load_map(name), rules, rules.unit("humans", **unit))
    rng = np.random.default_rng(5)
    h, w = g.grid.shape
    checked = 0
    while checked < 6:
        a, b = (tuple(rng.uniform(0, (w * g.cell, h * g.cell), 2)) for _ in range(2))
        allowance = float(rng.uniform(5, 30))
        try:
            rt = engine.route(g, a, b, allowance)
        except (NoRouteError, engine.InputError):
            continue  # impassable ends, or no way round
        checked += 1
        assert len(rt.stops) == rt.turns - 1
        if g.depth == 0:  # (each turn's ranks stand afresh: a turn may cost a hair less)
            assert rt.turns >= math.ceil(rt.cost / allowance - 1e-9)
            if all(leg.kind == "move" for leg in rt.legs):
                assert rt.turns == math.ceil(rt.cost / allowance - 1e-9)
        spent = _turn_costs(g, rt)
        assert max(spent) <= allowance * (1 + 1e-9)
        for here, stop in itertools.pairwise([rt.path[0], *rt.stops]):
            on = farther(rt.path, stop, 1e-6)
            assert engine.price_path(g, cut(rt.path, here, on)).cost > allowance
