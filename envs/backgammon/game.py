"""The backgammon game state: the protocol the tournament, the CLI and the env drive.

Seats: seat 0 is **X** and seat 1 is **O** in RULES §5's words.  The state keeps the
board from the side of the player on roll (:class:`~envs.backgammon.board.Position`) and
swaps it at the end of every turn.

Life of a game::

    state = new_game()                 # chance node: the opening roll
    while not state.is_terminal:
        if state.is_chance:
            state.apply_chance(rng)    # rng: numpy.random.Generator
        else:
            state.apply(choose(state.legal_actions()))
    state.returns()                    # [+-1|2|3, -+1|2|3]

Opening: each player rolls one die; the higher plays both numbers; ties roll again (all
inside one ``apply_chance``).  Later turns: the player on roll rolls two dice.

**Action encoding** (one checker move inside a turn; ``NUM_ACTIONS = 151``)::

    action = (from_point - 1) * 6 + (die - 1)     from_point 1..24, or 25 = the bar
    action = 150                                   PASS: no legal play this turn

``legal_actions()`` only offers checker moves that begin a legal whole play of the dice
left (both dice / the larger die / as many of a double as possible), so any sequence of
legal actions builds a legal whole play; the turn ends by itself when the play is
complete.  PASS is legal exactly when the player on roll cannot move at all.
Afterstate agents can instead use :meth:`BackgammonState.legal_plays` and
:meth:`BackgammonState.apply_play`.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from pipslab.envs.errors import IllegalActionError, PipslabError

from . import fast
from .board import BAR, CHECKERS, Position, render_position
from .moves import Play, check_dice, legal_checker_moves, legal_plays, max_dice

# The state lists checker moves and whole plays with the compiled generator when numba is
# there (same results as the pure-Python reference in ``moves``; tests compare them).
USE_COMPILED = fast.HAVE_NUMBA
_compiled_actions = fast.checker_actions


def _checker_actions(position, dice):
    """``(sorted legal action ids, dice a maximal play uses)``; no PASS."""
    if USE_COMPILED:
        return _compiled_actions(position, dice)
    need = max_dice(position, dice)
    return sorted((s - 1) * 6 + d - 1 for s, d in legal_checker_moves(position, dice, need)), need


def whole_plays(position, dice) -> List[Play]:
    """:func:`pipslab.envs.backgammon.moves.legal_plays` -- the same list of plays, in the
    same order -- from the compiled generator when numba is there."""
    if USE_COMPILED:
        return fast.legal_plays(position, dice)
    return legal_plays(position, dice)


_GENERATOR = np.random.Generator


def _two_dice(rng) -> Tuple[int, int]:
    """The numbers of ``rng.integers(1, 7, size=2)``.  For a numpy Generator two scalar
    draws give exactly those (numpy draws each bounded value on its own; a test checks
    it) at about half the cost; any other object is asked for the pair."""
    if type(rng) is _GENERATOR:
        return int(rng.integers(1, 7)), int(rng.integers(1, 7))
    a, b = rng.integers(1, 7, size=2)
    return int(a), int(b)


NUM_ACTIONS = 151
PASS = 150
SEAT_NAMES = ("X", "O")

# The one table of the 21 distinct rolls and their probabilities (doubles 1/36, others
# 2/36), used by the engine (``chance_outcomes``) and by search (agents.search_backgammon
# averages over it and samples from it).  A roll is ``(high, low)``; the order (1-1, 2-1,
# 2-2, 3-1, ...) is fixed: search draws a roll by its index here, so seeded records
# depend on it.
CHANCE_OUTCOMES: Tuple[Tuple[Tuple[int, int], float], ...] = tuple(
    ((a, b), (1 if a == b else 2) / 36) for a in range(1, 7) for b in range(1, a + 1))
ROLLS: Tuple[Tuple[int, int], ...] = tuple(roll for roll, _ in CHANCE_OUTCOMES)
ROLL_PROBABILITIES = np.array([p for _, p in CHANCE_OUTCOMES])
ROLL_PROBABILITIES.setflags(write=False)


def encode_action(from_point: int, die: int) -> int:
    """Action id of moving a checker from ``from_point`` (25 = bar) by ``die``."""
    if not (1 <= from_point <= 25 and 1 <= die <= 6):
        raise PipslabError(f"no action for a move from {from_point} by {die}")
    return (from_point - 1) * 6 + die - 1


def decode_action(action: int) -> Optional[Tuple[int, int]]:
    """``(from_point, die)`` of an action id, or ``None`` for PASS."""
    if action == PASS:
        return None
    if not 0 <= action < PASS:
        raise PipslabError(f"action {action} is outside 0..{PASS}")
    return action // 6 + 1, action % 6 + 1


def action_name(action: int) -> str:
    """Readable action: ``13/7``, ``bar/22``, ``3/off`` (d6), ``pass``."""
    move = decode_action(action)
    if move is None:
        return "pass"
    s, d = move
    a = "bar" if s == BAR else str(s)
    b = "off" if s - d <= 0 else str(s - d)
    return f"{a}/{b}" + (f" (d{d})" if s - d < 0 else "")


class BackgammonView:
    """What a seat sees (everything: backgammon is a perfect-information game).

    ``position`` is from the side of ``player`` (the observer: his checkers positive,
    moving from 24 toward 1); ``dice`` are the dice still to play this turn (larger
    first; empty at a chance node), ``roll`` the roll of this turn, ``turn_start`` the
    position at the start of the turn (from the same side), ``moves_left`` how many
    more checker moves the turn takes, ``opening`` whether the opening roll is next.
    :func:`sample_world` turns a view back into the (one) state it describes.
    """

    __slots__ = ("player", "current_player", "position", "dice", "roll", "turn_start",
                 "moves_left", "is_chance", "is_terminal", "gammons", "opening")

    def __init__(self, player, current_player, position, dice, roll, turn_start,
                 moves_left, is_chance, is_terminal, gammons, opening=False):
        self.player = player
        self.current_player = current_player
        self.position = position
        self.dice = dice
        self.roll = roll
        self.turn_start = turn_start
        self.moves_left = moves_left
        self.is_chance = is_chance
        self.is_terminal = is_terminal
        self.gammons = gammons
        self.opening = opening

    def legal_plays(self) -> List[Play]:
        """Every legal completion of this turn from ``position`` (observer on roll)."""
        return whole_plays(self.position, self.dice) if self.dice else []

    def __repr__(self) -> str:
        return (f"BackgammonView(player={self.player}, on_roll={self.current_player}, "
                f"position={self.position.id!r}, dice={self.dice})")


class BackgammonState:
    """A mutable backgammon game (see the module docstring for the protocol).

    Attributes: ``position`` (from the side of ``current_player``), ``current_player``
    (0 = X, 1 = O; at a chance node, the player about to roll), ``roll`` (this turn's
    roll, ``()`` at a chance node), ``dice`` (dice still to play), ``moves_left``,
    ``gammons`` (gammons and backgammons count), ``opening`` (the opening roll is next),
    ``is_terminal`` and ``is_chance`` (read them; the state keeps them).
    """

    __slots__ = ("position", "current_player", "roll", "dice", "moves_left", "gammons",
                 "opening", "turn_start", "_legal", "_winner", "history", "is_terminal",
                 "is_chance")

    num_actions = NUM_ACTIONS

    def __init__(self, position: Position = None, current_player: int = 0,
                 roll: Sequence[int] = (), gammons: bool = True, opening: bool = None):
        """Start from ``position`` (from the side of ``current_player``).  With a
        ``roll`` the player on roll is to play it; without, he is to roll (a chance
        node).  ``opening`` defaults to True for the start position without a roll."""
        self.position = Position.start() if position is None else position
        if not isinstance(self.position, Position):
            self.position = Position(self.position)
        if current_player not in (0, 1):
            raise PipslabError(f"current_player is 0 or 1, got {current_player!r}")
        self.current_player = current_player
        self.gammons = bool(gammons)
        self.history: list = []
        self._winner: Optional[int] = None
        self._legal = None
        if opening is None:
            opening = not roll and self.position == Position.start()
        self.opening = bool(opening) and not roll
        if self.position.borne_off == CHECKERS:          # a finished game
            self._winner = current_player
        elif self.position.opp_borne_off == CHECKERS:
            self._winner = 1 - current_player
        self._set_roll(tuple(roll) if roll else ())

    @classmethod
    def from_position_id(cls, position_id: str, dice: Sequence[int] = (), player: int = 0,
                         gammons: bool = True) -> "BackgammonState":
        """The state of a GNU BG Position ID (from the side of the player on roll, who
        sits in seat ``player``) with ``dice`` to play, or a chance node without dice."""
        if dice:
            check_dice(dice)
        return cls(Position.from_id(position_id), player, tuple(int(d) for d in dice),
                   gammons=gammons, opening=False)

    # ------------------------------------------------------------------ internals
    def _set_roll(self, roll: tuple) -> None:
        self.roll = roll
        self.is_terminal = terminal = self._winner is not None
        self.is_chance = not terminal and not roll
        self.turn_start = self.position
        if roll:
            a, b = roll
            self.dice = dice = (a, a, a, a) if a == b else (a, b) if a > b else (b, a)
            self._legal, self.moves_left = _checker_actions(self.position, dice)
        else:
            self._legal = None
            self.dice = ()
            self.moves_left = 0

    def _end_turn(self, done: bool = None) -> None:
        """End the turn: the game when the player on roll has borne off all his checkers
        (``done``; computed when not given), else the side swap to a chance node."""
        if done is None:
            done = self.position.borne_off == CHECKERS
        if done:
            self._winner = self.current_player
            self.is_terminal = True
            self.is_chance = False
            self.dice = ()
            self.moves_left = 0
            self._legal = None
            return
        self.position = self.turn_start = tuple.__new__(
            Position, [-v for v in self.position[::-1]])          # Position.swap, inline
        self.current_player = 1 - self.current_player
        self.roll = ()
        self.is_chance = True
        self._legal = None
        self.dice = ()
        self.moves_left = 0

    # ------------------------------------------------------------------ protocol
    # is_terminal (the game is over) and is_chance (the dice are to roll) are attributes,
    # kept by _set_roll and _end_turn: the protocol loop reads them at every step.

    def chance_outcomes(self) -> Tuple[Tuple[Tuple[int, int], float], ...]:
        """The 21 distinct rolls and their probabilities (not for the opening roll,
        whose outcomes are the 30 non-double ordered pairs, 1/30 each)."""
        if self.opening:
            return tuple(((a, b), 1 / 30) for a in range(1, 7) for b in range(1, 7) if a != b)
        return CHANCE_OUTCOMES

    def apply_chance(self, rng: np.random.Generator) -> Tuple[int, int]:
        """Roll the dice with ``rng``; returns the roll.  The opening roll: X and O roll
        one die each (again while they tie); the higher die plays first, both numbers."""
        if self._winner is not None or self.roll:
            raise IllegalActionError("apply_chance on a state that is not a chance node")
        if self.opening:
            while True:
                x, o = _two_dice(rng)
                if x != o:
                    break
            self.set_roll((x, o))
            return (x, o)
        if type(rng) is _GENERATOR:
            a, b = int(rng.integers(1, 7)), int(rng.integers(1, 7))    # as _two_dice
        else:
            a, b = _two_dice(rng)
        roll = (a, b)
        self.history.append(("roll", self.current_player, roll))
        # _set_roll(roll), inline
        self.roll = roll
        self.is_chance = False
        self.turn_start = position = self.position
        self.dice = dice = (a, a, a, a) if a == b else (a, b) if a > b else (b, a)
        self._legal, self.moves_left = _checker_actions(position, dice)
        return roll

    def set_roll(self, roll: Sequence[int]) -> None:
        """Apply a chosen chance outcome.  For the opening, ``roll`` is (X's die, O's
        die), which must differ; the higher one's seat goes first."""
        if not self.is_chance:
            raise IllegalActionError("set_roll on a state that is not a chance node")
        check_dice(roll)
        roll = (int(roll[0]), int(roll[1]))
        if self.opening:
            if roll[0] == roll[1]:
                raise PipslabError("the opening roll cannot be a tie (ties roll again)")
            first = 0 if roll[0] > roll[1] else 1
            if first != self.current_player:
                self.position = self.position.swap()
                self.current_player = first
            self.opening = False
        self.history.append(("roll", self.current_player, roll))
        self._set_roll(roll)

    def legal_actions(self) -> List[int]:
        """Legal action ids (sorted); ``[PASS]`` when nothing can move; ``[]`` only at a
        chance node or when the game is over."""
        if self._winner is not None or not self.roll:
            return []
        legal = self._legal
        if legal is None:
            self._legal = legal = _checker_actions(self.position, self.dice)[0]
        return list(legal) if legal else [PASS]

    def action_name(self, action: int) -> str:
        """Readable name of an action in this state (``13/7*`` marks a hit)."""
        move = decode_action(action)
        if move is None:
            return "pass"
        s, d = move
        hit = 1 <= s - d and self.position[s - d] == -1 and self.roll != ()
        return action_name(action).split(" ")[0] + ("*" if hit else "")

    def apply(self, action: int) -> None:
        """Make one checker move (or PASS); raises :class:`IllegalActionError`."""
        legal = self._legal
        if legal is None or self._winner is not None or not self.roll:
            legal = self.legal_actions()
        elif not legal:
            legal = [PASS]
        if action not in legal:
            names = ", ".join(f"{a} ({action_name(a)})" for a in legal)
            what = action_name(action) if isinstance(action, int) and 0 <= action <= PASS else "?"
            raise IllegalActionError(
                f"illegal action {action!r} ({what}); legal actions: {names or 'none (chance node or game over)'}")
        action = int(action)
        self.history.append(("action", self.current_player, action))
        if action == PASS:
            self._end_turn()
            return
        s, d = divmod(action, 6)
        s += 1
        d += 1
        b = list(self.position)
        b[s] -= 1                                    # apply_step, inline
        if s > d:
            if b[s - d] == -1:
                b[s - d] = 1
                b[0] -= 1
            else:
                b[s - d] += 1
        self.position = tuple.__new__(Position, b)                 # Position._trusted
        dice = self.dice
        self.dice = dice = dice[1:] if d == dice[0] else dice[:1]    # remove one die d
        self.moves_left = left = self.moves_left - 1
        done = s <= d and max(b[1:]) <= 0     # bore off the last checker (borne_off == 15)
        if done or left == 0:
            self._end_turn(done)
        elif left == 1:
            # One more move: a maximal play from here uses exactly one die (the turn's
            # maximum less the moves made), and the dice left are all the same (one die,
            # or a double's), so the mask is every legal move of that die.
            # This is moves.sources(b, e) as ascending action ids, inline.
            e = dice[0]
            e1 = e - 7                                   # action of s: 6 * s + e1
            if b[25] > 0:
                self._legal = [144 + e - 1] if b[25 - e] >= -1 else []
                return
            hi = 24
            while hi > 0 and b[hi] <= 0:
                hi -= 1
            legal = [6 * s + e1 for s in range(e + 1, hi + 1) if b[s] > 0 and b[s - e] >= -1]
            if 0 < hi <= 6:                              # all home: bearing off
                if e <= hi:
                    if b[e] > 0:
                        legal.insert(0, 6 * e + e1)
                else:
                    legal.insert(0, 6 * hi + e1)
            self._legal = legal
        else:
            self._legal = None

    def legal_plays(self) -> List[Play]:
        """Every distinct legal (rest of the) play of this turn, with its afterstate."""
        if self._winner is not None or not self.roll or self.moves_left == 0:
            return []
        return whole_plays(self.position, self.dice)

    def play_actions(self, play: Play) -> List[int]:
        """The action ids that make ``play`` checker by checker."""
        return [(s - 1) * 6 + d - 1 for s, d, _ in play.steps] or [PASS]

    def apply_play(self, play: Play) -> None:
        """Make a whole play (one of :meth:`legal_plays`; ``None`` or an empty play
        passes when nothing can move).  Checked against the legal plays' positions."""
        if play is None or not play.steps:
            self.apply(PASS)
            return
        if self._winner is not None or not self.roll:
            raise IllegalActionError("apply_play on a chance node or a finished game")
        if play.position not in {p.position for p in self.legal_plays()}:
            raise IllegalActionError(f"illegal play {play.notation}")
        self.history.append(("play", self.current_player, play.notation))
        self.position = play.position
        self.dice = ()
        self.moves_left = 0
        self._end_turn()

    @property
    def winner(self) -> Optional[int]:
        return self._winner

    def points(self) -> int:
        """Points the winner scores: 1, 2 (gammon) or 3 (backgammon); 0 while playing."""
        if self._winner is None:
            return 0
        p = self.position if self.current_player == self._winner else self.position.swap()
        if not self.gammons or p.opp_borne_off > 0:
            return 1
        # the loser bore off none: backgammon if he still has a checker on the bar or in
        # the winner's home board (points 1-6 from the winner's side)
        if p[0] < 0 or any(p[i] < 0 for i in range(1, 7)):
            return 3
        return 2

    def returns(self) -> List[float]:
        """``[seat 0, seat 1]``: +points to the winner, -points to the loser; zeros while
        the game is on."""
        if self._winner is None:
            return [0.0, 0.0]
        pts = float(self.points())
        return [pts, -pts] if self._winner == 0 else [-pts, pts]

    def pip_counts(self) -> List[int]:
        """Pip counts of seat 0 and seat 1."""
        p = self.position
        mine, theirs = p.pip_count(), p.opp_pip_count()
        return [mine, theirs] if self.current_player == 0 else [theirs, mine]

    def result(self) -> dict:
        pts = self.points()
        return {"winner": self._winner, "points": pts, "pips_left": self.pip_counts(),
                "gammon": pts >= 2, "backgammon": pts == 3}

    def position_from(self, player: int) -> Position:
        """The board from ``player``'s side."""
        return self.position if player == self.current_player else self.position.swap()

    def observe(self, player: int) -> BackgammonView:
        flip = player != self.current_player
        pos = self.position.swap() if flip else self.position
        start = self.turn_start.swap() if flip else self.turn_start
        return BackgammonView(player, self.current_player, pos, self.dice, self.roll, start,
                              self.moves_left, self.is_chance, self.is_terminal, self.gammons,
                              self.opening)

    def clone(self) -> "BackgammonState":
        new = BackgammonState.__new__(BackgammonState)
        new.position = self.position          # immutable
        new.current_player = self.current_player
        new.roll = self.roll
        new.dice = self.dice
        new.moves_left = self.moves_left
        new.gammons = self.gammons
        new.opening = self.opening
        new.turn_start = self.turn_start
        new._legal = self._legal              # never mutated in place
        new._winner = self._winner
        new.is_terminal = self.is_terminal
        new.is_chance = self.is_chance
        new.history = list(self.history)
        return new

    def render(self) -> str:
        """The board as text, from the side of seat 0 (X) at the bottom."""
        p = self.position_from(0)
        dice = self.roll if self.current_player == 0 else ()
        text = render_position(p, top_label="O", bottom_label="X", dice=dice)
        lines = text.split("\n")
        if self.is_terminal:
            r = self.result()
            kind = "backgammon" if r["backgammon"] else "gammon" if r["gammon"] else "single game"
            lines[-1] = f"  {SEAT_NAMES[r['winner']]} wins a {kind} ({r['points']} point(s))"
        elif self.is_chance:
            lines[-1] = ("  opening roll next" if self.opening
                         else f"  {SEAT_NAMES[self.current_player]} to roll")
        else:
            lines[-1] = (f"  {SEAT_NAMES[self.current_player]} on roll, rolled "
                         f"{self.roll[0]}-{self.roll[1]}, dice left {'-'.join(map(str, self.dice)) or 'none'}")
        lines.append(f"  Position ID {self.position.id} ({SEAT_NAMES[self.current_player]} on roll)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"BackgammonState({self.position.id!r}, player={self.current_player}, "
                f"roll={self.roll}, dice={self.dice})")


def game_stats(state: BackgammonState) -> dict:
    """Per-game record fields for a finished (or running) game: ``points``, ``gammon``,
    ``backgammon``, ``pips_left_0``/``pips_left_1`` and ``turns`` (rolls made)."""
    r = state.result()
    return {"points": r["points"], "gammon": r["gammon"], "backgammon": r["backgammon"],
            "pips_left_0": r["pips_left"][0], "pips_left_1": r["pips_left"][1],
            "turns": sum(1 for h in state.history if h[0] == "roll")}


def sample_world(view: BackgammonView, rng: np.random.Generator = None) -> BackgammonState:
    """The full state a view describes (backgammon hides nothing, so there is exactly
    one; ``rng`` is unused and accepted for the interface search agents share)."""
    flip = view.player != view.current_player
    state = BackgammonState.__new__(BackgammonState)
    state.position = view.position.swap() if flip else view.position
    state.turn_start = view.turn_start.swap() if flip else view.turn_start
    state.current_player = view.current_player
    state.roll = tuple(view.roll)
    state.dice = tuple(view.dice)
    state.moves_left = view.moves_left
    state.gammons = view.gammons
    state.opening = view.opening
    state._legal = None
    state._winner = None
    state.history = []
    if view.is_terminal:
        p = state.position
        state._winner = state.current_player if p.borne_off == CHECKERS else 1 - state.current_player
    state.is_terminal = state._winner is not None
    state.is_chance = state._winner is None and not state.roll
    return state


def new_game(rng: np.random.Generator = None, gammons: bool = True) -> BackgammonState:
    """A new game at the start position.  With ``rng`` the opening roll is made at once
    (the state is then the first player's decision); without, the state is a chance node."""
    state = BackgammonState(Position.start(), 0, gammons=gammons, opening=True)
    if rng is not None:
        state.apply_chance(rng)
    return state


def play_uniformly(state: BackgammonState, rng: np.random.Generator) -> BackgammonState:
    """Play ``state`` to the end in place: dice from ``rng`` at chance nodes, and at every
    decision a checker move drawn uniformly from the legal ones (with the same ``rng``).
    Returns the state.  The uniformly random game of the benchmark and the tests."""
    while not state.is_terminal:
        if state.is_chance:
            state.apply_chance(rng)
        else:
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    return state
