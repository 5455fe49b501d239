"""``pipslab serve``: the JSON API (4xx with one clear line for every malformed request; no
tile a seat may not see in any response to it; the game is the engine's game for the seed
and the moves), the command's flags, and the play page end to end in Debian's headless
chromium (a full Happy block game and a full backgammon game played by clicking, the
result shown checked against the engine, then the review of the person's moves checked
against the API's, screenshots in ``results/``), and the analysis
board's page there too (a domino position's values, a backgammon roll's top play, a
recorded tournament game stepped through; its API is test_analysis_board.py's).

The browser test needs ``chromium`` and ``chromedriver`` (Debian's ``chromium`` and
``chromium-driver``, installed by ``test.sh`` through ``tests/install_browser.sh``): without them it fails, it does not skip.
"""
from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from harness_helpers import ROOT
from pipslab.agents.base import Agent
from pipslab.agents.registry import make_agent
from pipslab.envs.dominoes.tiles import TILES, tiles_of
from pipslab.experiments.cli import main as cli_main
from pipslab.experiments.files import atomic_path
from pipslab.envs.game import get_game
from pipslab.experiments.games import play_game
from pipslab.experiments.serve import start_server


# ------------------------------------------------------------------ helpers
@pytest.fixture(scope="module")
def server():
    srv, url = start_server("127.0.0.1", 0)
    yield url
    srv.app.games.end_all()
    srv.shutdown()
    srv.server_close()


def call(url, method, path, body=None, raw=None, headers=None):
    """``(status, parsed JSON, text)`` of one request."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path.lstrip("/"), data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            text, status, ctype = r.read().decode(), r.status, r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        text, status, ctype = e.read().decode(), e.code, e.headers.get("Content-Type", "")
    if path.startswith("/api") or status >= 400:
        assert ctype.startswith("application/json"), (status, ctype, text[:200])
        return status, json.loads(text), text
    return status, None, text


def error_of(url, method, path, body=None, raw=None, status=400):
    got, data, _ = call(url, method, path, body, raw)
    assert got == status, (got, data)
    assert set(data) == {"error"} and data["error"] and "\n" not in data["error"], data
    return data["error"]


class Scripted(Agent):
    """The person's seat in a replay: the recorded actions, each checked legal."""

    name = "human"

    def __init__(self, actions):
        self.actions = list(actions)
        self.i = 0

    def act(self, observation, rng):
        action = self.actions[self.i]
        assert action in observation.legal_actions
        self.i += 1
        return action


def replay(game, options, agents, human, actions, seed, on_move=None):
    """The engine's game for ``seed`` with the person's ``actions``: ``(final_state, outcome)``."""
    spec = get_game(game)
    seat_agents = [Scripted(actions) if s == human else make_agent(a, game) for s, a in enumerate(agents)]
    state, _, _ = play_game(spec, spec.options_for(options), seat_agents, [seed, 0, 0], [seed, 1, 0], on_move)
    assert seat_agents[human].i == len(actions), "the replay did not use every recorded move"
    return state, spec.outcome(state)


def tile_pattern(t: int) -> re.Pattern:
    a, b = TILES[t]
    return re.compile(rf"(?<![0-9]){a}-{b}(?![0-9])|(?<![0-9]){b}-{a}(?![0-9])")


# ------------------------------------------------------------------ the API
def test_malformed_requests_get_a_4xx_with_one_clear_line(server):
    assert "not valid JSON" in error_of(server, "POST", "/api/games", raw=b"{game: happy")
    assert "JSON object" in error_of(server, "POST", "/api/games", raw=b"[1, 2]")
    assert "JSON object" in error_of(server, "POST", "/api/games", raw=b"")
    assert "not valid JSON" in error_of(server, "POST", "/api/games", raw=b"\xff\xfe")
    assert "unknown game 'chess'" in error_of(server, "POST", "/api/games", {"game": "chess", "agents": ["human", "x"]})
    assert "unknown field" in error_of(server, "POST", "/api/games", {"game": "happy", "agent": ["human"]})
    assert "unknown agent 'nobody'" in error_of(server, "POST", "/api/games",
                                                {"game": "happy", "agents": ["human", "nobody"]})
    assert "exactly one seat" in error_of(server, "POST", "/api/games", {"game": "happy", "agents": ["random", "random"]})
    assert "exactly one seat" in error_of(server, "POST", "/api/games", {"game": "happy", "agents": ["human", "human"]})
    assert "2 seats" in error_of(server, "POST", "/api/games", {"game": "happy", "agents": ["human"]})
    assert "mode" in error_of(server, "POST", "/api/games",
                              {"game": "happy", "options": {"mode": "chess"}, "agents": ["human", "random"]})
    assert "no option" in error_of(server, "POST", "/api/games",
                                   {"game": "happy", "options": {"colour": 1}, "agents": ["human", "random"]})
    assert "seed" in error_of(server, "POST", "/api/games", {"game": "happy", "agents": ["human", "random"], "seed": -1})
    assert "seed" in error_of(server, "POST", "/api/games", {"game": "happy", "agents": ["human", "random"], "seed": "x"})
    assert "at most" in error_of(server, "POST", "/api/games", raw=b"{" + b" " * 70000 + b"}", status=413)
    assert "no game '12345'" in error_of(server, "GET", "/api/games/12345", status=404)
    assert "no game" in error_of(server, "POST", "/api/games/12345/move", {"action": 0}, status=404)
    assert "not allowed" in error_of(server, "PUT", "/api/games", {}, status=405)
    assert "no such page" in error_of(server, "GET", "/api/nothing", status=404)
    assert "no such page" in error_of(server, "GET", "/static/../serve.py", status=404)

    status, game, _ = call(server, "POST", "/api/games", {"game": "happy", "agents": ["human", "heaviest"], "seed": 5})
    assert status == 201 and game["status"] == "your-turn"
    gid, legal = game["id"], {m["action"] for m in game["legal"]}
    illegal = next(a for a in range(58) if a not in legal)
    message = error_of(server, "POST", f"/api/games/{gid}/move", {"action": illegal})
    assert f"action {illegal} " in message and "not legal now; legal: " in message
    assert "whole number" in error_of(server, "POST", f"/api/games/{gid}/move", {"action": "6-6@left"})
    assert "whole number" in error_of(server, "POST", f"/api/games/{gid}/move", {"action": True})
    assert "body must be" in error_of(server, "POST", f"/api/games/{gid}/move", {"move": 1})
    assert "not valid JSON" in error_of(server, "POST", f"/api/games/{gid}/move", raw=b"action=1")
    # the refused requests changed nothing; the game plays on to the end, then refuses moves
    status, again, _ = call(server, "GET", f"/api/games/{gid}")
    assert status == 200 and again["moves"] == game["moves"] and again["legal"] == game["legal"]
    while game["status"] == "your-turn":
        status, game, _ = call(server, "POST", f"/api/games/{gid}/move", {"action": game["legal"][0]["action"]})
        assert status == 200
    assert game["status"] == "over" and game["legal"] == []
    assert "over" in error_of(server, "POST", f"/api/games/{gid}/move", {"action": 57}, status=409)


def test_the_page_and_its_assets_are_served(server):
    status, _, text = call(server, "GET", "/")
    assert status == 200 and "/static/play.js" in text and 'id="board"' in text and 'href="/analyze"' in text
    status, _, text = call(server, "GET", "/analyze")
    assert status == 200 and "/static/analyze.js" in text and 'id="values"' in text and 'href="/"' in text
    for name in ("common.js", "play.js", "play.css", "analyze.js", "analyze.css"):
        status, _, text = call(server, "GET", f"/static/{name}")
        assert status == 200 and len(text) > 500
    status, data, _ = call(server, "GET", "/api/games")
    games = {g["name"]: g for g in data["games"]}
    assert {"happy", "troshin", "triple", "backgammon"} <= set(games)
    assert "human" in games["backgammon"]["agents"] and "td" in games["backgammon"]["agents"]
    assert [o["name"] for o in games["happy"]["options"]][:1] == ["mode"]


@pytest.mark.parametrize("game, options, agents, human, seeds", [
    ("happy", {"mode": "block"}, ["random", "human"], 1, range(4)),
    ("happy", {"mode": "draw"}, ["human", "suits"], 0, range(4)),
    ("troshin", {"players": 3}, ["random", "human", "heaviest"], 1, range(2)),
    ("triple", {"players": 2}, ["human", "greedy"], 0, range(2)),
])
def test_no_response_names_a_tile_the_person_may_not_see(server, game, options, agents, human, seeds):
    """Whole games through the API, the person's moves drawn from a seeded generator: no
    response mentions a tile then held by another seat or lying in the boneyard (the hands
    are turned up at the end, the boneyard never), every tile of the person's own hand is
    in it (so the check can see tiles), and the result is the engine's for that seed."""
    for seed in seeds:
        rng = np.random.default_rng(seed)
        status, data, text = call(server, "POST", "/api/games",
                                  {"game": game, "options": options, "agents": agents, "seed": seed})
        assert status == 201, data
        texts, actions = [text], []
        while data["status"] == "your-turn":
            action = data["legal"][int(rng.integers(len(data["legal"])))]["action"]
            actions.append(action)
            status, data, text = call(server, "POST", f"/api/games/{data['id']}/move", {"action": action})
            assert status == 200, data
            texts.append(text)
        assert data["status"] == "over", data
        # the engine's states at the person's decisions: response k showed decision k
        hidden, own = [], []

        def on_move(state, player, action):
            if player == human:
                hand = getattr(state, "hand", state)
                held = 0
                for p, h in enumerate(hand.hands):
                    if p != human:
                        held |= h
                for t in hand.boneyard_tiles():
                    held |= 1 << t
                hidden.append(held)
                own.append(hand.hands[human])

        final, outcome = replay(game, options, agents, human, actions, seed, on_move)
        end = getattr(final, "hand", final)
        hidden.append(sum(1 << t for t in end.boneyard_tiles()))   # the end: hands up, boneyard hidden
        own.append(end.hands[human])
        assert len(hidden) == len(texts) and any(hidden)
        for k, (text, held, mine) in enumerate(zip(texts, hidden, own)):
            assert held & mine == 0
            for t in tiles_of(held):
                assert not tile_pattern(t).search(text), (game, seed, k, TILES[t], text[:400])
            for t in tiles_of(mine):
                assert tile_pattern(t).search(text), (game, seed, k, TILES[t])
        assert data["result"]["returns"] == list(outcome.returns)
        assert data["result"]["pips_left"] == list(outcome.pips_left)
        assert data["result"]["winners"] == list(outcome.winners)
        assert len(data["log"]) == data["moves"] > len(actions)


def test_the_api_game_is_the_engine_game_for_the_seed(server):
    """Backgammon through the API (the person always plays the last legal move): the same
    result and pips as play_game with the same seed and moves, and the log holds every roll
    and move, in the game's own names."""
    agents, human, seed = ["human", "pubeval"], 0, 11
    status, data, _ = call(server, "POST", "/api/games", {"game": "backgammon", "agents": agents, "seed": seed})
    actions = []
    while data["status"] == "your-turn":
        view = data["view"]
        assert view["on_roll"] == human and view["dice"] and sum(map(abs, view["points"])) <= 30
        actions.append(data["legal"][-1]["action"])
        status, data, _ = call(server, "POST", f"/api/games/{data['id']}/move", {"action": actions[-1]})
    assert data["status"] == "over"
    names = []
    final, outcome = replay("backgammon", {}, agents, human, actions, seed,
                            lambda s, p, a: names.append(s.action_name(a)))
    assert [e["move"] for e in data["log"]] == names
    assert sum("roll" in e for e in data["log"]) == outcome.extra["turns"]
    assert data["result"]["returns"] == list(outcome.returns)
    assert data["result"]["points"] == list(outcome.points)
    assert data["result"]["pips_left"] == list(outcome.pips_left)


def test_while_an_agent_thinks_the_person_waits(monkeypatch):
    """A slow agent: the request answers ``waiting`` (no legal moves, the move refused with
    409) after the server's wait, and a later GET finds the person's turn."""
    import pipslab.experiments.serve as serve
    gate = threading.Event()

    class Gated(Agent):
        def act(self, observation, rng):
            assert gate.wait(30)
            return observation.legal_actions[0]

    real = serve.make_agent
    monkeypatch.setattr(serve, "make_agent", lambda spec, game: Gated() if spec == "gated" else real(spec, game))
    srv, url = start_server("127.0.0.1", 0, wait=0.2)
    try:
        status, data, _ = call(url, "POST", "/api/games", {"game": "happy", "agents": ["human", "gated"], "seed": 1})
        assert status == 201
        if data["status"] == "your-turn":   # the person opened: the agent thinks next
            status, data, _ = call(url, "POST", f"/api/games/{data['id']}/move", {"action": data["legal"][0]["action"]})
        assert data["status"] == "waiting" and data["legal"] == [] and data["result"] is None
        assert "not your turn" in error_of(url, "POST", f"/api/games/{data['id']}/move", {"action": 0}, status=409)
        gate.set()
        end = time.monotonic() + 20
        while data["status"] == "waiting" and time.monotonic() < end:
            status, data, _ = call(url, "GET", f"/api/games/{data['id']}")
        assert data["status"] in ("your-turn", "over") and data["moves"] >= 1
    finally:
        gate.set()
        srv.app.games.end_all()
        srv.shutdown()
        srv.server_close()


# ------------------------------------------------------------------ the command
def test_serve_flags_and_a_port_in_use_are_one_line_and_exit_2(capsys):
    for args, words in ((["--port", "http"], "not a port number"), (["--port", "70000"], "not a port number"),
                        (["--colour", "red"], "unrecognized arguments")):
        with pytest.raises(SystemExit) as exit_:
            cli_main(["serve", *args])
        out, err = capsys.readouterr()
        assert exit_.value.code == 2 and out == "", (args, out)
        assert len(err.strip().splitlines()) == 1 and words in err, (args, err)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert cli_main(["serve", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"pipslab: error: port {port} on 127.0.0.1 is in use (--port 0 picks a free one)\n"


@pytest.mark.slow
def test_serve_port_0_prints_its_address_and_serves():
    proc = subprocess.Popen([sys.executable, "-m", "pipslab.experiments.cli", "serve", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match and int(match.group(1)) > 0, line
        status, data, _ = call(match.group(0), "GET", "/api/games")
        assert status == 200 and data["games"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ------------------------------------------------------------------ the page in a browser
RESULTS = Path(ROOT) / "results"


@pytest.fixture(scope="module")
def browser():
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver_bin, ("the play page's test needs Debian's chromium and chromium-driver: "
                                     "bash tests/install_browser.sh (or apt-get install -y chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1000,1150", "--disable-extensions"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_bin), options=options)
    yield driver
    driver.quit()


def _page(driver):
    return driver.execute_script("const d = document.body.dataset; return [d.status, d.moves];")


def _wait(driver, done, what, timeout=60.0):
    end = time.monotonic() + timeout
    while True:
        got = _page(driver)
        if done(got):
            return got
        if time.monotonic() > end:
            error = driver.execute_script("return document.getElementById('error').textContent")
            raise AssertionError(f"the page did not get to {what}: status/moves {got}; error {error!r}")
        time.sleep(0.01)


def play_in_browser(driver, url, game, agents, seed, midgame_shot=None, midgame_at=6):
    """Start a game from the page's form and play it to the end by clicking the first legal
    move each turn (with a screenshot ``midgame_shot`` before the ``midgame_at``-th click);
    returns the action ids clicked."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    driver.get(url)
    _wait(driver, lambda p: p[0] == "ready", "the form")
    Select(driver.find_element(By.ID, "game")).select_by_value(game)
    for s, agent in enumerate(agents):
        box = driver.find_element(By.ID, f"seat-{s}")
        box.clear()
        box.send_keys(agent)
    box = driver.find_element(By.ID, "seed")
    box.clear()
    box.send_keys(str(seed))
    driver.find_element(By.ID, "new-game").click()
    actions = []
    state = _wait(driver, lambda p: p[0] in ("your-turn", "over", "error"), "the first move")
    while state[0] == "your-turn":
        buttons = driver.find_elements(By.CSS_SELECTOR, "#moves button")
        assert buttons, "no legal move to click on the person's turn"
        if midgame_shot and len(actions) == midgame_at:
            screenshot(driver, midgame_shot)
        actions.append(int(buttons[0].get_attribute("data-action")))
        buttons[0].click()
        before = state[1]
        state = _wait(driver, lambda p: p[0] in ("your-turn", "over", "error") and p[1] != before, "the next move")
    assert state[0] == "over", state
    return actions


def shown_result(driver):
    from selenium.webdriver.common.by import By
    rows = driver.find_elements(By.CSS_SELECTOR, "#result-table tr[data-seat]")
    out = {}
    for row in rows:
        cells = {c.get_attribute("data-field"): c.text for c in row.find_elements(By.TAG_NAME, "td")}
        out[int(row.get_attribute("data-seat"))] = cells
    return driver.find_element(By.ID, "result-text").text, out


def screenshot(driver, name):
    RESULTS.mkdir(exist_ok=True)
    with atomic_path(RESULTS / name, suffix=".png") as tmp:
        assert driver.save_screenshot(str(tmp))
    assert (RESULTS / name).stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.xdist_group("chromium")   # both games on one worker: one browser (the module's fixture), not two
@pytest.mark.parametrize("game, agents, human, seed, shot", [
    ("happy", ["human", "heaviest"], 0, 3, "serve-happy"),
    ("backgammon", ["pubeval", "human"], 1, 2, "serve-backgammon"),
])
def test_a_full_game_played_by_clicking_in_chromium(server, browser, game, agents, human, seed, shot):
    actions = play_in_browser(browser, server, game, agents, seed, midgame_shot=f"{shot}-playing.png", midgame_at=3)
    assert len(actions) > 3
    final, outcome = replay(game, {}, agents, human, actions, seed)
    headline, rows = shown_result(browser)
    assert sorted(rows) == list(range(len(agents)))
    for s in rows:
        assert float(rows[s]["returns"]) == outcome.returns[s]
        assert int(rows[s]["pips_left"]) == outcome.pips_left[s]
        assert rows[s]["agent"].startswith(agents[s])
    winner = outcome.winners[0]
    assert f"seat {winner} ({agents[winner]}) wins" in headline.lower()
    assert headline.startswith("You win!" if winner == human else "You lose.")
    screenshot(browser, f"{shot}.png")
    review = shown_review(browser, server)
    if game == "happy":   # the review of the person's decisions, as the API gives it (test_play_review.py)
        assert review["status"] == "done" and review["reference"] == "pimc:samples=20" and review["worst"]
        screenshot(browser, "serve-review-happy.png")


def shown_review(driver, url, timeout=60.0):
    """Wait for the review box to be final; check its text and table against the API's
    review of the game; return that review."""
    from selenium.webdriver.common.by import By
    end = time.monotonic() + timeout
    while True:
        status, gid, shown = driver.execute_script(
            "const d = document.body.dataset, t = document.getElementById('review-text');"
            "return [d.review, d.game, t ? t.textContent : null];")
        if status in ("done", "error", "unavailable"):
            break
        assert status == "running" and time.monotonic() < end, status
        assert shown.startswith("reviewing your moves…"), shown
        time.sleep(0.02)
    _, data, _ = call(url, "GET", f"/api/games/{gid}")
    review, text = data["review"], driver.find_element(By.ID, "review-text").text
    assert review["status"] == status
    if status != "done":
        assert review["reason"] in text, text
        return review
    number = r"(-?[0-9.]+|–)"
    match = re.fullmatch(rf"Your review: (\d+) decisions?, error rate {number} \[{number}, {number}\] per 1000, "
                         rf"(\d+) blunders? \(threshold ([0-9.]+)\), reference (\S+)", text)
    assert match, text
    n, rate, low, high, blunders, threshold, reference = match.groups()
    assert int(n) == review["decisions"] and int(blunders) == review["blunders"]
    for shown, key in ((rate, "error_rate"), (low, "error_rate_low"), (high, "error_rate_high")):
        value = review[key]
        assert value is None if shown == "–" else abs(float(shown) - value) <= 0.051, (shown, value)
    assert float(threshold) == review["blunder_threshold"] and reference == review["reference"]
    rows = driver.find_elements(By.CSS_SELECTOR, "#review-table tr[data-turn]")
    assert len(rows) == len(review["worst"])
    for row, w in zip(rows, review["worst"]):
        cells = {c.get_attribute("data-field"): c.text for c in row.find_elements(By.TAG_NAME, "td")}
        assert int(row.get_attribute("data-turn")) == w["turn"] and int(cells["move"]) == w["move"]
        assert (cells["played"], cells["best"]) == (w["played"], w["best"])
        assert abs(float(cells["loss"]) - w["loss"]) <= 0.0006, (cells["loss"], w["loss"])
        if "position_id" in w:
            assert cells["position"] == f"Position ID {w['position_id']}, rolled {w['dice'][0]}-{w['dice'][1]}"
        else:   # the line and the hand as the person saw them, drawn, and in words
            assert f"line {' '.join(w['line']) or '(empty)'} | hand {' '.join(w['hand'])}" in cells["position"]
            assert row.find_elements(By.CSS_SELECTOR, "svg.decision g.tile")
    return review


# ------------------------------------------------------------------ the analysis board in a browser
@pytest.fixture(scope="module")
def analysis_server(tmp_path_factory):
    """The server with ``--from`` a tiny Happy block tournament, as a user makes one."""
    out = tmp_path_factory.mktemp("serve-analyze") / "happy"
    assert cli_main(["tournament", "happy", "--agents", "heaviest,random", "--games", "2", "--seed", "1",
                     "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    srv, url = start_server("127.0.0.1", 0, from_dir=out)
    yield url
    srv.shutdown()
    srv.server_close()


def _analysis_shown(driver, click, step=None, timeout=60.0):
    """Click, then wait until the page shows the answer (of move ``step`` when stepping)."""
    click()
    end = time.monotonic() + timeout
    while True:
        status, at = driver.execute_script("const d = document.body.dataset; return [d.status, d.step];")
        if status == "shown" and (step is None or at == str(step)):
            return
        error = driver.execute_script("return document.getElementById('error').textContent")
        assert status != "error" and time.monotonic() < end, (status, at, error)
        time.sleep(0.01)


def shown_rows(driver):
    """The annotation table's rows: ``(move, value or equity, played)``, read in one script
    (the page may draw the table again between two reads of separate elements)."""
    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#values tr[data-move]')).map(r => "
        "[r.dataset.move, r.dataset.value || r.dataset.equity || null, r.dataset.played === '1']);")
    return [(m, v, bool(p)) for m, v, p in rows]


@pytest.mark.slow
@pytest.mark.xdist_group("chromium")
def test_the_analysis_board_in_chromium(analysis_server, browser, capsys):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    url, driver = analysis_server, browser
    driver.get(url + "analyze")
    _wait(driver, lambda p: p[0] == "ready", "the analysis board")

    # a domino position pasted: every move's value is pipslab solve's, and the page says hands are open
    position = ("happy-draw; turn=1; passes=0; line=2-6 6-6 6-5; hands=0-3 0-5 0-6 1-6 5-5 / 0-4 2-3 2-5 3-5 4-4 4-5; "
                "boneyard=4-6 1-3 1-2 1-1 0-1 0-0 2-2 2-4 0-2 1-4 3-3 1-5 3-6 3-4")
    driver.find_element(By.ID, "position").send_keys(position)
    _analysis_shown(driver, driver.find_element(By.ID, "solve").click)
    capsys.readouterr()
    assert cli_main(["solve", position, "--json"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert [(m, int(v)) for m, v, _ in shown_rows(driver)] == [(m["move"], m["value"]) for m in solved["moves"]]
    assert "every hand open" in driver.find_element(By.ID, "note").text
    assert driver.find_element(By.ID, "headline").text.startswith(f"seat 1 to move: {solved['result']}")

    # a backgammon Position ID and dice: the top play shown is the API's (td's best equity)
    pid, dice = "4HPwATDgc/ABMA", ("6", "2")
    for box, value in (("position-id", pid), ("die-a", dice[0]), ("die-b", dice[1]), ("eval", "td")):
        driver.find_element(By.ID, box).clear()
        driver.find_element(By.ID, box).send_keys(value)
    _analysis_shown(driver, driver.find_element(By.ID, "rank").click)
    status, ranked, _ = call(url, "POST", "/api/analyze", {"position_id": pid, "dice": [6, 2], "eval": "td"})
    rows = shown_rows(driver)
    assert status == 200 and len(rows) == len(ranked["plays"])
    assert rows[0][0] == ranked["plays"][0]["move"] and float(rows[0][1]) == ranked["plays"][0]["equity"]
    top = driver.find_element(By.CSS_SELECTOR, "#values tr.best")
    assert f"{ranked['plays'][0]['equity']:+.3f}" in top.text and "rolled 6-2" in driver.find_element(By.ID, "board").text
    screenshot(driver, "serve-analyze-backgammon.png")

    # a recorded game stepped through: at every move the solver's values, the move played marked
    status, game, _ = call(url, "GET", "/api/records/0")
    assert status == 200 and game["steps"]
    Select(driver.find_element(By.ID, "record")).select_by_value("0")
    _analysis_shown(driver, driver.find_element(By.ID, "replay").click, step=0)
    for k, s in enumerate(game["steps"]):
        if k:
            _analysis_shown(driver, driver.find_element(By.ID, "next").click, step=k)
        rows = shown_rows(driver)
        _, solved, _ = call(url, "POST", "/api/analyze", {"position": s["position"]})
        assert [(m, int(v)) for m, v, _ in rows] == [(m["move"], m["value"]) for m in solved["moves"]]
        assert [m for m, _, played in rows if played] == [s["move"]]
        assert f"plays {s['move']}" in driver.find_element(By.ID, "step-label").text
        assert driver.find_element(By.ID, "board").text.strip() == s["board"].strip()
        if k == 3:
            screenshot(driver, "serve-analyze-happy.png")
    _analysis_shown(driver, driver.find_element(By.ID, "first").click, step=0)
