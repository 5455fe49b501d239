"""pipslab's games as OpenSpiel (``pyspiel``) Python games, so OpenSpiel's algorithms run on them.

``import pipslab.envs.openspiel_games`` registers, with ``pyspiel.register_game``, an
OpenSpiel game for every game of :data:`~pipslab.envs.game.GAMES` of a family with a
state adapter here (``dominoes``, ``backgammon``; also one registered later): its name is
``pipslab_<name>`` (``pipslab_happy``, ``pipslab_troshin``, ``pipslab_triple``,
``pipslab_backgammon``), and its game type and parameters are generated from the
:class:`~pipslab.envs.game.Game` alone (:func:`game_type`): one parameter per option of
``Game.options_spec`` with the option's default — an option whose default is "not set"
(Happy's ``hand_size``, ``position``) takes an out-of-range value standing for it (0, or
the empty string) —, the players' range over the options, perfect or imperfect
information, zero-sum from ``Game.utility_sum``; the game info's utility bounds and
length from ``Game.utility_bounds`` and ``Game.max_game_length``.  (The module needs the
``open-spiel`` package, pipslab's ``[bench]`` extra; nothing else in pipslab imports it.)
Every option works here as on the other roads, Troshin's ``match=true`` included (below).
``position`` starts the game from that position (the domino hands then count as dealt;
such a game is not resampled by ``resample_from_infostate``).

``pyspiel.load_game("pipslab_happy(mode=block,max_pip=2)")`` loads the tiny game that
OpenSpiel's CFR and exact exploitability can finish (``pipslab exploitability``).  The
rules are pipslab's engines, unchanged: each adapter state wraps one engine state
(``line.DominoState``, ``triple.TripleState``, ``backgammon.game.BackgammonState``) and
adds only the bookkeeping OpenSpiel needs on top.

Chance is explicit, with enumerable outcomes and their probabilities
------------------------------------------------------------------
* **The deal** (dominoes): one chance node per tile dealt, seat 0's hand first, then seat
  1's …; each hand is dealt in ascending tile order, so a hand is one path, not ``k!``
  orderings of it (a smaller tree for CFR, same distribution).  The outcome is the tile
  id; with ``c`` tiles above the hand's last one still undealt and ``m`` still to deal to
  this hand, the ``i``-th of them (from the lowest) comes next with probability
  ``C(c-i-1, m-1) / C(c, m)`` — that it is the lowest of a uniform ``m``-subset.  Every
  hand is thus a uniform draw from the set, as ``engine.deal``'s shuffle makes it.  A
  deal that calls for a redeal (Troshin, ``common.needs_redeal``) is dealt again.
  Then the engine state is built by ``engine.deal`` itself, from a scripted "shuffle"
  that lays the tiles in the order dealt (so the opening rule, the first seat … are the
  engine's).  Triple's first player by lot is one more chance node (uniform over seats).
* **A Troshin match's next hand**: where the engine's match is a chance node (a hand is
  over, the match is not: ``TroshinMatch.is_chance``), the adapter deals the next hand
  exactly as the first — one chance node per tile, redeals included — and hands the deal
  to the match (``TroshinMatch.set_hand``, the chosen outcome, as backgammon's
  ``set_roll``).  So every chance outcome of a match is enumerated with its probability,
  as in a single hand.  A match has no true length bound (a drawn hand scores nothing);
  the game info's ``max_game_length`` counts a hand's bound, its deal included, for each
  hand of a match in which every hand scores (``(target - 1) * sides + 1`` hands).
* **Draws** (draw mode, Troshin, Triple): the seat's DRAW action (56, or 112 in Triple)
  is its decision; a chance node then picks the drawn tile, uniform over the boneyard.
  The engine keeps its boneyard in a pre-shuffled order and draws the next tile; the
  adapter moves the chosen tile to the front of the undrawn part before applying DRAW.
  The block game's boneyard is out of play and never drawn, so it costs no chance node.
* **Dice** (backgammon): chance outcome ``(a-1)*6 + (b-1)`` for the roll ``(a, b)``: the
  21 distinct rolls ``(high, low)`` of ``game.CHANCE_OUTCOMES`` (doubles 1/36, others
  2/36); the opening roll is the 30 ordered pairs (X's die, O's die), 1/30 each.

Actions are pipslab's: dominoes ``tile * n_ends + end`` (the 28-tile encoding, whatever
the set), DRAW and PASS (58 ids on a line, 114 in Triple); backgammon single checker
moves ``(from - 1) * 6 + (die - 1)`` (bar = 25) and PASS = 150, a whole play being the
moves of one turn (the engine offers only moves that begin a legal whole play).

What a seat sees
----------------
* **Information state string** (perfect recall; dominoes): the variant, the seat, its
  hand as dealt, then the public history from ``state.observe(seat)`` — every
  placement, pass and draw (who, where) — with the tiles *this* seat drew written in,
  and its hand now.  A match's string is the strings of its finished hands (as they
  read when each ended), then the current hand's, after the score (``match 45/89``).  Two histories give the same string exactly when the seat cannot tell
  them apart — except after a Troshin redeal, when the string keeps the number of
  redeals but not the hand that was thrown in (it has no bearing on the new deal).
  Backgammon is a perfect-information game: the string is the history.
* **Observation string**: the seat's view now (hand, table, hand sizes, boneyard size,
  passes; Triple's scores), without the order of past events.
* **Observation tensor**: the pipslab encoder of that view — the game's
  ``Game.observation_encoder`` (Happy 111 floats, Troshin 191, Triple 220, backgammon
  223: Tesauro's 198 and the dice left), the vector the Gymnasium envs give.
* No **information state tensor**: the encoders are not perfect-recall, and a fixed-size
  encoding of the whole history would be a new format nothing here reads.  Algorithms
  that need one (deep CFR …) are not supported.
* Observers also take ``private_info=NONE`` (the public part only: no hand, no own drawn
  tiles; the tensor's own-hand block is zero).

``resample_from_infostate`` (for OpenSpiel's ``ISMCTSBot``) deals the hidden tiles with
pipslab's ``engine.sample_world`` from the seat's view, works out which of each other
seat's tiles it was dealt and which it drew at each draw (the walk of
``line.DominoState.constraint_groups``, keeping the tiles), and replays the history on
that deal with those draws.  The line games (Happy, Troshin) are resampled, block or
draw; Triple's luck draws are not, nor a Troshin match (its earlier hands' hidden tiles
are not replayed; one line says so).  Backgammon has nothing hidden.

OpenSpiel serializes a Python state as a pickle of its attributes
(``pyspiel.serialize_game_and_state``): deserialize only states you wrote yourself.

Costs: these are Python games.  OpenSpiel clones a Python state by deep-copying each
of its attributes; the engine state sits in a box whose copy is the engine's cheap
``clone``.  On ``happy-block-d2`` (658 states) a CFR+ iteration takes about 0.2 s and an
exact exploitability about 0.5 s; the double-3 set with 3 tiles each (104,455 states)
already takes minutes per pass.  Fine for tests, CFR on the tiny set and a few bot
games; the engines' own loops are far faster for long runs.
"""
from __future__ import annotations

import dataclasses
import re
from math import comb
from typing import Any, Dict, List, Optional

import numpy as np
import pyspiel

from pipslab.envs.dominoes.common import DRAW as EV_DRAW
from pipslab.envs.dominoes.common import PASS as EV_PASS
from pipslab.envs.dominoes.common import PLACE as EV_PLACE
from pipslab.envs.dominoes.common import END_NAMES, OUTRANKING, needs_redeal
from pipslab.envs.dominoes.engine import LAYOUTS, MatchInfo, TroshinMatch, sample_world
from pipslab.envs.dominoes.tiles import SUIT, format_tiles, tile_name, tiles_of
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import GAMES, Game

__all__ = ["DominoGame", "DominoState", "BackgammonGame", "BackgammonState", "ADAPTERS", "SHORT_NAMES", "load",
           "game_type", "parameters", "short_name"]

_SEQ = pyspiel.GameType.Dynamics.SEQUENTIAL
_CHANCE = pyspiel.PlayerId.CHANCE
_TERMINAL = pyspiel.PlayerId.TERMINAL


# ---------------------------------------------------------------------------- dominoes
class _ScriptedShuffle:
    """Stands for the rng of ``engine.deal``: its one ``shuffle`` lays the tiles in the
    order the chance nodes dealt them, and ``integers`` names the seat drawn by lot."""

    def __init__(self, order: List[int], first: int):
        self.order, self.first = order, first

    def shuffle(self, tiles: list) -> None:
        if sorted(tiles) != sorted(self.order):
            raise PipslabError("internal: the scripted deal does not hold the set's tiles")
        tiles[:] = self.order

    def integers(self, n: int) -> int:
        return self.first


class _Engine:
    """Holds an engine state; a deep copy is the engine's own ``clone`` (no deepcopy of
    its shared history), which is what pyspiel's Clone of a Python state calls."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def __deepcopy__(self, memo):
        return _Engine(None if self.state is None else self.state.clone())

    def __getstate__(self):
        return {"state": self.state}

    def __setstate__(self, values):
        self.state = values["state"]


class DominoGame(pyspiel.Game):
    """A pipslab domino game (``pipslab_happy``, ``pipslab_troshin``, ``pipslab_triple``);
    see the module docstring.  ``params``: the pipslab game's options, as pyspiel game
    parameters (:func:`parameters`)."""

    pipslab_name = ""
    game_type: pyspiel.GameType = None

    def __init__(self, params=None):
        spec = GAMES[self.pipslab_name]
        values, self.options = _resolve(spec, self.game_type, params)
        probe = spec.new_state(np.random.default_rng(0), self.options)
        self.match = isinstance(probe, TroshinMatch)
        self.start = probe if self.options.get("position") else None
        self.variant = v = probe.variant
        self.encoder = spec.observation_encoder(self.options)
        drawn = v.set_size - v.players * v.hand_size if v.draw else 0
        # the game's own steps, then the deal (+ a lot for the first seat) and a chance node per draw
        hand_options = {**self.options, "match": False} if self.match else self.options
        length = spec.max_game_length(hand_options) + v.players * v.hand_size + 1 + drawn
        if v.redeal_doubles or v.redeal_suit:
            length += 3 * v.players * v.hand_size   # room for three redeals (each < 1% likely)
        if self.match:   # every hand scoring (module docstring): no true bound
            length *= (probe.target - 1) * v.n_teams + 1
        low, high = spec.utility_bounds(self.options)
        info = pyspiel.GameInfo(
            num_distinct_actions=spec.actions(self.options), max_chance_outcomes=28, num_players=v.players,
            min_utility=low, max_utility=high, utility_sum=spec.utility_sum, max_game_length=length)
        super().__init__(self.game_type, info, values)

    def new_initial_state(self):
        return DominoState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise PipslabError(f"observer parameters are not supported, got {params}")
        return DominoObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


class DominoState(pyspiel.State):
    """One game of a :class:`DominoGame`: the deal's chance nodes, then the engine state
    (``engine``) with the draws as chance nodes.  ``dealt[p]``: seat ``p``'s tiles as
    dealt, in order; ``drawn[p]``: the tiles it drew, in order; ``deals``: deals so far
    (a redeal adds one); ``drawing``: the seat to move chose DRAW and the tile is next.
    These are the current hand's; in a match ``engine`` is the
    :class:`~pipslab.envs.dominoes.match.TroshinMatch` and ``past[k]`` holds finished
    hand ``k``'s information strings (per seat: with the private tiles, without)."""

    def __init__(self, game: DominoGame):
        super().__init__(game)
        # pyspiel's Clone deep-copies every entry of the state's __dict__: the entries are
        # plain lists and numbers, and the engine sits in an _Engine box that clones it
        self._engine = _Engine(None)
        self.past: List[List[List[str]]] = []
        self._new_hand()
        if game.start is not None:   # the position option: the hands held there count as dealt
            self.engine = game.start.clone()
            if not self.engine.is_chance:
                self.dealt = [list(tiles_of(hand)) for hand in self.hand.hands]

    def _new_hand(self) -> None:
        players = self.get_game().variant.players
        self.dealt: List[List[int]] = [[] for _ in range(players)]
        self.drawn: List[List[int]] = [[] for _ in range(players)]
        self.deals = 0
        self.drawing = False
        self.lot = -1   # Triple: the seat drawn by lot to open

    @property
    def engine(self):
        return self._engine.state

    @engine.setter
    def engine(self, state):
        self._engine = _Engine(state)

    @property
    def hand(self):
        """The engine's hand (a match's current hand; at its chance node the finished one)."""
        e = self.engine
        return e.hand if isinstance(e, TroshinMatch) else e

    def _dealing(self) -> bool:
        """A hand is being dealt: the game's first, or a match's next (its chance node)."""
        return self.engine is None or self.engine.is_chance

    @property
    def _game(self) -> DominoGame:
        return self.get_game()

    @property
    def variant(self):
        return self.get_game().variant

    # ------------------------------------------------------------------ phases
    def _dealing_seat(self) -> int:
        """The seat whose hand is being dealt; -1 once every hand is full."""
        k = self.variant.hand_size
        for p, hand in enumerate(self.dealt):
            if len(hand) < k:
                return p
        return -1

    def current_player(self):
        if self._dealing():
            return _CHANCE
        if self.engine.is_terminal:
            return _TERMINAL
        return _CHANCE if self.drawing else self.engine.current_player

    def is_terminal(self):
        return self.engine is not None and self.engine.is_terminal

    def _legal_actions(self, player):
        return sorted(self.engine.legal_actions())

    def chance_outcomes(self):
        if not self._dealing():           # a draw: any boneyard tile, uniform
            tiles = sorted(self.hand.boneyard_tiles())
            return [(t, 1.0 / len(tiles)) for t in tiles]
        seat = self._dealing_seat()
        if seat < 0:                      # Triple: the first seat by lot
            n = self.variant.players
            return [(p, 1.0 / n) for p in range(n)]
        undealt = self.variant.tile_set
        for hand in self.dealt:
            for t in hand:
                undealt &= ~(1 << t)
        hand = self.dealt[seat]
        above = [t for t in tiles_of(undealt) if not hand or t > hand[-1]]
        m = self.variant.hand_size - len(hand)
        c = len(above)
        total = comb(c, m)
        out = []
        for i, t in enumerate(above):
            ways = comb(c - i - 1, m - 1)
            if ways:
                out.append((t, ways / total))
        return out

    def _apply_action(self, action):
        v = self.variant
        if self._dealing():
            seat = self._dealing_seat()
            if seat >= 0:
                self.dealt[seat].append(int(action))
                if self._dealing_seat() < 0:
                    self._dealt()
            else:
                self.lot = int(action)
                self._start()
        elif self.drawing:
            e = self.hand
            rest = list(e.boneyard_tiles())
            rest.remove(int(action))
            e.boneyard = e.boneyard[:e.bpos] + (int(action),) + tuple(rest)
            self.drawn[e.current_player].append(int(action))
            self.drawing = False
            self.engine.apply(v.draw_action)
        elif action == v.draw_action:
            if action not in self.engine.legal_actions():
                self.engine.apply(action)   # the engine's one-line refusal
            self.drawing = True
        else:
            self.engine.apply(int(action))
            if self.engine.is_chance:   # a match's hand is over: keep its strings, deal the next
                players = v.players
                self.past.append([[self._hand_string(p, True, over=True) for p in range(players)],
                                  [self._hand_string(p, False, over=True) for p in range(players)]])
                self._new_hand()

    def _dealt(self) -> None:
        """Every hand is full: deal again when a hand calls for it, else open the game."""
        masks = [sum(1 << t for t in hand) for hand in self.dealt]
        if needs_redeal(self.variant, masks):
            self.deals += 1
            self.dealt = [[] for _ in range(self.variant.players)]
            return
        if self.variant.opening != "any":
            self._start()

    def _start(self) -> None:
        v = self.variant
        order = [t for hand in self.dealt for t in hand]
        rest = [t for t in tiles_of(v.tile_set) if t not in set(order)]
        hand = LAYOUTS[v.layout].deal(v, _ScriptedShuffle(order + rest, self.lot))
        if not self._game.match:
            self.engine = hand
        elif self.engine is None:
            self.engine = TroshinMatch(v, hand)
        else:
            self.engine.set_hand(hand)    # the match's chance outcome

    def _action_to_string(self, player, action):
        if player == _CHANCE:
            if not self._dealing():
                return f"draws {tile_name(action)}"
            seat = self._dealing_seat()
            return f"deal {tile_name(action)} to seat {seat}" if seat >= 0 else f"seat {action} opens by lot"
        return self.engine.action_name(action)

    def returns(self):
        if not self.is_terminal():
            return [0.0] * self.variant.players
        return [float(r) for r in self.engine.returns()]

    def __str__(self):
        if self._dealing():
            hands = " / ".join(format_tiles(h) or "-" for h in self.dealt)
            m = self.engine
            score = "" if m is None else f"match {'/'.join(map(str, m.scores))}, hand {m.hand_index + 1}; "
            return f"{self.variant.name}; {score}dealing (deal {self.deals + 1}); hands={hands}"
        from pipslab.envs.dominoes.notation import format_position
        return format_position(self.engine) + ("; drawing" if self.drawing else "")

    # ------------------------------------------------------------------ views
    def view(self, player: int, private: bool = True):
        """The engine's view of ``player`` (during the deal: the hands dealt so far on an
        empty table); with ``private=False`` the hand is left out."""
        if not self._dealing():
            view = self.engine.observe(player)
        else:
            masks = [sum(1 << t for t in hand) for hand in self.dealt]
            view = LAYOUTS[self.variant.layout](self.variant, masks, (), current_player=0, table=0).observe(player)
            if self._game.match:     # a match's score before its next hand
                m = self.engine
                v = self.variant
                info = (MatchInfo(target=v.match_target, scores=(0,) * v.n_teams, hand_index=0, hand_points=())
                        if m is None else m.match_info())
                view = dataclasses.replace(view, match=info)
        if not private:
            view = dataclasses.replace(view, hand=0)
        return view

    def information_string(self, player: int, private: bool = True) -> str:
        """The perfect-recall string of ``player`` (see the module docstring)."""
        if not self._game.match:
            return self._hand_string(player, private)
        m = self.engine
        scores = "/".join(map(str, m.scores if m is not None else [0] * self.variant.n_teams))
        hands = [past[0 if private else 1][player] for past in self.past]
        return " | ".join(hands + [f"match {scores}", self._hand_string(player, private)])

    def _hand_string(self, player: int, private: bool, over: bool = False) -> str:
        """The perfect-recall string of ``player`` in the current hand (the whole game's
        when it is not a match); a finished hand ends with ``over`` (``over=True``: the
        match's hand that just ended, before the next deal starts)."""
        v = self.variant
        parts = [v.name, f"seat {player}"]
        if self.deals:
            parts.append(f"redeals {self.deals}")
        if private:
            parts.append("dealt " + (format_tiles(self.dealt[player]) or "-"))
        if self._dealing() and not over:
            return "; ".join(parts + ["dealing"])
        if self.lot >= 0:
            parts.append(f"seat {self.lot} opens by lot")
        mine = 0
        events = []
        hand = self.hand
        for kind, p, tile, end, _left, _right in hand.events():
            if kind == EV_PLACE:
                events.append(f"{p}:{tile_name(tile)}@{END_NAMES[end]}")
            elif kind == EV_PASS:
                events.append(f"{p}:pass")
            else:
                what = f"{p}:draw"
                if p == player and private:
                    what += f" {tile_name(self.drawn[player][mine])}"
                if p == player:
                    mine += 1
                if v.layout == "spinner":
                    what += " lucky" if end < 0 else " unlucky"
                events.append(what)
        if self.drawing:
            events.append(f"{hand.current_player}:drawing")
        parts.append("history " + (" ".join(events) or "-"))
        if private:
            parts.append("hand " + (format_tiles(tiles_of(hand.hands[player])) or "-"))
        if hand.is_terminal:
            parts.append("over")
        return "; ".join(parts)

    def observation_text(self, player: int, private: bool = True) -> str:
        """What ``player`` sees now, without the order of past events."""
        view = self.view(player, private)
        v = self.variant
        parts = [v.name, f"seat {player}"]
        if view.match is not None:
            number = view.match.hand_index + (0 if view.is_terminal else 1)
            parts.append(f"match {'/'.join(map(str, view.match.scores))}; hand {number}")
        if private:
            parts.append("hand " + (format_tiles(tiles_of(view.hand)) or "-"))
        if self._dealing():
            return "; ".join(parts + ["dealing"])
        if v.layout == "spinner":
            parts.append("ends " + "|".join(str(e) if e >= 0 else "-" for e in view.ends)
                         + f"; spinner {view.spinner}")
            parts.append("winnings " + "/".join(map(str, view.winnings))
                         + "; penalties " + "/".join(map(str, view.penalties)) + f"; draws {view.turn_draws}")
        else:
            parts.append(f"ends {view.left}|{view.right}" if view.left >= 0 else "table empty")
        parts.append("table " + (format_tiles(tiles_of(view.table)) or "-"))
        parts.append("hand sizes " + "/".join(map(str, view.hand_sizes)) + f"; boneyard {view.boneyard_size}")
        parts.append(f"passes {view.passes}")
        voids = [view.voids(p) for p in range(v.players)]
        if any(voids):
            parts.append("lacking " + " ".join(
                f"{p}:" + "".join(str(n) for n in range(7) if voids[p] >> n & 1) for p in range(v.players) if voids[p]))
        if self.drawing:
            parts.append("drawing")
        parts.append("over" if view.is_terminal else f"to move {view.current_player}")
        return "; ".join(parts)

    # ------------------------------------------------------------------ ISMCTS
    def resample_from_infostate(self, player_id, probability_sampler=None):
        """A state ``player_id`` cannot tell from this one: the other hands dealt by
        ``engine.sample_world`` from its view, the history replayed on that deal.  The
        sampler's numbers seed the deal (OpenSpiel's ``ISMCTSBot`` passes a uniform one).
        Line games (Happy, Troshin), block or draw; not Triple (see the module docstring)."""
        v = self.variant
        if v.layout != "line":
            raise PipslabError(f"resample_from_infostate: {v.name}'s luck draws are not resampled; "
                               "resampling supports the line games (Happy, Troshin)")
        if self._game.start is not None:
            raise PipslabError("resample_from_infostate: a game started from a position is not resampled")
        if self._game.match:
            raise PipslabError("resample_from_infostate: a Troshin match is not resampled (its earlier hands' "
                               "hidden tiles are not replayed); resample single hands (match=false)")
        if self._dealing() or self.current_player() < 0 and not self.is_terminal():
            raise PipslabError("resample_from_infostate: only at a seat's decision or the end")
        seed = int(probability_sampler() * 2 ** 31) if probability_sampler is not None else 0
        rng = np.random.default_rng(seed)
        view = self.engine.observe(player_id)
        for _ in range(20):   # a sampled deal that Troshin would have redealt is dealt again
            dealt, drawn = _hidden_deal(view, sample_world(view, rng).hands)
            dealt[player_id] = list(self.dealt[player_id])
            drawn[player_id] = list(self.drawn[player_id])
            if not needs_redeal(v, [sum(1 << t for t in hand) for hand in dealt]):
                break
        else:
            raise PipslabError("resample_from_infostate: no sampled deal without a redeal in 20 tries")
        # replay: the earlier deals as they were (no info string shows them), this deal's
        # hands in the dealing order, then every action, a draw taking the sampled tile
        history = self.history()
        per_deal = v.players * v.hand_size
        out = self._game.new_initial_state()
        for a in history[:self.deals * per_deal]:
            out.apply_action(a)
        for hand in dealt:
            for t in sorted(hand):
                out.apply_action(t)
        taken = [0] * v.players
        for a in history[(self.deals + 1) * per_deal:]:
            if out.drawing:
                seat = out.engine.current_player
                a = drawn[seat][taken[seat]]
                taken[seat] += 1
            out.apply_action(a)
        return out


def _hidden_deal(view, hands):
    """``(dealt, drawn)`` per seat for the current ``hands`` of a sampled world: which of a
    seat's tiles it was dealt and which it drew at each of its draws, consistent with
    every pass and draw of ``view``'s history (the tiles held at a pass or draw lack both
    open numbers) and with the opening rule.  The walk is ``line.DominoState.
    constraint_groups``' with the tiles kept: a group per deal and per draw, a placed tile
    taken from the oldest group it fits; then the tiles held now are matched to the groups'
    places left (the sampled hands fit them: ``sample_world`` dealt them so)."""
    v = view.variant
    n = v.players
    draws = [0] * n
    places = [0] * n
    for kind, p, *_ in view.history:
        draws[p] += kind == EV_DRAW
        places[p] += kind == EV_PLACE
    # per seat, groups [places left, forbidden tiles, tiles placed from it]
    groups = [[[view.hand_sizes[p] - draws[p] + places[p], 0, []]] for p in range(n)]
    first = True
    for kind, p, tile, _end, left, right in view.history:
        if kind == EV_PLACE:
            if first and v.opening == "highest_double":
                for q in range(n):
                    groups[q][0][1] |= OUTRANKING[tile]
            first = False
            for g in groups[p]:
                if g[0] > 0 and not g[1] >> tile & 1:
                    break
            else:
                g = next(g for g in reversed(groups[p]) if g[0] > 0)
            g[0] -= 1
            g[2].append(tile)
        else:
            lacking = (SUIT[left] | SUIT[right]) if left >= 0 else 0
            for g in groups[p]:
                g[1] |= lacking
            if kind == EV_DRAW:
                groups[p].append([1, 0, []])
    dealt, drawn = [], []
    for p in range(n):
        slots = [k for k, g in enumerate(groups[p]) for _ in range(g[0])]
        owner = _match(list(tiles_of(hands[p])), slots, [g[1] for g in groups[p]])
        tiles = [list(g[2]) for g in groups[p]]
        for t, k in owner.items():
            tiles[k].append(t)
        dealt.append(tiles[0])
        drawn.append([ts[0] for ts in tiles[1:]])
    return dealt, drawn


def _match(tiles, slots, forbidden):
    """Tile -> group: every tile to a slot (a group's index) whose group allows it, by
    augmenting paths; raises when no such matching exists."""
    holder = [None] * len(slots)

    def place(t, seen):
        for i, k in enumerate(slots):
            if i in seen or forbidden[k] >> t & 1:
                continue
            seen.add(i)
            if holder[i] is None or place(holder[i], seen):
                holder[i] = t
                return True
        return False

    for t in tiles:
        if not place(t, set()):
            raise PipslabError("internal: the sampled hand does not fit its deal and draws")
    return {t: slots[i] for i, t in enumerate(holder) if t is not None}


class DominoObserver:
    """OpenSpiel's observer protocol (``set_from``/``string_from``, ``tensor``, ``dict``)
    for a domino game: perfect recall gives the information state string; otherwise the
    observation string and the pipslab encoder's tensor (see the module docstring)."""

    def __init__(self, game: DominoGame, iig_obs_type):
        self.game = game
        self.perfect_recall = iig_obs_type.perfect_recall
        kind = iig_obs_type.private_info
        if kind == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise PipslabError("observers of every seat's private tiles are not provided (use the "
                               "engine's position string)")
        self.private = kind == pyspiel.PrivateInfoType.SINGLE_PLAYER
        size = 0 if self.perfect_recall else game.encoder.size
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor} if size else {}

    def set_from(self, state: DominoState, player: int) -> None:
        if self.perfect_recall:
            return
        self.tensor[:] = self.game.encoder.encode(state.view(player, self.private))

    def string_from(self, state: DominoState, player: int) -> str:
        if self.perfect_recall:
            return state.information_string(player, self.private)
        return state.observation_text(player, self.private)


# ---------------------------------------------------------------------------- backgammon
class BackgammonGame(pyspiel.Game):
    """pipslab's backgammon (``pipslab_backgammon``); see the module docstring."""

    pipslab_name = "backgammon"
    game_type: pyspiel.GameType = None

    def __init__(self, params=None):
        spec = GAMES[self.pipslab_name]
        values, self.options = _resolve(spec, self.game_type, params)
        self.encoder = spec.observation_encoder(self.options)
        low, high = spec.utility_bounds(self.options)
        info = pyspiel.GameInfo(num_distinct_actions=spec.actions(self.options), max_chance_outcomes=36,
                                num_players=2, min_utility=low, max_utility=high, utility_sum=spec.utility_sum,
                                max_game_length=spec.max_game_length(self.options))
        super().__init__(self.game_type, info, values)

    def new_initial_state(self):
        return BackgammonState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise PipslabError(f"observer parameters are not supported, got {params}")
        return BackgammonObserver(self, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False))


class BackgammonState(pyspiel.State):
    """One backgammon game: the engine state ``engine`` with the rolls as chance nodes."""

    def __init__(self, game: BackgammonGame):
        super().__init__(game)
        # the start position (or the position option's), the opening roll a chance node
        self._engine = _Engine(GAMES[game.pipslab_name].new_state(None, game.options))

    @property
    def engine(self):
        return self._engine.state

    def current_player(self):
        e = self.engine
        if e.is_terminal:
            return _TERMINAL
        return _CHANCE if e.is_chance else e.current_player

    def is_terminal(self):
        return self.engine.is_terminal

    def _legal_actions(self, player):
        return sorted(self.engine.legal_actions())

    def chance_outcomes(self):
        return [((a - 1) * 6 + b - 1, p) for (a, b), p in self.engine.chance_outcomes()]

    def _apply_action(self, action):
        if self.engine.is_chance:
            self.engine.set_roll((action // 6 + 1, action % 6 + 1))
        else:
            self.engine.apply(int(action))

    def _action_to_string(self, player, action):
        if player == _CHANCE:
            return f"roll {action // 6 + 1}-{action % 6 + 1}"
        name = self.engine.action_name(action)
        # bearing off with a larger die names the die, so two such moves read apart
        return name if action == 150 or "off" not in name else f"{name} (d{action % 6 + 1})"

    def returns(self):
        return [float(r) for r in self.engine.returns()]

    def __str__(self):
        e = self.engine
        return f"{e.position.id} seat {e.current_player} " + ("to roll" if e.is_chance else f"dice {e.dice}")

    def resample_from_infostate(self, player_id, probability_sampler=None):
        """Nothing is hidden: a copy of this state."""
        return self.clone()


class BackgammonObserver:
    """Perfect information: the information state string is the history; the
    observation is the position from the observer's side (Position ID, dice, who is on
    roll) and its tensor the game's encoder (``Game.observation_encoder``: Tesauro's 198
    inputs and the dice left to play)."""

    def __init__(self, game: BackgammonGame, iig_obs_type):
        self.game = game
        self.perfect_recall = iig_obs_type.perfect_recall
        size = 0 if self.perfect_recall else game.encoder.size
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor} if size else {}

    def set_from(self, state: BackgammonState, player: int) -> None:
        if not self.perfect_recall:
            self.tensor[:] = self.game.encoder.encode(state.engine.observe(player))

    def string_from(self, state: BackgammonState, player: int) -> str:
        if self.perfect_recall:
            return " ".join(map(str, state.history()))
        view = state.engine.observe(player)
        where = "over" if view.is_terminal else ("to roll" if view.is_chance else f"dice {view.dice}")
        return f"seat {player}: {view.position.id}; seat {view.current_player} {where}"


# ---------------------------------------------------------------------------- registry
#: the OpenSpiel game class of each family with a state adapter here
ADAPTERS = {"dominoes": DominoGame, "backgammon": BackgammonGame}
#: pipslab game -> its OpenSpiel short name, for every game registered here
SHORT_NAMES: Dict[str, str] = {}
#: the value of a parameter standing for an option that is not set, per type
_UNSET = {int: 0, float: 0.0, str: "", bool: False}


def short_name(game: Game) -> str:
    return "pipslab_" + re.sub(r"\W", "_", game.name)


def parameters(game: Game) -> Dict[str, Any]:
    """The OpenSpiel parameters of ``game``: each option with its default; an option that
    is "not set" by default takes a value outside its range standing for it (0 — or
    ``low - 1`` when 0 is allowed —, the empty string)."""
    out: Dict[str, Any] = {}
    for o in game.options_spec:
        if o.default is not None:
            out[o.name] = o.type(o.default)
            continue
        unset = _UNSET.get(o.type, "")
        if o.type in (int, float) and o.low is not None and o.low <= unset:
            unset = o.type(o.low - 1)
        out[o.name] = unset
    return out


def _resolve(game: Game, game_type, params):
    """``(values, options)``: the game's parameters with ``params`` given (unknown names
    refused) and the resolved pipslab options they stand for."""
    params = dict(params or {})
    defaults = dict(game_type.parameter_specification)
    unknown = set(params) - set(defaults)
    if unknown:
        raise PipslabError(f"{game_type.short_name} has no parameter {', '.join(sorted(unknown))} "
                           f"(its parameters: {', '.join(defaults) or 'none'})")
    values = {**defaults, **params}
    spec = parameters(game)
    options = {}
    for o in game.options_spec:
        value = values[o.name]
        if o.default is None and value == spec[o.name]:
            continue   # "not set"
        if o.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        options[o.name] = value
    return values, game.resolve(options, strict=True)


def game_type(game: Game) -> pyspiel.GameType:
    """The OpenSpiel game type of ``game``, from its definition alone (module docstring)."""
    low, high = game.player_range()
    if game.utility_sum is None:
        utility = pyspiel.GameType.Utility.GENERAL_SUM
    elif game.utility_sum == 0:
        utility = pyspiel.GameType.Utility.ZERO_SUM
    else:
        utility = pyspiel.GameType.Utility.CONSTANT_SUM
    information = (pyspiel.GameType.Information.PERFECT_INFORMATION if game.perfect_information
                   else pyspiel.GameType.Information.IMPERFECT_INFORMATION)
    return pyspiel.GameType(
        short_name=short_name(game), long_name=f"pipslab {game.description or game.name}", dynamics=_SEQ,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC, information=information, utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL, max_num_players=high, min_num_players=low,
        provides_information_state_string=True, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification=parameters(game))


def _register(game: Game) -> None:
    base = ADAPTERS.get(game.family)
    if base is None or game.name in SHORT_NAMES:
        return
    if base is BackgammonGame and game.name != "backgammon":
        return   # the backgammon state adapter plays pipslab's backgammon engine only
    kind = type(f"{base.__name__}[{game.name}]", (base,), {"pipslab_name": game.name, "game_type": game_type(game)})
    pyspiel.register_game(kind.game_type, kind)
    SHORT_NAMES[game.name] = kind.game_type.short_name


GAMES.on_register(_register)


def load(game: str, options: Optional[dict] = None) -> pyspiel.Game:
    """The OpenSpiel game of pipslab's ``game`` (``happy``, ``troshin``, ``triple``,
    ``backgammon`` …) with these options, e.g. ``load("happy", {"max_pip": 2})``."""
    if game not in SHORT_NAMES:
        raise PipslabError(f"no OpenSpiel game for {game!r}: OpenSpiel plays the games of the families "
                           f"{', '.join(ADAPTERS)} ({', '.join(SHORT_NAMES)})")
    return pyspiel.load_game(SHORT_NAMES[game], dict(options or {}))
