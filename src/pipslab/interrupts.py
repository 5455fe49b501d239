"""Ctrl-C for the ``pipslab`` command: the command notes SIGINT before raising
KeyboardInterrupt as usual, because an interrupt that lands inside a compiled module's
initialisation (numpy's or pandas' Cython modules) surfaces as another error; the command
then still ends with its one line and status 130.  Installed only by the command."""
from __future__ import annotations

import signal

_NOTED: list = []


def note(signum, frame):
    _NOTED.append(signum)
    raise KeyboardInterrupt


def install() -> None:
    """Note SIGINT from now on (only when SIGINT has Python's default handler)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, note)


def noted() -> bool:
    """Whether a SIGINT arrived since :func:`install`."""
    return bool(_NOTED)


def check() -> None:
    """Raise KeyboardInterrupt if a SIGINT was noted: one that landed inside a library
    whose import swallows every exception (a bare ``except:``) is still honoured at the
    command's next step instead of being lost."""
    if _NOTED:
        raise KeyboardInterrupt
