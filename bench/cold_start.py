"""Cold and warm start of every CLI command, each in a fresh process; writes its section of
bench/RESULTS.md.

Run: ``python bench/cold_start.py`` (``--print`` to print the table and write nothing).

For each command the script makes an empty numba cache folder (``NUMBA_CACHE_DIR``), runs
the command once (cold: numba compiles what the command uses and caches it), then three
more times with that folder (warm: machine code loaded from the cache); warm is the median
of the three.  Times are wall-clock seconds of the whole process, from start to exit, as a
user waits for them.  ``engine warm-up`` and ``examples/skirmish.py`` are measured the same
way, and last a command run warm after ``engine warm-up`` filled its cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOVINGAI = Path(os.environ.get("MOVINGAI_DIR") or ROOT.parent / "shared" / "movingai")
SECTION = "## Cold and warm start per command"

ENGINE = [sys.executable, "-m", "engine"]
COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "reach": ["reach", "maps/demo.geojson", "--race", "wood elves", "--at", "30,40"],
    "route": ["route", "maps/examples/goblins.geojson", "--race", "goblins",
              "--from", "0,3.25", "--to", "24.5,3.25"],
    "price": ["price", "maps/battlesystem/light-woods.geojson", "--rules", "battlesystem",
              "--race", "infantry", "--depth", "0", "--path", "2,2.125", "8.5,2.125"],
    "manoeuvre": ["manoeuvre", "maps/battlesystem/manoeuvres.geojson", "--rules",
                  "battlesystem", "--race", "infantry", "--at", "5,5", "--kind", "frontage",
                  "--figures", "2"],
    "charge": ["charge", "maps/battlesystem/charge.geojson", "--rules", "battlesystem",
               "--race", "infantry", "--from", "1,5", "--to", "10,5", "--min-range", "2"],
    "network": ["network", "maps/crossings.geojson", "--race", "humans"],
    "visible": ["visible", "maps/demo.geojson", "--from", "30,40", "--to", "100,60"],
    "threat": ["threat", "maps/demo.geojson", "--enemy", "orcs@150,60", "--enemy",
               "goblins@150,80", "--probe", "150,70"],
    "flow": ["flow", "maps/demo.geojson", "--race", "humans", "--goal", "90.25,75.25",
             "--from", "20,60", "--from", "150,20"],
    "movingai": ["movingai", str(MOVINGAI / "arena.map.scen"), "--limit", "20"],
    "demo": ["demo", "--png", "{tmp}/demo.png"],
}


def _timed(argv: list[str], cache: Path, tmp: Path) -> float:
    """Wall-clock seconds of one fresh process running ``argv`` with numba's cache at
    ``cache``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    argv = [a.replace("{tmp}", str(tmp)) for a in argv]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode:
        sys.exit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    return seconds


def _cold_warm(argv: list[str], tmp: Path, name: str) -> tuple[float, float]:
    cache = tmp / f"cache-{name.strip('-')}"
    cold = _timed(argv, cache, tmp)
    warm = statistics.median(_timed(argv, cache, tmp) for _ in range(3))
    return cold, warm


def measure() -> tuple[list[str], dict[str, float]]:
    """Markdown rows (the command, cold seconds, warm seconds), and the warm seconds of
    three commands after ``engine warm-up``."""
    rows = []
    runs = {name: ENGINE + argv for name, argv in COMMANDS.items()}
    if not MOVINGAI.is_dir():
        del runs["movingai"]
    runs["engine warm-up"] = [*ENGINE, "warm-up"]
    runs["examples/skirmish.py"] = [sys.executable, "examples/skirmish.py"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in runs.items():
            cold, warm = _cold_warm(argv, Path(tmp), name)
            label = name if name.startswith(("engine ", "examples")) else f"engine {name}"
            rows.append(f"| `{label}` | {cold:.1f} | {warm:.2f} |")
            print(rows[-1], flush=True)
        cache = Path(tmp) / "after-warm-up"
        _timed([*ENGINE, "warm-up"], cache, Path(tmp))
        after = {name: statistics.median(_timed(ENGINE + COMMANDS[name], cache, Path(tmp))
                                         for _ in range(3))
                 for name in ("reach", "threat", "flow")}
    return rows, after


def section(rows: list[str], after: dict[str, float]) -> list[str]:
    """The section of bench/RESULTS.md."""
    import datetime as dt

    return [
        SECTION,
        "",
        f"Written by `python bench/cold_start.py` on {dt.date.today().isoformat()}, one run, "
        "2 cores (shared). Wall-clock seconds of a fresh process, start to exit. Cold: "
        "an empty numba cache folder, so the command compiles every kernel it uses (its "
        "longest in the helper process it starts, `engine/_coldstart.py`; "
        "`examples/skirmish.py`, a Python program, compiles all in its own process). Warm: "
        "the median of three more runs with that cache; `engine demo` answers two questions "
        "on two maps and draws two PNG pictures with matplotlib.",
        "",
        "| command | cold (s) | warm (s) |",
        "|---|---|---|",
        *rows,
        "",
        "After `engine warm-up` has filled the cache, the first run of a command is a warm "
        "run: " + ", ".join(f"`engine {k}` {v:.2f} s" for k, v in after.items()) + ".",
        "",
    ]


def _bounds(lines: list[str], title: str) -> tuple[int, int] | None:
    """Where the section ``title`` of a markdown file's ``lines`` starts and ends."""
    if title not in lines:
        return None
    start = lines.index(title)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    return start, end


def section_of(text: str, title: str) -> list[str]:
    """The lines of the section ``title`` of the markdown ``text`` (none if it has none)."""
    lines = text.splitlines()
    span = _bounds(lines, title)
    return lines[span[0]:span[1]] if span else []


def replace_section(text: str, lines: list[str], title: str = SECTION) -> str:
    """``text`` (a markdown file) with the section ``title`` replaced by ``lines``, or
    ``lines`` appended if it has none; a blank line before the next section."""
    old = text.splitlines()
    span = _bounds(old, title)
    if span is None:
        new = [*old, "", *lines]
    else:
        gap = [""] if span[1] < len(old) and lines and lines[-1] else []
        new = [*old[:span[0]], *lines, *gap, *old[span[1]:]]
    return "\n".join(new).rstrip("\n") + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print the table, write nothing")
    args = ap.parse_args()
    lines = section(*measure())
    if args.print:
        print("\n".join(lines))
        return
    results = ROOT / "bench" / "RESULTS.md"
    results.write_text(replace_section(results.read_text() if results.exists() else "", lines))
    print("wrote its section of bench/RESULTS.md")


if __name__ == "__main__":
    main()
