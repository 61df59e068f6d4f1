"""The steps a search takes (`Steps`): offsets, lengths and the cells each crosses,
under a pricing convention, and the trail of cells behind the unit.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._args import flag, point
from ..errors import InputError
from ..grid import _GRAZE, neighbourhood, segment_cells

__all__ = ["PRICINGS", "Steps", "bucket_count", "onward_steps", "steps", "trail_behind"]

# Most buckets a search's queue may have (a power of two): A* on a raw grid keeps four
# times as many rows of stack, at least 64 bytes each (`_kernels.stack_width`), so the
# first stack is at most 16 MiB; its sizes (8 bytes a row) are 2 MiB.
_MAX_BUCKETS = 2**16


@dataclass(frozen=True, eq=False)
class Steps:
    """The search neighbourhood in the form the kernels take.

    Each step k moves ``(dr[k], dc[k])`` cells, ``length[k]`` table units;
    its pieces (the cells its straight segment crosses, with the fraction of
    the step in each; 0 for a corner touch) are
    ``piece_*[piece_start[k]:piece_start[k + 1]]``.  The steps worth taking
    out of a flat cell reached by step k are
    ``onward[onward_start[k]:onward_start[k + 1]]`` (`onward_steps`, whose
    shorter paths stop within ``onward_window`` of the cell); row K (the
    number of steps) holds them all.
    """

    dr: np.ndarray
    dc: np.ndarray
    length: np.ndarray
    ux: np.ndarray
    uy: np.ndarray
    piece_start: np.ndarray
    piece_dr: np.ndarray
    piece_dc: np.ndarray
    piece_w: np.ndarray
    onward_start: np.ndarray
    onward: np.ndarray
    onward_window: int


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first of each distinct row of ``rows`` (in order) and each row's number among them.

    Rows are told apart by a hash of their bits, checked row by row against the
    row they are taken for (a collision falls back to sorting the rows whole).
    """
    odd = np.uint64(0x9E3779B97F4A7C15) ** np.arange(rows.shape[1], dtype=np.uint64)
    mix = (rows.view(np.uint64) * odd).sum(axis=1)  # modulo 2**64
    _, first, which = np.unique(mix, return_index=True, return_inverse=True)
    if not (rows[first[which]] == rows).all():
        whole = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.itemsize * rows.shape[1])))
        _, first, which = np.unique(whole.ravel(), return_index=True, return_inverse=True)
    order = np.argsort(first)  # in the order the rows first come
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[which].astype(np.int32)


def onward_steps(dr: np.ndarray, dc: np.ndarray, length: np.ndarray) -> tuple:
    """The steps worth taking out of a flat cell a reached by step k.

    Around a flat cell (`_kernels.flat_cells`) every cell within ``reach``
    rows and columns (the longest step's) is alike, and a step's pieces lie
    between its two ends, so any step between two cells of that box costs
    its length times a's multiplier.  Step j out of a is left out when a
    path from the cell before, ``a - s_k``, to ``a + s_j`` through the box
    is shorter than s_k then s_j by more than rounding (a millionth): the
    cell before offered that target less, so no cheapest path takes s_k
    then s_j.  Going back to the cell before is left out too.  Equally long
    paths are kept, so ties are broken as before; the pairs kept are kept
    either way round (j then k as well, as flow fields use them).  With 32
    directions 3 to 5 of the 32 steps remain.

    The shorter paths need stop only within ``window`` rows and columns of
    a (the least that leaves out as much: 1 for 8 and 16 directions, 3 for
    32 and 48): `_kernels.search_labels` needs the trails of those cells
    alone to hold nothing heavier than a's ground.

    Returns
    -------
    onward_start : (K + 2,) int64
        Row k's steps are ``onward[onward_start[k]:onward_start[k + 1]]``;
        row K is every step (a cell with no step behind it).
    onward : int64
    window : int
    """
    reach = int(max(np.abs(dr).max(), np.abs(dc).max()))
    k_steps = dr.shape[0]
    side = 4 * reach + 1  # offsets -2 reach .. 2 reach from a
    steps = list(zip(dr.tolist(), dc.tolist(), length.tolist(), strict=True))

    def stepped(paths: np.ndarray) -> np.ndarray:
        """The cheapest of every path one step further on."""
        out = np.full_like(paths, np.inf)
        for sr, sc, slen in steps:
            to = (slice(None), slice(max(sr, 0), side + min(sr, 0)),
                  slice(max(sc, 0), side + min(sc, 0)))
            at = (slice(None), slice(max(-sr, 0), side + min(-sr, 0)),
                  slice(max(-sc, 0), side + min(-sc, 0)))
            np.minimum(out[to], paths[at] + slen, out=out[to])
        return out

    o = 2 * reach
    offsets = np.abs(np.arange(-o, o + 1))
    chebyshev = np.maximum(offsets[:, None], offsets[None, :])
    before = np.full((k_steps, side, side), np.inf)  # [k]: at the cell before, a - s_k
    before[np.arange(k_steps), o - dr, o - dc] = 0.0
    one = stepped(before)
    kept = []
    for window in range(reach + 1):
        # Paths from the cell before that stop only within `window` of a.
        inside = chebyshev <= window
        paths = np.where(inside, one, np.inf)
        while True:
            longer = np.where(inside, np.minimum(paths, stepped(paths)), np.inf)
            if np.array_equal(longer, paths):
                break
            paths = longer
        best = np.minimum(np.minimum(before, one), stepped(paths))
        via = best[:, o + dr, o + dc]  # [k, j]: a - s_k to a + s_j
        kept.append(~(via < (length[:, None] + length[None, :]) * (1.0 - 1e-6)))
    window = next(w for w in range(reach + 1) if np.array_equal(kept[w], kept[reach]))
    rows = [np.flatnonzero(row) for row in kept[reach]] + [np.arange(k_steps)]
    start = np.cumsum([0] + [len(r) for r in rows])
    return start.astype(np.int64), np.concatenate(rows).astype(np.int64), window


@functools.lru_cache(maxsize=16)
def _onward(dr: tuple, dc: tuple, length: tuple) -> tuple:
    """`onward_steps`, once per neighbourhood (a few milliseconds for 32 directions)."""
    return onward_steps(np.array(dr), np.array(dc), np.array(length))


PRICINGS = ("segment", "midpoint", "destination")


def steps(
    cell: float,
    directions: int = 32,
    pricing: str = "segment",
    corner_cutting: bool = False,
    lengths: tuple[float, float] | None = None,
) -> Steps:
    """Build the step tables of a neighbourhood (see `grid.neighbourhood`).

    Parameters
    ----------
    cell : float
    directions : int
        8, 16, 32 or 48.
    pricing : str
        ``"segment"`` (the engine's): the multiplier integrated along the
        straight step through every cell it crosses.  For comparing with
        other pathfinders on raw grids, 8 directions only: ``"midpoint"``, the mean
        of the two cells' multipliers (scikit-image's ``MCP_Geometric``), and
        ``"destination"``, the multiplier of the cell stepped onto (python-tcod,
        pyastar2d).
    corner_cutting : bool
        Let a diagonal step pass between two cells that block.
    lengths : (straight, diagonal), optional
        Step lengths in table units for 8 directions (tcod's integers 2 and 3,
        pyastar2d's 1 and 1); default the geometric ``cell`` and
        ``cell * sqrt(2)``.
    """
    if not isinstance(pricing, str) or pricing not in PRICINGS:
        raise InputError(f"pricing must be one of {', '.join(PRICINGS)}, got {pricing!r}")
    corner_cutting = flag("corner_cutting", corner_cutting)
    if (pricing != "segment" or lengths is not None) and directions != 8:
        raise InputError("other pricings and step lengths are for 8 directions only")
    offsets = neighbourhood(directions)
    start, pdr, pdc, pw = [0], [], [], []
    for dr, dc in offsets:
        pieces, corners = segment_cells((0.5, 0.5), (0.5 + dc, 0.5 + dr))
        hyp = math.hypot(dr, dc)
        if pricing == "segment":
            shares = [(r, c, (s1 - s0) / hyp) for r, c, s0, s1 in pieces]
        elif pricing == "midpoint":
            shares = [(0, 0, 0.5), (dr, dc, 0.5)]
        else:
            shares = [(dr, dc, 1.0)]
        if not corner_cutting:
            shares += [(r, c, 0.0) for r, c in corners]
        for r, c, w in shares:
            pdr.append(r)
            pdc.append(c)
            pw.append(w)
        start.append(len(pw))
    dr = offsets[:, 0].copy()
    dc = offsets[:, 1].copy()
    hyp = np.hypot(dr, dc)
    with np.errstate(over="ignore"):  # a vast cell: refused below
        length = hyp * cell
    if lengths is not None:
        try:
            straight, diagonal = point(lengths)  # two real numbers
        except InputError:
            straight = diagonal = math.nan
        if not (0 < straight <= diagonal < math.inf):
            raise InputError(f"lengths must be 0 < straight <= diagonal, got {lengths!r}")
        length = np.where(hyp > 1, diagonal, straight)
    if not length.max() < 1e300:  # the onward steps sum a few lengths
        raise InputError(f"steps up to {length.max():.3g} table units long are too long "
                         "(a smaller cell or shorter lengths): costs would overflow")
    onward_start, onward, window = _onward(
        tuple(dr.tolist()), tuple(dc.tolist()), tuple(length.tolist()))
    return Steps(
        dr=dr,
        dc=dc,
        length=length,
        ux=dc / hyp,
        uy=dr / hyp,
        piece_start=np.array(start, dtype=np.int64),
        piece_dr=np.array(pdr, dtype=np.int64),
        piece_dc=np.array(pdc, dtype=np.int64),
        piece_w=np.array(pw, dtype=np.float64),
        onward_start=onward_start,
        onward=onward,
        onward_window=window,
    )


def bucket_count(st: Steps, costliest: float) -> int:
    """Buckets as wide as the shortest step that outspan a step costing ``costliest``.

    A power of two, so the kernel picks a bucket with a mask.

    Raises
    ------
    InputError
        The costliest step would need more than ``_MAX_BUCKETS`` buckets: a
        multiplier or flat cost (crossing, climb, formation change) so large (yet
        finite) that the search's queue would not fit in memory.
    """
    ratio = costliest / float(st.length.min())
    if not ratio < _MAX_BUCKETS - 2:  # also NaN and inf
        raise InputError(
            f"the costliest step costs {costliest:.3g} table units, {ratio:.3g} times the "
            f"shortest step; at most {_MAX_BUCKETS - 2:g} times is supported: a "
            "multiplier or a flat cost (a crossing's, a climb's or the rules' "
            "formation_change) is too large (use inf or \"impassable\" for ground nobody "
            "enters)"
        )
    return 1 << (int(ratio) + 2).bit_length()


def trail_behind(p: tuple[float, float], u: tuple[float, float], depth_cells: float) -> list:
    """The footprint of a unit standing at ``p`` (cell units) facing ``u``.

    Its ranks trail straight back ``depth_cells``.  Returns ``(row, col,
    rem)`` for each cell under it, farthest first, where ``rem`` is how far the
    front must advance (in cells) before that cell leaves the footprint; a cell
    the line is in for less than `_GRAZE` is not under it.
    """
    if depth_cells <= 0:
        return []
    tail = (p[0] - u[0] * depth_cells, p[1] - u[1] * depth_cells)
    pieces, _ = segment_cells(p, tail)
    return [(r, c, depth_cells - s0) for r, c, s0, s1 in reversed(pieces) if s1 - s0 >= _GRAZE]
