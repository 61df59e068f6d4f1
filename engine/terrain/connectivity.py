"""Regions: which parts of the table a unit can reach at all, answered without a search.

A step is legal only if every cell its straight segment crosses is passable,
and it may not squeeze between two impassable cells at a corner.  So two
passable cells are joined by a route exactly when a chain of edge-sharing
passable cells joins them: the regions are the 4-connected components of the
passable cells, whatever the neighbourhood.  They are labelled once per cost
grid (scipy.ndimage.label) and cached.
"""

from __future__ import annotations

import numpy as np

from .._args import instance
from .costgrid import CostGrid

__all__ = ["connected", "regions"]

_FOUR = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]])


def regions(grid: CostGrid) -> tuple[np.ndarray, int]:
    """Label the regions of a cost grid: ``(labels, count)``; 0 marks impassable cells.

    Two passable cells are in one region if a chain of passable cells joins them
    side to side (a move may not pass between two impassable cells that touch at
    a corner).  The labels are cached with the battlefield.

    Parameters
    ----------
    grid : CostGrid

    Returns
    -------
    labels : ndarray of int32, shape ``grid.grid.shape``
        Each cell's region, 1 to ``count``; 0 where the cell is impassable.
    count : int
        How many regions there are.

    Raises
    ------
    InputError
        ``grid`` is not a `CostGrid`.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/examples/wood-elves.geojson"), rules, rules.unit("humans"))
    >>> regions(g)[1]  # the ford joins the two banks
    1
    """
    instance("grid", grid, CostGrid, "cost_grid")
    key = ("regions", id(grid))
    cache = grid.battlefield._cache
    if key not in cache:
        from scipy import ndimage  # imported when first needed: it is slow to import

        labels, count = ndimage.label(np.isfinite(grid.base), structure=_FOUR)
        cache[key] = (labels, int(count), grid)  # the grid held: its id stays its own
    labels, count, _ = cache[key]
    return labels, count


def connected(grid: CostGrid, a: tuple[float, float], b: tuple[float, float]) -> bool:
    """True if some route joins table points ``a`` and ``b`` for this unit (any number of turns).

    Parameters
    ----------
    grid : CostGrid
    a, b : (x, y)
        Table points; each stands in its cell as a unit does (`CostGrid.stand`).

    Returns
    -------
    bool
        Whether both cells are passable and in one of `regions`.

    Raises
    ------
    InputError
        ``grid`` is not a `CostGrid`, or a point is off the table.

    Examples
    --------
    >>> from engine import load_map, load_rules, cost_grid
    >>> rules = load_rules("fantasy-warlord")
    >>> g = cost_grid(load_map("maps/demo.geojson"), rules, rules.unit("humans"))
    >>> connected(g, (15, 60), (170, 60)), connected(g, (15, 60), (145, 71))
    (True, False)
    """
    labels, _ = regions(grid)
    la = labels[grid.stand(a)]
    lb = labels[grid.stand(b)]
    return bool(la and la == lb)
