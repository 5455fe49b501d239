"""Errors raised by the rules engines and parsers; the CLI prints them as one line."""


class PipslabError(ValueError):
    """Bad input from a user: a malformed position, an unknown name, a bad argument."""


class IllegalActionError(PipslabError):
    """An action that is not legal in the current state."""


class Forfeit(IllegalActionError):
    """A seat's agent chose an action that is not legal: the game is forfeited by that
    seat.  Carries the state before the move, the seat, the action and the moves played,
    so a tournament can record the forfeit and go on."""

    def __init__(self, message: str, state, seat: int, action, moves: int, seconds: float):
        super().__init__(message)
        self.state, self.seat, self.action, self.moves, self.seconds = state, seat, action, moves, seconds


class PositionError(PipslabError):
    """A position string that cannot be parsed or describes an impossible position."""


class ActionTypeError(PipslabError, TypeError):
    """An action that is not an action id at all (not an integer): both a ``TypeError``
    and a :class:`PipslabError`."""


def excerpt(value, limit: int = 40) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters: a user's
    100 kB string is quoted by its start and its length, not echoed whole."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text) if isinstance(value, str) else text
    head = repr(text[:limit])[:-1] if isinstance(value, str) else text[:limit]
    return f"{head}…{head[0] if isinstance(value, str) else ''} ({len(text):,} characters)"
