"""numba kernels: the search and the rear-rank trail it prices steps with.

Private.  Callers (engine.terrain, engine.search, engine.pricing) validate
everything first: kernels assume clean, C-contiguous arrays of the documented
dtypes.  All compile lazily with ``cache=True``; nothing compiles at import.
Kernels that call each other live in this one file (numba's disk cache does
not notice an edit to a callee in another module).

Sentinels: an impassable multiplier is ``inf``; an unreached cell has cost
``inf``; in `search`, ``pos`` is -1 for a cell never queued, -2 once it is
settled; `search_plain` marks an expanded cell with ``CLOSED`` in ``parent``.

The trail (Fantasy Warlord: "the terrain effect continues to apply until the
last rank has cleared it") is a monotone deque per path: entries
``(level, rem, origin)`` with levels falling and ``rem`` (distance the front
may still move before that ground leaves the footprint) rising.  The
multiplier paid at any moment is the larger of the ground under the front and
the first entry still in the footprint.  `search_labels` keeps each path's
levels and distances; only a priced path's explanation (`engine.pricing`)
needs the origins.
"""

import math

import numpy as np
from llvmlite import ir
from numba import literally, njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from .grid import _EPS as _SEGMENT_EPS  # crossings this close are one: a corner

UPHILL_TOL = 1e-9
ASTAR_SPLIT = 2  # A* buckets are half the shortest step wide: fewer cells expanded twice
POOL_SPLIT = 32  # the same with shared rows, whose buckets are lists in one pool
# A* reopens an expanded cell only for a path cheaper by more than rounding.
REOPEN = 1.0 - 1e-10
CLOSED = 64  # flag in parent (a step index, below 64): cell expanded (search_plain)
STACK_ENTRIES = 2**22  # most entries a first stack of buckets gets (16 MiB)
# Most entries a stack of buckets grows to (128 MiB); a search that needs more (a bucket
# with very many cells, times very many buckets) runs `search`'s linked buckets instead.
STACK_LIMIT = 2**25
TRAIL = 8  # deque capacity; distinct multiplier levels a footprint can hold exactly
WIDE = 128  # bit of a `flat_cells` mark: no heavier ground farther around
UNIFORM = 1  # `step_table`: a step whose pieces all have one multiplier
RISING = 2  # `step_table`: a step whose pieces' multipliers never fall


@intrinsic
def prefetch(typingctx, arr, i):
    """Ask the CPU to start loading the cache line of ``arr[i]`` (a 1-d array, i an
    integer index into it): a hint, with no effect on any result (LLVM's
    ``llvm.prefetch``, for reading, into every cache level)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)):
        return None  # numba reports the call as untyped

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        byte_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [byte_ptr],
            ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]))
        builder.call(fn, [builder.bitcast(ptr, byte_ptr), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, i), codegen


def _item_pointer(context, builder, aryty, array, index):
    ary = context.make_array(aryty)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)


@intrinsic
def shared_get(typingctx, arr, i):
    """``arr[i]`` read from memory every time (an atomic load, relaxed ordering), for a
    value another thread writes: a plain read may be kept in a register for the loop."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)
            and arr.dtype in (types.int64, types.float64)):
        return None

    def codegen(context, builder, signature, args):
        ptr = _item_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "monotonic", 8)

    return arr.dtype(arr, i), codegen


@intrinsic
def shared_set(typingctx, arr, i, value):
    """``arr[i] = value`` written to memory at once (an atomic store, relaxed ordering),
    for a value another thread reads (`shared_get`)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)
            and arr.dtype in (types.int64, types.float64)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ptr = _item_pointer(context, builder, aryty, args[0], args[1])
        val = context.cast(builder, args[2], signature.args[2], aryty.dtype)
        builder.store_atomic(val, ptr, "monotonic", 8)
        return context.get_dummy_value()

    return types.void(arr, i, value), codegen


@njit(cache=True)
def climb(steep, gxf, gxb, gyf, gyb, ux, uy):
    """The steep multiplier if travel along ``(ux, uy)`` gains height, else 1.

    The rise is measured upwind: towards the neighbour the unit moves to
    (``g?f``: forward differences, ``g?b``: backward), so a crest cell is
    level both ways rather than uphill on the far side.  Scalars only: the
    search calls it per step, where passing arrays would cost a reference
    count each.
    """
    rise = (gxf if ux > 0.0 else gxb) * ux + (gyf if uy > 0.0 else gyb) * uy
    return steep if rise > UPHILL_TOL else 1.0


@njit(cache=True)
def ground(base, steep, gxf, gxb, gyf, gyb, i, ux, uy):
    """Multiplier of flat cell ``i`` travelling along ``(ux, uy)``: steep applies uphill only."""
    m = base[i]
    if steep[i] != 1.0:
        m *= climb(steep[i], gxf[i], gxb[i], gyf[i], gyb[i], ux, uy)
    return m


@njit(cache=True, inline="always")
def push(lv, rem, org, n, level, r, origin):
    """Append ground ``level`` under the footprint for ``r`` more; return the new size."""
    while n > 0 and lv[n - 1] <= level:
        n -= 1
    if n == TRAIL:
        # Full: merge the two lowest entries upwards (never undercharges).
        rem[n - 2] = rem[n - 1]
        n -= 1
    lv[n] = level
    rem[n] = r
    org[n] = origin
    return n + 1


@njit(cache=True, error_model="numpy", inline="always")
def advance(lv, rem, org, n, level, origin, length, depth, rec_len, rec_lv, rec_org, record):
    """Move the front ``length`` over ground ``level`` (cell ``origin``).

    Returns ``(cost, n, n_records)``; with ``record`` set, the stretches of
    constant multiplier are written to ``rec_*`` (length, multiplier, the
    cell that set it).
    """
    while n > 0 and lv[n - 1] <= level:
        n -= 1
    cost = 0.0
    cur = 0.0
    nrec = 0
    for i in range(n):
        if cur >= length:
            break
        if rem[i] > cur:
            end = min(rem[i], length)
            cost += lv[i] * (end - cur)
            if record:
                rec_len[nrec] = end - cur
                rec_lv[nrec] = lv[i]
                rec_org[nrec] = org[i]
                nrec += 1
            cur = end
    if cur < length:
        cost += level * (length - cur)
        if record:
            rec_len[nrec] = length - cur
            rec_lv[nrec] = level
            rec_org[nrec] = origin
            nrec += 1
    m = 0
    for i in range(n):
        r = rem[i] - length
        if r > 0.0:
            lv[m] = lv[i]
            rem[m] = r
            org[m] = org[i]
            m += 1
    n = m
    if depth > 0.0:
        n = push(lv, rem, org, n, level, depth, origin)
    return cost, n, nrec


@njit(cache=True, inline="always")
def entry(enter_i, enter_prev, narrow_i, narrow_prev):
    """Flat costs of the front going into cell i from cell prev.

    ``enter`` (an obstacle's crossing cost) is paid going into a cell whose
    cost differs from prev's (another obstacle, or none); ``narrow`` (a
    formation change) going into a cell that has one from a cell that has
    none: a unit already narrowed does not narrow again.  Scalars only: the
    kernels call it per piece, where passing arrays would cost a reference
    count each.
    """
    c = 0.0
    if enter_i > 0.0 and enter_i != enter_prev:
        c += enter_i
    if narrow_i > 0.0 and narrow_prev == 0.0:
        c += narrow_i
    return c


# `walk_path`'s row kinds.
MOVE, BLOCKED, BLOCKED_SEGMENT, OBSTACLE, NARROW, QUANTUM = range(6)
# A stretch within this of a whole number of quanta is that number (float error
# along a path must not start a quantum that was never entered).
_QUANTUM_TOL = 1e-9


@njit(cache=True, error_model="numpy")
def walk_path(
    segs, cell, base, steep, gxf, gxb, gyf, gyb, enter, narrow, quantum, combo, lv, rem, org,
    n, at, depth, cols, out_f, out_i,
):
    """Price a polyline piece by piece: `engine.pricing`'s walk, in one call.

    Row j of ``segs`` is a segment ``(px, py, qx, qy, length, ux, uy, cells)``:
    from p to q (table units; no move of zero length), ``length`` long, along
    the unit vector ``(ux, uy)``, ``cells`` long in cells (the caller computes
    the last four, so they are Python's own ``math.hypot``).  Each segment is cut where
    it crosses grid lines, as `engine.grid.segment_cells` cuts it; a segment that
    touches an impassable cell at a corner only is one `BLOCKED_SEGMENT` row.
    The trail (``lv``, ``rem``, ``org``, ``n`` entries: the footprint the unit
    stood on) and the front's cell ``at`` carry on from piece to piece;
    ``quantum`` (empty where nothing is priced per started quantum) is the
    quantum of each kind of ground, ``combo`` each cell's kind.

    Row k of the result is ``out_i[k] = (kind, cell, front, kind of ground,
    uphill)`` and ``out_f[k] = (x0, y0, x1, y1, length, cost, level)``: a `MOVE`
    stretch (cell: the one that set the multiplier ``level``, whose ``combo``
    the fourth column repeats, and the fifth is 1 where ``level`` is above its
    ``base``: it was climbing; front: the cell the front is in), a
    `BLOCKED` piece, an `OBSTACLE` crossed or a `NARROW` passage entered (cost:
    its flat cost), or a `QUANTUM` rounding up (level: the distance priced in
    the quantised ground, cell: the last cell of it, front: the quanta
    started).  Returns the number of rows.  A cell crossed writes at most
    ``TRAIL + 4`` of them (an obstacle, a passage, a quantum and the trail's
    ``TRAIL + 1`` stretches), and a segment ``d`` cells long along x and ``e``
    along y crosses at most ``ceil(d) + 1`` grid lines one way and ``ceil(e) +
    1`` the other, so at most ``ceil(d) + ceil(e) + 3`` cells: arrays of
    ``(ceil(d) + ceil(e) + 3) * (TRAIL + 4)`` rows a segment, and one for the
    last quantum, always suffice (numba does not check the bounds).
    """
    height = base.shape[0] // cols
    rec_len = np.empty(TRAIL + 1)
    rec_lv = np.empty(TRAIL + 1)
    rec_org = np.empty(TRAIL + 1, dtype=np.int64)
    has_q = quantum.shape[0] > 0
    q, qd, qm, qcell = 0.0, 0.0, 1.0, -1
    k = 0
    for j in range(segs.shape[0]):
        px, py, qx, qy = segs[j, 0], segs[j, 1], segs[j, 2], segs[j, 3]
        seg, u, w, tot = segs[j, 4], segs[j, 5], segs[j, 6], segs[j, 7]
        # The segment in cells: where it crosses grid lines, ascending.
        cpx, cpy = px / cell, py / cell
        dx, dy = qx / cell - cpx, qy / cell - cpy
        if tot == 0.0:
            continue
        lox, hix = min(cpx, cpx + dx), max(cpx, cpx + dx)
        loy, hiy = min(cpy, cpy + dy), max(cpy, cpy + dy)
        nx = max(math.ceil(hix) - math.floor(lox) - 1, 0) if dx != 0.0 else 0
        ny = max(math.ceil(hiy) - math.floor(loy) - 1, 0) if dy != 0.0 else 0
        cross = np.empty(nx + ny)
        nc = 0
        for start, delta, lo, count in ((cpx, dx, lox, nx), (cpy, dy, loy, ny)):
            if count > 0:
                scale = tot / delta
                for g in range(math.floor(lo) + 1, math.floor(lo) + 1 + count):
                    s = (g - start) * scale
                    if _SEGMENT_EPS < s < tot - _SEGMENT_EPS:
                        cross[nc] = s
                        nc += 1
        cross = np.sort(cross[:nc])
        breaks = np.empty(nc + 2)
        corner_at = np.empty(nc)
        breaks[0] = 0.0
        nb, ncorner = 1, 0
        close = _SEGMENT_EPS * max(1.0, tot)
        for s in cross:
            if s - breaks[nb - 1] <= close:
                if nb > 1:
                    corner_at[ncorner] = breaks[nb - 1]
                    ncorner += 1
                continue
            breaks[nb] = s
            nb += 1
        breaks[nb] = tot
        nb += 1
        pr = np.empty(nb - 1, dtype=np.int64)
        pc = np.empty(nb - 1, dtype=np.int64)
        for t in range(nb - 1):
            sm = 0.5 * (breaks[t] + breaks[t + 1]) / tot
            pr[t] = math.floor(cpy + sm * dy)
            pc[t] = math.floor(cpx + sm * dx)
        # A step may not squeeze between impassable cells through their shared corner.
        blocked = -1
        for t in range(ncorner):
            s = corner_at[t]
            cx, cy = round(cpx + s / tot * dx), round(cpy + s / tot * dy)
            for r, c in ((cy - 1, cx - 1), (cy - 1, cx), (cy, cx - 1), (cy, cx)):
                if 0 <= r < height and 0 <= c < cols and base[r * cols + c] == np.inf:
                    crossed = False
                    for v in range(nb - 1):
                        if pr[v] == r and pc[v] == c:
                            crossed = True
                    if not crossed:
                        blocked = r * cols + c
                        break
            if blocked >= 0:
                break
        if blocked >= 0:
            out_i[k, 0], out_i[k, 1], out_i[k, 2] = BLOCKED_SEGMENT, blocked, blocked
            out_f[k, 0], out_f[k, 1], out_f[k, 2], out_f[k, 3] = px, py, qx, qy
            out_f[k, 4], out_f[k, 5], out_f[k, 6] = seg, np.inf, np.inf
            k += 1
            continue
        for t in range(nb - 1):
            s0, s1 = breaks[t], breaks[t + 1]
            i = min(max(pr[t], 0), height - 1) * cols + min(max(pc[t], 0), cols - 1)
            # Points by distance along the unit direction: exact on axis-parallel paths.
            ax, ay = px + u * s0 * cell, py + w * s0 * cell
            bx, by = (qx, qy) if t == nb - 2 else (px + u * s1 * cell, py + w * s1 * cell)
            length = (s1 - s0) * cell
            m = ground(base, steep, gxf, gxb, gyf, gyb, i, u, w)
            if m == np.inf:
                out_i[k, 0], out_i[k, 1], out_i[k, 2] = BLOCKED, i, i
                out_f[k, 0], out_f[k, 1], out_f[k, 2], out_f[k, 3] = ax, ay, bx, by
                out_f[k, 4], out_f[k, 5], out_f[k, 6] = length, np.inf, np.inf
                k += 1
                continue
            if enter[i] > 0.0 and enter[i] != enter[at]:
                out_i[k, 0], out_i[k, 1], out_i[k, 2] = OBSTACLE, i, i
                out_f[k, 0], out_f[k, 1], out_f[k, 2], out_f[k, 3] = ax, ay, ax, ay
                out_f[k, 4], out_f[k, 5], out_f[k, 6] = 0.0, enter[i], 0.0
                k += 1
            if narrow[i] > 0.0 and narrow[at] == 0.0:
                out_i[k, 0], out_i[k, 1], out_i[k, 2] = NARROW, i, i
                out_f[k, 0], out_f[k, 1], out_f[k, 2], out_f[k, 3] = ax, ay, ax, ay
                out_f[k, 4], out_f[k, 5], out_f[k, 6] = 0.0, narrow[i], 0.0
                k += 1
            at = i
            if has_q:
                if quantum[combo[i]] != q:
                    k = _close_quantum(q, qd, qm, qcell, ax, ay, out_f, out_i, k)
                    q, qd = quantum[combo[i]], 0.0
                if q > 0.0:
                    qd += length
                    qm, qcell = m, i
            _, n, nrec = advance(lv, rem, org, n, m, i, length, depth, rec_len, rec_lv,
                                 rec_org, True)
            done = 0.0
            for v in range(nrec):
                part, level = rec_len[v], rec_lv[v]
                f0, f1 = done / length, (done + part) / length
                done += part
                o = rec_org[v]
                out_i[k, 0], out_i[k, 1], out_i[k, 2] = MOVE, o, i
                out_i[k, 3], out_i[k, 4] = combo[o], level > base[o]
                out_f[k, 0], out_f[k, 1] = ax + f0 * (bx - ax), ay + f0 * (by - ay)
                out_f[k, 2], out_f[k, 3] = ax + f1 * (bx - ax), ay + f1 * (by - ay)
                out_f[k, 4], out_f[k, 5], out_f[k, 6] = part, part * level, level
                k += 1
    last = segs.shape[0] - 1
    return _close_quantum(q, qd, qm, qcell, segs[last, 2], segs[last, 3], out_f, out_i, k)


@njit(cache=True, inline="always")
def _close_quantum(q, qd, qm, qcell, x, y, out_f, out_i, k):
    """`walk_path`'s end of a stretch of quantised ground at (x, y): a `QUANTUM` row
    for the rest of its last started quantum, if any; returns the row count."""
    if q <= 0.0:
        return k
    started = math.ceil(qd / q - _QUANTUM_TOL)
    extra = (started * q - qd) * qm
    if extra > _QUANTUM_TOL:
        out_i[k, 0], out_i[k, 1], out_i[k, 2] = QUANTUM, qcell, started
        out_f[k, 0], out_f[k, 1], out_f[k, 2], out_f[k, 3] = x, y, x, y
        out_f[k, 4], out_f[k, 5], out_f[k, 6] = 0.0, extra, qd
        k += 1
    return k


@njit(cache=True)
def _sift_up(i, hkey, hidx, pos):
    key = hkey[i]
    cell = hidx[i]
    while i > 0:
        parent = (i - 1) >> 1
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
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and hkey[child + 1] < hkey[child]:
            child += 1
        if hkey[child] >= key:
            break
        hkey[i] = hkey[child]
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


@njit(cache=True, error_model="numpy")
def step_table(
    base, steep, gxf, gxb, gyf, gyb, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w, enter,
    narrow, flat, flat_of, incoming, into, cost, uniform,
):
    """Price every step of every cell once, without the trail.

    ``cost[a * K + k]`` is what step k out of cell a costs over its pieces
    (``inf`` if it leaves the grid or is blocked); ``uniform`` is ``UNIFORM``
    where all its pieces have one multiplier (the trail then needs a single
    update), ``RISING`` where their multipliers never fall from one piece to
    the next (a trail no heavier than the first piece's ground then leaves the
    last piece's alone: `search_labels`), else 0.
    Flat entry costs (``enter``, ``narrow``: `entry`) are included.  A uniform
    step without them costs its multiplier times its length: the number the
    searches compute, without the table, for a step out of a `flat_cells`
    cell (marked in ``flat``, which may be empty: such a cell's steps are
    written so, without their pieces).  The piece walk is the one in
    `search`, written out in both: a shared helper taking the arrays made the
    search twice as slow, and this table six times slower.

    With ``incoming``, row r prices instead the steps into cell ``into[r]``
    (cells that are not flat): ``cost[r * K + k]`` is step k's out of the cell
    ``into[r] - step k`` (``inf`` off the grid), the row the flow kernel
    (`engine._flow.reverse_search`) reads when it expands that cell.  Without
    it, a non-empty ``into`` asks for the rows of those cells alone: row r
    prices the steps out of ``into[r]``.
    """
    ncell = base.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    entering = enter.shape[0] > 0
    has_flat = flat.shape[0] > 0
    listed = into.shape[0] > 0
    for r in range(into.shape[0] if incoming or listed else ncell):
        fa = flat_of[flat[into[r] if listed else r]] if has_flat and not incoming else 0.0
        if fa > 0.0:
            for k in range(nsteps):
                cost[r * nsteps + k] = fa * step_len[k]
                uniform[r * nsteps + k] = UNIFORM
            continue
        tr = into[r] // cols if incoming else 0  # the cell the incoming row's steps reach
        tc = into[r] - tr * cols if incoming else 0
        for k in range(nsteps):
            slot = r * nsteps + k
            cost[slot] = np.inf
            uniform[slot] = 0
            if incoming:  # a is the cell step k leaves for into[r]
                ar = tr - step_dr[k]
                ac = tc - step_dc[k]
                if ar < 0 or ar >= rows or ac < 0 or ac >= cols:
                    continue
                a = ar * cols + ac
                fa = flat_of[flat[a]] if has_flat else 0.0
                if fa > 0.0:  # the step lies in a's box
                    cost[slot] = fa * step_len[k]
                    uniform[slot] = UNIFORM
                    continue
            else:
                a = into[r] if listed else r
                ar = a // cols
                ac = a - ar * cols
                br = ar + step_dr[k]
                bc = ac + step_dc[k]
                if br < 0 or br >= rows or bc < 0 or bc >= cols:
                    continue
            total = 0.0
            first = -1.0
            last = -1.0
            same = True
            rising = True
            flat_cost = True  # no entry cost on the way
            prev = a
            for j in range(piece_start[k], piece_start[k + 1]):
                i = a + piece_dr[j] * cols + piece_dc[j]
                if piece_w[j] == 0.0:
                    if base[i] == np.inf:
                        total = np.inf
                        break
                    continue
                g = base[i]
                if not plain and steep[i] != 1.0:
                    g *= climb(steep[i], gxf[i], gxb[i], gyf[i], gyb[i], ux[k], uy[k])
                if g == np.inf:
                    total = np.inf
                    break
                if first < 0.0:
                    first = g
                elif g != first:
                    same = False
                rising = rising and g >= last
                last = g
                total += piece_w[j] * step_len[k] * g
                if entering:
                    e = entry(enter[i], enter[prev], narrow[i], narrow[prev])
                    total += e
                    flat_cost = flat_cost and e == 0.0
                prev = i
            if same and total != np.inf:
                uniform[slot] = UNIFORM
                if flat_cost:
                    total = first * step_len[k]
            elif rising and total != np.inf:
                uniform[slot] = RISING
            cost[slot] = total


@njit(cache=True)
def trail_cells(step_len, depth):
    """How many cells (rows or columns) from the front a trail ``depth`` deep can
    hold ground of: a cell's ground is kept until the front is ``depth`` past
    where it left the cell, half a cell or more from its centre.  So is the
    footprint's at the source: a cell behind it is kept until the front is
    ``depth`` past where the footprint's line enters it.  (A full trail merges
    two levels, the lower taking the other's distance: that distance is still
    a cell's within this reach.)"""
    return math.floor(depth / step_len.min() + 0.5)


@njit(cache=True, inline="always")
def _alike(base, steep, enter, narrow, i, j, has_steep, entering):
    """Whether cells i and j have the same multiplier, steep multiplier and flat costs."""
    if base[i] != base[j]:
        return False
    if has_steep and steep[i] != steep[j]:
        return False
    return not entering or (enter[i] == enter[j] and narrow[i] == narrow[j])


@njit(cache=True, inline="always")
def _window_max(line, n, half, prefix, suffix):
    """``line[i]`` becomes the largest of ``line[i - half : i + half + 1]`` (0 past
    either end; values >= 0): van Herk and Gil-Werman's prefix and suffix maxima
    over blocks as wide as the window, three passes whatever ``half``."""
    w = 2 * half + 1
    m = n + 2 * half  # the line padded with `half` zeros each side
    for j in range(m):
        v = line[j - half] if half <= j < n + half else 0.0
        prefix[j] = v if j % w == 0 else max(prefix[j - 1], v)
    for j in range(m - 1, -1, -1):
        v = line[j - half] if half <= j < n + half else 0.0
        suffix[j] = v if j % w == w - 1 or j == m - 1 else max(suffix[j + 1], v)
    for i in range(n):
        line[i] = max(suffix[i], prefix[i + w - 1])


@njit(cache=True)
def calm_cells(base, steep, cols, half, out):
    """Mark (uint8, 1) the cells with no heavier ground within ``half`` rows and
    columns: no cell there whose multiplier (times its steep multiplier, ``steep``
    empty for none) exceeds the cell's own.  Impassable cells and the ground off
    the grid hold no trail and count as none.  A running maximum along the rows,
    then down the columns (`_window_max`)."""
    n = base.shape[0]
    rows = n // cols
    top = np.empty(n)
    for i in range(n):
        g = base[i]
        top[i] = 0.0 if g == np.inf else (g * steep[i] if steep.shape[0] > 0 else g)
    longest = max(rows, cols)
    line = np.empty(longest)
    prefix = np.empty(longest + 4 * half + 1)
    suffix = np.empty(longest + 4 * half + 1)
    for r in range(rows):
        line[:cols] = top[r * cols:(r + 1) * cols]
        _window_max(line, cols, half, prefix, suffix)
        top[r * cols:(r + 1) * cols] = line[:cols]
    for c in range(cols):
        for r in range(rows):
            line[r] = top[r * cols + c]
        _window_max(line, rows, half, prefix, suffix)
        for r in range(rows):
            i = r * cols + c
            out[i] = 1 if line[r] <= base[i] else 0


@njit(cache=True)
def flat_cells(base, steep, enter, narrow, cols, reach, calm, out, multiplier):
    """Mark the cells every step out of which costs the cell's multiplier times its length.

    That holds where every cell within ``reach`` (the longest step's, in rows
    or columns) of a is on the grid, has a's finite multiplier, no steep
    multiplier, and a's flat entry costs (so `entry` charges nothing).
    ``out[a]`` (uint8) is then the index of a's multiplier in ``multiplier``
    (whose entry 0 is 0.0, filled here, at most ``WIDE`` long), else 0; a
    cell whose multiplier would be the ``WIDE``-th distinct one is left
    unmarked (the searches price it as any other).  The bit ``WIDE`` is set
    as well where ``calm`` (uint8, empty for none) is set: for a unit with
    rear ranks, no ground near the cell is heavier than its own, so no trail
    near it weighs more (`search_labels` prunes such a cell's steps).  Returns
    how many entries of ``multiplier`` are used.  One byte a cell keeps the
    mark where the searches read it often: on a 2048² grid, 4 MiB against 32
    for the multipliers themselves.

    Runs of alike cells along each row, then runs down each column of cells
    whose row is alike, make it one pass each way.  The searches price a
    marked cell's steps without the table or the pieces (``step_table`` holds
    the same numbers); ``steep`` and ``enter`` may be empty (none).
    """
    n = base.shape[0]
    rows = n // cols
    has_steep = steep.shape[0] > 0
    entering = enter.shape[0] > 0
    has_calm = calm.shape[0] > 0
    # Runs of alike cells ending at each cell: leftward, then rightward (a row's
    # `reach` on both sides alike: `row_ok`); then upward and downward over cells
    # whose rows are alike, per column.
    run = np.zeros(cols, dtype=np.int64)
    row_ok = np.zeros(n, dtype=np.bool_)
    for r in range(rows):
        o = r * cols
        for c in range(cols):
            i = o + c
            alike = c > 0 and _alike(base, steep, enter, narrow, i, i - 1, has_steep, entering)
            run[c] = run[c - 1] + 1 if alike else 1
        right = 0
        for c in range(cols - 1, -1, -1):
            i = o + c
            alike = c < cols - 1 and _alike(base, steep, enter, narrow, i, i + 1, has_steep,
                                            entering)
            right = right + 1 if alike else 1
            row_ok[i] = run[c] > reach and right > reach
    run[:] = 0
    for i in range(n):  # whether the run upward is long enough, kept in `out` for the way back
        c = i % cols
        alike = i >= cols and row_ok[i - cols] and _alike(base, steep, enter, narrow, i,
                                                          i - cols, has_steep, entering)
        run[c] = (run[c] + 1 if alike else 1) if row_ok[i] else 0
        out[i] = 1 if run[c] > reach else 0
    run[:] = 0
    multiplier[0] = 0.0
    used = 1
    last = 0  # the index found last: neighbours mostly share it
    for i in range(n - 1, -1, -1):
        c = i % cols
        alike = i + cols < n and row_ok[i + cols] and _alike(base, steep, enter, narrow, i,
                                                             i + cols, has_steep, entering)
        run[c] = (run[c] + 1 if alike else 1) if row_ok[i] else 0
        ok = out[i] == 1 and run[c] > reach and base[i] != np.inf
        if ok and has_steep:
            ok = steep[i] == 1.0
        out[i] = 0
        if ok:
            if multiplier[last] != base[i]:
                last = 0
                for j in range(1, used):
                    if multiplier[j] == base[i]:
                        last = j
                        break
                if last == 0 and used < multiplier.shape[0]:
                    multiplier[used] = base[i]
                    last = used
                    used += 1
            out[i] = last | WIDE if has_calm and calm[i] and last > 0 else last
    return used


@njit(cache=True, error_model="numpy")
def search(
    base, steep, gxf, gxb, gyf, gyb, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, source, goal, cell, budget,
    dist, parent, pos, hkey, hidx, touched, link, lm, lm_goal,
):
    """Dijkstra (``goal < 0``) or A* (``goal >= 0``) over the step neighbourhood.

    A step k from cell a crosses the cells ``piece_*[piece_start[k]:
    piece_start[k + 1]]`` in order, a fraction ``piece_w`` of its length
    ``step_len[k]`` in each (weight 0: a cell touched only at a corner, which
    can only block).  With ``plain`` the multiplier is ``base``; otherwise it
    is the direction's `ground`.  A unit with rear ranks goes to
    `search_labels` (``depth``, ``fp_*`` and ``table_uniform`` are not read
    here).

    ``table_*`` (from `step_table`, or empty to price steps as it goes)
    hold every step's cost.  ``flat_of[flat[a]]`` (`flat_cells`; ``flat``
    may be empty) is the multiplier of a cell whose steps all cost it times
    their length, table or not, else 0; such a cell takes only the steps
    ``onward_*`` keep after the step that reached it
    (`terrain.onward_steps`; the last row holds all).

    ``enter`` and ``narrow`` (both empty for none) are flat costs per cell,
    paid as the step's front goes into a cell (`entry`): crossing a wall, a
    unit narrowing its formation to pass a bridge.

    Dijkstra keeps its open cells in a ring of ``nb`` buckets as wide as the
    shortest step (``nb``, a power of two, spans the costliest step; ``link``
    holds each cell's next and previous in its bucket).  No step costs less
    than its length (multipliers are >= 1), so every cell in the cheapest
    bucket is final and a bucket is emptied in any order (Dial's algorithm
    with buckets no wider than the lightest step).  It stops
    once the cheapest bucket starts beyond ``budget``.  A* keeps a binary heap
    on cost plus the distance on open ground (octile with 8 steps, straight
    line otherwise: no step is cheaper than its length) and stops when
    ``goal`` settles.  With landmarks (``lm[b, l]``: landmark l's cost at cell b,
    cell-major so that a cell's costs are read together; ``lm_goal[0, l]``: a
    lower bound of its cost at the goal, ``lm_goal[1, l]``: minus an upper
    bound of it where costs are the same both ways, else ``-inf``; both may be
    empty) the bound is the larger of that and, for every landmark,
    ``lm_goal[0, l] - lm[b, l]`` and ``lm[b, l] + lm_goal[1, l]`` (ALT); a cell
    the bound shows cannot reach the goal is dropped.  A queued cell reached
    more cheaply keeps its bound (its key drops by what it saved) instead of
    reading the landmarks again.

    Returns the number of cells written to ``touched`` (each with a finite
    ``dist``; the caller resets them).  ``parent`` holds the step index that
    reached a cell (-1 at the source).
    """
    ncell = dist.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    dist[source] = 0.0
    parent[source] = -1
    touched[0] = source
    n_touched = 1
    astar = goal >= 0
    tabled = table_cost.shape[0] > 0
    entering = enter.shape[0] > 0
    # Landmark bounds are float32, consistent only to rounding: a settled cell
    # reached more cheaply is queued again, so the answer stays exact.
    reopen = lm_goal.shape[1] > 0
    step_off = step_dr * cols + step_dc
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    heads = np.full(nb if not astar else 1, -1, dtype=np.int64)
    ring = nb - 1  # nb is a power of two: a mask, not a division, picks the bucket
    width = step_len.min()  # no step costs less (multipliers are >= 1)
    per_width = (1.0 / width) * (1.0 + 1e-12)  # never wider than that
    straight = width
    diagonal = min(step_len.max(), 2.0 * width)
    queued = 0
    current = 0
    if astar:
        hkey[0] = 0.0
        hidx[0] = source
        pos[source] = 0
        queued = 1
    else:
        heads[0] = source
        link[2 * source] = -1
        link[2 * source + 1] = -1
        pos[source] = 0
        queued = 1
    while queued > 0:
        if astar:
            a = _heap_pop(queued, hkey, hidx, pos)
            queued -= 1
            if a == goal:
                pos[a] = -2
                break
        else:
            while heads[current & ring] < 0:
                current += 1
            if current * width > budget:
                break
            slot = current & ring
            a = heads[slot]
            nxt = link[2 * a]
            heads[slot] = nxt
            if nxt >= 0:
                link[2 * nxt + 1] = -1
            queued -= 1
        pos[a] = -2
        da = dist[a]
        if da > budget:  # settled past the allowance (its bucket straddles it): a dead end
            continue
        ar = a // cols
        ac = a - ar * cols
        # A flat cell's steps all cost their length at its multiplier, and only the
        # steps the one that reached it leaves worth taking are taken.
        fa = flat_of[flat[a]] if flat.shape[0] > 0 else 0.0
        row = parent[a] if fa > 0.0 and a != source else nsteps
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            if fa > 0.0:  # the table's number, without reading it or the pieces
                total = fa * step_len[k]
                b = a + step_off[k]
            elif tabled:  # the table says inf for steps off the grid
                total = table_cost[a * nsteps + k]
                if total == np.inf:
                    continue
                b = a + step_off[k]
            else:
                br = ar + step_dr[k]
                bc = ac + step_dc[k]
                if br < 0 or br >= rows or bc < 0 or bc >= cols:
                    continue
                b = br * cols + bc
            if pos[b] == -2 and not reopen:
                continue
            # The step's cost: from the table or the flat multiplier, else its pieces.
            if fa == 0.0 and not tabled:
                total = 0.0
                prev = a
                for j in range(piece_start[k], piece_start[k + 1]):
                    i = a + piece_dr[j] * cols + piece_dc[j]
                    if piece_w[j] == 0.0:
                        if base[i] == np.inf:
                            total = np.inf
                            break
                        continue
                    g = base[i]
                    if not plain and steep[i] != 1.0:
                        g *= climb(steep[i], gxf[i], gxb[i], gyf[i], gyb[i], ux[k], uy[k])
                    if g == np.inf:
                        total = np.inf
                        break
                    total += piece_w[j] * step_len[k] * g
                    if entering:
                        total += entry(enter[i], enter[prev], narrow[i], narrow[prev])
                    prev = i
            nd = da + total
            before = dist[b]
            if nd >= before:
                continue
            if before == np.inf:
                touched[n_touched] = b
                n_touched += 1
            dist[b] = nd
            parent[b] = k
            if astar and reopen and pos[b] >= 0:
                # Queued already: its bound is its key less its old cost (landmark
                # bounds carry far more slack than this subtraction's rounding).
                hkey[pos[b]] -= before - nd
                _sift_up(pos[b], hkey, hidx, pos)
            elif astar:
                h = _landmark_bound(lm, lm_goal, b, _to_go(
                    b // cols - goal_r, b % cols - goal_c, nsteps, straight, diagonal, cell))
                if h == np.inf:
                    continue
                key = nd + h
                if pos[b] < 0:
                    hkey[queued] = key
                    hidx[queued] = b
                    pos[b] = queued
                    queued += 1
                    _sift_up(queued - 1, hkey, hidx, pos)
                else:
                    hkey[pos[b]] = key
                    _sift_up(pos[b], hkey, hidx, pos)
            else:
                if pos[b] >= 0:  # unlink from its old bucket
                    prv = link[2 * b + 1]
                    nxt = link[2 * b]
                    if prv >= 0:
                        link[2 * prv] = nxt
                    else:
                        heads[pos[b]] = nxt
                    if nxt >= 0:
                        link[2 * nxt + 1] = prv
                    queued -= 1
                slot = int(nd * per_width) & ring
                head = heads[slot]
                link[2 * b] = head
                link[2 * b + 1] = -1
                if head >= 0:
                    link[2 * head + 1] = b
                heads[slot] = b
                pos[b] = slot
                queued += 1
    return n_touched


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
def stack_rows(nb, astar, split=ASTAR_SPLIT):
    """Buckets `search_plain` needs (its ``stack``'s rows): ``nb`` for Dijkstra;
    for A*, whose keys rise by a step's cost plus at most its length (with
    landmarks, at most the step's cost both ways) in buckets ``ASTAR_SPLIT``
    times narrower, ``2 * ASTAR_SPLIT * nb``.  (With shared rows the A*'s
    buckets are lists, their heads in an array of its own, ``split`` =
    ``POOL_SPLIT`` times narrower, and ``stack`` is only their pool.)"""
    return 2 * nb * split if astar else nb


@njit(cache=True, error_model="numpy")
def search_plain(
    base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w, nb,
    table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell, budget,
    dist, parent, touched, stack, lowest, lm, lm_goal,
):
    """`search` where a step's cost depends on nothing behind the front.

    No footprint: a step costs its entry in ``table_cost`` (`step_table`:
    inf off the grid; from a cell marked in ``flat`` (`flat_cells`), its
    multiplier ``flat_of[flat[a]]`` times the step's length, the same number)
    or, with an empty table, its pieces' multipliers (no slopes), in a kernel
    small enough to compile tight.  With a ``table_row`` (A* only), the table
    holds rows shared by cells (`CostGrid.outgoing_steps`): cell a's is
    ``table_row[a]``, and every cell that is not flat must have one.  A flat
    cell takes only the steps ``onward_*`` keep after the step that reached
    it (`terrain.onward_steps`).  Without a table the grid has a border of
    blocked cells at least as wide as the longest step, so no step leaves it
    and nothing is bounds-checked.  Pieces are priced branch-free: a corner
    piece (length 0) over a blocked cell gives NaN, which blocks like inf.

    Dijkstra and A* share one queue: a ring of buckets, each a stack of cells
    (the lightest queue: an entry is two sequential writes; an improved cell is
    pushed again and its older entries are skipped once it is expanded, marked
    by ``CLOSED`` in ``parent``).  Dijkstra keys on cost in buckets as wide as
    the shortest step, so a bucket's cells are final (Dial's algorithm, as in
    `search`).  With ``lowest`` (Dijkstra with a table: a reach priced per
    started quantum is settled along the steps kept), of offers equal to the
    bit a cell keeps the lowest-numbered step, so the steps kept depend on
    neither the queue's order nor pruning; otherwise it keeps the first
    (keeping the lowest made demo reaches 20% slower).  A* keys on cost plus
    the distance left on open ground (octile with 8 steps, straight line
    otherwise), which no step lowers, or the landmarks' bound where it is
    larger (``lm``, ``lm_goal``: `search`'s; a cell it shows cannot reach the
    goal is dropped), in buckets ``ASTAR_SPLIT`` times narrower (``POOL_SPLIT``
    with a ``table_row``, whose buckets are lists in ``stack`` taken whole).
    Cells within one bucket can still improve each other (and the landmarks'
    float32 bound is consistent only to rounding), so an improved cell is
    reopened and expanded again (unless the improvement is rounding,
    ``REOPEN``; a key below the current bucket goes into it), and the search
    stops once the cheapest bucket starts at or beyond the goal's cost: no open
    path can then be cheaper.  Cells costing more than ``budget`` are never
    queued.

    The buckets are rows of ``stack``, the caller's (`stack_rows` of them),
    so the loop holds no array it may replace.  Returns the number of cells
    written to ``touched``, or minus it if a bucket outgrew its row (the
    caller resets them and calls again with a wider stack).
    """
    tabled = table_cost.shape[0] > 0
    if goal >= 0 and table_row.shape[0] > 0:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, True, True, False, True,
        )
    if goal >= 0 and tabled:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, True, True, False, False,
        )
    if goal >= 0:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, True, False, False, False,
        )
    if tabled and lowest:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, False, True, True, False,
        )
    if tabled:
        return _search_plain(
            base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
            nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
            budget, dist, parent, touched, stack, lm, lm_goal, False, True, False, False,
        )
    return _search_plain(
        base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w,
        nb, table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell,
        budget, dist, parent, touched, stack, lm, lm_goal, False, False, False, False,
    )


@njit(cache=True, inline="always")
def _landmark_bound(lm, lm_goal, b, h, first=0):
    """``h`` raised to the landmarks' bound at cell ``b`` (`search`'s ALT bound, with
    ``lm_goal``'s rows ``first`` and ``first + 1``)."""
    for m in range(lm_goal.shape[1]):
        at = lm[b, m]
        if at != np.inf:
            h = max(h, lm_goal[first, m] - at, at + lm_goal[first + 1, m])
    return h


@njit(cache=True, error_model="numpy")
def _search_plain(
    base, cols, step_dr, step_dc, step_len, piece_start, piece_dr, piece_dc, piece_w, nb,
    table_cost, table_row, flat, flat_of, onward_start, onward, source, goal, cell, budget,
    dist, parent, touched, stack, lm, lm_goal, astar, tabled, lowest, indexed,
):
    """`search_plain` compiled for each value of ``astar`` (``goal >= 0``), ``tabled``,
    ``lowest`` and ``indexed`` (a ``table_row``).

    ``numba.literally`` makes the flags constants, so each compiled loop keeps
    only its own branches (about 15% on demo-map reaches, bench/README.md).
    Called from Python, the flags would cost a literal re-dispatch (milliseconds)
    every time: call `search_plain`.
    """
    literally(astar)
    literally(tabled)
    literally(lowest)
    literally(indexed)
    nsteps = step_dr.shape[0]
    step_off = step_dr * cols + step_dc
    piece_off = piece_dr * cols + piece_dc
    piece_len = np.empty(piece_w.shape[0])
    for k in range(nsteps):
        for j in range(piece_start[k], piece_start[k + 1]):
            piece_len[j] = piece_w[j] * step_len[k]
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    shortest = step_len.min()
    diagonal = min(step_len.max(), 2.0 * shortest)
    # The pool's lists cost nothing per bucket, so its A* keeps them far narrower: wide
    # ones, taken last in first out, expanded the plateau's cells before their cost was
    # final and again after (2.2x the time across the 4096² campaign map).
    split = pool_split(nb) if indexed else ASTAR_SPLIT
    width = shortest / split if astar else shortest
    per_width = (1.0 / width) * (1.0 + 1e-12)
    has_flat = tabled and flat.shape[0] > 0
    span = stack_rows(nb, astar, split)
    ring = span - 1
    size = np.zeros(span, dtype=np.int64)
    dist[source] = 0.0
    parent[source] = -1
    touched[0] = source
    n_touched = 1
    current = 0
    if astar:
        h = _to_go(source // cols - goal_r, source % cols - goal_c, nsteps, shortest, diagonal,
                   cell)
        h = _landmark_bound(lm, lm_goal, source, h)
        if h == np.inf:  # the landmarks show the goal out of reach
            return n_touched
        current = int(h * per_width)
    # With shared rows (a grid too big for the whole table: the highway's A*) one
    # bucket may hold most of the queue (the landmark bound's plateau), so the buckets
    # are lists through ``stack`` taken whole, entries (cell, next), ``size`` their
    # heads (-1: empty): last in, first out as the rows are.  A popped entry is
    # reused (``spare`` lists them), so the pool holds the queue, not every push.
    pool = stack.reshape(-1)
    used = 1
    spare = -1
    if indexed:
        size[:] = -1
        pool[0] = source
        pool[1] = -1
        size[current & ring] = 0
    else:
        stack[current & ring, 0] = source
        size[current & ring] = 1
    queued = 1
    while queued > 0:
        while size[current & ring] == (-1 if indexed else 0):
            current += 1
        if current * width > budget:
            break
        if astar and current * width >= dist[goal] * (1.0 + 1e-12):
            break
        slot = current & ring
        if indexed:
            top = size[slot]
            a = pool[2 * top]
            size[slot] = pool[2 * top + 1]
            pool[2 * top + 1] = spare
            spare = top
        else:
            size[slot] -= 1
            a = stack[slot, size[slot]]
        queued -= 1
        if parent[a] >= CLOSED:  # expanded since this entry was pushed
            continue
        if a != source:  # the source's -1 has every bit set already
            parent[a] |= CLOSED
        da = dist[a]
        ar = a // cols
        ac = a - ar * cols
        # No path through a beats the goal's (in the last buckets: many ties).  With
        # shared rows the buckets are narrow and the check, a landmark look-up a pop,
        # saved nothing (4096² campaign routes 262, 236, 392 ms with it, 238, 193, 342
        # without).
        if astar and not indexed and da + _landmark_bound(lm, lm_goal, a, _to_go(
                ar - goal_r, ac - goal_c, nsteps, shortest, diagonal, cell)) >= dist[goal]:
            continue
        fa = flat_of[flat[a]] if has_flat else 0.0
        # Out of a flat cell, only the steps the one that reached it leaves worth taking.
        row = parent[a] & (CLOSED - 1) if fa > 0.0 and a != source else nsteps
        if fa > 0.0 and not astar:
            # A flat cell's steps, in a loop of their own: its number without the
            # table, and no branch per step on how to price it (13% on demo reaches).
            for q in range(onward_start[row], onward_start[row + 1]):
                k = onward[q]
                nd = da + fa * step_len[k]
                b = a + step_off[k]
                db = dist[b]
                if nd < db and nd <= budget and (parent[b] < CLOSED or nd <= db * REOPEN):
                    if db == np.inf:
                        touched[n_touched] = b
                        n_touched += 1
                    elif parent[b] < CLOSED and int(nd * per_width) == int(db * per_width):
                        dist[b] = nd  # queued in this bucket already: no second entry
                        parent[b] = k
                        continue
                    dist[b] = nd
                    parent[b] = k
                    slot = max(int(nd * per_width), current) & ring
                    if size[slot] == stack.shape[1]:
                        return -n_touched
                    stack[slot, size[slot]] = b
                    size[slot] += 1
                    queued += 1
                elif lowest and nd == db and k < parent[b] < CLOSED:
                    parent[b] = k  # of offers equal to the bit, the lowest step
            continue
        # (Raw grids have no flat cells: their loop is the plain one over every step.)
        own = (np.int64(table_row[a]) if indexed else a) * nsteps  # a's row of the table
        for q in range(onward_start[row] if tabled else 0,
                       onward_start[row + 1] if tabled else nsteps):
            k = onward[q] if tabled else q
            if fa > 0.0:  # the table's number, without reading it
                total = fa * step_len[k]
            elif tabled:
                total = table_cost[own + k]
                if total == np.inf:  # off the grid, or blocked
                    continue
            else:
                total = 0.0
                for j in range(piece_start[k], piece_start[k + 1]):
                    total += piece_len[j] * base[a + piece_off[j]]
            b = a + step_off[k]
            nd = da + total
            db = dist[b]
            if not nd < db or nd > budget:  # NaN and inf fail the first test
                if lowest and nd == db and k < parent[b] < CLOSED:
                    parent[b] = k  # of offers equal to the bit, the lowest step
                continue
            if parent[b] >= CLOSED and nd > db * REOPEN:  # rounding, not a cheaper path
                continue
            if db == np.inf:
                touched[n_touched] = b
                n_touched += 1
            elif not astar and parent[b] < CLOSED and int(nd * per_width) == int(db * per_width):
                dist[b] = nd  # queued in this bucket already: no second entry
                parent[b] = k
                continue
            dist[b] = nd
            parent[b] = k
            key = nd
            if astar:
                key += _landmark_bound(lm, lm_goal, b, _to_go(
                    ar + step_dr[k] - goal_r, ac + step_dc[k] - goal_c, nsteps, shortest,
                    diagonal, cell))
                if key == np.inf:  # the landmarks show b cannot reach the goal
                    continue
            slot = max(int(key * per_width), current) & ring
            if indexed:
                e = spare
                if e >= 0:
                    spare = pool[2 * e + 1]
                elif 2 * used + 1 < pool.shape[0]:
                    e = used
                    used += 1
                else:
                    return -n_touched
                pool[2 * e] = b
                pool[2 * e + 1] = size[slot]
                size[slot] = e
            else:
                if size[slot] == stack.shape[1]:
                    return -n_touched
                stack[slot, size[slot]] = b
                size[slot] += 1
            queued += 1
    return n_touched


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


@njit(cache=True, error_model="numpy")
def search_both(
    cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of, onward_start,
    onward, source, goal, cell, split, margin, dist, parent, touched, pool, heads, lm,
    bounds, exits, blocks, threads, pot,
):
    """A* from both ends at once (`Highway`'s, where a step costs the same both ways).

    The forward search runs from ``source`` as `_search_plain` does with
    shared rows (``table_row``, flat cells taking their onward steps); the
    backward one runs from ``goal`` the same way, since a step costs the same
    both ways.  Both key on the average of the two bounds (`_bound_to`: the
    goal's with ``bounds[0]`` and ``exits[0]``, the source's with ``bounds[1]``
    and ``exits[1]``), ``p = (h_goal - h_source) / 2``: the forward search on ``cost + p``, the
    backward one on ``cost - p``.  ``p`` is consistent both ways, so neither
    search's keys fall along a step, and a path through a cell costs its two
    keys' sum.  Every step that reaches a cell the other side has reached
    offers the sum of the two costs (each side keeps its lowest), and a side
    stops once the two cheapest buckets together start at or beyond the lower
    offer plus ``margin``: no path left can be cheaper.  The float32 bounds are
    consistent only to their rounding, so a key may fall below its bucket by
    as much (it is queued in the current bucket, and a cell improved after it
    was expanded is reopened, as in `_search_plain`); ``margin``, twice the
    bounds' slack, covers both sides' share.

    A cell's ``p`` is worked out when a side first reaches it (the ends when
    the search starts), rounded to float32 and kept in ``pot`` (inf: the
    landmarks show it on neither's way), for the later steps that reach it
    more cheaply: the bounds read every landmark (15% of the time across the
    4096² campaign map).  A cell first reached at a cost that, with its whole
    bound to the other end, comes to ``best * (1 + 1e-12) + margin`` or more
    (``best``: the lowest offer this side knows of) is not queued: no path
    through it can be cheaper.  A cell on a cheapest path, reached at its own
    cheapest cost, is never left out so, which is why a side whose queue runs
    empty may stop both.

    The blocks' bounds are used only if they raise the bound between the two
    ends by ``BLOCKS_GAIN`` or more (else ``exits[:, 0]`` is set to -inf).
    They cost 15 to 20% more time a cell touched (the cell's block and way out
    read, the rim's bound worked out for each side), and where they raise the
    bound between the ends little they sharpen the two sides' bounds unevenly
    and may not save cells at all: across the 4096² campaign map, of ten pairs
    of points, the six they raised by 2 to 9% ran 2% faster to 23% slower
    with them, the four raised by 12 to 136%, 10 to 34% faster.

    With ``threads`` the two sides run on two threads (`_both_threads`), each
    reading the other's costs as they stand and its bucket, offer and state
    through `shared_get`; else one thread runs the side whose cheapest bucket
    is lower until that bucket passes the other's (`_both_run`'s ``until``:
    a run of pops with the counters in locals, not one pop a call, which
    took 2.3 times as long).  Either way the answer is taken at the end from
    every cell both sides reached (`_both_answer`), so an offer one thread
    did not see in time is not lost.

    ``dist``, ``parent``, ``pot``, ``touched`` (each cell a side reaches,
    once), ``pool`` (queue entries) and ``heads`` (a power of two of bucket
    heads, as many as `stack_rows` gives) have a row per side (forward,
    backward); ``pot`` is read only where ``dist`` is finite, so it needs no
    reset.
    Returns ``(forward, backward, mu, meet)``: the cells each side touched
    (both negative if a side's pool or touched row ran out: reset them and
    call again with more), the answer's cost (inf: no route) and a cell where
    its two halves meet.
    """
    # The two ends' cells, rows and columns (a column each: source, goal).
    ends = np.empty((3, 2), dtype=np.int64)
    for side, e in enumerate((source, goal)):
        ends[0, side] = e
        ends[1, side] = e // cols
        ends[2, side] = e - ends[1, side] * cols
        dist[side, e] = 0.0
        parent[side, e] = -1
        touched[side, 0] = e
    if source == goal:
        return 1, 1, 0.0, source
    width = step_len.min() / split
    heads[:, :] = -1
    # Each side's counters in a row of their own, a cache line apart from the other's.
    state = np.zeros(2 * _PAD, dtype=np.int64)
    mu = np.full(2 * _PAD, np.inf)  # each side's best offer
    shortest = step_len.min()
    diagonal = min(step_len.max(), 2.0 * shortest)
    nsteps = step_dr.shape[0]
    per_width = (1.0 / width) * (1.0 + 1e-12)
    if exits[0, 0] != -np.inf or exits[1, 0] != -np.inf:
        # The blocks' bounds only where they raise the bound between the ends enough.
        between = _to_go(ends[1, 1] - ends[1, 0], ends[2, 1] - ends[2, 0], nsteps, shortest,
                         diagonal, cell)
        landmarks = max(_landmark_bound(lm, bounds[0], source, between),
                        _landmark_bound(lm, bounds[1], goal, between))
        blocks_bound = max(_bound_to(lm, bounds[0], exits[0], blocks, source, between),
                           _bound_to(lm, bounds[1], exits[1], blocks, goal, between))
        if blocks_bound < BLOCKS_GAIN * landmarks:
            exits[:, 0] = -np.inf
    for side in range(2):
        e = ends[0, side]
        ht, hs = _potential(lm, bounds[0], exits[0], bounds[1], exits[1], blocks, e,
                            ends[1, side], ends[2, side], ends, nsteps, shortest, diagonal,
                            cell)
        if ht == np.inf or hs == np.inf:  # the landmarks show the goal out of reach
            return 1, 1, np.inf, -1
        key = np.float64(np.float32(0.5 * (ht - hs) if side == 0 else 0.5 * (hs - ht)))
        pot[side, e] = key
        at = side * _PAD
        state[at + _CURRENT] = max(int(key * per_width), 0)
        state[at + _QUEUED] = 1
        state[at + _USED] = 1
        state[at + _SPARE] = -1
        state[at + _TOUCHED] = 1
        pool[side, 0] = e
        pool[side, 1] = -1
        heads[side, state[at + _CURRENT] & (heads.shape[1] - 1)] = 0
    if threads:
        _both_threads(
            state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of,
            onward_start, onward, cell, width, margin, dist, parent, touched, pool, heads, lm,
            bounds, exits, blocks, ends, pot)
    else:
        while state[_DONE] == 0 and state[_PAD + _DONE] == 0:
            side = 0 if state[_CURRENT] <= state[_PAD + _CURRENT] else 1
            _both_run(
                side, state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row,
                flat, flat_of, onward_start, onward, cell, width, margin, dist, parent,
                touched, pool, heads, lm, bounds, exits, blocks, ends, pot,
                state[(1 - side) * _PAD + _CURRENT])
    forward, backward = state[_TOUCHED], state[_PAD + _TOUCHED]
    if state[_DONE] == 2 or state[_PAD + _DONE] == 2:
        return -forward, -backward, np.inf, -1
    best, at = _both_answer(dist, touched, forward, backward)
    return forward, backward, best, at


# `search_both`'s counters: a side's row of ``_PAD`` in ``state``, and its fields.
_PAD = 16
_CURRENT, _QUEUED, _USED, _SPARE, _TOUCHED, _DONE, _POPS = range(7)
_CHECK = 32  # `search_both`'s pops between looks at the other side
# `search_both` takes the blocks' bounds where they raise the bound between the ends by
# this factor or more: below it, they cost more a cell touched than they save in cells.
BLOCKS_GAIN = 1.1
_NEVER = np.iinfo(np.int64).max  # `_both_run`'s ``until`` for a side on a thread of its own


@njit(cache=True, parallel=True)
def _both_threads(
    state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of,
    onward_start, onward, cell, width, margin, dist, parent, touched, pool, heads, lm,
    bounds, exits, blocks, ends, pot,
):
    """`search_both`'s two sides, each on a thread of its own, until both stop.  (The
    arrays one by one: handed to the threads in a tuple, each side read its own copy
    of the other's counters, and neither ever stopped.)"""
    for side in prange(2):
        _both_run(
            side, state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat,
            flat_of, onward_start, onward, cell, width, margin, dist, parent, touched, pool,
            heads, lm, bounds, exits, blocks, ends, pot, _NEVER)


@njit(cache=True)
def _both_answer(dist, touched, forward, backward):
    """The cheapest sum of the two sides' costs over the cells both reached (all on
    either side's touched row: the shorter is read), and its cell."""
    side, n = (0, forward) if forward <= backward else (1, backward)
    best = np.inf
    at = -1
    for j in range(n):
        c = touched[side, j]
        total = dist[0, c] + dist[1, c]
        if total < best:
            best = total
            at = c
    return best, at


@njit(cache=True, error_model="numpy")
def _both_run(
    side, state, mu, cols, step_dr, step_dc, step_len, table_cost, table_row, flat, flat_of,
    onward_start, onward, cell, width, margin, dist, parent, touched, pool, heads, lm,
    bounds, exits, blocks, ends, pot, until,
):
    """Pops of `search_both`'s ``side`` (0 forward, 1 backward) and the steps out of the
    cells they pop, until the side should stop (marked done: 1, or 2 when its pool or
    touched row ran out) or its cheapest bucket passes ``until``.  Its counters are
    kept in locals and written back to ``state`` on the way out; what the other side
    writes is read with `shared_get`, and what it reads written with `shared_set`."""
    other = 1 - side
    me = side * _PAD
    you = other * _PAD
    ring = heads.shape[1] - 1
    nsteps = step_dr.shape[0]
    shortest = step_len.min()  # `_to_go`'s (as arguments, the 30th made every route 10-15% slower)
    diagonal = min(step_len.max(), 2.0 * shortest)
    to_goal, goal_exit, to_source, source_exit = bounds[0], exits[0], bounds[1], exits[1]
    per_width = (1.0 / width) * (1.0 + 1e-12)
    current = state[me + _CURRENT]
    queued = state[me + _QUEUED]
    used = state[me + _USED]
    spare = state[me + _SPARE]
    n_touched = state[me + _TOUCHED]
    pops = state[me + _POPS]
    best = mu[me]
    done = 0
    while done == 0:
        if queued == 0:  # nothing left on this side can beat the best offer
            done = 1
            break
        while heads[side, current & ring] == -1:
            current += 1
        if current > until:  # (one thread: the other side's turn)
            break
        # Every ``_CHECK`` pops, as reading what the other thread writes costs a cache
        # miss; a side that stops a few pops late finds the same answer.
        if pops % _CHECK == 0:
            shared_set(state, me + _CURRENT, current)
            shared_set(mu, me, best)
            # The other side stopped: either its queue ran empty (nothing left on its
            # side can beat the best offer: `search_both`), or the test below held for
            # it, and then holds here too (this side's bucket has only risen since, and the offers
            # fallen); or its pool ran out, and the search starts again.
            if shared_get(state, you + _DONE) != 0:
                done = 1
                break
            # The other side's bucket and offer as they stand: one a little behind
            # only makes this side stop later.  Its offer is this side's too, for the
            # test of whether a cell is worth queueing.
            best = min(best, shared_get(mu, you))
            if (current + shared_get(state, you + _CURRENT)) * width >= (
                    best * (1.0 + 1e-12) + margin):
                done = 1
                break
        pops += 1
        slot = current & ring
        top = heads[side, slot]
        a = pool[side, 2 * top]
        heads[side, slot] = pool[side, 2 * top + 1]
        pool[side, 2 * top + 1] = spare
        spare = top
        queued -= 1
        if parent[side, a] >= CLOSED:  # expanded since this entry was pushed
            continue
        if a != ends[0, side]:  # an end's -1 has every bit set already
            parent[side, a] |= CLOSED
        da = dist[side, a]
        ar = a // cols
        ac = a - ar * cols
        fa = flat_of[flat[a]]
        # Out of a flat cell, only the steps the one that reached it leaves worth taking.
        row = parent[side, a] & (CLOSED - 1) if fa > 0.0 and a != ends[0, side] else nsteps
        own = np.int64(table_row[a]) * nsteps
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            if fa > 0.0:  # the table's number, without reading it
                total = fa * step_len[k]
            else:
                total = table_cost[own + k]
                if total == np.inf:  # off the grid, or blocked
                    continue
            b = a + step_dr[k] * cols + step_dc[k]
            nd = da + total
            db = dist[side, b]
            if not nd < db:  # NaN fails too
                continue
            if parent[side, b] >= CLOSED and nd > db * REOPEN:  # rounding, not cheaper
                continue
            if db == np.inf:
                if n_touched == touched.shape[1]:
                    done = 2
                    break
                touched[side, n_touched] = b
                n_touched += 1
            dist[side, b] = nd
            parent[side, b] = k
            there = dist[other, b]
            if nd + there < best:
                best = nd + there
            if db == np.inf:
                ht, hs = _potential(lm, to_goal, goal_exit, to_source, source_exit, blocks, b,
                                    ar + step_dr[k], ac + step_dc[k], ends, nsteps, shortest,
                                    diagonal, cell)
                if ht == np.inf or hs == np.inf:  # the landmarks show b on neither's way
                    pot[side, b] = np.inf
                    continue
                # Rounded as kept, so every entry of b is keyed alike.
                p = np.float64(np.float32(0.5 * (ht - hs) if side == 0 else 0.5 * (hs - ht)))
                pot[side, b] = p
                if nd + (ht if side == 0 else hs) >= best * (1.0 + 1e-12) + margin:
                    continue  # no path through b beats the best offer
            else:
                p = pot[side, b]
                if p == np.inf:
                    continue
            slot = max(int((nd + p) * per_width), current) & ring
            e = spare
            if e >= 0:
                spare = pool[side, 2 * e + 1]
            elif 2 * used + 1 < pool.shape[1]:
                e = used
                used += 1
            else:
                done = 2
                break
            pool[side, 2 * e] = b
            pool[side, 2 * e + 1] = heads[side, slot]
            heads[side, slot] = e
            queued += 1
    state[me + _CURRENT] = current
    state[me + _QUEUED] = queued
    state[me + _USED] = used
    state[me + _SPARE] = spare
    state[me + _TOUCHED] = n_touched
    state[me + _POPS] = pops
    mu[me] = best
    if done != 0:
        shared_set(state, me + _DONE, done)


OPEN, EXPANDED, DROPPED = 0, 1, 2  # `search_labels`: a label's state
LIT = 4  # `search_labels`: a label's state bit: reached by a light step (flat ground)
TIE = 1.0 + 1e-12  # `search_labels`: a label beats another this much dearer, as rounding


@njit(cache=True, error_model="numpy")
def search_labels(
    base, steep, gxf, gxb, gyf, gyb, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, source, goal, cell, budget, merging,
    dist, head, beat, touched, lm, lm_goal,
    l_cost, l_cell, l_prev, l_step, l_n, l_lv, l_rem, l_next, l_state, l_pos, l_link, hkey, hidx,
):
    """The exact search for a unit with rear ranks: Dijkstra (``goal < 0``) or A*.

    What a step costs depends on the trail the path brought to its cell, so
    a cell may need more than one path: one that got there dearer may have
    left its heavy ground behind sooner and lead on more cheaply.  Each path
    kept is a label (``l_*``, a pool the caller provides: cost, cell, the
    label it came from, the step, and its trail, in rows as wide as the most
    levels a trail can hold on the grid).  A trail is a falling
    staircase: ground ``lv[j]`` stays under the ranks for ``rem[j]`` more, so
    its weight after the front moves t on is that of the first entry with
    ``rem > t``.  On any path on, the multiplier is the larger of that and
    the ground since, which is at least 1, so two trails' multipliers differ
    by at most the excess of one's weight over the other's, both taken at
    least 1.  A label is dropped when another at its cell costs no more, that
    excess included; what is left at a cell are the paths none of the others
    beats (up to rounding: ``TIE``).  A queued label beaten takes the new
    one's place (its number, and its key lowered by what the new one saves:
    the bound is the cell's).  The labels are expanded in order of cost
    (plus the A* bound, as in `search`, with ``lm`` and ``lm_goal`` its
    landmarks), so the first label of the goal to leave the queue is the
    cheapest route, and each cell's cheapest label its cheapest cost.  Steps
    are priced as `search` prices them; the source's label (0) carries the
    standing footprint.

    That bound holds while no trail merges (`push`): with ``merging`` (a grid
    with more levels of ground than ``TRAIL``) a label beats only one with the
    same trail, and nothing below is pruned by the bound.

    A cell's labels form a list from ``head`` (-1: none).  Every step leaves
    at least the cell's own ground under the whole depth, so no path arriving
    costing ``beat[cell]`` or more (the least over the cell's labels of cost
    plus the excess of trail over that ground) can beat one there: a step
    whose price without the ranks shows it would cost that is not priced.

    Returns ``(cells touched, goal label or -1, labels used)``; labels used
    is minus one if the pool (labels, or Dijkstra's bucket entries) ran out,
    and the caller resets the touched cells and calls again with a bigger
    pool.  ``dist`` gets each touched cell's cheapest label's cost.
    """
    ncell = dist.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    cap = l_cost.shape[0]
    has_flat = flat.shape[0] > 0
    tabled = table_cost.shape[0] > 0
    entering = enter.shape[0] > 0
    astar = goal >= 0
    s_lv = np.empty(TRAIL)
    s_rem = np.empty(TRAIL)
    s_org = np.empty(TRAIL, dtype=np.int64)  # `advance`'s origins: not kept here
    no_f = np.empty(0)
    no_i = np.empty(0, dtype=np.int64)
    step_off = step_dr * cols + step_dc
    goal_r = goal // cols
    goal_c = goal - goal_r * cols
    straight = step_len.min()
    diagonal = min(step_len.max(), 2.0 * straight)
    l_cost[0] = 0.0
    l_cell[0] = source
    l_prev[0] = -1
    l_step[0] = -1
    l_n[0] = 0
    l_next[0] = -1
    l_state[0] = OPEN
    head[source] = 0
    dist[source] = 0.0
    touched[0] = source
    n_touched = 1
    used = 1
    # A* keeps a heap of labels (``hkey``, ``hidx``; ``l_pos``: a label's place).
    # Dijkstra keeps a ring of ``nb`` buckets as wide as the shortest step (as
    # `search`): each a list of entries (``l_link``: label, next entry),
    # ``hkey`` a label's key; a label that takes a beaten one's place is queued
    # again, and its older entry is skipped once it is expanded.
    heads = np.full(1 if astar else nb, -1, dtype=np.int64)
    ring = nb - 1
    per_width = (1.0 / straight) * (1.0 + 1e-12)
    current = 0
    hkey[0] = 0.0
    hidx[0] = 0
    l_pos[0] = 0
    entries = 0
    if not astar:
        heads[0] = 0
        l_link[0, 0] = 0
        l_link[0, 1] = -1
        entries = 1
    queued = 1
    found = -1
    while queued > 0:
        if astar:
            x = _heap_pop(queued, hkey, hidx, l_pos)
            queued -= 1
        else:
            while heads[current & ring] < 0:
                current += 1
            e = heads[current & ring]
            heads[current & ring] = l_link[e, 1]
            x = l_link[e, 0]
            queued -= 1
        if l_state[x] & 3 != OPEN:
            continue
        lit = l_state[x] & LIT
        l_state[x] = EXPANDED
        a = l_cell[x]
        if a == goal:
            found = x
            break
        da = l_cost[x]
        ar = a // cols
        ac = a - ar * cols
        na = l_n[x]
        heavy = l_lv[x, 0] if na > 0 else 0.0
        heavy_rem = l_rem[x, 0] if na > 0 else 0.0
        fa = flat_of[flat[a]] if has_flat else 0.0
        # Behind the front of a flat cell, nothing heavier than its ground: every
        # step costs its length at that multiplier and leaves that ground alone.
        light = x != 0 and fa > 0.0 and heavy <= fa
        # Reached by a light step where no trail near can hold heavier ground (the
        # footprint at the source holds ground behind the front for no longer than a
        # path's trail would), only the steps that one leaves worth taking: the paths
        # that beat the others cost the same with or without the ranks.
        row = l_step[x] if lit and flat[a] >= WIDE else nsteps
        for q in range(onward_start[row], onward_start[row + 1]):
            k = onward[q]
            if fa > 0.0:
                total = fa * step_len[k]
                b = a + step_off[k]
            elif tabled:  # the table says inf for steps off the grid
                total = table_cost[a * nsteps + k]
                if total == np.inf:
                    continue
                b = a + step_off[k]
            else:
                br = ar + step_dr[k]
                bc = ac + step_dc[k]
                if br < 0 or br >= rows or bc < 0 or bc >= cols:
                    continue
                b = br * cols + bc
                total = step_len[k]  # multipliers are >= 1
            # What the step costs at least: the price without the ranks (the trail
            # only adds), or the heaviest ground behind for as long as it stays.
            floor = da + max(total, heavy * min(heavy_rem, step_len[k]))
            if floor * (1.0 - 1e-12) > budget:
                continue
            # Nor if a label at b beats (as below, ``TIE`` included) any trail the step
            # can leave: one holding at least the ground of b under the whole depth.
            if not merging and beat[b] <= floor * TIE:
                continue
            n = 0
            done = light
            if light:
                n = 1
                s_lv[0] = fa
                s_rem[0] = depth
            elif tabled and x != 0 and table_uniform[a * nsteps + k] > 0:
                g = base[a]
                if not plain and steep[a] != 1.0:
                    g *= climb(steep[a], gxf[a], gxb[a], gyf[a], gyb[a], ux[k], uy[k])
                if heavy <= g:
                    n = 1
                    s_lv[0] = g
                    s_rem[0] = depth
                    done = True
                    if table_uniform[a * nsteps + k] == RISING:
                        # Each piece leaves the ground before it behind at once, the
                        # trail too (none heavier than a's): the table's price, and b's
                        # ground alone.
                        g = base[b]
                        if not plain and steep[b] != 1.0:
                            g *= climb(steep[b], gxf[b], gxb[b], gyf[b], gyb[b], ux[k], uy[k])
                        s_lv[0] = g
            if not done and x != 0 and not merging:
                # Nor if a label at b beats the least trail the step can leave: a's
                # moved on by the step's length, and b's ground under the whole depth.
                move = step_len[k]
                y = head[b]
                while y > 0:
                    over = l_cost[y]
                    t = 0.0
                    i = 0
                    j = 0
                    while j < na and l_rem[x, j] <= move:
                        j += 1
                    while i < l_n[y]:
                        end = l_rem[y, i]
                        least = base[b]
                        if j < na:
                            least = max(least, l_lv[x, j])
                            end = min(end, l_rem[x, j] - move)
                        if l_lv[y, i] > least:
                            over += (l_lv[y, i] - least) * (end - t)
                        t = end
                        if l_rem[y, i] <= t:
                            i += 1
                        if j < na and l_rem[x, j] - move <= t:
                            j += 1
                    if over <= floor * TIE:
                        break
                    y = l_next[y]
                if y > 0:
                    continue
            if not done:
                if x == 0:
                    for j in range(fp_start[k], fp_start[k + 1]):
                        rr = ar + fp_dr[j]
                        cc = ac + fp_dc[j]
                        if rr < 0 or rr >= rows or cc < 0 or cc >= cols:
                            continue
                        i = rr * cols + cc
                        g = ground(base, steep, gxf, gxb, gyf, gyb, i, ux[k], uy[k])
                        if g != np.inf:
                            n = push(s_lv, s_rem, s_org, n, g, fp_rem[j], i)
                else:
                    n = na
                    for j in range(n):
                        s_lv[j] = l_lv[x, j]
                        s_rem[j] = l_rem[x, j]
                total = 0.0
                prev = a
                for j in range(piece_start[k], piece_start[k + 1]):
                    i = a + piece_dr[j] * cols + piece_dc[j]
                    if piece_w[j] == 0.0:
                        if base[i] == np.inf:
                            total = np.inf
                            break
                        continue
                    g = base[i]
                    if not plain and steep[i] != 1.0:
                        g *= climb(steep[i], gxf[i], gxb[i], gyf[i], gyb[i], ux[k], uy[k])
                    if g == np.inf:
                        total = np.inf
                        break
                    # Always true here, but without the test numba counts references to
                    # the inlined advance's arrays on every piece (a fifth of the time).
                    if depth > 0.0:
                        c, n, _ = advance(
                            s_lv, s_rem, s_org, n, g, i, piece_w[j] * step_len[k], depth,
                            no_f, no_f, no_i, False,
                        )
                        total += c
                    if entering:
                        total += entry(enter[i], enter[prev], narrow[i], narrow[prev])
                    prev = i
            nd = da + total
            if not nd <= budget or nd == np.inf:  # blocked (inf fails the first unless
                continue  # the budget is inf too)
            # A trail of b's ground alone is the least any label at b holds: `beat`
            # says whether one beats it, and it beats every label costing as much.
            least = not merging and n == 1 and s_lv[0] <= base[b]
            if least and beat[b] <= nd * TIE:
                continue
            # Dropped if a label at b beats it; it drops those it beats, and takes the
            # place of the first of them still queued.
            beaten = False
            z = -1
            before = -1
            y = head[b]
            while y >= 0:
                after = l_next[y]
                if y != 0:
                    # At most how much more than the other each trail can make any path
                    # on cost: the multiplier is the larger of the trail's weight and
                    # the ground since, which is at least 1.
                    over_y = np.inf if least else 0.0
                    over_s = 0.0
                    t = 0.0
                    i = 0
                    j = 0
                    ny = l_n[y]
                    if merging:  # the same trail, or no bound
                        same = ny == n
                        for i in range(n if same else 0):
                            same = same and l_lv[y, i] == s_lv[i] and abs(
                                l_rem[y, i] - s_rem[i]) <= 1e-9
                        over_y = over_s = 0.0 if same else np.inf
                    while not least and not merging and (i < ny or j < n):
                        wy = 1.0
                        end = np.inf
                        if i < ny:
                            wy = max(l_lv[y, i], 1.0)
                            end = l_rem[y, i]
                        ws = 1.0
                        if j < n:
                            ws = max(s_lv[j], 1.0)
                            end = min(end, s_rem[j])
                        if wy > ws:
                            over_y += (wy - ws) * (end - t)
                        else:
                            over_s += (ws - wy) * (end - t)
                        t = end
                        if i < ny and l_rem[y, i] <= t:
                            i += 1
                        if j < n and s_rem[j] <= t:
                            j += 1
                    if l_cost[y] + over_y <= nd * TIE:
                        beaten = True
                        break
                    if nd + over_s <= l_cost[y] * TIE:
                        if before < 0:
                            head[b] = after
                        else:
                            l_next[before] = after
                        if l_state[y] & 3 == OPEN:
                            if z < 0:
                                z = y
                            else:
                                l_state[y] = DROPPED
                        y = after
                        continue
                before = y
                y = after
            if beaten:
                continue
            if z >= 0:
                key = (hkey[l_pos[z]] if astar else hkey[z]) - (l_cost[z] - nd)
            else:
                key = nd
                if astar:
                    h = _landmark_bound(lm, lm_goal, b, _to_go(
                        b // cols - goal_r, b % cols - goal_c, nsteps, straight, diagonal, cell))
                    if h == np.inf:
                        continue
                    key += h
                if used == cap:
                    return n_touched, -1, -1
                z = used
                used += 1
                if astar:
                    hkey[queued] = key
                    hidx[queued] = z
                    l_pos[z] = queued
                    queued += 1
            l_cost[z] = nd
            l_cell[z] = b
            l_prev[z] = x
            l_step[z] = k
            l_n[z] = n
            for j in range(n):
                l_lv[z, j] = s_lv[j]
                l_rem[z, j] = s_rem[j]
            l_state[z] = (OPEN | LIT) if light else OPEN
            l_next[z] = head[b]
            head[b] = z
            if dist[b] == np.inf:
                touched[n_touched] = b
                n_touched += 1
            if nd < dist[b]:
                dist[b] = nd
            over = nd
            below = 0.0
            for j in range(n):
                if s_lv[j] > base[b]:
                    over += (s_lv[j] - base[b]) * (s_rem[j] - below)
                below = s_rem[j]
            if over < beat[b]:
                beat[b] = over
            if astar:
                hkey[l_pos[z]] = key
                _sift_up(l_pos[z], hkey, hidx, l_pos)
            else:
                if entries == cap:
                    return n_touched, -1, -1
                hkey[z] = key
                slot = max(int(key * per_width), current) & ring
                l_link[entries, 0] = z
                l_link[entries, 1] = heads[slot]
                heads[slot] = entries
                entries += 1
                queued += 1
    return n_touched, found, used


@njit(cache=True)
def trace_labels(l_prev, l_cell, label):
    """The cells of label ``label``'s path, source first."""
    n = 0
    x = label
    while x >= 0:
        n += 1
        x = l_prev[x]
    out = np.empty(n, dtype=np.int64)
    x = label
    for j in range(n - 1, -1, -1):
        out[j] = l_cell[x]
        x = l_prev[x]
    return out


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


@njit(cache=True)
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


@njit(cache=True, parallel=True)
def reset_both(touched, forward, backward, dist, parent):
    """`reset` for `search_both`'s two sides at once, a thread each."""
    for side in prange(2):
        reset(touched[side], forward if side == 0 else backward, dist[side], parent[side],
              np.empty(0, dtype=np.int32), np.empty(0))


@njit(cache=True)
def block_labels(ground, cols, step_dr, step_dc, label):
    """Number the blocks of ``ground`` (a flat bool row, True where a cell belongs to
    some block): the sets of its cells one step apart, any step, on the grid.
    ``label`` (int32, the grid's size) gets each cell's block, -1 off ``ground``.
    Returns how many blocks there are."""
    ncell = label.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    label[:] = -1
    stack = np.empty(ncell, dtype=np.int32)
    blocks = 0
    for first in range(ncell):
        if not ground[first] or label[first] >= 0:
            continue
        label[first] = blocks
        stack[0] = first
        top = 1
        while top > 0:
            top -= 1
            a = np.int64(stack[top])
            for k in range(nsteps):
                b = _step_to(a, k, rows, cols, step_dr, step_dc)
                if b >= 0 and ground[b] and label[b] < 0:
                    label[b] = blocks
                    stack[top] = b
                    top += 1
        blocks += 1
    return blocks


@njit(cache=True, inline="always")
def _step_to(a, k, rows, cols, step_dr, step_dc):
    """The cell step ``k`` leads to from cell ``a``, or -1 off the grid."""
    ar = a // cols
    r = ar + step_dr[k]
    c = a - ar * cols + step_dc[k]
    return r * cols + c if 0 <= r < rows and 0 <= c < cols else -1


@njit(cache=True)
def block_rims(rim, label, cols, step_dr, step_dc, lm, lo, hi):
    """The least (``lo``) and greatest (``hi``) cost to each landmark (``lm``, as
    `search`'s) over each block's rim: the cells of ``rim`` (a flat bool row) one
    step from a cell of the block (``label``, `block_labels`').  ``lo`` and ``hi``
    come as ``(blocks, landmarks)`` rows of inf and -inf; unreachable costs are
    left out."""
    ncell = label.shape[0]
    rows = ncell // cols
    nsteps = step_dr.shape[0]
    for a in range(ncell):
        if not rim[a]:
            continue
        for k in range(nsteps):
            b = _step_to(a, k, rows, cols, step_dr, step_dc)
            j = label[b] if b >= 0 else -1
            if j >= 0:
                for m in range(lm.shape[1]):
                    at = lm[a, m]
                    if at != np.inf:
                        lo[j, m] = min(lo[j, m], at)
                        hi[j, m] = max(hi[j, m], at)


@njit(cache=True)
def label_pool(size, width):
    """`search_labels`' pool and heap for ``size`` labels whose trails hold up to
    ``width`` levels (`engine.search` keeps one)."""
    return (
        np.empty(size), np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int32),
        np.empty(size, dtype=np.int8), np.empty(size, dtype=np.int8),
        np.empty((size, width)), np.empty((size, width)), np.empty(size, dtype=np.int32),
        np.empty(size, dtype=np.int8), np.empty(size, dtype=np.int32),
        np.empty((size, 2), dtype=np.int32), np.empty(size), np.empty(size, dtype=np.int32),
    )


@njit(cache=True, parallel=True)
def search_many(
    base, steep, gxf, gxb, gyf, gyb, cols, plain,
    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform, flat, flat_of, enter,
    narrow, onward_start, onward, sources, cell, budget, merging, levels,
    dist, parent, pos, touched, link, beat,
    width, stack_limit, cap, out_cells, out_cost, out_start, out_n,
):
    """Dijkstra from each of ``sources``, the threads' rows of the workspace each
    serving every T-th source: `search_labels` for a unit with rear ranks (each
    thread's pool of labels starting at twice ``cap``, grown as it runs out,
    their trails ``levels`` wide), else
    with a step table `search_plain` on a stack of buckets ``width`` wide at
    first, unless it would outgrow ``stack_limit`` entries, and `search`.
    Unit u's cells within ``budget`` go to thread t's row of ``out_cells`` and
    ``out_cost`` (t = u mod T), at ``out_start[u]``, ``out_n[u]`` of them,
    each thread's units one after another.  ``out_n[u]`` is -1 if they are
    more than ``cap`` (the caller makes it the disc of radius ``budget``, so
    they are not, and gives each row ``cap`` for each of its units).
    """
    threads = dist.shape[0]
    no_f = np.empty(0)
    no_i = np.empty(0, dtype=np.int32)
    no_lm = np.empty((0, 0), dtype=np.float32)
    no_lm_goal = np.empty((2, 0), dtype=np.float32)
    tabled = table_cost.shape[0] > 0
    for t in prange(threads):
        stack = np.empty((nb, width), dtype=np.int32)
        pool = label_pool(2 * cap if depth > 0.0 else 1, levels)  # 1 to 2.3 labels a cell
        at = 0
        for u in range(t, sources.shape[0], threads):
            n = -1
            if depth > 0.0:
                while n < 0:
                    n, _, used = search_labels(
                        base, steep, gxf, gxb, gyf, gyb, cols, plain, step_dr, step_dc,
                        step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w, depth,
                        fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform,
                        flat, flat_of, enter, narrow, onward_start, onward, sources[u], -1,
                        cell, budget, merging, dist[t], pos[t], beat[t], touched[t], no_lm,
                        no_lm_goal, *pool,
                    )
                    if used < 0:  # the pool ran out: again, with room
                        reset(touched[t], n, dist[t], parent[t], pos[t], beat[t])
                        pool = label_pool(4 * pool[0].shape[0], levels)
                        n = -1
            elif tabled:
                while n < 0:
                    n = search_plain(
                        base, cols, step_dr, step_dc, step_len, piece_start, piece_dr,
                        piece_dc, piece_w, nb, table_cost, no_i, flat, flat_of,
                        onward_start, onward, sources[u], -1, cell,
                        budget, dist[t], parent[t], touched[t], stack, False, no_lm,
                        no_lm_goal,
                    )
                    if n < 0:  # a bucket outgrew the stack: again, with room
                        reset(touched[t], -n, dist[t], parent[t], pos[t], no_f)
                        if 2 * stack.size > stack_limit:
                            break
                        stack = np.empty((nb, 2 * stack.shape[1]), dtype=np.int32)
            queue = depth > 0.0 or n < 0  # `search` and the labels use `pos`
            if n < 0:
                n = search(
                    base, steep, gxf, gxb, gyf, gyb, cols, plain,
                    step_dr, step_dc, step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w,
                    depth, fp_start, fp_dr, fp_dc, fp_rem, nb, table_cost, table_uniform,
                    flat, flat_of, enter, narrow, onward_start, onward, sources[u], -1, cell,
                    budget,
                    dist[t], parent[t], pos[t], no_f, no_i, touched[t], link[t],
                    no_lm, no_lm_goal,
                )
            m = 0
            for j in range(n):
                c = touched[t, j]
                d = dist[t, c]
                if d <= budget:
                    if m < cap:
                        out_cells[t, at + m] = c
                        out_cost[t, at + m] = d
                    m += 1
            reset(touched[t], n, dist[t], parent[t], pos[t] if queue else no_i, beat[t])
            out_start[u] = at
            out_n[u] = m if m <= cap else -1
            at += min(m, cap)


@njit(cache=True, error_model="numpy")
def settle_quanta(
    cells, cost, parent, parent_step, base, steep, gxf, gxb, gyf, gyb, cols,
    step_len, ux, uy, piece_start, piece_dr, piece_dc, piece_w, quantum, out,
):
    """Reach costs with ground priced per started quantum, along the paths the search kept.

    The paths form a tree: node u (sorted by ``cost``, the search's smooth
    costs, the source first) stands on cell ``cells[u]``, reached by step
    ``parent_step[u]`` from node ``parent[u]`` (-1 at the source).  The
    front's stretch of quantised ground (``quantum[cell]`` > 0) is followed
    piece by piece, as `engine.pricing` does: when it ends, the rest of its
    last started quantum is charged at the front's multiplier there; ``out``
    gets each node's cost with that charge for every stretch ended on the
    way, plus the stretch it is still in.
    """
    n = cells.shape[0]
    adj = np.empty(n)
    qs = np.empty(n)
    qd = np.empty(n)
    qm = np.empty(n)
    for u in range(n):
        v = parent[u]
        if v < 0:
            adj[u], qs[u], qd[u], qm[u] = 0.0, 0.0, 0.0, 1.0
        else:
            k = parent_step[u]
            p = cells[v]
            q, d, m = qs[v], qd[v], qm[v]
            extra = 0.0
            for j in range(piece_start[k], piece_start[k + 1]):
                if piece_w[j] == 0.0:
                    continue
                i = p + piece_dr[j] * cols + piece_dc[j]
                if quantum[i] != q:
                    if q > 0.0:
                        extra += (math.ceil(d / q - 1e-9) * q - d) * m
                    q, d = quantum[i], 0.0
                if q > 0.0:
                    d += piece_w[j] * step_len[k]
                    m = ground(base, steep, gxf, gxb, gyf, gyb, i, ux[k], uy[k])
            adj[u] = adj[v] + (cost[u] - cost[v]) + extra
            qs[u], qd[u], qm[u] = q, d, m
        out[u] = adj[u]
        if qs[u] > 0.0:
            out[u] += (math.ceil(qd[u] / qs[u] - 1e-9) * qs[u] - qd[u]) * qm[u]
