"""What the public functions accept as numbers, whole numbers and yes/no options.

Python's and numpy's numbers alike (``numbers.Real``, ``numbers.Integral``),
never a bool where a number is asked for, and only a bool where a yes/no is:
``"no"`` is true in Python, so a string there would be read as yes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .errors import InputError

__all__ = ["flag", "instance", "listed", "point", "real", "whole"]


def real(value: Any) -> bool:
    """Whether ``value`` is a real number (int, float or a numpy one; not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def whole(value: Any) -> bool:
    """Whether ``value`` is a whole number (int or a numpy integer; not a bool)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)


def flag(name: str, value: Any) -> bool:
    """``value`` as a bool; `InputError` unless it is one (Python's or numpy's)."""
    if not isinstance(value, bool | np.bool_):
        raise InputError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def instance(name: str, value: Any, cls: type, made_by: str) -> None:
    """`InputError` unless ``value`` is a ``cls`` (which ``made_by`` makes)."""
    if not isinstance(value, cls):
        raise InputError(f"{name} must be a {cls.__name__} (from {made_by}), "
                         f"got {type(value).__name__}")


def listed(name: str, value: Any) -> list:
    """``value``'s items as a list; `InputError` if it is not a collection of them."""
    if isinstance(value, str | bytes | dict) or not isinstance(value, Iterable):
        raise InputError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def point(xy: Any) -> tuple[float, float]:
    """``xy`` as two finite floats; `InputError` unless it is two real numbers."""
    if isinstance(xy, np.ndarray):
        xy = xy.tolist()
    if not isinstance(xy, Sequence) or isinstance(xy, str) or len(xy) != 2 or not all(
        real(v) for v in xy
    ):
        raise InputError(f"a point must be two numbers x,y, got {xy!r}")
    x, y = float(xy[0]), float(xy[1])
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InputError(f"point ({x}, {y}) is not finite")
    return x, y
