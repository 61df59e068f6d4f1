"""Whole-grid answers for drawing (the viewer, or a game's own overlay): the
terrain as a picture, what each cell costs a unit, and the fields behind reach,
threat, flow and sight, in compact JSON.

A grid is sent row by row (``[row, col]``, y down) as ``shape`` ``[rows, cols]``
and ``cell``; a cell's centre is ``((col + 0.5) * cell, (row + 0.5) * cell)``.
Sparse fields list flat cell indices (``row * cols + col``) and a value each;
a yes/no field is base64 of its bits packed eight to a byte, most significant
first (numpy's ``packbits``).
"""

from __future__ import annotations

import base64
import io

import numpy as np

from ..ai.threat import Threat
from ..maps.battlefield import Battlefield
from ..render import flow_arrows, terrain_image
from ..search.flow import FlowField
from ..search.front import Reach
from ..terrain.costgrid import CostGrid
from ..terrain.raster import Layers

__all__ = ["flow_field_json", "ground_json", "reach_field_json", "seen_json", "terrain_json",
           "threat_field_json"]


def _grid(spec) -> dict:
    return {"shape": list(spec.shape), "cell": spec.cell}


def _r3(values: np.ndarray) -> list[float]:
    return np.round(values.astype(float), 3).tolist()


def terrain_json(bf: Battlefield, lay: Layers) -> dict:
    """The battlefield as the pictures paint it: ``{"width", "height", "units", "shape",
    "cell", "image": a PNG data URL one pixel a cell, "legend": [{"terrain",
    "colour"}]}``."""
    from matplotlib.image import imsave

    image, _, legend = terrain_image(lay)
    png = io.BytesIO()
    imsave(png, image, format="png")
    return {"width": bf.width, "height": bf.height, "units": bf.units, **_grid(lay.grid),
            "image": "data:image/png;base64," + base64.b64encode(png.getvalue()).decode(),
            "legend": [{"terrain": k, "colour": c} for k, c in legend]}


def ground_json(g: CostGrid) -> dict:
    """What each cell costs the grid's unit: ``{"shape", "cell", "ground": base64 of a
    little-endian uint16 per cell, indexing "kinds": [{"terrain": [...], "multiplier":
    m or null (impassable)}]}``."""
    pairs = np.stack([g.combo.ravel().astype(float), g.base.ravel()], axis=1)
    kinds, index = np.unique(pairs, axis=0, return_inverse=True)
    return {**_grid(g.grid),
            "ground": base64.b64encode(index.astype("<u2").tobytes()).decode(),
            "kinds": [{"terrain": list(g.combos[int(c)]) or ["clear"],
                       "multiplier": None if np.isinf(m) else round(float(m), 6)}
                      for c, m in kinds]}


def reach_field_json(g: CostGrid, r: Reach) -> dict:
    """A reach cell by cell: ``{"shape", "cell", "allowance", "at", "cells", "cost"}``."""
    return {**_grid(g.grid), "allowance": r.allowance, "at": list(r.start),
            "cells": r.cells.tolist(), "cost": _r3(r.cost)}


def threat_field_json(t: Threat) -> dict:
    """A threat map cell by cell: ``{"shape", "cell", "most", "cells", "count"}`` (cells
    no enemy reaches left out)."""
    flat = t.count.ravel()
    cells = np.flatnonzero(flat)
    return {**_grid(t.battlefield.grid), "most": int(flat.max()), "cells": cells.tolist(),
            "count": flat[cells].tolist()}


def flow_field_json(f: FlowField) -> dict:
    """A flow field's first steps, sampled about 45 to the longer side: ``{"goals",
    "spacing", "arrows": [[x, y, ux, uy], ...]}`` (unit vectors, y down)."""
    x, y, ux, uy, spacing = flow_arrows(f)
    arrows = np.round(np.stack([x, y, ux, uy], axis=1), 4).tolist()
    return {"goals": [list(xy) for xy in f.goals], "spacing": spacing, "arrows": arrows}


def seen_json(bf: Battlefield, observer, seen: np.ndarray) -> dict:
    """A viewshed: ``{"shape", "cell", "observer", "seen": base64 of packed bits}``."""
    return {**_grid(bf.grid), "observer": list(observer),
            "seen": base64.b64encode(np.packbits(seen.ravel())).decode()}
