"""numba kernels: many reaches at once, the threads sharing the sources.

One driver per search, so that a call compiles only the search it runs.  On
the step lattice: `many_labels` (a unit with rear ranks: `search_labels`),
`many_plain` (a step table: the bucket search `search_plain`, falling back on
`search` when a bucket outgrows the stack) and `many_heap` (`search`); they
take the same arguments, so the caller picks one by the unit and the grid and
passes the same list.  Any-angle: `many_theta` (`theta_search`) and
`many_trails` (a unit with rear ranks: `theta_labels`), which grow their
outputs as they fill.  Each runs one thread's share (``t``, first): the caller
runs them on its threads (`engine._threads`; they release the GIL).
Private; `engine.search` validates everything first.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .anyangle import collect, theta_search
from .astar import reach_table
from .dijkstra import search
from .heap import reset
from .labels import label_pool, search_labels
from .ranked import _label_xy, collect_labels, reset_labels, theta_labels

__all__ = ["many_heap", "many_labels", "many_plain", "many_theta", "many_trails"]


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


@njit(cache=True)
def _room(a, keep, need):
    """``a``, or, if it holds fewer than ``need`` items, a bigger array (at least twice
    its size) with its first ``keep`` copied."""
    if need <= a.shape[0]:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    out[:keep] = a[:keep]
    return out


@njit(cache=True, nogil=True)
def many_theta(t, threads, base, steep, slope_of, slopes, enter, narrow, clear, alike, least,
               cols, cell, sources, points, budget, edge_row, edge_cost, longer, long_row,
               long_cost, dist, parent, state, hkey, hidx, pos, touched, tried, stamp, cells,
               cost, parents, out_start, out_n):
    """`theta_search` within ``budget`` from the points ``points[u]`` (x, y) in cells
    ``sources[u]`` for thread ``t``'s share of them (every ``threads``-th from the
    t-th), on its workspace.  Each reach's cells, costs and parents (`collect`:
    cheapest first) go to ``cells``, ``cost`` and ``parents`` one after another,
    unit u's at ``out_start[u]``, ``out_n[u]`` of them; returns those three
    arrays, new bigger ones where a reach did not fit."""
    at = np.int64(0)
    for u in range(t, sources.shape[0], threads):
        nt = theta_search(base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols,
                          cell, sources[u], points[u, 0], points[u, 1], np.int64(-1), 0.0, 0.0,
                          budget, edge_row, edge_cost, longer, long_row, long_cost, dist,
                          parent, state, hkey, hidx, pos, touched, tried, stamp)
        cells = _room(cells, at, at + nt)  # no more written than touched
        cost = _room(cost, at, at + nt)
        parents = _room(parents, at, at + nt)
        k = collect(touched, nt, dist, parent, state, budget, cells[at:], cost[at:],
                    parents[at:])
        out_start[u], out_n[u] = at, k
        at += k
    return cells, cost, parents


@njit(cache=True, nogil=True)
def many_trails(t, threads, base, steep, slope_of, slopes, enter, narrow, clear, alike, least,
                cols, cell, depth, sources, points, aims, faces, budget, merging, longer, long_row,
                dist, head, beat, touched, tried, stamp, pool, l_at, width, cells, cost, parents,
                best, out_start, out_n, k_cell, k_cost, k_prev, k_x, k_y, kept_start, kept_n):
    """`many_theta` for a unit with rear ranks, each reach by `theta_labels` with the
    label ``pool`` (`label_pool`'s, ``width`` levels, and ``l_at``), grown as it
    runs out, reach u aimed at the point ``aims[u]`` (NaN: at none), with the
    first steps to ``faces[u]`` that face the unit another way.  Each reach's
    cells, costs, parents and cheapest labels (their index among the reach's
    labels, `collect_labels`) go to ``cells``, ``cost``, ``parents`` and
    ``best``, unit u's at ``out_start[u]``, ``out_n[u]`` of them; the labels it
    used (cell, cost, label it came from, -1 for the start's, and where it
    stands) to ``k_cell``, ``k_cost``, ``k_prev``, ``k_x`` and ``k_y``, at
    ``kept_start[u]``, ``kept_n[u]`` of them.  Returns those nine arrays and
    the pool, each new and bigger where it did not hold a reach."""
    at = np.int64(0)
    kat = np.int64(0)
    for u in range(t, sources.shape[0], threads):
        used = -1
        nt = 0
        while used < 0:
            nt, used = theta_labels(
                base, steep, slope_of, slopes, enter, narrow, clear, alike, least, cols, cell,
                depth, sources[u], points[u, 0], points[u, 1], aims[u, 0], aims[u, 1], faces[u],
                budget, merging, longer, long_row, dist, head, beat, touched, tried, stamp, pool[0],
                pool[1], pool[2], pool[3], pool[4], pool[5], pool[6], pool[7], pool[8], pool[9],
                pool[11], pool[12], l_at)
            if used < 0:  # the pool ran out: again, with room
                reset_labels(touched, nt, dist, head, beat)
                pool = label_pool(4 * pool[0].shape[0], width)
                l_at = np.empty(pool[0].shape[0], dtype=np.int64)
        cells = _room(cells, at, at + nt)
        cost = _room(cost, at, at + nt)
        parents = _room(parents, at, at + nt)
        best = _room(best, at, at + nt)
        k = collect_labels(touched, nt, dist, head, beat, budget, pool[0], pool[7], cells[at:],
                           cost[at:], best[at:])
        k_cell = _room(k_cell, kat, kat + used)
        k_cost = _room(k_cost, kat, kat + used)
        k_prev = _room(k_prev, kat, kat + used)
        k_x = _room(k_x, kat, kat + used)
        k_y = _room(k_y, kat, kat + used)
        for j in range(used):
            k_cell[kat + j], k_cost[kat + j], k_prev[kat + j] = pool[1][j], pool[0][j], pool[2][j]
            k_x[kat + j], k_y[kat + j] = _label_xy(j, pool[1][j], pool[3][j], faces[u],
                                                   points[u, 0], points[u, 1], cols, cell)
        for j in range(at, at + k):
            up = pool[2][best[j]]
            parents[j] = pool[1][up] if up >= 0 else -1
        out_start[u], out_n[u], kept_start[u], kept_n[u] = at, k, kat, used
        at += k
        kat += used
    return cells, cost, parents, best, k_cell, k_cost, k_prev, k_x, k_y, pool, l_at
