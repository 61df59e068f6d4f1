"""engine serve: the HTTP API answers as the CLI's --json does, refuses bad requests
with one-line 4xx errors, caches grids within a memory budget and keeps answering
under load."""

import asyncio
import json
import re
import socket

import httpx2
import pytest
from fastapi.testclient import TestClient

import engine
from engine.cli import main
from engine.serve import create_app
from engine.serve.cache import GridCache, held_bytes

from .conftest import EXAMPLES, MAPS, VILLAGE_RULES, battlefield, feature, rect, village_map

DEMO = str(MAPS / "demo.geojson")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("serve")
    (path / "maps").mkdir()
    (path / "maps" / "village.geojson").write_text(json.dumps(village_map()))
    (path / "village.toml").write_text(VILLAGE_RULES)
    return path


@pytest.fixture(scope="module")
def client(folder):
    app = create_app(folder / "maps", [folder / "village.toml"], cache_mb=256, max_body_mb=1)
    with TestClient(app) as c:
        yield c


def cli_json(capsys, argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_health_schema_and_docs(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    paths = client.get("/openapi.json").json()["paths"]
    for question in ("reach", "route", "price", "manoeuvre", "charge", "network", "visible",
                     "threat", "flow"):
        assert "post" in paths[f"/v1/{question}"]
    assert {"/v1/maps", "/v1/rules", "/healthz"} <= set(paths)
    assert "swagger" in client.get("/docs").text.lower()


def test_maps_and_rules_say_what_the_server_has(client):
    maps = {m["name"]: m for m in client.get("/v1/maps").json()["maps"]}
    assert maps["demo"] == {"name": "demo", "source": "shipped", "width": 180.0,
                            "height": 120.0, "units": "cm", "cell": 0.5,
                            "features": len(engine.load_map("demo").features)}
    assert maps["village"]["source"] == "folder" and maps["village"]["width"] == 30
    rules = {r["name"]: r for r in client.get("/v1/rules").json()["rules"]}
    assert set(rules) == {"fantasy-warlord", "battlesystem", "reglamento", "village"}
    assert rules["village"]["races"] == [{"race": "peasants", "move": 10.0, "depth": 2.0,
                                          "frontage": rules["village"]["races"][0]["frontage"],
                                          "troop": "infantry", "flying": False,
                                          "swimming": False}]
    assert rules["fantasy-warlord"]["title"] == "Fantasy Warlord"


# Each question as the CLI asks it and as a body: the answers must be equal.
SAME = [
    (["reach", DEMO, "--race", "goblins", "--ranks", "2", "--at", "30,40", "--probe", "35,45",
      "--probe", "170,100"],
     ("reach", {"map": "demo", "race": "goblins", "ranks": 2, "at": [30, 40],
                "probes": [[35, 45], [170, 100]]})),
    (["reach", DEMO, "--race", "humans", "--depth", "0", "--lattice", "--move", "12",
      "--at", "30.1,40.3", "--probe", "40.2,47.9"],
     ("reach", {"map": "demo", "race": "humans", "depth": 0, "lattice": True, "move": 12,
                "at": [30.1, 40.3], "probes": [[40.2, 47.9]]})),
    (["route", DEMO, "--race", "humans", "--ranks", "2", "--from", "30,40", "--to", "170,95"],
     ("route", {"map": "demo", "race": "humans", "ranks": 2, "from": [30, 40],
                "to": [170, 95]})),
    (["price", str(EXAMPLES / "wood-elves.geojson"), "--race", "humans", "--path", "0,0.25",
      "10,0.25"],
     ("price", {"map": "@wood-elves", "race": "humans", "path": [[0, 0.25], [10, 0.25]]})),
    (["manoeuvre", str(MAPS / "battlesystem" / "manoeuvres.geojson"), "--rules", "battlesystem",
      "--race", "infantry", "--at", "5,5", "--kind", "frontage", "--figures", "2"],
     ("manoeuvre", {"map": "@battlesystem/manoeuvres", "rules": "battlesystem",
                    "race": "infantry", "at": [5, 5], "kind": "frontage", "figures": 2})),
    (["charge", str(MAPS / "battlesystem" / "charge.geojson"), "--rules", "battlesystem",
      "--race", "infantry", "--from", "1,5", "--to", "10,5", "--min-range", "2"],
     ("charge", {"map": "@battlesystem/charge", "rules": "battlesystem", "race": "infantry",
                 "from": [1, 5], "to": [10, 5], "min_range": 2})),
    (["network", str(MAPS / "crossings.geojson"), "--race", "humans"],
     ("network", {"map": "crossings", "race": "humans"})),
    (["network", str(MAPS / "crossings.geojson")], ("network", {"map": "crossings"})),
    (["visible", DEMO, "--from", "30,40", "--to", "100,60"],
     ("visible", {"map": "demo", "from": [30, 40], "to": [100, 60]})),
    (["visible", DEMO, "--from", "30,40", "--flying"],
     ("visible", {"map": "demo", "from": [30, 40], "flying": True})),
    (["threat", DEMO, "--enemy", "orcs@150,60", "--enemy", "goblins@150,80", "--charge",
      "--probe", "150,70", "--probe", "10,10"],
     ("threat", {"map": "demo", "enemies": [{"race": "orcs", "at": [150, 60]},
                                            {"race": "goblins", "at": [150, 80]}],
                 "charge": True, "probes": [[150, 70], [10, 10]]})),
    (["flow", DEMO, "--race", "humans", "--goal", "90,30", "--from", "20,20", "--from",
      "170,110", "--limit", "60"],
     ("flow", {"map": "demo", "race": "humans", "goals": [[90, 30]],
               "from": [[20, 20], [170, 110]], "limit": 60})),
]


def _body(body: dict) -> dict:
    """A body whose ``"@name"`` map is sent inline, as the file maps/name.geojson holds it."""
    if body["map"].startswith("@"):
        path = (EXAMPLES if "/" not in body["map"] else MAPS) / f"{body['map'][1:]}.geojson"
        return {**body, "map": json.loads(path.read_text())}
    return body


@pytest.mark.parametrize(("argv", "asked"), SAME, ids=[" ".join(a[:1] + a[2:5]) for a, _ in SAME])
def test_answers_equal_the_cli_json(client, capsys, argv, asked):
    question, body = asked
    answer = client.post(f"/v1/{question}", json=_body(body))
    assert answer.status_code == 200, answer.text
    assert answer.json() == cli_json(capsys, argv)


def test_named_maps_and_registered_rules(client, capsys, folder):
    body = {"map": "village", "rules": "village", "race": "peasants", "depth": 0,
            "from": [2, 10], "to": [25, 10]}
    answer = client.post("/v1/route", json=body).json()
    assert answer == cli_json(capsys, ["route", str(folder / "maps" / "village.geojson"),
                                       "--rules", str(folder / "village.toml"), "--race",
                                       "peasants", "--depth", "0", "--from", "2,10",
                                       "--to", "25,10"])
    assert answer["cost"] == pytest.approx(8 + 2 * 10 + 5)  # 10 cm of mud at x2
    inline = client.post("/v1/route", json={**body, "map": village_map()}).json()
    assert inline == answer


BAD = [
    ("malformed JSON", "reach", b'{"map": "demo", "race": ', 400, "malformed JSON"),
    ("not an object", "reach", b"[1, 2]", 422, "a JSON object"),
    ("a string for a number", "reach",
     {"map": "demo", "race": "humans", "at": [30, 40], "move": "5"}, 422, "move"),
    ("a bool for a number", "route",
     {"map": "demo", "race": "humans", "from": [True, 1], "to": [5, 5]}, 422, "from"),
    ("three numbers for a point", "reach",
     {"map": "demo", "race": "humans", "at": [30, 40, 1]}, 422, "at"),
    ("a number for a map", "reach", {"map": 3, "race": "humans", "at": [30, 40]}, 422, "map"),
    ("an unknown key", "reach",
     {"map": "demo", "race": "humans", "at": [30, 40], "rank": 2}, 422, "rank"),
    ("probes for a grid", "fields/reach",
     {"map": "demo", "race": "humans", "at": [30, 40], "probes": [[-5, 1]]}, 422, "probes"),
    ("probes for a threat grid", "fields/threat",
     {"map": "demo", "enemies": [{"race": "orcs", "at": [1, 1]}], "probes": []}, 422, "probes"),
    ("starts for a flow grid", "fields/flow",
     {"map": "demo", "race": "humans", "goals": [[1, 1]], "from": [[1e9, 1]]}, 422, "from"),
    ("a target for a sight grid", "fields/visible",
     {"map": "demo", "from": [30, 40], "to": [1e9, 1]}, 422, "to"),
    ("a missing key", "route", {"map": "demo", "race": "humans", "from": [30, 40]}, 422,
     "to is missing"),
    ("ranks and depth", "reach",
     {"map": "demo", "race": "humans", "at": [30, 40], "ranks": 2, "depth": 3}, 422,
     "ranks or depth"),
    ("an unknown race", "reach", {"map": "demo", "race": "elves", "at": [30, 40]}, 422,
     "unknown race 'elves'"),
    ("an unknown enemy", "threat",
     {"map": "demo", "enemies": [{"race": "elves", "at": [1, 1]}]}, 422, "unknown race"),
    ("a point off the map", "reach", {"map": "demo", "race": "humans", "at": [30, 400]}, 422,
     "off the table"),
    ("a negative move", "reach",
     {"map": "demo", "race": "humans", "at": [30, 40], "move": -2}, 422, "move"),
    ("a goal on impassable ground", "route",
     {"map": "demo", "race": "humans", "from": [15, 60], "to": [108.5, 30]}, 422,
     "impassable ground"),
    ("no route", "route",
     {"map": battlefield([feature("building", rect(10, -1, 11, 7))], 30, 6), "race": "humans",
      "from": [1, 1], "to": [20, 1]}, 422, "no route from"),
    ("a rules path", "reach",
     {"map": "demo", "rules": "../../etc/passwd", "race": "humans", "at": [1, 1]}, 422,
     "unknown rules '../../etc/passwd'"),
    ("an absolute rules path", "reach",
     {"map": "demo", "rules": "/etc/passwd", "race": "humans", "at": [1, 1]}, 422,
     "unknown rules '/etc/passwd'"),
    ("a rules file's path", "reach",
     {"map": "demo", "rules": "{folder}/village.toml", "race": "peasants", "at": [1, 1]}, 422,
     "unknown rules"),
    ("a map path", "reach", {"map": "/etc/passwd", "race": "humans", "at": [1, 1]}, 422,
     "unknown map '/etc/passwd'"),
    ("a relative map path", "reach",
     {"map": "../maps/demo.geojson", "race": "humans", "at": [1, 1]}, 422, "unknown map"),
    ("a broken inline map", "reach",
     {"map": {"type": "FeatureCollection"}, "race": "humans", "at": [1, 1]}, 422,
     'map: missing "battlefield"'),
    ("an inline map's unknown terrain", "route",
     {"map": battlefield([feature("wods", rect(1, 1, 2, 2))]), "race": "humans",
      "from": [1, 1], "to": [3, 3]}, 422, "map: feature 0: unknown terrain kind 'wods'"),
    ("a map too large for memory", "reach",
     {"map": battlefield([], 10**6, 10**6), "race": "humans", "at": [1, 1]}, 413,
     "too large for memory"),
    ("a map too large for the server", "reach",  # 10^6 cells: 305 MiB of grids
     {"map": battlefield([], 1000, 1000, cell=1), "race": "humans", "at": [1, 1]}, 413,
     "too large for this server's memory"),
    ("a body over the limit", "reach",
     {"map": battlefield([feature("woods", rect(1, 1, 2, 2), name="x" * 2**20)]),
      "race": "humans", "at": [1, 1]}, 413, "larger than the 1 MiB"),
    ("nested too deeply", "reach", b"[" * 100_000, 400, "nested too deeply"),
    ("a key given twice", "reach",  # the last would win: at [50, 40]
     b'{"map": "demo", "race": "humans", "at": [30, 40], "at": [50, 40]}', 400,
     "the body: key 'at' appears twice in one object"),
    ("a key given twice in an inline map", "reach",
     b'{"map": {"type": "FeatureCollection", "features": [], "battlefield": {"width": 9, '
     b'"height": 9, "width": 8}}, "race": "humans", "at": [1, 1]}', 400,
     "key 'width' appears twice"),
    ("NaN", "reach", b'{"map": "demo", "race": "humans", "at": [NaN, 1]}', 422, "finite"),
    ("an empty body", "reach", b"", 400, "the body is empty"),
    ("keys by the server's own names", "route",
     {"map": "demo", "race": "humans", "start": [30, 40], "goal": [60, 40]}, 422,
     "from is missing"),
    ("a shipped map that does not suit the rules", "reach",
     {"map": "demo", "rules": "battlesystem", "race": "infantry", "at": [20, 20]}, 422,
     "map 'demo': the map measures in centimetres"),
    ("ranks of 51 digits", "reach",
     {"map": "demo", "race": "humans", "at": [30, 40], "ranks": 10**50}, 422,
     f"got {10**50}"),
    ("a path thousands of times across the table", "price",
     {"map": battlefield([], 30, 6), "race": "humans", "path": [[1, 1], [29, 5]] * 4000}, 422,
     "more than the 500,000 one pricing takes: price it in parts"),
    ("an enemy not an object", "threat", {"map": "demo", "enemies": [5]}, 422,
     "enemies[0]: must be a JSON object"),
    ("a frontage change of 10^400 figures", "manoeuvre",
     json.dumps({"map": battlefield([], 30, 10, units="in", cell=0.25), "rules": "battlesystem",
                 "race": "infantry", "at": [15, 5], "kind": "frontage", "figures": 0}
                ).replace('"figures": 0', '"figures": 1' + "0" * 400).encode(), 422,
     "figures from 1 to 1000000, got a 401-digit integer"),
    ("a path of one point", "price", {"map": "demo", "race": "humans", "path": [[1, 1]]}, 422,
     "path: List should have at least 2 items"),
    ("an integer of 5000 digits", "reach",
     b'{"map": "demo", "race": "humans", "at": [1, 1], "move": ' + b"9" * 5000 + b"}", 400,
     "JSON"),
]


@pytest.mark.parametrize(("what", "question", "body", "status", "words"), BAD,
                         ids=[b[0] for b in BAD])
def test_bad_requests_get_a_one_line_4xx(client, folder, what, question, body, status, words):
    if isinstance(body, bytes):
        answer = client.post(f"/v1/{question}", content=body,
                             headers={"content-type": "application/json"})
    else:
        text = json.dumps(body).replace("{folder}", str(folder))
        answer = client.post(f"/v1/{question}", content=text,
                             headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    error = answer.json()
    assert set(error) == {"error"} and "\n" not in error["error"], error
    assert words in error["error"], error


@pytest.mark.parametrize("content_type", [None, "text/plain",
                                          "application/x-www-form-urlencoded"])
def test_a_body_not_sent_as_json_is_told_to_say_so(client, content_type):
    headers = {} if content_type is None else {"content-type": content_type}
    body = json.dumps({"map": "demo", "race": "humans", "at": [30, 40]})
    answer = client.post("/v1/reach", content=body, headers=headers)
    sent = "without a Content-Type" if content_type is None else f"as {content_type!r}"
    assert answer.status_code == 415, answer.text
    assert answer.json()["error"] == (f"the body came {sent}: send it as JSON, with "
                                      "Content-Type: application/json")


def test_a_folder_map_is_named_never_its_path(tmp_path):
    (tmp_path / "broken.geojson").write_text("{not json")
    (tmp_path / "bare.geojson").write_text(json.dumps({"type": "FeatureCollection"}))
    with TestClient(create_app(tmp_path)) as c:
        for name, words in (("broken", "map 'broken': not valid JSON"),
                            ("bare", "map 'bare': missing \"battlefield\"")):
            answer = c.post("/v1/reach", json={"map": name, "race": "humans", "at": [1, 1]})
            error = answer.json()["error"]
            assert answer.status_code == 422 and error.startswith(words), error
            assert str(tmp_path) not in error


def test_a_body_sent_in_chunks_is_cut_off_at_the_limit(client):
    def chunks():
        yield b'{"map": "demo", "race": "humans", "at": [1, 1], "x": "'
        for _ in range(40):
            yield b"x" * 50_000
        yield b'"}'

    answer = client.post("/v1/reach", content=chunks(),
                         headers={"content-type": "application/json"})
    assert answer.status_code == 413 and "1 MiB" in answer.json()["error"]


def test_wrong_paths_and_methods_answer_in_json(client):
    assert client.get("/v1/nothing").status_code == 404
    assert "error" in client.get("/v1/nothing").json()
    answer = client.get("/v1/reach")
    assert answer.status_code == 405 and "GET" in answer.json()["error"]


def test_grids_are_cached_per_map_rules_and_profile(folder):
    app = create_app(folder / "maps", [folder / "village.toml"], cache_mb=256, max_body_mb=1)
    with TestClient(app) as client:  # a cache of its own: what other tests asked is not in it
        _cached_per_map_rules_and_profile(client)


def _cached_per_map_rules_and_profile(client):
    cache = client.app.state.engine.cache
    body = {"map": "crossings", "race": "dwarves", "at": [20, 20]}
    first = client.post("/v1/reach", json=body).json()
    hits, misses = cache.hits, cache.misses
    grids = {k: v for k, v in _grids(cache).items()}
    assert client.post("/v1/reach", json={**body, "at": [30, 25]}).status_code == 200
    assert client.post("/v1/reach", json=body).json() == first
    assert (cache.hits, cache.misses) == (hits + 2, misses)
    assert _grids(cache) == grids  # the same grid objects: nothing rasterised again
    client.post("/v1/reach", json={**body, "race": "orcs"})  # another profile, same battlefield
    assert cache.misses == misses and len(_grids(cache)) == len(grids) + 1


def _grids(cache) -> dict:
    """The cost grids the cache holds, by (map, rules, unit) -> id."""
    out = {}
    for key, entry in cache._entries.items():
        for k, v in entry.battlefield._cache.items():
            if isinstance(v, engine.CostGrid):
                out[(key, k)] = id(v)
    return out


def test_the_cache_drops_the_least_recently_used_beyond_its_budget():
    rules = engine.load_rules("fantasy-warlord")
    one = engine.cost_grid(engine.load_map("demo"), rules, rules.unit("humans"))
    size = held_bytes(one.battlefield)
    assert size > 8 * one.base.size  # at least the grid's multipliers
    cache = GridCache(int(2.5 * size))
    for name in ("a", "b", "a", "c"):  # c pushes out b, used less recently than a
        with cache.battlefield(name, lambda: engine.load_map("demo")) as bf:
            engine.cost_grid(bf, rules, rules.unit("humans"))
    assert list(cache._entries) == ["a", "c"] and cache.nbytes <= cache.budget
    assert (cache.hits, cache.misses) == (1, 3)
    small = GridCache(size // 2)  # one battlefield alone over the budget is not kept
    with small.battlefield("a", lambda: engine.load_map("demo")) as bf:
        engine.cost_grid(bf, rules, rules.unit("humans"))
    assert len(small) == 0


def test_serve_refuses_bad_options_in_one_line(capsys, tmp_path):
    assert main(["serve", "--maps", str(tmp_path / "none")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    broken = tmp_path / "broken.toml"
    broken.write_text("[ruleset\n")
    assert main(["serve", "--rules", str(broken)]) == 2
    assert "not valid TOML" in capsys.readouterr().err
    clash = tmp_path / "battlesystem.toml"
    clash.write_text(VILLAGE_RULES)
    assert main(["serve", "--rules", str(clash)]) == 2
    assert "name of a shipped ruleset" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["serve", "--port", str(taken.getsockname()[1])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("engine: error: cannot listen on 127.0.0.1:") and err.count("\n") == 1


@pytest.mark.parametrize("option", ["--cache-mb", "--max-body-mb"])
@pytest.mark.parametrize("value", ["0", "1e-9", "-1", "nan"])
def test_serve_refuses_a_size_of_nothing(capsys, option, value):
    """A cache or body limit under a byte started a server that refused every request."""
    with pytest.raises(SystemExit) as exc:
        main(["serve", option, value])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and option in err, err


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"cache_mb": 0}, "cache_mb must be a finite number of MiB, a byte or more, got 0"),
    ({"cache_mb": 1e-9}, "cache_mb must be a finite number of MiB, a byte or more, got 1e-09"),
    ({"max_body_mb": float("inf")},
     "max_body_mb must be a finite number of MiB, a byte or more, got inf"),
    ({"max_body_mb": "16"}, "max_body_mb must be a finite number of MiB, a byte or more, got "
                            "'16'"),
    ({"lanes": 0}, "lanes must be a whole number >= 1, got 0"),
    ({"lanes": 1.5}, "lanes must be a whole number >= 1, got 1.5"),
])
def test_create_app_refuses_sizes_it_cannot_serve_with(kwargs, words):
    with pytest.raises(engine.InputError, match="^" + re.escape(words) + "$"):
        create_app(**kwargs)


# Against a real uvicorn process.

def test_a_real_server_binds_loopback_and_says_so(served):
    url, said = served
    assert url.startswith("http://127.0.0.1:") and "this machine only" in said
    assert httpx2.get(f"{url}/healthz", timeout=30).json() == {"status": "ok"}
    page = httpx2.get(f"{url}/", timeout=30)
    assert page.status_code == 200 and "<canvas" in page.text
    assert "function" in httpx2.get(f"{url}/static/viewer.js", timeout=30).text
    bad = httpx2.post(f"{url}/v1/reach", content=b"{", timeout=30,
                      headers={"content-type": "application/json"})
    assert bad.status_code == 400 and "malformed JSON" in bad.json()["error"]
    too_big = httpx2.post(f"{url}/v1/reach", content=b" " * (17 * 2**20), timeout=60,
                          headers={"content-type": "application/json"})
    assert too_big.status_code == 413 and set(too_big.json()) == {"error"}


def _mixed_questions() -> list[tuple[str, dict]]:
    """Questions of every kind on three maps, many sharing a battlefield."""
    out = []
    for i in range(8):
        out.append(("reach", {"map": "demo", "race": ("humans", "orcs")[i % 2],
                              "at": [20 + 15 * i, 30 + 5 * i], "probes": [[100, 60]]}))
        out.append(("route", {"map": "crossings", "race": "humans", "from": [10, 20],
                              "to": [190 - 4 * i, 130]}))
        out.append(("route", {"map": "demo", "race": "goblins", "ranks": 2,
                              "from": [15, 60], "to": [170, 100 - 5 * i]}))
        out.append(("price", {"map": "village", "rules": "village", "race": "peasants",
                              "path": [[1, 10], [29, 10 - i]]}))
        out.append(("threat", {"map": "demo", "enemies": [{"race": "orcs", "at": [150, 60]},
                                                          {"race": "goblins",
                                                           "at": [150 - 5 * i, 80]}],
                               "probes": [[150, 70]]}))
        out.append(("visible", {"map": "demo", "from": [30 + 5 * i, 40], "to": [100, 60]}))
        out.append(("flow", {"map": "crossings", "race": "humans", "goals": [[150, 120]],
                             "from": [[10 + 10 * i, 20]]}))
        out.append(("reach", {"map": "village", "rules": "village", "race": "peasants",
                              "at": [5 + i, 10], "move": 10 + i}))
    return out


def test_64_concurrent_requests_answer_as_one_at_a_time(served):
    url, _ = served
    questions = _mixed_questions()
    assert len(questions) == 64
    with httpx2.Client(base_url=url, timeout=300) as c:
        alone = [c.post(f"/v1/{q}", json=b) for q, b in questions]
    assert all(a.status_code == 200 for a in alone), [a.text for a in alone]

    async def together():
        async with httpx2.AsyncClient(base_url=url, timeout=600) as c:
            return await asyncio.gather(*(c.post(f"/v1/{q}", json=b) for q, b in questions))

    for _ in range(3):  # a race between questions on one battlefield shows up within three
        answers = asyncio.run(asyncio.wait_for(together(), 900))
        assert [a.status_code for a in answers] == [200] * 64
        assert [a.json() for a in answers] == [a.json() for a in alone]


@pytest.mark.parametrize(("where", "race", "start", "goal"), [
    ("crossings", "orcs", [31.93, 73.83], [12.02, 60.2]),
    ("crossings", "orcs", [121.13, 114.39], [92.38, 85.46]),
    ("demo", "dwarves", [36.15, 39.33], [65.37, 56.29]),
    ("demo", "orcs", [174.6, 7.2], [36.8, 114.5]),
])
def test_a_routes_path_sent_back_costs_what_the_route_does(client, where, race, start, goal):
    """A route's path bends a hair inside a cell beside a river or woods; its points
    are sent in full, so that priced again they stand where the route did."""
    rt = client.post("/v1/route", json={"map": where, "race": race, "from": start,
                                        "to": goal}).json()
    priced = client.post("/v1/price", json={"map": where, "race": race,
                                            "path": rt["path"]}).json()
    assert priced["cost"] == rt["cost"] and rt["cost"] is not None


def test_the_drawing_fields_agree_with_the_answers(client):
    import base64

    import numpy as np

    unit = {"map": "demo", "race": "humans", "ranks": 2}
    terrain = client.post("/v1/terrain", json={"map": "demo"}).json()
    assert terrain["shape"] == [240, 360] and terrain["image"].startswith("data:image/png;base64,")
    assert {"terrain": "woods", "colour": "#3f8f3a"} in terrain["legend"]

    ground = client.post("/v1/fields/ground", json=unit).json()
    index = np.frombuffer(base64.b64decode(ground["ground"]), dtype="<u2").reshape(240, 360)
    rules = engine.load_rules("fantasy-warlord")
    g = engine.cost_grid(engine.load_map("demo"), rules, rules.unit("humans", ranks=2))
    multiplier = np.array([np.inf if k["multiplier"] is None else k["multiplier"]
                           for k in ground["kinds"]])
    assert np.array_equal(multiplier[index], g.base)

    at = {"at": [30, 40]}
    field = client.post("/v1/fields/reach", json={**unit, **at}).json()
    answer = client.post("/v1/reach", json={**unit, **at}).json()
    assert len(field["cells"]) == answer["cells"] and field["allowance"] == answer["allowance"]
    assert max(field["cost"]) <= field["allowance"]

    enemies = {"map": "demo", "enemies": [{"race": "orcs", "at": [150, 60]}]}
    threat = client.post("/v1/fields/threat", json=enemies).json()
    assert len(threat["cells"]) == client.post("/v1/threat", json=enemies).json()["cells"]

    sight = {"map": "demo", "from": [30, 40]}
    seen = np.unpackbits(np.frombuffer(base64.b64decode(
        client.post("/v1/fields/visible", json=sight).json()["seen"]), dtype=np.uint8))
    assert int(seen.sum()) == client.post("/v1/visible", json=sight).json()["cells"]

    flow = client.post("/v1/fields/flow", json={**unit, "goals": [[90, 30]]}).json()
    assert flow["goals"] == [[90, 30]] and len(flow["arrows"]) > 1000
    assert all(abs(ux * ux + uy * uy - 1) < 1e-3 for _, _, ux, uy in flow["arrows"])


def test_running_out_of_memory_is_a_413_and_a_bug_a_one_line_500(client, monkeypatch):
    import engine.serve.app as app

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(app, "reach_answer", no_memory)
    body = {"map": "demo", "race": "humans", "at": [30, 40]}
    answer = client.post("/v1/reach", json=body)
    assert answer.status_code == 413 and "out of memory" in answer.json()["error"]

    def bug(*args, **kwargs):
        raise ZeroDivisionError("a\nbug")

    monkeypatch.setattr(app, "reach_answer", bug)
    with TestClient(client.app, raise_server_exceptions=False) as c:
        answer = c.post("/v1/reach", json=body)
    assert answer.status_code == 500
    assert answer.json() == {"error": "internal error: ZeroDivisionError: a bug (please report "
                                      "it)"}


def test_which_hosts_are_this_machine_only():
    from engine.serve.run import _local

    assert _local("127.0.0.1") and _local("::1") and _local("localhost")
    assert not _local("0.0.0.0") and not _local("192.168.1.5") and not _local("example.org")


def test_serve_without_its_extra_says_what_to_install(capsys, monkeypatch):
    import sys

    for name in [m for m in sys.modules if m.startswith("engine.serve")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "fastapi", None)  # as if it were not installed
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "needs fastapi" in err and "tabletop-movement[serve]" in err
