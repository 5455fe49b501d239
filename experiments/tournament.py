"""Play many games between agents and tabulate who wins.

``pipslab tournament [GAME] --agents A,B,C --games N --seed S --out DIR``

Every pair of agents meets (round robin); ``--games`` is the total number of games,
spread evenly over the pairings.  With duplicate deals (the default) games come in
twins: the same deal played twice with the seats swapped, so the luck of the deal
cancels.  Prints a table per agent and writes to DIR (default ``results/tournament-GAME``):

* ``games.csv``   — one row per game (``game_id`` unique; seats, agents, seeds, moves,
  winner, remaining pips of every hand, blocked, passes, draws, duration);
* ``summary.csv`` — one row per agent: ``agent, games, wins, draws, losses, win_rate,
  win_rate_low, win_rate_high, score, avg_pips_left, avg_opp_pips_left, avg_pip_diff,
  blocked_share`` (the interval is Wilson's at 95%);
* ``pairings.csv`` and ``summary.md``.

With no arguments it runs the embedded default: Happy block dominoes, ``random``,
``heaviest`` and ``suits``, 600 games, seed 0.
"""
from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import numpy as np
import pandas as pd
from tqdm import tqdm

from agents.registry import make_agent
from envs.errors import PipslabError

from .games import game_spec, play_game

DEFAULT_AGENTS = ["random", "heaviest", "suits"]


@dataclass
class TournamentArgs:
    game: str = "happy"
    agents: List[str] = field(default_factory=lambda: list(DEFAULT_AGENTS))
    games: int = 600
    seed: int = 0
    out: Optional[str] = None
    mode: str = "block"
    duplicate: bool = True
    progress: bool = True

    def options(self) -> dict:
        return {"mode": self.mode} if self.game == "happy" else {}


# ------------------------------------------------------------------ statistics
def wilson_interval(successes: float, n: int, z: float = 1.959963984540054):
    """Wilson score interval for a proportion; (nan, nan) when n == 0."""
    if n <= 0:
        return float("nan"), float("nan")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def split_agent_list(text: str) -> List[str]:
    """``"pimc:samples=50,time=1,random"`` -> ``["pimc:samples=50,time=1", "random"]``."""
    specs: List[str] = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            raise PipslabError(f"empty agent name in {text!r}")
        if "=" in tok and ":" not in tok and specs and ":" in specs[-1]:
            specs[-1] += "," + tok
        else:
            specs.append(tok)
    return specs


# ------------------------------------------------------------------ schedule
def schedule(n_agents: int, players: int, games: int, duplicate: bool):
    """Yield ``(game_index, deal_index, seat_order)`` — seat_order[k] is the agent at seat k."""
    if players != 2:
        raise PipslabError("this tournament runs 2-seat games; multi-seat tables come with the harness issue")
    pairings = list(itertools.combinations(range(n_agents), 2))
    for i in range(games):
        if duplicate:
            deal_index, swap = i // 2, i % 2
            a, b = pairings[deal_index % len(pairings)]
        else:
            deal_index = i
            a, b = pairings[i % len(pairings)]
            swap = (i // len(pairings)) % 2
        yield i, deal_index, ((b, a) if swap else (a, b))


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# ------------------------------------------------------------------ run
def run_tournament(args: TournamentArgs):
    """Play the tournament; returns ``(games_df, summary_df, pairings_df)`` and writes the files."""
    if args.games < 1:
        raise PipslabError(f"--games must be at least 1, got {args.games}")
    spec = game_spec(args.game)
    options = args.options()
    label = spec.variant_label(options)
    if len(args.agents) < 2:
        raise PipslabError("a tournament needs at least two agents (--agents A,B)")
    if len(set(args.agents)) != len(args.agents):
        raise PipslabError(f"agent names repeat in {args.agents}: give each agent once")
    agents = [make_agent(name, args.game) for name in args.agents]
    players = spec.players(options)
    rows = []
    plan = list(schedule(len(agents), players, args.games, args.duplicate))
    for i, deal_index, order in tqdm(plan, desc=f"{label} tournament", unit="game",
                                     disable=not args.progress, leave=False):
        seat_agents = [agents[k] for k in order]
        deal_seed = [args.seed, 0, deal_index]
        agent_seed = [args.seed, 1, i]
        state, moves, seconds = play_game(spec, options, seat_agents, deal_seed, agent_seed)
        result = state.result()
        winner = result["winner"]
        row = {
            "game_id": i, "game": args.game, "variant": label, "deal_id": deal_index,
            "deal_seed": "-".join(map(str, deal_seed)), "agent_seed": "-".join(map(str, agent_seed)),
            "moves": moves,
            "winner_seat": -1 if winner is None else winner,
            "winner": "" if winner is None else seat_agents[winner].name,
            "result": "draw" if winner is None else "win",
        }
        for seat, agent in enumerate(seat_agents):
            row[f"seat{seat}"] = agent.name
        for seat, pips in enumerate(result["pips_left"]):
            row[f"pips_left_{seat}"] = pips
        row.update(spec.stats(state))
        row["duration_s"] = round(seconds, 6)
        rows.append(row)
    games_df = pd.DataFrame(rows)
    summary_df = summarize(games_df, args.agents, players)
    pairings_df = summarize_pairings(games_df, args.agents)
    out = Path(args.out or f"results/tournament-{label}")
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(out / "games.csv", games_df.to_csv(index=False))
    _atomic_write(out / "summary.csv", summary_df.to_csv(index=False))
    _atomic_write(out / "pairings.csv", pairings_df.to_csv(index=False))
    _atomic_write(out / "summary.md", f"# {label}: {args.games} games, seed {args.seed}\n\n"
                  + summary_df.to_markdown(index=False, floatfmt=".3f") + "\n\n"
                  + pairings_df.to_markdown(index=False, floatfmt=".3f") + "\n")
    return games_df, summary_df, pairings_df


def _seat_rows(games_df: pd.DataFrame, players: int) -> pd.DataFrame:
    """One row per (game, seat): the agent there, its outcome and the pips."""
    parts = []
    for seat in range(players):
        opp = [f"pips_left_{s}" for s in range(players) if s != seat]
        part = pd.DataFrame({
            "game_id": games_df["game_id"],
            "agent": games_df[f"seat{seat}"],
            "win": games_df["winner_seat"] == seat,
            "draw": games_df["winner_seat"] == -1,
            "pips_left": games_df[f"pips_left_{seat}"],
            "opp_pips_left": games_df[opp].mean(axis=1),
            "blocked": games_df["blocked"] if "blocked" in games_df else False,
        })
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def summarize(games_df: pd.DataFrame, agent_names: List[str], players: int) -> pd.DataFrame:
    seats = _seat_rows(games_df, players)
    rows = []
    for name in agent_names:
        s = seats[seats["agent"] == name]
        n = len(s)
        wins, draws = int(s["win"].sum()), int(s["draw"].sum())
        low, high = wilson_interval(wins, n)
        rows.append({
            "agent": name, "games": n, "wins": wins, "draws": draws, "losses": n - wins - draws,
            "win_rate": wins / n if n else float("nan"), "win_rate_low": low, "win_rate_high": high,
            "score": (wins + 0.5 * draws) / n if n else float("nan"),
            "avg_pips_left": s["pips_left"].mean(), "avg_opp_pips_left": s["opp_pips_left"].mean(),
            "avg_pip_diff": (s["pips_left"] - s["opp_pips_left"]).mean(),
            "blocked_share": s["blocked"].mean(),
        })
    return pd.DataFrame(rows)


def summarize_pairings(games_df: pd.DataFrame, agent_names: List[str]) -> pd.DataFrame:
    rows = []
    for a, b in itertools.combinations(agent_names, 2):
        g = games_df[((games_df["seat0"] == a) & (games_df["seat1"] == b))
                     | ((games_df["seat0"] == b) & (games_df["seat1"] == a))]
        n = len(g)
        a_wins = int((g["winner"] == a).sum())
        b_wins = int((g["winner"] == b).sum())
        low, high = wilson_interval(a_wins, n)
        rows.append({"agent": a, "opponent": b, "games": n, "wins": a_wins, "draws": n - a_wins - b_wins,
                     "losses": b_wins, "win_rate": a_wins / n if n else float("nan"),
                     "win_rate_low": low, "win_rate_high": high})
    return pd.DataFrame(rows)


def format_table(summary_df: pd.DataFrame) -> str:
    cols = ["agent", "games", "wins", "draws", "losses", "win_rate", "win_rate_low", "win_rate_high",
            "avg_pips_left", "avg_pip_diff"]
    return summary_df[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}")


# ------------------------------------------------------------------ CLI
def add_arguments(parser) -> None:
    parser.add_argument("game", nargs="?", default="happy", help="game to play (default: happy)")
    parser.add_argument("--agents", default=",".join(DEFAULT_AGENTS),
                        help="comma-separated agent specs, e.g. heaviest,random or pimc:samples=50 "
                             f"(default: {','.join(DEFAULT_AGENTS)})")
    parser.add_argument("--games", type=int, default=600, help="total games (default 600)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents' choices")
    parser.add_argument("--out", default=None, help="output folder (default results/tournament-VARIANT)")
    parser.add_argument("--mode", default="block", choices=["block", "draw"], help="Happy dominoes mode")
    parser.add_argument("--no-duplicate", action="store_true",
                        help="fresh deal every game instead of duplicate twins with seats swapped")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def run(ns) -> int:
    args = TournamentArgs(game=ns.game, agents=split_agent_list(ns.agents), games=ns.games, seed=ns.seed,
                          out=ns.out, mode=ns.mode, duplicate=not ns.no_duplicate,
                          progress=not ns.no_progress)
    games_df, summary_df, _ = run_tournament(args)
    out = args.out or f"results/tournament-{game_spec(args.game).variant_label(args.options())}"
    print(f"{game_spec(args.game).variant_label(args.options())}: {len(games_df)} games, seed {args.seed}"
          f"{', duplicate deals' if args.duplicate else ''}")
    print(format_table(summary_df))
    print(f"wrote {out}/games.csv, summary.csv, pairings.csv, summary.md")
    return 0
