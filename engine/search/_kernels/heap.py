"""numba kernels: queue primitives the searches share (a 4-ary heap, stacks of
buckets and their sizes), tracing a path back and resetting touched cells.

Sentinels: an impassable multiplier is ``inf``; an unreached cell has cost
``inf``; in `search`, ``pos`` is -1 for a cell never queued, -2 once it is
settled; `search_plain` marks an expanded cell with ``CLOSED`` in ``parent``.
"""

import numpy as np
from numba import njit

ASTAR_SPLIT = 2  # A* buckets are half the shortest step wide: fewer cells expanded twice
POOL_SPLIT = 32  # the same with shared rows, whose buckets are lists in one pool
# A* reopens an expanded cell only for a path cheaper by more than rounding.
REOPEN = 1.0 - 1e-10
# The heap is 4-ary (a node's children at 4 i + 1 .. 4 i + 4): half as deep as a binary
# heap, so a push or a lowered key climbs half as far, and a pop goes down half as many
# levels, comparing the four children of each, which lie side by side in memory.
_ARITY_BITS = 2
CLOSED = 64  # flag in parent (a step index, below 64): cell expanded (search_plain)
STACK_ENTRIES = 2**22  # most entries a first stack of buckets gets (16 MiB)
# Most entries a stack of buckets grows to (128 MiB); a search that needs more (a bucket
# with very many cells, times very many buckets) runs `search`'s linked buckets instead.
STACK_LIMIT = 2**25


@njit(cache=True)
def _sift_up(i, hkey, hidx, pos):
    key = hkey[i]
    cell = hidx[i]
    while i > 0:
        parent = (i - 1) >> _ARITY_BITS
        if hkey[parent] <= key:
            break
        hkey[i] = hkey[parent]
        hidx[i] = hidx[parent]
        pos[hidx[i]] = i
        i = parent
    hkey[i] = key
    hidx[i] = cell
    pos[cell] = i


@njit(cache=True)
def _sift_down(i, n, hkey, hidx, pos):
    key = hkey[i]
    cell = hidx[i]
    while True:
        first = (i << _ARITY_BITS) + 1
        if first >= n:
            break
        child = first  # the least of the (up to) four children, the first on a tie
        least = hkey[first]
        for c in range(first + 1, min(first + (1 << _ARITY_BITS), n)):
            if hkey[c] < least:
                child, least = c, hkey[c]
        if least >= key:
            break
        hkey[i] = least
        hidx[i] = hidx[child]
        pos[hidx[i]] = i
        i = child
    hkey[i] = key
    hidx[i] = cell
    pos[cell] = i


@njit(cache=True)
def _heap_pop(n, hkey, hidx, pos):
    """Take the top off a heap of ``n`` (`_sift_down`'s); returns it."""
    top = hidx[0]
    n -= 1
    if n > 0:
        hkey[0] = hkey[n]
        hidx[0] = hidx[n]
        pos[hidx[0]] = 0
        _sift_down(0, n, hkey, hidx, pos)
    return top


def stack_width(ncell: int, rows: int) -> int:
    """A first width for a stack of ``rows`` buckets on a grid of ``ncell`` cells.

    A power of two of at least eight times the grid's side, room for the fronts
    of whole-grid searches in 32 directions, but no more than ``STACK_ENTRIES``
    in all (down to 16 a row): many buckets (a very dear step) each hold few
    cells.  A bucket that outgrows it makes the caller widen it and search
    again, from the start.  Plain Python: only callers in Python ask for it (a
    numba function would cost the first reach a cache load).
    """
    width = 256
    while width * width < 64 * ncell:
        width *= 2
    while width > 16 and rows * width > STACK_ENTRIES:
        width //= 2
    return width


@njit(cache=True)
def pool_split(nb):
    """How many times narrower than the shortest step an A*'s buckets are where they
    are lists in one pool (`_search_plain` with shared rows, `search_both`): the pool's
    lists cost nothing per bucket, so ``POOL_SPLIT`` while the buckets stay few."""
    return POOL_SPLIT if nb * POOL_SPLIT <= 2**16 else ASTAR_SPLIT


@njit(cache=True)
def stack_rows(nb, astar, split):
    """Buckets `search_plain` needs (its ``stack``'s rows): ``nb`` for Dijkstra;
    for A*, whose keys rise by a step's cost plus at most its length (with
    landmarks, at most the step's cost both ways) in buckets ``ASTAR_SPLIT``
    times narrower, ``2 * ASTAR_SPLIT * nb``.  (With shared rows the A*'s
    buckets are lists, their heads in an array of its own, ``split`` =
    ``POOL_SPLIT`` times narrower, and ``stack`` is only their pool.)  Every caller
    gives ``split``: a default would compile a second signature."""
    return 2 * nb * split if astar else nb


@njit(cache=True)
def trace(parent, step_off, source, target, cols, pad, rows_out, cols_out):
    """The cells from ``source`` to ``target`` following ``parent`` (``CLOSED``
    masked off), as rows and columns without the border ``pad`` of a padded
    grid ``cols`` wide, written to ``rows_out`` and ``cols_out``; returns how many."""
    n = 1
    c = target
    while c != source:
        c -= step_off[parent[c] & (CLOSED - 1)]
        n += 1
    c = target
    for j in range(n - 1, -1, -1):
        r = c // cols
        rows_out[j] = r - pad
        cols_out[j] = c - r * cols - pad
        if j > 0:
            c -= step_off[parent[c] & (CLOSED - 1)]
    return n


@njit(cache=True, nogil=True)
def reset(touched, n, dist, parent, pos, beat):
    """Return the first ``n`` touched cells of a workspace to unreached (``pos`` and
    ``beat``, `search_labels`', may be empty)."""
    queue = pos.shape[0] > 0
    labelled = beat.shape[0] > 0
    for j in range(n):
        c = touched[j]
        dist[c] = np.inf
        parent[c] = -1
        if queue:
            pos[c] = -1
        if labelled:
            beat[c] = np.inf
