"""The server's cache of battlefields and their cost grids, bounded by memory.

A game asking about the same map each turn should pay the rasterisation once.
The engine keeps what it builds for a battlefield on the battlefield itself:
its terrain layers per ruleset, a cost grid per unit profile, search
workspaces, lines of sight.  The cache holds one battlefield per (map,
ruleset) with all of that, measures the arrays each holds after every question
and, when their total passes the budget, drops the least recently used ones
(the one just used too, when it alone is over).  A battlefield is worked on by
one question at a time (its lock): its workspaces are shared by its searches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..maps.battlefield import Battlefield

__all__ = ["GridCache", "held_bytes"]


def held_bytes(battlefield: Battlefield) -> int:
    """Bytes of the arrays ``battlefield`` keeps for its questions (layers, cost grids,
    workspaces, ...): each array's own memory, counted once.

    >>> import engine
    >>> bf = engine.load_map("demo")
    >>> before = held_bytes(bf)
    >>> rules = engine.load_rules("fantasy-warlord")
    >>> _ = engine.cost_grid(bf, rules, rules.unit("humans"))
    >>> held_bytes(bf) > before + 360 * 240 * 8
    True
    """
    seen: set[int] = set()
    total = 0
    stack: list = [battlefield._cache]
    while stack:
        obj = stack.pop()
        if isinstance(obj, np.ndarray):
            while isinstance(obj.base, np.ndarray):  # a view: its owner's memory
                obj = obj.base
            if id(obj) not in seen:
                seen.add(id(obj))
                total += obj.nbytes
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)
        elif type(obj).__module__.startswith("engine.") and hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())  # the engine's own objects (CostGrid, Layers...)
    return total


@dataclass
class _Entry:
    battlefield: Battlefield
    lock: threading.Lock = field(default_factory=threading.Lock)
    nbytes: int = 0


class GridCache:
    """Battlefields by key, each with the grids built on it, least recently used
    dropped first once they hold more than ``budget`` bytes.

    Parameters
    ----------
    budget : int
        Bytes the cached battlefields may hold together (`held_bytes`).
    """

    def __init__(self, budget: int):
        self.budget = budget
        self.hits = self.misses = 0
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes the cached battlefields held when last measured."""
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    @contextmanager
    def battlefield(self, key: Hashable, load: Callable[[], Battlefield]) -> Iterator[Battlefield]:
        """The battlefield cached as ``key`` (made by ``load()`` when absent), held by
        this caller alone until the block ends; then measured, and the cache trimmed
        to its budget."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self.hits += 1
                self._entries.move_to_end(key)
        if entry is None:
            made = load()  # outside the lock: a large map takes a while
            with self._lock:
                self.misses += 1
                entry = self._entries.setdefault(key, _Entry(made))  # another may have won
                self._entries.move_to_end(key)
        with entry.lock:
            try:
                yield entry.battlefield
            finally:
                size = held_bytes(entry.battlefield)
                with self._lock:
                    entry.nbytes = size
                    self._trim()

    def _trim(self) -> None:
        """Drop the least recently used battlefields until the rest fit the budget
        (the caller holds ``_lock``)."""
        total = sum(e.nbytes for e in self._entries.values())
        while self._entries and total > self.budget:
            _, gone = self._entries.popitem(last=False)
            total -= gone.nbytes
