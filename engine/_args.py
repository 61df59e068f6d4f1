"""What the public functions accept as numbers, whole numbers and yes/no options.

Python's and numpy's numbers alike (``numbers.Real``, ``numbers.Integral``),
never a bool where a number is asked for, and only a bool where a yes/no is:
``"no"`` is true in Python, so a string there would be read as yes.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .errors import InputError

__all__ = ["DuplicateKey", "Huge", "did_you_mean", "file_path", "finite", "flag", "instance",
           "listed", "named", "named_point", "non_negative", "parse_int", "point", "points",
           "real", "shown", "strict_json", "tame", "unique_keys", "whole"]

_T = TypeVar("_T")

# Integers with more digits than this are read as `Huge`: a float holds at most 309.
_MAX_DIGITS = 300


class Huge(float):
    """An integer too large for a float, read from a file or given in a document:
    an infinite float (so every check for a finite number refuses it) that prints
    as what it was, "a 401-digit integer", never as its digits."""

    digits: int

    def __new__(cls, digits: int, negative: bool = False) -> Huge:
        self = super().__new__(cls, -math.inf if negative else math.inf)
        self.digits = digits
        return self

    def __repr__(self) -> str:
        return f"{'a negative' if self < 0 else 'a'} {self.digits}-digit integer"

    __str__ = __repr__


def parse_int(text: str) -> int | Huge:
    """An integer literal of a JSON or TOML document: an int, or a `Huge` one when it
    has more than 300 digits (Python refuses to convert one of over 4300)."""
    digits = len(text.lstrip("+-").replace("_", ""))
    if digits > _MAX_DIGITS:
        return Huge(digits, text.startswith("-"))
    return int(text)


def tame(value: Any) -> Any:
    """``value`` (a parsed document: dicts, lists and scalars) with every int too large
    for a float made `Huge`; the same object when there is none."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) >= 10**_MAX_DIGITS:
            return Huge(_int_digits(value), value < 0)
        return value
    if isinstance(value, dict):
        tamed = {k: tame(v) for k, v in value.items()}
        return value if all(tamed[k] is v for k, v in value.items()) else tamed
    if isinstance(value, list | tuple):
        items = [tame(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def _int_digits(value: int) -> int:
    """How many decimal digits ``value`` has (without converting it to a string)."""
    digits = int(abs(value).bit_length() * math.log10(2)) + 1
    return digits - (abs(value) < 10 ** (digits - 1))


def real(value: Any) -> bool:
    """Whether ``value`` is a real number (int, float or a numpy one; not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def finite(value: Any) -> bool:
    """Whether ``value`` is a finite real number (`real`): an int too large for a
    float is not, and asking never raises."""
    return real(value) and math.isfinite(tame(value))


def non_negative(name: str, value: Any) -> float:
    """``value`` as a float; `InputError` naming it as ``name`` unless it is a finite
    number (`finite`) of at least 0."""
    if not finite(value) or value < 0:
        raise InputError(f"{name} must be a finite number >= 0, got {shown(value)}")
    return float(value)


def shown(value: Any) -> str:
    """``value`` as an error message shows it: its repr, an int too large for a float
    as "a 401-digit integer", and at most 60 characters of it."""
    text = repr(tame(value))
    return text if len(text) <= 60 else text[:57] + "..."


def did_you_mean(key: Any, known: Sequence[str]) -> str:
    """", did you mean 'x'?" for the one of ``known`` closest to ``key``, or ""."""
    close = difflib.get_close_matches(str(key), known, n=1)
    return f", did you mean {close[0]!r}?" if close else ""


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


class DuplicateKey(ValueError):
    """A JSON object names one key twice (`unique_keys`)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's pairs as a dict (``json.loads``'s ``object_pairs_hook``);
    `DuplicateKey` if one key comes twice, where the last would silently win."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"key {shown(key)} appears twice in one object")
            seen.add(key)
    return out


def strict_json(text: str | bytes) -> Any:
    """A JSON document as a file of the engine's is read: an integer too long for a
    float as `Huge` (`parse_int`), and `DuplicateKey` where an object names a key
    twice (`unique_keys`); ``json.loads``'s own errors otherwise."""
    return json.loads(text, parse_int=parse_int, object_pairs_hook=unique_keys)


def file_path(name: str, value: Any) -> Path:
    """``value`` as a `Path`; `InputError` unless it is a str or a path-like object."""
    if not isinstance(value, str | os.PathLike):
        raise InputError(f"{name} must be a file's path, got {type(value).__name__}")
    return Path(value)


def listed(name: str, value: Any) -> list:
    """``value``'s items as a list; `InputError` if it is not a collection of them."""
    if isinstance(value, str | bytes | dict) or not isinstance(value, Iterable):
        raise InputError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def point(xy: Any) -> tuple[float, float]:
    """``xy`` as two finite floats; `InputError` unless it is two real numbers."""
    if type(xy) is tuple and len(xy) == 2 and type(xy[0]) is float and type(xy[1]) is float:
        if math.isfinite(xy[0]) and math.isfinite(xy[1]):  # the common case, at once
            return xy
    if isinstance(xy, np.ndarray):
        xy = xy.tolist()
    if not isinstance(xy, Sequence) or isinstance(xy, str) or len(xy) != 2 or not all(
        real(v) for v in xy
    ):
        raise InputError(f"a point must be two numbers x,y, got {shown(xy)}")
    if not (finite(xy[0]) and finite(xy[1])):
        raise InputError(f"point ({tame(xy[0])}, {tame(xy[1])}) is not finite")
    return float(xy[0]), float(xy[1])


def named(name: str, check: Callable[..., _T], *args: Any) -> _T:
    """``check(*args)``, whose `InputError` begins ``"<name>: "``: an argument's
    check, its error naming the argument as the caller knows it (``start 3``)."""
    try:
        return check(*args)
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from None


def named_point(name: str, xy: Any, on: Callable[[tuple[float, float]], Any] | None = None
                ) -> tuple[float, float]:
    """`point`, passed to ``on`` (a check that raises `InputError`, such as a grid's
    ``xy_to_rc`` for on the table) if given; its `InputError` begins ``"<name>: "``."""
    xy = named(name, point, xy)
    if on is not None:
        named(name, on, xy)
    return xy


def points(name: str, value: Any, on: Callable[[tuple[float, float]], Any] | None = None
           ) -> list[tuple[float, float]]:
    """``value``'s items as points (`named_point`, checked by ``on``); `InputError`
    naming the first that is not one: ``"<name> point <i>: ..."``."""
    return [named_point(f"{name} point {i}", xy, on) for i, xy in enumerate(listed(name, value))]
