"""Checks at the Gymnasium adapters' boundary: actions, ``reset`` options, constructor
arguments.  Each refuses a bad value with one clear error of the project's own
(:class:`~pipslab.envs.errors.PipslabError`, a ``ValueError``; a non-integer action is an
:class:`~pipslab.envs.errors.ActionTypeError`, also a ``TypeError``) naming the value and
what was expected, instead of a raw exception from deep inside, or a silent truncation.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Iterable, Optional

import warnings

import numpy as np

from .errors import ActionTypeError, IllegalActionError, PipslabError, excerpt

__all__ = ["check_action", "check_flag", "check_seat", "check_choice", "check_render_mode", "reset_options",
           "require_reset"]


def check_action(action, n: int) -> int:
    """``action`` as an ``int`` in ``0..n-1`` — the ``Discrete(n)`` space's integers: a
    Python or NumPy integer, or a NumPy integer array holding exactly one.  Anything else
    (a float, even ``3.0``; a string; ``None``; a bool; a longer array) is an
    :class:`ActionTypeError`; an integer outside the space an :class:`IllegalActionError`
    (in every ``illegal_action`` mode: no policy over ``Discrete(n)`` makes one)."""
    value = action
    if isinstance(value, np.ndarray):
        if value.size != 1 or value.ndim > 1 or not np.issubdtype(value.dtype, np.integer):
            raise ActionTypeError(f"action {excerpt(action)} is not an action id: Discrete({n}) takes one integer, "
                                  f"got an array of shape {value.shape} and dtype {value.dtype}")
        value = value.reshape(()).item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ActionTypeError(f"action {excerpt(action)} ({type(action).__name__}) is not an action id: "
                              f"Discrete({n}) takes integers 0..{n - 1}")
    value = int(value)
    if not 0 <= value < n:
        raise IllegalActionError(f"action {value} is outside the action space Discrete({n}) (ids 0..{n - 1})")
    return value


def check_flag(name: str, value) -> bool:
    """A true/false argument: ``bool`` (or ``numpy.bool_``) only — ``"no"`` is not false."""
    if not isinstance(value, (bool, np.bool_)):
        raise PipslabError(f"{name} is True or False, got {excerpt(value)} ({type(value).__name__})")
    return bool(value)


def check_seat(name: str, value, players: int) -> int:
    """A seat number ``0..players-1`` (an integer, not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value < players:
        raise PipslabError(f"{name} must be a seat 0..{players - 1}, got {excerpt(value)}")
    return int(value)


def check_choice(name: str, value, choices: Iterable) -> object:
    choices = tuple(choices)
    if not isinstance(value, (str, type(None))) or value not in choices:
        raise PipslabError(f"{name} must be {' or '.join(map(repr, choices))}, got {excerpt(value)}")
    return value


def check_render_mode(value, supported, env_name: str = "this env"):
    """``render_mode``: None or a string.  ``"human"`` is refused with one line naming the
    modes offered (these envs open no window: ``gymnasium.make(ID, render_mode="human")``
    shows the ``rgb_array`` frames in Gymnasium's ``HumanRendering`` wrapper instead, with
    pygame).  Any other mode the env does not render is kept, with a warning, as Gymnasium's
    own envs do — wrappers must be able to build the env; its ``render()`` then returns None."""
    if value is not None and not isinstance(value, str):
        raise PipslabError(f"render_mode must be None or a string such as 'ansi', got {excerpt(value)}")
    if value == "human" and value not in supported:
        raise PipslabError(f"{env_name} opens no window: render_mode='human' is not offered, use "
                           f"{' or '.join(map(repr, supported))} (gymnasium.make(ID, render_mode='human') shows "
                           "the rgb_array frames with Gymnasium's HumanRendering, which needs pygame)")
    if value is not None and value not in supported:
        warnings.warn(f"{env_name} renders only {', '.join(map(repr, supported))}: render_mode={value!r} "
                      "is not supported, render() will return None", UserWarning, stacklevel=4)
    return value


def reset_options(options, allowed: Iterable[str]) -> dict:
    """``reset``'s ``options``: None or a mapping with only the ``allowed`` keys; a
    ``position`` must be a non-empty string."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise PipslabError(f"reset options must be a dict (like {{'position': ...}}), got {excerpt(options)} "
                           f"({type(options).__name__})")
    allowed = tuple(allowed)
    unknown = [k for k in options if k not in allowed]
    if unknown:
        raise PipslabError(f"unknown reset option(s) {', '.join(excerpt(k) for k in unknown)}; "
                           f"this env takes {', '.join(allowed) or 'none'}")
    out = dict(options)
    if "position" in out and (not isinstance(out["position"], str) or not out["position"].strip()):
        raise PipslabError(f"reset option position must be a non-empty position string, got {excerpt(out['position'])}")
    return out


def require_reset(state: Optional[object], what: str) -> None:
    if state is None:
        raise PipslabError(f"call reset() before {what}")
