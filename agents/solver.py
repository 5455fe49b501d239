"""Exact solver for two-sided domino line games with every hand open.

Two-sided: 2 players (Happy block and draw, Troshin for two), or Troshin's 4 players in
two pairs (partners opposite: seats 0+2 against 1+3).  In pairs the seats play in turn
0, 1, 2, 3, so the side to move changes at every turn, exactly as with two players: the
same negamax searches both, with the four hands held from the mover's seat round the
table (mover, next, partner, previous).  Three players, or four each for themselves, are
refused: that game is not zero-sum between two sides, and a paranoid search (everybody
against the mover) or a max-n search (each seat for itself, ties broken somehow) would
answer a different question than "what is this position worth with best play".

Perfect information: every hand and the boneyard order are known (in block mode the
boneyard is out of play).  Negamax with alpha-beta, a transposition table keyed on every
hand, the open ends as an unordered pair, the pass streak and the boneyard position —
from the side to move's point of view, so the table is shared by all seats —, and move
ordering (the table's best move first, then moves that leave the next seat nothing to
play, then heavier tiles).

Values are from the side to move's point of view (with pairs: the mover's pair):

* ``objective="margin"`` (default): ``outcome * 1000 + margin``, where outcome is +1 / 0 / −1
  (win / draw / loss) and margin is the final count of the other side's hands minus the
  mover's side's (RULES §3: a lone 0-0 counts as the variant says; pair totals in pairs);
  when a hand went out, the losing side's count (a partner's tiles count for nobody).
  That is ``team_points()`` of Troshin's scoring, signed: optimal play maximises the
  outcome first and the margin second.
* ``objective="wdl"``: just +1 / 0 / −1 (faster).

With ``max_depth`` the search stops after that many placements and scores the position
there with a heuristic (fewer tiles and pips in hand are better; :meth:`Solver._evaluate`,
the ``hand`` evaluator of :mod:`pipslab.agents.dominoes_value`), or — given ``evaluator``,
any domino evaluator of the seam (:mod:`pipslab.agents.evaluators`) — with that
evaluator's value for the side to move, times 1000, kept inside (−1000, 1000) so a proven
result always outranks it.  The evaluator sees the real state there: the search's line of
placements (and the draws and passes they force) replayed on the root state.  The value
is the depth-limited minimax value, whatever the table holds: an entry the table got at
another depth only orders the moves (its value is another function's).

The search is compiled (:mod:`pipslab.agents.solver_compiled`, numba) unless an evaluator
scores the leaves — it needs the real state, which only the Python search rebuilds — or
``compiled=False`` asks for the Python search, the reference the compiled one is tested
against (same values for every legal move; the node counts differ with the tables).

:func:`solve` returns the value of every legal move, the best ones and a principal line.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from pipslab.envs.dominoes.engine import DominoState
from pipslab.envs.dominoes.tiles import OTHER_HALF, PIPS, SUIT
from pipslab.envs.errors import PipslabError

from . import solver_compiled as _k

BIG = 1000
INF = 10 ** 9
EXACT_DEPTH = 64  # more placements than a game can have: the search is exact
_EXACT, _LOWER, _UPPER = 0, 1, 2
_FIRST_TABLE = 1 << 14   # rows of a new compiled table; it grows 4x when 3/4 full, up to max_table


def _count(hand: int, lone_blank: int) -> int:
    if hand == 1:
        return lone_blank
    total = 0
    while hand:
        low = hand & -hand
        total += PIPS[low.bit_length() - 1]
        hand ^= low
    return total


def check_solvable(variant) -> None:
    """Raise :class:`PipslabError` unless the solver plays ``variant``: a line game with
    two sides (2 players, or 4 in pairs)."""
    if variant.layout != "line" or variant.n_ends != 2:
        raise PipslabError(f"no exact solver for {variant.name}: the solver handles line games (Happy, "
                           f"Troshin), not a {variant.layout}")
    if variant.players != 2 and not variant.pairs:
        raise PipslabError(
            f"no exact solver for {variant.name}: {variant.players} players each for themselves are not two "
            "sides (2 players, or 4 in pairs), so the game is not zero-sum between two sides (a paranoid or "
            "max-n search would answer another question)")


class SearchStopped(Exception):
    """The compiled search stopped before its end: ``reason`` is ``"nodes"`` (the
    solver's ``node_limit``) or ``"stop"`` (:meth:`Solver.request_stop`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


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


class _Compiled:
    """The compiled search's arrays: its table (grown 4x when 3/4 full, never past
    ``cap`` rows, then replacing), settings, counters and the search's scratch rows."""

    def __init__(self, max_table: int):
        self.cap = max(2, 1 << (max_table.bit_length() - 1))   # a power of two <= max_table
        self.tt = _k.new_table(min(self.cap, _FIRST_TABLE))
        self.prm = np.zeros(_k.N_PARAMS, dtype=np.int64)
        self.st = np.zeros(_k.N_STATS, dtype=np.int64)
        self.frames, self.moves = _k.new_frames()
        self.bone = np.zeros(0, dtype=np.int64)

    def new_generation(self) -> None:
        """Empty the table (at no cost: its rows become another generation's)."""
        gen = int(self.prm[_k.P_GEN]) + 1
        if gen > _k.MAX_GEN:
            self.tt[:] = 0
            gen = 1
        self.prm[_k.P_GEN] = gen
        self.st[_k.S_FILLED] = 0

    def grow(self) -> None:
        new = _k.new_table(min(self.cap, self.tt.shape[0] * 4))
        self.st[_k.S_FILLED] = _k.rehash(self.tt, new, self.prm[_k.P_GEN])
        self.tt = new


class Solver:
    """Reusable solver; its transposition table persists across calls on one variant
    (and, in draw mode, one boneyard order).

    ``max_table`` bounds the table (entries; the compiled table holds the largest power
    of two not above it, 24 bytes an entry, and replaces entries when full — slower,
    never wrong).  ``compiled=False`` runs the Python search, the reference.  The
    compiled search can be stopped: ``node_limit`` (nodes of one call to ``value`` /
    ``move_values``, counted in ``nodes``) and :meth:`request_stop` (from another thread)
    make it raise :class:`SearchStopped`."""

    def __init__(self, objective: str = "margin", max_table: int = 4_000_000,
                 max_depth: Optional[int] = None, evaluator=None, compiled: bool = True):
        if objective not in ("margin", "wdl"):
            raise PipslabError(f"objective must be 'margin' or 'wdl', got {objective!r}")
        if max_depth is not None and (max_depth < 1 or objective != "margin"):
            raise PipslabError("max_depth must be at least 1 and needs objective='margin'")
        self.objective = objective
        self.max_depth = EXACT_DEPTH if max_depth is None else max_depth
        # an exact search never reaches its depth limit: it keeps one depth throughout,
        # so the table's entries serve every later call (the principal line, the next move)
        self._step = 0 if max_depth is None else 1
        self.max_table = max_table
        self.table: Dict[int, Tuple[int, int, int, int]] = {}   # the Python search's
        self.nodes = 0
        self.node_limit: Optional[int] = None
        self._variant = None
        self._boneyard = None
        self.evaluator = evaluator   # scores the depth limit's positions (None: _evaluate)
        self.compiled = bool(compiled) and evaluator is None
        self._kernel: Optional[_Compiled] = _Compiled(max_table) if self.compiled else None
        self._codes = np.empty(_k.MAX_MOVES, dtype=np.int64)     # the root search's answers
        self._values = np.empty(_k.MAX_MOVES, dtype=np.int64)
        self._root: Optional[DominoState] = None
        self._path: Optional[List[int]] = None   # placements from _root (with an evaluator)

    # ------------------------------------------------------------------ setup
    def _prepare(self, state: DominoState) -> None:
        self._prepare_for(state.variant, state.boneyard)

    def _prepare_for(self, v, boneyard) -> None:
        """:meth:`_prepare` of a state of ``v`` with this ``boneyard`` (in draw order)."""
        if v is not self._variant:
            check_solvable(v)
        # block mode never draws, so the boneyard's order does not enter the key
        fresh = self._variant is not v or (v.draw and self._boneyard != boneyard)
        self._variant = v
        self._boneyard = boneyard
        self._players = v.players
        self._draw = v.draw
        self._lone = v.lone_blank_double
        self._scale = BIG if self.objective == "margin" else 1
        if self._kernel is not None:
            k = self._kernel
            if fresh:
                k.new_generation()
                k.bone = np.array(boneyard if v.draw else (), dtype=np.int64)
            k.prm[_k.P_PLAYERS] = v.players
            k.prm[_k.P_DRAW] = int(v.draw)
            k.prm[_k.P_LONE] = v.lone_blank_double
            k.prm[_k.P_SCALE] = self._scale
            k.prm[_k.P_STEP] = self._step
        elif fresh or len(self.table) > self.max_table:
            self.table.clear()

    def _terminal_value(self, mine: int, theirs: int) -> int:
        diff = theirs - mine
        outcome = (diff > 0) - (diff < 0)
        return outcome * BIG + diff if self._scale == BIG else outcome

    def _hands(self, state: DominoState) -> Tuple[int, int, int, int]:
        """The hands from the mover's seat round the table: mover, next, partner,
        previous (two players: mover, next, 0, 0)."""
        p, h = state.current_player, state.hands
        if self._players == 2:
            return h[p], h[1 - p], 0, 0
        return h[p], h[(p + 1) % 4], h[(p + 2) % 4], h[(p + 3) % 4]

    # ------------------------------------------------------------------ search
    def _search(self, state: DominoState) -> int:
        """Value of the (unfinished, opened) ``state`` for its side to move."""
        h0, h1, h2, h3 = self._hands(state)
        args = (state.left, state.right, state.passes, state.bpos, -INF, INF, self.max_depth)
        if self._kernel is None:
            return self._negamax(h0, h1, h2, h3, *args)
        return int(self._run(lambda k: _k.negamax(h0, h1, h2, h3, *args, k.prm, k.bone, k.tt, k.st,
                                                   k.frames, k.moves)))

    def _run(self, call):
        """``call(kernel)`` — a compiled search — until it finishes: a full table is grown
        and the search run again (it finds its finished subtrees in the table); the node
        limit or a stop request raise :class:`SearchStopped`."""
        k = self._kernel
        st = k.st
        while True:
            st[_k.S_NODES] = 0
            st[_k.S_ABORT] = 0
            st[_k.S_NODE_LIMIT] = _k.NO_LIMIT if self.node_limit is None else max(0, self.node_limit - self.nodes)
            st[_k.S_FILL_LIMIT] = k.tt.shape[0] * 3 // 4 if k.tt.shape[0] < k.cap else _k.NO_LIMIT
            result = call(k)
            reason = int(st[_k.S_ABORT])
            self.nodes += int(st[_k.S_NODES]) - (reason == _k.ABORT_NODES)
            st[_k.S_NODES] = 0
            if not reason:
                return result
            if reason == _k.ABORT_FULL:
                k.grow()
                continue
            st[_k.S_STOP] = 0
            raise SearchStopped("nodes" if reason == _k.ABORT_NODES else "stop")

    def _root_values(self, state: DominoState) -> Dict[int, int]:
        """:meth:`move_values` of an opened position whose mover can place, in one
        compiled call."""
        h0, h1, h2, h3 = self._hands(state)
        return self._root_values_of(h0, h1, h2, h3, state.left, state.right, state.bpos)

    def _root_values_of(self, h0, h1, h2, h3, left, right, bpos) -> Dict[int, int]:
        """:meth:`_root_values` of a position given as the mover-first hands (:meth:`_hands`)."""
        codes, values = self._codes, self._values
        depth = self.max_depth
        n = self._run(lambda k: _k.root_values(h0, h1, h2, h3, left, right, bpos, depth, k.prm, k.bone, k.tt,
                                               k.st, k.frames, k.moves, codes, values))
        return dict(zip(codes[:n].tolist(), values[:n].tolist()))

    def root_move_values(self, variant, boneyard, hands, mover: int, left: int, right: int, bpos: int):
        """:meth:`move_values` of an opened line position given by its parts — the
        ``hands`` of every seat, the ``boneyard`` in draw order (a tuple, as a state keeps
        it) and its draw position — where the compiled root search answers (the mover can
        place); ``None`` where :meth:`move_values` needs the state itself.  The same
        values and the same table afterwards as :meth:`move_values` of that state."""
        if self._kernel is None or left < 0 or not hands[mover] & (SUIT[left] | SUIT[right]):
            return None
        self._prepare_for(variant, boneyard)
        if self._players == 2:
            return self._root_values_of(hands[mover], hands[1 - mover], 0, 0, left, right, bpos)
        return self._root_values_of(hands[mover], hands[(mover + 1) % 4], hands[(mover + 2) % 4],
                                    hands[(mover + 3) % 4], left, right, bpos)

    def request_stop(self) -> None:
        """Stop the compiled search now running (call from another thread): it raises
        :class:`SearchStopped`.  A request made between searches stops the next one."""
        if self._kernel is not None:
            self._kernel.st[_k.S_STOP] = 1

    def live_nodes(self) -> int:
        """Nodes searched so far, the running compiled search's included (another thread
        may read it while the search runs)."""
        k = self._kernel
        return self.nodes + (int(k.st[_k.S_NODES]) if k is not None else 0)

    def _negamax(self, me: int, opp: int, part: int, prev: int, left: int, right: int, passes: int,
                 bpos: int, alpha: int, beta: int, depth: int) -> int:
        """The Python search (the reference of the compiled one): value for the side to
        move, holding ``me``, with ``opp`` next, then ``part`` (the mover's partner) and
        ``prev`` (both 0 with two players); ends left|right.

        ``depth`` is the number of placements still searched; at 0 the evaluator scores
        the position (only with ``max_depth``; an exact search keeps its depth)."""
        self.nodes += 1
        # draw mode: draw until a placement exists or the boneyard is empty
        ends_mask = SUIT[left] | SUIT[right]
        if self._draw:
            bone = self._boneyard
            while not me & ends_mask and bpos < len(bone):
                me |= 1 << bone[bpos]
                bpos += 1
        lo_end, hi_end = (left, right) if left <= right else (right, left)
        key = (me | opp << 28 | part << 56 | prev << 84 | lo_end << 112 | hi_end << 115 | passes << 118
               | bpos << 120)
        entry = self.table.get(key)
        tt_move = -1
        if entry is not None and entry[3] != depth:
            tt_move = entry[2]   # another depth's value is another function's: order only
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
        four = self._players == 4
        if not playable:
            if passes + 1 >= self._players:
                lone = self._lone
                return self._terminal_value(_count(me, lone) + _count(part, lone),
                                            _count(opp, lone) + _count(prev, lone))
            if four:
                return -self._negamax(opp, part, prev, me, left, right, passes + 1, bpos, -beta, -alpha, depth)
            return -self._negamax(opp, me, 0, 0, left, right, passes + 1, bpos, -beta, -alpha, depth)
        if depth <= 0:
            return self._evaluate(me, opp, part, prev) if self._path is None else self._leaf_value()
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
        child_depth = depth - self._step
        for code, nl, nr, t in moves:
            rest = me & ~(1 << t)
            if not rest:
                value = self._scale * 1
                if self._scale == BIG:
                    value += _count(opp, self._lone) + _count(prev, self._lone)
            else:
                if path is not None:
                    path.append(code)   # the code is the placement's action id
                if four:
                    value = -self._negamax(opp, part, prev, rest, nl, nr, 0, bpos, -beta, -alpha, child_depth)
                else:
                    value = -self._negamax(opp, rest, 0, 0, nl, nr, 0, bpos, -beta, -alpha, child_depth)
                if path is not None:
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

    def _evaluate(self, me: int, opp: int, part: int = 0, prev: int = 0) -> int:
        """Heuristic value of an unfinished position at the depth limit, inside (-BIG, BIG):
        fewer tiles and fewer pips in the mover's side's hands are better."""
        if self._scale != BIG:
            return 0
        lone = self._lone
        tiles = bin(opp).count("1") + bin(prev).count("1") - bin(me).count("1") - bin(part).count("1")
        pips = _count(opp, lone) + _count(prev, lone) - _count(me, lone) - _count(part, lone)
        return 20 * tiles + pips

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
        if self.evaluator is not None and self.max_depth < EXACT_DEPTH:
            self._root, self._path = state, []
        return self._search(state)

    def _child_value(self, parent: DominoState, child: DominoState) -> int:
        """Value of ``child`` for the side that moved in ``parent``."""
        mover = parent.current_player
        if child.is_terminal:
            return self._end_value(child, mover)
        v = self._value(child)
        teams = parent.variant.teams
        return v if teams[child.current_player] == teams[mover] else -v

    def _end_value(self, state: DominoState, seat: int) -> int:
        """Value of the finished ``state`` for ``seat``'s side: blocked, the side totals
        decide; else the side that went out wins the other side's count."""
        teams = state.variant.teams
        totals = state.team_counts()
        mine = teams[seat]
        theirs = 1 - mine
        if state.blocked:
            return self._terminal_value(totals[mine], totals[theirs])
        won = teams[state.winner] == mine
        margin = totals[theirs] if won else -totals[mine]
        if self._scale != BIG:
            return 1 if won else -1
        return (BIG + margin) if won else (margin - BIG)

    def move_values(self, state: DominoState) -> Dict[int, int]:
        """The exact value of every legal action, for the side to move."""
        self._prepare(state)
        if (self._kernel is not None and not state.is_terminal and state.left >= 0
                and state.hands[state.current_player] & (SUIT[state.left] | SUIT[state.right])):
            return self._root_values(state)
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
