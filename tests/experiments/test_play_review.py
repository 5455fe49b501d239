"""The play page's review (``pipslab serve``): after a game, the person's own decisions
valued as ``pipslab analyze`` values them — whole games played through the JSON API as
the person with a deliberately bad policy (always the lowest action id), each loss
checked against :func:`pipslab.experiments.analyze.game_rows` (what ``pipslab analyze``
writes) on the same game replayed with the same seed; a variant the reference cannot
play is ``unavailable``; ``--no-review`` gives none.  The page's review box is checked in
chromium by test_serve.py's browser test."""
from __future__ import annotations

import contextlib
import json
import time

import numpy as np
import pytest

from pipslab.agents.base import Agent
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.tiles import TILES, tiles_of
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game
from pipslab.experiments import serve
from pipslab.experiments.analyze import DecisionRecorder, game_rows, make_reference
from pipslab.experiments.cli import main as cli_main
from pipslab.experiments.games import play_game
from pipslab.experiments.serve import REVIEW_WORST, Reviewer, start_server

from test_serve import call, tile_pattern

FINAL = ("done", "error", "unavailable")


@contextlib.contextmanager
def serving(review):
    srv, url = start_server("127.0.0.1", 0, review=review)
    try:
        yield url
    finally:
        srv.app.games.end_all()
        srv.shutdown()
        srv.server_close()


@pytest.fixture(scope="module")
def server():
    """The server as ``pipslab serve``: the default references (dominoes pimc:samples=20)."""
    with serving(()) as url:
        yield url


@pytest.fixture(scope="module")
def td_server():
    """The server as ``pipslab serve --review-reference td`` (backgammon's review by td: quick)."""
    with serving(["td"]) as url:
        yield url


class Lowest(Agent):
    """The person's moves in the replay: the recorded ones, each the lowest legal id."""

    name = "human"

    def __init__(self, actions):
        self.actions, self.i = list(actions), 0

    def act(self, observation, rng):
        action = self.actions[self.i]
        assert action == min(observation.legal_actions)
        self.i += 1
        return action


def play_lowest(url, game, options, agents, seed):
    """A whole game through the API, the person always playing the lowest action id; no
    review while it is on; then polled until the review is final.  ``(game JSON, actions)``."""
    body = {"game": game, "options": options, "agents": agents, "seed": seed}
    status, data, _ = call(url, "POST", "/api/games", body)
    assert status == 201, data
    actions = []
    while data["status"] == "your-turn":
        assert data["review"] is None and data["result"] is None
        actions.append(min(m["action"] for m in data["legal"]))
        status, data, _ = call(url, "POST", f"/api/games/{data['id']}/move", {"action": actions[-1]})
        assert status == 200, data
    assert data["status"] == "over", data
    end = time.monotonic() + 120
    while data["review"] is not None and data["review"]["status"] == "running":
        assert time.monotonic() < end, data["review"]
        time.sleep(0.05)
        _, data, _ = call(url, "GET", f"/api/games/{data['id']}")
    return data, actions


def analyzed_rows(game, options, agents, human, actions, seed, reference):
    """``pipslab analyze``'s rows of the same game (game 0 of seed ``seed``: deal ``[seed, 0, 0]``,
    agents ``[seed, 1, 0]``, each decision's draws ``[seed, 6, 0, turn]``), the person's only."""
    spec = get_game(game)
    options = spec.options_for(options)
    seats = [Lowest(actions) if s == human else make_agent(a, game) for s, a in enumerate(agents)]
    recorder = DecisionRecorder(spec, agents)
    final, _, _ = play_game(spec, options, seats, [seed, 0, 0], [seed, 1, 0], recorder.on_move)
    assert seats[human].i == len(actions)
    rows = game_rows(0, recorder.decisions, make_reference(spec.family, reference), seed)
    return [r for r in rows if r["seat"] == human], recorder.decisions, final


def check_review(review, rows, reference, blunder, tol=0.0):
    """The review is ``rows``' (the losses to ``tol``: a net's float32 sums may differ in
    their last bits from thread to thread, and the losses are rounded to 6 decimals)."""
    unforced = [r for r in rows if not r["forced"]]
    losses = {r["turn"]: r["loss"] for r in unforced}
    assert review["status"] == "done" and review["reference"] == reference, review
    assert review["decisions"] == len(unforced) > 0 and review["forced"] == len(rows) - len(unforced)
    assert review["error_rate"] == pytest.approx(1000 * np.mean(list(losses.values())), abs=1e-6 + 1000 * tol)
    assert review["error_rate_low"] <= review["error_rate"] <= review["error_rate_high"]
    assert review["blunder_threshold"] == blunder
    assert review["blunders"] == sum(loss >= blunder - 1e-9 for loss in losses.values())
    # the worst: every decision that lost anything, worst first, at most REVIEW_WORST
    expected = sorted((r for r in unforced if r["loss"] > 0), key=lambda r: (-r["loss"], r["turn"]))[:REVIEW_WORST]
    assert review["worst"], "the bad policy lost nothing: pick another seed"
    assert [w["turn"] for w in review["worst"]] == [r["turn"] for r in expected]
    for w, r in zip(review["worst"], expected):
        assert w["loss"] == pytest.approx(losses[w["turn"]], abs=tol) and w["loss"] > 0
        assert (w["played"], w["best"]) == (r["choice"], r["best"]) and w["played"] != w["best"]
    return {r["turn"]: r for r in expected}


@pytest.mark.slow
def test_the_review_of_a_happy_block_game(server):
    game, options, agents, human, seed = "happy", {"mode": "block"}, ["human", "heaviest"], 0, 3
    data, actions = play_lowest(server, game, options, agents, seed)
    reference = f"pimc:samples={serve.REVIEW_SAMPLES}"
    rows, decisions, final = analyzed_rows(game, options, agents, human, actions, seed, reference)
    assert len(rows) == len(actions)   # dominoes: one decision a move
    check_review(data["review"], rows, reference, 0.5)
    by_turn = {d.turn: d for d in decisions}
    for w in data["review"]["worst"]:
        # where: the person's view then (the line and his hand), and its line of the log
        view = by_turn[w["turn"]].state.observe(human)
        assert set(w) == {"turn", "move", "line", "ends", "hand", "hand_sizes", "boneyard", "played", "best", "loss"}
        assert w["line"] == [f"{a}-{b}" for a, b in view.line]
        assert w["hand"] == [f"{a}-{b}" for a, b in (TILES[t] for t in tiles_of(view.hand))]
        assert w["ends"] == [view.left, view.right] and w["boneyard"] == view.boneyard_size
        assert data["log"][w["move"] - 1]["seat"] == human
        assert data["log"][w["move"] - 1]["move"] == w["played"]
    # the review names no tile the person never sees (the boneyard, out of play in block mode)
    text = json.dumps(data["review"])
    hidden = list(final.boneyard_tiles())
    assert hidden
    for t in hidden:
        assert not tile_pattern(t).search(text), TILES[t]


@pytest.mark.slow
def test_the_review_of_a_backgammon_game(td_server):
    game, agents, human, seed = "backgammon", ["pubeval", "human"], 1, 4
    data, actions = play_lowest(td_server, game, {}, agents, seed)
    rows, _, _ = analyzed_rows(game, {}, agents, human, actions, seed, "td")
    check_review(data["review"], rows, "td", 0.08, tol=2e-6)
    positions = {r["turn"]: r for r in rows}
    for w in data["review"]["worst"]:
        assert w["position_id"] == positions[w["turn"]]["position"]
        assert "-".join(map(str, w["dice"])) == positions[w["turn"]]["dice"]
        first = data["log"][w["move"] - 1]
        assert first["seat"] == human and first["roll"] == w["dice"]


@pytest.mark.parametrize("game, options, agents, why", [
    ("triple", {"players": 2}, ["human", "greedy"], "not a line game"),
    ("troshin", {"players": 3}, ["random", "human", "heaviest"], "not two sides"),
    ("troshin", {"players": 2, "match": True}, ["human", "heaviest"], "match"),
])
def test_a_variant_the_reference_cannot_play_gets_no_review(server, game, options, agents, why):
    data, _ = play_lowest(server, game, options, agents, 1)
    review = data["review"]
    assert review["status"] == "unavailable" and why in review["reason"], review
    assert review["reason"] and "\n" not in review["reason"] and "worst" not in review


def test_no_review_with_no_review():
    with serving(None) as url:
        data, _ = play_lowest(url, "happy", {"mode": "block"}, ["human", "heaviest"], 3)
        assert data["review"] is None


def test_a_failed_review_says_so_in_one_line(monkeypatch):
    def broken(self, session, decisions, progress):
        raise RuntimeError("the reference broke\nsecond line")

    monkeypatch.setattr(Reviewer, "review", broken)
    with serving(()) as url:
        data, _ = play_lowest(url, "happy", {"mode": "block"}, ["human", "heaviest"], 3)
        assert data["status"] == "over" and data["result"]["winners"]
        assert data["review"] == {"status": "error", "reference": "pimc:samples=20",
                                  "reason": "RuntimeError: the reference broke"}


def test_the_review_references_and_their_flags(monkeypatch, capsys):
    import importlib.util
    gnubg = importlib.util.find_spec("gnubg_nn") is not None
    assert Reviewer().specs == {"dominoes": "pimc:samples=20", "backgammon": "gnubg:plies=0" if gnubg else "td"}
    assert Reviewer(["pimc:samples=5"]).specs["dominoes"] == "pimc:samples=5"
    with pytest.raises(PipslabError, match="one reference per game family"):
        Reviewer(["pimc:samples=5", "pimc:samples=6"])
    with pytest.raises(PipslabError, match="--review-reference 'pimc:samples=0'"):
        Reviewer(["pimc:samples=0"])
    # the flags reach the server: --review-reference SPEC (repeated), --no-review, not both
    seen = []

    def fake_bind(host, port, wait, from_dir=None, review=()):
        seen.append(review)
        raise PipslabError("not serving in a test")

    monkeypatch.setattr(serve, "_bind", fake_bind)
    assert cli_main(["serve", "--port", "0"]) == 2
    assert cli_main(["serve", "--port", "0", "--review-reference", "pimc:samples=7", "--review-reference", "td"]) == 2
    assert cli_main(["serve", "--port", "0", "--no-review"]) == 2
    assert seen == [[], ["pimc:samples=7", "td"], None]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        cli_main(["serve", "--no-review", "--review-reference", "td"])
    assert exit_.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_a_bad_review_reference_is_one_line(capsys):
    assert cli_main(["serve", "--port", "0", "--review-reference", "pimc:worlds=3"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "--review-reference 'pimc:worlds=3'" in err, err
