"""The benchmark's protocols: reserved dice, determinism across workers, refusals, the leaderboard page."""

import json
from pathlib import Path

import numpy as np
import pytest

from qwixx_env import benchmark

REPO = Path(__file__).resolve().parent.parent


def test_every_table_has_one_protocol_and_its_own_dice():
    assert len(benchmark.PROTOCOLS) == 15
    firsts = sorted(p.seed(lineup) for p in benchmark.PROTOCOLS.values() for lineup in p.lineups())
    lasts = {p.seed("heuristic") + p.deals for p in benchmark.PROTOCOLS.values()}
    assert len(set(firsts)) == len(firsts)
    assert all(p.deals <= benchmark.HARDER_OFFSET and p.harder_deals < benchmark.HARDER_OFFSET
               for p in benchmark.PROTOCOLS.values())
    assert min(firsts) == benchmark.FIRST_SEED and max(lasts) < benchmark.FIRST_SEED + 15 * benchmark.TABLE_STRIDE


def test_reserved_seeds_are_never_a_training_configs():
    # a config's seed is below 2**32, its games and evaluations add less than 10**7
    for path in (REPO / "configs").glob("*.yaml"):
        text = path.read_text()
        for line in text.splitlines():
            if line.strip().startswith("seed:"):
                seed = int(line.split(":", 1)[1].split("#")[0])
                assert seed + 10**7 < benchmark.FIRST_SEED, path
    assert 2**32 + 10**7 < benchmark.FIRST_SEED


def test_the_win_share_interval_at_two_players_is_about_1_5_points():
    p = benchmark.protocol("classic-2p")
    games = p.deals * p.players
    assert 1.96 * (0.25 / games) ** 0.5 <= 0.0151


def test_same_figures_with_one_or_two_workers():
    one = benchmark.run("greedy", "longo-instead-3p", workers=1, limit=3)
    two = benchmark.run("greedy", "longo-instead-3p", workers=2, limit=3)
    assert benchmark.strip(one) == benchmark.strip(two)
    assert not one["complete"] and one["lineups"]["heuristic"]["games"] == 9


def test_a_callable_agent_plays():
    first_legal = lambda obs: int(obs["action_mask"].nonzero()[0][-1])  # noqa: E731
    r = benchmark.run(first_legal, "classic-2p", lineups=["heuristic"], limit=2, workers=1)
    assert r["lineups"]["heuristic"]["games"] == 4


@pytest.mark.parametrize("agent, table, words", [
    ("ppo-longo-2p", "classic-2p", "it plays longo-2p/v1"),
    ("ppo-classic-1p", "classic-3p", "it plays classic-1p/v1"),
    (lambda obs: 999, "classic-2p", "not legal"),
    ("nosuchbot", "classic-2p", "nosuchbot"),
    ("greedy", "classic-9p", "classic-9p"),
])
def test_an_agent_that_does_not_play_is_refused_before_any_game(agent, table, words, monkeypatch):
    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(benchmark, "run_arena", no_games)
    with pytest.raises(ValueError, match=words):
        benchmark.run(agent, table)


def test_the_leaderboard_page_says_what_the_json_says():
    folder = REPO / "benchmarks" / "results" / "leaderboard"
    records = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    assert records
    page = (REPO / "docs" / "leaderboard.md").read_text()
    assert page == benchmark.leaderboard_markdown(records)
    for record in records:
        for r in record["results"]:
            f = r["lineups"]["heuristic"]
            key = f"{100 * f['win_share']:.1f}%" if "win_share" in f else f"{f['score_mean']:.1f}"
            assert key in page.split(f"## {r['protocol']}")[1].split("\n## ")[0]


def test_an_sb3_maskable_ppo_zip_is_an_agent_and_a_table_it_cannot_read_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from qwixx_env import QwixxVectorEnv
    from qwixx_env.envs.sb3 import Sb3VecEnv

    torch.set_num_threads(1)
    venv = Sb3VecEnv(QwixxVectorEnv(4, num_players=2, opponents="random"))
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=32, n_epochs=1, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [8]})
    path = tmp_path / "tiny_model.zip"
    model.save(path)
    one = benchmark.run(str(path), "classic-2p", workers=1, limit=2)
    two = benchmark.run(path, "classic-2p", workers=2, limit=2)
    assert one["agent"] == "tiny_model" and one["lineups"]["heuristic"]["games"] == 4
    assert benchmark.strip(one) == benchmark.strip(two)
    with pytest.raises(ValueError, match=r"does not play longo-2p/v1: the model takes observations of shape"):
        benchmark.run(str(path), "longo-2p", workers=1, limit=1)
    with pytest.raises(ValueError, match=r"no such file"):
        benchmark.run(str(tmp_path / "missing.zip"), "classic-2p", workers=1, limit=1)


def _five_player_result(agent_wins_deal):
    """An `ArenaResult` by hand: 5 players, the agent (bot 0) and four others in the 5
    seatings of each deal; in a deal the agent wins every seating or none (scores 50 or 10,
    the others 30)."""
    from qwixx_env.arena import ArenaResult, lineups
    from qwixx_env.arena.play import GameArrays

    seats = lineups(5, 5)
    deals = len(agent_wins_deal)
    scores = np.full((deals * len(seats), 5), 30, np.int64)
    for game in range(len(scores)):
        seat = seats[game % len(seats)].index(0)
        scores[game, seat] = 50 if agent_wins_deal[game // len(seats)] else 10
    games = GameArrays(scores=scores, penalties=np.zeros_like(scores), rolls=np.full(len(scores), 30))
    rows = [{"label": "agent" if b == 0 else f"other{b}", "win_rate": None, "score_mean": None} for b in range(5)]
    return ArenaResult(labels=[r["label"] for r in rows], lineups=seats, variant="classic", lucky="bonus",
                       num_players=5, deals=deals, seed=0, games=games, bots=rows, head_to_head=None,
                       timing={})


def test_the_win_share_interval_is_clustered_by_deal():
    # 4 deals, the agent wins all 5 seatings of deals 0 and 2: 10 wins in 20 games, but the
    # per-deal means 1, 0, 1, 0 make it worth 1.5 wins in 3 independent games (n_eff = 3)
    from qwixx_env.arena.stats import wilson_interval

    f = benchmark.figures(_five_player_result([True, False, True, False]), benchmark.protocol("classic-5p"))
    assert f["games"] == 20 and f["win_share"] == 0.5 and f["errors"] == "by deal"
    assert f["win_interval"] == pytest.approx(wilson_interval(1.5, 3))
    low, high = f["win_interval"]
    naive_low, naive_high = wilson_interval(10, 20)
    assert high - low > naive_high - naive_low
    # the margin's error too is over the 4 deals (+20, -20, +20, -20), not the 20 games
    assert f["margin_mean"] == 0 and f["margin_se"] == pytest.approx(np.std([20, -20, 20, -20], ddof=1) / 2)
    # the others (each in one seat a deal) lose the deals the agent wins, and share a 4-way tie
    # (30 each) in the others: per-deal means 0, 1/4, 0, 1/4, p = 1/8, s² = 1/48, se² = 1/192,
    # n_eff = (1/8)(7/8) · 192 = 21
    assert [o["label"] for o in f["others"]] == ["other1", "other2", "other3", "other4"]
    assert f["others"][0]["win_interval"] == pytest.approx(list(wilson_interval(21 / 8, 21)))


def _tiny_zip(path, **table):
    """A tiny untrained MaskablePPO saved at `path`, for the table's spaces."""
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from qwixx_env import QwixxVectorEnv
    from qwixx_env.envs.sb3 import Sb3VecEnv

    torch.set_num_threads(1)
    venv = Sb3VecEnv(QwixxVectorEnv(4, opponents="random", **table))
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=32, n_epochs=1, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [8]})
    model.save(path)
    return path


def test_a_zip_trained_on_longo_bonus_is_refused_at_longo_instead_as_a_checkpoint_is(tmp_path):
    from qwixx_env.bots.sb3_zip import write_game
    from qwixx_env.core.options import TableOptions

    path = _tiny_zip(tmp_path / "model.zip", num_players=2, variant="longo", lucky="bonus")
    write_game(path, "my-longo", TableOptions(num_players=2, variant="longo", lucky="bonus"))
    with pytest.raises(ValueError) as zipped:
        benchmark.run(str(path), "longo-instead-2p", workers=1, limit=1)
    with pytest.raises(ValueError) as numpy_checkpoint:
        benchmark.run("ppo-longo-2p", "longo-instead-2p", workers=1, limit=1)
    # the same words, the name and the file aside
    expected = ("agent {n!r} does not play longo-instead-2p/v1: lucky: got 'instead'; checkpoint {n!r} ({source}) "
                "plays lucky='bonus' only (a policy plays the lucky rule it was trained under) (it plays longo-2p/v1)")
    assert str(zipped.value) == expected.format(n="my-longo", source=path)
    source = str(numpy_checkpoint.value).split("(", 1)[1].split(")", 1)[0]
    assert str(numpy_checkpoint.value) == expected.format(n="ppo-longo-2p", source=source)
    # its own table it plays, labelled by its run's name, not the file's "model"
    r = benchmark.run(path, "longo-2p", lineups=["heuristic"], workers=1, limit=1)
    assert r["agent"] == "my-longo" and r["lineups"]["heuristic"]["games"] == 2


def test_a_zip_in_an_older_qwixx_train_checkpoint_takes_its_game_from_the_state_beside_it(tmp_path):
    from qwixx_env.bots.sb3_zip import read_game
    from qwixx_env.core.options import TableOptions

    folder = tmp_path / "runs" / "old3p" / "checkpoint"
    folder.mkdir(parents=True)
    path = _tiny_zip(folder / "model.zip", num_players=3, variant="longo", lucky="instead")
    (folder / "state.json").write_text(json.dumps({"steps": 8, "config": {
        "name": "old3p", "variant": "longo", "num_players": 3, "lucky": "instead", "seed": 0}}))
    game = read_game(path)
    assert game is not None and game.name == "old3p"
    assert game.table == TableOptions(num_players=3, variant="longo", lucky="instead")
    with pytest.raises(ValueError, match=r"lucky: got 'bonus'; checkpoint 'old3p' .* \(it plays longo-instead-3p/v1\)"):
        benchmark.run(str(path), "longo-3p", workers=1, limit=1)
    (folder / "state.json").write_text("{}")
    with pytest.raises(ValueError, match=r"state.json: does not say a model's game \(KeyError: 'config'\)"):
        benchmark.run(str(path), "longo-instead-3p", workers=1, limit=1)
