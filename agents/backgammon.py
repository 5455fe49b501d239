"""Backgammon agents: afterstate players that pick a whole play, then make it checker by
checker.

Every agent here chooses among :func:`pipslab.envs.backgammon.legal_plays` (each play with the
position it leads to; the compiled generator lists the same plays in the same order) and
then emits the play's checker moves one action at a time; the plan is cached keyed by
(position, dice left), so the next calls of the same turn just read it.  Registered
names (``make_agent(name, "backgammon")``):

* ``pubeval`` -- Tesauro's public linear evaluator (his published weights), the classic
  benchmark opponent: picks the play whose afterstate scores highest, with the race
  weights when the position before the move has no contact.
* ``race`` -- a small hand-written heuristic: hit, make points (home points first), keep
  blots out of reach, and run when ahead in the race; in a pure race, fewest pips and
  most checkers off.
* ``gnubg`` -- GNU Backgammon's 0-ply neural net via ``gnubg_nn.best_move`` (evaluation
  only; needs the ``gnubg-nn`` package from the ``[bench]`` extra).
* ``random`` (in :mod:`pipslab.agents.random_agent`) plays uniformly over the checker moves.
"""
from __future__ import annotations

from typing import Dict, List, Sequence

import numpy as np

from pipslab.envs.backgammon import PASS, Play, Position
from pipslab.envs.backgammon.game import whole_plays
from pipslab.envs.backgammon.moves import apply_segments, apply_step
from pipslab.envs.errors import PipslabError

from .base import Agent, Observation
from .registry import register


def plan_actions(position: Position, dice: Sequence[int], play: Play) -> Dict[tuple, int]:
    """``{(position, dice left): action}`` along the checker moves of ``play``."""
    plan = {}
    b = list(position)
    left = list(dice)
    for s, d, _ in play.steps:
        plan[(tuple(b), tuple(left))] = (s - 1) * 6 + d - 1
        apply_step(b, s, d)
        left.remove(d)
    return plan


class AfterstateAgent(Agent):
    """Base class: implement :meth:`choose_play` (``plays`` is never empty)."""

    def __init__(self):
        self._plan: Dict[tuple, int] = {}

    def reset(self, seat: int) -> None:
        self._plan = {}

    def choose_play(self, view, plays: List[Play], rng: np.random.Generator) -> Play:
        raise NotImplementedError

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        legal = list(observation.legal_actions)
        if legal == [PASS]:
            return PASS
        view = observation.view
        key = (tuple(view.position), tuple(view.dice))
        action = self._plan.get(key)
        if action is not None and action in legal:
            return action
        plays = whole_plays(view.position, view.dice)     # legal_plays, compiled
        play = self.choose_play(view, plays, rng)
        self._plan = plan_actions(view.position, view.dice, play)
        return self._plan[key]


# ---------------------------------------------------------------------- pubeval
# Tesauro's pubeval weights (published by G. Tesauro, IBM, as a public benchmark):
# 122 inputs, 5 per point seen from the mover's point 24 down to 1, then the opponent's
# bar and the mover's checkers off.
_W_RACE = np.array([
    .00000, -.17160, .27010, .29906, -.08471, .00000, -1.40375, -1.05121, .07217, -.01351,
    .00000, -1.29506, -2.16183, .13246, -1.03508, .00000, -2.29847, -2.34631, .17253, .08302,
    .00000, -1.27266, -2.87401, -.07456, -.34240, .00000, -1.34640, -2.46556, -.13022, -.01591,
    .00000, .27448, .60015, .48302, .25236, .00000, .39521, .68178, .05281, .09266,
    .00000, .24855, -.06844, -.37646, .05685, .00000, .17405, .00430, .74427, .00576,
    .00000, .12392, .31202, -.91035, -.16270, .00000, .01418, -.10839, -.02781, -.88035,
    .00000, 1.07274, 2.00366, 1.16242, .22520, .00000, .85631, 1.06349, 1.49549, .18966,
    .00000, .37183, -.50352, -.14818, .12039, .00000, .13681, .13978, 1.11245, -.12707,
    .00000, -.22082, .20178, -.06285, -.52728, .00000, -.13597, -.19412, -.09308, -1.26062,
    .00000, 3.05454, 5.16874, 1.50680, 5.35000, .00000, 2.19605, 3.85390, .88296, 2.30052,
    .00000, .92321, 1.08744, -.11696, -.78560, .00000, -.09795, -.83050, -1.09167, -4.94251,
    .00000, -1.00316, -3.66465, -2.56906, -9.67677, .00000, -2.77982, -7.26713, -3.40177, -12.32252,
    .00000, 3.42040])
_W_CONTACT = np.array([
    .25696, -.66937, -1.66135, -2.02487, -2.53398, -.16092, -1.11725, -1.06654, -.92830, -1.99558,
    -1.10388, -.80802, .09856, -.62086, -1.27999, -.59220, -.73667, .89032, -.38933, -1.59847,
    -1.50197, -.60966, 1.56166, -.47389, -1.80390, -.83425, -.97741, -1.41371, .24500, .10970,
    -1.36476, -1.05572, 1.15420, .11069, -.38319, -.74816, -.59244, .81116, -.39511, .11424,
    -.73169, -.56074, 1.09792, .15977, .13786, -1.18435, -.43363, 1.06169, -.21329, .04798,
    -.94373, -.22982, 1.22737, -.13099, -.06295, -.75882, -.13658, 1.78389, .30416, .36797,
    -.69851, .13003, 1.23070, .40868, -.21081, -.64073, .31061, 1.59554, .65718, .25429,
    -.80789, .08240, 1.78964, .54304, .41174, -1.06161, .07851, 2.01451, .49786, .91936,
    -.90750, .05941, 1.83120, .58722, 1.28777, -.83711, -.33248, 2.64983, .52698, .82132,
    -.58897, -1.18223, 3.35809, .62017, .57353, -.07276, -.36214, 4.37655, .45481, .21746,
    .10504, -.61977, 3.54001, .04612, -.18108, .63211, -.87046, 2.47673, -.48016, -1.27157,
    .86505, -1.11342, 1.24612, -.82385, -2.77082, 1.23606, -1.59529, .10438, -1.30206, -4.11520,
    5.62596, -2.75800])
assert _W_RACE.shape == (122,) and _W_CONTACT.shape == (122,)
_W_RACE.setflags(write=False)
_W_CONTACT.setflags(write=False)
#: pubeval's weights, read-only: with contact, and in a race (for compiled rollouts)
PUBEVAL_CONTACT, PUBEVAL_RACE = _W_CONTACT, _W_RACE


def pubeval_inputs(positions: np.ndarray) -> np.ndarray:
    """The 122 pubeval inputs of afterstates ``positions`` (k x 26, mover's side)."""
    P = np.asarray(positions, dtype=np.int64).reshape(-1, 26)
    n = P[:, 24:0:-1]                        # input block j (0..23) is point 24 - j
    x = np.zeros((P.shape[0], 122))
    blocks = x[:, :120].reshape(-1, 24, 5)
    blocks[:, :, 0] = n == -1               # a lone opposing checker
    blocks[:, :, 1] = n == 1                # my blot
    blocks[:, :, 2] = n >= 2                # my point
    blocks[:, :, 3] = n == 3
    blocks[:, :, 4] = np.where(n >= 4, (n - 3) / 2.0, 0.0)
    x[:, 120] = -P[:, 0] / 2.0              # opponent's checkers on the bar
    mine = np.clip(P[:, 1:], 0, None).sum(axis=1)
    x[:, 121] = (15 - mine) / 15.0          # my checkers off
    return x


def pubeval_scores(positions, race: bool) -> np.ndarray:
    """pubeval's score of each afterstate (higher is better for the mover); a position
    with all 15 checkers off scores +inf."""
    P = np.asarray(positions, dtype=np.int64).reshape(-1, 26)
    scores = pubeval_inputs(P) @ (_W_RACE if race else _W_CONTACT)
    done = np.clip(P[:, 1:], 0, None).sum(axis=1) == 0
    scores[done] = np.inf
    return scores


class PubevalAgent(AfterstateAgent):
    name = "pubeval"

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        race = Position.is_race(view.turn_start)
        scores = pubeval_scores([p.position for p in plays], race)
        return plays[int(np.argmax(scores))]


# ---------------------------------------------------------------------- race heuristic
class RaceAgent(AfterstateAgent):
    """Hand-written heuristic: see the module docstring.  ``run_lead`` is the pip lead
    (in pips) from which it runs its back checkers home."""

    name = "race"

    def __init__(self, run_lead: int = 8):
        super().__init__()
        self.run_lead = run_lead

    def score(self, p: Position) -> float:
        my_pips, opp_pips = p.pip_count(), p.opp_pip_count()
        if p.is_race():
            wasted = sum(1 for i in range(1, 7) if p[i] == 0 and any(p[j] > 0 for j in range(i + 1, 7)))
            return -my_pips + 4.0 * p.borne_off - 0.5 * wasted
        s = 0.0
        s += 4.0 * p.opp_bar + 0.25 * (opp_pips - my_pips)
        for i in range(1, 25):
            v = p[i]
            if v >= 2:
                s += 3.0 if i <= 6 else 2.5 if i in (7, 18, 20) else 1.0
                if v > 3:
                    s -= 0.3 * (v - 3)
            elif v == 1:
                # a blot: what it costs (25 - i pips) if an opposing checker is in reach
                reach = p[0] < 0 or any(p[j] < 0 for j in range(max(0, i - 12), i))
                if reach:
                    s -= 1.5 + 0.12 * (25 - i)
        if opp_pips - my_pips >= self.run_lead:
            s -= 1.0 * sum(v for v in p[13:25] if v > 0)       # run the back checkers
        return s

    def choose_play(self, view, plays, rng):
        scores = [self.score(p.position) for p in plays]
        return plays[int(np.argmax(scores))]


# ---------------------------------------------------------------------- gnubg
def gnubg_module():
    """The ``gnubg_nn`` module (GNU BG's nets), or one line saying how to install it."""
    try:
        import gnubg_nn
    except ImportError:
        raise PipslabError(
            "the gnubg agent needs the gnubg-nn package: pip install 'pipslab[bench]'") from None
    return gnubg_nn


class GnubgAgent(AfterstateAgent):
    """GNU Backgammon's 0-ply evaluation (``gnubg_nn.best_move``); for evaluation only."""

    name = "gnubg"

    def __init__(self):
        super().__init__()
        self._g = gnubg_module()
        self._fallback = PubevalAgent()

    def choose_play(self, view, plays, rng):
        if len(plays) == 1:
            return plays[0]
        if view.position != view.turn_start or not view.roll:
            return self._fallback.choose_play(view, plays, rng)   # mid-turn re-plan
        a, b = view.roll
        moves = self._g.best_move(view.position.to_gnubg(), int(a), int(b))
        target = apply_segments(view.position, [(f, t) for f, t in moves])
        for play in plays:
            if play.position == target:
                return play
        raise PipslabError(f"gnubg chose {moves}, which is not among our legal plays "
                           f"of {view.position.id} {a}-{b}")


# ---------------------------------------------------------------------- human
class HumanBackgammonAgent(AfterstateAgent):
    """Asks a person on the terminal for a whole play: its number in the listed plays or
    standard notation (``8/5 6/5``, ``bar/22``, ``6/off``, ``24/13``), then makes it
    checker by checker.  Not registered under its own name: the ``human`` agent
    (:mod:`pipslab.agents.human`) can hand backgammon games to it."""

    name = "human"

    def __init__(self, read=input, write=print):
        super().__init__()
        self._read, self._write = read, write

    def choose_play(self, view, plays, rng):
        from pipslab.envs.backgammon import find_play, render_position

        from .human import ask

        self._write(render_position(view.position, top_label="O" if view.player == 0 else "X",
                                    bottom_label="X" if view.player == 0 else "O", dice=view.dice))
        for i, play in enumerate(plays, 1):
            self._write(f"{i:4d}. {play.notation}")
        while True:
            answer = ask(self._read, "your play (number or notation): ", view.player).strip()
            if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= len(plays):
                return plays[int(answer) - 1]
            try:
                return find_play(view.position, view.dice, answer)
            except PipslabError as exc:
                self._write(str(exc))


@register("human", games=["backgammon"])   # the domino games' human is in agents/human.py
def _make_human(game: str) -> HumanBackgammonAgent:
    return HumanBackgammonAgent()


@register("pubeval", games=["backgammon"])
def _make_pubeval(game: str) -> PubevalAgent:
    return PubevalAgent()


@register("race", games=["backgammon"])
def _make_race(game: str, run_lead: int = 8) -> RaceAgent:
    return RaceAgent(run_lead=run_lead)


@register("gnubg", games=["backgammon"])
def _make_gnubg(game: str) -> GnubgAgent:
    return GnubgAgent()
