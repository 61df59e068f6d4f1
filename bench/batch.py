"""The Moving AI sweep one process at a time against ``engine batch`` on a Dask cluster of
this machine's cores, in one run; writes its section of bench/RESULTS.md.

Run: ``python bench/batch.py [DIR]`` (``--print``: print the section, write nothing).
``DIR`` is the Moving AI folder (default: ``MOVINGAI_DIR``, else the folder laid beside
the project), every ``X.map`` with its ``X.map.scen`` in it.

Three runs, each timed from start to exit as a user waits, in fresh processes:

- ``engine movingai X.map.scen --json`` for each pair, one process after another;
- ``engine batch --movingai DIR --workers 1``: the same scenarios as jobs of 100 on a
  local cluster of one worker: its wall time beyond its search, per job, is what the
  batch costs (starting the cluster, scheduling, results streamed to a file);
- ``engine batch --movingai DIR --workers 2``: the speed-up over the first run.

Checked before anything is reported: every run matches every scenario's published
optimal length, and the batches answer every job once.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cold_start import replace_section  # noqa: E402

MOVINGAI = Path(os.environ.get("MOVINGAI_DIR") or ROOT.parent / "shared" / "movingai")
SECTION = "## engine batch: the Moving AI sweep on a Dask cluster"
ENGINE = [sys.executable, "-m", "engine"]


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Wall-clock seconds of a fresh process running ``argv``, the CPU seconds it and
    its own processes (a batch's workers) used, and what it printed."""
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    used = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    return seconds, used, done.stdout


def one_at_a_time(folder: Path) -> dict:
    """``engine movingai`` on each pair in turn: wall seconds, search seconds, counts."""
    pairs = [m for m in sorted(folder.glob("*.map")) if m.with_name(m.name + ".scen").is_file()]
    load = os.getloadavg()[0]
    wall = search = cpu = 0.0
    scenarios = matched = 0
    for m in pairs:
        seconds, used, out = _run([*ENGINE, "movingai", f"{m}.scen", "--json"])
        answer = json.loads(out)
        wall += seconds
        cpu += used
        search += answer["seconds"]
        scenarios += answer["scenarios"]
        matched += answer["matched"]
    assert matched == scenarios, (matched, scenarios)  # every published optimum
    return {"wall": wall, "search": search, "cpu": cpu, "load": load,
            "scenarios": scenarios, "jobs": len(pairs)}


def batch(folder: Path, workers: int, tmp: Path) -> dict:
    """``engine batch --movingai`` on ``workers`` workers: wall and search seconds, counts."""
    out = tmp / f"results-{workers}.jsonl"
    load = os.getloadavg()[0]
    seconds, cpu, said = _run([*ENGINE, "batch", "--movingai", str(folder), "--out", str(out),
                          "--workers", str(workers)])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    ids = [line["id"] for line in lines]
    assert len(ids) == len(set(ids)) and all("result" in line for line in lines), said
    scenarios = sum(line["result"]["scenarios"] for line in lines)
    matched = sum(line["result"]["matched"] for line in lines)
    assert matched == scenarios, said
    search = sum(line["result"]["seconds"] for line in lines)
    return {"wall": seconds, "search": search, "cpu": cpu, "load": load,
            "scenarios": scenarios, "jobs": len(lines)}


def section(seq: dict, one: dict, two: dict) -> list[str]:
    """The section of bench/RESULTS.md."""
    rows = [
        ("`engine movingai` per file, one process after another", seq),
        ("`engine batch --movingai DIR --workers 1`", one),
        ("`engine batch --movingai DIR --workers 2`", two),
    ]
    per_job = (one["wall"] - one["search"]) / one["jobs"] * 1e3
    per_file = (seq["wall"] - seq["search"]) / seq["jobs"] * 1e3
    return [
        SECTION,
        "",
        f"Written by `python bench/batch.py` on {dt.date.today().isoformat()}, one run, "
        "2 cores, shared with other work: the load average (the processes wanting a core, "
        "over the last minute) is given as each run started. Every Moving AI scenario of "
        f"the {seq['jobs']} maps ({seq['scenarios']:,}), each run checked to match every "
        "published optimal length and each batch to answer every job once. Wall: seconds "
        "from start to exit of the whole command, as a user waits (a batch starts its "
        "cluster of worker processes, which load the kernels from the cache, and stops "
        "it). Search: the seconds the answers report searching, added up. CPU: the "
        "seconds of processor time the command and its workers used.",
        "",
        "| run | jobs | wall (s) | search (s) | CPU (s) | load |",
        "|---|---|---|---|---|---|",
        *(f"| {name} | {r['jobs']} | {r['wall']:.1f} | {r['search']:.1f} | {r['cpu']:.1f} "
          f"| {r['load']:.1f} |" for name, r in rows),
        "",
        f"Speed-up of the batch on 2 workers over one process at a time: "
        f"**{seq['wall'] / two['wall']:.2f}x**. Overhead per job of 100 scenarios (the "
        f"one-worker batch's wall time beyond its search, over its {one['jobs']} jobs: "
        f"starting the cluster, loading maps and scenario files, scheduling, streaming "
        f"the results): **{per_job:.0f} ms**, against {per_file:.0f} ms per file for one "
        "process at a time (a process and its imports per file). On 2 workers the same "
        f"searches took {two['search'] / one['search']:.2f} times the seconds they took "
        "on one (added up over both workers): the speed-up is what the two cores gave "
        "beside the machine's other work.",
        "",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", type=Path, default=MOVINGAI,
                    help="the Moving AI folder (default: MOVINGAI_DIR, else beside the "
                    "project)")
    ap.add_argument("--print", action="store_true", help="print the section, write nothing")
    args = ap.parse_args()
    if not args.folder.is_dir():
        sys.exit(f"no Moving AI folder {args.folder} (give one, or set MOVINGAI_DIR)")
    subprocess.run([*ENGINE, "warm-up"], cwd=ROOT, check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        seq = one_at_a_time(args.folder)
        print(f"one at a time: {seq}", flush=True)
        one = batch(args.folder, 1, Path(tmp))
        print(f"batch, 1 worker: {one}", flush=True)
        two = batch(args.folder, 2, Path(tmp))
        print(f"batch, 2 workers: {two}", flush=True)
    assert seq["scenarios"] == one["scenarios"] == two["scenarios"]
    lines = section(seq, one, two)
    print("\n".join(lines))
    if args.print:
        return
    path = ROOT / "bench" / "RESULTS.md"
    path.write_text(replace_section(path.read_text() if path.exists() else "", lines, SECTION))
    print("wrote its section of bench/RESULTS.md")


if __name__ == "__main__":
    main()
