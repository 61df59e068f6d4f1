"""Exceptions raised by the engine; every one is a subclass of `EngineError`."""



__all__ = ["EngineError", "InputError", "MapError", "NoRouteError", "RulesError"]


class EngineError(Exception):
    """Base class of every error the engine raises on bad input or impossible requests.

    Messages are one line: any line breaks (from a user's names, or a
    library's own error text) are folded into spaces; spaces within a line are
    kept (``'wood  elves'`` is not ``'wood elves'``).
    """

    def __init__(self, message: str):
        super().__init__(" ".join(line.strip() for line in str(message).splitlines()
                                  if line.strip()))


class MapError(EngineError):
    """A battlefield map is malformed; the message names the feature and the problem."""


class RulesError(EngineError):
    """A rules file is malformed or a race / terrain name is unknown."""


class InputError(EngineError):
    """A query argument is invalid: a point off the table, a negative allowance, ..."""


class NoRouteError(EngineError):
    """No route exists between the two points for this unit."""
