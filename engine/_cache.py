"""Where numba keeps the kernels' machine code.

numba's disk cache keys a kernel by its own file, not by the callees it
inlines from other files, so an edit to a callee could leave a caller's cached
code stale.  The engine therefore caches in a folder of its own, named by the
package's version and a hash of every source file of the package: any edit,
upgrade or reinstall starts a fresh cache.  The folder sits in the user's cache
directory, never inside the installed package.  ``NUMBA_CACHE_DIR`` overrides
it.  `configure` must run before any kernel module is imported (numba reads the
folder when a kernel is decorated); ``engine/__init__.py`` calls it first.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from ._version import __version__

__all__ = ["cache_folder", "configure", "source_hash"]

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


def configure() -> None:
    """Point numba's disk cache at `cache_folder` (before any kernel is defined)."""
    import numba

    numba.config.CACHE_DIR = str(cache_folder())
