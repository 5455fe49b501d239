"""Play games between agents and print them move by move.

``pipslab play GAME --agents A,B [--games N] [--seed S] [--mode block|draw]``

An agent named ``human`` asks you for its moves on the terminal.
"""
from __future__ import annotations

from agents.registry import make_agent
from envs.errors import PipslabError

from .games import game_spec, play_game
from .tournament import split_agent_list


def add_arguments(parser) -> None:
    parser.add_argument("game", help="game to play, e.g. happy")
    parser.add_argument("--agents", required=True, help="one agent spec per seat, comma-separated")
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and the agents' choices")
    parser.add_argument("--mode", default="block", choices=["block", "draw"], help="Happy dominoes mode")
    parser.add_argument("--position", default=None,
                        help="start from this position string instead of a fresh deal (dominoes notation)")
    parser.add_argument("--out", default=None, help="also write the printed games to this folder")


def run(ns) -> int:
    spec = game_spec(ns.game)
    options = {"mode": ns.mode} if ns.game == "happy" else {}
    if ns.position:
        options["position"] = ns.position
    names = split_agent_list(ns.agents)
    players = spec.players(options)
    if len(names) != players:
        raise PipslabError(f"{ns.game} has {players} seats: give {players} agents, got {len(names)}")
    if ns.games < 1:
        raise PipslabError("--games must be at least 1")
    agents = [make_agent(n, ns.game) for n in names]
    if ns.position:
        spec.new_state(None, options)  # a malformed position fails here, before anything is printed
    lines = []

    def emit(text=""):
        print(text)
        lines.append(text)

    for g in range(ns.games):
        emit(f"== game {g} of {spec.variant_label(options)}, seed {ns.seed}: "
             + ", ".join(f"seat {s} {a.name}" for s, a in enumerate(agents)))

        def on_move(state, player, action):
            emit(f"seat {player} ({agents[player].name}): {spec.action_name(state, action)}")

        state, moves, _ = play_game(spec, options, agents, [ns.seed, 0, g], [ns.seed, 1, g], on_move)
        emit(spec.render(state))
        emit()
    if ns.out:
        from pathlib import Path
        out = Path(ns.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "games.txt").write_text("\n".join(lines) + "\n")
    return 0
