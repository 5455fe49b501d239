"""Errors raised by the rules engines and parsers; the CLI prints them as one line."""


class PipslabError(ValueError):
    """Bad input from a user: a malformed position, an unknown name, a bad argument."""


class IllegalActionError(PipslabError):
    """An action that is not legal in the current state."""


class PositionError(PipslabError):
    """A position string that cannot be parsed or describes an impossible position."""
