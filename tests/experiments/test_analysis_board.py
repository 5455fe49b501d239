"""``pipslab serve``'s analysis board, through its JSON API (no browser; the page itself is
tested in chromium by test_serve.py): a domino position's values are ``pipslab solve
--json``'s, a backgammon roll's plays are ``pipslab moves``'s with the evaluator's own
equities, best first; a recorded tournament game (``--from DIR``) steps through the moves
``pipslab play --replay ID --from DIR`` prints; every bad request is a 4xx with one line."""
from __future__ import annotations

import json

import numpy as np
import pytest

from pipslab.agents.evaluators import OPPONENT, make_evaluator
from pipslab.agents.registry import make_agent
from pipslab.envs.backgammon import Position
from pipslab.envs.backgammon.game import PASS
from pipslab.envs.dominoes.notation import format_position
from pipslab.experiments.cli import main as cli_main
from pipslab.envs.game import get_game
from pipslab.experiments.games import play_game
from pipslab.experiments.serve import start_server
from test_serve import call, error_of


def cli_json(args, capsys):
    capsys.readouterr()
    assert cli_main(args) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def tournaments(tmp_path_factory):
    """A tiny Happy block tournament and a one-game backgammon one, as a user makes them."""
    root = tmp_path_factory.mktemp("tournaments")
    for game, agents in (("happy", "heaviest,random"), ("backgammon", "pubeval,random")):
        assert cli_main(["tournament", game, "--agents", agents, "--games", "2", "--seed", "1",
                         "--workers", "1", "--no-progress", "--out", str(root / game)]) == 0
    return root


@pytest.fixture(scope="module")
def server(tournaments):
    srv, url = start_server("127.0.0.1", 0, from_dir=tournaments / "happy")
    yield url
    srv.shutdown()
    srv.server_close()


def analyze(url, body):
    status, data, _ = call(url, "POST", "/api/analyze", body)
    assert status == 200, data
    return data


# ------------------------------------------------------------------ dominoes
def domino_positions(n=20, most_tiles=11):
    """``n`` positions of Happy block and draw: seeded deals played on by random moves until
    at most ``most_tiles`` tiles are left in the hands (small enough for a quick solve)."""
    out, seed = [], 0
    while len(out) < n:
        mode = ("block", "draw")[seed % 2]
        spec = get_game("happy")
        rng = np.random.default_rng(seed)
        state = spec.new_state(rng, spec.options_for({"mode": mode}))
        seed += 1
        while not state.is_terminal:
            if state.is_chance:
                state.apply_chance(rng)
                continue
            if sum(bin(h).count("1") for h in state.hands) <= most_tiles:
                out.append(format_position(state))
                break
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    return out


@pytest.mark.parametrize("position", domino_positions())
def test_a_domino_position_gets_pipslab_solves_values(server, position, capsys):
    got = analyze(server, {"position": position})
    want = cli_json(["solve", position, "--json"], capsys)
    assert got["complete"] and got["moves"] and got["line"]
    got.pop("seconds"), want.pop("seconds")
    assert got == want


# ------------------------------------------------------------------ backgammon
def backgammon_rolls():
    """``(Position ID, roll)`` of turns of a random game: every 9th turn, the passes, the bar
    entries and the last turn (a play that ends the game), and the opening position."""
    spec = get_game("backgammon")
    turns = []

    def on_move(state, player, action):
        if state.position == state.turn_start:
            turns.append((state.position.id, [int(d) for d in state.roll], state.legal_actions() == [PASS]))

    agents = [make_agent("random", "backgammon") for _ in range(2)]
    play_game(spec, spec.options_for({}), agents, [7, 0, 0], [7, 1, 0], on_move)
    passes = [t for t in turns if t[2]][:2]
    bar = [t for t in turns if Position.from_id(t[0])[25] > 0 and not t[2]][:3]
    assert passes and bar, "no pass or no entry from the bar in the sample: pick another seed"
    picked = [("4HPwATDgc/ABMA", [3, 1]), ("4HPwATDgc/ABMA", [1, 1])] + [t[:2] for t in turns[::9][:8] + passes + bar]
    return picked + [turns[-1][:2]]


@pytest.mark.parametrize("spec", ["td", "pubeval", pytest.param("gnubg", marks=pytest.mark.peers)])
def test_backgammon_plays_are_pipslab_moves_with_the_evaluators_equities_best_first(server, spec, capsys):
    if spec == "gnubg":
        pytest.importorskip("gnubg_nn")
    evaluator = make_evaluator("backgammon", spec)
    for pid, roll in backgammon_rolls():
        got = analyze(server, {"position_id": pid, "dice": roll, "eval": spec})
        want = cli_json(["moves", "backgammon", "--position-id", pid, "--dice", *map(str, roll), "--json"], capsys)
        assert got["position_id"] == pid and got["dice"] == roll and got["eval"] == spec
        assert sorted((p["move"], p["position_id"], p["next_position_id"]) for p in got["plays"]) == \
            sorted((p["move"], p["position_id"], p["next_position_id"]) for p in want)
        # the evaluator's own values of the positions after each play, for the player who moved
        values = evaluator.values(np.array([Position.from_id(p["next_position_id"]) for p in want]), OPPONENT)
        equity = {p["position_id"]: float(v) for p, v in zip(want, values)}
        assert [p["equity"] for p in got["plays"]] == pytest.approx([equity[p["position_id"]] for p in got["plays"]],
                                                                    abs=1e-12)
        assert all(a["equity"] >= b["equity"] for a, b in zip(got["plays"], got["plays"][1:]))
        assert f"rolled {roll[0]}-{roll[1]}" in got["board"]
    last = got["plays"][0]   # the last turn: the best play bears off the last checker, exactly won
    assert Position.from_id(last["position_id"]).borne_off == 15 and last["equity"] in (1.0, 2.0, 3.0)


def test_an_expectimax_evaluator_gives_its_searched_values(server):
    spec = "expectimax:plies=1,eval=pubeval"
    got = analyze(server, {"position_id": "4HPwATDgc/ABMA", "dice": [6, 4], "eval": spec})
    agent = make_agent(spec, "backgammon")
    for p in got["plays"]:
        row = np.array(Position.from_id(p["position_id"]), dtype=np.int64)
        assert p["equity"] == pytest.approx(agent.value(row, 1), abs=1e-12)
    assert len(got["plays"]) == len({p["position_id"] for p in got["plays"]}) > 1


# ------------------------------------------------------------------ a recorded game
def test_a_recorded_domino_game_steps_through_the_replayed_moves(server, tournaments, capsys):
    status, listing, _ = call(server, "GET", "/api/records")
    assert status == 200 and [g["id"] for g in listing["games"]] == [0, 1]
    assert listing["games"][0]["agents"] == ["heaviest", "random"]
    for gid in (0, 1):
        status, game, _ = call(server, "GET", f"/api/records/{gid}")
        assert status == 200, game
        capsys.readouterr()
        assert cli_main(["play", "--replay", str(gid), "--from", str(tournaments / "happy")]) == 0
        printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("seat ")]
        assert [f"seat {s['seat']} ({s['agent']}): {s['move']}" for s in game["steps"]] == printed
        assert len(game["steps"]) == game["moves"] == listing["games"][gid]["moves"]
        for s in game["steps"]:   # every hand open: the mover's choice among the solver's values
            data = analyze(server, {"position": s["position"]})
            assert data["to_move"] == s["seat"] and s["action"] in [m["action"] for m in data["moves"]]


def test_a_recorded_backgammon_game_steps_turn_by_turn(tournaments):
    srv, url = start_server("127.0.0.1", 0, from_dir=tournaments / "backgammon")
    try:
        status, game, _ = call(url, "GET", "/api/records/1")
        assert status == 200 and game["family"] == "backgammon", game
        steps = game["steps"]
        for a, b in zip(steps, steps[1:]):   # each play's result, turned round, is where the next turn starts
            assert Position.from_id(a["played_id"]).swap().id == b["position_id"] and a["seat"] != b["seat"]
        assert Position.from_id(steps[-1]["played_id"]).borne_off == 15
        assert steps[-1]["seat"] == game["winner_seat"]
        for s in steps[:: max(1, len(steps) // 6)]:
            data = analyze(url, {"position_id": s["position_id"], "dice": s["roll"], "eval": "pubeval"})
            played = [p for p in data["plays"] if p["position_id"] == s["played_id"]]
            assert len(played) == 1 and played[0]["move"] == s["move"]
    finally:
        srv.shutdown()
        srv.server_close()


# ------------------------------------------------------------------ refused
def dealt(game, options):
    spec = get_game(game)
    return format_position(spec.new_state(np.random.default_rng(0), spec.options_for(options)))


def test_bad_requests_get_a_4xx_with_one_line(server, monkeypatch):
    bg = {"position_id": "4HPwATDgc/ABMA", "dice": [3, 1]}
    over = "happy-block; turn=0; ends=1|0; hands=- / 0-0 0-2"
    for raw, words in ((b"{position: 1", "not valid JSON"), (b"[1]", "JSON object"), (b"", "JSON object")):
        assert words in error_of(server, "POST", "/api/analyze", raw=raw)
    for body, words in (
        ({}, "give {\"position\""),
        ({"position": 5}, "domino position string"),
        ({"position": "happy-block; turn=0; hands=2-2 / 0-0"}, "nowhere"),
        ({"position": "chess; turn=0"}, "unknown domino variant"),
        ({"position": "4HPwATDgc/ABMA"}, "no exact solver for backgammon"),
        ({"position": over}, "already over"),
        ({"position": dealt("triple", {"players": 3})}, "no exact solver for triple"),
        ({"position": dealt("troshin", {"players": 3})}, "not two sides"),
        ({"position": "happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2", "eval": "td"}, "unknown field"),
        (dict(bg, position_id="nonsense"), "Position ID"),
        (dict(bg, position_id=7), "Position ID"),
        (dict(bg, dice=[0, 3]), "1-6"),
        (dict(bg, dice=[3, 7]), "1-6"),
        (dict(bg, dice=[3]), "two dice"),
        (dict(bg, dice="3-1"), "two dice"),
        (dict(bg, dice=[True, 1]), "two dice"),
        ({"position_id": "4HPwATDgc/ABMA"}, "two dice"),
        (dict(bg, eval="nobody"), "unknown backgammon evaluator 'nobody'"),
        (dict(bg, eval=3), "evaluator"),
        (dict(bg, eval="expectimax:plies=5"), "plies"),
        (dict(bg, colour="red"), "unknown field"),
    ):
        assert words in error_of(server, "POST", "/api/analyze", body), body
    assert "at most" in error_of(server, "POST", "/api/analyze", dict(bg, dice=[1, 1], eval="rollout:100"), status=422)
    import pipslab.experiments.serve as serve
    monkeypatch.setattr(serve, "SOLVE_MAX_NODES", 50)
    big = "happy-draw; turn=1; hands=0-1 0-3 1-1 3-5 3-6 4-6 5-6 / 0-2 1-5 2-4 2-6 4-5 5-5 6-6; " \
          "boneyard=2-5 1-6 1-4 0-4 0-5 1-2 0-0 1-3 2-3 3-3 4-4 2-2 0-6 3-4"
    assert "too large for the analysis board" in error_of(server, "POST", "/api/analyze", {"position": big}, status=422)
    assert "no game '9'" in error_of(server, "GET", "/api/records/9", status=404)
    assert "no game 'x'" in error_of(server, "GET", "/api/records/x", status=404)
    assert "not allowed" in error_of(server, "GET", "/api/analyze", status=405)


def test_without_from_there_are_no_records_and_a_bad_from_is_one_line(capsys, tmp_path):
    srv, url = start_server("127.0.0.1", 0)
    try:
        assert "--from DIR" in error_of(url, "GET", "/api/records", status=404)
        status, menu, _ = call(url, "GET", "/api/evaluators")
        assert status == 200 and menu["default"] == "td" and {"td", "pubeval"} <= set(menu["backgammon"])
    finally:
        srv.shutdown()
        srv.server_close()
    for folder, words in ((tmp_path / "none", "is not a folder"), (tmp_path, "no games.csv")):
        assert cli_main(["serve", "--port", "0", "--from", str(folder)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1 and words in err, err
