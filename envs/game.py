"""What a game is: the one typed definition every other layer derives from.

A :class:`Game` says everything the harness, the CLI, the agents' registry and the
adapters (Gymnasium, PettingZoo, OpenSpiel) need to know about a game, without any of them
naming it:

* its **name** and **options** — each an :class:`Option` with a type, a default and the
  values it allows; :meth:`Game.resolve` checks a dict of options (unknown names refused)
  and fills in the defaults;
* its **seats and teams** for those options, the **utility bounds** (no seat's return is
  outside them; the worst is what an illegal action costs), the **utility sum** (zero-sum
  games: 0) and a **bound on a game's length**;
* a **new state** from a random generator (or from a position string, when the game has
  a notation: the ``position`` option), and how to **format** a state as a position;
* how to **render** a state as text and **name** an action; the **number of actions**;
* the **observation encoder** of a seat's view (rules side: every adapter reads it);
* the :class:`Outcome` of a finished state: who won (a seat, a team, or a draw), every
  seat's return, points and pips left, and the game's own named columns (``blocked``,
  ``gammon``, ``penalties_0`` …);
* the **info** every adapter gives: the result fields, the game's **info columns** (those
  outcome columns with their types and "not over" defaults) and its **live info** (public
  facts of the game on: scores, dice) — :meth:`Game.info`;
* for the Gymnasium road: the id, deprecated old ids, and an optional **env mixin**
  (``"module:Class"``: game-specific env methods such as backgammon's ``afterstates()``).

``GAMES`` is the registry: name -> :class:`Game`.  The built-in games register themselves
from their own modules (:mod:`pipslab.envs.dominoes.games`,
:mod:`pipslab.envs.backgammon.games`) when :mod:`pipslab.envs` is imported; any other
module can add one with :func:`register_game` (``pipslab tournament GAME --import MODULE``
then finds it, and it gets a Gym id, a PettingZoo env and, with enumerable chance, an
OpenSpiel game).

:class:`State` and :class:`View` are the protocols the engines satisfy and the one game
loop, the search agents and the adapters read.

This is a rules module: numpy only, nothing of gymnasium, torch, pandas, matplotlib, the
agents or the experiments.
"""
from __future__ import annotations

import importlib
import numbers
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union,
                    runtime_checkable)

import numpy as np

from .errors import PipslabError, excerpt

__all__ = ["Option", "Outcome", "Encoder", "Game", "State", "View", "GAMES", "register_game", "get_game",
           "outcome_from_returns", "lazy"]


# ------------------------------------------------------------------ protocols
@runtime_checkable
class View(Protocol):
    """What one seat may see of a state (``state.observe(seat)``).  Engines add their own
    fields (hand, open ends, board …); the protocol asks only whose view it is."""

    player: int


@runtime_checkable
class State(Protocol):
    """A game state as the game loop, search and the generic env drive it.

    Chance is explicit: while ``is_chance`` the next step is ``apply_chance(rng)`` (dice, a
    deal) instead of a seat's action.  ``returns()`` is zero until the end.  ``clone`` is
    cheap (no deepcopy)."""

    @property
    def is_terminal(self) -> bool: ...

    @property
    def is_chance(self) -> bool: ...

    @property
    def current_player(self) -> int: ...

    @property
    def num_actions(self) -> int: ...

    def legal_actions(self) -> Sequence[int]: ...

    def apply(self, action: int) -> Any: ...

    def apply_chance(self, rng: np.random.Generator) -> Any: ...

    def observe(self, player: int) -> Any: ...

    def returns(self) -> Sequence[float]: ...

    def clone(self) -> "State": ...


# ------------------------------------------------------------------ options
_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")
_TYPE_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "text"}


@dataclass(frozen=True)
class Option:
    """One option of a game.

    ``type`` is ``bool``, ``int``, ``float`` or ``str``; ``choices`` lists the allowed
    values, ``low``/``high`` bound a number (inclusive).  ``default=None`` means "not set".
    ``always``: the option is written into every run's options (records, ``run.json``) with
    its default when not given (Happy's ``mode``); the others are recorded only when given.
    ``flag``: the CLI (``pipslab play/tournament``) has ``--NAME`` for it; every option can
    also be given as ``--option NAME=VALUE``."""

    name: str
    type: type = str
    default: Any = None
    choices: Optional[Tuple[Any, ...]] = None
    low: Optional[float] = None
    high: Optional[float] = None
    help: str = ""
    always: bool = False
    flag: bool = False

    def validate(self, value: Any) -> Any:
        """The value as ``type`` (``"3"`` -> 3, ``"false"`` -> False); a
        :class:`PipslabError` naming the option when it is not allowed."""
        if value is None:
            return None
        what = f"option {self.name}={excerpt(value)}"
        t = self.type
        if t is bool:
            if isinstance(value, (bool, np.bool_)):
                out = bool(value)
            elif isinstance(value, numbers.Integral) and value in (0, 1):
                out = bool(value)
            elif isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
                out = value.strip().lower() in _TRUE
            else:
                raise PipslabError(f"{what}: expected true or false")
        elif t is int:
            try:
                out = int(value)
                if isinstance(value, float) and out != value or isinstance(value, (bool, np.bool_)):
                    raise ValueError
            except (TypeError, ValueError):
                raise PipslabError(f"{what} is not a whole number") from None
        elif t is float:
            try:
                out = float(value)
            except (TypeError, ValueError):
                raise PipslabError(f"{what} is not a number") from None
        else:
            out = value if isinstance(value, t) else t(value)
        if self.choices is not None and out not in self.choices:
            raise PipslabError(f"{what}: expected {' or '.join(map(repr, self.choices))}")
        if self.low is not None and out < self.low or self.high is not None and out > self.high:
            raise PipslabError(f"{what}: expected {self.low}..{self.high}")
        return out

    def check_type(self, value: Any) -> Any:
        """``value`` when it already has the option's Python type (a keyword argument of an
        env: ``players=4``, not ``"4"``; ``pairs=True``, not ``"no"``); None passes (not
        set).  Else one line naming the option and the type it takes."""
        if value is None:
            return value
        t = self.type
        if t is bool:
            ok = isinstance(value, (bool, np.bool_))
        elif t is int:
            ok = isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
        elif t is float:
            ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
        else:
            ok = isinstance(value, t)
        if not ok:
            raise PipslabError(f"option {self.name}={excerpt(value)} ({type(value).__name__}): "
                               f"expected {_TYPE_NAMES.get(t, t.__name__)}")
        return value

    def describe(self) -> str:
        """One line for ``--help``: the help text, the allowed values, the default."""
        parts = [self.help or self.name]
        if self.choices is not None:
            parts.append("|".join(map(str, self.choices)))
        elif self.low is not None or self.high is not None:
            parts.append(f"{self.low}..{self.high}")
        if self.default is not None:
            parts.append(f"default {str(self.default).lower() if self.type is bool else self.default}")
        return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


POSITION = Option("position", str, help="start from this position string instead of a fresh deal")


# ------------------------------------------------------------------ outcome
@dataclass
class Outcome:
    """How a finished game ended, per seat.

    ``winners``: the seats that won (partners alike; several seats can share a win).
    ``winner``: the seat, when exactly one seat won; ``team``: the winning team (index in
    :meth:`Game.teams`), when the winners are one team; ``draw``: nobody won.  ``returns``,
    ``points`` and ``pips_left`` are per seat (``pips_left`` None in games without pips).
    ``extra``: the game's own named columns in the order they are recorded (``blocked``,
    ``gammon``, ``penalties_0`` …)."""

    returns: Tuple[float, ...]
    winners: Tuple[int, ...] = ()
    winner: Optional[int] = None
    team: Optional[int] = None
    draw: bool = False
    points: Optional[Tuple[Any, ...]] = None
    pips_left: Optional[Tuple[Any, ...]] = None
    extra: Dict[str, Any] = field(default_factory=dict)


def outcome_from_returns(returns: Sequence[float], teams: Sequence[int], points: Optional[Sequence] = None,
                         pips_left: Optional[Sequence] = None, extra: Optional[Dict[str, Any]] = None) -> Outcome:
    """The :class:`Outcome` whose winners are the seats of the team(s) with the best return
    (nobody when every team has the same), ``points`` defaulting to the returns."""
    returns = tuple(returns)
    points = returns if points is None else tuple(points)
    pips_left = None if pips_left is None else tuple(pips_left)
    extra = {} if extra is None else extra
    if len(returns) == 2 and teams[0] != teams[1]:   # the common case, inline
        r0, r1 = returns
        if r0 == r1:
            return Outcome(returns, (), None, None, True, points, pips_left, extra)
        w = 0 if r0 > r1 else 1
        return Outcome(returns, (w,), w, teams[w], False, points, pips_left, extra)
    by_team: Dict[int, float] = {}
    for seat, t in enumerate(teams):
        by_team.setdefault(t, returns[seat])
    best, worst = max(by_team.values()), min(by_team.values())
    winners = () if best == worst else tuple(s for s, t in enumerate(teams) if by_team[t] == best)
    won_teams = {teams[s] for s in winners}
    return Outcome(returns, winners, winners[0] if len(winners) == 1 else None,
                   next(iter(won_teams)) if len(won_teams) == 1 else None, not winners, points, pips_left, extra)


# ------------------------------------------------------------------ the definition
def lazy(ref: str) -> Callable:
    """A callable standing for ``"package.module:name"``, imported on its first call.  Lets a
    rules module name a function of a module it must not import at load time (a heavy
    one, or an adapter module)."""
    target: List[Callable] = []

    def call(*args, **kwargs):
        if not target:
            module, _, name = ref.partition(":")
            obj = importlib.import_module(module)
            for part in name.split("."):
                obj = getattr(obj, part)
            target.append(obj)
        return target[0](*args, **kwargs)

    call.__qualname__ = call.__name__ = f"lazy({ref})"
    call.ref = ref
    return call


@dataclass(frozen=True)
class Encoder:
    """A seat's observation: ``encode(view) -> float32[size]`` with values in ``[low, high]``.

    ``layout``: where the vector keeps the game's structure, for nets built on it (the
    domino encoders' :class:`~pipslab.envs.dominoes.encoding.TileLayout`); None where a
    net can only read the vector whole."""

    size: int
    encode: Callable[[Any], np.ndarray]
    low: float = 0.0
    high: float = 1.0
    layout: Any = None


def _action_name(state, action: int) -> str:
    name = getattr(state, "action_name", None)
    return name(action) if callable(name) else str(action)


IntOrFn = Union[int, Callable[[Mapping[str, Any]], int]]


def _call(value, options):
    return value(options) if callable(value) else value


Bounds = Union[Tuple[float, float], Callable[[Mapping[str, Any]], Tuple[float, float]]]


@dataclass(frozen=True, eq=False)
class Game:
    """A game's definition (see the module docstring).

    The callables that take options get them resolved (:meth:`resolve`: every option
    present, validated, defaults filled in); the public methods resolve first, so callers
    pass the options as the user gave them.

    ``make_state(rng, options)`` deals a new game from ``rng`` (a ``numpy`` Generator).
    ``parse_position(text, options, rng)`` builds a state from a position string (and checks
    it is one of this game with these options); with it the game takes the ``position``
    option.  ``outcome(state)`` describes a finished state.  ``seats``, ``num_actions`` are
    numbers or functions of the options; ``teams(options)`` maps seat -> team (default:
    one team per seat).  ``check(options)`` checks the options together (``pairs`` needs 4
    ``players``).  ``label(options)`` names the variant (``happy-block``); default: the name.
    ``encoder(options)`` gives the seats' :class:`Encoder`.  ``family`` groups games that
    share agents (``"dominoes"``).

    What the adapters read besides: ``utility`` — ``(min, max)`` bounds of every seat's
    return, or a function of the options giving them (default ``(-1, 1)``); the minimum is
    what an illegal action costs on every road.  ``utility_sum`` — the seats' returns
    always add up to it (0: zero-sum; None: not constant-sum).  ``max_length`` — a bound on
    the steps of one game from ``make_state`` (seat actions and chance outcomes), a number
    or a function of the options; 0: no bound known.  ``info_columns(options)`` — the
    outcome's numeric columns that ``info`` carries (``Outcome.extra`` keys), each with its
    "not over" default, whose type is the column's type.  ``live_info(state, seat)`` — the
    public facts of a game on as ``seat`` may see them (flat numbers and strings, the same
    keys on every step).  ``perfect_information`` — nothing is hidden (OpenSpiel's game
    type).  ``env_id`` — the Gymnasium id (every registered game gets one: this, or
    ``pipslab/<name>-v0``); ``env_aliases`` — older ids of it, kept as deprecated aliases
    that warn; ``env_mixin`` — ``"module:Class"``, a mixin of game-specific methods the
    one Gymnasium class composes in (backgammon's ``afterstates()``).  ``solver(options)``
    — None when the exact domino solver (:mod:`pipslab.agents.solver`) plays the game with
    these options, else one line saying why not (no ``solver``: it plays none of it); ask
    :meth:`solver_support`.  ``phase(state)`` — the stage of the game the player to move
    is in, named in the game's own words from what that player sees (dominoes: how full
    the boneyard is; backgammon: contact, race, bear-off), so an analysis can say where
    an agent's losses lie; ask :meth:`phase_of` (no ``phase``: one phase, ``"game"``);
    ``phase_names(options)`` — every phase it can return, in the order of play, so a
    setting that names phases is checked before a run (ask :meth:`phases_of`)."""

    name: str
    make_state: Callable[[Optional[np.random.Generator], Mapping[str, Any]], Any]
    outcome: Callable[[Any], Outcome]
    options_spec: Tuple[Option, ...] = ()
    seats: IntOrFn = 2
    team_of: Optional[Callable[[Mapping[str, Any]], Tuple[int, ...]]] = None
    num_actions: IntOrFn = 0
    check: Optional[Callable[[Mapping[str, Any]], None]] = None
    label: Optional[Callable[[Mapping[str, Any]], str]] = None
    parse_position: Optional[Callable[[str, Mapping[str, Any], Any], Any]] = None
    format_position: Optional[Callable[[Any], str]] = None
    render: Callable[[Any], str] = repr
    action_name: Callable[[Any, int], str] = _action_name
    encoder: Optional[Callable[[Mapping[str, Any]], Encoder]] = None
    family: str = ""
    env_id: Optional[str] = None
    description: str = ""
    utility: Bounds = (-1.0, 1.0)
    utility_sum: Optional[float] = None
    max_length: IntOrFn = 0
    info_columns: Optional[Callable[[Mapping[str, Any]], Dict[str, Any]]] = None
    live_info: Optional[Callable[[Any, int], Dict[str, Any]]] = None
    perfect_information: bool = False
    env_aliases: Tuple[str, ...] = ()
    env_mixin: Optional[str] = None
    solver: Optional[Callable[[Mapping[str, Any]], Optional[str]]] = None
    phase: Optional[Callable[[Any], str]] = None
    phase_names: Optional[Callable[[Mapping[str, Any]], Tuple[str, ...]]] = None

    def __post_init__(self):
        opts = tuple(self.options_spec)
        if self.parse_position is not None and all(o.name != "position" for o in opts):
            opts = opts + (POSITION,)
        names = [o.name for o in opts]
        if len(set(names)) != len(names):
            raise PipslabError(f"game {self.name!r}: an option is given twice in {names}")
        if (self.phase is None) != (self.phase_names is None):
            raise PipslabError(f"game {self.name!r}: phase and phase_names come together (a phase it can name)")
        object.__setattr__(self, "options_spec", opts)
        object.__setattr__(self, "_by_name", {o.name: o for o in opts})
        object.__setattr__(self, "_resolved", {})

    def __reduce_ex__(self, protocol):
        # a registered game pickles (and deep-copies) as its name in the registry: an env
        # holding it pickles; unpickling imports pipslab.envs, which registers the built-ins
        if GAMES.get(self.name) is self:
            return get_game, (self.name,)
        return super().__reduce_ex__(protocol)

    # ------------------------------------------------------------------ options
    @property
    def option_names(self) -> Tuple[str, ...]:
        return tuple(o.name for o in self.options_spec)

    def option(self, name: str) -> Option:
        try:
            return self._by_name[name]
        except KeyError:
            known = ", ".join(self.option_names) or "none"
            raise PipslabError(f"{self.name} has no option {excerpt(name)} (its options: {known})") from None

    def resolve(self, options: Optional[Mapping[str, Any]] = None, strict: bool = False) -> Dict[str, Any]:
        """Every option of the game, validated, defaults filled in.  Unknown names are
        refused with one line naming them.  ``strict``: each given value must already have
        its option's Python type (:meth:`Option.check_type`; the adapters' keyword
        arguments), not a string to convert as the CLI gives it.  (Cached per distinct
        options: the game loop calls this once a game.)"""
        options = options or {}
        if strict:
            for name, value in options.items():
                self.option(name).check_type(value)
        try:
            key = tuple(sorted(options.items()))
            hit = self._resolved.get(key)
        except TypeError:   # unhashable values: no cache
            key, hit = None, None
        if hit is not None:
            return dict(hit)
        out = {}
        for name, value in options.items():
            out[name] = self.option(name).validate(value)
        for o in self.options_spec:
            if out.get(o.name) is None:
                out[o.name] = o.default
        if self.check is not None:
            self.check(out)
        if key is not None and len(self._resolved) < 256:
            self._resolved[key] = dict(out)
        return out

    def options_for(self, given: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """The options as a run records them: the ``always`` options (with their defaults
        when not given), then the given ones as given."""
        out = {o.name: o.default for o in self.options_spec if o.always}
        out.update(given or {})
        return out

    # ------------------------------------------------------------------ seats
    def players(self, options: Optional[Mapping[str, Any]] = None) -> int:
        return int(_call(self.seats, self.resolve(options)))

    def teams(self, options: Optional[Mapping[str, Any]] = None) -> Tuple[int, ...]:
        """seat -> team; partners share one (default: one team per seat)."""
        opts = self.resolve(options)
        if self.team_of is None:
            return tuple(range(int(_call(self.seats, opts))))
        return tuple(self.team_of(opts))

    def actions(self, options: Optional[Mapping[str, Any]] = None) -> int:
        """The number of action ids (the action space's size)."""
        return int(_call(self.num_actions, self.resolve(options)))

    def variant_label(self, options: Optional[Mapping[str, Any]] = None) -> str:
        opts = self.resolve(options)
        return self.label(opts) if self.label is not None else self.name

    def solver_support(self, options: Optional[Mapping[str, Any]] = None) -> Optional[str]:
        """None when the exact solver can play this game with ``options`` (layout, sides,
        match play, scoring rule: what the game's ``solver`` checks), else one refusal line
        (``"no exact solver for …: …"``)."""
        opts = self.resolve(options)
        if self.solver is None:
            return f"no exact solver for {self.variant_label(opts)}: the solver plays domino hands of two sides"
        return self.solver(opts)

    # ------------------------------------------------------------------ states
    def phase_of(self, state) -> str:
        """The phase ``state``'s player to move is in (``phase``), ``"game"`` for a game
        that names none."""
        return "game" if self.phase is None else str(self.phase(state))

    def phases_of(self, options: Optional[Mapping[str, Any]] = None) -> Tuple[str, ...]:
        """Every phase :meth:`phase_of` names in a game with these options, in the order
        of play (``("game",)`` for a game that names none)."""
        if self.phase is None:
            return ("game",)
        return tuple(self.phase_names(self.resolve(options or {})))

    def check_phases(self, names, options: Optional[Mapping[str, Any]] = None) -> None:
        """Every name a phase of the game with these options (:meth:`phases_of`), or one
        line naming the others and listing its phases."""
        known = self.phases_of(options)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise PipslabError(f"{', '.join(map(repr, unknown))} is not a phase of "
                               f"{self.variant_label(options or {})}; its phases: {', '.join(known)}")

    def new_state(self, rng, options: Optional[Mapping[str, Any]] = None):
        """A new game dealt from ``rng`` (a Generator, or a seed for one) — or, with the
        ``position`` option, that position."""
        if rng is not None and not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        opts = self.resolve(options)
        position = opts.get("position")
        if position:
            return self.parse_position(position, opts, rng)
        return self.make_state(rng, opts)

    def parse(self, text: str, options: Optional[Mapping[str, Any]] = None, rng=None):
        if self.parse_position is None:
            raise PipslabError(f"{self.name} has no position notation")
        return self.parse_position(text, self.resolve(options), rng)

    def format(self, state) -> str:
        if self.format_position is None:
            raise PipslabError(f"{self.name} has no position notation")
        return self.format_position(state)

    def observation_encoder(self, options: Optional[Mapping[str, Any]] = None) -> Encoder:
        if self.encoder is None:
            raise PipslabError(f"{self.name} defines no observation encoder")
        return self.encoder(self.resolve(options))

    # ------------------------------------------------------------------ what adapters read
    def utility_bounds(self, options: Optional[Mapping[str, Any]] = None) -> Tuple[float, float]:
        """``(min, max)``: no seat's return is outside them; ``min`` is the price of an
        illegal action (``illegal_action="lose"``, PettingZoo's ``illegal_reward``)."""
        lo, hi = _call(self.utility, self.resolve(options))
        return float(lo), float(hi)

    def max_game_length(self, options: Optional[Mapping[str, Any]] = None) -> int:
        """A bound on the steps (seat actions and chance outcomes) of one game; 0: unknown."""
        return int(_call(self.max_length, self.resolve(options)))

    def player_range(self) -> Tuple[int, int]:
        """The fewest and the most seats over the game's options (each finite option tried
        alone, the others at their defaults; combinations its ``check`` refuses skipped)."""
        counts = {self.players()}
        for o in self.options_spec:
            if o.type is bool:
                values = (False, True)
            elif o.choices is not None:
                values = o.choices
            elif o.type is int and o.low is not None and o.high is not None and o.high - o.low <= 16:
                values = range(int(o.low), int(o.high) + 1)
            else:
                continue
            for value in values:
                try:
                    counts.add(self.players({o.name: value}))
                except PipslabError:
                    pass
        return min(counts), max(counts)

    def info_defaults(self, options: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """The result fields of ``info`` while the game is on, then the game's info columns:
        ``winner`` and ``winning_team`` −1, ``draw`` False, ``points_<s>`` 0.0,
        ``pips_left_<s>`` −1, each column at its "not over" default.  Their keys and types
        are those of every step."""
        opts = self.resolve(options)
        n = self.players(opts)
        out: Dict[str, Any] = {"winner": -1, "winning_team": -1, "draw": False}
        out.update((f"points_{seat}", 0.0) for seat in range(n))
        out.update((f"pips_left_{seat}", -1) for seat in range(n))
        if self.info_columns is not None:
            out.update(self.info_columns(opts))
        return out

    def end_info(self, state, options: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """The result fields and info columns of a finished state, cast to the types of
        :meth:`info_defaults`."""
        opts = self.resolve(options)
        o = self.outcome(state)
        out: Dict[str, Any] = {"winner": -1 if o.winner is None else int(o.winner),
                               "winning_team": -1 if o.team is None else int(o.team), "draw": bool(o.draw)}
        for seat in range(self.players(opts)):
            if o.points is not None:
                out[f"points_{seat}"] = float(o.points[seat])
            if o.pips_left is not None:
                out[f"pips_left_{seat}"] = int(o.pips_left[seat])
        if self.info_columns is not None:
            for key, default in self.info_columns(opts).items():
                out[key] = type(default)(o.extra[key])
        return out

    def seat_info(self, state, seat: int) -> Dict[str, Any]:
        """The live public info of ``state`` as ``seat`` may see it (``live_info``; {} when
        the game has none)."""
        return {} if self.live_info is None else dict(self.live_info(state, seat))

    def info(self, state, seat: int, options: Optional[Mapping[str, Any]] = None,
             defaults: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Every road's ``info`` of ``seat`` (without the adapter's own keys: masks, legal
        actions): :meth:`info_defaults` (or ``defaults``, the same dict cached), then
        :meth:`seat_info`, then at the end :meth:`end_info`."""
        out = dict(self.info_defaults(options) if defaults is None else defaults)
        out.update(self.seat_info(state, seat))
        if state.is_terminal:
            out.update(self.end_info(state, options))
        return out

    def gym_id(self) -> str:
        """The Gymnasium id: ``env_id``, or ``pipslab/<name>-v0``."""
        return self.env_id or f"pipslab/{self.name}-v0"


# ------------------------------------------------------------------ registry
class GameRegistry(dict):
    """name -> :class:`Game`.  :meth:`register` adds one and tells the listeners (the
    Gymnasium id registration in :mod:`pipslab.envs`)."""

    def __init__(self):
        super().__init__()
        self._listeners: List[Callable[[Game], None]] = []

    def register(self, game: Game, replace: bool = False) -> Game:
        if not isinstance(game, Game):
            raise PipslabError(f"register_game takes a Game, got {type(game).__name__}")
        old = self.get(game.name)
        if old is not None and old is not game and not replace:
            raise PipslabError(f"a game named {game.name!r} is already registered")
        self[game.name] = game
        for listener in self._listeners:
            listener(game)
        return game

    def on_register(self, listener: Callable[[Game], None]) -> None:
        """Call ``listener(game)`` for every game registered so far and from now on."""
        self._listeners.append(listener)
        for game in list(self.values()):
            if isinstance(game, Game):
                listener(game)

    def family(self, family: str) -> List[str]:
        """The names of the registered games of a family, in registration order."""
        return [n for n, g in self.items() if getattr(g, "family", "") == family]

    def flag_options(self) -> Dict[str, List[Tuple[str, Option]]]:
        """Option name -> ``[(game, option), …]`` over every game with ``--NAME`` flags."""
        out: Dict[str, List[Tuple[str, Option]]] = {}
        for name, game in self.items():
            for o in getattr(game, "options_spec", ()):
                if o.flag:
                    out.setdefault(o.name, []).append((name, o))
        return out


GAMES = GameRegistry()


def register_game(game: Game, replace: bool = False) -> Game:
    """Add ``game`` to :data:`GAMES` (``replace`` a game of the same name)."""
    return GAMES.register(game, replace=replace)


def get_game(name: str) -> Game:
    """The game registered as ``name``, or one line naming the known games: the one way to
    look up a game by a name a user gave."""
    try:
        return GAMES[name]
    except (KeyError, TypeError):   # TypeError: an unhashable "name"
        raise PipslabError(f"unknown game {excerpt(name)}; known: {', '.join(sorted(GAMES))}") from None
