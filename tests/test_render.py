"""engine.render: what the pictures say, read off the matplotlib figures they build
(titles, axis labels, the threat colour bar, contour labels, legends)."""

import re

import numpy as np
import pytest
from matplotlib.colors import BoundaryNorm

import engine
from engine import render
from engine.ai import threat_map
from engine.ai.visibility import viewshed
from engine.cli import main
from engine.render import render_ai_png, render_png, render_viewshed_png
from engine.search import flow_field
from engine.terrain import layers

from .conftest import MAPS, battlefield, feature, rect

PNG = b"\x89PNG"


@pytest.fixture(scope="module")
def small(rules):
    """A 40 x 20 cm table with a wood, its layers, two overlapping enemies' threat
    (counts 0, 1 and 2) and a humans' flow field to its middle."""
    bf = engine.load_map(battlefield([feature("woods", rect(24, 4, 30, 10))],
                                     units=rules.units))
    lay = layers(bf, rules)
    threat = threat_map(bf, rules, [(rules.unit("orcs"), (8, 10)),
                                    (rules.unit("goblins"), (14, 10))])
    flow = flow_field(engine.cost_grid(bf, rules, rules.unit("humans")), [(20, 10)])
    return bf, lay, threat, flow


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _heat(ax):
    """The threat map's image: the one normed by whole counts."""
    (heat,) = [im for im in ax.images if isinstance(im.norm, BoundaryNorm)]
    return heat


def test_threat_colour_bar_steps_through_whole_counts(tmp_path, small):
    _, lay, threat, _ = small
    most = int(threat.count.max())
    assert most == 2  # the fixture's two reaches overlap
    fig = render_ai_png(tmp_path / "t.png", lay, threat=threat)
    assert (tmp_path / "t.png").read_bytes().startswith(PNG)
    heat = _heat(fig.axes[0])
    # One band per count 0..most, each a colour of its own, edges half way between counts.
    np.testing.assert_array_equal(heat.norm.boundaries, np.arange(-0.5, most + 1))
    assert heat.cmap.N == most + 1 == heat.norm.Ncmap
    colours = [tuple(heat.cmap(heat.norm(n))) for n in range(most + 1)]
    assert len(set(colours)) == most + 1
    assert colours[0][3] == 0  # no enemy: the terrain shows through
    bar = heat.colorbar
    np.testing.assert_array_equal(bar.get_ticks(), np.arange(most + 1))
    labels = [t.get_text() for t in bar.ax.get_yticklabels()]
    assert labels == [str(n) for n in range(most + 1)]
    assert not bar.ax.yaxis.get_minorticklocs().size
    assert bar.ax.get_ylabel() == "enemies that can reach the cell next turn"


def test_threat_colour_bar_ticks_stay_whole_and_few_for_many_enemies(tmp_path, small):
    bf, lay, threat, _ = small
    many = type(threat)(bf, threat.rules, threat.enemies, threat.reaches, threat.charge,
                        np.minimum(threat.count * 15, 30).astype(np.int16), threat.margin)
    heat = _heat(render_ai_png(tmp_path / "t.png", lay, threat=many).axes[0])
    ticks = heat.colorbar.get_ticks()
    np.testing.assert_array_equal(heat.norm.boundaries, np.arange(-0.5, 31))
    assert len(ticks) <= 12 and ticks[0] == 0
    np.testing.assert_array_equal(ticks, np.round(ticks))


def test_sides_are_named_attacker_and_defender_by_default(tmp_path, small):
    _, lay, threat, _ = small
    units = [((8, 10), 1, "orcs"), ((14, 10), 1, "goblins"), ((30, 15), 0, "humans")]
    legend = _legend(render_ai_png(tmp_path / "t.png", lay, threat=threat,
                                   units=units).axes[0])
    assert "defender" in legend and "attacker" in legend
    assert not [t for t in legend if re.fullmatch(r"side \d+", t)]


def test_sides_take_the_names_given(tmp_path, small):
    _, lay, _, _ = small
    units = [((8, 10), 0, "A1"), ((14, 10), 1, "B1"), ((20, 10), 2, "C1")]
    ax = render_ai_png(tmp_path / "t.png", lay, units=units,
                       sides=("Red army", "Blue army", "Allies")).axes[0]
    assert [t for t in _legend(ax) if "army" in t or t == "Allies"] == [
        "Red army", "Blue army", "Allies"]
    assert [t.get_text() for t in ax.texts] == ["A1", "B1", "C1"]


def test_flow_cost_contours_are_labelled_with_cost_and_units(tmp_path, small):
    _, lay, _, flow = small
    ax = render_ai_png(tmp_path / "f.png", lay, flow=flow).axes[0]
    (contours,) = [c for c in ax.collections if getattr(c, "labelTexts", None)]
    texts = [t.get_text() for t in contours.labelTexts]
    assert texts and all(re.fullmatch(r"\d+(\.\d+)? cm", t) for t in texts), texts
    values = {float(t.removesuffix(" cm")) for t in texts}
    assert values <= {float(v) for v in contours.levels}
    assert len(values) > 1  # more than one contour labelled
    assert "cost to the goal (cm)" in _legend(ax)


def test_titles_carry_units_in_brackets(tmp_path, small, rules):
    bf, lay, threat, flow = small
    seen = viewshed(bf, rules, (5, 5))
    vs = render_viewshed_png(tmp_path / "v.png", lay, (5, 5), seen, table_units="in")
    assert vs.axes[0].get_xlabel() == "x (in)"
    # Default titles say what is drawn, with the units in brackets.
    assert render_ai_png(tmp_path / "a.png", lay, threat=threat, flow=flow).axes[0] \
        .get_title() == "threat of 2 enemies; flow field for humans toward (20, 10) (cm)"
    assert render_viewshed_png(tmp_path / "v.png", lay, (5, 5), seen, table_units="cm") \
        .axes[0].get_title() == "seen from (5, 5) (cm)"
    assert render_ai_png(tmp_path / "a.png", lay, title="").axes[0].get_title() == ""


def test_axes_are_labelled_in_the_battlefields_units(tmp_path, small, rules):
    bf, lay, threat, flow = small
    seen = viewshed(bf, rules, (5, 5))
    figs = [render_ai_png(tmp_path / "a.png", lay, threat=threat),
            render_ai_png(tmp_path / "f.png", lay, flow=flow),
            render_viewshed_png(tmp_path / "v.png", lay, (5, 5), seen, table_units="cm"),
            render_png(tmp_path / "r.png", flow.grid)]
    for fig in figs:
        ax = fig.axes[0]
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("x (cm)", "y (cm)")
    ax = render_ai_png(tmp_path / "u.png", lay, threat=threat, table_units="in").axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x (in)", "y (in)")


def test_command_line_pictures_have_no_dangling_units(tmp_path, monkeypatch):
    """The pictures the commands draw, as the commands title them."""
    drawn = []

    def keeping(draw):
        def keep(*a, **kw):
            drawn.append(draw(*a, **kw))
            return drawn[-1]
        return keep

    for name in ("render_ai_png", "render_viewshed_png"):
        monkeypatch.setattr(render, name, keeping(getattr(render, name)))
    demo = str(MAPS / "demo.geojson")
    assert main(["threat", demo, "--enemy", "orcs@150,60", "--enemy", "goblins@150,80",
                 "--charge", "--png", str(tmp_path / "t.png")]) == 0
    assert main(["visible", demo, "--from", "120,60", "--png", str(tmp_path / "v.png")]) == 0
    assert len(drawn) == 2
    for fig in drawn:
        ax = fig.axes[0]
        assert not ax.get_title().endswith(", cm") and ax.get_title().endswith(" (cm)")
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("x (cm)", "y (cm)")
    assert drawn[0].axes[0].get_title() == "threat of 2 enemies charging (cm)"
    assert not [t for t in _legend(drawn[0].axes[0]) if re.fullmatch(r"side \d+", t)]
