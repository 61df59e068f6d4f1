"""Pictures of a cost grid: terrain, what a unit can reach and the route it takes;
viewsheds; threat maps and flow fields."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._args import flag, instance, listed, named_point, whole
from .ai.threat import Threat
from .errors import InputError
from .search.flow import FlowField
from .search.front import Reach, Route
from .search.pricing import price_path
from .terrain.costgrid import CostGrid
from .terrain.raster import Layers, kind_cells
from .terrain.roads import Network

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FORMATS", "flow_arrows", "picture_path", "render_ai_png", "render_png",
           "render_viewshed_png", "terrain_image"]

# Painted in this order, so later kinds (linear features last) lie on top.
_AREAS = {
    "clear": "#f4f2e2",
    "hill": "#e3d2a2",
    "broken ground": "#a48c6c",
    "scrub": "#b3d17f",
    "bog": "#9a9a4e",
    "mire": "#75803c",
    "fen": "#82b5a0",
    "swamp": "#4d8069",
    "woods": "#3f8f3a",
    "jungle": "#1d5c28",
    "building": "#8a7a72",
    "river": "#4a8fd8",
}
_LINES = {
    "ford": "#a8d4f5",
    "road": "#d8b26e",
    "trail": "#b5895a",
    "bridge": "#8b5a2b",
    "hedge": "#557a1f",
    "fence": "#c08a50",
    "wall": "#4d4d4d",
    "gateway": "#e8c02a",
}
_GROUND = "#f4f2e2"
_ROUTE = "#d0103a"
_ON_NETWORK = "#ff9f1c"
# Network edges by kind: (colour, line style); other kinds draw like a road.
_EDGES = {"road": ("#5b3a12", "-"), "trail": ("#5b3a12", "--"), "bridge": ("#101010", "-"),
          "ford": ("#1f5fa8", ":")}
_HILL = "#7a4b1e"


# What a picture may be written as: the file's suffix names the format.
FORMATS = (".png", ".svg", ".pdf")


def picture_path(path: str | os.PathLike) -> str:
    """``path`` as a string, if it names a picture (`FORMATS`) in a folder that exists;
    else an `InputError`."""
    path = os.fspath(path)
    if not path:
        raise InputError("a picture needs a file name, got ''")
    if os.path.splitext(path)[1].lower() not in FORMATS:
        raise InputError(f"cannot write {path!r}: a picture's name must end in "
                         f"{', '.join(FORMATS[:-1])} or {FORMATS[-1]} (its format)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"cannot write {path!r}: folder {folder!r} does not exist")
    return path


def _optional(name: str, value, cls: type, made_by: str) -> None:
    """`instance`'s check where ``value`` is given (not None)."""
    if value is not None:
        instance(name, value, cls, made_by)


def _save(fig, path: str) -> None:
    """Write ``fig`` cropped to what it draws, as ``bbox_inches="tight"`` would.

    The box is measured once here: given ``"tight"``, matplotlib renders the
    whole figure a first time just to find it (the same pixels, twice the time).
    """
    from matplotlib import rcParams

    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(rcParams["savefig.pad_inches"])
    try:
        fig.savefig(path, format=os.path.splitext(path)[1].lower()[1:], bbox_inches=box)
    except OSError as exc:
        raise InputError(f"cannot write {path!r}: {exc.strerror or exc}") from None


def _colours(kinds: tuple[str, ...]) -> dict[str, object]:
    """Colour per kind, in painting order; unknown kinds between areas and lines."""
    from matplotlib import colormaps

    extra = [k for k in kinds if k not in _AREAS and k not in _LINES]
    tab = colormaps["tab10"]
    unknown = {k: tab(i % 10) for i, k in enumerate(extra)}
    return {**_AREAS, **unknown, **_LINES}


def _corners(cells: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``cells`` sampled just inside each cell's corners, so level-0.5 contours trace cell edges."""
    eps = 1e-3 * cell
    rows, cols = cells.shape
    xs = np.repeat(np.arange(cols) * cell, 2) + np.tile([eps, cell - eps], cols)
    ys = np.repeat(np.arange(rows) * cell, 2) + np.tile([eps, cell - eps], rows)
    return xs, ys, cells.repeat(2, 0).repeat(2, 1).astype(float)


def terrain_image(lay: Layers) -> tuple[np.ndarray, dict, list[tuple[str, str]]]:
    """The terrain as the pictures paint it: an RGB image of floats, one pixel a cell
    (``[row, col]``, y down), each kind's cells and colour, and the legend:
    ``(kind, "#rrggbb")`` in painting order, for the kinds on the map.  `InputError`
    unless ``lay`` is a `Layers`."""
    from matplotlib.colors import to_hex, to_rgb

    instance("lay", lay, Layers, "engine.terrain.layers")

    image = np.empty((*lay.grid.shape, 3))
    image[:] = to_rgb(_GROUND)
    covers, legend = {}, []
    for kind, colour in _colours(lay.kinds).items():
        if kind in lay.kinds:
            cover = kind_cells(lay.mask, lay.kinds.index(kind))
            if cover.any():
                image[cover] = to_rgb(colour)
                covers[kind] = cover, colour
                legend.append((kind, to_hex(colour)))
    return image, covers, legend


def _terrain(lay: Layers) -> tuple[np.ndarray, dict, list]:
    """`terrain_image`, its legend as matplotlib's legend entries."""
    from matplotlib.patches import Patch

    image, covers, legend = terrain_image(lay)
    return image, covers, [Patch(facecolor=c, edgecolor="0.35", label=k) for k, c in legend]


def _title(grid: CostGrid, reach: Reach | None, route: Route | None) -> str:
    u, parts = grid.battlefield.units, []
    if reach is not None:
        x, y = reach.start
        parts.append(f"reach of {reach.allowance:g} {u} from ({x:g}, {y:g})")
    if route is not None:
        (x0, y0), (x1, y1) = route.path[0], route.path[-1]
        turns = f"{route.turns} turn{'s' if route.turns != 1 else ''}"
        parts.append(
            f"route ({x0:g}, {y0:g}) to ({x1:g}, {y1:g}): cost {route.cost:.1f} {u}, {turns}"
        )
    return f"{grid.unit.race}: " + ("; ".join(parts) or f"terrain, move {grid.unit.move:g} {u}")


def render_png(
    path: str | os.PathLike,
    grid: CostGrid,
    reach: Reach | None = None,
    route: Route | None = None,
    title: str | None = None,
    network: Network | None = None,
) -> Figure:
    """Draw the battlefield, and optionally a reach, a route or the network, to a PNG file.

    Terrain is painted a colour per kind (linear features such as roads and
    walls on top), hills get elevation contours and steep ground a hatch, and
    cells the unit cannot enter are darkened and cross-hatched.  A reach adds
    a heatmap of the allowance left and its edge; a route adds its line
    (stretches along a road, trail, bridge or ford drawn in their own colour,
    formation changes marked), its start and goal and a numbered marker where
    each turn but the last ends.  A network adds its edges by kind, its nodes,
    the unit's regions and its chokepoints ringed.

    Parameters
    ----------
    path : str or path-like
        Picture to write (overwritten if it exists): PNG, or SVG or PDF when its name
        ends in .svg or .pdf.
    grid : CostGrid
        The unit's cost grid; its battlefield supplies the terrain.
    reach : Reach, optional
        Drawn as a heatmap of the allowance left, with its start starred.
    route : Route, optional
        Drawn as a line with its start, goal and end-of-turn stops.
    title : str, optional
        Defaults to a summary of the unit, the reach and the route.
    network : Network, optional
        From `engine.terrain.roads.describe`: the graph, chokepoints and regions.

    Returns
    -------
    matplotlib.figure.Figure
        The picture drawn (already written to ``path``).

    Raises
    ------
    InputError
        The file's folder does not exist or the file cannot be written; an
        argument is not what it says.
    """
    path = picture_path(path)
    instance("grid", grid, CostGrid, "cost_grid")
    _optional("reach", reach, Reach, "reach")
    _optional("route", route, Route, "route")
    _optional("network", network, Network, "engine.terrain.describe")

    from matplotlib.colors import to_rgb
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    spec, lay, units = grid.grid, grid.layers, grid.battlefield.units

    # Terrain raster, most specific kind on top; impassable cells darkened.
    image, covers, handles = _terrain(lay)
    blocked = np.isinf(grid.base)
    image[blocked] *= 0.6
    fig, ax, width, extent = _canvas(lay, image, handles)

    def outline(cells: np.ndarray, colour, lw: float) -> None:
        ax.contour(*_corners(cells, spec.cell), levels=[0.5], colors=[colour], linewidths=lw,
                   zorder=4)

    def hatch(cells: np.ndarray, pattern: str, colour: str, label: str) -> None:
        if cells.any():
            cs = ax.contourf(*_corners(cells, spec.cell), levels=[0.5, 1.5], colors="none",
                             hatches=[pattern], zorder=2)
            cs.set_edgecolor(colour)
            cs.set_linewidth(0)
            handles.append(Patch(facecolor="none", edgecolor=colour, hatch=pattern, label=label))

    def key(label: str, **style) -> None:
        handles.append(Line2D([], [], ls=style.pop("ls", ""), label=label, **style))

    hatch(lay.steep != 0, "////", _HILL, "steep slope")
    hatch(blocked, "xxx", "0.1", f"impassable for {grid.unit.race}")

    starts = []
    if reach is not None:
        left = np.full(spec.shape, np.nan)
        left.flat[reach.cells] = reach.remaining
        heat = ax.imshow(left, origin="upper", extent=extent, interpolation="nearest", zorder=3,
                         cmap="viridis", alpha=0.55, vmin=0.0, vmax=reach.allowance)
        fig.colorbar(heat, cax=ax.inset_axes([1.015, 0.0, 0.025, 1.0]),
                     label=f"allowance left ({units})")
        for cover, colour in covers.values():  # terrain stays readable through the heatmap
            outline(cover, tuple(0.6 * np.array(to_rgb(colour))), 0.6)
        outline(np.isfinite(left), "black", 1.4)
        key("edge of reach", ls="-", color="black", lw=1.4)
        starts.append(tuple(reach.start))
    if route is not None:
        xs, ys = np.asarray(route.path, dtype=float).T
        ax.plot(xs, ys, color="white", lw=6, solid_capstyle="round", zorder=5)
        ax.plot(xs, ys, color=_ROUTE, lw=3, solid_capstyle="round", zorder=6)
        _route_network_legs(ax, grid, route, key)
        ax.plot(xs[-1], ys[-1], "D", ms=10, mfc="gold", mec="black", mew=1.2, zorder=8)
        key(f"route ({route.cost:.1f} {units})", ls="-", color=_ROUTE, lw=3)
        key("goal", marker="D", ms=8, mfc="gold", mec="black")
        for turn, (x, y) in enumerate(route.stops, 1):
            ax.plot(x, y, "o", ms=13, mfc="white", mec=_ROUTE, mew=1.8, zorder=7)
            ax.text(x, y, str(turn), ha="center", va="center", fontsize=7, weight="bold", zorder=8)
        if route.stops:
            key("end of turn 1, 2, ...", marker="o", ms=10, mfc="white", mec=_ROUTE)
        starts.append(tuple(route.path[0]))
    if network is not None:
        _draw_network(ax, network, key)
    for x, y in set(starts):
        ax.plot(x, y, "*", ms=18, mfc="white", mec="black", mew=1.3, zorder=9)
    if starts:
        key("start", marker="*", ms=12, mfc="white", mec="black")

    _finish(fig, ax, lay, width, title if title is not None else _title(grid, reach, route),
            handles, path, units)
    return fig


def _route_network_legs(ax, grid: CostGrid, route: Route, key) -> None:
    """Overdraw a route's stretches on network kinds; mark its formation changes and
    the obstacles it pays to cross."""
    rules = grid.rules
    on = {n for n, k in rules.terrain.items() if k.cancels or k.role == "crossing"}
    marks = {"formation change": "^", "obstacle": "X"}
    drawn, marked = False, set()
    for leg in price_path(grid, route.path).pieces:
        if leg.kind in marks:
            ax.plot(*leg.start, marks[leg.kind], ms=11, mfc="white", mec=_ROUTE, mew=2,
                    zorder=8)
            marked.add(leg.kind)
        elif any(t in on for t in leg.terrain):
            (x0, y0), (x1, y1) = leg.start, leg.end
            ax.plot([x0, x1], [y0, y1], color=_ON_NETWORK, lw=3, solid_capstyle="butt",
                    zorder=6.5)
            drawn = True
    if drawn:
        key("route on road, trail, bridge or ford", ls="-", color=_ON_NETWORK, lw=3)
    for kind in sorted(marked):
        key(kind if kind != "obstacle" else "obstacle crossed", marker=marks[kind], ms=9,
            mfc="white", mec=_ROUTE, mew=2)


def _draw_network(ax, network: Network, key) -> None:
    """The graph's edges by kind, its nodes, the regions and the chokepoints."""
    graph = network.graph
    seen = set()
    for _, _, d in graph.edges(data=True):
        colour, style = _EDGES.get(d["kind"], _EDGES["road"])
        xs, ys = np.asarray(d["geometry"]).T
        ax.plot(xs, ys, color=colour, ls=style, lw=2, zorder=6)
        if d["kind"] not in seen:
            seen.add(d["kind"])
            key(f"network: {d['kind']}", ls=style, color=colour, lw=2)
    marks = {"end": ("o", "white"), "junction": ("o", "black"), "bank": ("s", "#1f5fa8")}
    for kind, (marker, face) in marks.items():
        pts = [d["pos"] for _, d in graph.nodes(data=True) if d["kind"] == kind]
        if pts:
            xs, ys = np.asarray(pts).T
            ax.plot(xs, ys, marker, ls="", ms=6, mfc=face, mec="black", mew=1, zorder=7)
            key(f"node: {kind}", marker=marker, ms=6, mfc=face, mec="black")
    for r in network.regions:
        ax.text(*r.at, f"R{r.id}", ha="center", va="center", fontsize=9, weight="bold",
                zorder=8, bbox={"boxstyle": "round", "fc": "white", "ec": "0.3", "alpha": 0.85})
    for c in network.chokepoints:
        ax.plot(*c.at, "o", ms=24, mfc="none", mec=_ROUTE, mew=2.5, zorder=8)
        joins = "-".join(f"R{r.id}" for r in c.joins)
        ax.annotate(f"{c.kind} ({joins})", c.at, xytext=(14, 14), textcoords="offset points",
                    fontsize=8, weight="bold", color=_ROUTE, zorder=9,
                    bbox={"boxstyle": "round", "fc": "white", "ec": _ROUTE, "alpha": 0.9})
    if network.chokepoints:
        key("chokepoint", marker="o", ms=12, mfc="none", mec=_ROUTE, mew=2)


def render_viewshed_png(
    path: str | os.PathLike,
    lay: Layers,
    observer: tuple[float, float],
    seen: np.ndarray,
    target: tuple[tuple[float, float], bool] | None = None,
    title: str | None = None,
    *,
    table_units: str | None = None,
) -> Figure:
    """Draw what an observer sees over the terrain, to a PNG file.

    The terrain is painted as in `render_png`, with hill contours; ground the
    observer cannot see is shaded dark and the edge of what it sees outlined.
    The observer is a star; a target is a diamond joined to it by a green
    (seen) or red (not seen) line.

    Parameters
    ----------
    path : str or path-like
        Picture to write (overwritten if it exists): PNG, or SVG or PDF when its name
        ends in .svg or .pdf.
    lay : Layers
        The battlefield's terrain layers (`engine.terrain.layers`).
    observer : (x, y)
    seen : ndarray of bool
        The viewshed (`engine.ai.visibility.viewshed`), shape ``lay.grid.shape``.
    target : ((x, y), bool), optional
        A target and whether the observer sees it.
    title : str, optional
        Defaults to where the observer stands, with ``table_units``; ``""`` for
        none.
    table_units : str, optional
        The battlefield's units (``Battlefield.units``), for the axis labels
        and the default title.

    Returns
    -------
    matplotlib.figure.Figure
        The picture drawn (already written to ``path``).

    Raises
    ------
    InputError
        The file's folder does not exist or the file cannot be written; an
        argument is not what it says.
    """
    path = picture_path(path)
    instance("lay", lay, Layers, "engine.terrain.layers")
    observer = named_point("observer", observer)
    if not isinstance(seen, np.ndarray) or seen.shape != lay.grid.shape:
        raise InputError(f"seen must be an array of the grid's shape {lay.grid.shape}, got "
                         + (f"shape {seen.shape}" if isinstance(seen, np.ndarray)
                            else type(seen).__name__))
    seen = seen.astype(bool, copy=False)
    if target is not None:
        if not isinstance(target, Sequence) or isinstance(target, str) or len(target) != 2:
            raise InputError(f"target must be ((x, y), seen), got {target!r:.80}")
        target = (named_point("target", target[0]), flag("target's seen", target[1]))

    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    spec = lay.grid
    units = table_units
    if title is None:
        title = f"seen from ({observer[0]:g}, {observer[1]:g})" + (f" ({units})" if units else "")
    image, _, handles = _terrain(lay)
    image[~seen] *= 0.45
    handles.append(Patch(facecolor="0.3", edgecolor="0.35", label="not seen (shaded)"))
    fig, ax, width, _ = _canvas(lay, image, handles)
    if seen.any() and not seen.all():
        ax.contour(*_corners(seen, spec.cell), levels=[0.5], colors=["black"], linewidths=1.0,
                   zorder=4)
        handles.append(Line2D([], [], color="black", lw=1.0, label="edge of sight"))
    if target is not None:
        (tx, ty), ok = target
        colour = "#1a9850" if ok else _ROUTE
        ax.plot([observer[0], tx], [observer[1], ty], color=colour, lw=2.5, zorder=5)
        ax.plot(tx, ty, "D", ms=10, mfc="gold", mec="black", mew=1.2, zorder=8)
        handles.append(Line2D([], [], color=colour, lw=2.5, marker="D", mfc="gold", mec="black",
                              label="target " + ("seen" if ok else "not seen")))
    ax.plot(*observer, "*", ms=18, mfc="white", mec="black", mew=1.3, zorder=9)
    handles.append(Line2D([], [], ls="", marker="*", ms=12, mfc="white", mec="black",
                          label="observer"))
    _finish(fig, ax, lay, width, title, handles, path, units)
    return fig


_SIDES = ("#1f5fa8", _ROUTE, "#6a3d9a", "#ff7f00")
# What sides 0 and 1 are called when the caller names none.
_SIDE_NAMES = ("attacker", "defender")


def render_ai_png(
    path: str | os.PathLike,
    lay: Layers,
    *,
    threat: Threat | None = None,
    flow: FlowField | None = None,
    units: Sequence[tuple[tuple[float, float], int, str]] = (),
    title: str | None = None,
    sides: Sequence[str] | None = None,
    table_units: str | None = None,
) -> Figure:
    """Draw a threat map, a flow field and units over the terrain, to a PNG file.

    The terrain is painted as in `render_png`.  A threat map shades each cell
    by how many enemies can reach it next turn, a colour per count (the colour
    bar steps through the counts 0, 1, 2, ...), and rings the enemies.  A flow
    field draws an arrow per patch of cells along the first step toward its
    goals (diamonds), with contours of the cost to them labelled with that
    cost.  Units are discs coloured by side, labelled; the legend names the
    sides.

    Parameters
    ----------
    path : str or path-like
        Picture to write (overwritten if it exists): PNG, or SVG or PDF when its name
        ends in .svg or .pdf.
    lay : Layers
        The battlefield's terrain layers (`engine.terrain.layers`).
    threat : Threat, optional
    flow : FlowField, optional
    units : sequence of ((x, y), side, label)
        Side 0, 1, ... picks the colour and, through ``sides``, the name.
    title : str, optional
        Defaults to what the picture shows, with its units; ``""`` for none.
    sides : sequence of str, optional
        The sides' names, side ``i`` being ``sides[i]``; by default
        ``"attacker"`` and ``"defender"`` (a side beyond those named is
        ``"side <i>"``).
    table_units : str, optional
        The battlefield's units, for the axis labels, the contour labels and
        the title; by default those of the threat's or the flow's battlefield.

    Returns
    -------
    matplotlib.figure.Figure
        The picture drawn (already written to ``path``).

    Raises
    ------
    InputError
        The file's folder does not exist or the file cannot be written; an
        argument is not what it says.
    """
    path = picture_path(path)
    instance("lay", lay, Layers, "engine.terrain.layers")
    _optional("threat", threat, Threat, "threat_map")
    _optional("flow", flow, FlowField, "flow_field")
    units = [_unit_mark(i, u) for i, u in enumerate(listed("units", units))]

    if table_units is None and threat is not None:
        table_units = threat.battlefield.units
    elif table_units is None and flow is not None:
        table_units = flow.grid.battlefield.units
    if title is None:
        title = _ai_title(threat, flow, table_units)
    image, _, handles = _terrain(lay)
    fig, ax, width, extent = _canvas(lay, image, handles)
    if threat is not None:
        _draw_threat(fig, ax, threat, extent, handles)
    if flow is not None:
        _draw_flow(ax, lay, flow, handles, table_units)
    _draw_units(ax, units, sides, handles)
    _finish(fig, ax, lay, width, title, handles, path, table_units)
    return fig


def _ai_title(threat: Threat | None, flow: FlowField | None, units: str | None) -> str:
    """What `render_ai_png` shows, as its default title."""
    parts = []
    if threat is not None:
        n = len(threat.enemies)
        parts.append(f"threat of {n} enem{'y' if n == 1 else 'ies'}"
                     + (" charging" if threat.charge else ""))
    if flow is not None:
        goals = ", ".join(f"({x:g}, {y:g})" for x, y in flow.goals)
        parts.append(f"flow field for {flow.grid.unit.race} toward {goals}")
    return "; ".join(parts) + (f" ({units})" if parts and units else "")


def _side_name(side: int, sides: Sequence[str] | None) -> str:
    """Side ``side``'s name: ``sides[side]``, else attacker / defender, else "side <n>"."""
    names = _SIDE_NAMES if sides is None else sides
    return names[side] if 0 <= side < len(names) else f"side {side}"


def _draw_threat(fig, ax, threat: Threat, extent, handles: list) -> None:
    """Each cell a colour per enemy count (a discrete colour bar), the enemies ringed."""
    from matplotlib import colormaps
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.lines import Line2D

    most = max(int(threat.count.max()), 1)
    # Count 0 clear (the terrain shows through), then one shade of red per count.
    reds = colormaps["Reds"](np.linspace(0.3, 1.0, most))
    reds[:, 3] = 0.55
    cmap = ListedColormap(np.vstack([[1.0, 1.0, 1.0, 0.0], reds]))
    norm = BoundaryNorm(np.arange(-0.5, most + 1), cmap.N)
    heat = ax.imshow(threat.count, origin="upper", extent=extent, interpolation="nearest",
                     cmap=cmap, norm=norm, zorder=3)
    step = int(np.ceil((most + 1) / 12))  # at most a dozen ticks, each a whole count
    bar = fig.colorbar(heat, cax=ax.inset_axes([1.015, 0.0, 0.025, 1.0]),
                       ticks=range(0, most + 1, step), spacing="uniform",
                       label="enemies that can reach the cell next turn"
                       + (" (charging)" if threat.charge else ""))
    bar.minorticks_off()
    for _, (x, y) in threat.enemies:
        ax.plot(x, y, "o", ms=14, mfc="none", mec="black", mew=1.5, zorder=8)
    handles.append(Line2D([], [], ls="", marker="o", ms=10, mfc="none", mec="black",
                          label="enemy (threat source)"))


def _draw_flow(ax, lay: Layers, flow: FlowField, handles: list, units: str | None) -> None:
    """Arrows along the first step toward the goals, labelled cost contours, the goals."""
    from matplotlib.lines import Line2D

    spec = lay.grid
    rows, cols = spec.shape
    xc, yc = (np.arange(cols) + 0.5) * spec.cell, (np.arange(rows) + 0.5) * spec.cell
    unit = f" {units}" if units else ""
    finite = np.isfinite(flow.cost)
    if finite.any() and float(flow.cost[finite].max()) > 0:
        cs = ax.contour(xc, yc, np.where(finite, flow.cost, np.nan), levels=10, colors="0.25",
                        linewidths=0.5, zorder=4)
        ax.clabel(cs, inline=True, fontsize=6, fmt=lambda v: f"{v:g}{unit}")
    x, y, ux, uy, spacing = flow_arrows(flow)
    # Arrows 0.6 of their spacing long, in table units (y down, as the image).
    ax.quiver(x, y, ux, uy, angles="xy", pivot="mid", scale_units="xy",
              scale=1.0 / (0.6 * spacing), color="black", width=0.0018, headwidth=4, zorder=5)
    for x, y in flow.goals:
        ax.plot(x, y, "D", ms=11, mfc="gold", mec="black", mew=1.2, zorder=8)
    handles.append(Line2D([], [], ls="", marker=r"$\rightarrow$", ms=12, color="black",
                          label="flow: first step toward the goal"))
    handles.append(Line2D([], [], color="0.25", lw=0.5,
                          label="cost to the goal" + (f" ({units})" if units else "")))
    handles.append(Line2D([], [], ls="", marker="D", ms=8, mfc="gold", mec="black",
                          label="goal"))


def flow_arrows(flow: FlowField, across: int = 45
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """A flow field's first steps toward its goals, sampled about ``across`` to the
    longer side: ``(x, y, ux, uy, spacing)``, the sampled cells' centres, the unit
    vectors of their steps (y down) and the samples' spacing in table units.
    Cells that lead nowhere are left out.  `InputError` unless ``flow`` is a
    `FlowField` and ``across`` a whole number >= 1."""
    instance("flow", flow, FlowField, "flow_field")
    if not whole(across) or across < 1:
        raise InputError(f"across must be a whole number >= 1, got {across!r}")
    spec = flow.grid.grid
    rows, cols = spec.shape
    stride = max(1, round(max(rows, cols) / across))
    r, c = np.mgrid[stride // 2:rows:stride, stride // 2:cols:stride]
    k = flow.step[r, c]
    on = k >= 0
    st = flow.grid.steps
    return ((c[on] + 0.5) * spec.cell, (r[on] + 0.5) * spec.cell, st.ux[k[on]], st.uy[k[on]],
            stride * spec.cell)


def _unit_mark(i: int, unit) -> tuple[tuple[float, float], int, str]:
    """Unit ``i`` of `render_ai_png`'s ``units``, checked: ``((x, y), side, label)``."""
    if not isinstance(unit, Sequence) or isinstance(unit, str) or len(unit) != 3:
        raise InputError(f"units[{i}] must be ((x, y), side, label), got {unit!r:.80}")
    xy, side, label = unit
    if not whole(side) or side < 0:
        raise InputError(f"units[{i}]: side must be a whole number >= 0, got {side!r}")
    return named_point(f"units[{i}]", xy), int(side), str(label)


def _draw_units(ax, units, sides: Sequence[str] | None, handles: list) -> None:
    """Each unit a disc in its side's colour, labelled; a legend entry per side."""
    from matplotlib.lines import Line2D

    seen = set()
    for (x, y), side, label in units:
        colour = _SIDES[side % len(_SIDES)]
        ax.plot(x, y, "o", ms=9, mfc=colour, mec="white", mew=1.3, zorder=9)
        ax.annotate(label, (x, y), xytext=(6, 6), textcoords="offset points", fontsize=7,
                    color=colour, weight="bold", zorder=9)
        if side not in seen:
            seen.add(side)
            handles.append(Line2D([], [], ls="", marker="o", ms=8, mfc=colour, mec="white",
                                  label=_side_name(side, sides)))


def _canvas(lay: Layers, image: np.ndarray, handles: list):
    """A figure sized to the table with the terrain ``image`` and hill contours:
    ``(fig, ax, width, extent)``, ``extent`` the image's in table units.

    Equal aspect, but the short side of a table over 6 times longer than wide
    is stretched.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    spec = lay.grid
    rows, cols = spec.shape
    extent = (0.0, cols * spec.cell, rows * spec.cell, 0.0)
    box = float(np.clip(spec.height / spec.width, 1 / 6, 6))
    width = min(12.0, 13.0 / box)
    fig = Figure(figsize=(width, width * box), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.imshow(image, origin="upper", extent=extent, interpolation="nearest")
    top = float(lay.elevation.max())
    if top > 0:
        xc, yc = (np.arange(cols) + 0.5) * spec.cell, (np.arange(rows) + 0.5) * spec.cell
        levels = np.linspace(0.0, top, 6)[:-1] + 1e-6 * top
        ax.contour(xc, yc, lay.elevation, levels=levels, colors=_HILL, linewidths=0.7, zorder=4)
        handles.append(Line2D([], [], color=_HILL, lw=0.7, label="hill contours"))
    return fig, ax, width, extent


def _finish(fig, ax, lay: Layers, width: float, title: str, handles: list, path: str,
            units: str | None = None) -> None:
    """Axes to the table (labelled in ``units``), the title, the legend below the axis
    labels, and the file written."""
    from matplotlib.transforms import offset_copy

    spec = lay.grid
    box = float(np.clip(spec.height / spec.width, 1 / 6, 6))
    unit = f" ({units})" if units else ""
    ax.set(xlim=(0, spec.width), ylim=(spec.height, 0), aspect=box * spec.width / spec.height,
           xlabel="x" + unit, ylabel="y" + unit)
    ax.set_title(title)
    below = offset_copy(ax.transAxes, fig=fig, y=-36, units="points")
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below,
              ncols=int(np.clip(0.5 * width, 1, min(len(handles), 6))), fontsize="small",
              frameon=False)
    _save(fig, path)
