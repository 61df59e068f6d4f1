"""numba kernels of the search, one module per algorithm.

Private.  Callers (`engine.search`, `engine.ai`) validate everything first:
kernels assume clean, C-contiguous arrays of the documented dtypes.  All
compile lazily with ``cache=True``; nothing compiles at import.  Kernels call
each other across these modules and `engine.terrain._kernels`; numba's disk
cache does not notice an edit to a callee in another file, so the cache folder
is keyed by the package's sources (`engine._cache`).

- `ranked`: `theta_labels` (any-angle, a unit with rear ranks);
- `anyangle`: `theta_search` (any-angle, a unit without rear ranks),
  `point_cost`;
- `corners`: `straighten` (a path's bends at obstacles' outer corners, then
  where they cost least: `refine`, a route's bends to their continuous
  optimum);
- `heap`: queue primitives, path tracing, resets;
- `trail`: the rear-rank trail and the walk that prices a path;
- `bounds`: lower bounds of the cost to go (landmarks, blocks);
- `dijkstra`: `search` (a heap), `settle_quanta`;
- `quanta`: `settle_moves` (an any-angle reach's paths on ground priced per
  started quantum), `settle_rounded` (a path's bends moved where its rounding
  costs least);
- `many`: many reaches at once, one driver per search (`many_labels`,
  `many_plain`, `many_heap`; any-angle: `many_theta`, `many_trails`);
- `astar`: `search_plain` (buckets, a unit without rear ranks);
- `labels`: `search_labels` (exact, with rear ranks);
- `both`: `search_both` (bidirectional, landmarks and blocks);
- `flow`: `field_band`, `field_rest` (flow fields).
"""

from .anyangle import point_cost, reset_nodes, theta_search
from .astar import search_plain
from .both import block_labels, block_rims, search_both
from .corners import straighten
from .dijkstra import search, settle_quanta
from .flow import PACKED_CELLS, field_band, field_rest
from .heap import (
    ASTAR_SPLIT,
    CLOSED,
    STACK_LIMIT,
    pool_split,
    reset,
    stack_rows,
    stack_width,
    trace,
)
from .labels import DROPPED, label_pool, search_labels, trace_labels
from .many import many_heap, many_labels, many_plain, many_theta, many_trails
from .quanta import settle_moves, settle_rounded
from .ranked import theta_labels
from .trail import BLOCKED, BLOCKED_SEGMENT, MOVE, OBSTACLE, QUANTUM, push, walk_path

__all__ = [
    "ASTAR_SPLIT",
    "BLOCKED",
    "BLOCKED_SEGMENT",
    "CLOSED",
    "DROPPED",
    "MOVE",
    "OBSTACLE",
    "PACKED_CELLS",
    "QUANTUM",
    "STACK_LIMIT",
    "block_labels",
    "block_rims",
    "field_band",
    "field_rest",
    "label_pool",
    "many_heap",
    "many_labels",
    "many_plain",
    "many_theta",
    "many_trails",
    "point_cost",
    "pool_split",
    "push",
    "reset",
    "reset_nodes",
    "search",
    "search_both",
    "search_labels",
    "search_plain",
    "settle_moves",
    "settle_quanta",
    "settle_rounded",
    "stack_rows",
    "stack_width",
    "straighten",
    "theta_labels",
    "theta_search",
    "trace",
    "trace_labels",
    "walk_path",
]
