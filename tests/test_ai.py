"""engine.ai: army reach, turns, threat maps, flow fields and position choice."""

import inspect
import itertools
import math

import numba
import numpy as np
import pytest

import engine
from engine import terrain
from engine.ai import (
    DEFAULT_WEIGHTS,
    choose_position,
    reach_army,
    reach_turns,
    threat_map,
)
from engine.errors import InputError, NoRouteError, RulesError
from engine.search import _kernels as skern
from engine.search import flow as sflow
from engine.search import flow_field
from engine.search.flow import _bands

from .conftest import MAPS, feature, grid_for, rect
from .test_kernels import open_battlefield, without_pruning


@pytest.fixture(scope="module")
def demo():
    return engine.load_map(MAPS / "demo.geojson")


def _centre(g, flat):
    return g.grid.rc_to_xy(divmod(int(flat), g.grid.shape[1]))


ARMY = [
    ("humans", {"depth": 0}, (20, 20)),
    ("humans", {"ranks": 2}, (40, 30)),  # on the steep hill
    ("goblins", {}, (100, 60)),
    ("humans", {"depth": 0}, (120, 100)),
    ("wood elves", {}, (30, 48)),  # in the woods
    ("humans", {"ranks": 2}, (160, 20)),
    ("goblins", {}, (60, 110)),
]


def test_reach_army_equals_one_reach_per_unit(demo, rules):
    army = [(rules.unit(race, **kw), xy) for race, kw, xy in ARMY]
    many = reach_army(demo, rules, army)
    assert len(many) == len(army)
    for (unit, xy), got in zip(army, many, strict=True):
        one = engine.reach(engine.cost_grid(demo, rules, unit), xy)
        assert got.allowance == unit.move
        np.testing.assert_allclose(got.to_array(), one.to_array(), rtol=0, atol=1e-9)


def test_reach_army_charge_adds_the_rules_bonus(demo, tmp_path):
    text = (engine.rules.load.resources.files("engine.rules") / "fantasy-warlord.toml").read_text()
    text = text.replace("[ruleset]\n", "[ruleset]\ncharge_bonus = 5.0\n", 1)
    text = text.replace("[races.goblins]\n", "[races.goblins]\ncharge_bonus = 2.0\n", 1)
    path = tmp_path / "charging.toml"
    path.write_text(text)
    rules = engine.load_rules(path)
    army = [(rules.unit("humans"), (20, 20)), (rules.unit("goblins"), (100, 60))]
    assert [r.allowance for r in reach_army(demo, rules, army, charge=True)] == [25.0, 24.0]
    assert [r.allowance for r in reach_army(demo, rules, army)] == [20.0, 22.0]
    assert engine.load_rules("fantasy-warlord").unit("humans").charge_bonus == 0.0
    path.write_text(text.replace("charge_bonus = 5.0", "charge_bonus = -1"))
    with pytest.raises(RulesError, match="charge_bonus"):
        engine.load_rules(path)


def test_reach_army_names_the_bad_unit(demo, rules):
    with pytest.raises(InputError, match=r"unit 1: point \(500, 5\) is off the table"):
        reach_army(demo, rules, [(rules.unit("humans"), (5, 5)), (rules.unit("humans"), (500, 5))])
    with pytest.raises(InputError, match="unit 0: expected"):
        reach_army(demo, rules, [("humans", (5, 5))])
    assert reach_army(demo, rules, []) == []


@pytest.mark.parametrize("kw", [{"depth": 0}, {"ranks": 2}], ids=["depth-0", "two-ranks"])
def test_reach_turns_agree_with_route_turns(demo, rules, kw):
    g = engine.cost_grid(demo, rules, rules.unit("humans", **kw))
    start = g.grid.rc_to_xy(g.grid.xy_to_rc((40, 60)))
    horizon = 4
    turns = reach_turns(g, start, horizon)
    assert turns[g.grid.xy_to_rc(start)] == 0
    assert set(np.unique(turns)) == {-1, 0, 1, 2, 3, 4}
    rng = np.random.default_rng(3)
    field = engine.reach(g, start, horizon * g.unit.move).to_array()
    checked = 0
    # A unit with rear ranks counts on the lattice, its route straightened after; an
    # any-angle route may cost a little less than the reach (test_anyangle's bound).
    any_angle = g.depth == 0
    near = 0.005 if any_angle else 1e-6
    for flat in rng.permutation(turns.size):
        t = int(turns.flat[flat])
        c = field.flat[flat]
        if t <= 0 or abs(c / g.unit.move - round(c / g.unit.move)) < near * c / g.unit.move:
            continue  # the start, beyond the horizon, or on a turn boundary to rounding
        rt = engine.route(g, start, _centre(g, flat), any_angle=any_angle)
        assert rt.turns == t, (flat, rt.cost, c)
        checked += 1
        if checked == 40:
            break
    assert checked == 40
    # Beyond the horizon: reachable cells cost more than `horizon` allowances.
    far = np.flatnonzero(turns.ravel() == -1)[::997][:5]
    for flat in far:
        try:
            rt = engine.route(g, start, _centre(g, flat), any_angle=any_angle)
        except (NoRouteError, InputError):
            continue
        assert rt.turns > horizon


def test_reach_turns_rejects_bad_input(demo, rules):
    g = engine.cost_grid(demo, rules, rules.unit("humans"))
    with pytest.raises(InputError, match="horizon"):
        reach_turns(g, (20, 20), -1)
    with pytest.raises(InputError, match="horizon"):
        reach_turns(g, (20, 20), 1.5)
    with pytest.raises(InputError, match="allowance must be > 0"):
        reach_turns(g, (20, 20), 2, allowance=0)
    with pytest.raises(InputError, match="allowance"):
        reach_turns(g, (20, 20), 2, allowance=-3)
    with pytest.raises(InputError, match="off the table"):
        reach_turns(g, (-1, 20), 2)
    assert (reach_turns(g, (20, 20), 0) >= 0).sum() == 1


@pytest.mark.parametrize("charge", [False, True])
def test_threat_map_is_the_union_of_the_enemies_reaches(demo, rules, charge):
    enemies = [(rules.unit(race, **kw), xy) for race, kw, xy in ARMY]
    t = threat_map(demo, rules, enemies, charge=charge)
    dense = [engine.reach(engine.cost_grid(demo, rules, u), xy).to_array() for u, xy in enemies]
    within = [np.isfinite(d) for d in dense]
    np.testing.assert_array_equal(t.count, np.sum(within, axis=0))
    left = np.max([np.where(w, u.move - d, -np.inf)
                   for w, d, (u, _) in zip(within, dense, enemies, strict=True)], axis=0)
    np.testing.assert_allclose(np.maximum(t.margin, -1e9), np.maximum(left, -1e9), atol=1e-9)
    rng = np.random.default_rng(0)
    for flat in rng.choice(np.flatnonzero(t.count), 30, replace=False):
        xy = demo.grid.rc_to_xy(divmod(int(flat), demo.grid.shape[1]))
        who = t.at(xy)
        assert [i for i, _ in who] == [i for i, w in enumerate(within) if w.flat[flat]]
        # At the centre itself, priced to the point: no dearer than the cell's cost, whose
        # path bends at cell centres (a few percent at most).
        best = max(m for _, m in who)
        assert t.margin.flat[flat] - 1e-9 <= best <= t.margin.flat[flat] + 0.03 * 22


def test_threat_map_concealment_counts_viewsheds(demo, rules):
    enemies = [(rules.unit("humans"), (150, 60)), (rules.unit("giant eagles"), (100, 20))]
    t = threat_map(demo, rules, enemies)
    expected = (engine.viewshed(demo, rules, (150, 60)).astype(int)
                + engine.viewshed(demo, rules, (100, 20), flying=True))
    np.testing.assert_array_equal(t.seen_by, expected)


def _follow_cost(g, f, xy):
    return engine.price_path(g, f.path_from(xy)).cost


@pytest.mark.parametrize("mapname", ["demo.geojson", "crossings.geojson"])
def test_flow_field_descent_costs_the_field_and_the_route(rules, mapname):
    bf = engine.load_map(MAPS / mapname)
    g = engine.cost_grid(bf, rules, rules.unit("humans", depth=0))
    assert (g.steep != 1).any() and g.narrow.any()  # uphill and entry costs both in play
    goal = g.grid.rc_to_xy(g.grid.xy_to_rc((bf.width * 0.3, bf.height * 0.25)))
    f = flow_field(g, [goal])
    assert f.cost_at(goal) == 0 and f.path_from(goal) == [goal]
    rng = np.random.default_rng(5)
    reachable = np.flatnonzero(np.isfinite(f.cost))
    for flat in rng.choice(reachable, 25, replace=False):
        xy = _centre(g, flat)
        field = f.cost.flat[flat]
        steps = f.path_from(xy)
        assert steps[-1] == goal
        # Summed step by step, the descent costs the field's value.
        walked = sum(engine.price_path(g, [a, b]).cost for a, b in itertools.pairwise(steps))
        assert walked == pytest.approx(field, rel=1e-9)
        assert _follow_cost(g, f, xy) == pytest.approx(field, rel=1e-9)
        # A flow field steps on the lattice: it costs the lattice route.
        assert engine.route(g, xy, goal, any_angle=False).cost == pytest.approx(field, rel=1e-9)


def test_flow_field_is_direction_dependent(rules, demo):
    # Up the steep hill costs more than down it, and the field is built for going up.
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    top, foot = (46.25, 34.25), (46.25, 50.25)
    up = flow_field(g, [top]).cost_at(foot)
    down = flow_field(g, [foot]).cost_at(top)
    assert up > down
    assert up == pytest.approx(engine.route(g, foot, top, any_angle=False).cost)


def test_flow_field_several_goals_and_limit(rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("goblins"))
    goals = [(20.25, 20.25), (150.25, 100.25)]
    both = flow_field(g, goals)
    each = [flow_field(g, [xy]).cost for xy in goals]
    np.testing.assert_allclose(both.cost, np.minimum(*each))
    near = flow_field(g, goals, limit=30)
    assert np.isfinite(near.cost).sum() < np.isfinite(both.cost).sum()
    np.testing.assert_array_equal(near.cost[np.isfinite(near.cost)],
                                  both.cost[np.isfinite(near.cost)])
    assert (near.cost[np.isfinite(near.cost)] <= 30 + 1e-9).all()
    with pytest.raises(NoRouteError):
        near.path_from((90, 60))


@pytest.mark.parametrize("mapname", ["demo.geojson", "crossings.geojson"])
@pytest.mark.parametrize("directions", [8, 32])
def test_flow_fields_price_steps_into_a_cell_as_the_step_table(rules, mapname, directions):
    # The flow kernel reads the steps into each cell that is not flat from a table of
    # its own, row by row: each entry is the step table's for the step out of the
    # cell it comes from (inf off the grid), slopes, walls and flat ground alike.
    g = engine.cost_grid(engine.load_map(MAPS / mapname), rules, rules.unit("humans", depth=0),
                         directions=directions)
    a = g.kernel_args
    assert a.table_cost.size > 0
    row, cost = g.incoming_steps
    k = len(a.step_dr)
    into = np.flatnonzero(row >= 0)
    flat = a.flat_of[a.flat] > 0
    assert not flat[into].any() and np.isfinite(a.base[into]).all()
    assert set(np.flatnonzero(~flat & np.isfinite(a.base))) == set(into)
    rows, cols = g.grid.shape
    r, c = np.divmod(into[:, None], cols)
    fr, fc = r - a.step_dr, c - a.step_dc
    on = (fr >= 0) & (fr < rows) & (fc >= 0) & (fc < cols)
    expected = np.full(on.shape, np.inf)
    expected[on] = a.table_cost[(fr * cols + fc)[on] * k + np.nonzero(on)[1]]
    got = cost.reshape(-1, k)[row[into]]
    np.testing.assert_array_equal(got, expected)
    assert np.isfinite(got).any() and (flat[(fr * cols + fc)[on]]).any()
    # Cells with equal rows share one, and no row is kept twice.
    kept = cost.reshape(-1, k)
    assert len(np.unique(kept, axis=0)) == len(kept) < into.size


@pytest.mark.parametrize("directions", [8, 32])
def test_flow_field_walks_the_pieces_where_its_table_would_be_too_big(rules, monkeypatch,
                                                                      directions):
    # Past the table's budget the flow kernel prices the steps into the remaining cells
    # from their pieces: here bit for bit the same field (a uniform step's sum over its
    # pieces could differ from the table's number in the last bit; none does on this map).
    def grid():
        return engine.cost_grid(engine.load_map(MAPS / "crossings.geojson"), rules,
                                rules.unit("humans", depth=0), directions=directions)

    full = grid()
    k = len(full.kernel_args.step_dr)
    row, cost = full.incoming_steps
    distinct = cost.size // k
    goals = [(30.25, 20.25), (120.25, 90.25)]
    expected = flow_field(full, goals)
    # The kernel reads the table: dearer rows, dearer fields.
    dear = grid()
    dear.__dict__["incoming_steps"] = (row, cost + 1.0)  # the cached property, replaced
    doctored = flow_field(dear, goals).cost
    assert (doctored >= expected.cost).all() and (doctored > expected.cost).mean() > 0.5
    # Built a few cells at a time, the rows are the same; the budget counts distinct
    # rows, the first kept, and cells whose row did not fit have none.
    monkeypatch.setattr(terrain.costgrid, "_ROWS_CHUNK", 997)
    for rows in (distinct, distinct // 2, 0):
        monkeypatch.setattr(terrain.costgrid, "_TABLE_BYTES", rows * 8 * k)
        g = grid()
        got_row, got = g.incoming_steps
        assert got.size == rows * k
        np.testing.assert_array_equal(got, cost[:rows * k])
        np.testing.assert_array_equal(got_row, np.where(row < rows, row, -1))
        f = flow_field(g, goals)
        np.testing.assert_array_equal(f.cost, expected.cost)
        np.testing.assert_array_equal(f.step, expected.step)


@pytest.mark.parametrize("mapname", ["demo.geojson", "crossings.geojson"])
@pytest.mark.parametrize("directions", [8, 32])
def test_flow_field_in_bands_is_the_single_search(rules, monkeypatch, mapname, directions):
    # Bands of rows searched apart, then mended across their borders, give the
    # one-band costs; rivers, walls and hills make routes cross the borders.
    g = engine.cost_grid(engine.load_map(MAPS / mapname), rules, rules.unit("goblins", depth=0),
                         directions=directions)
    goals = [g.grid.rc_to_xy((r, c)) for r, c in np.argwhere(np.isfinite(g.base))[::4001][:3]]
    expanded = []
    kernel = sflow._reverse_field

    def counting(*args):
        expanded.append(kernel(*args))
        return expanded[-1]

    monkeypatch.setattr(sflow, "_reverse_field", counting)
    fields = {}
    for threads in (1, 2, 3, 7):
        monkeypatch.setattr(numba, "get_num_threads", lambda t=threads: t)
        fields[threads] = flow_field(g, goals), flow_field(g, goals, limit=40)
    one, one_near = fields[1]
    reached = np.isfinite(one.cost)
    st = g.steps
    rows, cols = np.nonzero(reached & (one.step >= 0))
    for threads, (f, near) in fields.items():
        # The same costs, and of equally cheap steps the same one, whatever the bands.
        np.testing.assert_array_equal(f.cost, one.cost, err_msg=str(threads))
        np.testing.assert_array_equal(near.cost, one_near.cost, err_msg=str(threads))
        np.testing.assert_array_equal(f.step, one.step, err_msg=str(threads))
        np.testing.assert_array_equal(near.step, one_near.step, err_msg=str(threads))
        # Each cell's step leads to a cell whose cost is less by that step's price.
        for r, c in list(zip(rows, cols, strict=True))[::97]:
            k = f.step[r, c]
            to = (r + st.dr[k], c + st.dc[k])
            priced = engine.price_path(g, [g.grid.rc_to_xy((r, c)), g.grid.rc_to_xy(to)]).cost
            assert f.cost[r, c] == pytest.approx(f.cost[to] + priced, rel=1e-9)
    assert expanded[0] == reached.sum()  # one band: every cell once
    assert max(expanded) > reached.sum()  # some band mended another's costs


@pytest.mark.parametrize("directions", [8, 32])
def test_pruned_flow_fields_equal_the_fields_of_every_step(rules, monkeypatch, directions):
    """Pruning a deep cell's steps by its own (`terrain.lattice.onward_steps`) changes no cost and
    no step, bit for bit, on one band and on several."""
    g = engine.cost_grid(open_battlefield(), rules, rules.unit("humans", depth=0),
                         directions=directions)
    goals = [(20.25, 44.25), (70.25, 10.25)]
    fields = {}
    for threads in (1, 3):
        monkeypatch.setattr(numba, "get_num_threads", lambda t=threads: t)
        fields[threads] = flow_field(g, goals), flow_field(g, goals[:1], limit=30)
    without_pruning(g)
    for threads, pruned in fields.items():
        monkeypatch.setattr(numba, "get_num_threads", lambda t=threads: t)
        every = flow_field(g, goals), flow_field(g, goals[:1], limit=30)
        for f, e in zip(pruned, every, strict=True):
            np.testing.assert_array_equal(f.cost, e.cost)
            np.testing.assert_array_equal(f.step, e.step)
    assert np.isfinite(fields[1][0].cost).mean() > 0.9



def test_flow_field_queues_cells_with_their_steps_in_wide_entries_on_huge_grids(
        rules, demo, monkeypatch):
    # A queue entry packs a cell and the step that reached it into 32 bits while the
    # cells fit (2**26 of them); past that it takes 64 bits: the same field.
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    goals = [(30.25, 20.25), (120.25, 90.25)]
    kernel = sflow._reverse_field
    queues = []

    def spying(*args):
        queues.append(args[-1].dtype)
        return kernel(*args)

    monkeypatch.setattr(sflow, "_reverse_field", spying)
    narrow = flow_field(g, goals)
    monkeypatch.setattr(skern, "PACKED_CELLS", g.base.size - 1)
    wide = flow_field(g, goals)
    assert queues == [np.uint32, np.uint64]
    assert max(engine.grid.DIRECTIONS) <= skern.flow.NO_STEP  # a step never reads as none
    np.testing.assert_array_equal(wide.cost, narrow.cost)
    np.testing.assert_array_equal(wide.step, narrow.step)
    assert np.isfinite(narrow.cost).mean() > 0.9

def test_flow_bands_meet_at_a_goal_when_one_would_have_none():
    rows, reach = 200, 2
    assert list(_bands(rows, 2, reach, np.array([99]))) == [0, 100, 200]
    assert list(_bands(rows, 2, reach, np.array([30, 160]))) == [0, 100, 200]
    assert list(_bands(rows, 2, reach, np.array([30, 60]))) == [0, 60, 200]
    assert list(_bands(rows, 2, reach, np.array([150]))) == [0, 150, 200]
    assert list(_bands(rows, 2, reach, np.array([3]))) == [0, 8, 200]  # 4 steps tall
    assert list(_bands(rows, 3, reach, np.array([3]))) == [0, 66, 133, 200]
    assert list(_bands(rows, 1, reach, np.array([3]))) == [0, 200]
    assert list(_bands(10, 2, reach, np.array([3]))) == [0, 10]


def test_flow_field_with_many_goals_in_bands(rules, demo, monkeypatch):
    # Hundreds of goals, some on a band's border: each band starts from the goals in it or
    # a step from it, and the others' goals reach it by their bands' posts.
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    rows = g.grid.shape[0]
    cells = np.argwhere(np.isfinite(g.base))
    border = cells[np.abs(cells[:, 0] - rows // 2) <= 2][::7]
    goals = [g.grid.rc_to_xy(tuple(rc)) for rc in np.concatenate([cells[::211], border])]
    assert len(goals) > 300
    fields = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(numba, "get_num_threads", lambda t=threads: t)
        fields.append(flow_field(g, goals))
    for f in fields[1:]:
        np.testing.assert_array_equal(f.cost, fields[0].cost)
        np.testing.assert_array_equal(f.step, fields[0].step)
    assert (fields[0].cost[tuple(np.array([g.grid.xy_to_rc(xy) for xy in goals]).T)] == 0).all()


def test_flow_field_in_bands_through_a_serpentine(rules, monkeypatch):
    # River walls open at the top and the bottom in turn: the route to the goal crosses
    # the border between two bands at every wall.
    walls = [feature("river", rect(x, 0 if i % 2 else 4, x + 1, 16 if i % 2 else 20))
             for i, x in enumerate(range(3, 38, 3))]
    g = grid_for(rules, walls)
    goal = [(39.25, 10.25)]
    fields = []
    for threads in (1, 2, 5):
        monkeypatch.setattr(numba, "get_num_threads", lambda t=threads: t)
        fields.append(flow_field(g, goal))
    one = fields[0]
    far = (0.25, 10.25)
    lattice = engine.route(g, far, goal[0], any_angle=False)
    assert one.cost_at(far) == pytest.approx(lattice.cost, rel=1e-12)
    assert one.cost_at(far) > 3 * 39  # up and down every gap
    for f in fields[1:]:
        np.testing.assert_array_equal(f.cost, one.cost)
        np.testing.assert_array_equal(f.step, one.step)
    # The driver run as Python, counting its searches: two rounds of two bands, then
    # one search over the whole grid takes on what the second round still posts
    # (else a round per wall).
    searches = []  # (first cell, end, cells expanded or -1)
    search = skern.flow.reverse_search
    lo = list(inspect.signature(search.py_func).parameters).index("lo")  # then hi

    def counted(*args):
        out = search(*args)
        searches.append((args[lo], args[lo + 1], out[0]))
        return out

    monkeypatch.setattr(skern.flow, "reverse_search", counted)
    monkeypatch.setattr(skern, "field_band", skern.flow.field_band.py_func)
    monkeypatch.setattr(skern, "field_rest", skern.flow.field_rest.py_func)
    monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
    np.testing.assert_allclose(flow_field(g, goal).cost, one.cost, rtol=1e-12)
    assert len(searches) == 2 * 2 + 1
    # The last search outgrowing its queue (made to, once): everything again, with room.
    searches.clear()

    def overflowing(*args):
        if (args[lo], args[lo + 1]) == (0, g.base.size) and "overflowed" not in searches:
            searches.append("overflowed")
            return -1, 0
        return counted(*args)

    monkeypatch.setattr(skern.flow, "reverse_search", overflowing)
    again = flow_field(g, goal)
    assert searches.index("overflowed") == 2 * 2 and len(searches) == 2 * (2 * 2 + 1)
    np.testing.assert_array_equal(again.cost, fields[1].cost)
    np.testing.assert_array_equal(again.step, fields[1].step)


def test_flow_field_outgrowing_its_queue_starts_again(rules, demo, monkeypatch):
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    goals = [(90.25, 30.25), (20.25, 100.25)]
    monkeypatch.setattr(numba, "get_num_threads", lambda: 2)
    expected = flow_field(g, goals)
    # every bucket overflows its first row
    monkeypatch.setattr(skern, "stack_width", lambda n, rows: 1)
    got = flow_field(g, goals)
    np.testing.assert_array_equal(got.cost, expected.cost)
    np.testing.assert_array_equal(got.step, expected.step)


def test_flow_field_takes_a_repeated_goal_once(rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    once = flow_field(g, [(90.25, 30.25)])
    many = flow_field(g, [(90.25, 30.25), (90.4, 30.1)] * 500)  # one cell, a thousand times
    np.testing.assert_array_equal(many.cost, once.cost)
    np.testing.assert_array_equal(many.step, once.step)


def test_flow_field_with_rear_ranks_is_a_lower_bound(rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("humans", ranks=3))
    goal = (90.25, 30.25)
    f = flow_field(g, [goal])
    rng = np.random.default_rng(2)
    for flat in rng.choice(np.flatnonzero(np.isfinite(f.cost)), 15, replace=False):
        xy = _centre(g, flat)
        field = f.cost.flat[flat]
        assert engine.route(g, xy, goal, any_angle=False).cost >= field - 1e-9
        assert _follow_cost(g, f, xy) >= field - 1e-9


def test_flow_field_rejects_bad_goals(rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("humans"))
    with pytest.raises(InputError, match="at least one goal"):
        flow_field(g, [])
    with pytest.raises(InputError, match=r"goal 1: .*off the table"):
        flow_field(g, [(5, 5), (500, 5)])
    with pytest.raises(InputError, match=r"goal 0: .*impassable"):
        flow_field(g, [g.grid.rc_to_xy(tuple(np.argwhere(np.isinf(g.base))[0]))])
    with pytest.raises(InputError, match="limit"):
        flow_field(g, [(5, 5)], limit=-1)


def test_choose_position_ranks_reachable_cells(rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("humans", depth=0))
    f = flow_field(g, [(150.25, 60.25)])
    enemies = [(rules.unit("orcs"), (150, 60)), (rules.unit("goblins"), (140, 90))]
    t = threat_map(demo, rules, enemies)
    at = (110, 60)
    options = choose_position(g, at, f, t, top=4)
    assert len(options) == 4
    r = engine.reach(g, at)
    for o in options:
        assert o.cost == pytest.approx(r.cost_at(o.at)) and o.cost <= g.unit.move + 1e-9
        assert o.score == pytest.approx(sum(o.parts.values()))
        assert set(o.parts) == set(DEFAULT_WEIGHTS)
        assert o.parts["progress"] == pytest.approx(f.cost_at(at) - f.cost_at(o.at))
        assert o.parts["threat"] == DEFAULT_WEIGHTS["threat"] * t.count[g.grid.xy_to_rc(o.at)]
        assert o.reasons and o.as_dict()["at"] == [round(v, 6) for v in o.at]
    scores = [o.score for o in options]
    assert scores == sorted(scores, reverse=True)
    for a in options:
        for b in options:
            assert a is b or math.dist(a.at, b.at) >= g.unit.frontage
    # Caring only about threat, the best cell is out of every enemy's reach.
    safe = choose_position(g, at, f, t, weights={"progress": 0, "cover": 0, "concealment": 0,
                                                  "disorder": 0, "threat": -1})[0]
    assert t.count[g.grid.xy_to_rc(safe.at)] == 0
    # Caring only about progress, the best cell is the reachable one nearest the goal.
    far = choose_position(g, at, f, t, weights={"cover": 0, "concealment": 0, "disorder": 0,
                                                "threat": 0})[0]
    assert far.parts["progress"] == pytest.approx(
        f.cost_at(at) - min(f.cost.flat[c] for c in r.cells))
    # Cover and disorder come from the ground's effects.
    woods = choose_position(g, (30, 48), weights={"progress": 0, "cover": 1, "disorder": 0},
                            top=1, spacing=0)[0]
    assert woods.parts["cover"] == 2 and any("medium cover" in s for s in woods.reasons)
    # Friends' positions are avoided.
    moved = choose_position(g, at, f, t, avoid=[options[0].at], top=1)[0]
    assert math.dist(moved.at, options[0].at) >= g.unit.frontage


def test_choose_position_rejects_bad_input(rules, demo):
    g = engine.cost_grid(demo, rules, rules.unit("humans"))
    other = engine.cost_grid(demo, rules, rules.unit("goblins"))
    with pytest.raises(InputError, match="unknown weight 'speed'"):
        choose_position(g, (20, 20), weights={"speed": 1})
    with pytest.raises(InputError, match="weight cover"):
        choose_position(g, (20, 20), weights={"cover": math.nan})
    with pytest.raises(InputError, match="top"):
        choose_position(g, (20, 20), top=0)
    with pytest.raises(InputError, match="spacing"):
        choose_position(g, (20, 20), spacing=-1)
    with pytest.raises(InputError, match="another cost grid"):
        choose_position(g, (20, 20), flow_field(other, [(50, 50)]))
    with pytest.raises(InputError, match="allowance"):
        choose_position(g, (20, 20), allowance=-1)
    with pytest.raises(InputError, match="off the table"):
        choose_position(g, (20, 200))


def test_guide_example_prints_what_it_shows(monkeypatch, capsys):
    from .conftest import ROOT

    guide = (ROOT / "docs" / "ai.md").read_text("utf-8")
    section = guide.split("## Choosing a position")[1]
    block = section.split("```python\n")[1].split("```")[0]
    shown = section.split("```text\n")[1].split("```")[0]
    monkeypatch.chdir(ROOT)
    exec(compile(block, "docs/ai.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2 [(1, 4.1183") and out[1] == "4"
    assert out[2] == "71.85 cm to the objective, 50 steps"
    assert out == shown.splitlines()


@pytest.mark.parametrize(("item", "words"), [
    (("a", 1), r"^unit 0: a point must be two numbers x,y, got \('a', 1\)"),
    ("12", r"^unit 0: a point must be two numbers x,y, got '12'"),  # was read as (1, 2)
    ((True, True), r"^unit 0: a point must be two numbers"),  # was (1, 1)
])
def test_reach_army_rejects_a_malformed_position(rules, demo, item, words):
    with pytest.raises(InputError, match=words):
        reach_army(demo, rules, [(rules.unit("humans"), item)])
    with pytest.raises(InputError, match="unit 0: expected"):
        reach_army(demo, rules, [item])


def test_reach_turns_refuses_a_horizon_beyond_int16():
    rules = engine.load_rules("fantasy-warlord")
    g = engine.cost_grid(engine.load_map(MAPS / "examples" / "goblins.geojson"), rules,
                         rules.unit("goblins"))
    with pytest.raises(InputError, match="from 0 to 32767"):
        reach_turns(g, (0.25, 3.25), 10**6, 0.0005)  # turn counts wrapped round to negatives


def test_reach_turns_with_a_vast_allowance_are_one_turn_away(rules):
    g = grid_for(rules, [], width=20, height=20)
    turns = reach_turns(g, (1, 1), 3, 1e10)
    assert (turns == 1).sum() == turns.size - 1 and turns[g.grid.xy_to_rc((1, 1))] == 0
    # was 0 turns for 415 cells: their cost is below 1e-9 allowances


def test_choose_position_refuses_what_it_cannot_score(rules):
    g = grid_for(rules, [], width=20, height=20)
    with pytest.raises(InputError, match=r"^the weights are too large: a score overflows$"):
        choose_position(g, (1, 1), flow_field(g, [(18, 18)]), weights={"progress": 1e308})
    with pytest.raises(InputError, match=r"^the unit at \(1, 1\) is beyond the flow field's "
                                         r"limit \(15\)"):
        choose_position(g, (1, 1), flow_field(g, [(18, 18)], limit=15))  # progress was 0
    assert choose_position(g, (1, 1), flow_field(g, [(18, 18)]))[0].parts["progress"] > 19
