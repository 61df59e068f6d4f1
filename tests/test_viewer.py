"""The viewer in a real headless Chromium (Debian's, driven by Playwright): the
terrain, a unit's reach heatmap, a route with its legs, the threat, flow and sight
toggles, and the readout under the pointer."""

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(),
                                reason="no /usr/bin/chromium (apt-get install chromium)")

UNIT, GOAL, FAR, NEAR = (30, 40), (170, 95), (150, 100), (42, 46)


@pytest.fixture(scope="module")
def page(served):
    from playwright.sync_api import sync_playwright

    url, _ = served
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 950})
            page.set_default_timeout(120_000)
            page.goto(url)
            page.wait_for_function("document.body.dataset.ready === 'yes'")
            yield page
        finally:
            browser.close()


def _pixel(page, xy) -> list[int]:
    """The canvas's colour at table point ``xy``."""
    return page.evaluate("""([x, y]) => {
        const c = document.getElementById('canvas'), t = window.viewer.state.terrain;
        const px = Math.floor(x * c.width / t.width), py = Math.floor(y * c.height / t.height);
        return Array.from(c.getContext('2d').getImageData(px, py, 1, 1).data);
    }""", list(xy))


def _click(page, xy, modifiers=()):
    """Click the board at table point ``xy`` and wait for the answers."""
    box = page.locator("#overlay").bounding_box()
    width = page.evaluate("window.viewer.state.terrain.width")
    scale = box["width"] / width
    page.mouse.move(box["x"] + xy[0] * scale, box["y"] + xy[1] * scale)
    for key in modifiers:
        page.keyboard.down(key)
    page.mouse.click(box["x"] + xy[0] * scale, box["y"] + xy[1] * scale)
    for key in modifiers:
        page.keyboard.up(key)
    page.wait_for_function("document.body.dataset.busy === 'no'")


def test_the_page_draws_the_terrain_and_its_legend(page):
    legend = page.locator("#legend").inner_text()
    assert "woods" in legend and "river" in legend and "edge of reach" in legend
    assert _pixel(page, (1, 1))[3] == 255  # painted
    assert page.locator("#map").input_value() == "demo"
    races = page.locator("#race option").all_inner_texts()
    assert "humans (move 20)" in races


def test_a_unit_its_reach_and_a_route(page, tmp_path):
    page.select_option("#race", "humans")
    page.fill("#ranks", "2")
    page.dispatch_event("#ranks", "change")
    page.wait_for_function("document.body.dataset.busy === 'no'")
    near, far = _pixel(page, NEAR), _pixel(page, FAR)
    _click(page, UNIT)
    page.wait_for_selector("#board[data-reach=drawn]")
    assert _pixel(page, NEAR) != near  # the heatmap is drawn where the unit can go
    assert _pixel(page, FAR) == far  # and nowhere else
    assert page.locator("#overlay path.edge").count() == 1
    assert "within reach this turn" in page.locator("#summary").inner_text()

    _click(page, GOAL)
    route = page.locator("#overlay polyline.route")
    route.wait_for()
    points = [tuple(map(float, p.split(","))) for p in route.get_attribute("points").split()]
    assert len(points) > 2  # clicked within a screen pixel (0.12 cm here) of each point
    assert points[0] == pytest.approx(UNIT, abs=0.2) and points[-1] == pytest.approx(GOAL, abs=0.2)
    answer = page.evaluate("window.viewer.state.route")
    assert page.locator("#overlay circle.stop").count() == len(answer["stops"]) == \
        answer["turns"] - 1 > 0
    rows = page.locator("#legs tbody tr")
    assert rows.count() == len(answer["legs"]) and page.locator("#legs").is_visible()
    assert "bridge" in page.locator("#legs").inner_text()  # the demo's route crosses it
    assert f"{answer['turns']} turns" in page.locator("#summary").inner_text()
    page.screenshot(path=str(tmp_path / "viewer.png"))
    assert (tmp_path / "viewer.png").stat().st_size > 10_000


def test_hover_shows_the_cost_at_the_cursor(page):
    box = page.locator("#overlay").bounding_box()
    scale = box["width"] / page.evaluate("window.viewer.state.terrain.width")
    page.mouse.move(box["x"] + NEAR[0] * scale, box["y"] + NEAR[1] * scale)
    tip = page.locator("#tip")
    tip.wait_for()
    text = tip.inner_text()
    assert "\u00d7" in text and "reach costs" in text and "left" in text  # the multiplier


def test_threat_flow_and_sight_toggles(page, tmp_path):
    threatened = _pixel(page, (140, 60))
    _click(page, (150, 60), modifiers=("Shift",))
    assert page.locator("#overlay circle.enemy").count() == 1
    assert _pixel(page, (140, 60)) != threatened  # the enemy's reach shaded
    page.uncheck("#show-threat")
    assert _pixel(page, (140, 60)) == threatened
    page.check("#show-threat")

    page.check("#show-flow")
    page.wait_for_function("document.body.dataset.busy === 'no'")
    page.wait_for_selector("#overlay g.flow line", state="attached")
    assert page.locator("#overlay g.flow line").count() > 100

    hidden = _pixel(page, (120, 20))
    page.check("#show-sight")
    page.wait_for_function("document.body.dataset.busy === 'no'")
    seen = page.evaluate("window.viewer.state.seen !== null")
    assert seen and _pixel(page, (120, 20)) != hidden  # the woods hide it from the unit
    page.screenshot(path=str(tmp_path / "viewer-toggles.png"))
