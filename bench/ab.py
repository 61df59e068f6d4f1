"""The engine at two revisions, measured in one run; writes bench/AB.md.

Run: ``python bench/ab.py BASE`` (``--rounds N``, default 2; ``--quick`` for a short
smoke run of the harness that writes nothing).

``BASE`` (any git revision) is checked out in a temporary worktree; the other side
is this checkout as it stands.  The two sides take turns (base, this, base, this,
...), each run a fresh process:

- this checkout's ``bench/peers.py --json``: every comparison against a peer
  (tcod, scikit-image, scipy, networkx, pyastar2d), answers checked equal first;
  a ratio is the engine's median over the peer's, both from the same process, so
  the machine's noise touches both;
- each side's own pytest-benchmark suites (``bench/test_*.py``; each imports its
  own revision's modules): the medians of every benchmark.

Each side's numba kernels are compiled (``engine.warm_up``) before anything is
timed.  The table gives each side's median over the rounds and after / before.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _run(tree: Path, *args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, *args], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def _peers(tree: Path, out: Path, quick: bool) -> dict[tuple[str, str], float]:
    _run(tree, str(ROOT / "bench" / "peers.py"), "--json", str(out), *(["--quick"] * quick))
    return {(r["workload"], r["peer"]): float(r["ratio"])
            for r in json.loads(out.read_text()) if r["ratio"]}


def _suites(tree: Path, out: Path, quick: bool) -> dict[str, float]:
    _run(tree, "-m", "pytest", "bench", "-q", "-p", "no:cacheprovider", "--benchmark-only",
         f"--benchmark-json={out}", *(["--benchmark-max-time=0.05"] * quick))
    return {b["fullname"].removeprefix("bench/"): b["stats"]["median"] * 1e3
            for b in json.loads(out.read_text())["benchmarks"]}


def _medians(runs: list[dict]) -> dict:
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="the git revision to compare this checkout with")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="a smoke run: small, writes nothing")
    args = ap.parse_args()
    base_rev = _git("rev-parse", "--short", args.base)
    head_rev = _git("rev-parse", "--short", "HEAD") + (" + changes" if _git("status",
                                                                            "--porcelain") else "")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        _git("worktree", "add", "--detach", str(base), args.base)
        try:
            sides = {"base": base, "this": ROOT}
            for tree in sides.values():
                _run(tree, "-c", "import engine; engine.warm_up()")
            peers: dict[str, list] = {s: [] for s in sides}
            suites: dict[str, list] = {s: [] for s in sides}
            for k in range(args.rounds):
                for side, tree in sides.items():
                    print(f"round {k + 1}: {side}", flush=True)
                    peers[side].append(_peers(tree, Path(tmp) / f"peers-{side}.json",
                                              args.quick))
                    suites[side].append(_suites(tree, Path(tmp) / f"suites-{side}.json",
                                                args.quick))
        finally:
            _git("worktree", "remove", "--force", str(base))
    lines = _report(base_rev, head_rev, args.rounds, _medians(peers["base"]),
                    _medians(peers["this"]), _medians(suites["base"]), _medians(suites["this"]))
    print("\n".join(lines))
    if not args.quick:
        (ROOT / "bench" / "AB.md").write_text("\n".join(lines) + "\n")
        print("wrote bench/AB.md")


def _report(base_rev: str, head_rev: str, rounds: int, peers_a: dict, peers_b: dict,
            suites_a: dict, suites_b: dict) -> list[str]:
    out = [
        f"# The engine at {base_rev} (before) and {head_rev} (after)",
        "",
        f"Written by `python bench/ab.py {base_rev}` on {dt.date.today().isoformat()}: the two "
        f"revisions took turns, {rounds} rounds each, on one machine (2 cores, shared, noisy). "
        "Each figure is the median over the rounds.",
        "",
        "## Against the peers (`bench/peers.py`)",
        "",
        "Ratio = the engine's median time / the peer's, both measured in the same process.",
        "",
        "| workload | peer | ratio before | ratio after | after / before |",
        "|---|---|---|---|---|",
    ]
    for key in (k for k in peers_b if k in peers_a):
        out.append(f"| {key[0]} | {key[1]} | {peers_a[key]:.2f} | {peers_b[key]:.2f} | "
                   f"{peers_b[key] / peers_a[key]:.2f} |")
    out += [
        "",
        "## pytest-benchmark (`bench/test_*.py`)",
        "",
        "| benchmark | before (ms) | after (ms) | after / before |",
        "|---|---|---|---|",
    ]
    for name in (k for k in suites_b if k in suites_a):
        out.append(f"| `{name}` | {suites_a[name]:,.2f} | {suites_b[name]:,.2f} | "
                   f"{suites_b[name] / suites_a[name]:.2f} |")
    return out


if __name__ == "__main__":
    main()
