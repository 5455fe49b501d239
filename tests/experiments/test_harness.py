"""The evaluation harness: intervals and ratings against hand-computed values, the seed
plan (seats rotated, duplicate deals), any number of seats and pairs, records, tables,
plots, replay by id, parallel = serial, config files."""
import math

import numpy as np
import pandas as pd
import pytest

from pipslab.envs.errors import PipslabError
from pipslab.experiments.cli import main
from pipslab.experiments.ratings import (bootstrap_ratings, cluster_interval, elo_difference, expected_score,
                                         fit_bradley_terry, score_matrix, wilson_interval)
from pipslab.experiments.summary import summarize, unit_rows
from pipslab.experiments.seedplan import Plan, game_units, outcome
from pipslab.envs.game import get_game
from pipslab.experiments.tournament import CONFIG_DIR, TournamentArgs, load_config, run_tournament

from harness_fakes import fakes_installed  # noqa: F401  (autouse: the fake games, this module only)


def records(df):
    return df.drop(columns="duration_s").sort_values("game_id").reset_index(drop=True)


# ------------------------------------------------------------------ intervals and ratings
def test_wilson_interval_hand_computed():
    # 50 of 100: centre 0.5, half-width 1.96*sqrt(.25/100 + 1.96^2/40000)/(1 + 1.96^2/100) = 0.09617
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.40383, abs=1e-5) and high == pytest.approx(0.59617, abs=1e-5)
    # 8 of 10 (Newcombe 1998, table I) and the edges
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0) and wilson_interval(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_cluster_interval_hand_computed():
    # clusters (wins, seats): (2, 2), (0, 2), (1, 2), (1, 2): ratio 4/8 = .5, residuals 1, -1, 0, 0,
    # variance 4/3 * 2 / 8^2, half-width 1.96 * sqrt(1/24) = 0.40008
    low, high = cluster_interval([2, 0, 1, 1], [2, 2, 2, 2])
    assert (low, high) == pytest.approx((0.5 - 0.40008, 0.5 + 0.40008), abs=1e-5)
    assert all(math.isnan(x) for x in cluster_interval([1], [2]))


def test_summary_intervals_take_the_deal_as_the_cluster():
    # two seats of "a" and one of "b" at each deal; a's two seats score the same points on a
    # deal (its luck): they are not independent, and the deal-clustered interval of a's
    # points is sqrt(2) times as wide as one that counts each seat a trial
    n = 400
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    a_wins = x > 0
    games = pd.DataFrame({"game_id": np.arange(n), "deal_id": np.arange(n), "seat0": "a", "seat1": "a", "seat2": "b",
                          "return_0": np.where(a_wins, 1.0, -0.5), "return_1": np.where(a_wins, 0.0, -0.5),
                          "return_2": np.where(a_wins, -0.5, 1.0),
                          "points_0": x, "points_1": x, "points_2": -2 * x})
    units = [[0], [1], [2]]
    summary = summarize(games, ["a", "b"], units, unit_rows(games, units)).set_index("agent")
    a = summary.loc["a"]
    assert a["games"] == 2 * n and a["win_rate"] == pytest.approx(a_wins.sum() / (2 * n))
    seats = np.concatenate([x, x])
    naive = 1.959964 * seats.std(ddof=1) / math.sqrt(2 * n)
    width = (a["avg_points_high"] - a["avg_points_low"]) / 2
    assert a["avg_points"] == pytest.approx(x.mean())
    assert width == pytest.approx(math.sqrt(2) * naive, rel=0.01)
    # a deal's wins (1 or 0 of a's 2 seats) against the ratio: the cluster-robust formula
    w, p = a_wins.astype(float), a_wins.sum() / (2 * n)
    half = 1.959964 * math.sqrt(n / (n - 1) * ((w - 2 * p) ** 2).sum()) / (2 * n)
    assert (a["win_rate_deal_low"], a["win_rate_deal_high"]) == pytest.approx((p - half, p + half), abs=1e-5)


def test_bradley_terry_two_agents_is_the_elo_formula():
    # A took 30 of 40 from B: the MLE gap is 400*log10(30/10) = 190.85 Elo
    fit = fit_bradley_terry(np.array([[0, 30], [10, 0]]))
    assert fit.prior == 0 and fit.converged
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert fit.ratings.mean() == pytest.approx(0.0, abs=1e-9)
    assert elo_difference(0.75) == pytest.approx(190.8485, abs=1e-4)
    assert expected_score(fit.ratings[0], fit.ratings[1]) == pytest.approx(0.75)
    # draws count half to each side: 10 wins, 20 draws, 10 losses is an even match
    even = fit_bradley_terry(np.array([[0, 10 + 10], [10 + 10, 0]]))
    assert even.ratings[0] == pytest.approx(even.ratings[1], abs=1e-9)


def test_bradley_terry_three_agents_recovers_consistent_strengths():
    # strengths 1 : 2 : 4 and results exactly in proportion (A-B 10:20, A-C 6:24, B-C 10:20)
    scores = np.array([[0, 10, 6], [20, 0, 10], [24, 20, 0]])
    r = fit_bradley_terry(scores).ratings
    step = 400 * math.log10(2)   # 120.41 Elo per doubling of strength
    assert r[1] - r[0] == pytest.approx(step, abs=1e-6) and r[2] - r[1] == pytest.approx(step, abs=1e-6)


def test_bradley_terry_perfect_record_gets_a_prior_and_stays_finite():
    fit = fit_bradley_terry(np.array([[0, 10], [0, 0]]))
    assert fit.prior > 0 and np.all(np.isfinite(fit.ratings)) and fit.ratings[0] > fit.ratings[1]
    # one virtual draw (half a point each): 10.5 of 11 -> 400*log10(10.5/0.5)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(21), abs=1e-6)


def test_bootstrap_is_seeded_and_brackets_the_fit():
    rng = np.random.default_rng(0)
    n = 400
    i, j = np.zeros(n, int), np.ones(n, int)
    s = (rng.random(n) < 0.75).astype(float)
    game = np.arange(n)
    fit, lo, hi = bootstrap_ratings(game, i, j, s, 2, n_boot=100, seed=3)
    fit2, lo2, hi2 = bootstrap_ratings(game, i, j, s, 2, n_boot=100, seed=3)
    assert np.array_equal(lo, lo2) and np.array_equal(hi, hi2)
    assert np.all(lo < fit.ratings) and np.all(fit.ratings < hi)
    assert score_matrix(i, j, s, 2).sum() == n


# ------------------------------------------------------------------ the seed plan
@pytest.mark.parametrize("duplicate", [True, False])
@pytest.mark.parametrize("units, n_agents", [([[0], [1]], 3), ([[0], [1], [2]], 4), ([[0], [1], [2], [3]], 4),
                                              ([[0, 2], [1, 3]], 3), ([[0], [1], [2]], 2)])
def test_every_agent_plays_every_seat_equally(units, n_agents, duplicate):
    plan = Plan(n_agents, units, duplicate=duplicate)
    cycle = len(plan.tables) * plan.group
    seat_counts = np.zeros((n_agents, plan.players), int)
    deals = {}
    for i in range(3 * cycle):
        deal, rot, seats = plan.game(i)
        for s, k in enumerate(seats):
            seat_counts[k, s] += 1
        deals.setdefault(deal, []).append(seats)
    # every agent that plays sits in every seat equally often
    for k in range(n_agents):
        assert len(set(seat_counts[k])) == 1, seat_counts
    if not duplicate:
        assert all(len(g) == 1 for g in deals.values())
        return
    # duplicate: a deal is played once per rotation, by the same agents in different seats
    for group in deals.values():
        assert len(group) == plan.group
        assert all(sorted(g) == sorted(group[0]) for g in group)
        if len(set(group[0])) == len(group[0]):
            assert len({tuple(g) for g in group}) == plan.group


def test_gauntlet_tables_always_hold_the_hero():
    plan = Plan(4, [[0], [1]], "gauntlet", hero=2)
    assert plan.tables == [(2, 0), (2, 1), (2, 3)]
    plan3 = Plan(4, [[0], [1], [2]], "gauntlet", hero=0)
    assert all(t[0] == 0 for t in plan3.tables) and len(plan3.tables) == 3
    with pytest.raises(PipslabError, match="format"):
        Plan(3, [[0], [1]], "swiss")


def test_units_from_teams():
    assert game_units(get_game("fake4pairs"), {}) == [[0, 2], [1, 3]]
    assert game_units(get_game("fake3"), {}) == [[0], [1], [2]]
    assert game_units(get_game("happy"), {"mode": "block"}) == [[0], [1]]
    assert outcome([1, -1]) == ("win", [0]) and outcome([0, 0, 0]) == ("draw", [])
    assert outcome([1, 1, -1]) == ("shared", [0, 1])


# ------------------------------------------------------------------ tournaments
def test_duplicate_twins_replay_the_same_deal_and_identical_agents_split_exactly(tmp_path):
    # two agents that play identically (the first legal action) under different names
    res = run_tournament(TournamentArgs(agents=["t_stand", "t_stand2"], games=300, seed=2, out=str(tmp_path),
                                        progress=False, plots=False))
    games, summary = res.games, res.summary.set_index("agent")
    for k in range(0, 300, 2):
        a, b = games.iloc[k], games.iloc[k + 1]
        assert a["deal_seed"] == b["deal_seed"] and a["moves"] == b["moves"]
        assert (a["seat0"], a["seat1"]) == (b["seat1"], b["seat0"])
        assert (a["pips_left_0"], a["pips_left_1"]) == (b["pips_left_0"], b["pips_left_1"])
    assert summary.loc["t_stand", "wins"] == summary.loc["t_stand2", "wins"]
    assert summary.loc["t_stand", "score"] == pytest.approx(0.5)
    assert res.ratings["rating"].abs().max() == pytest.approx(0.0, abs=1e-6)
    # without duplicate deals the twins are gone
    fresh = run_tournament(TournamentArgs(agents=["t_stand", "t_stand2"], games=20, seed=2, duplicate=False,
                                          out=str(tmp_path / "fresh"), progress=False, plots=False)).games
    assert fresh["deal_seed"].is_unique


def test_three_seat_game_with_identical_agents_splits_exactly(tmp_path):
    res = run_tournament(TournamentArgs(game="fake3", agents=["t_stand", "t_stand2", "t_stand3"], games=90,
                                        seed=1, out=str(tmp_path), progress=False, plots=False))
    s = res.summary.set_index("agent")
    assert len(set(s["wins"])) == 1 and len(set(s["draws"])) == 1 and (s["games"] == 90).all()
    assert (res.games["players"] == 3).all() and {"seat0", "seat1", "seat2", "pips_left_2"} <= set(res.games)


@pytest.mark.slow
def test_multi_seat_and_pairs_tournament_tables(tmp_path):
    res = run_tournament(TournamentArgs(game="fake3", agents=["t_bump", "t_stand", "t_random", "t_stand2"],
                                        games=96, seed=4, out=str(tmp_path / "a"), progress=False, plots=True))
    s = res.summary.set_index("agent")
    assert s["games"].sum() == 96 * 3                     # one row per seat
    assert (s["wins"] + s["draws"] + s["losses"] == s["games"]).all()
    assert s.loc["t_bump", "win_rate"] > s.loc["t_stand", "win_rate"]   # bumping never hurts
    assert len(res.pairings) == 6 and (res.pairings["games"] > 0).all()
    for png in ("head_to_head.png", "ratings.png", "pip_margins.png"):
        assert (tmp_path / "a" / png).stat().st_size > 1000
    # pairs: each agent plays as a team; one row per team and game
    pairs = run_tournament(TournamentArgs(game="fake4pairs", agents=["t_bump", "t_stand", "t_random"], games=60,
                                          seed=4, out=str(tmp_path / "b"), progress=False, plots=False))
    g = pairs.games
    assert (g["seat0"] == g["seat2"]).all() and (g["seat1"] == g["seat3"]).all() and (g["seat0"] != g["seat1"]).all()
    ps = pairs.summary.set_index("agent")
    assert ps["games"].sum() == 60 * 2
    assert ps.loc["t_bump", "score"] > 0.5 > ps.loc["t_stand", "score"]
    # a team's pips are the partners' sum
    assert pairs.summary["avg_pips_left"].max() > 9  # two hands of up to 9 each


def test_gauntlet_meets_only_the_hero(tmp_path):
    res = run_tournament(TournamentArgs(agents=["random", "heaviest", "suits"], fmt="gauntlet", hero="suits",
                                        games=40, seed=0, out=str(tmp_path), progress=False, plots=False))
    g = res.games
    assert ((g["seat0"] == "suits") | (g["seat1"] == "suits")).all()
    assert (g["seat0"] == "suits").sum() == 20
    met = set(map(tuple, res.pairings[["agent", "opponent"]].values))
    assert ("random", "heaviest") not in met and ("heaviest", "random") not in met
    assert met == {("random", "suits"), ("heaviest", "suits")}


def test_records_and_output_files(tmp_path):
    out = tmp_path / "t"
    assert main(["tournament", "happy", "--agents", "random,heaviest,suits", "--games", "60", "--seed", "7",
                 "--out", str(out), "--workers", "1", "--no-progress", "--no-plots"]) == 0
    games = pd.read_csv(out / "games.csv")
    for col in ["game_id", "game", "variant", "seat0", "seat1", "deal_seed", "agent_seed", "moves", "winner",
                "result", "pips_left_0", "pips_left_1", "points_0", "blocked", "passes", "draws", "duration_s"]:
        assert col in games.columns, col
    assert games["game_id"].tolist() == list(range(60))
    summary = pd.read_csv(out / "summary.csv")
    for col in ["agent", "games", "wins", "draws", "losses", "win_rate", "win_rate_low", "win_rate_high",
                "avg_pips_left", "avg_opp_pips_left", "avg_pip_diff", "avg_points", "blocked_share",
                "blocked_win_rate"]:
        assert col in summary.columns, col
    assert (summary["win_rate_low"] <= summary["win_rate"]).all() and (summary["win_rate"] <= summary["win_rate_high"]).all()
    ratings = pd.read_csv(out / "ratings.csv")
    assert set(ratings.columns) >= {"agent", "rating", "rating_low", "rating_high"} and len(ratings) == 3
    pairings = pd.read_csv(out / "pairings.csv")
    assert len(pairings) == 3 and pairings["games"].sum() == 60
    md = (out / "summary.md").read_text()
    assert "Wilson" in md and "Bradley" in md and "| heaviest" in md


@pytest.mark.slow
def test_parallel_and_serial_give_the_same_records(tmp_path):
    common = dict(agents=["random", "heaviest", "suits"], games=240, seed=11, progress=False, plots=False)
    serial = run_tournament(TournamentArgs(out=str(tmp_path / "s"), workers=1, **common))
    parallel = run_tournament(TournamentArgs(out=str(tmp_path / "p"), workers=2, **common))
    pd.testing.assert_frame_equal(records(serial.games), records(parallel.games))
    pd.testing.assert_frame_equal(serial.summary, parallel.summary)
    # the file on disk is sorted by game_id after a parallel run too
    assert pd.read_csv(tmp_path / "p" / "games.csv")["game_id"].is_monotonic_increasing


def test_game_i_does_not_depend_on_the_number_of_games(tmp_path):
    short = run_tournament(TournamentArgs(agents=["random", "suits"], games=30, seed=5, out=str(tmp_path / "a"),
                                          progress=False, plots=False))
    long = run_tournament(TournamentArgs(agents=["random", "suits"], games=50, seed=5, out=str(tmp_path / "b"),
                                         progress=False, plots=False))
    pd.testing.assert_frame_equal(records(short.games), records(long.games).iloc[:30])


def test_resume_extends_and_refuses_a_different_plan(tmp_path):
    base = dict(agents=["random", "suits"], seed=3, out=str(tmp_path), progress=False, plots=False)
    run_tournament(TournamentArgs(games=20, **base))
    more = run_tournament(TournamentArgs(games=50, resume=True, **base))
    assert more.played == 30 and len(more.games) == 50
    again = run_tournament(TournamentArgs(games=50, resume=True, **base))
    assert again.played == 0
    ref = run_tournament(TournamentArgs(games=50, **dict(base, out=str(tmp_path / "ref"))))
    pd.testing.assert_frame_equal(records(more.games), records(ref.games))
    with pytest.raises(PipslabError, match="different tournament"):
        run_tournament(TournamentArgs(games=50, resume=True, **dict(base, seed=4)))
    with pytest.raises(PipslabError, match="smaller"):
        run_tournament(TournamentArgs(games=10, resume=True, **base))


def test_torn_last_line_is_dropped_on_resume(tmp_path):
    base = dict(agents=["random", "suits"], seed=3, out=str(tmp_path), progress=False, plots=False)
    full = run_tournament(TournamentArgs(games=30, **base))
    path = tmp_path / "games.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:21]) + lines[21][:17])   # header + 20 games + a torn row
    resumed = run_tournament(TournamentArgs(games=30, resume=True, **base))
    assert resumed.played == 10
    pd.testing.assert_frame_equal(records(resumed.games), records(full.games))


# ------------------------------------------------------------------ replay by id
def test_replay_by_id_prints_the_game_as_played(tmp_path, capsys):
    out = tmp_path / "t"
    run_tournament(TournamentArgs(agents=["random", "heaviest", "suits"], games=30, seed=6, out=str(out),
                                  progress=False, plots=False))
    row = pd.read_csv(out / "games.csv").iloc[17]
    assert main(["play", "--replay", "17", "--from", str(out)]) == 0
    from_csv = capsys.readouterr().out
    assert "replay matches the record" in from_csv and f"{row['moves']} moves" in from_csv
    assert from_csv.count("seat ") >= row["moves"]
    # the same game re-derived from the seed plan, agents in the seats they had
    assert main(["play", "happy", "--replay", "17", "--seed", "6", "--agents", f"{row['seat0']},{row['seat1']}"]) == 0
    from_seed = capsys.readouterr().out
    assert from_seed.strip() == from_csv.strip().rsplit("\n", 1)[0].strip()
    assert main(["play", "--replay", "99", "--from", str(out)]) == 2


# ------------------------------------------------------------------ config files
def test_ready_configs_are_valid():
    from pipslab.agents.registry import agent_names
    configs = sorted(CONFIG_DIR.glob("*.toml"))
    assert configs, "no ready configs"
    for path in configs:
        cfg = load_config(str(path))
        game = cfg.get("game", "happy")
        get_game(game)
        from pipslab.experiments.cliargs import split_agent_list
        agents = cfg["agents"] if isinstance(cfg["agents"], list) else split_agent_list(cfg["agents"])
        for a in agents:
            assert a.partition(":")[0] in agent_names(game), (path.name, a)


def test_config_file_runs_and_flags_override_it(tmp_path, capsys):
    cfg = tmp_path / "mini.toml"
    cfg.write_text('game = "happy"\nmode = "draw"\nagents = ["random", "suits"]\ngames = 500\nseed = 4\n'
                   f'out = "{tmp_path / "from_config"}"\nplots = false\n')
    assert main(["tournament", "--config", str(cfg), "--games", "12", "--workers", "1", "--no-progress"]) == 0
    games = pd.read_csv(tmp_path / "from_config" / "games.csv")
    assert len(games) == 12 and (games["variant"] == "happy-draw").all() and set(games["seat0"]) == {"random", "suits"}
    bad = tmp_path / "bad.toml"
    bad.write_text('agents = ["random", "suits"]\nrounds = 3\n')
    assert main(["tournament", "--config", str(bad)]) == 2
    assert "unknown keys rounds" in capsys.readouterr().err


def test_bench_harness_table():
    from pipslab.experiments.bench_harness import format_table, measure
    r = measure(0.01, 0, repeat=1, min_games=100)
    assert r["games"] >= 100 and r["bare_games_per_s"] > 0 and r["harness_games_per_s"] > 0
    assert "harness" in format_table(r)


def test_backgammon_like_results_give_gammon_rates_and_points(tmp_path):
    res = run_tournament(TournamentArgs(game="fakegammon", agents=["t_bump", "t_stand"], games=200, seed=3,
                                        out=str(tmp_path), progress=False, plots=False))
    g = res.games
    # one number of points for the game, signed per seat; gammon flags recorded as they come
    assert {"points_0", "points_1", "gammon", "backgammon"} <= set(g.columns)
    assert ((g["points_0"] == -g["points_1"]) & (g["points_0"].abs() <= 3)).all()
    s = res.summary.set_index("agent")
    bump = [(row.seat0 == "t_bump", row) for row in g.itertuples()]
    won = [(mine and r.winner_seat == 0) or (not mine and r.winner_seat == 1) for mine, r in bump]
    gammons = sum(w and r.gammon for w, (_, r) in zip(won, bump))
    backgammons = sum(w and r.backgammon for w, (_, r) in zip(won, bump))
    points = sum(r.points_0 if mine else r.points_1 for mine, r in bump)
    assert s.loc["t_bump", "gammon_rate"] == pytest.approx(gammons / 200)
    assert s.loc["t_bump", "backgammon_rate"] == pytest.approx(backgammons / 200)
    assert s.loc["t_bump", "avg_points"] == pytest.approx(points / 200)
    assert s.loc["t_bump", "avg_points"] == pytest.approx(-s.loc["t_stand", "avg_points"])
    p = res.pairings.iloc[0]
    assert p["gammon_rate"] == pytest.approx(gammons / 200) and p["avg_points"] == pytest.approx(points / 200)


def test_backgammon_through_the_harness(tmp_path):
    res = run_tournament(TournamentArgs(game="backgammon", agents=["race", "pubeval"], games=4, seed=1,
                                        out=str(tmp_path), progress=False, plots=False))
    g = res.games
    assert len(g) == 4 and g["deal_seed"].iloc[0] == g["deal_seed"].iloc[1]          # duplicate dice
    assert (g["points_0"] == -g["points_1"]).all() and g["points_0"].abs().between(1, 3).all()
    # the winner has borne off everything: no pips left
    assert all(row[f"pips_left_{row['winner_seat']}"] == 0 for _, row in g.iterrows())
    assert {"gammon_rate", "backgammon_rate", "avg_points"} <= set(res.summary.columns)
