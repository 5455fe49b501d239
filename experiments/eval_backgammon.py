"""Backgammon agent checks: a head-to-head match and pubeval's agreement with GNU BG.

    python -m pipslab.experiments.eval_backgammon match --agents pubeval,random --games 500
    python -m pipslab.experiments.eval_backgammon agreement --positions 1000

``match`` plays ``--games`` games through the tournament harness (duplicate dice, the two
agents swapping seats every game) and prints the first agent's win rate and points per
game; ``--out DIR`` keeps the tournament's folder (``games.csv``, ``run.json``, tables).
``agreement`` compares the play our ``pubeval`` agent picks with
``gnubg_nn.pub_best_move`` over positions from random games (a roll with at least two
distinct plays each).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from typing import Optional

import numpy as np

from pipslab.envs.backgammon import legal_plays, new_game
from pipslab.envs.backgammon.moves import apply_segments, dice_to_play


def match(spec_a: str, spec_b: str, games: int, seed: int = 0, gammons: bool = True,
          out: Optional[str] = None, workers: int = 1) -> dict:
    """``spec_a`` against ``spec_b`` through the tournament harness; seats alternate, each
    pair of games on the same dice.  Numbers are from ``spec_a``'s side."""
    from .tournament import TournamentArgs, run_tournament
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pipslab-match-") as tmp:
        args = TournamentArgs(game="backgammon", agents=[spec_a, spec_b], games=games, seed=seed,
                              out=out if out is not None else tmp, progress=False, plots=False, workers=workers,
                              bootstrap=0, extra_options={} if gammons else {"gammons": False})
        g = run_tournament(args).games
    mine = np.where(g["seat0"] == spec_a, g["points_0"], g["points_1"])
    wins = int((mine > 0).sum())
    return {"agent": spec_a, "opponent": spec_b, "games": games, "wins": wins,
            "win_rate": wins / games, "points_per_game": float(mine.sum()) / games,
            "gammon_wins": int((mine >= 2).sum()), "seconds": time.perf_counter() - t0}


def pubeval_agreement(positions: int, seed: int = 0) -> dict:
    """How often our pubeval picks the same afterstate as ``gnubg_nn.pub_best_move``."""
    import gnubg_nn

    from pipslab.agents.backgammon import pubeval_scores

    rng = np.random.default_rng(seed)
    n = agree = 0
    disagreements = []
    while n < positions:
        state = new_game()
        while not state.is_terminal and n < positions:
            if state.is_chance:
                state.apply_chance(rng)
                pos, roll = state.position, state.roll
                plays = legal_plays(pos, dice_to_play(roll))
                if len(plays) >= 2 and rng.random() < 0.3:
                    n += 1
                    scores = pubeval_scores([p.position for p in plays], pos.is_race())
                    ours = plays[int(np.argmax(scores))].position
                    flat = gnubg_nn.pub_best_move(pos.to_gnubg(), *roll)
                    theirs = apply_segments(pos, [(flat[i] + 1, flat[i + 1] + 1) for i in range(0, len(flat), 2)])
                    if ours == theirs:
                        agree += 1
                    elif len(disagreements) < 5:
                        disagreements.append({"position_id": pos.id, "dice": list(roll)})
            else:
                legal = state.legal_actions()
                state.apply(legal[int(rng.integers(len(legal)))])
    return {"positions": n, "agree": agree, "agreement": agree / n, "disagreements": disagreements}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("match", help="play two agents against each other (the tournament harness)")
    m.add_argument("--agents", default="pubeval,random")
    m.add_argument("--games", type=int, default=500)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--no-gammons", action="store_true")
    m.add_argument("--out", default=None, help="keep the tournament's folder here")
    m.add_argument("--workers", type=int, default=1)
    a = sub.add_parser("agreement", help="our pubeval against gnubg_nn.pub_best_move")
    a.add_argument("--positions", type=int, default=1000)
    a.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from pipslab.envs.errors import PipslabError
    try:
        return _main(ap, args)
    except PipslabError as exc:
        sys.stderr.write(f"eval_backgammon: error: {exc}\n")
        return 2


def _main(ap, args) -> int:
    if args.what == "match":
        from .cliargs import split_agent_list
        specs = split_agent_list(args.agents)
        if len(specs) != 2:
            ap.error(f"--agents: give two agents, got {len(specs)}")
        spec_a, spec_b = specs
        report = match(spec_a, spec_b, args.games, args.seed, not args.no_gammons, args.out, args.workers)
        print(f"{spec_a} vs {spec_b}: {report['wins']}/{report['games']} won "
              f"({100 * report['win_rate']:.1f}%), {report['points_per_game']:+.3f} points/game, "
              f"{report['gammon_wins']} gammons or better, {report['seconds']:.1f}s")
    else:
        report = pubeval_agreement(args.positions, args.seed)
        print(f"pubeval agrees with gnubg_nn.pub_best_move on {report['agree']}/{report['positions']} "
              f"positions ({100 * report['agreement']:.2f}%)")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
