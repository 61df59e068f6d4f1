"""Resource limits that hold whatever the input: the memory grids may take, and the size
of a file read.

Memory: a grid is sized against what this process may still allocate, the
smaller of the memory the system has available and, when the process runs
under an address-space limit (``ulimit -v``, ``RLIMIT_AS``), what that limit
leaves.  ``ENGINE_MEMORY_MB`` replaces the estimate.  Files: a map, rules or
Moving AI file is read only up to ``ENGINE_MAX_FILE_MB`` (default 256 MiB);
a longer one, or an endless one such as ``/dev/zero``, is refused before its
contents are parsed.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._args import shown
from .errors import InputError

__all__ = ["BYTES_PER_CELL", "MIB", "is_file", "max_file_bytes", "memory_bytes", "read_limited"]

# Bytes a cell may need across the grids of one cost model and a search
# workspace (layers, a direction stack of 32 float64 multipliers, search state).
BYTES_PER_CELL = 8 * 32 + 64

MIB = 2**20  # bytes in a MiB
_DEFAULT_FILE_MB = 256


def _env_mb(name: str) -> int | None:
    """``name``'s value in MiB as bytes, or None when unset; `InputError` if it is not
    a positive number."""
    text = os.environ.get(name)
    if text is None:
        return None
    try:
        mb = float(text)
    except ValueError:
        mb = -1.0
    if not mb > 0 or mb > 2**40:
        raise InputError(f"{name} must be a number of MiB > 0, got {shown(text)}")
    return int(mb * MIB)


def _available() -> int | None:
    """Bytes the system has available (``MemAvailable``), where it says."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left() -> int | None:
    """Bytes of address space this process may still map under its ``RLIMIT_AS``, or
    None without one."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        used = 0
    return max(soft - used, 0)


def memory_bytes() -> int:
    """Bytes this process may still allocate: ``ENGINE_MEMORY_MB`` if set, else the
    smaller of the system's available memory and what the address-space limit
    leaves (8 GiB where neither is known)."""
    forced = _env_mb("ENGINE_MEMORY_MB")
    if forced is not None:
        return forced
    known = [b for b in (_available(), _address_space_left()) if b is not None]
    return min(known) if known else 8 * 2**30


def max_file_bytes() -> int:
    """The most bytes read from one input file: ``ENGINE_MAX_FILE_MB`` (default 256)."""
    forced = _env_mb("ENGINE_MAX_FILE_MB")
    return _DEFAULT_FILE_MB * MIB if forced is None else forced


def is_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a regular file; false, never an error, for a name the
    system cannot take (too long, or holding a NUL byte)."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def read_limited(path: Path) -> bytes:
    """The bytes of ``path``, at most `max_file_bytes` of them.

    Raises
    ------
    OSError
        From opening or reading it.
    ValueError
        One line, when it holds more than the limit (its size is checked before
        reading when the system knows it; an endless file stops at the limit).
    """
    limit = max_file_bytes()
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data = b"" if size > limit else f.read(limit + 1)
    if size > limit or len(data) > limit:
        raise ValueError(f"larger than the {limit / MIB:g} MiB a file may be "
                         "(ENGINE_MAX_FILE_MB raises the limit)")
    return data
