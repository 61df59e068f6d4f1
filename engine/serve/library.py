"""What a server answers on: maps and rulesets by name, and inline GeoJSON maps.

Over HTTP a map is a GeoJSON object or the name of a map the server has (the
shipped ones, and the ``*.geojson`` files of ``--maps DIR``); a ruleset is the
name of a shipped one or of a rules file given to ``engine serve --rules``.
A request never names a file: names are looked up among these, so
``"../../etc/passwd"`` is an unknown name like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Hashable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from .._args import shown
from .._limits import BYTES_PER_CELL, MIB
from ..errors import InputError, MapError, RulesError
from ..maps.battlefield import Battlefield
from ..maps.geojson import MapTooLarge, battlefield_of, map_document, shipped_maps
from ..rules.load import load_rules, shipped_rulesets
from ..rules.ruleset import Ruleset

__all__ = ["Library", "TooLarge"]


class TooLarge(InputError):
    """A map whose grid would not fit the server's cache (HTTP 413)."""


class Library:
    """The maps and rulesets a server answers on.

    Parameters
    ----------
    maps : path, optional
        A folder whose ``*.geojson`` files are maps by their names (``forest.geojson``
        is ``"forest"``), read when asked for; they stand before shipped maps of the
        same name.
    rules : sequence of paths
        Rules files, loaded now, each by its file's name (``village.toml`` is
        ``"village"``) beside the shipped rulesets.
    grid_bytes : int
        The most a map's grids may take (`BYTES_PER_CELL` a cell); a larger map is
        refused with `TooLarge`.

    Raises
    ------
    InputError
        ``maps`` is not a folder, or two rulesets would have the same name.
    RulesError
        A rules file is broken.
    """

    def __init__(self, maps: str | os.PathLike | None = None,
                 rules: Sequence[str | os.PathLike] = (), grid_bytes: int = 2**62):
        self.maps_dir = None if maps is None else Path(maps)
        if self.maps_dir is not None and not self.maps_dir.is_dir():
            raise InputError(f"--maps {str(maps)!r} is not a folder")
        self.grid_bytes = grid_bytes
        self._rules: dict[str, Ruleset] = {n: load_rules(n) for n in shipped_rulesets()}
        for path in rules:
            name = Path(path).stem
            if name in self._rules:
                taken = "a shipped ruleset" if name in shipped_rulesets() else "another file"
                raise InputError(f"rules file {str(path)!r} is called {name!r}, the name of "
                                 f"{taken}; rename the file")
            self._rules[name] = load_rules(path)

    def rulesets(self) -> dict[str, Ruleset]:
        """The rulesets by name."""
        return dict(self._rules)

    def rules(self, name: str) -> Ruleset:
        """The ruleset called ``name``; `RulesError` naming the known ones otherwise."""
        try:
            return self._rules[name]
        except KeyError:
            raise RulesError(f"unknown rules {shown(name)}; this server has "
                             f"{', '.join(sorted(self._rules))}") from None

    def maps(self) -> dict[str, Path | None]:
        """The maps by name: their files, or None for a shipped map."""
        found: dict[str, Path | None] = dict.fromkeys(shipped_maps())
        if self.maps_dir is not None:
            for path in sorted(self.maps_dir.glob("*.geojson")):
                if path.is_file():
                    found[path.stem] = path
        return found

    def map_key(self, source: str | dict[str, Any]) -> Hashable:
        """What identifies a map between requests: a named map by its name and its
        file's size and time, an inline one by a hash of its content.

        Raises
        ------
        MapError
            An unknown name, a document nested too deeply.
        """
        if isinstance(source, dict):
            try:
                text = json.dumps(source, sort_keys=True, separators=(",", ":"))
            except (RecursionError, ValueError) as exc:
                raise MapError(f"map: cannot read it: {exc}") from None
            return "inline", hashlib.sha256(text.encode()).hexdigest()
        path = self._path(source)
        if path is None:
            return "shipped", source
        try:
            stat = path.stat()
        except OSError as exc:  # removed since the folder was listed
            raise MapError(f"cannot read map {source!r}: {exc.strerror or exc}") from None
        return "file", source, stat.st_mtime_ns, stat.st_size

    def load_map(self, source: str | dict[str, Any]) -> Battlefield:
        """The map ``source`` (a name or a GeoJSON object), validated and sized.

        Raises
        ------
        MapError
            An unknown name, a broken map.
        TooLarge
            A map whose grids would take more than ``grid_bytes``, or more than
            half the machine's memory.
        """
        try:
            bf = _inline(source) if isinstance(source, dict) else self._named(source)
        except MapTooLarge as exc:
            raise TooLarge(str(exc)) from None
        rows, cols = bf.grid.shape
        need = rows * cols * BYTES_PER_CELL
        if need > self.grid_bytes:
            raise TooLarge(
                f"a {bf.width:g} x {bf.height:g} table at cell {bf.cell:g} is {rows * cols} "
                f"cells, too large for this server's memory ({need / MIB:.0f} MiB of the "
                f"{self.grid_bytes / MIB:.0f} MiB it allows); use a larger cell")
        return bf

    def _named(self, source: str) -> Battlefield:
        """The map called ``source``, read from its file (never by the name: a file of
        that name would come first), its messages naming it as asked, never by its
        file's path."""
        path = str(self._path(source) or resources.files("engine.maps") / "data"
                   / f"{source}.geojson")
        name = f"map {shown(source)}"
        try:
            doc, _, origins = map_document(path)
        except MapError as exc:
            text = str(exc)
            for said in (repr(path), f"map {path}", path):
                text = text.replace(said, name)
            raise MapError(text) from None
        return battlefield_of(doc, name, origins)

    def _path(self, name: str) -> Path | None:
        """The file of the map called ``name``, None for a shipped map; `MapError`
        when there is no such map."""
        found = self.maps()
        if name not in found:
            raise MapError(f"unknown map {shown(name)}; this server has "
                           f"{', '.join(found)} (or send the GeoJSON itself)")
        return found[name]


def _inline(source: dict[str, Any]) -> Battlefield:
    """The battlefield of a map sent in a body, its messages naming it by the body's
    key, ``map``."""
    try:
        doc = map_document(source)[0]
    except MapError as exc:
        raise MapError(f"map{str(exc).removeprefix('<memory>')}") from None
    return battlefield_of(doc, "map")
