"""The memory the engine sizes its grids against: bytes a cell needs, and the machine's."""

from __future__ import annotations

import os

__all__ = ["BYTES_PER_CELL", "memory_bytes"]

# Bytes a cell may need across the grids of one cost model and a search
# workspace (layers, a direction stack of 32 float64 multipliers, search state).
BYTES_PER_CELL = 8 * 32 + 64


def memory_bytes() -> int:
    """Bytes of physical memory (8 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30
