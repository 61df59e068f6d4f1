"""engine batch: answers equal the CLI's --json, bad jobs are error lines, each map's
grids are built once per worker, and no job is lost or answered twice when a worker
or the batch itself is killed (real Dask clusters: a LocalCluster of two processes,
and a scheduler and workers started as processes on loopback)."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine.answers import route_answer, strict
from engine.batch import jobs as batch_jobs
from engine.batch import run as batch_run
from engine.batch import work as batch_work
from engine.batch.run import run_batch
from engine.cli import main

from .conftest import MAPS, MOVINGAI, ROOT

distributed = pytest.importorskip("distributed")

DEMO = str(MAPS / "demo.geojson")
DASK = Path(sys.executable).parent / "dask"
# Every process a test starts ends by itself after this many seconds at most.
LIMIT = ["timeout", "-s", "KILL", "300"] if shutil.which("timeout") else []
ENV = dict(os.environ, NUMBA_NUM_THREADS="1")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_jobs(path: Path, jobs: list) -> Path:
    path.write_text("".join((j if isinstance(j, str) else json.dumps(j)) + "\n" for j in jobs))
    return path


def _results(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _cli(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of two worker processes of one thread each, for the module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                  silence_logs=40, env={"NUMBA_NUM_THREADS": "1"}) as c:
        yield c.scheduler_address


# Each command's question as a job, and the same on the command line.
QUESTIONS = [
    ({"command": "reach", "map": DEMO, "race": "humans", "ranks": 2, "at": [30, 40],
      "probes": [[35, 45], [90, 90]]},
     ["reach", DEMO, "--race", "humans", "--ranks", "2", "--at", "30,40", "--probe", "35,45",
      "--probe", "90,90"]),
    ({"command": "reach", "map": "demo", "race": "wood elves", "at": [15, 60], "lattice": True},
     ["reach", "demo", "--race", "wood elves", "--at", "15,60", "--lattice"]),
    ({"command": "route", "map": DEMO, "race": "orcs", "from": [30, 40], "to": [150, 60]},
     ["route", DEMO, "--race", "orcs", "--from", "30,40", "--to", "150,60"]),
    ({"command": "route", "map": DEMO, "race": "humans", "ranks": 2, "move": 12,
      "from": [15, 60], "to": [170, 100]},
     ["route", DEMO, "--race", "humans", "--ranks", "2", "--move", "12", "--from", "15,60",
      "--to", "170,100"]),
    ({"command": "price", "map": str(MAPS / "battlesystem" / "light-woods.geojson"),
      "rules": "battlesystem", "race": "infantry", "depth": 0,
      "path": [[2, 2.125], [8.5, 2.125]]},
     ["price", str(MAPS / "battlesystem" / "light-woods.geojson"), "--rules", "battlesystem",
      "--race", "infantry", "--depth", "0", "--path", "2,2.125", "8.5,2.125"]),
    ({"command": "manoeuvre", "map": str(MAPS / "battlesystem" / "manoeuvres.geojson"),
      "rules": "battlesystem", "race": "infantry", "at": [5, 5], "kind": "frontage",
      "figures": 2},
     ["manoeuvre", str(MAPS / "battlesystem" / "manoeuvres.geojson"), "--rules",
      "battlesystem", "--race", "infantry", "--at", "5,5", "--kind", "frontage",
      "--figures", "2"]),
    ({"command": "charge", "map": str(MAPS / "battlesystem" / "charge.geojson"),
      "rules": "battlesystem", "race": "infantry", "from": [1, 5], "to": [10, 5],
      "min_range": 2},
     ["charge", str(MAPS / "battlesystem" / "charge.geojson"), "--rules", "battlesystem",
      "--race", "infantry", "--from", "1,5", "--to", "10,5", "--min-range", "2"]),
    ({"command": "network", "map": str(MAPS / "crossings.geojson"), "race": "humans"},
     ["network", str(MAPS / "crossings.geojson"), "--race", "humans"]),
    ({"command": "visible", "map": DEMO, "from": [30, 40], "to": [100, 60]},
     ["visible", DEMO, "--from", "30,40", "--to", "100,60"]),
    ({"command": "visible", "map": DEMO, "from": [30, 40], "flying": True},
     ["visible", DEMO, "--from", "30,40", "--flying"]),
    ({"command": "threat", "map": DEMO, "enemies": [{"race": "orcs", "at": [150, 60]},
                                                     {"race": "goblins", "at": [150, 80]}],
      "probes": [[150, 70]]},
     ["threat", DEMO, "--enemy", "orcs@150,60", "--enemy", "goblins@150,80", "--probe",
      "150,70"]),
    ({"command": "flow", "map": DEMO, "race": "humans", "goals": [[90.25, 75.25]],
      "from": [[20, 60], [150, 20]], "limit": 60},
     ["flow", DEMO, "--race", "humans", "--goal", "90.25,75.25", "--from", "20,60",
      "--from", "150,20", "--limit", "60"]),
]


def test_answers_equal_the_cli_json_and_bad_jobs_are_error_lines(cluster, tmp_path, capsys):
    expected = {f"q{i}": _cli(capsys, argv) for i, (_, argv) in enumerate(QUESTIONS)}
    (tmp_path / "maps").mkdir()
    shutil.copy(MAPS / "demo.geojson", tmp_path / "maps" / "here.geojson")
    jobs = [{"id": f"q{i}", **job} for i, (job, _) in enumerate(QUESTIONS)] + [
        # a relative path is looked for in the job file's folder; a map may be inline
        {"id": "relative", "command": "route", "map": "maps/here.geojson", "race": "orcs",
         "from": [30, 40], "to": [150, 60]},
        {"id": "inline", "command": "route", "map": json.loads(Path(DEMO).read_text()),
         "race": "orcs", "from": [30, 40], "to": [150, 60]},
        "not json at all",
        "[1, 2]",
        {"command": "reach", "map": DEMO, "race": "humans", "at": [30, 40]},
        {"id": 7, "command": "teleport", "map": DEMO},
        {"id": 8, "map": DEMO},
        {"id": "elves", "command": "route", "map": DEMO, "race": "elves", "from": [30, 40],
         "to": [150, 60]},
        {"id": "off", "command": "reach", "map": DEMO, "race": "humans", "at": [3000, 40]},
        {"id": "negative", "command": "reach", "map": DEMO, "race": "humans", "move": -5,
         "at": [30, 40]},
        {"id": "missing", "command": "reach", "map": "maps/nowhere.geojson", "race": "humans",
         "at": [3, 4]},
        {"id": "missing too", "command": "route", "map": "maps/nowhere.geojson",
         "race": "humans", "from": [3, 4], "to": [5, 6]},
        {"id": "extra", "command": "reach", "map": DEMO, "race": "humans", "at": [30, 40],
         "speed": 3},
    ]
    out = tmp_path / "results.jsonl"
    code = main(["batch", str(_write_jobs(tmp_path / "jobs.jsonl", jobs)), "--out", str(out),
                 "--scheduler", cluster])
    summary, err = capsys.readouterr()
    lines = _results(out)
    assert code == 1 and err == ""  # some failed; no progress bar when stderr is no terminal
    assert summary.startswith(f"{len(jobs)} jobs: {len(jobs)} answered in ")
    assert "; 11 failed; results in " in summary and summary.count("\n") == 1
    found = {line["id"]: line for line in lines if line["id"] is not None}
    assert len(found) + 3 == len(lines) == len(jobs)  # three lines without an id
    for ident, answer in expected.items():
        assert found[ident] == {"id": ident, "result": answer}, ident
    assert found["relative"]["result"] == found["inline"]["result"] == expected["q2"]
    anonymous = sorted((line["line"], line["error"]) for line in lines if line["id"] is None)
    assert [n for n, _ in anonymous] == [15, 16, 17]
    assert anonymous[0][1].startswith("line 15 is not JSON: ")
    assert anonymous[1][1] == "line 16 is not a JSON object but list"
    assert anonymous[2][1] == "line 17: the job has no id"
    errors = {k: v["error"] for k, v in found.items() if "error" in v}
    assert errors[7].startswith("unknown command 'teleport'; a job is one of reach, route,")
    assert errors[8].startswith("the job has no command (one of reach, route,")
    assert errors["elves"].startswith("unknown race 'elves' in Fantasy Warlord")
    assert errors["off"] == "point (3000, 40) is off the table (0..180 x 0..120)"
    assert errors["negative"] == "move: Input should be greater than or equal to 0"
    assert errors["missing"].startswith("no map file 'maps/nowhere.geojson'")
    assert errors["missing too"] == errors["missing"]
    assert errors["extra"] == "speed: Extra inputs are not permitted"
    assert all("\n" not in e for e in errors.values())


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
_FIELDS = st.sampled_from(["id", "command", "map", "race", "at", "from", "to", "path", "goals",
                           "enemies", "probes", "scen", "first", "limit", "move", "ranks"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(
    st.text(max_size=40),
    st.dictionaries(_FIELDS, _JSON, max_size=6).map(json.dumps),
    st.builds(lambda c, extra: json.dumps({"command": c, **extra}),
              st.sampled_from(sorted(batch_jobs.COMMANDS)),
              st.dictionaries(_FIELDS, _JSON, max_size=5))), max_size=6))
def test_any_job_file_reads_as_jobs_and_one_line_refusals(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("fuzz") / "jobs.jsonl"
    path.write_text("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines))
    try:
        entries = batch_jobs.read_jobs(path)
    except engine.InputError as exc:
        assert "every job needs an id of its own" in str(exc)
        return
    for entry in entries:
        if isinstance(entry, batch_jobs.Line):
            assert entry.error and "\n" not in entry.error
            json.dumps(entry.result(), allow_nan=False)


def test_duplicate_ids_are_refused_before_anything_runs(tmp_path, capsys):
    job = {"command": "reach", "map": "demo", "race": "humans", "at": [30, 40]}
    path = _write_jobs(tmp_path / "jobs.jsonl", [{"id": "a", **job}, {"id": 2, **job},
                                                 {"id": "a", **job}, {"id": "2", **job}])
    out = tmp_path / "out.jsonl"
    assert main(["batch", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"engine: error: {path}: every job needs an id of its own: id 'a' on "
                   "lines 1, 3\n")  # 2 and "2" are two ids
    assert not out.exists()


@pytest.mark.parametrize(("argv", "words"), [
    (["--out", "{tmp}/o.jsonl"], "engine batch takes a job file or --movingai DIR"),
    (["{tmp}/j.jsonl", "--movingai", "{tmp}", "--out", "{tmp}/o.jsonl"],
     "engine batch takes a job file or --movingai DIR (one of them)"),
    (["{tmp}/none.jsonl", "--out", "{tmp}/o.jsonl"], "cannot read the job file"),
    (["--movingai", "{tmp}/none", "--out", "{tmp}/o.jsonl"], "is not a folder"),
    (["--movingai", "{tmp}", "--out", "{tmp}/o.jsonl"], "holds no X.map with its X.map.scen"),
    (["{tmp}/j.jsonl", "--out", "{tmp}/full.jsonl"],
     "already holds results: --resume continues it, or remove it"),
    (["{tmp}/j.jsonl", "--out", "{tmp}"], "is a folder: give the results file's name"),
    (["{tmp}/j.jsonl", "--out", "{tmp}/garbled.jsonl", "--resume"],
     "garbled.jsonl: line 2 is not a result line of engine batch; not resuming over it"),
])
def test_bad_batches_are_refused_in_one_line(tmp_path, capsys, argv, words):
    _write_jobs(tmp_path / "j.jsonl", [{"id": 1, "command": "reach", "map": "demo",
                                        "race": "humans", "at": [30, 40]}])
    (tmp_path / "full.jsonl").write_text('{"id": 1, "result": {}}\n')
    (tmp_path / "garbled.jsonl").write_text('{"id": 1, "result": {}}\nnonsense\n')
    assert main(["batch", *(a.replace("{tmp}", str(tmp_path)) for a in argv)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("engine: error: ") and words in err, err


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(tmp_path, capsys,
                                                                 monkeypatch):
    """Refused for want of a scheduler, a batch leaves no results file (with the error
    line of its bad job in it, the same batch run again would be refused)."""
    monkeypatch.setattr(batch_run, "CONNECT_SECONDS", 1)
    path = _write_jobs(tmp_path / "j.jsonl", [{"id": 1, "command": "reach", "map": "demo",
                                                "race": "humans", "at": [30, 40]},
                                               {"id": 2, "command": "fly"}])
    address = f"tcp://127.0.0.1:{_free_port()}"
    out = tmp_path / "o.jsonl"
    assert main(["batch", str(path), "--out", str(out), "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"engine: error: cannot reach the Dask scheduler at {address}: ")
    assert err.count("\n") == 1
    assert not out.exists()


def test_a_listener_that_is_not_a_scheduler_is_named_so(tmp_path, capsys, monkeypatch):
    """What answers with other bytes than Dask's (read as a message length of
    exbibytes) is not a Dask scheduler, not a question out of memory."""
    monkeypatch.setattr(batch_run, "CONNECT_SECONDS", 2)
    path = _write_jobs(tmp_path / "j.jsonl", [{"id": 1, "command": "reach", "map": "demo",
                                                "race": "humans", "at": [30, 40]}])
    with socket.create_server(("127.0.0.1", 0)) as server:
        stop = threading.Event()

        def answer() -> None:
            server.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")  # an SSH server, say
                    time.sleep(0.5)

        talker = threading.Thread(target=answer, daemon=True)
        talker.start()
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        try:
            status = main(["batch", str(path), "--out", str(tmp_path / "o.jsonl"),
                           "--scheduler", address])
        finally:
            stop.set()
            talker.join(5)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith(f"engine: error: cannot reach the Dask scheduler at {address}: "), err


def test_a_results_file_cut_short_is_resumed_from_its_last_whole_line(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text('{"id": "a", "result": {"x": 1}}\n{"id": null, "line": 4, "error": "e"}\n'
                   '{"id": "b", "resu')
    found = batch_run._answered(out)
    assert set(found) == {("id", "a"), ("line", 4)}
    assert out.read_text().endswith('"error": "e"}\n')  # the torn line is gone


def test_tasks_deal_each_group_out_and_keep_groups_apart():
    jobs = [batch_jobs.Job(i, i, "route", None, i % 3) for i in range(300)]
    tasks = list(batch_jobs.tasks(jobs, workers=2))
    assert sorted(j.id for t in tasks for j in t) == list(range(300))
    assert all(len({j.group for j in t}) == 1 for t in tasks)
    assert max(len(t) for t in tasks) == 13 and len(tasks) == 24  # 100 a group: 8 tasks each
    big = list(batch_jobs.tasks([batch_jobs.Job(i, i, "route", None, 0) for i in range(10_000)],
                                workers=2))
    assert max(len(t) for t in big) == batch_jobs.MAX_TASK_JOBS
    assert [j.id for j in big[0][:3]] == [0, len(big), 2 * len(big)]  # dealt in turn


def _cache_counts(client, budget):
    return client.run(lambda: (batch_work._grids(budget).misses, batch_work._grids(budget).hits))


def test_each_maps_grids_are_built_once_per_worker(cluster, tmp_path, capsys):
    jobs = [{"id": i, "command": "route", "map": DEMO, "race": "goblins", "ranks": 1 + i % 2,
             "from": [20 + i % 9, 40], "to": [150, 60 + i % 7]} for i in range(120)]
    jobs += [{"id": f"c{i}", "command": "reach", "map": "crossings", "race": "humans",
              "at": [10 + i, 20]} for i in range(40)]
    out = tmp_path / "out.jsonl"
    with distributed.Client(cluster) as client:
        budget = batch_run._cache_bytes(client)
        # Earlier tests' jobs may have left either map on either worker: start empty.
        client.run(lambda: batch_work._grids.cache_clear())
        before = _cache_counts(client, budget)
        assert run_batch(_write_jobs(tmp_path / "jobs.jsonl", jobs), out,
                         scheduler=cluster, progress=True).failed == 0
        after = _cache_counts(client, budget)
    assert "engine batch: 100%" in capsys.readouterr().err  # the bar, when asked for
    loads = {w: after[w][0] - before[w][0] for w in after}
    asks = {w: loads[w] + after[w][1] - before[w][1] for w in after}
    assert sum(asks.values()) == len(jobs)  # every job asked its worker's cache ...
    assert all(n <= 2 for n in loads.values())  # ... which loaded each map once at most
    assert sum(loads.values()) >= 2  # (each map by one worker at least)
    assert len(_results(out)) == len(jobs)


@pytest.mark.skipif(not (MOVINGAI / "arena.map.scen").is_file(),
                    reason="no Moving AI maps (set MOVINGAI_DIR)")
def test_a_movingai_folder_is_checked_as_engine_movingai_checks_it(cluster, tmp_path, capsys):
    for name in ("arena.map", "arena.map.scen", "den312d.map", "den312d.map.scen"):
        shutil.copy(MOVINGAI / name, tmp_path / name)
    (tmp_path / "lonely.map").write_text((MOVINGAI / "arena.map").read_text())  # no .scen
    out = tmp_path / "out.jsonl"
    assert main(["batch", "--movingai", str(tmp_path), "--out", str(out), "--scheduler",
                 cluster]) == 0
    summary = capsys.readouterr().out
    lines = _results(out)
    assert sorted(line["id"] for line in lines) == sorted(
        [f"arena.map.scen[{i}:{i + 100}]" for i in (0,)] + ["arena.map.scen[100:160]"]
        + [f"den312d.map.scen[{i}:{i + 100}]" for i in (0, 100)] + ["den312d.map.scen[200:290]"])
    assert "Moving AI: 450 of 450 scenarios match the optimal length" in summary
    first = next(line["result"] for line in lines if line["id"] == "den312d.map.scen[0:100]")
    cli = _cli(capsys, ["movingai", str(tmp_path / "den312d.map.scen"), "--limit", "100"])
    assert {**first, "seconds": 0} == {**cli, "seconds": 0}


# Many routes of a unit with rear ranks: a few seconds of work for two workers.
ROUTES = [{"id": f"r{i}", "command": "route", "map": DEMO, "race": "humans", "ranks": 2,
           "from": [15 + i % 11, 40 + i % 5], "to": [160 + i % 13, 90 + i % 11]}
          for i in range(160)]


@pytest.fixture(scope="module")
def routes():
    """The routes' answers, one at a time in this process."""
    rules = engine.load_rules("fantasy-warlord")
    g = engine.cost_grid(engine.load_map(DEMO), rules, rules.unit("humans", ranks=2))
    return {j["id"]: strict(route_answer(g, tuple(j["from"]), tuple(j["to"]))[1])
            for j in ROUTES}


def _each_answered_once(out: Path, routes: dict) -> None:
    lines = _results(out)
    assert sorted(line["id"] for line in lines) == sorted(routes)  # each once, none lost
    assert all(line["result"] == routes[line["id"]] for line in lines)


def _wait_for_lines(out: Path, fewest: int, seconds: float = 240) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if out.exists() and (n := out.read_text().count("\n")) >= fewest:
            return n
        time.sleep(0.02)
    raise TimeoutError(f"{out} has fewer than {fewest} lines after {seconds} s")


def _batch_until(jobs: Path, out: Path, fewest: int, how: signal.Signals,
                 *resume: str) -> tuple[int, str]:
    """``engine batch`` in a process of its own, sent ``how`` (to it, its cluster and
    its workers) once ``out`` has ``fewest`` lines: its exit status and stderr."""
    batch = subprocess.Popen([*LIMIT, sys.executable, "-m", "engine", "batch", str(jobs),
                              "--out", str(out), "--workers", "2", *resume], cwd=ROOT,
                             env=ENV, start_new_session=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_lines(out, fewest)
    finally:
        os.killpg(batch.pid, how)
        _, err = batch.communicate(timeout=60)
    return batch.returncode, err


def test_a_batch_stopped_or_killed_half_way_resumes_with_nothing_lost_or_doubled(
        tmp_path, routes):
    jobs = _write_jobs(tmp_path / "jobs.jsonl", ROUTES)
    out = tmp_path / "out.jsonl"
    code, err = _batch_until(jobs, out, 1, signal.SIGINT)  # Ctrl-C
    assert code == 130 and err == (f"engine: interrupted; the results so far are in {out} "
                                   "(--resume continues)\n")
    stopped = out.read_text().count("\n")
    code, _ = _batch_until(jobs, out, stopped + 1, signal.SIGKILL, "--resume")
    assert code == -signal.SIGKILL or code == 128 + signal.SIGKILL
    kept = out.read_text().count("\n")
    assert 0 < stopped < kept < len(ROUTES)
    with open(out, "a") as f:
        f.write('{"id": "r0", "res')  # as if killed in the middle of a line
    done = subprocess.run([*LIMIT, sys.executable, "-m", "engine", "batch", str(jobs),
                           "--out", str(out), "--workers", "2", "--resume"], cwd=ROOT,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f", {kept} already in {out}; 0 failed" in done.stdout
    assert done.stdout.startswith(f"{len(ROUTES)} jobs: {len(ROUTES) - kept} answered in ")
    _each_answered_once(out, routes)


@pytest.fixture
def scheduler_and_workers(tmp_path):
    """A Dask scheduler and two workers (no nanny: a killed worker stays dead), each
    a process on a free loopback port; all stopped at the end."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = {"scheduler": subprocess.Popen(
        [*LIMIT, str(DASK), "scheduler", "--host", "127.0.0.1", "--port", str(port),
         "--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--idle-timeout", "300"],
        env=ENV, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)}
    for name in ("a", "b"):
        procs[name] = subprocess.Popen(
            [*LIMIT, str(DASK), "worker", address, "--name", name, "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1", "--death-timeout", "60",
             "--local-directory", str(tmp_path / name)], env=ENV, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        yield address, procs
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_a_worker_killed_mid_run_loses_no_job(scheduler_and_workers, tmp_path, routes):
    address, procs = scheduler_and_workers
    jobs = _write_jobs(tmp_path / "jobs.jsonl", ROUTES)
    out = tmp_path / "out.jsonl"
    finished: dict = {}
    batch = threading.Thread(target=lambda: finished.update(
        summary=run_batch(jobs, out, scheduler=address)), daemon=True)
    batch.start()
    with distributed.Client(address, timeout="60s") as client:
        names = {info["name"]: addr for addr, info in client.scheduler_info()["workers"].items()}
        deadline = time.monotonic() + 240
        while not client.processing(names["a"])[names["a"]]:  # until "a" is answering
            assert time.monotonic() < deadline and batch.is_alive()
            time.sleep(0.01)
        os.killpg(procs["a"].pid, signal.SIGKILL)
        killed_at = out.read_text().count("\n") if out.exists() else 0
    batch.join(240)
    assert not batch.is_alive() and killed_at < len(ROUTES)
    assert finished["summary"].failed == 0 and procs["a"].wait(10) != 0
    _each_answered_once(out, routes)


def _deadly(jobs, cache_bytes):
    """`answer_task`, but a task holding the job "deadly" fails as the scheduler fails a
    task whose workers all died running it."""
    from types import SimpleNamespace

    from distributed.scheduler import KilledWorker

    if any(job.id == "deadly" for job in jobs):
        raise KilledWorker("a task", SimpleNamespace(address="tcp://127.0.0.1:9"), 3)
    return batch_work.answer_task(jobs, cache_bytes)


def test_a_job_that_kills_its_workers_costs_only_its_own_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(batch_run, "answer_task", _deadly)
    jobs = [{"id": i, "command": "reach", "map": "demo", "race": "orcs", "at": [20 + i, 40]}
            for i in range(30)]
    jobs.insert(7, {"id": "deadly", "command": "reach", "map": "demo", "race": "orcs",
                    "at": [30, 40]})
    out = tmp_path / "out.jsonl"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None, silence_logs=40,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as c:
        summary = run_batch(_write_jobs(tmp_path / "jobs.jsonl", jobs), out,
                            scheduler=c.scheduler_address)
    lines = {line["id"]: line for line in _results(out)}
    assert summary.failed == 1 and len(lines) == len(jobs) == summary.answered
    assert lines["deadly"]["error"].startswith("the workers answering this job died each time")
    assert all("result" in line for ident, line in lines.items() if ident != "deadly")


def test_a_job_line_naming_a_key_twice_is_refused(tmp_path):
    path = tmp_path / "jobs.jsonl"
    path.write_text('{"id": 0, "command": "reach", "command": "route"}\n', "utf-8")
    assert [line.error for line in batch_jobs.read_jobs(path)] == [
        "line 1: key 'command' appears twice in one object"]  # the last one won


def test_a_job_file_with_a_byte_order_mark_reads_its_first_line(tmp_path):
    path = tmp_path / "jobs.jsonl"
    path.write_text('{"id": 0, "command": "fly"}\n', "utf-8-sig")
    assert [line.error.split(";")[0] for line in batch_jobs.read_jobs(path)] == [
        "unknown command 'fly'"]  # was: not a JSON object


def test_a_command_that_is_not_a_name_is_refused_in_one_line(tmp_path):
    """A list or object as the command (unhashable) gets its line's refusal, not a
    TypeError (found by the fuzz test above)."""
    path = tmp_path / "jobs.jsonl"
    path.write_text('{"id": 0, "command": []}\n{"id": 1, "command": {"a": 1}}\n', "utf-8")
    lines = list(batch_jobs.read_jobs(path))
    assert [line.error.split(";")[0] for line in lines] == ["unknown command []",
                                                            "unknown command {'a': 1}"]
