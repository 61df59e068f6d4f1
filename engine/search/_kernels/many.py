"""numba kernels: many reaches at once, the threads sharing the sources.

One driver per search, so that a call compiles only the search it runs:
`many_labels` (a unit with rear ranks: `search_labels`), `many_plain` (a step
table: the bucket search `search_plain`, falling back on `search` when a bucket
outgrows the stack) and `many_heap` (`search`).  They take the same arguments,
so the caller picks one by the unit and the grid and passes the same list.
Each runs one thread's share (``t``, first): the caller runs them on its threads
(`engine._threads`; they release the GIL).
Private; `engine.search` validates everything first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .astar import reach_table
from .dijkstra import search
from .heap import reset
from .labels import label_pool, search_labels

__all__ = ["many_heap", "many_labels", "many_plain"]


@njit(cache=True)
def _gather(touched, dist, n, budget, cap, out_cells, out_cost, at, u, out_start, out_n):
    """Copy the cells of unit ``u``'s reach within ``budget`` (of the ``n`` it
    touched) to ``out_cells`` and ``out_cost`` from ``at`` (the first ``cap``),
    record where in ``out_start[u]`` and how many in ``out_n[u]`` (-1 if more
    than ``cap``); return where the thread's next reach goes."""
    m = 0
    for j in range(n):
        c = touched[j]
        d = dist[c]
        if d <= budget:
            if m < cap:
                out_cells[at + m] = c
                out_cost[at + m] = d
            m += 1
    out_start[u] = at
    out_n[u] = m if m <= cap else -1
    return at + min(m, cap)


@njit(cache=True)
def _heap(
    base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, source, cell, budget, dist, parent, pos, touched, link,
):
    """One reach by `search` (a heap) on one thread's rows; the cells it touched."""
    no_f = np.empty(0)
    no_i = np.empty(0, dtype=np.int32)
    return search(
        base, steep, slope_of, slopes, cols, plain,
        step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
        depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform,
        flat, flat_of, enter, narrow, onward_start, onward, source, -1, cell, budget,
        dist, parent, pos, no_f, no_i, touched, link,
        np.empty((0, 0), dtype=np.float32), np.empty((2, 0), dtype=np.float32),
    )


@njit(cache=True, nogil=True)
def many_heap(
    t, base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, sources, cell, budget, merging, levels,
    dist, parent, pos, touched, link, beat,
    width, stack_limit, cap, out_cells, out_cost, out_start, out_n,
):
    """Dijkstra by `search` from thread ``t``'s share of ``sources`` (every T-th
    from the t-th, T the workspace's rows), on its row of the workspace.  Unit
    u's cells within ``budget`` go to row t of ``out_cells`` and ``out_cost``
    (t = u mod T), at ``out_start[u]``, ``out_n[u]`` of them, the thread's units
    one after another; ``out_n[u]`` is -1 if they are more than ``cap`` (the
    caller makes it the disc of radius ``budget``, so they are not)."""
    threads = dist.shape[0]
    at = np.int64(0)  # typed constants: no literal signature of a callee
    for u in range(t, sources.shape[0], threads):
        n = _heap(
            base, steep, slope_of, slopes, cols, plain, step_dr, step_dc, step_len, ux,
            uy, piece_start, piece_dr, piece_dc, piece_w, depth, fp_start, fp_dr, fp_dc,
            fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter, narrow,
            onward_start, onward, sources[u], cell, budget, dist[t], parent[t], pos[t],
            touched[t], link[t],
        )
        at = _gather(touched[t], dist[t], n, budget, cap, out_cells[t], out_cost[t], at, u,
                     out_start, out_n)
        reset(touched[t], n, dist[t], parent[t], pos[t], beat[t])


@njit(cache=True, nogil=True)
def many_plain(
    t, base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, sources, cell, budget, merging, levels,
    dist, parent, pos, touched, link, beat,
    width, stack_limit, cap, out_cells, out_cost, out_start, out_n,
):
    """`many_heap`, each reach by `search_plain` on a stack of buckets ``width``
    wide at first, unless it would outgrow ``stack_limit`` entries, and then
    by `search`."""
    threads = dist.shape[0]
    no_f = np.empty(0)
    no_i = np.empty(0, dtype=np.int32)
    no_lm = np.empty((0, 0), dtype=np.float32)
    no_lm_goal = np.empty((2, 0), dtype=np.float32)
    stack = np.empty((nb, width), dtype=np.int32)
    at = np.int64(0)  # typed constants: no literal signature of a callee
    for u in range(t, sources.shape[0], threads):
        n = -1
        while n < 0:
            n = reach_table(
                base, cols, step_dr, step_dc, step_len, piece_start, piece_dr,
                piece_dc, piece_w, nb, table_cost, no_i, flat, flat_of,
                onward_start, onward, sources[u], np.int64(-1), cell,
                budget, dist[t], parent[t], touched[t], stack, no_lm, no_lm_goal,
            )
            if n < 0:  # a bucket outgrew the stack: again, with room
                reset(touched[t], -n, dist[t], parent[t], pos[t], no_f)
                if 2 * stack.size > stack_limit:
                    break
                stack = np.empty((nb, 2 * stack.shape[1]), dtype=np.int32)
        queue = n < 0  # `search` uses `pos`
        if n < 0:
            n = _heap(
                base, steep, slope_of, slopes, cols, plain, step_dr, step_dc, step_len,
                ux, uy, piece_start, piece_dr, piece_dc, piece_w, depth, fp_start, fp_dr,
                fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter, narrow,
                onward_start, onward, sources[u], cell, budget, dist[t], parent[t],
                pos[t], touched[t], link[t],
            )
        at = _gather(touched[t], dist[t], n, budget, cap, out_cells[t], out_cost[t], at, u,
                     out_start, out_n)
        reset(touched[t], n, dist[t], parent[t], pos[t] if queue else no_i, beat[t])


@njit(cache=True, nogil=True)
def many_labels(
    t, base, steep, slope_of, slopes, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, sources, cell, budget, merging, levels,
    dist, parent, pos, touched, link, beat,
    width, stack_limit, cap, out_cells, out_cost, out_start, out_n,
):
    """`many_heap` for a unit with rear ranks, each reach by `search_labels`, each
    thread's pool of labels starting at twice ``cap`` (1 to 2.3 labels a cell),
    grown as it runs out, their trails ``levels`` wide."""
    threads = dist.shape[0]
    no_lm = np.empty((0, 0), dtype=np.float32)
    no_lm_goal = np.empty((2, 0), dtype=np.float32)
    pool = label_pool(2 * cap, levels)
    at = np.int64(0)  # typed constants: no literal signature of a callee
    for u in range(t, sources.shape[0], threads):
        n = -1
        while n < 0:
            n, _, used = search_labels(
                base, steep, slope_of, slopes, cols, plain, step_dr, step_dc,
                step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w, depth,
                fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform,
                flat, flat_of, enter, narrow, onward_start, onward, sources[u], np.int64(-1),
                cell, budget, merging, dist[t], pos[t], beat[t], touched[t], no_lm,
                no_lm_goal, *pool,
            )
            if used < 0:  # the pool ran out: again, with room
                reset(touched[t], n, dist[t], parent[t], pos[t], beat[t])
                pool = label_pool(4 * pool[0].shape[0], levels)
                n = -1
        at = _gather(touched[t], dist[t], n, budget, cap, out_cells[t], out_cost[t], at, u,
                     out_start, out_n)
        reset(touched[t], n, dist[t], parent[t], pos[t], beat[t])
