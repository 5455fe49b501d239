"""``human``: asks a person on the terminal for each move (the domino games here; backgammon
registers its own ``human``, :class:`pipslab.agents.backgammon.HumanBackgammonAgent`)."""
from __future__ import annotations

import sys

import numpy as np

from pipslab.envs.dominoes.engine import action_name
from pipslab.envs.dominoes.tiles import format_tiles, tiles_of

from pipslab.envs.errors import PipslabError

from .base import Agent, Observation
from .registry import register


def ask(read, prompt: str, seat) -> str:
    """One answer from the person at ``seat``; the end of the input (Ctrl-D, a closed or
    empty stdin) is one line, not an ``EOFError`` traceback."""
    try:
        answer = read(prompt)
    except EOFError:
        if read is input:      # end the prompt's line, so the error has a line of its own
            sys.stdout.write("\n")
            sys.stdout.flush()
        raise PipslabError(f"human at seat {seat}: the input ended (Ctrl-D or a closed stdin) before a move "
                           "was given") from None
    if answer is None:   # a reader that signals the end with None
        raise PipslabError(f"human at seat {seat}: the input ended before a move was given")
    return str(answer)


class HumanAgent(Agent):
    name = "human"

    def __init__(self, read=input, write=print):
        self._read, self._write = read, write

    def act(self, observation: Observation, rng: np.random.Generator) -> int:
        view = observation.view
        names = {action_name(view.variant, a): a for a in observation.legal_actions}
        ends = f"{view.left}|{view.right}" if view.left >= 0 else "(empty table)"
        self._write(f"seat {view.player}: ends {ends}; your hand: {format_tiles(tiles_of(view.hand))}")
        self._write("legal: " + ", ".join(f"{a} = {n}" for n, a in names.items()))
        while True:
            answer = ask(self._read, "your move (id or name): ", view.player).strip()
            if answer in names:
                return names[answer]
            if answer.isascii() and answer.isdigit() and int(answer) in observation.legal_actions:
                return int(answer)
            self._write(f"{answer!r} is not legal here")


@register("human", family="dominoes")
def _make_human(game: str):
    return HumanAgent()
