"""Command line: ``engine reach``, ``route``, ``price``, ``manoeuvre``, ``charge``,
``network``, ``visible``, ``threat``, ``flow``, ``convert``, ``movingai``, ``demo``,
``warm-up``, ``serve`` (the same questions over HTTP: `engine.serve`) and ``batch``
(many of them on a Dask cluster: `engine.batch`).

A point is ``X,Y`` (or two tokens ``X Y``), or ``@NAME``: a named point of the map
(`Battlefield.points`), looked up once the map is loaded.

Every user mistake (a broken map, an unknown race, a point off the table)
prints one line on stderr and exits with status 2; an error of the engine
itself prints one line too and exits with status 3 (``--debug``: its
traceback). No traceback otherwise.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import re
import sys
from importlib import resources

from . import _coldstart
from ._cache import announce_compiles
from ._limits import MIB
from ._version import __version__
from .answers import (
    charge_answer,
    flow_answer,
    manoeuvre_answer,
    network_answer,
    price_answer,
    reach_answer,
    route_answer,
    strict,
    threat_answer,
    visible_answer,
)
from .errors import EngineError, InputError
from .maps.geojson import convert_map, load_map
from .rules.load import load_rules, shipped_rulesets
from .search.front import reach, route
from .search.turns import turns_for
from .terrain.costgrid import cost_grid

__all__ = ["main"]

DEMO_START = (30.0, 40.0)
DEMO_GOAL = (170.0, 95.0)
CROSSINGS_START = (10.0, 20.0)
CROSSINGS_GOAL = (190.0, 130.0)


_MAP_HELP = ("a battlefield: a GeoJSON or Tiled (.tmx, .tmj) map's path, or the name of a "
             "shipped map (demo, crossings)")
_LATTICE_HELP = ("search the step lattice from cell centres (the grid's directions) instead "
                 "of measuring any-angle from the unit's own point")


class _Help(argparse.HelpFormatter):
    """Shows a one-point option as ``X,Y`` (it takes ``X Y`` too), not as a list."""

    def _format_args(self, action, default_metavar):
        if isinstance(action, _PointAction):
            return "X,Y [X,Y ...]" if action.many else "X,Y"
        return super()._format_args(action, default_metavar)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line, exit status 2, and takes a
    value that starts with a minus and a digit, or ``-inf`` or ``-nan``
    (``--at -0.5,60``), as a value, not as an option: no option here looks like
    that (and the value's own check names what is wrong with it)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, formatter_class=_Help, **kwargs)
        # argparse's own test takes only a lone negative number ("-5", "-.5") as a value.
        self._negative_number_matcher = re.compile(r"^-(\.?\d|inf|nan)", re.IGNORECASE)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Named(str):
    """A point given by name (``@NAME``), looked up in the map's points (`_resolve`)."""


def _point(text: str) -> tuple[float, float] | _Named:
    if text.startswith("@"):
        if not text[1:].strip():
            raise argparse.ArgumentTypeError(f"expected a point's name after @, got {text!r}")
        return _Named(text[1:])
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a point X,Y, got {text!r}") from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise argparse.ArgumentTypeError(f"point {text!r} is not finite")
    return x, y


def _points(tokens: list[str]) -> list[tuple[float, float]]:
    """Points from command-line tokens, each ``X,Y``, two tokens ``X Y`` (or one,
    quoted: ``"X Y"``) or ``@NAME`` (a name may hold spaces)."""
    out, pending = [], []
    bad = argparse.ArgumentTypeError(f"expected points X,Y or X Y, got {' '.join(tokens)!r}")
    whole = ([t] if "," in t or t.startswith("@") else t.split() for t in tokens)
    for token in (t for parts in whole for t in parts):
        if "," in token or token.startswith("@"):
            if pending:
                raise bad
            out.append(_point(token))
        elif pending:
            try:
                out.append(_point(f"{pending.pop()},{token}"))
            except argparse.ArgumentTypeError:
                raise bad from None
        else:
            pending.append(token)
    if pending:
        raise bad
    return out


class _PointAction(argparse.Action):
    """An option taking one point, ``X,Y`` or ``X Y`` (``nargs`` "+"), or with
    ``many`` a list of them; with ``append``, repeatable."""

    def __init__(self, *args, many: bool = False, append: bool = False, **kwargs):
        super().__init__(*args, nargs="+", **kwargs)
        self.many, self.append = many, append

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            pts = _points(values)
            if not self.many and len(pts) != 1:
                raise argparse.ArgumentTypeError(
                    f"expected one point X,Y or X Y, got {' '.join(values)!r}")
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument {option_string}: {exc}")
        value = pts if self.many else pts[0]
        if self.append:
            value = [*(getattr(namespace, self.dest) or []), value]
        setattr(namespace, self.dest, value)


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return v


def _size(text: str) -> float:
    """A size in MiB: a finite number, a byte or more (`_number`'s; less, nothing would
    fit)."""
    v = _number(text)
    if v * MIB < 1:
        raise argparse.ArgumentTypeError(f"expected a number of MiB, a byte or more, got "
                                         f"{text!r}")
    return v


def _count(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return v


def _port(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0 to 65535, got {text!r}")
    return v


def _enemy(text: str) -> tuple[str, tuple[float, float] | _Named]:
    race, at, where = text.partition("@@") if "@@" in text else text.rpartition("@")
    if not at or not race:
        raise argparse.ArgumentTypeError(f"expected RACE@X,Y or RACE@@NAME, got {text!r}")
    return race, _point("@" + where if at == "@@" else where)


def _resolve(args, bf) -> None:
    """Replace every point ``args`` gives by name (``@NAME``) by where ``bf`` has it."""

    def resolved(value):
        if isinstance(value, _Named):
            return bf.points[str(value)]
        if isinstance(value, list | tuple):
            return type(value)(resolved(v) for v in value)
        return value

    for key, value in vars(args).items():
        setattr(args, key, resolved(value))


def _battlefield(args):
    """The map ``args`` names, with its named points resolved in ``args`` (`_resolve`)."""
    bf = load_map(args.map)
    _resolve(args, bf)
    return bf


def _picture(text: str) -> str:
    """A ``--png`` file name: a .png, .svg or .pdf in a folder that exists."""
    from .render import picture_path

    try:
        return picture_path(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="engine",
        description="Where a unit can go this turn, the cheapest way there, and why it costs "
        "what it costs, priced as the tabletop rules price movement.",
    )
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s {__version__} (tabletop-movement)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def unit_args(p: argparse.ArgumentParser, race_required: bool = True,
                  png: bool = True) -> None:
        p.add_argument("map", help=_MAP_HELP)
        p.add_argument(
            "--rules", default="fantasy-warlord",
            help=f"a rules file, or a shipped ruleset ({', '.join(shipped_rulesets())})",
        )
        p.add_argument("--race", required=race_required,
                       help="race or profile, as the rules name it"
                       + ("" if race_required else " (default: the first in the rules)"))
        p.add_argument("--move", type=_number, help="allowance per turn (default: the race's move)")
        deep = p.add_mutually_exclusive_group()
        deep.add_argument("--ranks", type=_count, help="ranks deep (depth = ranks x rank depth)")
        deep.add_argument("--depth", type=_number, help="footprint depth in table units")
        p.add_argument("--frontage", type=_number,
                       help="width of the unit's front (default: the race's, else the rules')")
        p.add_argument("--march", action="store_true",
                       help="a march move: the rules' march allowance, open ground only")
        p.add_argument("--formation", choices=("irregular", "regular"), default="irregular",
                       help="regular units keep out of the ground the rules reserve for "
                       "irregular formation")
        p.add_argument("--json", action="store_true", help="print JSON")
        if png:
            p.add_argument("--png", metavar="FILE", type=_picture,
                           help="write a picture (.png, .svg or .pdf)")

    p = sub.add_parser("reach", help="everywhere a unit can get to this turn")
    unit_args(p)
    p.add_argument("--at", action=_PointAction, required=True, help="the unit's position")
    p.add_argument("--probe", action=_PointAction, append=True, default=[],
                   help="a point to report on (repeatable)")
    p.add_argument("--lattice", action="store_true", help=_LATTICE_HELP)

    p = sub.add_parser("route", help="the cheapest route between two points")
    unit_args(p)
    p.add_argument("--from", dest="start", action=_PointAction, required=True,
                   help="where the unit stands (X,Y or X Y, as every point here, or @NAME: "
                   "a named point of the map)")
    p.add_argument("--to", dest="goal", action=_PointAction, required=True,
                   help="where it goes")
    p.add_argument("--lattice", action="store_true", help=_LATTICE_HELP)

    p = sub.add_parser("price", help="what a given path costs, leg by leg")
    unit_args(p, png=False)
    p.add_argument("--path", action=_PointAction, many=True, required=True,
                   help="the path's points in order, from the unit's position")

    p = sub.add_parser("manoeuvre", help="what a re-form, face or frontage change costs "
                       "where the unit stands")
    unit_args(p, png=False)
    p.add_argument("--at", action=_PointAction, required=True, help="the unit's position")
    p.add_argument("--kind", choices=("reform", "face", "frontage"), required=True,
                   help="re-form, face about or change frontage (priced only by rules "
                   "with a [manoeuvres] table: of the shipped ones, battlesystem)")
    p.add_argument("--figures", type=_count, help="figures changing place (frontage)")

    p = sub.add_parser("charge", help="whether a unit can charge a target through the "
                       "terrain between them")
    unit_args(p)
    p.add_argument("--from", dest="start", action=_PointAction, required=True,
                   help="where the charging unit stands")
    p.add_argument("--to", dest="target", action=_PointAction, required=True,
                   help="the target it charges")
    p.add_argument("--bonus", type=_number,
                   help="the charge bonus (default: the race's charge_bonus)")
    p.add_argument("--min-range", type=_number, required=True, help="minimum charge range")
    p.add_argument("--climbed", action="store_true", help="it has moved uphill this turn")

    p = sub.add_parser("network", help="the road, trail, bridge and ford network and the "
                       "chokepoints a unit depends on")
    unit_args(p, race_required=False)
    p.add_argument("--tolerance", type=_number,
                   help="lines whose ends are this close join (default: one grid cell)")
    _visible_parser(sub)

    p = sub.add_parser("threat", help="how many enemies can reach each cell next turn")
    p.add_argument("map", help=_MAP_HELP)
    p.add_argument(
        "--rules", default="fantasy-warlord",
        help=f"a rules file, or a shipped ruleset ({', '.join(shipped_rulesets())})",
    )
    p.add_argument("--enemy", type=_enemy, action="append", required=True, metavar="RACE@X,Y",
                   help="an enemy unit and its position (repeatable; RACE@@NAME: at a named "
                   "point of the map)")
    p.add_argument("--charge", action="store_true",
                   help="reach as a charge (move plus the rules' charge_bonus)")
    p.add_argument("--probe", action=_PointAction, append=True, default=[],
                   help="a point to report on (repeatable)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--png", metavar="FILE", type=_picture, help="write a picture (threat shaded)")

    p = sub.add_parser("flow", help="a field leading every cell to the goal along cheapest routes")
    unit_args(p)
    p.add_argument("--goal", action=_PointAction, append=True, required=True,
                   help="a goal (repeatable: the field leads to the nearest)")
    p.add_argument("--from", dest="probe", action=_PointAction, append=True, default=[],
                   metavar="X,Y", help="a point to follow the field from (repeatable)")
    p.add_argument("--limit", type=_number, default=math.inf,
                   help="search costs up to this only (default: the whole battlefield)")

    p = sub.add_parser("convert", help="write a map in the other format: Tiled to GeoJSON, "
                       "GeoJSON to Tiled")
    p.add_argument("source", help=_MAP_HELP)
    p.add_argument("target", help="the file to write: .geojson or .json (GeoJSON), or .tmj "
                   "(a Tiled map with one object layer)")

    p = sub.add_parser("movingai", help="solve Moving AI benchmark scenarios and check them")
    p.add_argument("scen", help="a .scen file")
    p.add_argument("--map", help="its .map (default: beside it, as its lines name it)")
    p.add_argument("--limit", type=_count, help="solve only the first N scenarios")
    p.add_argument("--json", action="store_true", help="print JSON")

    sub.add_parser("warm-up", help="compile every kernel ahead (first run after an install)")

    _serve_parser(sub)
    _batch_parser(sub)

    p = sub.add_parser("demo", help="run on the shipped battlefields and draw them")
    p.add_argument("--png", metavar="FILE", type=_picture, default="engine-demo.png",
                   help="picture to write (default: engine-demo.png); the crossings map's "
                   "network goes beside it, its name ending -network (engine-demo-network.png)")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an unexpected error")
    for p in sub.choices.values():  # also after the command: engine reach ... --debug
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an unexpected error")
    return parser


def _visible_parser(sub) -> None:
    """``engine visible``'s options."""
    p = sub.add_parser("visible", help="what an observer sees, or whether it sees a target")
    p.add_argument("map", help=_MAP_HELP)
    p.add_argument(
        "--rules", default="fantasy-warlord",
        help=f"a rules file, or a shipped ruleset ({', '.join(shipped_rulesets())})",
    )
    p.add_argument("--from", dest="observer", action=_PointAction, required=True,
                   help="the observer")
    p.add_argument("--to", dest="target", action=_PointAction,
                   help="a target; without it, the whole viewshed")
    eyes = p.add_mutually_exclusive_group()
    eyes.add_argument("--flying", action="store_true", help="the observer flies at Flight Height")
    eyes.add_argument("--height", type=_number, help="sight height (default: the rules')")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--png", metavar="FILE", type=_picture, help="write a picture of the viewshed")


def _serve_parser(sub) -> None:
    """``engine serve``'s options."""
    p = sub.add_parser("serve", help="answer these questions over HTTP (JSON), with a viewer "
                       "in the browser")
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=_port, default=8765, help="default: 8765; 0 takes a free one")
    p.add_argument("--maps", metavar="DIR",
                   help="a folder of GeoJSON maps, asked for by name (forest.geojson: forest)")
    p.add_argument("--rules", metavar="FILE", nargs="+", action="extend", default=[],
                   help="rules files, asked for by name (village.toml: village)")
    p.add_argument("--cache-mb", type=_size, default=512,
                   help="MiB the cached battlefields and cost grids may hold (default: 512)")
    p.add_argument("--max-body-mb", type=_size, default=16,
                   help="the largest request body taken, in MiB (default: 16)")


def _batch_parser(sub) -> None:
    """``engine batch``'s options."""
    p = sub.add_parser("batch", help="answer a file of questions (JSON Lines) on this "
                       "machine's cores or a Dask cluster")
    p.add_argument("jobs", nargs="?", metavar="JOBS",
                   help="the job file: one JSON object a line, {\"id\", \"command\", "
                   "...the command's fields}")
    p.add_argument("--out", required=True, metavar="RESULTS",
                   help="the results, one JSON line a job, written as they finish")
    p.add_argument("--movingai", metavar="DIR",
                   help="instead of a job file: every X.map with its X.map.scen in DIR")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="a running Dask scheduler (default: a cluster on this machine)")
    where.add_argument("--workers", type=_count,
                       help="worker processes of the local cluster (default: the cores)")
    p.add_argument("--resume", action="store_true",
                   help="continue RESULTS: ask only the jobs it does not answer yet")


# What a command compiles longest on a cold start, by whether its unit has rear ranks:
# kernels for `_coldstart`'s helper process, and kernels to compile here meanwhile.
_COLD: dict[tuple[str, str], tuple[list[str], list[str]]] = {
    ("reach", "ranks"): (["many_trails"], []),
    ("reach", "ranks lattice"): (["search_labels"], []),
    ("reach", "lattice"): (["reach_table"], []),
    ("reach", "point"): (["many_theta"], []),
    ("route", "ranks"): (["search_labels", "many_trails"], ["walk_path", "trace_labels"]),
    ("route", "lattice"): (["astar_table"], ["walk_path"]),
    ("route", "point"): (["straighten"], ["theta_search", "walk_path"]),
    ("threat", "ranks"): (["many_trails"], []),
    ("threat", "point"): (["many_theta"], []),
}
_COLD["route", "ranks lattice"] = _COLD["route", "ranks"]
for _kind in ("ranks", "ranks lattice", "lattice", "point"):  # flow fields': the same for any
    _COLD["flow", _kind] = (["field_band"], ["field_rest"])
    _COLD["charge", _kind] = _COLD["route", _kind]
_COLD["demo", "ranks"] = _COLD["route", "ranks"]


def _searched(unit, lattice: bool = False) -> str:
    """How ``unit`` is searched, as `_COLD` keys it: any-angle or on the step lattice,
    with rear ranks or as a point."""
    if unit.depth > 0:
        return "ranks lattice" if lattice else "ranks"
    return "lattice" if lattice else "point"


def _expect(command: str, kind: str) -> None:
    """Tell `_coldstart` what ``command`` compiles longest (`_COLD`) for units searched
    as ``kind`` (`_searched`)."""
    helper, ahead = _COLD.get((command, kind), ([], []))
    _coldstart.expect(helper, ahead)


def _grid(args):
    rules = load_rules(args.rules)
    race = args.race if args.race is not None else rules.default_race
    unit = rules.unit(race, move=args.move, ranks=args.ranks, depth=args.depth,
                      frontage=args.frontage, march=args.march, formation=args.formation)
    _expect(args.command, _searched(unit, getattr(args, "lattice", False)))
    return cost_grid(_battlefield(args), rules, unit)


def _legs_text(legs) -> list[str]:
    return [
        f"  ({a[0]:.2f}, {a[1]:.2f}) -> ({b[0]:.2f}, {b[1]:.2f})  {leg.length:7.2f} x "
        f"{leg.multiplier:g} = {leg.cost:7.2f}  {', '.join(leg.terrain)}"
        if leg.kind == "move" else
        f"  ({a[0]:.2f}, {a[1]:.2f})  {leg.kind} {'':>10} = {leg.cost:7.2f}  "
        f"{', '.join(leg.terrain)}"
        for leg in legs
        for a, b in [(leg.start, leg.end)]
    ]


def _cmd_reach(args) -> None:
    g = _grid(args)
    r, answer = reach_answer(g, args.at, args.probe, lattice=args.lattice)
    units = g.battlefield.units
    if args.png:
        from .render import render_png

        render_png(args.png, g, reach=r)
    if args.json:
        _print_json(answer)
        return
    print(f"{g.unit.race} at ({args.at[0]:g}, {args.at[1]:g}), allowance {r.allowance:g} {units}: "
          f"{len(r.cells)} cells, {r.area:.2f} {units}^2 reachable")
    for p in answer["probes"]:
        cost = "out of reach" if p["cost"] is None else f"cost {p['cost']:g}"
        print(f"  ({p['at'][0]:g}, {p['at'][1]:g}): {cost}, reachable: {p['reachable']}")


def _cmd_route(args) -> None:
    g = _grid(args)
    rt, answer = route_answer(g, args.start, args.goal, lattice=args.lattice)
    if args.png:
        from .render import render_png

        render_png(args.png, g, route=rt)
    if args.json:
        _print_json(answer)
        return
    units = g.battlefield.units
    print(f"{g.unit.race}: cost {rt.cost:.2f} {units} over {rt.length:.2f} {units}, "
          f"{rt.turns} turn(s) of {rt.allowance:g}")
    print("\n".join(_legs_text(rt.legs)))


def _cmd_price(args) -> None:
    g = _grid(args)
    p, answer = price_answer(g, args.path)
    if args.json:
        _print_json(answer)
        return
    units = g.battlefield.units
    cost = "impassable" if math.isinf(p.cost) else f"{p.cost:.2f} {units}"
    print(f"{g.unit.race}: cost {cost} over {p.length:.2f} {units}")
    print("\n".join(_legs_text(p.legs)))


def _cmd_manoeuvre(args) -> None:
    if args.kind == "frontage" and args.figures is None:
        raise InputError("--kind frontage needs --figures N (the figures changing place)")
    g = _grid(args)
    m, answer = manoeuvre_answer(g, args.at, args.kind, args.figures)
    if args.json:
        _print_json(answer)
        return
    print(f"{g.unit.race} at ({args.at[0]:g}, {args.at[1]:g}): {m.reason}")


def _cmd_charge(args) -> None:
    g = _grid(args)
    c, answer = charge_answer(g, args.start, args.target, bonus=args.bonus,
                              min_range=args.min_range, climbed=args.climbed)
    if args.png and c.route is not None:
        from .render import render_png

        render_png(args.png, g, route=c.route)
    if args.json:
        _print_json(answer)
        return
    verdict = "can charge" if c.allowed else "cannot charge"
    print(f"{g.unit.race} {verdict}" + (f": {'; '.join(c.reasons)}" if c.reasons else ""))
    for check in c.checks:
        print(f"  needs a {check}")


def _cmd_network(args) -> None:
    g = _grid(args)
    net, answer = network_answer(g, args.tolerance)
    if args.png:
        from .render import render_png

        render_png(args.png, g, network=net,
                   title=f"network and chokepoints for {g.unit.race}")
    if args.json:
        _print_json(answer)
        return
    print(_network_text(net, g))


def _network_text(net, g) -> str:
    units = g.battlefield.units
    lines = [f"network: {net.graph.number_of_nodes()} nodes, {net.graph.number_of_edges()} "
             f"edges; {len(net.regions)} regions for {g.unit.race}"]
    lines += [f"  region R{r.id}: {r.area:.1f} {units}^2 around ({r.at[0]:g}, {r.at[1]:g})"
              for r in net.regions]
    lines += [f"  chokepoint: {c.kind} at ({c.at[0]:g}, {c.at[1]:g}), {c.feature}, joins "
              + ", ".join(f"R{r.id}" for r in c.joins) for c in net.chokepoints]
    return "\n".join(lines)


def _cmd_visible(args) -> None:
    from .terrain.raster import layers

    rules = load_rules(args.rules)
    bf = _battlefield(args)
    observer, target = args.observer, args.target
    sight, seen, answer = visible_answer(bf, rules, observer, target, flying=args.flying,
                                         height=args.height, viewshed=bool(args.png))
    units = bf.units
    where = f"({observer[0]:g}, {observer[1]:g})"
    if args.png:
        from .render import render_viewshed_png

        mark = None if sight is None else (target, sight.seen)
        title = f"seen from {where}" + (" (flying)" if args.flying else "") + f" ({units})"
        render_viewshed_png(args.png, layers(bf, rules), observer, seen, mark, title,
                            table_units=units)
    if sight is not None:
        if args.json:
            _print_json(answer)
        else:
            print(sight.reason)
        return
    count, area = answer["cells"], answer["area"]
    if args.json:
        _print_json(answer)
        return
    print(f"from {where}: sees {count} of {seen.size} cells ({100 * count / seen.size:.1f}%), "
          f"{area:.2f} {units}^2")


def _cmd_threat(args) -> None:
    from .terrain.raster import layers

    rules = load_rules(args.rules)
    bf = _battlefield(args)
    enemies = [(rules.unit(race), xy) for race, xy in args.enemy]
    _expect("threat", "ranks" if any(u.depth > 0 for u, _ in enemies) else "point")
    t, answer = threat_answer(bf, rules, enemies, charge=args.charge, probes=args.probe)
    cells = answer["cells"]
    units = bf.units
    if args.png:
        from .render import render_ai_png

        render_ai_png(args.png, layers(bf, rules), threat=t,
                      units=[(xy, 1, u.race) for u, xy in enemies], sides=("friendly", "enemy"))
    if args.json:
        _print_json(answer)
        return
    print(f"{len(enemies)} enem{'y' if len(enemies) == 1 else 'ies'}"
          + (" charging" if args.charge else "") + f": {cells * bf.cell**2:.2f} {units}^2 "
          f"within reach next turn, up to {int(t.count.max())} at once")
    for p in answer["probes"]:
        who = ", ".join(f"#{b['enemy']} {b['race']} (margin {b['margin']:g})" for b in p["by"])
        print(f"  ({p['at'][0]:g}, {p['at'][1]:g}): {p['count']} can reach it"
              + (f": {who}" if who else ""))


def _cmd_flow(args) -> None:
    g = _grid(args)
    f, answer = flow_answer(g, args.goal, args.probe, args.limit)
    probes, cells = answer["probes"], answer["cells"]
    if args.png:
        from .render import render_ai_png

        render_ai_png(args.png, g.layers, flow=f, sides=("start",),
                      units=[(tuple(p["from"]), 0, "from") for p in probes])
    if args.json:
        _print_json(answer)
        return
    units = g.battlefield.units
    print(f"{g.unit.race}: {cells} cells lead to "
          + ", ".join(f"({x:g}, {y:g})" for x, y in args.goal))
    for p in probes:
        x, y = p["from"]
        if p["cost"] is None:
            print(f"  from ({x:g}, {y:g}): no goal within reach")
        else:
            turns = (f"{turns_for(p['cost'], g.unit.move) if p['cost'] > 0 else 0} turn(s)"
                     if g.unit.move
                     else "never at move 0" if p["cost"] > 0 else "0 turn(s)")
            print(f"  from ({x:g}, {y:g}): cost {p['cost']:g} {units}, {len(p['path']) - 1} "
                  f"steps, {turns}")


def _cmd_convert(args) -> None:
    bf = convert_map(args.source, args.target)
    print(f"{args.target}: {bf.width:g} x {bf.height:g} {bf.units} (cell {bf.cell:g}), "
          f"{len(bf.features)} features, {len(bf.points)} named points")


def _cmd_movingai(args) -> None:
    from .maps.movingai import load_grid_map, load_scenarios, map_for
    from .search.scenarios import run_scenarios

    scenarios = load_scenarios(args.scen)
    grid_map = load_grid_map(args.map or map_for(args.scen, scenarios))
    result = run_scenarios(grid_map, scenarios, args.limit)
    if args.json:
        _print_json(result.as_dict())
        return
    print(f"{grid_map.name}: {result.matched} of {result.scenarios} scenarios match the optimal "
          f"length (largest difference {result.max_error:.3g}) in {result.seconds:.2f} s")


def _cmd_demo(args) -> None:
    from .render import render_png

    path = resources.files("engine.maps") / "data" / "demo.geojson"
    rules = load_rules("fantasy-warlord")
    bf = load_map(str(path))
    unit = rules.unit("humans", ranks=2)
    _expect("demo", _searched(unit))
    g = cost_grid(bf, rules, unit)
    r = reach(g, DEMO_START)
    rt = route(g, DEMO_START, DEMO_GOAL)
    render_png(args.png, g, reach=r, route=rt)  # first: a path it cannot write stops it here
    print(f"Demo battlefield: {bf.width:g} x {bf.height:g} {bf.units}, "
          f"{len(bf.features)} features, rules {rules.name}")
    print(f"{unit.race}, 2 ranks (depth {unit.depth:g} {bf.units}), move {unit.move:g}, "
          f"at {DEMO_START}: {r.area:.1f} {bf.units}^2 within reach this turn")
    print(f"route to {DEMO_GOAL}: cost {rt.cost:.2f} over {rt.length:.2f} {bf.units}, "
          f"{rt.turns} turns")
    print("\n".join(_legs_text(rt.legs)))
    print(f"picture: {args.png}")

    from .terrain.roads import describe

    bf = load_map(str(resources.files("engine.maps") / "data" / "crossings.geojson"))
    g = cost_grid(bf, rules, rules.unit("humans"))
    net = describe(bf, rules, g.unit)
    rt = route(g, CROSSINGS_START, CROSSINGS_GOAL)
    print(f"\nCrossings battlefield: {_network_text(net, g)}")
    print(f"route {CROSSINGS_START} to {CROSSINGS_GOAL}, frontage {g.unit.frontage:g}: "
          f"cost {rt.cost:.2f}, {rt.turns} turns, "
          f"{sum(leg.kind == 'formation change' for leg in rt.legs)} formation change(s)")
    stem, dot, ext = args.png.rpartition(".")
    picture = f"{stem}-network.{ext}" if dot else f"{args.png}-network"
    render_png(picture, g, network=net, route=rt, title="crossings: network, chokepoints "
               "and a route")
    print(f"picture: {picture}")


def _print_json(value) -> None:
    """Print ``value`` as one line of strict JSON (no NaN, no Infinity: null)."""
    print(json.dumps(strict(value), allow_nan=False))


def _warm_up(args) -> None:
    """``engine warm-up``: every kernel compiled, one worker process per core."""
    from ._cache import cache_folder
    from ._threads import usable_cores
    from .warmup import warm_up

    warm_up(progress=True, processes=usable_cores())
    print(f"kernels ready in {cache_folder()}")


def _serve(args) -> None:
    """``engine serve``: the HTTP API and the viewer (the ``serve`` extra)."""
    try:
        from .serve import serve
    except ImportError as exc:
        raise InputError(f"engine serve needs {exc.name or 'its dependencies'}: pip install "
                         "'tabletop-movement[serve]'") from None
    serve(args.host, args.port, args.maps, args.rules, cache_mb=args.cache_mb,
          max_body_mb=args.max_body_mb)


def _batch(args) -> int:
    """``engine batch``: 0 when every job is answered, 1 when any failed."""
    if (args.jobs is None) == (args.movingai is None):
        raise InputError("engine batch takes a job file or --movingai DIR (one of them)")
    try:
        from .batch import run_batch
    except ImportError as exc:
        raise InputError(f"engine batch needs {exc.name or 'its dependencies'}: pip install "
                         "'tabletop-movement[distributed]'") from None
    try:
        summary = run_batch(args.jobs, args.out, movingai=args.movingai,
                            scheduler=args.scheduler, workers=args.workers,
                            resume=args.resume)
    except KeyboardInterrupt:
        print(f"engine: interrupted; the results so far are in {args.out} (--resume "
              "continues)", file=sys.stderr)
        return 130
    print(summary.line(args.out))
    return 1 if summary.failed else 0


_COMMANDS = {
    "reach": _cmd_reach, "route": _cmd_route, "price": _cmd_price,
    "manoeuvre": _cmd_manoeuvre, "charge": _cmd_charge,
    "network": _cmd_network, "visible": _cmd_visible, "threat": _cmd_threat,
    "flow": _cmd_flow, "convert": _cmd_convert, "movingai": _cmd_movingai, "demo": _cmd_demo,
    "warm-up": _warm_up, "serve": _serve, "batch": _batch,
}


# Writing the answer failed for want of room: no space, over quota, a file too large.
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 on success (``batch``: 1 when any of its jobs failed), 2 on a user error (an
    `EngineError`, memory running out, or no room to write the answer: one line on
    stderr), 3 on anything else:
    one line naming it, and with ``--debug`` its traceback instead.
    """
    args = _parser().parse_args(argv)
    # The command line, not main([...]); warm-up and serve compile with a progress bar,
    # batch's workers compile what they use.
    if argv is None and args.command not in ("warm-up", "serve", "batch"):
        announce_compiles()
        _coldstart.enable()
    try:
        status = _COMMANDS[args.command](args)
        sys.stdout.flush()  # a full disk says so here, not at exit
    except EngineError as exc:
        print(f"engine: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError:
        print("engine: error: out of memory for this question (a larger cell, a smaller "
              "map, or ENGINE_MEMORY_MB to size grids against less)", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: no traceback unless asked
        if isinstance(exc, OSError) and exc.errno in _FULL:
            # What is still buffered for stdout would fail again at exit, and say so.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            print(f"engine: error: cannot write the answer: {exc.strerror}", file=sys.stderr)
            return 2
        if args.debug:
            raise
        what = " ".join(str(exc).split())[:200]
        print(f"engine: internal error: {type(exc).__name__}: {what} (rerun with --debug "
              "for the traceback, and please report it)", file=sys.stderr)
        return 3
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
