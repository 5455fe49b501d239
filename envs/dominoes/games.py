"""The domino games' definitions (:class:`pipslab.envs.game.Game`): ``happy``, ``troshin``,
``triple`` and ``troshin6`` (Troshin for two with six tiles each: a variant as data only),
registered in :data:`pipslab.envs.GAMES` when :mod:`pipslab.envs` is imported.

Everything the harness, the CLI and the adapters know about these games is here: their
options (Happy: ``mode``, ``max_pip``, ``hand_size``; Troshin: ``players``, ``pairs``,
``match``; Triple: ``players``; all: ``position``), seats and teams, deals and positions,
the encoders (:mod:`pipslab.envs.dominoes.encoding`), the bounds (returns in [−1, 1],
zero-sum), and what ``info`` and a finished game record (:func:`happy_outcome` …: returns,
points and pips left per seat, and the columns ``blocked``, ``passes``, ``draws`` —
Troshin adds the match's, Triple its score columns).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

import numpy as np

from pipslab.envs.errors import PipslabError
from pipslab.envs.game import Encoder, Game, Option, Outcome, outcome_from_returns, register_game

from .encoding import (HAPPY_LAYOUT, HAPPY_SIZE, TRIPLE_LAYOUT, TRIPLE_SIZE, TROSHIN_LAYOUT, TROSHIN_SIZE,
                       encode_triple_view, encode_troshin_view, encode_view)
from .engine import DRAW, PASS, deal
from .match import TroshinMatch, new_match
from .notation import format_position, parse_position, render
from .variants import happy as happy_variant
from .variants import register_variant
from .variants import triple as triple_variant
from .variants import troshin as troshin_variant

FAMILY = "dominoes"


# ------------------------------------------------------------------ shared
def _events_columns(state) -> Dict[str, Any]:
    blocked = passes = draws = 0
    for e in state.events():
        if e[0] == PASS:
            passes += 1
        elif e[0] == DRAW:
            draws += 1
    blocked = bool(state.blocked)
    return {"blocked": blocked, "passes": passes, "draws": draws}


DRAW_PHASES = ("boneyard 10+", "boneyard 5-9", "boneyard 1-4", "boneyard empty")
BLOCK_PHASES = ("5+ in hand", "3-4 in hand", "1-2 in hand")


def domino_phase(state) -> str:
    """The phase of the seat to move, from its own view: in a draw game how full the
    boneyard is (``boneyard 10+``, ``boneyard 5-9``, ``boneyard 1-4``, ``boneyard empty``,
    where every hidden tile is in a hand); in block mode, where the boneyard never moves,
    the tiles left in its hand (``5+ in hand``, ``3-4 in hand``, ``1-2 in hand``)."""
    view = state.observe(state.current_player)
    if view.variant.draw:
        left = view.boneyard_size
        return DRAW_PHASES[3] if left == 0 else DRAW_PHASES[2] if left < 5 else \
            DRAW_PHASES[1] if left < 10 else DRAW_PHASES[0]
    held = view.hand_sizes[view.player]
    return BLOCK_PHASES[2] if held < 3 else BLOCK_PHASES[1] if held < 5 else BLOCK_PHASES[0]


def domino_phases(variant) -> tuple:
    """:func:`domino_phase`'s names in a hand of ``variant``, in the order of play."""
    return DRAW_PHASES if variant.draw else BLOCK_PHASES


def _render(state, viewer=None) -> str:
    """The table as text; hands other than ``viewer``'s are hidden (None: every hand shown)."""
    return render(state, viewer)


def _action_name(state, action: int) -> str:
    return state.action_name(action)


def _check_variant(state, variant, flags: str):
    if state.variant != variant:
        raise PipslabError(f"the position is {state.variant.name}, not {variant.name} (see {flags})")
    return state


def _max_length(variant) -> int:
    """Placements, draws, and passes (at most a round of them before each placement or
    draw, and one at the end) of one hand."""
    v = variant
    drawn = v.set_size - v.players * v.hand_size if v.draw else 0
    return v.set_size + drawn + v.players * (v.set_size + drawn + 1)


def _columns() -> Dict[str, Any]:
    """The outcome columns every domino game's ``info`` carries, not over."""
    return {"blocked": False, "passes": 0, "draws": 0}


def _hand_outcome(state, extra: Dict[str, Any]) -> Outcome:
    """A hand (a Troshin hand): the engine's returns, points and pips."""
    return outcome_from_returns(state.returns(), state.variant.teams, points=state.points(),
                                pips_left=state.pips_left(), extra=extra)


# ------------------------------------------------------------------ the exact solver
# What the exact solver (pipslab.agents.solver, solver_compiled) plays, as data: a line
# (two ends), two sides (2 players, or 4 in pairs), single hands, and a scoring rule whose
# result is the solver's (win/draw/loss, then the count margin of Troshin's team points).
SOLVER_LAYOUTS = ("line",)
SOLVER_SCORINGS = ("result", "troshin")


def solver_refusal(variant, match: bool = False) -> Optional[str]:
    """None when the exact solver plays ``variant`` (a hand of it; ``match``: a whole
    match, which it does not), else one line saying why not."""
    v = variant
    if match:
        return f"no exact solver for {v.name}-match: the solver plays single hands, not a match (drop --match)"
    if v.layout not in SOLVER_LAYOUTS or v.n_ends != 2:
        return (f"no exact solver for {v.name}: it is not a line game (the solver handles line games, "
                f"Happy and Troshin, not a {v.layout})")
    if v.players != 2 and not v.pairs:
        return (f"no exact solver for {v.name}: {v.players} players each for themselves are not two sides "
                "(2 players, or 4 in pairs), so the game is not zero-sum between two sides (a paranoid or "
                "max-n search would answer another question)")
    if v.scoring not in SOLVER_SCORINGS:
        return (f"no exact solver for {v.name}: its scoring rule {v.scoring!r} is not one the solver "
                f"values ({', '.join(SOLVER_SCORINGS)})")
    return None


# ------------------------------------------------------------------ happy
def happy_outcome(state) -> Outcome:
    """+1/−1/0; Happy's points are its returns (the engine's ``points()``)."""
    return outcome_from_returns(state.returns(), state.variant.teams, pips_left=state.pips_left(),
                                extra=_events_columns(state))


def _happy(o: Mapping[str, Any]):
    """The Happy variant of the options: ``mode``, and the set (``max_pip``) and hand size."""
    return happy_variant(o["mode"], o.get("max_pip") or 6, o.get("hand_size"))


HAPPY = Game(
    name="happy",
    description="Happy Games 2-player dominoes (RULES §2), block or draw mode",
    options_spec=(Option("mode", str, "block", choices=("block", "draw"), help="Happy dominoes mode",
                         always=True, flag=True),
                  Option("max_pip", int, 6, low=2, high=6,
                         help="play with the double-N set (2: 6 tiles, 3: 10 tiles; same rules, a game small "
                              "enough for exact equilibrium computation)"),
                  Option("hand_size", int, None, low=1, high=14,
                         help="tiles dealt to each seat (default 7 with the double-six, else a third of the set)")),
    seats=2,
    check=_happy,
    num_actions=lambda o: _happy(o).num_actions,
    label=lambda o: _happy(o).name,
    make_state=lambda rng, o: deal(_happy(o), rng),
    parse_position=lambda text, o, rng: _check_variant(parse_position(text), _happy(o),
                                                       "--mode, --option max_pip/hand_size"),
    format_position=format_position,
    outcome=happy_outcome,
    render=_render,
    action_name=_action_name,
    encoder=lambda o: Encoder(HAPPY_SIZE, encode_view, layout=HAPPY_LAYOUT),
    family=FAMILY,
    phase=domino_phase,
    phase_names=lambda o: domino_phases(_happy(o)),
    env_id="pipslab/HappyDominoes-v0",
    utility_sum=0.0,
    max_length=lambda o: _max_length(_happy(o)),
    info_columns=lambda o: _columns(),
    solver=lambda o: solver_refusal(_happy(o)),
)


# ------------------------------------------------------------------ troshin
_PLAYERS = Option("players", int, 2, low=2, high=4, help="seats at the table", flag=True)


def _troshin(o: Mapping[str, Any]):
    return troshin_variant(o["players"], o["pairs"])


def _troshin_state(rng, o):
    variant = _troshin(o)
    return new_match(variant, rng) if o["match"] else deal(variant, rng)


def _troshin_position(text, o, rng):
    state = parse_position(text, rng=rng if rng is not None else np.random.default_rng(0))
    _check_variant(state, _troshin(o), "--players/--pairs")
    if isinstance(state, TroshinMatch) != bool(o["match"]):
        raise PipslabError("a match position (match=…) goes with the option match=true (--match), and "
                           "match=true needs one")
    return state


def troshin_columns(o: Mapping[str, Any]) -> Dict[str, Any]:
    out = _columns()
    if o["match"]:
        out.update(match=True, hands=0, match_winner=-1)
        out.update((f"score_team{t}", 0) for t in range(_troshin(o).n_teams))
    return out


def troshin_live_info(state, seat: int) -> Dict[str, Any]:
    """A hand: each seat's Troshin points (0 until the hand ends).  A match: each seat's
    side's score (``points_<s>``), ``score_team<t>`` and ``hands`` (started)."""
    if not isinstance(state, TroshinMatch):
        return {f"points_{s}": float(p) for s, p in enumerate(state.points())}
    teams = state.variant.teams
    info: Dict[str, Any] = {f"points_{s}": float(state.scores[teams[s]]) for s in range(len(teams))}
    info.update((f"score_team{t}", int(score)) for t, score in enumerate(state.scores))
    info["hands"] = int(state.hand_index)
    return info


def troshin_outcome(state) -> Outcome:
    """A hand: as Happy, with Troshin's points of each seat's side.  A match: the match's
    returns, the sides' cumulative scores as points, the last hand's pips, and the columns
    ``match``, ``hands``, ``match_winner`` (a team), ``score_team<t>``."""
    if not isinstance(state, TroshinMatch):
        extra = _events_columns(state)
        extra.update((f"points_{seat}", p) for seat, p in enumerate(state.points()))
        return _hand_outcome(state, extra)
    r = state.result()
    extra = {"blocked": bool(state.blocked), "match": True, "hands": r["hands"], "match_winner": r["match_winner"]}
    extra.update(_events_columns(state))
    extra.update((f"points_{seat}", p) for seat, p in enumerate(r["points"]))
    extra.update((f"score_team{team}", score) for team, score in enumerate(r["scores"]))
    return outcome_from_returns(r["returns"], state.variant.teams, points=r["points"], pips_left=r["pips_left"],
                                extra=extra)


TROSHIN = Game(
    name="troshin",
    description="Troshin's draw game (RULES §3) for 2-4 players or two pairs, a hand or a match to 100",
    options_spec=(_PLAYERS,
                  Option("pairs", bool, False, help="four players as two pairs (partners opposite)", flag=True),
                  Option("match", bool, False, help="a game is a whole match to 100", flag=True)),
    seats=lambda o: o["players"],
    team_of=lambda o: _troshin(o).teams,
    check=_troshin,
    num_actions=lambda o: _troshin(o).num_actions,
    label=lambda o: _troshin(o).name + ("-match" if o["match"] else ""),
    make_state=_troshin_state,
    parse_position=_troshin_position,
    format_position=format_position,
    outcome=troshin_outcome,
    render=_render,
    action_name=_action_name,
    encoder=lambda o: Encoder(TROSHIN_SIZE, encode_troshin_view, layout=TROSHIN_LAYOUT),
    family=FAMILY,
    phase=domino_phase,
    phase_names=lambda o: domino_phases(_troshin(o)),
    env_id="pipslab/TroshinDominoes-v0",
    utility_sum=0.0,
    max_length=lambda o: 0 if o["match"] else _max_length(_troshin(o)),   # a match: no bound
    info_columns=troshin_columns,
    live_info=troshin_live_info,
    solver=lambda o: solver_refusal(_troshin(o), o["match"]),
)


# ------------------------------------------------------------------ triple
def triple_outcome(state) -> Outcome:
    """Returns split among the seats ranked first; points = winnings − penalties; columns
    ``winnings_<s>``, ``penalties_<s>``, ``rank_<s>`` and ``winners`` (``"0+2"``)."""
    extra = _events_columns(state)
    r = state.result()
    for seat in range(len(r["points"])):
        extra[f"winnings_{seat}"] = r["winnings"][seat]
        extra[f"penalties_{seat}"] = r["penalties"][seat]
        extra[f"points_{seat}"] = r["points"][seat]
        extra[f"rank_{seat}"] = r["ranks"][seat]
    extra["winners"] = "+".join(map(str, r["winners"]))
    return outcome_from_returns(r["returns"], state.variant.teams, points=r["points"], pips_left=r["pips_left"],
                                extra=extra)


def triple_columns(o: Mapping[str, Any]) -> Dict[str, Any]:
    out = _columns()
    for seat in range(o["players"]):
        out.update({f"winnings_{seat}": 0, f"penalties_{seat}": 0, f"rank_{seat}": 0})
    return out


def triple_live_info(state, seat: int) -> Dict[str, Any]:
    """Every seat's ``winnings_<s>``, ``penalties_<s>`` and ``points_<s>`` (their
    difference), live: both score columns are public."""
    info: Dict[str, Any] = {}
    for s in range(len(state.winnings)):
        info[f"winnings_{s}"] = int(state.winnings[s])
        info[f"penalties_{s}"] = int(state.penalties[s])
        info[f"points_{s}"] = float(state.winnings[s] - state.penalties[s])
    return info


TRIPLE = Game(
    name="triple",
    description="Triple domino for luck (RULES §4), 2-4 players, spinner layout",
    options_spec=(_PLAYERS,),
    seats=lambda o: o["players"],
    check=lambda o: triple_variant(o["players"]),
    num_actions=lambda o: triple_variant(o["players"]).num_actions,
    label=lambda o: triple_variant(o["players"]).name,
    make_state=lambda rng, o: deal(triple_variant(o["players"]), rng),
    parse_position=lambda text, o, rng: _check_variant(parse_position(text, rng=rng), triple_variant(o["players"]),
                                                       "--players/--pairs"),
    format_position=format_position,
    outcome=triple_outcome,
    render=_render,
    action_name=_action_name,
    encoder=lambda o: Encoder(TRIPLE_SIZE, encode_triple_view, layout=TRIPLE_LAYOUT),
    family=FAMILY,
    phase=domino_phase,
    phase_names=lambda o: domino_phases(triple_variant(o["players"])),
    env_id="pipslab/TripleDominoes-v0",
    utility_sum=0.0,
    max_length=lambda o: _max_length(triple_variant(o["players"])),
    info_columns=triple_columns,
    live_info=triple_live_info,
    solver=lambda o: solver_refusal(triple_variant(o["players"])),
)


# ------------------------------------------------------------------ troshin6
# A variant as data only: Troshin's hand for two with six tiles each (16 in the boneyard).
# Its variant and its Game are all there is to it: the position notation, Gymnasium,
# PettingZoo, OpenSpiel, the CLI, the agents and the solver find it through the registries.
TROSHIN6_VARIANT = register_variant(troshin_variant(2).with_(name="troshin-2-h6", hand_size=6))

TROSHIN6 = Game(
    name="troshin6",
    description="Troshin's draw game (RULES §3) for two, six tiles each, one hand",
    seats=2,
    num_actions=TROSHIN6_VARIANT.num_actions,
    label=lambda o: TROSHIN6_VARIANT.name,
    make_state=lambda rng, o: deal(TROSHIN6_VARIANT, rng),
    parse_position=lambda text, o, rng: _check_variant(parse_position(text, rng=rng), TROSHIN6_VARIANT, "troshin6"),
    format_position=format_position,
    outcome=troshin_outcome,
    render=_render,
    action_name=_action_name,
    encoder=lambda o: Encoder(TROSHIN_SIZE, encode_troshin_view, layout=TROSHIN_LAYOUT),
    family=FAMILY,
    phase=domino_phase,
    phase_names=lambda o: domino_phases(TROSHIN6_VARIANT),
    utility_sum=0.0,
    max_length=_max_length(TROSHIN6_VARIANT),
    info_columns=lambda o: _columns(),
    live_info=troshin_live_info,
    solver=lambda o: solver_refusal(TROSHIN6_VARIANT),
)


for _game in (HAPPY, TROSHIN, TRIPLE, TROSHIN6):
    register_game(_game, replace=True)
