"""The benchmark's protocols: reserved dice, determinism across workers, refusals, the leaderboard page."""

import json
from pathlib import Path

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
