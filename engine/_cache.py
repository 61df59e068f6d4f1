"""Where numba keeps the kernels' machine code.

numba's disk cache keys a kernel by its own file, not by the callees it
inlines from other files, so an edit to a callee could leave a caller's cached
code stale.  The engine therefore caches in a folder of its own, named by the
package's version and a hash of every source file of the package: any edit,
upgrade or reinstall starts a fresh cache.  The folder sits in the user's cache
directory, never inside the installed package.  ``NUMBA_CACHE_DIR`` overrides
it.  `configure` must run before any kernel module is imported (numba reads the
folder when a kernel is decorated); ``engine/__init__.py`` calls it first.
It marks the folder as used and removes the engine's older folders beside it,
keeping the few used most recently.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

from ._version import __version__

__all__ = ["announce_compiles", "cache_folder", "configure", "prune", "source_hash"]

_PACKAGE = Path(__file__).resolve().parent


def source_hash(package: Path = _PACKAGE) -> str:
    """A hash of every ``.py`` file under ``package`` (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _user_cache_root() -> Path:
    """The user's cache directory, as each platform names it."""
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def cache_folder() -> Path:
    """The folder numba caches the kernels in: ``NUMBA_CACHE_DIR`` if set, else
    ``<user cache>/tabletop-movement/numba-<version>-<source hash>``."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"])
    return _user_cache_root() / "tabletop-movement" / f"numba-{__version__}-{source_hash()}"


def prune(current: Path, keep: int = 2) -> list[Path]:
    """Remove the engine's cache folders beside ``current`` (``numba-*``) but the
    ``keep`` used most recently; return those removed.

    A folder is used when `configure` picks it, so another version or checkout of
    the engine in use keeps its folder; ones left by an upgrade or an edit go.
    """
    others = [p for p in current.parent.glob("numba-*") if p.is_dir() and p != current]
    others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in others[keep:]:
        shutil.rmtree(old, ignore_errors=True)
    return others[keep:]


def configure() -> None:
    """Point numba's disk cache at `cache_folder` (before any kernel is defined),
    mark it used, and `prune` the engine's older folders beside it (not under
    ``NUMBA_CACHE_DIR``, which is the user's to manage)."""
    import numba

    folder = cache_folder()
    numba.config.CACHE_DIR = str(folder)
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        prune(folder)
    except OSError:  # a read-only home: numba itself falls back or compiles each run
        pass


_ANNOUNCED: list[object] = []


def announce_compiles(stream=None) -> None:
    """From now on, say once on ``stream`` (stderr) when numba starts compiling a
    kernel that its cache does not hold: "compiling kernels, first run only".

    Calling it again in the same process does nothing.
    """
    from numba.core import event

    if _ANNOUNCED:
        return

    class _Once(event.Listener):
        said = False

        def on_start(self, ev: event.Event) -> None:
            if not self.said:
                self.said = True
                print("engine: compiling kernels, first run only (`engine warm-up` compiles "
                      "them all ahead)", file=stream or sys.stderr, flush=True)

        def on_end(self, ev: event.Event) -> None:
            pass

    _ANNOUNCED.append(_Once())
    event.register("numba:compile", _ANNOUNCED[0])
