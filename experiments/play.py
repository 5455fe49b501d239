"""Play games between agents and print them move by move.

``pipslab play GAME --agents A,B [--games N] [--seed S] [--mode block|draw]``

An agent named ``human`` asks you for its moves on the terminal.

Replaying a tournament game exactly, by its ``game_id``:

* ``pipslab play --replay ID --from DIR`` — reads ``DIR/games.csv`` (seats, options,
  seeds) and checks the replay against the record;
* ``pipslab play GAME --replay ID --seed S --agents A,B`` — re-derives the seeds from the
  tournament's seed plan (``--agents`` in seat order as that game sat; ``--no-duplicate``
  if the tournament had fresh deals).
"""
from __future__ import annotations

import json
from pathlib import Path

from pipslab.envs.errors import PipslabError

from .files import atomic_write_text
from .games import add_option_flags, flag_options_given, game_spec, parse_option_items, play_game
from .seedplan import new_seat_agents
from .tournament import split_agent_list


def add_arguments(parser) -> None:
    parser.add_argument("game", nargs="?", default=None, help="game to play, e.g. happy")
    parser.add_argument("--agents", default=None, help="one agent spec per seat, comma-separated")
    parser.add_argument("--games", type=int, default=1, help="games to play (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal and the agents' choices")
    add_option_flags(parser)   # the games' own flags: --mode, --players, --pairs, --match (pipslab.envs.GAMES)
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="another game option (repeatable), as for the tournament")
    parser.add_argument("--position", default=None,
                        help="start from this position string instead of a fresh deal (dominoes notation)")
    parser.add_argument("--out", default=None, help="also write the printed games to this folder")
    parser.add_argument("--replay", type=int, default=None, metavar="GAME_ID",
                        help="replay the tournament game with this id, move by move")
    parser.add_argument("--from", dest="from_dir", default=None, metavar="DIR",
                        help="with --replay: the tournament folder whose games.csv holds the game")
    parser.add_argument("--no-duplicate", action="store_true",
                        help="with --replay and no --from: the tournament had fresh deals, not duplicate ones")
    parser.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                        help="import MODULE first (e.g. one that registers your own agents)")


def _options(game: str, ns) -> dict:
    options = flag_options_given(ns)
    options.update(parse_option_items(ns.option))
    return game_spec(game).options_for(options)


def _import(modules) -> None:
    import importlib
    for module in modules or ():
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise PipslabError(f"cannot import {module!r}: {exc}") from None


def run(ns) -> int:
    _import(ns.imports)
    if ns.replay is not None:
        return replay(ns)
    if ns.game is None:
        raise PipslabError("give the game to play, e.g. pipslab play happy --agents heaviest,random")
    if not ns.agents:
        raise PipslabError("give one agent per seat with --agents, e.g. --agents heaviest,random")
    spec = game_spec(ns.game)
    options = _options(ns.game, ns)
    if ns.position:
        options["position"] = ns.position
    names = split_agent_list(ns.agents)
    players = spec.players(options)
    if len(names) != players:
        raise PipslabError(f"{ns.game} has {players} seats: give {players} agents, got {len(names)}")
    if ns.games < 1:
        raise PipslabError("--games must be at least 1")
    new_seat_agents(names, ns.game)   # a bad agent spec fails here, before anything is printed
    if ns.position:
        spec.new_state(None, options)  # a malformed position fails here, before anything is printed
    lines = []

    def emit(text=""):
        print(text)
        lines.append(text)

    for g in range(ns.games):
        agents = new_seat_agents(names, ns.game)   # fresh for every game, as in a tournament
        emit(f"== game {g} of {spec.variant_label(options)}, seed {ns.seed}: "
             + ", ".join(f"seat {s} {a.name}" for s, a in enumerate(agents)))
        _play_printed(spec, options, agents, [ns.seed, 0, g], [ns.seed, 1, g], emit)
        emit()
    _write_out(ns, lines)
    return 0


def _play_printed(spec, options, agents, deal_seed, agent_seed, emit):
    def on_move(state, player, action):
        emit(f"seat {player} ({agents[player].name}): {spec.action_name(state, action)}")

    state, moves, _ = play_game(spec, options, agents, deal_seed, agent_seed, on_move)
    emit(spec.render(state))
    return state, moves


def _write_out(ns, lines) -> None:
    if ns.out:
        out = Path(ns.out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "games.txt", "\n".join(lines) + "\n")


def replay(ns) -> int:
    """Replay one tournament game by id, exactly as it was played."""
    from .seedplan import Plan, game_units, parse_seed_text, seeds
    lines = []

    def emit(text=""):
        print(text)
        lines.append(text)

    record = None
    if ns.from_dir:
        folder = Path(ns.from_dir)
        path = folder / "games.csv"
        if not path.exists():
            raise PipslabError(f"no games.csv in {folder}")
        manifest = folder / "run.json"
        if manifest.exists():
            _import(json.loads(manifest.read_text()).get("imports"))
        import pandas as pd
        games = pd.read_csv(path, dtype={"options": str, "winner": str, "winners": str}, keep_default_na=False)
        rows = games[games["game_id"] == ns.replay]
        if rows.empty:
            raise PipslabError(f"no game {ns.replay} in {path} (ids {games['game_id'].min()}..{games['game_id'].max()})")
        record = rows.iloc[0]
        game = str(record["game"])
        if ns.game is not None and ns.game != game:
            raise PipslabError(f"game {ns.replay} in {path} is {game}, not {ns.game}")
        options = json.loads(record["options"])
        players = int(record["players"])
        names = [str(record[f"seat{s}"]) for s in range(players)]
        deal_seed, agent_seed = parse_seed_text(record["deal_seed"]), parse_seed_text(record["agent_seed"])
        spec = game_spec(game)
    else:
        if ns.game is None or not ns.agents:
            raise PipslabError("--replay needs --from DIR, or GAME with --seed and --agents (one per seat)")
        game = ns.game
        spec = game_spec(game)
        options = _options(game, ns)
        names = split_agent_list(ns.agents)
        players = spec.players(options)
        if len(names) != players:
            raise PipslabError(f"{game} has {players} seats: give {players} agents, got {len(names)}")
        plan = Plan(2, game_units(spec, options), duplicate=not ns.no_duplicate)
        deal_seed, agent_seed = seeds(ns.seed, plan.deal_of(ns.replay), ns.replay)
    agents = new_seat_agents(names, game)   # fresh, as the tournament built them for this game
    emit(f"== game {ns.replay} of {spec.variant_label(options)}, deal seed {'-'.join(map(str, deal_seed))}, "
         f"agent seed {'-'.join(map(str, agent_seed))}: "
         + ", ".join(f"seat {s} {a.name}" for s, a in enumerate(agents)))
    state, moves = _play_printed(spec, options, agents, deal_seed, agent_seed, emit)
    if record is not None:
        out = spec.outcome(state)
        mismatches = []
        if int(record["moves"]) != moves:
            mismatches.append(f"moves {moves} (recorded {record['moves']})")
        for s, p in enumerate(out.pips_left or []):
            col = f"pips_left_{s}"
            if col in record.index and int(record[col]) != int(p):
                mismatches.append(f"seat {s} pips {p} (recorded {record[col]})")
        for s, r in enumerate(out.returns):
            col = f"return_{s}"
            if col in record.index and float(record[col]) != float(r):
                mismatches.append(f"seat {s} return {r} (recorded {record[col]})")
        if mismatches:
            raise PipslabError(f"the replay of game {ns.replay} differs from its record: {'; '.join(mismatches)}")
        emit(f"replay matches the record: {moves} moves, {record['result']}"
             + (f", winner seat {record['winner_seat']} ({record['winner']})" if record["result"] == "win" else ""))
    _write_out(ns, lines)
    return 0
