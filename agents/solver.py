"""Exact solver for 2-player domino positions with every hand open.

Perfect information: both hands and the boneyard order are known (in block mode the
boneyard is out of play).  Negamax with alpha-beta, a transposition table keyed on a
compact integer (both hands, the open ends as an unordered pair, the pass streak, the
boneyard position — from the side to move's point of view, so the table is shared by both
seats), and move ordering (the table's best move first, then moves that leave the opponent
nothing to play, then heavier tiles).

Values are from the side to move's point of view:

* ``objective="margin"`` (default): ``outcome * 1000 + margin``, where outcome is +1 / 0 / −1
  (win / draw / loss) and margin is the final count of the opponent's hand minus one's own
  (for a hand that went out: the loser's count).  Optimal play maximises the outcome first
  and the margin second.
* ``objective="wdl"``: just +1 / 0 / −1 (faster).

With ``max_depth`` the search stops after that many placements and scores the position
there with a heuristic (fewer tiles and pips in hand are better; :meth:`Solver._evaluate`,
the ``hand`` evaluator of :mod:`pipslab.agents.dominoes_value`), or — given ``evaluator``,
any domino evaluator of the seam (:mod:`pipslab.agents.evaluators`) — with that
evaluator's value for the side to move, times 1000, kept inside (−1000, 1000) so a proven
result always outranks it.  The evaluator sees the real state there: the search's line of
placements (and the draws and passes they force) replayed on the root state.

:func:`solve` returns the value of every legal move, the best ones and a principal line.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from pipslab.envs.dominoes.engine import DominoState
from pipslab.envs.dominoes.tiles import OTHER_HALF, PIPS, SUIT
from pipslab.envs.errors import PipslabError

BIG = 1000
INF = 10 ** 9
EXACT_DEPTH = 64  # more placements than a game can have: the search is exact
_EXACT, _LOWER, _UPPER = 0, 1, 2


def _count(hand: int, lone_blank: int) -> int:
    if hand == 1:
        return lone_blank
    total = 0
    while hand:
        low = hand & -hand
        total += PIPS[low.bit_length() - 1]
        hand ^= low
    return total


@dataclass
class SolveResult:
    value: int                      # from the side to move's point of view
    outcome: int                    # +1 win, 0 draw, -1 loss (side to move)
    margin: Optional[int]           # optimal final pip margin (None with objective="wdl")
    move_values: Dict[int, int]     # value of every legal action (side to move's view)
    best_actions: List[int]
    line: List[int] = field(default_factory=list)  # principal variation (action ids)
    nodes: int = 0
    seconds: float = 0.0


class Solver:
    """Reusable solver; its transposition table persists across calls on one variant."""

    def __init__(self, objective: str = "margin", max_table: int = 4_000_000,
                 max_depth: Optional[int] = None, evaluator=None):
        if objective not in ("margin", "wdl"):
            raise PipslabError(f"objective must be 'margin' or 'wdl', got {objective!r}")
        if max_depth is not None and (max_depth < 1 or objective != "margin"):
            raise PipslabError("max_depth must be at least 1 and needs objective='margin'")
        self.objective = objective
        self.max_depth = EXACT_DEPTH if max_depth is None else max_depth
        self.max_table = max_table
        self.table: Dict[int, Tuple[int, int, int]] = {}
        self.nodes = 0
        self._variant = None
        self.evaluator = evaluator   # scores the depth limit's positions (None: _evaluate)
        self._root: Optional[DominoState] = None
        self._path: Optional[List[int]] = None   # placements from _root (with an evaluator)

    # ------------------------------------------------------------------ setup
    def _prepare(self, state: DominoState) -> None:
        v = state.variant
        if v.players != 2 or v.n_ends != 2:
            raise PipslabError(f"the exact solver handles 2-player line games; {v.name} has "
                               f"{v.players} players")
        # block mode never draws, so the boneyard's order does not enter the key
        if self._variant is not v or (v.draw and self._boneyard != state.boneyard):
            self.table.clear()
        self._variant = v
        self._boneyard = state.boneyard
        self._draw = v.draw
        self._lone = v.lone_blank_double
        self._scale = BIG if self.objective == "margin" else 1
        if len(self.table) > self.max_table:
            self.table.clear()

    def _terminal_value(self, mine: int, theirs: int) -> int:
        diff = theirs - mine
        outcome = (diff > 0) - (diff < 0)
        return outcome * BIG + diff if self._scale == BIG else outcome

    # ------------------------------------------------------------------ search
    def _negamax(self, me: int, opp: int, left: int, right: int, passes: int, bpos: int,
                 alpha: int, beta: int, depth: int) -> int:
        """Value for the side to move, holding ``me``, against ``opp``; ends left|right.

        ``depth`` is the number of placements still searched; at 0 the evaluator scores
        the position (only with ``max_depth``; an exact solve never gets there)."""
        self.nodes += 1
        # draw mode: draw until a placement exists or the boneyard is empty
        ends_mask = SUIT[left] | SUIT[right]
        if self._draw:
            bone = self._boneyard
            while not me & ends_mask and bpos < len(bone):
                me |= 1 << bone[bpos]
                bpos += 1
        lo_end, hi_end = (left, right) if left <= right else (right, left)
        key = me | opp << 28 | lo_end << 56 | hi_end << 59 | passes << 62 | bpos << 64
        entry = self.table.get(key)
        tt_move = -1
        if entry is not None and entry[3] < depth:
            tt_move = entry[2]
            entry = None
        if entry is not None:
            value, flag, tt_move, _ = entry
            if flag == _EXACT:
                return value
            if flag == _LOWER:
                if value >= beta:
                    return value
                if value > alpha:
                    alpha = value
            elif value <= alpha:
                return value
            elif value < beta:
                beta = value
        playable = me & ends_mask
        if not playable:
            if passes + 1 >= 2:
                return self._terminal_value(_count(me, self._lone), _count(opp, self._lone))
            return -self._negamax(opp, me, left, right, passes + 1, bpos, -beta, -alpha, depth)
        if depth <= 0:
            return self._evaluate(me, opp) if self._path is None else self._leaf_value()
        # generate moves as (order key, code, new_left, new_right); code = tile*2 + end
        moves = []
        m = playable
        while m:
            low = m & -m
            t = low.bit_length() - 1
            m ^= low
            at_left = SUIT[left] & low
            if at_left:
                nl = OTHER_HALF[t][left]
                moves.append((t * 2, nl, right, t))
            if SUIT[right] & low:
                nr = OTHER_HALF[t][right]
                # the same tile at either end: one move when the ends come out the same
                if not (at_left and (nl, right) in ((left, nr), (nr, left))):
                    moves.append((t * 2 + 1, left, nr, t))
        if len(moves) > 1:
            def order(mv):
                code, nl, nr, t = mv
                return (code != tt_move, bool(opp & (SUIT[nl] | SUIT[nr])), -PIPS[t])
            moves.sort(key=order)
        alpha0 = alpha
        best = -INF
        best_code = moves[0][0]
        path = self._path
        for code, nl, nr, t in moves:
            rest = me & ~(1 << t)
            if not rest:
                value = self._scale * 1 + (_count(opp, self._lone) if self._scale == BIG else 0)
            elif path is None:
                value = -self._negamax(opp, rest, nl, nr, 0, bpos, -beta, -alpha, depth - 1)
            else:
                path.append(code)   # the code is the placement's action id
                value = -self._negamax(opp, rest, nl, nr, 0, bpos, -beta, -alpha, depth - 1)
                path.pop()
            if value > best:
                best, best_code = value, code
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if best <= alpha0:
            flag = _UPPER
        elif best >= beta:
            flag = _LOWER
        else:
            flag = _EXACT
        self.table[key] = (best, flag, best_code, depth)
        return best

    def _evaluate(self, me: int, opp: int) -> int:
        """Heuristic value of an unfinished position at the depth limit, inside (-BIG, BIG):
        fewer tiles and fewer pips in hand are better."""
        tiles = bin(opp).count("1") - bin(me).count("1")
        pips = _count(opp, self._lone) - _count(me, self._lone)
        if self._scale == BIG:
            return 20 * tiles + pips
        return 0

    def _leaf_value(self) -> int:
        """The evaluator's value, for the side to move, of the position the search's line
        reaches from the root (the draws and passes it forces replayed too), in solver
        units inside (-BIG, BIG)."""
        state = self._root.clone()
        for code in self._path:
            _forced(state)
            state.apply(code)
        _forced(state)
        v = float(self.evaluator.values([state], state.current_player)[0])
        return max(1 - BIG, min(BIG - 1, int(round(v * BIG))))

    def value(self, state: DominoState) -> int:
        """Exact value of ``state`` for its side to move (the state must not be terminal)."""
        self._prepare(state)
        return self._value(state)

    def _value(self, state: DominoState) -> int:
        if state.is_terminal:
            raise PipslabError("the position is already over")
        if state.left < 0:  # opening: try each legal opening tile
            best = -INF
            for a in state.legal_actions():
                child = state.clone()
                child.apply(a)
                best = max(best, self._child_value(state, child))
            return best
        p = state.current_player
        if self.evaluator is not None and self.max_depth < EXACT_DEPTH:
            self._root, self._path = state, []
        return self._negamax(state.hands[p], state.hands[1 - p], state.left, state.right,
                             state.passes, state.bpos, -INF, INF, self.max_depth)

    def _child_value(self, parent: DominoState, child: DominoState) -> int:
        """Value of ``child`` for the player who moved in ``parent``."""
        mover = parent.current_player
        if child.is_terminal:
            pips = child.pips_left()
            return self._terminal_value(pips[mover], pips[1 - mover])
        v = self._value(child)
        return v if child.current_player == mover else -v

    def move_values(self, state: DominoState) -> Dict[int, int]:
        """The exact value of every legal action, for the side to move."""
        self._prepare(state)
        out = {}
        for a in state.legal_actions():
            child = state.clone()
            child.apply(a)
            out[a] = self._child_value(state, child)
        return out

    def solve(self, state: DominoState, line_length: int = 60) -> SolveResult:
        start = time.perf_counter()
        self.nodes = 0
        values = self.move_values(state)
        best_value = max(values.values())
        best = [a for a, v in values.items() if v == best_value]
        line = []
        s = state.clone()
        while not s.is_terminal and len(line) < line_length:
            mv = self.move_values(s)
            top = max(mv.values())
            a = min(a for a, v in mv.items() if v == top)
            line.append(a)
            s.apply(a)
        if self.objective == "margin":
            outcome = (best_value > 0) - (best_value < 0)
            margin = best_value - outcome * BIG
        else:
            outcome, margin = best_value, None
        return SolveResult(best_value, outcome, margin, values, best, line, self.nodes,
                           time.perf_counter() - start)


def _forced(state: DominoState) -> None:
    """Play the draws and passes of ``state`` until a placement is legal or the game ends."""
    while not state.is_terminal:
        acts = state.legal_actions()
        if acts[0] < state.variant.draw_action:
            return
        state.apply(acts[0])


def solve(state: DominoState, objective: str = "margin") -> SolveResult:
    return Solver(objective).solve(state)
