"""Golden playthroughs of every game (OpenSpiel's practice): a seeded game of each variant,
played by ``random`` seats through the game loop, as plain data — every move (seat, action,
its name), a hash of every seat's observation before each move, and the outcome.  The
files ``tests/playthroughs/NAME.json`` are checked in; ``tests/test_game_playthroughs.py`` plays the
same games again and diffs them, so any change to rules, notation, encoders or the deal is
seen.  Regenerate only for an intended change: ``.venv/bin/python tests/playthroughs/record.py``.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (game, options, seed)
CASES = {
    "happy-block": ("happy", {"mode": "block"}, 1),
    "happy-draw": ("happy", {"mode": "draw"}, 2),
    "happy-draw-max-pip-4": ("happy", {"mode": "draw", "max_pip": 4}, 3),
    "troshin-2": ("troshin", {"players": 2}, 4),
    "troshin-3": ("troshin", {"players": 3}, 5),
    "troshin-4": ("troshin", {"players": 4}, 6),
    "troshin-4-pairs": ("troshin", {"players": 4, "pairs": True}, 7),
    "troshin-2-match": ("troshin", {"players": 2, "match": True}, 8),
    "triple-2": ("triple", {"players": 2}, 9),
    "triple-4": ("triple", {"players": 4}, 10),
    "backgammon": ("backgammon", {}, 11),
}


def digest(array) -> str:
    return hashlib.sha256(np.ascontiguousarray(array, dtype=np.float32).tobytes()).hexdigest()[:16]


def play(game: str, options: dict, seed: int) -> dict:
    from pipslab.agents.registry import make_agent
    from pipslab.envs.game import get_game
    from pipslab.experiments.games import play_game
    spec = get_game(game)
    encoder = spec.observation_encoder(options)
    moves = []

    def on_move(state, player, action):
        views = [digest(encoder.encode(state.observe(s))) for s in range(len(seats))]
        moves.append([int(player), int(action), state.action_name(action), views])
    seats = [make_agent("random", game) for _ in range(spec.players(options))]
    state, n, _ = play_game(spec, options, seats, [seed, 0, 0], [seed, 1, 0], on_move=on_move)
    out = spec.outcome(state)
    return {"game": game, "options": options, "seed": seed, "moves": moves,
            "returns": [float(r) for r in out.returns], "winners": list(out.winners),
            "extra": {k: (v.item() if hasattr(v, "item") else v) for k, v in out.extra.items()}}


def main() -> int:
    for name, (game, options, seed) in CASES.items():
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump(play(game, options, seed), f, separators=(",", ":"))
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))
    raise SystemExit(main())
