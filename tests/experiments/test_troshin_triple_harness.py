"""The harness side of Troshin and Triple: GameSpecs, the one game loop with 2-4 seats,
teams, results with per-seat points, matches, and every agent in every variant."""
import pytest

from pipslab.agents.registry import agent_names, make_agent
from pipslab.envs.errors import PipslabError
from pipslab.envs.game import get_game
from pipslab.experiments.games import play_game

from dominoes_helpers import t
from harness_helpers import play_checked

TROSHIN_OPTIONS = [{"players": 2}, {"players": 3}, {"players": 4}, {"players": 4, "pairs": True},
                   {"players": 2, "match": True}, {"players": 4, "pairs": True, "match": True}]


def test_game_specs_players_teams_and_labels():
    troshin, triple, happy = get_game("troshin"), get_game("triple"), get_game("happy")
    assert troshin.players({"players": 4, "pairs": True}) == 4
    assert troshin.teams({"players": 4, "pairs": True}) == (0, 1, 0, 1)
    assert troshin.teams({"players": 3}) == (0, 1, 2)
    assert triple.teams({"players": 4}) == (0, 1, 2, 3)
    assert happy.teams({"mode": "draw"}) == (0, 1)          # the default: one side per seat
    assert troshin.variant_label({"players": 4, "pairs": True, "match": True}) == "troshin-4-pairs-match"
    assert triple.variant_label({"players": 3}) == "triple-3"
    with pytest.raises(PipslabError, match="pairs need 4 players"):
        troshin.players({"players": 3, "pairs": True})
    with pytest.raises(PipslabError, match="not a whole number"):
        triple.players({"players": "many"})


@pytest.mark.parametrize("options", TROSHIN_OPTIONS, ids=str)
def test_troshin_games_through_the_loop(options):
    spec = get_game("troshin")
    n = spec.players(options)
    names = ["random", "heaviest", "suits", "partner"][:n]
    agents = [make_agent(a, "troshin") for a in names]
    for g in range(3 if options.get("match") else 20):
        state, moves, _ = play_game(spec, options, agents, [g, 0], [g, 1])
        r = state.result()
        assert set(r) >= {"winner", "winners", "draw", "blocked", "pips_left", "points", "returns"}
        assert len(r["points"]) == len(r["pips_left"]) == n
        stats = spec.outcome(state).extra
        assert [stats[f"points_{s}"] for s in range(n)] == r["points"]
        if options.get("match"):
            assert r["match"] and max(r["scores"]) >= 100 and stats["hands"] == r["hands"]
            assert [sum(h[t] for h in r["hand_points"]) for t in range(len(r["scores"]))] == r["scores"]
        if options.get("pairs") and r["winners"]:
            assert sorted(r["winners"]) in ([0, 2], [1, 3])
    # duplicate deals replay: the same seeds give the same game
    a = play_game(spec, options, agents, [5, 0], [5, 1])[0]
    b = play_game(spec, options, agents, [5, 0], [5, 1])[0]
    assert a.result() == b.result()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_triple_games_through_the_loop(players):
    spec = get_game("triple")
    names = ["greedy", "random", "heaviest", "suits"][:players]
    agents = [make_agent(a, "triple") for a in names]
    for g in range(15):
        state, moves, _ = play_game(spec, {"players": players}, agents, [g, 0], [g, 1])
        r = state.result()
        stats = spec.outcome(state).extra
        assert [stats[f"winnings_{s}"] - stats[f"penalties_{s}"] for s in range(players)] == r["points"]
        assert sorted(r["ranks"])[0] == 1 and abs(sum(r["returns"])) < 1e-9


def test_every_domino_agent_plays_every_variant():
    for game, options in (("happy", {"mode": "draw"}), ("troshin", {"players": 4, "pairs": True}),
                          ("troshin", {"players": 3, "match": True}), ("triple", {"players": 4})):
        spec = get_game(game)
        n = spec.players(options)
        for name in ("random", "heaviest", "suits", "partner", "greedy"):
            if name not in agent_names(game):
                continue
            agents = [make_agent(name, game)] + [make_agent("random", game) for _ in range(n - 1)]
            play_checked(spec, options, agents, [1, 0], [1, 1])
    assert "greedy" in agent_names("triple") and "partner" in agent_names("troshin")
    assert {"random", "heaviest", "suits"} <= set(agent_names("triple"))


def test_greedy_beats_random_and_suits_at_triple():
    spec = get_game("triple")
    for rival in ("random", "suits"):
        total = 0.0
        for g in range(120):
            names = ["greedy", rival] if g % 2 == 0 else [rival, "greedy"]
            state, _, _ = play_game(spec, {"players": 2}, [make_agent(a, "triple") for a in names],
                                    [g // 2, 0], [g, 1])
            total += state.returns()[names.index("greedy")]
        assert total / 120 > 0.1, rival


def test_greedy_draws_only_when_the_odds_pay():
    from pipslab.agents.base import Observation
    from pipslab.envs.dominoes.notation import parse_position
    greedy = make_agent("greedy", "triple")
    # nothing scores from this hand and few unseen tiles would: it stops (passes) after a draw
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=0-0 / 2-2 6-6; "
                       "boneyard=0-1 1-1; draws=1")
    obs = Observation(0, s.observe(0), s.legal_actions(), s.num_actions)
    assert s.legal_actions() == [112, 113] and greedy.act(obs, None) == 113
    # a scoring placement is taken over a draw when the draw's odds are poor
    s = parse_position("triple-2; turn=0; ends=5|4|3|-; spinner=5; hands=1-4 / 2-2 6-6; boneyard=0-1 1-1")
    obs = Observation(0, s.observe(0), s.legal_actions(), s.num_actions)
    assert greedy.act(obs, None) == 4 * t("1-4") + 1   # 1-4 on the right: count 9, 5 points
