"""Bad input, class by class (the hardening issue): every refusal is exit status 2, exactly
one line on stderr, no traceback, and nothing written to ``--out``; the envs refuse bad
actions, options and arguments with one clear error of the project's own; position
strings never escape with a raw exception or an echo of a huge input.

Every CLI case runs ``pipslab.experiments.cli.main`` in this process (no subprocesses) and
is refused before any game, solve or benchmark runs, so the module is fast.
"""
from __future__ import annotations

import csv
import io
import json
import random
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from pipslab.agents.registry import make_agent
from pipslab.envs.backgammon import Position
from pipslab.envs.dominoes.engine import deal
from pipslab.envs.dominoes.match import new_match
from pipslab.envs.dominoes.notation import format_position, parse_position
from pipslab.envs.dominoes.variants import VARIANTS
from pipslab.envs.errors import ActionTypeError, IllegalActionError, PipslabError, PositionError
from pipslab.envs.generic_env import GameEnv
from pipslab.experiments.cli import main

HAPPY = "happy-block; turn=0; ends=1|0; hands=2-2 / 0-0 0-2"
# a Happy draw position whose exact solve takes ~250k nodes: the node limit stops it
HARD = ("happy-draw; turn=0; passes=0; line=3-3; hands=0-5 1-2 1-3 2-2 3-4 3-5 3-6 / 0-0 0-3 2-3 2-4 2-6 5-6; "
        "boneyard=1-4 5-5 4-5 2-5 6-6 4-6 0-2 0-1 4-4 0-6 0-4 1-6 1-5 1-1")
# a Troshin position whose exact solve takes ~1.3M nodes (well over 0.1 s compiled): the clock stops it
SLOW = ("troshin-2; turn=1; passes=0; line=5-5; hands=0-1 0-2 1-3 2-3 3-6 4-5 / 0-3 0-4 0-5 1-2 2-2 2-4 3-4 4-4 "
        "4-6; boneyard=1-5 6-6 3-5 3-3 1-6 2-6 2-5 0-6 5-6 1-4 1-1 0-0")
HUGE = "x" * 100_000
MAX_MESSAGE = 300


def cli(argv, capsys, monkeypatch, stdin=""):
    """``pipslab ARGV`` in this process: (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:   # argparse refuses a flag by exiting
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def assert_refused(argv, capsys, monkeypatch, match=None, out_path=None, stdin=""):
    """Exit 2, exactly one line on stderr (short, no traceback); ``out_path`` untouched."""
    before = _snapshot(out_path)
    rc, out, err = cli(argv, capsys, monkeypatch, stdin)
    lines = err.splitlines()
    assert rc == 2, (argv, rc, err)
    assert len(lines) == 1, (argv, err)
    assert "Traceback" not in err and "error" in lines[0], (argv, err)
    assert len(lines[0]) < MAX_MESSAGE + 60, (argv, len(lines[0]))
    if match is not None:
        assert re.search(match, lines[0]), (argv, lines[0])
    if out_path is not None:
        assert _snapshot(out_path) == before, f"{argv} wrote to --out"
    return lines[0], out


def _snapshot(path):
    if path is None:
        return None
    path = Path(path)
    if path.is_file():
        return ("file", path.read_bytes())
    if path.is_dir():
        return ("dir", sorted(str(p.relative_to(path)) for p in path.rglob("*")))
    return ("missing",)


# ------------------------------------------------------------------ numbers
NUMBERS = [
    (["play", "happy", "--agents", "random,random", "--seed", "-1"], "seed"),
    (["play", "happy", "--agents", "random,random", "--seed", "abc"], "seed"),
    (["play", "happy", "--agents", "random,random", "--seed", "1.5"], "seed"),
    (["play", "happy", "--agents", "random,random", "--seed", "²"], "seed"),
    (["play", "happy", "--agents", "random,random", "--games", "0"], "games"),
    (["play", "happy", "--agents", "random,random", "--games", "-2"], "games"),
    (["play", "happy", "--agents", "random,random", "--replay", "-1"], "replay"),
    (["bench", "harness", "--seed", "-1", "--seconds", "0.1"], "seed"),
    (["bench", "dominoes", "--seed", "-7"], "seed"),
    (["bench", "dominoes", "--seconds", "nan"], "seconds"),
    (["bench", "dominoes", "--seconds", "inf"], "seconds"),
    (["bench", "dominoes", "--seconds", "-1"], "seconds"),
    (["bench", "dominoes", "--seconds", "0"], "seconds"),
    (["bench", "dominoes", "--seconds", "abc"], "seconds"),
    (["bench", "solver", "--deals", "-3"], "deals"),
    (["bench", "solver", "--deals", "2.5"], "deals"),
    (["bench", "dominoes", "--deals", "5"], "deals"),
    (["bench", "solver", "--moves", "5"], "moves"),
    (["bench", "ismcts", "--moves", "-1"], "moves"),
    (["bench", "ismcts", "--batch", "0"], "batch"),
    (["bench", "solver", "--batch", "4"], "batch"),
    (["bench", "ismcts", "--batch", "4", "--moves", "5"], "moves"),
    (["train", "happy", "--guide", "ismcts:iters=1"], "iters must be at least 2"),
    (["train", "happy", "--guide", "ismcts:iters=8", "--guide-noise", "0.3,1.5"], "guide-noise"),
    (["solve", HAPPY, "--time-limit", "0"], "time-limit"),
    (["solve", HAPPY, "--time-limit", "nan"], "time-limit"),
    (["solve", HAPPY, "--time-limit", "-5"], "time-limit"),
    (["solve", HAPPY, "--max-nodes", "0"], "max-nodes"),
    (["solve", HAPPY, "--max-nodes", "1e6"], "max-nodes"),
    (["solve", HAPPY, "--max-table", "5"], "max-table"),
    (["moves", "backgammon", "--position-id", "4HPwATDgc/ABMA", "--dice", "3", "7"], "dice"),
    (["moves", "backgammon", "--position-id", "4HPwATDgc/ABMA", "--dice", "0", "1"], "dice"),
    (["moves", "backgammon", "--position-id", "4HPwATDgc/ABMA", "--dice", "3", "x"], "dice"),
]


@pytest.mark.parametrize("argv, match", NUMBERS, ids=[" ".join(a)[:60] for a, _ in NUMBERS])
def test_numbers_are_one_line(argv, match, capsys, monkeypatch):
    assert_refused(argv, capsys, monkeypatch, match)


# ------------------------------------------------------------------ --out
def _out_places(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("keep me\n")
    return {
        "existing file": (str(a_file), a_file),
        "under a file": (str(a_file / "sub"), a_file),
        "deep under a file": (str(a_file / "a" / "b"), a_file),
        "/dev/null/x": ("/dev/null/x", None),
        "/proc": ("/proc/pipslab-test-out", None),
        "empty": ("", None),
        "blank": ("   ", None),
    }


OUT_COMMANDS = {
    "play": ["play", "happy", "--agents", "random,random"],
    "solve": ["solve", HAPPY],
    "bench": ["bench", "dominoes", "--seconds", "0.01"],
    "bench solver": ["bench", "solver", "--deals", "1"],
    "play --replay": ["play", "happy", "--replay", "0", "--agents", "random,random"],
}
OUT_PLACES = ["existing file", "under a file", "deep under a file", "/dev/null/x", "/proc", "empty", "blank"]


@pytest.mark.parametrize("command", list(OUT_COMMANDS))
@pytest.mark.parametrize("place", OUT_PLACES)
def test_bad_out_is_refused_before_anything_runs(command, place, tmp_path, capsys, monkeypatch):
    out, watched = _out_places(tmp_path)[place]
    _, stdout = assert_refused(OUT_COMMANDS[command] + ["--out", out], capsys, monkeypatch, match="out",
                               out_path=watched if watched is not None else (out if out.strip() else None))
    assert stdout == ""   # refused before a game, a solve or a benchmark ran
    assert not Path("/proc/pipslab-test-out").exists()


def test_good_out_still_writes(tmp_path, capsys, monkeypatch):
    rc, _, _ = cli(["play", "happy", "--agents", "random,random", "--out", tmp_path / "p"], capsys, monkeypatch)
    assert rc == 0 and (tmp_path / "p" / "games.txt").stat().st_size > 0
    rc, _, _ = cli(["solve", HAPPY, "--out", tmp_path / "s" / "deeper"], capsys, monkeypatch)
    assert rc == 0 and json.loads((tmp_path / "s" / "deeper" / "solve.json").read_text())["result"] == "loss"
    assert not list(tmp_path.rglob(".pipslab-probe-*"))   # the writability probe leaves nothing


# ------------------------------------------------------------------ agent parameters
AGENT_PARAMS = [
    ("happy", "ismcts:iters=10,c=abc", "c=.*number"),
    ("happy", "ismcts:iters=1e3", "iters=.*whole number"),
    ("happy", "ismcts:iters=", "iters=.*whole number"),
    ("happy", "ismcts:c=inf", "c=.*finite"),
    ("happy", "ismcts:time=nan", "time=.*finite"),
    ("happy", "pimc:samples=abc", "samples=.*whole number"),
    ("happy", "pimc:samples=2.5", "samples=.*whole number"),
    ("happy", "pimc:depth=true", "depth=.*whole number"),
    ("happy", "pimc:time=inf", "time=.*finite"),
    ("happy", "pimc:bogus=1", "no parameter 'bogus'.*samples"),
    ("happy", "pimc:samples=3,samples=4", "given twice"),
    ("happy", "heaviest:depth=3", "no parameter 'depth'.*takes none"),
    ("happy", "random:x=1", "no parameter 'x'"),
    ("happy", "human:x=1", "no parameter 'x'"),
    ("happy", "pimc:samples", "key=value"),
    ("triple", "greedy:risk=abc", "risk=.*number"),
    ("triple", "greedy:risk=-1", "risk must be"),
    ("troshin", "ismcts:iters=ten", "iters=.*whole number"),
    ("backgammon", "mcts:iters=2.5", "iters=.*whole number"),
    ("backgammon", "mcts:iters=5,c=abc", "c=.*number"),
    ("backgammon", "expectimax:filter=2.5", "filter=.*whole number"),
    ("backgammon", "expectimax:plies=1.0", "plies=.*whole number"),
    ("backgammon", "expectimax:plies=one", "plies=.*whole number"),
    ("backgammon", "race:run_lead=x", "run_lead=.*whole number"),
    ("backgammon", "pubeval:x=1", "no parameter 'x'"),
]
AGENT_IDS = [f"{g}-{s}" for g, s, _ in AGENT_PARAMS]


@pytest.mark.parametrize("game, spec, match", AGENT_PARAMS, ids=AGENT_IDS)
def test_agent_parameters_are_checked_when_the_agent_is_built(game, spec, match):
    with pytest.raises(PipslabError, match=match):
        make_agent(spec, game)


@pytest.mark.parametrize("game, spec, match", AGENT_PARAMS, ids=AGENT_IDS)
def test_agent_parameters_in_play_are_one_line_before_anything_is_printed(game, spec, match, capsys,
                                                                          monkeypatch, tmp_path):
    argv = ["play", game, "--agents", f"{spec},random", "--out", tmp_path / "out"]
    _, stdout = assert_refused(argv, capsys, monkeypatch, match, out_path=tmp_path / "out")
    assert stdout == ""


@pytest.mark.parametrize("game, spec, match", AGENT_PARAMS[::4], ids=AGENT_IDS[::4])
def test_agent_parameters_in_a_tournament_are_one_line(game, spec, match, capsys, monkeypatch, tmp_path):
    argv = ["tournament", game, "--agents", f"{spec},random", "--games", "2", "--workers", "1", "--no-plots",
            "--no-progress", "--out", tmp_path / "out"]
    assert_refused(argv, capsys, monkeypatch, match, out_path=tmp_path / "out")


def test_good_parameters_are_read_by_their_declared_types():
    assert make_agent("greedy:risk=3", "triple").risk == 3.0
    assert make_agent("greedy:risk=none", "triple").risk is None
    assert make_agent("ismcts:iters=7,c=1", "happy").c == 1.0


# ------------------------------------------------------------------ the human at end of input
HUMAN = [
    ["play", "happy", "--agents", "human,random"],
    ["play", "happy", "--agents", "random,human", "--mode", "draw"],
    ["play", "troshin", "--agents", "human,random,random", "--players", "3"],
    ["play", "triple", "--agents", "human,random"],
    ["play", "backgammon", "--agents", "human,random"],
    ["play", "backgammon", "--agents", "random,human"],
    ["tournament", "happy", "--agents", "human,random", "--games", "2", "--workers", "1", "--no-plots",
     "--no-progress"],
    ["tournament", "backgammon", "--agents", "human,random", "--games", "2", "--workers", "1", "--no-plots",
     "--no-progress"],
]


@pytest.mark.parametrize("argv", HUMAN, ids=[" ".join(a[:4]) for a in HUMAN])
@pytest.mark.parametrize("stdin", ["", "nonsense\n"], ids=["closed", "bad answer then closed"])
def test_human_at_end_of_input_is_one_line(argv, stdin, capsys, monkeypatch, tmp_path):
    if argv[0] == "tournament":
        argv = argv + ["--out", tmp_path / "t"]
    _, out = assert_refused(argv, capsys, monkeypatch, "input ended", stdin=stdin)
    assert out.endswith("\n")    # the prompt's line is ended: on a terminal the error is a line of its own


# ------------------------------------------------------------------ play --replay over a damaged record
@pytest.fixture(scope="module")
def tournament_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("tournament") / "t"
    assert main(["tournament", "happy", "--agents", "random,heaviest", "--games", "4", "--seed", "3",
                 "--workers", "1", "--no-plots", "--no-progress", "--out", str(out)]) == 0
    return out


def _rows(text):
    return list(csv.reader(io.StringIO(text)))


def _csv(rows):
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _drop(column):
    def damage(text):
        rows = _rows(text)
        i = rows[0].index(column)
        return _csv([r[:i] + r[i + 1:] for r in rows])
    return damage


def _cell(column, value, game_id="1"):
    def damage(text):
        rows = _rows(text)
        i = rows[0].index(column)
        for r in rows[1:]:
            if r[0] == game_id:
                r[i] = value
        return _csv(rows)
    return damage


def _lines(f):
    def damage(text):
        return f(text.splitlines(keepends=True))
    return damage


GAMES_CSV_DAMAGE = {
    "empty file": lambda t: "",
    "header only": _lines(lambda ls: ls[0]),
    "header without newline": _lines(lambda ls: ls[0].rstrip("\n")),
    "torn row (in a field)": _lines(lambda ls: "".join(ls[:2]) + ls[2][:12]),
    "torn row (in options)": _lines(lambda ls: "".join(ls[:2]) + ls[2][:40]),
    "row with extra fields": _lines(lambda ls: "".join(ls[:2]) + ls[2].rstrip("\n") + ",x,y,z\n" + "".join(ls[3:])),
    "not text": None,   # written as bytes below
    **{f"missing column {c}": _drop(c) for c in
       ("game_id", "game", "options", "players", "seat1", "deal_seed", "agent_seed", "moves", "result",
        "winner_seat", "return_0")},
    "options not JSON": _cell("options", "{mode:block"),
    "options a JSON list": _cell("options", "[1, 2]"),
    "options a JSON number": _cell("options", "5"),
    "options empty": _cell("options", ""),
    "options with an unknown key": _cell("options", '{"mode":"block","x":1}'),
    "options with a bad value": _cell("options", '{"mode":5}'),
    "players not a number": _cell("players", "abc"),
    "players 0": _cell("players", "0"),
    "players 3 (no seat2 column)": _cell("players", "3"),
    "players huge": _cell("players", "99999999999"),
    "deal_seed not a seed": _cell("deal_seed", "x-y"),
    "deal_seed too short": _cell("deal_seed", "0-0"),
    "agent_seed negative": _cell("agent_seed", "0--1-1"),
    "moves not a number": _cell("moves", "abc"),
    "moves nan": _cell("moves", "nan"),
    "moves not what was played": _cell("moves", "99"),
    "return not a number": _cell("return_0", "abc"),
    "return not what was played": _cell("return_0", "7.5"),
    "pips not a number": _cell("pips_left_0", "abc"),
    "winner_seat not a number": _cell("winner_seat", "z"),
    "unknown game": _cell("game", "chess"),
    "empty game": _cell("game", ""),
    "unknown agent": _cell("seat0", "grandmaster"),
    "empty agent": _cell("seat0", ""),
    "game_id not a number": _cell("game_id", "abc"),
    "game id twice": _lines(lambda ls: "".join(ls) + ls[2]),
}
RUN_JSON_DAMAGE = {
    "run.json not JSON": "{not json",
    "run.json empty": "",
    "run.json a list": "[1]",
    "run.json imports a string": '{"imports": "abc"}',
    "run.json imports numbers": '{"imports": [1, 2]}',
    "run.json imports a missing module": '{"imports": ["no_such_module_for_pipslab_tests"]}',
}


@pytest.mark.parametrize("kind", list(GAMES_CSV_DAMAGE) + list(RUN_JSON_DAMAGE) + ["games.csv a folder",
                                                                                   "run.json a folder"])
def test_replay_of_a_damaged_record_is_one_line(kind, tournament_dir, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "t"
    shutil.copytree(tournament_dir, folder)
    games = folder / "games.csv"
    if kind == "not text":
        games.write_bytes(b"\x00\xff\xfe\x80 binary\n")
    elif kind in GAMES_CSV_DAMAGE:
        games.write_text(GAMES_CSV_DAMAGE[kind](games.read_text()))
    elif kind in RUN_JSON_DAMAGE:
        (folder / "run.json").write_text(RUN_JSON_DAMAGE[kind])
    elif kind == "games.csv a folder":
        games.unlink()
        games.mkdir()
    else:
        (folder / "run.json").unlink()
        (folder / "run.json").mkdir()
    assert_refused(["play", "--replay", "1", "--from", folder, "--out", tmp_path / "o"], capsys, monkeypatch,
                   out_path=tmp_path / "o")


def test_replay_of_a_sound_record_still_matches(tournament_dir, capsys, monkeypatch):
    rc, out, err = cli(["play", "--replay", "1", "--from", tournament_dir], capsys, monkeypatch)
    assert rc == 0 and "replay matches the record" in out and err == ""


@pytest.mark.parametrize("where", ["a file", "missing"])
def test_replay_from_a_folder_that_is_not_one(where, tournament_dir, tmp_path, capsys, monkeypatch):
    path = tournament_dir / "games.csv" if where == "a file" else tmp_path / "nope"
    assert_refused(["play", "--replay", "1", "--from", path], capsys, monkeypatch, "not a folder")


# ------------------------------------------------------------------ options that do not apply
GAME_OPTIONS = [
    ("happy", ["--players", "0"], "players"), ("happy", ["--players", "1"], "players"),
    ("happy", ["--players", "3"], "players"), ("happy", ["--players", "5"], "players"),
    ("happy", ["--pairs"], "pairs"), ("happy", ["--match"], "match"),
    ("happy", ["--option", "mode=xyz"], "mode"), ("happy", ["--option", "unknownkey=1"], "unknownkey"),
    ("backgammon", ["--players", "3"], "players"), ("backgammon", ["--pairs"], "pairs"),
    ("backgammon", ["--match"], "match"), ("backgammon", ["--mode", "draw"], "mode"),
    ("backgammon", ["--option", "gammons=maybe"], "gammons"), ("backgammon", ["--option", "gammons=2"], "gammons"),
    ("triple", ["--players", "4", "--pairs"], "pairs"), ("triple", ["--match"], "match"),
    ("triple", ["--mode", "block"], "mode"), ("triple", ["--players", "5"], "players"),
    ("troshin", ["--option", "match=maybe"], "match"), ("troshin", ["--mode", "draw"], "mode"),
    ("troshin", ["--players", "1"], "players"), ("troshin", ["--players", "3", "--pairs"], "pairs"),
    ("troshin", ["--pairs"], "pairs"), ("troshin", ["--option", "players=abc"], "players"),
    ("troshin", ["--option", "players=2.5"], "players"), ("troshin", ["--option", "=1"], "KEY=VALUE"),
    ("troshin", ["--option", "novalue"], "KEY=VALUE"),
]


def _seats(game, flags):
    if "--players" in flags:
        n = int(flags[flags.index("--players") + 1])
        return max(2, min(n, 4))
    return 2


@pytest.mark.parametrize("game, flags, match", GAME_OPTIONS, ids=[f"{g} {' '.join(f)}" for g, f, _ in GAME_OPTIONS])
def test_options_that_do_not_apply_in_play(game, flags, match, capsys, monkeypatch, tmp_path):
    agents = ",".join(["random"] * _seats(game, flags))
    _, stdout = assert_refused(["play", game, "--agents", agents, "--out", tmp_path / "o", *flags], capsys,
                               monkeypatch, match, out_path=tmp_path / "o")
    assert stdout == ""


@pytest.mark.parametrize("game, flags, match", GAME_OPTIONS, ids=[f"{g} {' '.join(f)}" for g, f, _ in GAME_OPTIONS])
def test_options_that_do_not_apply_in_a_tournament(game, flags, match, capsys, monkeypatch, tmp_path):
    argv = ["tournament", game, "--agents", "random,heaviest" if game != "backgammon" else "random,pubeval",
            "--games", "2", "--workers", "1", "--no-plots", "--no-progress", "--out", tmp_path / "o", *flags]
    assert_refused(argv, capsys, monkeypatch, match, out_path=tmp_path / "o")


# ------------------------------------------------------------------ empty or meaningless values
EMPTY = [
    (["play", "happy", "--agents", "random,random", "--out", ""], "out"),
    (["solve", HAPPY, "--out", ""], "out"),
    (["bench", "dominoes", "--out", ""], "out"),
    (["bench", "solver", "--deals", "0"], "deals"),
    (["bench", "ismcts", "--moves", "0"], "moves"),
    (["play", "happy", "--agents", ""], "agent"),
    (["play", "happy", "--agents", ","], "agent"),
    (["play", "happy", "--agents", "random,random", "--position", " "], "position"),
    (["solve", ""], "position"),
    (["solve", "   "], "position"),
    (["moves", "backgammon", "--position-id", "", "--dice", "3", "1"], "Position ID"),
    (["play", "happy", "--agents", "random,random", "--option", ""], "KEY=VALUE"),
]


@pytest.mark.parametrize("argv, match", EMPTY, ids=[" ".join(a)[:60] for a, _ in EMPTY])
def test_empty_values_are_refused(argv, match, capsys, monkeypatch):
    assert_refused(argv, capsys, monkeypatch, match)


# ------------------------------------------------------------------ a huge argument is quoted, not echoed
LONG_ARGS = [
    ["play", "happy", "--agents", f"{HUGE},random"],
    ["play", "happy", "--agents", f"pimc:{HUGE}=1,random"],
    ["play", "happy", "--agents", f"ismcts:c={HUGE},random"],
    ["play", "triple", "--agents", f"greedy:risk={HUGE},random"],
    ["play", "happy", "--agents", "random,random", "--option", f"{HUGE}=1"],
    ["play", "happy", "--agents", "random,random", "--option", f"mode={HUGE}"],
    ["play", "happy", "--agents", "random,random", "--option", HUGE],
    ["play", HUGE, "--agents", "random,random"],
    ["play", "happy", "--agents", "random,random", "--seed", "9" * 5000 + "x"],
    ["play", "happy", "--agents", "random,random", "--out", f"/dev/null/{HUGE[:3000]}"],
    ["solve", HUGE],
    ["moves", "backgammon", "--position-id", HUGE, "--dice", "3", "1"],
    ["tournament", "happy", "--agents", f"{HUGE},random", "--games", "2", "--workers", "1"],
]


@pytest.mark.parametrize("argv", LONG_ARGS, ids=[f"{i} {a[0]}" for i, a in enumerate(LONG_ARGS)])
def test_a_huge_argument_is_quoted_briefly(argv, capsys, monkeypatch):
    assert_refused(argv, capsys, monkeypatch)   # one line, shorter than MAX_MESSAGE + the prefix


# ------------------------------------------------------------------ positions over, unreachable, unsolvable
def _over_position(variant_name, seed=0):
    v = VARIANTS[variant_name]
    s = deal(v, random.Random(seed))
    while not s.is_terminal:
        s.apply(s.legal_actions()[0])
    return format_position(s)


TERMINAL_BG = Position.from_points({1: 1}, {}).swap().id      # the player on roll has borne off all 15
TERMINAL_BG2 = Position.from_points({1: 1}, {}).id            # the opponent has
UNREACHABLE = [
    (["moves", "backgammon", "--position-id", "AAAAAAAAAAAAAA", "--dice", "3", "1"], "no checker"),
    (["moves", "backgammon", "--position-id", TERMINAL_BG, "--dice", "3", "1"], "over"),
    (["moves", "backgammon", "--position-id", TERMINAL_BG2, "--dice", "6", "6"], "over"),
    (["play", "backgammon", "--agents", "random,random", "--position", TERMINAL_BG2], "over"),
    (["play", "backgammon", "--agents", "random,random", "--position", "AAAAAAAAAAAAAA"], "no checker"),
    (["play", "happy", "--agents", "random,random", "--position", _over_position("happy-block")], "over"),
    (["play", "happy", "--agents", "random,random", "--mode", "draw", "--position", _over_position("happy-draw")],
     "over"),
    (["play", "happy", "--agents", "random,random",
      "--position", "happy-block; turn=0; passes=2; ends=1|0; hands=2-2 / 0-0 0-2"], "over"),
    (["play", "triple", "--agents", "random,random", "--position", _over_position("triple-2")], "over"),
    (["play", "troshin", "--agents", "random,random", "--position", _over_position("troshin-2")], "over"),
    (["solve", _over_position("happy-block", 1)], "over"),
    (["solve", "happy-draw; turn=0; passes=2; ends=1|0; hands=2-2 / 0-0; boneyard=0-2"], "passes"),
    (["solve", "happy-draw; turn=0; passes=1; ends=1|0; hands=2-2 / 0-0; boneyard=0-2"], "passes"),
    (["solve", "troshin-2; turn=1; passes=1; ends=1|0; hands=2-2 / 0-0; boneyard=0-2"], "passes"),
    (["solve", format_position(deal(VARIANTS["triple-2"], random.Random(0))).replace("passes=0", "passes=99")],
     "passes"),
    (["solve", format_position(deal(VARIANTS["triple-3"], random.Random(0))).replace("passes=0", "passes=4")],
     "passes"),
    (["solve", format_position(deal(VARIANTS["triple-2"], random.Random(0)))], "no exact solver for triple"),
    (["solve", format_position(deal(VARIANTS["troshin-3"], random.Random(0)))], "no exact solver for troshin-3"),
    (["solve", format_position(deal(VARIANTS["troshin-4"], random.Random(0)))], "no exact solver for troshin-4"),
    (["solve", format_position(new_match(VARIANTS["troshin-2"], random.Random(0)))], "match"),
    (["solve", "4HPwATDgc/ABMA"], "backgammon"),
]


@pytest.mark.parametrize("argv, match", UNREACHABLE, ids=[f"{a[0]} {i}" for i, (a, _) in enumerate(UNREACHABLE)])
def test_positions_over_unreachable_or_without_a_solver(argv, match, capsys, monkeypatch):
    assert_refused(argv, capsys, monkeypatch, match)


# ------------------------------------------------------------------ position strings
def _positions_of_every_variant(seed=0, per_variant=4):
    """Valid positions of every domino variant (and Troshin matches), at random depths."""
    rng = random.Random(seed)
    out = []
    for v in VARIANTS.values():
        for k in range(per_variant):
            s = new_match(v, rng) if v.scoring == "troshin" and k == per_variant - 1 else deal(v, rng)
            for _ in range(rng.randrange(0, 30)):
                if s.is_terminal or s.is_chance:
                    break
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
            out.append(format_position(s))
    return out


POSITIONS = _positions_of_every_variant()
ODD_DIGITS = ["²", "٣", "۵", "①"]   # isdigit() or isnumeric(), yet not plain 0-9


def _digit_cases():
    """Every field of every variant's position with its first digit made a non-ASCII digit."""
    cases = {}
    for text in POSITIONS:
        for field in text.split(";")[1:]:
            key, _, value = field.partition("=")
            m = re.search(r"[0-9]", value)
            if m is None:
                continue
            for odd in ODD_DIGITS[:2]:
                bad = text.replace(field, f"{key}={value[:m.start()]}{odd}{value[m.end():]}", 1)
                cases.setdefault((text.split(";")[0], key.strip(), odd), bad)
    return sorted(cases.items())


DIGIT_CASES = _digit_cases()
LONG_CASES = {
    "variant": HUGE,
    "unknown field": f"{HAPPY}; {HUGE}=1",
    "field without =": f"{HAPPY}; {HUGE}",
    "hands": f"happy-block; turn=0; ends=1|0; hands=2-2 {HUGE} / 0-0 0-2",
    "turn": f"happy-block; turn={HUGE}; ends=1|0; hands=2-2 / 0-0 0-2",
    "ends": f"happy-block; turn=0; ends={HUGE}; hands=2-2 / 0-0 0-2",
    "line": f"happy-block; turn=0; line=2-{HUGE}; hands=2-2 / 0-0 0-2",
    "boneyard": f"happy-draw; turn=0; ends=1|0; hands=2-2 / 0-0; boneyard={HUGE}",
    "a long number": f"happy-block; turn={'9' * 5000}; ends=1|0; hands=2-2 / 0-0 0-2",
    "match": POSITIONS[-1].replace("match=", f"match={HUGE}") if "match=" in POSITIONS[-1] else HUGE,
}
SHAPE_CASES = {
    "line=,": "happy-block; turn=0; line=,; hands=2-2 / 0-0 0-2",
    "line= , ,": "happy-block; turn=0; line= , ,; hands=2-2 / 0-0 0-2",
    "triple line=,": "triple-2; turn=0; line=,; hands=0-0 / 0-1",
    "ends=|": "happy-block; turn=0; ends=|; hands=2-2 / 0-0 0-2",
    "ends=06|3": "happy-block; turn=0; ends=06|3; hands=2-2 / 0-0 0-2",
    "hands=/": "happy-block; turn=0; hands=/",
    ";;;": ";;;",
    "turn=+-1": "happy-block; turn=+-1; ends=1|0; hands=2-2 / 0-0 0-2",
    "turn=1_0": "happy-block; turn=1_0; ends=1|0; hands=2-2 / 0-0 0-2",
    "tile 3--5": "happy-block; turn=0; ends=1|0; hands=2-2 3--5 / 0-0 0-2",
    "NUL": "happy-block; turn=0\x00; ends=1|0; hands=2-2 / 0-0 0-2",
}


@pytest.mark.parametrize("key, text", DIGIT_CASES, ids=[f"{v} {k} {d}" for (v, k, d), _ in DIGIT_CASES])
def test_non_ascii_digits_are_a_position_error(key, text):
    with pytest.raises(PositionError) as err:
        parse_position(text)
    assert len(str(err.value)) < MAX_MESSAGE


@pytest.mark.parametrize("kind", list(LONG_CASES) + list(SHAPE_CASES))
def test_long_and_malformed_positions_give_a_short_message(kind):
    text = LONG_CASES.get(kind, SHAPE_CASES.get(kind))
    with pytest.raises(PipslabError) as err:
        parse_position(text)
    assert len(str(err.value)) < MAX_MESSAGE, str(err.value)[:400]


@pytest.mark.parametrize("kind", ["hands ²", "line=,", "turn ٣", "long hands", "long variant"])
@pytest.mark.parametrize("route", ["solve", "play --position", "env.reset"])
def test_bad_positions_through_the_cli_and_the_env(kind, route, capsys, monkeypatch):
    text = {"hands ²": "happy-block; turn=0; ends=1|0; hands=²-² / 0-0 0-²",
            "line=,": SHAPE_CASES["line=,"], "turn ٣": "happy-block; turn=٣; ends=1|0; hands=2-2 / 0-0 0-2",
            "long hands": LONG_CASES["hands"], "long variant": LONG_CASES["variant"]}[kind]
    if route == "env.reset":
        with pytest.raises(PipslabError) as err:
            GameEnv("happy").reset(options={"position": text})
        assert len(str(err.value)) < MAX_MESSAGE
    elif route == "solve":
        assert_refused(["solve", text], capsys, monkeypatch)
    else:
        assert_refused(["play", "happy", "--agents", "random,random", "--position", text], capsys, monkeypatch)


def _mutate(text, rng):
    alphabet = list("0123456789;=/|-*:, _x") + ODD_DIGITS + ["\n", "é", "1e3", "-1", "99", "none", "match=1 / 2",
                                                              "lucky=0-0", "draws=9", "passes=99", "hand=3"]
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(8)
        i = rng.randrange(len(text) + 1)
        if op == 0:
            text = text[:i] + text[i + 1:]
        elif op == 1:
            text = text[:i] + rng.choice(alphabet) + text[i:]
        elif op == 2:
            text = text[:i] + rng.choice(alphabet) + text[i + 1:]
        elif op == 3:
            text = text[:i]
        elif op == 4:
            parts = text.split(";")
            rest = parts[1:]
            rng.shuffle(rest)
            text = ";".join(parts[:1] + rest)
        elif op == 5:
            parts = text.split(";")
            del parts[rng.randrange(len(parts))]
            text = ";".join(parts)
        elif op == 6:
            j = rng.randrange(len(text) + 1)
            a, b = min(i, j), max(i, j)
            text = text[:a] + text[a:b] * rng.randrange(2, 40) + text[a:]
        else:
            numbers = list(re.finditer(r"\d+", text))
            if numbers:
                m = rng.choice(numbers)
                text = text[:m.start()] + str(rng.choice([0, 1, 2, 6, 7, 9, 12, 99, 10 ** 12])) + text[m.end():]
    return text


@pytest.mark.parametrize("seed", range(4))
def test_position_fuzzer(seed):
    """Seeded mutations of valid positions of every variant: each parses to a state or is a
    PipslabError with a short message — never another exception."""
    rng = random.Random(seed)
    for text in POSITIONS:
        assert format_position(parse_position(text)) == text
    parsed = refused = 0
    for _ in range(150):
        text = _mutate(rng.choice(POSITIONS), rng)
        try:
            state = parse_position(text)
        except PipslabError as exc:
            assert len(str(exc)) < MAX_MESSAGE, (text[:200], str(exc)[:400])
            refused += 1
        else:
            assert state is not None
            parsed += 1
    assert refused > 0


# ------------------------------------------------------------------ solve's limits
@pytest.mark.parametrize("limit, position, moves", [(["--max-nodes", "5000"], HARD, 8),
                                                     (["--time-limit", "0.05"], SLOW, 2)])
def test_solve_stops_at_its_limit_with_the_moves_proven(limit, position, moves, capsys, monkeypatch, tmp_path):
    rc, out, err = cli(["solve", position, *limit, "--out", tmp_path / "o"], capsys, monkeypatch)
    lines = err.splitlines()
    assert rc == 3 and len(lines) == 1 and "stopped by the" in lines[0] and "Traceback" not in err
    assert re.search(r"\d+ of \d+ moves", lines[0])
    assert "moves proven" in out
    data = json.loads((tmp_path / "o" / "solve.json").read_text())
    assert data["complete"] is False and data["moves_total"] == moves and data["moves_proven"] < moves
    rc, out, _ = cli(["solve", position, *limit, "--json"], capsys, monkeypatch)
    assert rc == 3 and json.loads(out.splitlines()[-1])["complete"] is False


def test_solve_with_a_small_table_is_still_exact(capsys, monkeypatch):
    from pipslab.experiments import solve as solve_module
    state = deal(VARIANTS["happy-draw"], random.Random(101))   # ~22k nodes, ~7k table entries
    state.apply(state.legal_actions()[0])
    position = format_position(state)
    monkeypatch.setattr(solve_module, "_TICK", 0.002)   # look at the table often
    rc, plain, _ = cli(["solve", position, "--json"], capsys, monkeypatch)
    rc2, small, _ = cli(["solve", position, "--json", "--max-table", "1000"], capsys, monkeypatch)
    assert rc == rc2 == 0
    a, b = json.loads(plain), json.loads(small)
    assert a["value"] == b["value"] and a["moves"] == b["moves"] and a["line"] == b["line"]
    assert b["nodes"] > a["nodes"]   # the emptied table cost work, not correctness


# ------------------------------------------------------------------ the envs
def _envs():
    return {
        "happy": lambda **k: GameEnv("happy", **k),
        "troshin-3": lambda **k: GameEnv("troshin", players=3, **k),
        "triple": lambda **k: GameEnv("triple", **k),
        "backgammon": lambda **k: GameEnv("backgammon", **k),
        "generic happy": lambda **k: GameEnv("happy", **k),
    }


ENV_NAMES = list(_envs())
BAD_ACTIONS = {
    "'abc'": ("abc", ActionTypeError), "None": (None, ActionTypeError), "[]": ([], ActionTypeError),
    "inf": (float("inf"), ActionTypeError), "nan": (float("nan"), ActionTypeError),
    "2-element array": (np.array([1, 2]), ActionTypeError), "float array": (np.array(1.0), ActionTypeError),
    "legal + 0.7": ("legal+0.7", ActionTypeError), "legal as float": ("float(legal)", ActionTypeError),
    "digit string": ("str(legal)", ActionTypeError), "True": (True, ActionTypeError),
    "-1": (-1, IllegalActionError), "10**30": (10 ** 30, IllegalActionError),
    "space size": ("n", IllegalActionError),
}


@pytest.mark.parametrize("illegal", ["raise", "lose"])
@pytest.mark.parametrize("action", list(BAD_ACTIONS))
@pytest.mark.parametrize("env_name", ENV_NAMES)
def test_actions_that_are_not_action_ids(env_name, action, illegal):
    env = _envs()[env_name](illegal_action=illegal)
    obs, _ = env.reset(seed=1)
    legal = int(np.flatnonzero(obs["action_mask"])[0])
    value, error = BAD_ACTIONS[action]
    value = {"legal+0.7": legal + 0.7, "float(legal)": float(legal), "str(legal)": str(legal),
             "n": env.action_space.n}.get(value, value) if isinstance(value, str) else value
    with pytest.raises(error) as err:
        env.step(value)
    message = str(err.value)
    assert isinstance(err.value, PipslabError) and f"Discrete({env.action_space.n})" in message
    assert len(message) < MAX_MESSAGE
    if error is ActionTypeError:
        assert isinstance(err.value, TypeError)
    # the refused action changed nothing: a legal one still plays
    env.step(np.int64(legal))


@pytest.mark.parametrize("env_name", ENV_NAMES)
@pytest.mark.parametrize("call", ["action_masks", "render", "step"])
def test_before_reset(env_name, call):
    env = _envs()[env_name](render_mode="ansi")
    with pytest.raises(PipslabError, match="reset"):
        getattr(env, call)(*([0] if call == "step" else []))


RESET_OPTIONS = {
    "a string": "position", "a list": ["position"], "unknown key": {"foo": 1},
    "position a number": {"position": 5}, "position empty": {"position": ""},
    "position malformed": {"position": "happy-block; hands=²-²"}, "position huge": {"position": HUGE},
}


@pytest.mark.parametrize("env_name", ENV_NAMES)
@pytest.mark.parametrize("kind", list(RESET_OPTIONS))
def test_bad_reset_options(env_name, kind):
    env = _envs()[env_name]()
    with pytest.raises(PipslabError) as err:
        env.reset(options=RESET_OPTIONS[kind])
    assert len(str(err.value)) < MAX_MESSAGE


@pytest.mark.parametrize("options, match", [
    ({"position": "4HPwATDgc/ABMA", "dice": 5}, "dice"),
    ({"position": "4HPwATDgc/ABMA", "dice": (3, 7)}, "dice"),
    ({"position": "4HPwATDgc/ABMA", "dice": (3,)}, "dice"),
    ({"position": "4HPwATDgc/ABMA", "dice": "31"}, "dice"),
    ({"position": "4HPwATDgc/ABMA", "player": "x"}, "player"),
    ({"position": "4HPwATDgc/ABMA", "player": 2}, "player"),
    ({"position": "4HPwATDgc/ABMA", "player": True}, "player"),
    ({"dice": (3, 1)}, "position"),
    ({"position": "AAAAAAAAAAAAAA"}, "no checker"),
])
def test_bad_backgammon_reset_options(options, match):
    with pytest.raises(PipslabError, match=match):
        GameEnv("backgammon").reset(options=options)


CONSTRUCTOR = [
    (lambda: GameEnv("happy", opponents=5), "opponents"),
    (lambda: GameEnv("happy", learner_seat=True), "learner_seat"),
    (lambda: GameEnv("happy", learner_seat=1.0), "learner_seat"),
    (lambda: GameEnv("happy", auto_forced="no"), "auto_forced"),
    (lambda: GameEnv("happy", mode=["block"]), "mode"),
    (lambda: GameEnv("happy", illegal_action=["raise"]), "illegal_action"),
    (lambda: GameEnv("happy", render_mode=["ansi"]), "render_mode"),
    (lambda: GameEnv("troshin", players="2"), "players"),
    (lambda: GameEnv("troshin", players=True), "players"),
    (lambda: GameEnv("troshin", players=4, pairs="no"), "pairs"),
    (lambda: GameEnv("troshin", match="no"), "match"),
    (lambda: GameEnv("troshin", opponents=5), "opponents"),
    (lambda: GameEnv("troshin", opponents=["random"]), "opponents"),
    (lambda: GameEnv("triple", players=2.0), "players"),
    (lambda: GameEnv("triple", learner_seat=2), "learner_seat"),
    (lambda: GameEnv("backgammon", opponents=5), "opponents"),
    (lambda: GameEnv("backgammon", learner_seat=True), "learner_seat"),
    (lambda: GameEnv("backgammon", gammons="no"), "gammons"),
    (lambda: GameEnv("backgammon", opponents="grandmaster"), "unknown agent"),
    (lambda: GameEnv("backgammon", illegal_action=None), "illegal_action"),
    (lambda: GameEnv("happy", opponents=5), "opponents"),
    (lambda: GameEnv("happy", learner_seat=False), "learner_seat"),
    (lambda: GameEnv("happy", mode=5), "mode"),
    (lambda: GameEnv("chess"), "unknown game"),
]


@pytest.mark.parametrize("make, match", CONSTRUCTOR, ids=[str(i) for i in range(len(CONSTRUCTOR))])
def test_bad_constructor_arguments(make, match):
    with pytest.raises(PipslabError, match=match):
        make()
