"""The arena: seating, common dice, statistics on hand-computed cases, workers, errors, CLI."""

import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import qwixx_env.arena as arena
from qwixx_env import bots, qwixx_v0
from qwixx_env.arena import (
    Table,
    TableConfig,
    bot_entries,
    lineups,
    mean_and_se,
    openskill_ratings,
    parse_bot,
    ranks,
    run_arena,
    wilson_interval,
    win_shares,
)
from qwixx_env.arena.report import arena_figure
from qwixx_env.arena.stats import clustered_interval
from qwixx_env.core.options import TableOptions

from conftest import play_game


def without_timing(result):
    d = result.to_dict()
    del d["timing"]
    return d


# --- who plays whom ---------------------------------------------------------------------


def test_two_player_lineups_are_every_ordered_pair():
    assert sorted(lineups(3, 2)) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]


def test_solo_lineups_seat_each_bot_alone():
    assert lineups(3, 1) == [(0,), (1,), (2,)]


def test_fewer_bots_than_seats_fill_the_table_in_rotation():
    assert lineups(2, 4) == [(0, 1, 0, 1), (1, 0, 1, 0)]
    assert lineups(1, 3) == [(0, 0, 0)]  # self-play


@pytest.mark.parametrize("k", range(1, 7))
@pytest.mark.parametrize("P", range(1, 6))
def test_every_bot_sits_in_every_seat_equally_often(k, P):
    seats = lineups(k, P)
    for s in range(P):
        counts = Counter(lineup[s] for lineup in seats)
        assert sorted(counts) == list(range(k))
        assert len(set(counts.values())) == 1


def test_bot_specs_parse_names_parameters_and_repeats():
    assert parse_bot("greedy:max_skip=2,penalty_worry=1").params == {"max_skip": 2, "penalty_worry": 1}
    assert parse_bot("random").params == {}
    with pytest.raises(ValueError, match="key=value"):
        parse_bot("greedy:max_skip")
    labels = [e.label for e in bot_entries(["greedy", ("greedy", {"max_skip": 1}), "greedy"])]
    assert labels == ["greedy", "greedy:max_skip=1", "greedy#2"]
    # commas inside a JSON value do not split it
    weights = parse_bot('heuristic:weights={"fill":0.5,"opponent_weight":1},lucky="bonus"').params
    assert weights == {"weights": {"fill": 0.5, "opponent_weight": 1}, "lucky": "bonus"}


@pytest.mark.parametrize(
    "spec, message",
    [
        ("greedy:max_skip=2,max_skip=3", r"parameter 'max_skip' is set twice"),
        ("greedy:seed=3", r"\['seed'\] set, but the arena sets"),
        (
            ("random", {"variant": "longo", "num_players": 3}),
            r"\['num_players', 'variant'\] set, but the arena sets",
        ),
    ],
)
def test_a_spec_setting_a_key_twice_or_a_table_option_is_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        bot_entries([spec])


def test_lucky_for_a_bot_without_a_lucky_rule_is_refused():
    with pytest.raises(
        ValueError, match=r"bot 'greedy:lucky=\"instead\"': lucky is set, but this bot takes no lucky"
    ) as err:
        run_arena(['greedy:lucky="instead"', "heuristic"], variant="longo", games=1, workers=1)
    # named once; who does
    assert str(err.value).count("bot 'greedy") == 1 and "'heuristic'" in str(err.value)


def test_a_numpy_player_count_gives_a_plain_json_result():
    result = run_arena(["random", "greedy"], num_players=np.int64(2), games=2, workers=1)
    assert json.loads(json.dumps(result.to_dict()))["num_players"] == 2


def test_the_keys_the_agilerl_docs_name_are_the_arena_rows():
    # AgileRL's `win_share` returns the arena's row for the trained network; its docs and
    # docstring name keys a user reads from it
    import qwixx_env.integrations as integrations

    row = run_arena(["random", "greedy"], games=1, workers=1).bots[0]
    docs = (Path(__file__).resolve().parent.parent / "docs" / "integrations.md").read_text()
    named = docs.split("returns the arena's row for it")[1].split("From a shell")[0]
    source = (Path(integrations.__file__).parent / "agilerl.py").read_text()
    named += source.split("def win_share(")[1].split('"""')[1].split("in this process):")[1]
    keys = set(re.findall(r"`+(\w+)`+", named))
    assert keys >= {"win_rate", "win_interval", "score_mean"} and keys <= set(row), keys - set(row)


# --- common random numbers --------------------------------------------------------------


def test_each_deal_starts_with_the_same_dice_in_every_lineup():
    entries = bot_entries(["random", "greedy", "greedy:max_skip=0"])
    config = TableConfig(entries, lineups(3, 2), TableOptions(num_players=2), seed=11)
    table = Table(config)
    L = len(config.lineups)
    for deal in range(3):
        first_rolls = []
        for j in range(L):
            table.play(deal * L + j)
            first_rolls.append(table.env.record()["rolls"][0])
        assert all(roll == first_rolls[0] for roll in first_rolls)
    assert table.env.record()["seed"] == 11 + 2  # deal i is dealt with seed + i


@pytest.mark.parametrize("variant", ["classic", "longo"])
def test_dice_agree_roll_by_roll_until_the_locked_rows_differ(variant):
    """The i-th roll's dice depend on the seed and on which rows were locked at each roll
    so far (a locked row's die is not rolled), never on any other decision."""

    def rolls(bot_seed):
        env = qwixx_v0.raw_env(num_players=2, variant=variant)
        players = [bots.make("random", variant=variant, seed=bot_seed + s) for s in range(2)]
        play_game(env, players, seed=5)
        return env.record()["rolls"]

    a, b = rolls(0), rolls(100)
    same = 0
    for x, y in zip(a, b):
        if [d is None for d in x] != [d is None for d in y]:
            break
        assert x == y
        same += 1
    assert same >= 5


# --- statistics on hand-computed cases --------------------------------------------------

# Wilson, z = 1.96 (z² = 3.8415), p = wins / n:
#   centre = (p + z²/2n) / (1 + z²/n),  half = z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n)
WILSON_CASES = [
    # 0/10: centre = 0.19207/1.38415 = 0.13877; half = 1.96·0.09800/1.38415 = 0.13877
    (0, 10, 0.0, 0.27753),
    # 5/10: centre 0.5; half = 1.96·sqrt(0.025 + 0.0096037)/1.38415 = 1.96·0.18602/1.38415 = 0.26341
    (5, 10, 0.23659, 0.76341),
    # 10/10: the mirror image of 0/10
    (10, 10, 0.72247, 1.0),
    # 2.5/5 (shared wins): centre 0.5; half = 1.96·sqrt(0.05 + 0.038415)/1.76829 = 0.32958
    (2.5, 5, 0.17042, 0.82958),
    # 7.5/10: centre = (0.75 + 0.19207)/1.38415 = 0.68062;
    #         half = 1.96·sqrt(0.01875 + 0.0096037)/1.38415 = 1.96·0.16839/1.38415 = 0.23844
    (7.5, 10, 0.44218, 0.91905),
]


@pytest.mark.parametrize("wins, n, low, high", WILSON_CASES)
def test_wilson_interval_matches_the_hand_computed_values(wins, n, low, high):
    assert wilson_interval(wins, n) == pytest.approx((low, high), abs=1e-5)


def test_wilson_interval_is_exact_at_no_wins_and_all_wins():
    assert wilson_interval(0, 37)[0] == 0.0
    assert wilson_interval(37, 37)[1] == 1.0


def test_wilson_interval_needs_a_game():
    with pytest.raises(ValueError, match="n: got 0"):
        wilson_interval(0, 0)


def test_clustered_interval_counts_a_deal_whose_seatings_agree_as_about_one_game():
    # 5 players, 4 deals, the bot in every seat of each: it wins all 5 seatings of deals 0
    # and 2 and none of 1 and 3. p = 0.5; per-deal means 1, 0, 1, 0: s² = 1/3, se² = 1/12,
    # n_eff = p(1-p)/se² = 3: the Wilson interval of 1.5 wins in 3 games, not 10 in 20.
    shares = np.array([[1.0] * 5, [0.0] * 5, [1.0] * 5, [0.0] * 5])
    low, high = clustered_interval(shares)
    assert (low, high) == pytest.approx(wilson_interval(1.5, 3))
    naive_low, naive_high = wilson_interval(10, 20)
    assert high - low > 1.5 * (naive_high - naive_low)


def test_clustered_interval_of_independent_looking_games_is_the_wilson_one():
    # 2 seatings a deal, 8 deals. Per-deal means 1, 1, .5, .5, .5, .5, 0, 0: p = .5,
    # s² = (4 · .25)/7 = 1/7, se² = 1/56, n_eff = .25 · 56 = 14 (16 games)
    shares = np.array([[1, 1], [1, 1], [1, 0], [0, 1], [1, 0], [0, 1], [0, 0], [0, 0]], float)
    assert clustered_interval(shares) == pytest.approx(wilson_interval(7, 14))


def test_clustered_interval_without_a_spread_counts_each_deal_once():
    # no win in 4 deals of 5 seatings: n_eff is the 4 deals, not the 20 games
    assert clustered_interval(np.zeros((4, 5))) == pytest.approx(wilson_interval(0, 4))
    assert clustered_interval(np.ones((1, 3))) == pytest.approx(wilson_interval(1, 1))


@pytest.mark.parametrize("shares", [np.zeros(4), np.zeros((0, 2))])
def test_clustered_interval_needs_deals_by_games(shares):
    with pytest.raises(ValueError, match=r"shares: got an array of shape"):
        clustered_interval(shares)


def test_mean_and_standard_error():
    # 1, 2, 3, 4: mean 2.5; s² = (2.25 + 0.25 + 0.25 + 2.25)/3 = 5/3; s.e. = sqrt(5/3)/2
    mean, se = mean_and_se([1, 2, 3, 4])
    assert mean == 2.5
    assert se == pytest.approx(math.sqrt(5 / 3) / 2)
    assert mean_and_se([7]) == (7.0, None)


def test_a_shared_top_score_splits_the_win():
    scores = np.array([[10, 10, 5], [3, 7, 7], [1, 1, 1], [0, 9, 2]])
    expected = [[1 / 2, 1 / 2, 0], [0, 1 / 2, 1 / 2], [1 / 3, 1 / 3, 1 / 3], [0, 1, 0]]
    np.testing.assert_allclose(win_shares(scores), expected)


def test_places_from_scores_share_ties():
    assert ranks([10, 30, 10, 5]) == [2, 1, 2, 4]


def test_openskill_update_of_one_game_by_hand():
    """Plackett-Luce from the defaults μ = 25, σ = 25/3, β = 25/6, τ = 25/300, one game won.

    σ'² = σ² + τ² = 69.4514; c = sqrt(2(σ'² + β²)) = 13.17669. Equal μ: the winner's share
    of exp(μ/c) is 1/2, so Ω = σ'²/c · (1 - 1/2) = 2.63539 and μ ± Ω; Δ = (1/2)(1/2) ·
    σ'²/c² · σ'/c = 0.0632462, σ_new = σ'·sqrt(1 - Δ) = 8.06590.
    """
    winner, loser = openskill_ratings(["a", "b"], np.array([[0, 1]]), np.array([[30, 10]]))
    assert winner["mu"] == pytest.approx(25 + 2.63539, abs=1e-4)
    assert loser["mu"] == pytest.approx(25 - 2.63539, abs=1e-4)
    assert winner["sigma"] == loser["sigma"] == pytest.approx(8.06590, abs=1e-4)
    tie = openskill_ratings(["a", "b"], np.array([[0, 1]]), np.array([[20, 20]]))
    assert tie[0]["mu"] == tie[1]["mu"] == pytest.approx(25)


def test_ratings_skip_tables_where_a_bot_holds_two_seats():
    assert openskill_ratings(["a"], np.array([[0, 0]]), np.array([[30, 10]])) is None


# --- tournaments ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three_bots():
    return run_arena(["random", "greedy", "greedy:max_skip=0"], num_players=2, games=8, seed=3, workers=1)


def test_results_do_not_depend_on_the_number_of_workers(three_bots):
    again = run_arena(["random", "greedy", "greedy:max_skip=0"], num_players=2, games=8, seed=3, workers=2)
    assert again.timing["workers"] == 2
    assert without_timing(again) == without_timing(three_bots)
    a = run_arena(
        ["greedy", "random"], num_players=3, variant="longo", lucky="instead", games=3, seed=1, workers=1
    )
    b = run_arena(
        ["greedy", "random"], num_players=3, variant="longo", lucky="instead", games=3, seed=1, workers=3
    )
    assert without_timing(a) == without_timing(b)


def test_the_workers_start_once_this_process_has_played_the_first_game(monkeypatch):
    # On a cold kernel cache that first game compiles every kernel, once; the forked workers
    # inherit them instead of each compiling them again.
    from qwixx_env.arena import play as arena_play

    here, real_play, real_mp = [], arena_play.Table.play, arena_play.multiprocessing
    monkeypatch.setattr(arena_play.Table, "play", lambda self, game: here.append(game) or real_play(self, game))

    class Context:
        def __init__(self, method):
            self.context = real_mp.get_context(method)

        def Pool(self, *args, **kwargs):  # noqa: N802 (multiprocessing's name)
            pools.append(list(here))
            return self.context.Pool(*args, **kwargs)

    pools = []
    monkeypatch.setattr(arena_play, "multiprocessing", SimpleNamespace(
        get_all_start_methods=real_mp.get_all_start_methods, get_context=Context))
    result = run_arena(["random", "greedy", "greedy:max_skip=0"], num_players=2, games=8, seed=3, workers=2)
    assert pools == [[0]]  # game 0, played here before the pool started; the workers played the rest
    assert here == [0] and len(result.games.rolls) == 48


COLD_ARENA = """
import json, os, sys
from numba.core import event

class Compiles(event.Listener):
    def on_start(self, ev):
        with open(sys.argv[1], "a") as out:
            out.write(f"{os.getpid()}\\n")
    def on_end(self, ev):
        pass

event.register("numba:compile", Compiles())
from qwixx_env import cli
print(os.getpid())
cli.main(["arena", "random", "greedy", "--games", "2", "--workers", "2", "--quiet"])
"""


@pytest.mark.slow  # compiles the game's kernels from nothing: several seconds
def test_a_cold_arena_compiles_in_one_process_and_says_so_once(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["QWIXX_ENV_CACHE"] = str(tmp_path / "cache")
    compiles = tmp_path / "compiles"
    done = subprocess.run([sys.executable, "-c", COLD_ARENA, str(compiles)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    parent = done.stdout.splitlines()[0]
    assert set(compiles.read_text().split()) == {parent}  # the workers compiled nothing
    assert done.stderr.count("compiling the numba kernels of the table and of random, greedy") == 1


def test_a_longo_arena_tells_the_bots_that_model_it_the_lucky_rule():
    # the observation does not show the lucky rule, so a bot that models it must be told
    entry = parse_bot("heuristic")
    assert entry.make(variant="longo", num_players=2, seed=0, lucky="instead").variant.lucky_rule == "instead"
    assert entry.make(variant="longo", num_players=2, seed=0, lucky="bonus").variant.lucky_rule == "bonus"
    assert parse_bot("heuristic:lucky=bonus").make(
        variant="longo", num_players=2, seed=0, lucky="instead"
    ).variant.lucky_rule == "bonus"  # the bot's own parameter wins
    seen = []

    def recording(*, table, seed):  # a factory takes the whole table, lucky rule included
        seen.append(table.lucky)
        return bots.make_bot("greedy", table, seed)

    run_arena([recording, "random"], variant="longo", lucky="instead", games=2, workers=1)
    assert seen and set(seen) == {"instead"}


def test_a_factory_that_does_not_take_the_table_is_refused_naming_the_form_it_needs():
    def old_form(*, variant, num_players, seed, lucky=None):
        return bots.make("greedy", variant=variant, num_players=num_players, seed=seed)

    expected = (r"bot factory 'old_form': got old_form\(\*, variant, num_players, seed, lucky=None\); "
                r"expected factory\(\*, table, seed\)")
    with pytest.raises(ValueError, match=expected):
        run_arena([old_form, "random"], games=2, workers=1)
    assert not hasattr(arena, "BotEntry")  # the arena's first name for a bot spec: bots.BotSpec


def test_every_table_game_hands_out_exactly_one_win(three_bots):
    assert sum(row["wins"] for row in three_bots.bots) == pytest.approx(len(three_bots.games.rolls))
    assert all(row["games"] == 8 * 4 for row in three_bots.bots)  # 8 deals, 2 opponents, 2 seats


def test_head_to_head_win_rates_add_up_to_one(three_bots):
    h2h = three_bots.head_to_head
    for i in range(3):
        assert h2h["win_rate"][i][i] is None
        for j in range(3):
            if i != j:
                assert h2h["win_rate"][i][j] + h2h["win_rate"][j][i] == pytest.approx(1)
                assert h2h["games"][i][j] == h2h["games"][j][i] == 16


def test_ratings_put_greedy_above_random(three_bots):
    rating = {row["label"]: row["rating"]["mu"] for row in three_bots.bots}
    assert rating["greedy"] > rating["random"]
    assert rating["greedy:max_skip=0"] > rating["random"]


def test_self_play_wins_half_the_time():
    result = run_arena(["greedy"], num_players=2, games=6, seed=0, workers=1)
    assert result.bots[0]["win_rate"] == 0.5
    assert result.head_to_head["win_rate"] == [[0.5]]
    assert result.bots[0]["rating"] is None


def test_solo_arena_reports_scores_only():
    result = run_arena(["random", "greedy"], num_players=1, games=4, seed=0, workers=1)
    assert [row["win_rate"] for row in result.bots] == [None, None]
    assert result.head_to_head is None
    assert result.bots[1]["score_mean"] > result.bots[0]["score_mean"]


def test_bot_factories_take_part_like_named_bots():
    def cautious(*, table, seed):
        return bots.make_bot(("greedy", {"max_skip": 0}), table, seed)

    by_factory = run_arena([cautious, "random"], games=3, seed=2, workers=1)
    by_name = run_arena(["greedy:max_skip=0", "random"], games=3, seed=2, workers=1)
    assert by_factory.bots[0]["label"] == "cautious"
    np.testing.assert_array_equal(by_factory.games.scores, by_name.games.scores)


def test_an_illegal_action_stops_the_arena():
    class Stubborn:
        name = "stubborn"

        def __init__(self, **_):
            pass

        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])

    with pytest.raises(ValueError, match="illegal"):
        run_arena([Stubborn, "random"], games=1, workers=1)


# --- bad input fails before any game ---------------------------------------------------


@pytest.mark.parametrize(
    "specs, options, message",
    [
        (["random", "nobody"], {}, "bot name: got 'nobody'"),
        (["greedy:max_skip=-1"], {}, "max_skip: got -1"),
        (["greedy:speed=3"], {}, r"got parameter\(s\) \['speed'\]"),
        (["solo_optimal", "random"], {"variant": "longo"}, "plays 'classic' only"),
        (["random"], {"num_players": 6}, "num_players: got 6"),
        (["random"], {"variant": "mega"}, "variant: got 'mega'"),
        (["random"], {"lucky": "instead"}, "lucky: got 'instead'"),
        (["random"], {"games": 0}, "games: got 0"),
        (["random"], {"workers": 0}, "workers: got 0"),
        ([], {}, "bots: got"),
    ],
)
def test_bad_input_fails_before_any_game(monkeypatch, specs, options, message):
    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(arena, "play_games", no_games)
    with pytest.raises(ValueError, match=message):
        run_arena(specs, **options)


# --- the command line ---------------------------------------------------------------------


@pytest.mark.slow
def test_cli_png_without_matplotlib_names_the_extra_before_any_game(tmp_path, monkeypatch, capsys):
    from importlib import util

    from qwixx_env import cli, extras

    found = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *a: None if name == "matplotlib" else found(name, *a))
    monkeypatch.setattr(cli, "run_arena", lambda *a, **k: pytest.fail("games played before the check"))
    assert cli.main(["arena", "random", "greedy", "--png", str(tmp_path / "out.png")]) == 2
    assert capsys.readouterr().err == extras.needs("qwixx arena --png", "arena", ["matplotlib"]) + "\n"
    assert not (tmp_path / "out.png").exists()


@pytest.fixture
def without_rich(monkeypatch):
    """`import rich` fails, as on a core install (rich comes with the arena extra)."""
    for name in ["rich", *(n for n in sys.modules if n.startswith("rich."))]:
        monkeypatch.setitem(sys.modules, name, None)


def cells(line):
    return re.split(r"\s{2,}", line.strip())


@pytest.mark.parametrize("flags", [[], ["--quiet"], ["--json", "out.json"]], ids=["plain", "quiet", "json"])
def test_cli_prints_a_plain_table_without_rich(without_rich, tmp_path, capsys, flags):
    from qwixx_env import cli

    with pytest.raises(ImportError):
        import rich  # noqa: F401
    flags = [str(tmp_path / flag) if flag.endswith(".json") else flag for flag in flags]
    assert cli.main(["arena", "greedy", "heuristic", "--games", "4", *flags]) == 0
    out, err = capsys.readouterr()
    title, header, rule, first, second, caption, h2h, *matrix = out.splitlines()
    assert title == "classic, 2 player(s): 4 deals × 2 lineup(s) = 8 games, seed 0"
    assert cells(header) == ["bot", "games", "win rate [95% CI]", "score ± s.e.", "penalties", "rolls", "rating μ ± σ"]
    assert set(rule) == {"-", " "} and len(rule) == len(header)
    assert sorted(cells(first)[:2] + cells(second)[:2]) == ["8", "8", "greedy", "heuristic"]
    assert caption.endswith("worker(s)")
    assert h2h.startswith("head to head") and cells(matrix[0]) == ["greedy", "heuristic"]
    assert "quiet" in str(flags) or err.splitlines()[-1] == "playing: 8 / 8 games"
    assert "quiet" not in str(flags) or "playing" not in err
    if "--json" in flags:
        assert json.loads(Path(flags[-1]).read_text())["table_games"] == 8


def test_the_demo_runs_without_rich(without_rich, capsys):
    from qwixx_env import demo

    demo.main(["--games", "1", "--seed", "3"])
    out = capsys.readouterr().out
    assert "--- classic, 2 player(s), seed 3: final scorecard ---" in out
    title, header, rule, *rows = out[out.index("Random legal agents"):].splitlines()
    assert title == "Random legal agents, seeds 3..3"
    assert cells(header) == ["variant", "players", "seed", "rolls", "moves", "scores", "winners", "ended by"]
    assert [cells(row)[:3] for row in rows] == [["classic", "2", "3"], ["classic", "1", "3"], ["longo", "3", "3"]]


def test_cli_writes_json_and_png(tmp_path):
    out_json, out_png = tmp_path / "arena.json", tmp_path / "arena.png"
    command = [sys.executable, "-m", "qwixx_env.cli", "arena", "random", "greedy", "--games", "20"]
    command += ["--players", "2", "--seed", "0", "--json", str(out_json), "--png", str(out_png)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "head to head" in done.stdout
    result = json.loads(out_json.read_text())
    assert result["format"] == "qwixx_env.arena/1"
    assert result["table_games"] == 40 == len(result["games"]["rows"])
    assert [row["label"] for row in result["bots"]] == ["random", "greedy"]
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_cli_reports_bad_input_as_an_error():
    command = [sys.executable, "-m", "qwixx_env.cli", "arena", "random", "greedy:max_skip=x"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("qwixx arena: bot 'greedy:max_skip=x'")


@pytest.mark.slow
def test_cli_takes_the_table_from_the_pretrained_bots_named(tmp_path):
    out_json = tmp_path / "arena.json"
    command = [sys.executable, "-m", "qwixx_env.cli", "arena", "ppo-longo-2p", "greedy", "--games", "2"]
    done = subprocess.run(
        command + ["--json", str(out_json), "--quiet"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out_json.read_text())
    assert (result["variant"], result["num_players"]) == ("longo", 2)
    mixed = subprocess.run(
        command[:4] + ["ppo-longo-2p", "ppo-classic-3p"], capture_output=True, text=True, timeout=120
    )
    assert mixed.returncode == 2
    assert "--variant: the checkpoints play different games" in mixed.stderr


def test_cli_json_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from qwixx_env import cli, files

    out_json = tmp_path / "arena.json"
    out_json.write_text("the previous result")

    def killed(fd):
        raise KeyboardInterrupt("killed while writing")

    monkeypatch.setattr(files.os, "fsync", killed)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["arena", "random", "greedy", "--games", "2", "--workers", "1", "--quiet",
                  "--json", str(out_json)])
    assert out_json.read_text() == "the previous result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.json"]  # no temporary left behind


def test_cli_refuses_an_output_it_cannot_write_before_playing(tmp_path, capsys, monkeypatch):
    from qwixx_env import cli

    played = []
    monkeypatch.setattr(arena, "run_arena", lambda *a, **k: played.append(a))
    for flag, path, problem in (
        ("--json", tmp_path / "missing" / "out.json", "which does not exist"),
        ("--png", tmp_path, "is a folder"),
    ):
        assert cli.main(["arena", "random", "greedy", "--games", "2", "--quiet", flag, str(path)]) == 2
        err = capsys.readouterr().err
        assert f"{flag}: {str(path)!r}" in err and problem in err, err
    assert not played and not (tmp_path / "missing").exists()


# --- the picture ---------------------------------------------------------------------------


@pytest.mark.parametrize("specs", [["greedy", "random"], [
    "random", "greedy:max_skip=0", "greedy:max_skip=1", "greedy", "greedy:max_skip=3", "greedy:max_skip=4",
    "greedy:max_skip=5", "greedy:max_skip=6"]], ids=["2 bots", "8 bots"])
def test_the_picture_leads_with_win_rates_and_gives_every_bot_its_own_score_row(specs):
    pytest.importorskip("matplotlib", reason="the picture needs matplotlib (the arena extra)")
    result = run_arena(specs, games=2, workers=1)
    fig = arena_figure(result)
    lead, *others = fig.axes
    assert lead.get_title(loc="left") == "win rate"
    order = [row["label"] for row in sorted(result.bots, key=lambda r: -r["rating"]["mu"])]
    assert [t.get_text() for t in lead.get_yticklabels()] == order  # best bot first, on top
    score_rows = [ax for ax in others if ax.get_yticks().size == 0]  # the ladder has a tick per bot
    assert len(score_rows) == len(specs)
    assert len({ax.get_xlim() for ax in score_rows}) == 1  # one score axis for all
    for ax in score_rows:  # each row is scaled to its own peak: no bot flattens another
        peak = max(p.get_paths()[0].vertices[:, 1].max() for p in ax.collections)
        assert peak >= 0.75 * ax.get_ylim()[1]
