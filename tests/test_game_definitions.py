"""The typed game definitions (pipslab.envs.game): every built-in game is one Game in
GAMES, its engine satisfies the State/View protocols, options are checked by the game, and
a finished game's Outcome says who won — a seat, a team, or nobody — the same way in every
game."""
import numpy as np
import pytest

from pipslab.agents.registry import make_agent
from pipslab.envs import GAMES, Outcome, State, View
from pipslab.envs.errors import PipslabError
from pipslab.experiments.cli import build_parser
from pipslab.experiments.games import play_game

CASES = [("happy", {"mode": "draw"}), ("troshin", {"players": 4, "pairs": True}), ("troshin", {"match": True}),
         ("triple", {"players": 3}), ("backgammon", {"gammons": False})]


def test_the_built_in_games_are_registered_with_their_gym_ids():
    import gymnasium
    assert {"happy", "troshin", "triple", "backgammon"} <= set(GAMES)
    for game in GAMES.values():
        if game.env_id:
            assert game.env_id in gymnasium.registry
    assert GAMES.family("dominoes") == ["happy", "troshin", "triple", "troshin6"]


@pytest.mark.parametrize("name, options", CASES, ids=str)
def test_engines_satisfy_the_protocols_and_outcomes_are_typed(name, options):
    game = GAMES[name]
    state = game.new_state(np.random.default_rng(1), options)
    assert isinstance(state, State) and isinstance(state.observe(0), View)
    assert state.num_actions == game.actions(options)
    n = game.players(options)
    agents = [make_agent("random", name) for _ in range(n)]
    for g in range(3):
        state, _, _ = play_game(game, options, agents, [g, 0], [g, 1])
        out = game.outcome(state)
        assert isinstance(out, Outcome) and len(out.returns) == len(out.points) == n
        assert out.returns == tuple(state.returns())
        teams = game.teams(options)
        if out.draw:
            assert out.winners == () and out.winner is None and out.team is None
        else:
            assert out.winners and all(teams[s] == teams[out.winners[0]] for s in out.winners) == (out.team is not None)
            assert out.winner is None or out.winners == (out.winner,)
            assert out.team is None or out.team == teams[out.winners[0]]
        if options.get("pairs") and out.winners:
            assert out.winner is None and sorted(out.winners) in ([0, 2], [1, 3])


def test_options_are_checked_by_the_game_with_one_line_naming_the_option():
    with pytest.raises(PipslabError, match="option mode='blitz'"):
        GAMES["happy"].resolve({"mode": "blitz"})
    with pytest.raises(PipslabError, match="happy has no option 'players'"):
        GAMES["happy"].resolve({"players": 3})
    with pytest.raises(PipslabError, match="option players=7: expected 2..4"):
        GAMES["triple"].players({"players": 7})
    with pytest.raises(PipslabError, match="option gammons='maybe': expected true or false"):
        GAMES["backgammon"].resolve({"gammons": "maybe"})
    assert GAMES["backgammon"].resolve({"gammons": "false"})["gammons"] is False
    assert GAMES["troshin"].resolve({"players": "4", "pairs": "true"}) == {
        "players": 4, "pairs": True, "match": False, "position": None}
    # only Happy's mode is recorded by default; the others when given
    assert GAMES["happy"].options_for({}) == {"mode": "block"}
    assert GAMES["troshin"].options_for({"players": 3}) == {"players": 3}


def test_cli_option_flags_come_from_the_games():
    parser = build_parser()
    ns = parser.parse_args(["tournament", "troshin", "--players", "4", "--pairs", "--match"])
    assert (ns.players, ns.pairs, ns.match, ns.mode) == (4, True, True, None)
    ns = parser.parse_args(["play", "happy", "--mode", "draw", "--agents", "random,random"])
    assert ns.mode == "draw"
    with pytest.raises(SystemExit):
        parser.parse_args(["tournament", "happy", "--mode", "blitz"])


@pytest.mark.parametrize("name, options", [c for c in CASES if not c[1].get("match")] + [("happy", {"mode": "block"})],
                         ids=str)
def test_every_phase_a_game_names_is_among_its_phase_names_in_order(name, options):
    """``phases_of`` lists every phase ``phase_of`` returns, in the order a hand meets them
    (what ``--guide-phases`` is checked against); a game gives both or neither."""
    game = GAMES[name]
    names = game.phases_of(options)
    rng = np.random.default_rng(2)
    seen = set()
    for g in range(6):
        state = game.new_state(rng, options)
        last = {}           # per seat: its phases come in order
        while not state.is_terminal:
            if state.is_chance:
                state.apply_chance(rng)
                continue
            phase = game.phase_of(state)
            assert phase in names
            if name != "backgammon":        # a hit can bring a race back to contact
                assert names.index(phase) >= last.get(state.current_player, 0)
                last[state.current_player] = names.index(phase)
            seen.add(phase)
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    assert len(seen) >= 2
    from pipslab.envs.game import Game
    with pytest.raises(PipslabError, match="phase and phase_names come together"):
        Game(name="x", make_state=lambda rng, o: None, outcome=lambda s: None, phase=lambda s: "a")
