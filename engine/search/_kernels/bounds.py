"""numba kernels: lower bounds of the cost still to go (straight line, landmarks,
blocks), shared by the A* searches.
"""

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _to_go(dr, dc, nsteps, shortest, diagonal, cell):
    """A* heuristic for ``(dr, dc)`` cells left: octile with 8 steps, else the straight line.

    The straight line as ``sqrt`` of the square, exact in whole cells, so it is
    rounded once (numba's ``math.hypot`` is 1 ulp off on a few whole-cell pairs in
    a thousand; every A* sharing this bound moved by that much, within its
    tolerances of 1e-12 or more).  ``hypot`` took half of `_potential`'s time in
    cache (searches from both ends 15% faster across the 4096² campaign map).
    """
    dr = abs(dr)
    dc = abs(dc)
    if nsteps == 8:
        return shortest * (max(dr, dc) - min(dr, dc)) + diagonal * min(dr, dc)
    return cell * math.sqrt(dr * dr + dc * dc)


@njit(cache=True, inline="always")
def _landmark_bound(lm, lm_goal, b, h, first=0):
    """``h`` raised to the landmarks' bound at cell ``b`` (`search`'s ALT bound, with
    ``lm_goal``'s rows ``first`` and ``first + 1``)."""
    for m in range(lm_goal.shape[1]):
        at = lm[b, m]
        if at != np.inf:
            h = max(h, lm_goal[first, m] - at, at + lm_goal[first + 1, m])
    return h


@njit(cache=True, error_model="numpy", inline="always")
def _bound_to(lm, rows, exits, blocks, b, h):
    """A lower bound of cell ``b``'s cost to one end of `search_both`: ``h`` raised to
    the landmarks' bound (``rows[0]`` and ``rows[1]``, as `search`'s ``lm_goal``) and,
    unless ``exits[0]`` is -inf, to the blocks' (``blocks``: each cell's block and its
    cost to the nearest cell of none, as `Highway` keeps them).  ``exits`` holds the
    end's cost out of its block less the slack, and the end's block; ``rows[2]`` is
    the end's block's rim's least cost to each landmark and ``rows[3]`` minus its
    greatest, so that `_landmark_bound` over them bounds a cell's cost to the rim."""
    h = _landmark_bound(lm, rows, b, h)
    if exits[0] == -np.inf:
        return h
    if np.int64(blocks[b, 0]) == np.int64(exits[1]):
        # In the end's block: out of it no faster than the end (inf: b has no way out).
        out = np.float64(blocks[b, 1])
        return max(h, exits[0] - out) if out != np.inf else h
    # Elsewhere a path to the end crosses the rim, then leaves it for the end.
    return max(h, exits[0] + _landmark_bound(lm, rows, b, 0.0, 2))


@njit(cache=True, error_model="numpy", inline="always")
def _potential(lm, to_goal, goal_exit, to_source, source_exit, blocks, b, r, c, ends, nsteps,
               shortest, diagonal, cell):
    """`search_both`'s bounds at cell ``b`` (row ``r``, column ``c``): of its cost to the
    goal, and of its cost to (the same as from) the source (``ends`` as `search_both`
    keeps it; `_bound_to` with each end's rows and exits, ``bounds[0]`` and
    ``exits[0]``, or ``bounds[1]`` and ``exits[1]``: views made once, not a cell)."""
    ht = _to_go(r - ends[1, 1], c - ends[2, 1], nsteps, shortest, diagonal, cell)
    hs = _to_go(r - ends[1, 0], c - ends[2, 0], nsteps, shortest, diagonal, cell)
    return (_bound_to(lm, to_goal, goal_exit, blocks, b, ht),
            _bound_to(lm, to_source, source_exit, blocks, b, hs))
