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
import math
from pathlib import Path

from pipslab.envs.errors import PipslabError, excerpt
from pipslab.envs.game import get_game

from .checks import check_out_dir, count_arg, out_arg, seed_arg, writing_out
from .cliargs import add_option_flags, flag_options_given, parse_option_items, split_agent_list
from .files import atomic_write_text
from .games import play_game
from .seedplan import new_seat_agents


def add_arguments(parser) -> None:
    parser.add_argument("game", nargs="?", default=None, help="game to play, e.g. happy")
    parser.add_argument("--agents", default=None, help="one agent spec per seat, comma-separated")
    parser.add_argument("--games", type=count_arg(1), default=1, help="games to play (default 1)")
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the deal and the agents' choices (0 or more)")
    add_option_flags(parser)   # the games' own flags: --mode, --players, --pairs, --match (pipslab.envs.GAMES)
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="another game option (repeatable), as for the tournament")
    parser.add_argument("--position", default=None,
                        help="start from this position string instead of a fresh deal (dominoes notation)")
    parser.add_argument("--out", type=out_arg, default=None, help="also write the printed games to this folder")
    parser.add_argument("--replay", type=count_arg(0), default=None, metavar="GAME_ID",
                        help="replay the tournament game with this id, move by move")
    parser.add_argument("--from", dest="from_dir", default=None, metavar="DIR",
                        help="with --replay: the tournament folder whose games.csv holds the game")
    parser.add_argument("--no-duplicate", action="store_true",
                        help="with --replay and no --from: the tournament had fresh deals, not duplicate ones")
    parser.add_argument("--import", dest="imports", action="append", metavar="MODULE",
                        help="import MODULE first (e.g. one that registers your own agents): a module name, also one in the "
                             "current folder, or the path of a .py file")
    parser.add_argument("--puzzle", default=None, metavar="FILE|NAME",
                        help="try the puzzles of a book from `pipslab fish puzzles` (or a shipped one, e.g. happy-block)")
    parser.add_argument("--number", type=count_arg(1), default=None, metavar="I",
                        help="with --puzzle: only puzzle I")


def _options(game: str, ns) -> dict:
    options = flag_options_given(ns)
    options.update(parse_option_items(ns.option))
    return get_game(game).options_for(options)


def _import(modules) -> None:
    """``--import`` values (and a run's recorded ones): module names or ``.py`` paths
    (:mod:`pipslab.experiments.imports`)."""
    from .imports import import_user_modules
    import_user_modules(modules)


def run(ns) -> int:
    if ns.out is not None:
        check_out_dir(ns.out)   # before anything is played or printed
    _import(ns.imports)
    if ns.puzzle is not None:
        from .puzzles import play_puzzles
        play_puzzles(ns.puzzle, ns.number)
        return 0
    if ns.number is not None:
        raise PipslabError("--number picks a puzzle: it needs --puzzle")
    if ns.replay is not None:
        return replay(ns)
    if ns.game is None:
        raise PipslabError("give the game to play, e.g. pipslab play happy --agents heaviest,random")
    if not ns.agents:
        raise PipslabError("give one agent per seat with --agents, e.g. --agents heaviest,random")
    spec = get_game(ns.game)
    options = _options(ns.game, ns)
    if ns.position:
        options["position"] = ns.position
    names = split_agent_list(ns.agents)
    players = spec.players(options)
    if len(names) != players:
        raise PipslabError(f"{ns.game} has {players} seats: give {players} agents, got {len(names)}")
    if ns.games < 1:
        raise PipslabError("--games must be at least 1")
    for agent in new_seat_agents(names, ns.game):   # a bad agent spec fails here, before anything is printed
        agent.check_table(ns.game, options)
    if ns.position:
        start = spec.new_state(None, options)  # a malformed position fails here, before anything is printed
        if start.is_terminal:
            raise PipslabError(f"the position {excerpt(ns.position)} is already over: there is nothing to play")
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
        with writing_out(out):
            out.mkdir(parents=True, exist_ok=True)
            atomic_write_text(out / "games.txt", "\n".join(lines) + "\n")


def replay(ns) -> int:
    """Replay one tournament game by id, exactly as it was played."""
    from .seedplan import Plan, game_units, seeds
    lines = []

    def emit(text=""):
        print(text)
        lines.append(text)

    record = None
    if ns.from_dir:
        record, path = read_record(Path(ns.from_dir), ns.replay)
        game = record["game"]
        if ns.game is not None and ns.game != game:
            raise PipslabError(f"game {ns.replay} in {path} is {game}, not {ns.game}")
        options, names = record["options"], record["names"]
        deal_seed, agent_seed = record["deal_seed"], record["agent_seed"]
        spec = record_spec(record, ns.replay, path)
    else:
        if ns.game is None or not ns.agents:
            raise PipslabError("--replay needs --from DIR, or GAME with --seed and --agents (one per seat)")
        game = ns.game
        spec = get_game(game)
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
        check_replay(record, ns.replay, spec, state, moves)
        result = record["result"]
        winner = ""
        if result == "win" and record["winner_seat"] is not None:
            winner = f", winner seat {record['winner_seat']}" + (f" ({record['winner']})" if record["winner"] else "")
        emit(f"replay matches the record: {moves} moves, {result or 'no result recorded'}{winner}")
    _write_out(ns, lines)
    return 0


def record_spec(record: dict, game_id: int, path):
    """The game of a record (:func:`read_record`), checked to seat as many agents as it names."""
    spec = get_game(record["game"])
    players = spec.players(record["options"])
    if players != len(record["names"]):
        raise PipslabError(f"game {game_id} in {path} is damaged: players={len(record['names'])}, but "
                           f"{spec.variant_label(record['options'])} has {players} seats")
    return spec


def check_replay(record: dict, game_id: int, spec, state, moves: int) -> None:
    """Raise one line when a replayed game (its final ``state`` and number of ``moves``)
    differs from its record: the moves, a seat's pips left or return."""
    out = spec.outcome(state)
    mismatches = []
    if record["moves"] != moves:
        mismatches.append(f"moves {moves} (recorded {record['moves']})")
    for s, p in enumerate(out.pips_left or []):
        recorded = record["pips_left"].get(s)
        if recorded is not None and recorded != int(p):
            mismatches.append(f"seat {s} pips {p} (recorded {recorded})")
    for s, r in enumerate(out.returns):
        recorded = record["returns"].get(s)
        if recorded is not None and recorded != float(r):
            mismatches.append(f"seat {s} return {r} (recorded {recorded})")
    if mismatches:
        raise PipslabError(f"the replay of game {game_id} differs from its record: {'; '.join(mismatches)}")


def replay_record(record: dict, game_id: int, path, on_move=None):
    """Replay the game of a record (:func:`read_record`) exactly as it was played — fresh
    agents, its seeds — calling ``on_move(state, player, action)`` before each move, and
    check it against the record (:func:`check_replay`); a recorded forfeit must recur at
    the same move.  Returns ``(spec, final state, moves)``: a forfeit's state is the one
    before the illegal action."""
    from pipslab.envs.errors import Forfeit
    spec = record_spec(record, game_id, path)
    agents = new_seat_agents(record["names"], record["game"])
    try:
        state, moves, _ = play_game(spec, record["options"], agents, record["deal_seed"], record["agent_seed"],
                                    on_move)
    except Forfeit as lost:
        if record["result"] != "forfeit" or lost.moves != record["moves"]:
            raise PipslabError(f"the replay of game {game_id} differs from its record: seat {lost.seat} forfeits "
                               f"after {lost.moves} moves (recorded {record['result'] or 'no result'}, "
                               f"{record['moves']} moves)") from None
        return spec, lost.state, lost.moves
    if record["result"] == "forfeit":
        raise PipslabError(f"the replay of game {game_id} differs from its record: nobody forfeits "
                           f"(recorded a forfeit after {record['moves']} moves)")
    check_replay(record, game_id, spec, state, moves)
    return spec, state, moves


# ------------------------------------------------------------------ reading a record
_MAX_SEATS = 64
_REQUIRED = ("game_id", "game", "options", "players", "deal_seed", "agent_seed", "moves", "result", "winner_seat")


def _damaged(path, what: str) -> PipslabError:
    return PipslabError(f"{path} is damaged: {what}")


def _cell_int(path, game_id, col, value, low=None) -> int:
    text = str(value).strip()
    try:
        out = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            f = math.nan
        if not (math.isfinite(f) and f == int(f)):
            raise _damaged(path, f"game {game_id}: {col}={excerpt(text)} is not a whole number") from None
        out = int(f)
    if low is not None and out < low:
        raise _damaged(path, f"game {game_id}: {col}={out} (expected at least {low})")
    return out


def _read_manifest(folder: Path) -> None:
    """``run.json``'s ``imports`` (modules registering the run's agents or games), imported."""
    manifest = folder / "run.json"
    if not manifest.exists():
        return
    try:
        data = json.loads(manifest.read_text())
    except OSError as exc:
        raise PipslabError(f"cannot read {manifest}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _damaged(manifest, f"not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(data, dict):
        raise _damaged(manifest, f"expected a JSON object, got {type(data).__name__}")
    imports = data.get("imports") or []
    if not isinstance(imports, list) or not all(isinstance(m, str) for m in imports):
        raise _damaged(manifest, f"'imports' must be a list of module names, got {excerpt(imports)}")
    _import(imports)


def read_record(folder: Path, game_id: int):
    """The record of ``game_id`` in ``folder/games.csv``, every field checked: a damaged
    file or row (torn, a missing column, bad JSON, wrong types) is one line naming it."""
    import pandas as pd
    games, path = _read_games_file(folder)
    ids = pd.to_numeric(games["game_id"], errors="coerce")
    rows = games[ids == game_id]
    if rows.empty:
        valid = ids.dropna()
        known = f"ids {int(valid.min())}..{int(valid.max())}" if len(valid) else "it holds no games"
        raise PipslabError(f"no game {game_id} in {path} ({known})")
    if len(rows) > 1:
        raise _damaged(path, f"game {game_id} appears {len(rows)} times")
    return _record_of_row(path, game_id, rows.iloc[0], games.columns), path


def read_records(folder: Path):
    """``({game_id: record}, path)``: every record of ``folder/games.csv`` in one read, each
    checked as :func:`read_record` checks one (a repeated or unreadable ``game_id`` too)."""
    games, path = _read_games_file(folder)
    records = {}
    for _, row in games.iterrows():
        text = str(row["game_id"]).strip()
        if not text.isascii() or not text.isdigit():
            raise _damaged(path, f"game_id={excerpt(text)} is not a game id")
        game_id = int(text)
        if game_id in records:
            raise _damaged(path, f"game {game_id} appears more than once")
        records[game_id] = _record_of_row(path, game_id, row, games.columns)
    return records, path


def _read_games_file(folder: Path):
    """``folder/games.csv`` as text cells (the run's ``--import`` modules imported first)."""
    folder = Path(folder)
    path = folder / "games.csv"
    if not folder.is_dir():
        raise PipslabError(f"--from {excerpt(str(folder))} is not a folder")
    if not path.is_file():
        raise PipslabError(f"no games.csv in {folder}")
    _read_manifest(folder)
    import pandas as pd
    try:
        games = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise _damaged(path, "the file is empty") from None
    except pd.errors.ParserError as exc:
        raise _damaged(path, str(exc).strip().splitlines()[-1][:120]) from None
    except UnicodeDecodeError:
        raise _damaged(path, "not text (it does not decode as UTF-8)") from None
    except OSError as exc:
        raise PipslabError(f"cannot read {path}: {exc.strerror or exc}") from None
    missing = [c for c in _REQUIRED if c not in games.columns]
    if missing:
        raise _damaged(path, f"missing column(s) {', '.join(missing)}")
    return games, path


def _record_of_row(path, game_id: int, row, columns) -> dict:
    from .seedplan import parse_seed_text
    game = row["game"].strip()
    if not game:
        raise _damaged(path, f"game {game_id}: the game column is empty")
    try:
        options = json.loads(row["options"])
    except json.JSONDecodeError:
        raise _damaged(path, f"game {game_id}: options={excerpt(row['options'])} is not valid JSON") from None
    if not isinstance(options, dict):
        raise _damaged(path, f"game {game_id}: options={excerpt(row['options'])} is not a JSON object")
    players = _cell_int(path, game_id, "players", row["players"], low=1)
    if players > _MAX_SEATS:
        raise _damaged(path, f"game {game_id}: players={players} (no game has more than {_MAX_SEATS} seats)")
    seat_cols = [f"seat{s}" for s in range(players)] + [f"return_{s}" for s in range(players)]
    missing = [c for c in seat_cols if c not in columns]
    if missing:
        raise _damaged(path, f"missing column(s) {', '.join(missing)} (players={players})")
    names = [row[f"seat{s}"].strip() for s in range(players)]
    if not all(names):
        raise _damaged(path, f"game {game_id}: an agent name is empty (seats {names})")
    seeds = {}
    for col in ("deal_seed", "agent_seed"):
        try:
            seeds[col] = parse_seed_text(row[col])
        except ValueError:
            raise _damaged(path, f"game {game_id}: {col}={excerpt(row[col])} is not a seed like 0-1-5") from None
        if len(seeds[col]) != 3 or min(seeds[col]) < 0:
            raise _damaged(path, f"game {game_id}: {col}={excerpt(row[col])} is not a seed like 0-1-5")
    record = {"game": game, "options": options, "names": names, "deal_seed": seeds["deal_seed"],
              "agent_seed": seeds["agent_seed"], "moves": _cell_int(path, game_id, "moves", row["moves"], low=0),
              "pips_left": {}, "returns": {}, "result": str(row.get("result", "")).strip(), "winner_seat": None,
              "winner": str(row.get("winner", "")).strip()}
    for s in range(players):
        text = str(row.get(f"pips_left_{s}", "")).strip()
        if text:
            record["pips_left"][s] = _cell_int(path, game_id, f"pips_left_{s}", text)
        text = str(row.get(f"return_{s}", "")).strip()
        if text:
            try:
                record["returns"][s] = float(text)
            except ValueError:
                raise _damaged(path, f"game {game_id}: return_{s}={excerpt(text)} is not a number") from None
    winner_seat = str(row.get("winner_seat", "")).strip()
    if winner_seat:
        record["winner_seat"] = _cell_int(path, game_id, "winner_seat", winner_seat, low=-1)
    return record
