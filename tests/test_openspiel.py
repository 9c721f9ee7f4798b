"""Qwixx as an OpenSpiel game (`qwixx_env.integrations.openspiel`): OpenSpiel's own checks, the
same game as the env for the same dice and decisions, hidden white choices, and bots both ways."""

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed (the openspiel extra)")

from open_spiel.python.algorithms import ismcts  # noqa: E402
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots  # noqa: E402

from qwixx_env import qwixx_v0  # noqa: E402
from qwixx_env.arena import run_arena  # noqa: E402
from qwixx_env.core.variant import Row, Variant, register_variant  # noqa: E402
from qwixx_env.integrations import openspiel as qwixx_spiel  # noqa: E402
from qwixx_env.integrations.openspiel_bots import SEARCH_BOT, PlayoutEvaluator, SearchBot, SpielBot  # noqa: E402

TABLES = [  # (players, variant, lucky)
    *[(p, "classic", "bonus") for p in range(1, 6)],
    *[(p, "longo", "bonus") for p in range(1, 6)],
    *[(p, "longo", "instead") for p in (2, 3)],
]

# A sheet the package does not know, defined here alone: three rows whose cells cycle through the
# colours of three dice (the bottom row all green), so a colour die serves cells of several rows.
UP = tuple(range(2, 13))
CYCLE = ("red", "yellow", "green")
TRIO = register_variant(Variant(
    name="openspiel_trio", faces=6, lock_cells=1, lock_threshold=5,
    score_table=tuple(k * (k + 1) // 2 for k in range(13)),
    rows=(
        Row("top", UP, colors=tuple(CYCLE[i % 3] for i in range(11))),
        Row("middle", UP[::-1], colors=tuple(CYCLE[(i + 1) % 3] for i in range(11))),
        Row("bottom", UP, colors=("green",) * 11),
    ),
))


def load(players=2, variant="classic", lucky="bonus", start_player=0):
    return pyspiel.load_game(
        qwixx_spiel.GAME_NAME, {"players": players, "variant": variant, "lucky": lucky, "start_player": start_player}
    )


@pytest.mark.parametrize("players,variant,lucky", TABLES)
def test_openspiel_random_sim_test(players, variant, lucky):
    """OpenSpiel's own consistency checks: chance outcomes sum to one, legal actions, returns,
    observation and information-state strings and tensors, serialisation, clones."""
    pyspiel.random_sim_test(load(players, variant, lucky, start_player=-1 if players == 3 else 0),
                            num_sims=1, serialize=True, verbose=False)


def test_the_game_type_and_parameters():
    game = pyspiel.load_game("python_qwixx(players=3,variant=longo,lucky=instead)")
    assert game.num_players() == 3 and game.table.lucky == "instead" and game.variant.name == "longo"
    assert game.num_distinct_actions() == 4 * 15 + 1
    assert game.max_chance_outcomes() == 15  # a lucky number: 2..16
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    two = load(2)
    assert two.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM and two.utility_sum() == 0
    assert (two.min_utility(), two.max_utility()) == (-1, 1)
    assert two.observation_tensor_shape() == [qwixx_v0.raw_env(num_players=2).layout.size]
    assert load(1).min_utility() < 0 < load(1).max_utility()  # solo returns the score
    with pytest.raises(Exception, match="num_players"):
        load(players=6)
    with pytest.raises(Exception, match="colour"):
        pyspiel.load_game("python_qwixx(colour=1)")


def test_an_illegal_action_raises_and_changes_nothing():
    state = load().new_initial_state()
    with pytest.raises(Exception, match="chance outcome 6"):
        state.apply_action(6)  # a six-sided die: outcomes 0..5
    while state.is_chance_node():
        state.apply_action(0)  # all ones: white sum 2
    before = state.information_state_string(0)
    with pytest.raises(Exception, match="illegal for seat 0"):
        state.apply_action(5)  # red 7: not the white sum
    assert state.information_state_string(0) == before and state.legal_actions() == [0, 11, 44]


def _feed_chance(state, env, dice_left):
    """Apply the chance outcome the env drew for `state`'s next chance node (the documented order:
    lucky numbers, start seat, then the dice in play white, white, red, yellow, green, blue)."""
    text = state.action_to_string(pyspiel.PlayerId.CHANCE, 0)
    snap = env.snapshot()
    if text.startswith("lucky number"):
        j, seat = int(text.split()[2]) - 1, int(text.split()[5].split("=")[0])
        state.apply_action(snap["players"][seat]["lucky_numbers"][j] - 2)
    elif text.startswith("start seat"):
        state.apply_action(snap["active_player"])
    else:
        if not dice_left:
            dice_left.extend(int(d) for d in env.core_state.dice[0] if d > 0)
        state.apply_action(dice_left.pop(0) - 1)


@pytest.mark.parametrize("players,variant,lucky", [*TABLES, (3, TRIO.name, "bonus")])
def test_same_dice_and_decisions_give_the_env_game(players, variant, lucky):
    """Driven by the env's dice and the same random decisions, the OpenSpiel game offers the same
    legal actions, shows every seat the same observation vector at every decision, and ends with
    the same scores and the env's rewards as its returns."""
    rng = np.random.default_rng(players)
    start = "random" if players == 4 else 0
    for seed in range(2):
        env = qwixx_v0.raw_env(num_players=players, variant=variant, lucky=lucky, start_player=start)
        env.reset(seed=seed)
        state = load(players, variant, lucky, start_player=-1 if start == "random" else 0).new_initial_state()
        dice_left: list[int] = []
        while not env.terminations[env.agent_selection]:
            while state.is_chance_node():
                _feed_chance(state, env, dice_left)
            seat = env.agent_name_mapping[env.agent_selection]
            assert state.current_player() == seat
            assert state.legal_actions() == env.legal_actions()
            for other, agent in enumerate(env.possible_agents):
                assert np.array_equal(np.array(state.observation_tensor(other), np.float32),
                                      env.observe(agent)["observation"])
            action = int(rng.choice(env.legal_actions()))
            env.step(action)
            state.apply_action(action)
        assert state.is_terminal() and not dice_left
        assert state.scores() == [p["score"] for p in env.snapshot()["players"]]
        assert state.returns() == [float(env.rewards[a]) for a in env.possible_agents]


def test_a_registered_sheet_of_three_mixed_rows_plays_to_the_end():
    """The game reads its sheet from the variant: a registered three-row sheet, named in the
    game's parameters, has its own actions, dice and rows, passes OpenSpiel's checks and plays
    random games to the end."""
    game = load(3, TRIO.name, start_player=-1)
    assert game.variant == TRIO and game.num_distinct_actions() == 3 * 11 + 1
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    rng = np.random.default_rng(0)
    for _ in range(3):
        state, dice_named = game.new_initial_state(), set()
        while not state.is_terminal():
            if state.is_chance_node():
                dice_named.add(state.action_to_string(pyspiel.PlayerId.CHANCE, 0).split("=")[0])
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                legal = state.legal_actions()
                assert legal[-1] <= 3 * 11  # pass is 33
                state.apply_action(int(rng.choice(legal)))
        assert {"die 2 (red)", "die 3 (yellow)", "die 4 (green)"} <= dice_named
        assert "die 5" not in " ".join(dice_named)  # three coloured dice, not four
        assert len(state.returns()) == 3 and sum(state.returns()) <= 1
    sheet = str(state).split(" | ")[1]  # the observer's own sheet: its rows by initial
    assert [row[0] for row in sheet.split(": ")[1].split()[:3]] == ["t", "m", "b"]


def _white_action_state(players=3):
    """A 3-player classic game at its first white action, the dice drawn: whites 3 and 4 (sum 7)."""
    state = load(players).new_initial_state()
    for face in (3, 4, 1, 1, 6, 6):
        state.apply_action(face - 1)
    return state


def test_white_choices_stay_hidden_until_all_have_decided():
    crossing, passing = _white_action_state(), _white_action_state()
    assert crossing.current_player() == 0
    crossing.apply_action(5)  # seat 0 crosses red 7
    passing.apply_action(44)  # seat 0 passes
    # seat 1 decides next and sees nothing of seat 0's choice, in any form
    assert crossing.information_state_string(1) == passing.information_state_string(1)
    assert crossing.observation_string(1) == passing.observation_string(1)
    assert crossing.observation_tensor(1) == passing.observation_tensor(1)
    assert crossing.information_state_string(2) == passing.information_state_string(2)
    assert crossing.information_state_string(0) != passing.information_state_string(0)  # seat 0 recalls it
    for state in (crossing, passing):
        state.apply_action(44)  # seat 1 passes
    assert crossing.information_state_string(2) == passing.information_state_string(2)
    for state in (crossing, passing):
        state.apply_action(44)  # seat 2 passes: the white action resolves, the sheets show it
    assert crossing.information_state_string(1) != passing.information_state_string(1)
    assert crossing.observation_tensor(1) != passing.observation_tensor(1)


def test_resampling_redraws_only_what_the_seat_cannot_see():
    state = _white_action_state()
    state.apply_action(5)  # seat 0 crosses red 7
    state.apply_action(11 + 5)  # seat 1 crosses yellow 7
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    seen = set()
    for _ in range(40):
        sample = state.resample_from_infostate(2, sampler)
        assert sample.information_state_string(2) == state.information_state_string(2)
        assert sample.current_player() == 2 and sample.legal_actions() == state.legal_actions()
        seen.add(sample.information_state_string(0) + sample.information_state_string(1))
    assert len(seen) > 5  # seats 0 and 1 each: red, yellow, green or blue 7, or pass (25 pairs)
    # with nothing hidden the sample is the state itself
    colour = _white_action_state(players=1)
    colour.apply_action(44)
    assert colour.resample_from_infostate(0, sampler).information_state_string(0) == colour.information_state_string(0)


def test_project_bots_play_through_openspiel_evaluate_bots():
    game = load(2)
    rng = np.random.RandomState(0)
    totals = np.zeros(2)
    for g in range(2):
        bots = [SpielBot(game, "heuristic", seed=g), SpielBot(game, "random", seed=g)]
        returns = evaluate_bots(game.new_initial_state(), bots, rng)
        assert sum(returns) == 0 and set(returns) <= {-1.0, 0.0, 1.0}
        totals += returns
    assert totals[0] == 2  # the heuristic beats random play
    with pytest.raises(ValueError, match="bot name"):
        SpielBot(game, "nobody")


@pytest.mark.slow
def test_ismcts_plays_arena_games_as_a_project_bot():
    """OpenSpiel's ISMCTS (tiny search) plays whole arena games; its search runs from the
    position the seat sees, through OpenSpiel's `ISMCTSBot`, with the compiled playouts."""
    result = run_arena([(SEARCH_BOT, {"simulations": 8}), "random"], num_players=2, games=1, seed=0, workers=1)
    assert result.bots[0]["games"] == 2 and result.bots[0]["win_rate"] >= 0.5
    with pytest.raises(ValueError, match="simulations"):
        SearchBot(simulations=0)


@pytest.mark.slow
def test_ismcts_searches_the_game_directly():
    game = load(3, "longo")
    evaluator = PlayoutEvaluator(game, playouts=2, seed=0)
    bot = ismcts.ISMCTSBot(game, evaluator, 1.0, 16, random_state=np.random.RandomState(0))
    state = game.new_initial_state()
    for _ in range(60):  # a few rolls, every decision by the search
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(outcomes[np.random.default_rng(len(state.history())).choice(len(outcomes), p=probs)])
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    values = evaluator.evaluate(state)
    assert values.shape == (3,) and np.all(np.abs(values) <= 1)


@pytest.mark.parametrize("variant,lucky", [("classic", "bonus"), ("longo", "bonus"), ("longo", "instead")])
def test_a_state_from_an_observation_is_the_position_the_seat_sees(variant, lucky):
    """What the search bot searches from: at every decision of an env game, the state rebuilt from
    the deciding seat's observation has that seat (as seat 0) to decide, the env's legal actions
    and the very observation vector, whatever the hidden choices it drew for earlier seats."""
    game = load(3, variant, lucky)
    env = qwixx_v0.raw_env(num_players=3, variant=variant, lucky=lucky)
    env.reset(seed=5)
    rng = np.random.default_rng(0)
    while not env.terminations[env.agent_selection]:
        obs = env.observe(env.agent_selection)
        state = game.state_from_observation(obs, rng)
        assert state.current_player() == 0 and state.legal_actions() == env.legal_actions()
        assert np.array_equal(np.array(state.observation_tensor(0), np.float32), obs["observation"])
        env.step(int(rng.choice(env.legal_actions())))


def _chance_outcome(state, rng):
    """A chance outcome drawn so that, half the time, the white sum is a lucky number of some
    seat (Longo), where lucky crosses and their ties come from."""
    outcomes = [k for k, _ in state.chance_outcomes()]
    core = state.core_state
    second_white = state.action_to_string(pyspiel.PlayerId.CHANCE, 0).startswith("die 1 ")
    if second_white and core.lucky_numbers.any() and rng.random() < 0.5:
        second = int(rng.choice(core.lucky_numbers[0].ravel())) - int(core.dice[0, 0]) - 1
        if second in outcomes:
            return second
    return int(rng.choice(outcomes))


def _perfect_recall_walk(game, seed, rolls=12, branches=12):
    """Check OpenSpiel's perfect recall over many histories of `game`: two histories that give
    seat p the same information state give p the same action-observation history (p's own
    actions, and what p observed: its observation each time it changed, from the start). A
    random game, and at each white action `branches` random ways to play it out. Returns
    (information states reached by two different histories, lucky tie-break decisions made)."""
    rng = np.random.default_rng(seed)
    players = game.num_players()
    seen: dict[tuple[int, str], tuple] = {}
    histories: dict[tuple[int, str], set] = {}
    ties = 0

    def visit(state, aoh):
        for p in range(players):
            seen_now = bytes(np.array(state.observation_tensor(p), np.float32))
            if not aoh[p] or aoh[p][-1] != seen_now:  # another seat's hidden choice shows p nothing
                aoh[p].append(seen_now)
            key = (p, state.information_state_string(p))
            assert seen.setdefault(key, tuple(aoh[p])) == tuple(aoh[p]), f"seat {p}: {key[1]}"
            histories.setdefault(key, set()).add(tuple(state.history()))

    def advance(state, aoh):
        nonlocal ties
        if state.is_chance_node():
            state.apply_action(_chance_outcome(state, rng))
        else:
            player = state.current_player()
            ties += state.core_state.phase[0] == qwixx_spiel.LUCKY
            action = int(rng.choice(state.legal_actions()))
            aoh[player].append(("own", action))
            state.apply_action(action)
        visit(state, aoh)

    state, aoh = game.new_initial_state(), [[] for _ in range(players)]
    visit(state, aoh)
    for _ in range(rolls):
        while state.is_chance_node():
            advance(state, aoh)
        if state.is_terminal():
            break
        roll = int(state.core_state.roll[0])
        for _ in range(branches):  # the white action's decisions, hidden from the other seats
            branch, branch_aoh = state.clone(), [list(a) for a in aoh]
            while not branch.is_terminal() and int(branch.core_state.roll[0]) == roll:
                advance(branch, branch_aoh)
        while not state.is_terminal() and int(state.core_state.roll[0]) == roll:
            advance(state, aoh)
    shared = sum(len(h) > 1 for h in histories.values())
    return shared, ties


@pytest.mark.parametrize("players,variant,lucky,start", [
    (3, "longo", "bonus", 0), (5, "longo", "bonus", 0), (3, "longo", "bonus", -1), (2, "longo", "bonus", 0),
    (3, "longo", "instead", 0), (2, "classic", "bonus", 0), (4, "classic", "bonus", -1),
])
def test_information_states_have_perfect_recall(players, variant, lucky, start):
    """A seat that sees another seat break a lucky tie (its observation shows the lucky phase)
    tells that history from one without the tie: its information state must too."""
    game = load(players, variant, lucky, start_player=start)
    shared, ties = _perfect_recall_walk(game, seed=players)
    assert shared >= 10  # histories a seat cannot tell apart were compared
    assert ties > 0 or lucky == "instead" or variant == "classic"


@pytest.mark.parametrize("players", [3, 5])
def test_resampling_keeps_who_broke_a_lucky_tie(players):
    """The seat to decide saw which earlier seats broke a lucky tie: every resampled state shows
    it the same information state."""
    game = load(players, "longo", "bonus")
    rng = np.random.default_rng(players)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    state, checked = game.new_initial_state(), 0
    while checked < 200:
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            state.apply_action(_chance_outcome(state, rng))
            continue
        player = state.current_player()
        tokens = state.information_state_string(player).split()
        this_roll = tokens[max(i for i, t in enumerate(tokens) if t.startswith("d")):]
        if state.core_state.phase[0] == qwixx_spiel.WHITE and any(t[0] == "t" and t[1:].isdigit() for t in this_roll):
            for _ in range(10):
                sample = state.resample_from_infostate(player, sampler)
                assert sample.information_state_string(player) == state.information_state_string(player)
                checked += 1
        state.apply_action(int(rng.choice(state.legal_actions())))
