"""Moving AI grid benchmarks: ``.map`` grids and ``.scen`` scenario files.

The benchmark's own conventions (N. Sturtevant, "Benchmarks for Grid-Based
Pathfinding", 2012; movingai.com/benchmarks/formats.html):

- ``.map``: a header ``type octile``, ``height H``, ``width W``, ``map``, then
  H rows of W characters; (0, 0) is top-left, x is the column, y the row.
- 8-connected; a straight step costs 1 and a diagonal sqrt(2), allowed only
  when both cells it cuts past are passable (no corner cutting).  That is
  `engine.GridRouter` with ``directions=8`` on multipliers of 1 and ``inf``.
- ``.`` ``G`` ``S`` are passable; ``@`` ``O`` ``T`` are blocked; ``W`` (water)
  is a class of its own: a move is legal only between cells of one class, so
  a path that starts on ``W`` stays on ``W``, and otherwise ``W`` blocks.
  ``T`` (trees) is treated the same way: one icecrown scenario runs from
  trees to trees (8 diagonal steps, 11.31), which only a class of its own
  explains.
- ``.scen`` lines: ``bucket map width height startx starty goalx goaly
  optimal_length``, after a ``version`` line.  Optimal lengths are printed to a
  file's own precision (8 decimals, 6 significant digits or 2 decimals);
  `Scenario.tolerance` says how close counts as equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._args import file_path, instance, listed
from .._limits import is_file, read_limited
from ..errors import InputError

__all__ = ["GridMap", "Scenario", "load_grid_map", "load_scenarios", "map_for"]

_PASSABLE = frozenset(".GS")
_OWN_CLASS = frozenset("WT")
_KNOWN = frozenset(".GS@OTW")


@dataclass(frozen=True, eq=False)
class GridMap:
    """A Moving AI map: one character per cell, ``cells[row, col]``."""

    name: str
    cells: np.ndarray

    def classes(self, rc: tuple[int, int]) -> str:
        """The class of a cell: ``"."`` (passable), ``"W"``, ``"T"`` or ``"@"`` (blocked)."""
        ch = chr(self.cells[rc])
        return ch if ch in _OWN_CLASS else "." if ch in _PASSABLE else "@"

    def multipliers(self, cls: str = ".") -> np.ndarray:
        """1 on the cells of class ``cls``, ``inf`` elsewhere."""
        chars = _PASSABLE if cls == "." else {cls}
        open_ = np.isin(self.cells, np.frombuffer("".join(chars).encode(), dtype=np.uint8))
        return np.where(open_, 1.0, np.inf)


@dataclass(frozen=True)
class Scenario:
    """One ``.scen`` line: start and goal as (x, y) = (column, row)."""

    bucket: int
    map: str
    start: tuple[int, int]
    goal: tuple[int, int]
    optimal: float
    decimals: int
    size: tuple[int, int] | None = None  # (width, height) the line gives its map

    @property
    def tolerance(self) -> float:
        """Half a unit in the last printed digit, plus one part in a million.

        The extra part covers the generator's own rounding: ten Aftershock
        lengths that are a hair over a half (205.76450198...) are printed
        rounded down (205.764), as single-precision sums would give.
        """
        return 0.5 * 10.0 ** -self.decimals + 1e-6 * max(1.0, self.optimal)


def _lines(path: Path, what: str) -> list[str]:
    try:
        return read_limited(path).decode("ascii").splitlines()
    except FileNotFoundError:
        raise InputError(f"no {what} file {str(path)!r}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read {what} file {path}: {exc}") from None


def load_grid_map(path: str | Path) -> GridMap:
    """Read a Moving AI ``.map`` file.

    Raises
    ------
    InputError
        A missing file, a malformed header, rows of the wrong length or an
        unknown cell character (the message names the line).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.map")
    >>> _ = open(path, "w").write("type octile\\nheight 2\\nwidth 3\\nmap\\n..@\\n.W.\\n")
    >>> m = load_grid_map(path)
    >>> m.cells.shape, m.classes((1, 1)), m.multipliers()[0].tolist()
    ((2, 3), 'W', [1.0, 1.0, inf])
    """
    path = file_path("path", path)
    lines = _lines(path, "map")
    head = {}
    i = 0
    while i < len(lines) and lines[i].strip() != "map":
        parts = lines[i].split()
        if len(parts) == 2:
            head[parts[0]] = parts[1]
        i += 1
    try:
        height, width = int(head["height"]), int(head["width"])
    except (KeyError, ValueError):
        raise InputError(f"{path}: header needs 'height H', 'width W' and 'map'") from None
    if height < 1 or width < 1:
        raise InputError(f"{path}: width and height must be >= 1, got {width} x {height}")
    rows = lines[i + 1: i + 1 + height]
    if i >= len(lines) or len(rows) != height:
        raise InputError(f"{path}: expected {height} rows of {width} cells after 'map'")
    for n, row in enumerate(rows):
        if len(row) != width:
            raise InputError(f"{path}: line {i + 2 + n} has {len(row)} cells, not {width}")
        bad = set(row) - _KNOWN
        if bad:
            raise InputError(f"{path}: line {i + 2 + n} has unknown cell {sorted(bad)[0]!r}")
    cells = np.frombuffer("".join(rows).encode("ascii"), dtype=np.uint8).reshape(height, width)
    return GridMap(path.name, cells.copy())


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Read a Moving AI ``.scen`` file (any of its releases).

    Raises
    ------
    InputError
        A missing file or a malformed line (named).
    """
    path = file_path("path", path)
    lines = _lines(path, "scenario")
    out = []
    for n, line in enumerate(lines, start=1):
        parts = line.split()
        if not parts or parts[0] == "version":
            continue
        try:
            bucket, name = int(parts[0]), parts[1]
            width, height, sx, sy, gx, gy = (int(v) for v in parts[2:8])
            text = parts[8]
            optimal = float(text)
        except (IndexError, ValueError):
            raise InputError(f"{path}: line {n} is not a scenario line") from None
        if not (math.isfinite(optimal) and optimal >= 0):
            raise InputError(f"{path}: line {n}: the optimal length must be a finite number "
                             f">= 0, got {text!r}")
        if out and name != out[0].map:
            raise InputError(f"{path}: line {n} is on map {name!r}, the lines before on "
                             f"{out[0].map!r} (one map a file)")
        decimals = len(text.split(".")[1]) if "." in text else 0
        out.append(Scenario(bucket, name, (sx, sy), (gx, gy), optimal, decimals,
                            (width, height)))
    return out


def map_for(scen: str | Path, scenarios: list[Scenario]) -> Path:
    """The ``.map`` a scenario file belongs to: ``X.map`` beside ``X.map.scen``, or the
    file its lines name, looked for beside it."""
    scen = file_path("scen", scen)
    if scen.name.endswith(".scen") and is_file(scen.parent / scen.name[:-5]):
        return scen.parent / scen.name[:-5]
    scenarios = listed("scenarios", scenarios)
    if scenarios:
        instance("scenarios[0]", scenarios[0], Scenario, "load_scenarios")
        return scen.parent / Path(scenarios[0].map).name
    raise InputError(f"{scen}: no scenarios, so no map to look for (pass --map)")
