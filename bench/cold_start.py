"""Cold start: a fresh process's import time and its first answer, with numba's cache warm.

Run: ``python bench/cold_start.py``.  Prints the median of five fresh processes.
"""

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import time
t0 = time.perf_counter()
import engine
t1 = time.perf_counter()
rules = engine.load_rules("fantasy-warlord")
bf = engine.load_map("maps/demo.geojson")
g = engine.cost_grid(bf, rules, rules.unit("humans", move=24, ranks=2))
r = engine.reach(g, (15, 60))
t2 = time.perf_counter()
print(t1 - t0, t2 - t0)
"""


def fresh() -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    imp, first = (float(v) for v in out.split())
    return imp, first


def main() -> None:
    fresh()  # fills numba's disk cache if it is cold
    runs = [fresh() for _ in range(5)]
    imp = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] for r in runs)
    print(f"import engine: {imp * 1e3:.0f} ms; first reach (load map, build grid, "
          f"24 cm reach) in a fresh process: {first * 1e3:.0f} ms (median of 5)")


if __name__ == "__main__":
    main()
