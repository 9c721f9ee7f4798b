"""Golden games: fixed seeds and bots give exactly the games recorded in `data/golden_games.json`.

Determinism within one version is tested elsewhere; this pins the games *across* versions, so
that a change meant only to make the code faster (or to move code about) cannot change a single
die, decision, reward or observation unnoticed. Each case plays through a public entry point:
the AEC environment with bots, the batched engine with a seeded random picker, the vector env
with scripted opponents in the engine, and the afterstate inputs.

The file was recorded by ``python tests/test_golden.py --record`` at commit 1115a5e, before the
kernels were compiled without reference counts (so the faster kernels are checked against the
code they replaced). Re-record only for a deliberate change of the games, and say why in the
commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

GOLDEN = Path(__file__).parent / "data" / "golden_games.json"

# (name, variant, lucky, bots by seat, dice seed). Bots take their seat's index as seed.
AEC_CASES = [
    ("classic-2p-heuristic-rollout", "classic", None, ["heuristic", "rollout"], 11),
    ("classic-3p-afterstate-heuristic-greedy", "classic", None, ["afterstate", "heuristic", "greedy"], 12),
    ("longo-2p-bonus-heuristic-random", "longo", "bonus", ["heuristic", "random"], 13),
    ("longo-3p-instead-heuristic-rollout-greedy", "longo", "instead", ["heuristic", "rollout", "greedy"], 14),
    ("classic-1p-rollout", "classic", None, ["rollout"], 15),
    (
        "classic-2p-rollout-afterstate-leaf-vs-heuristic",
        "classic",
        None,
        ["rollout:leaf=afterstate", "heuristic"],
        16,
    ),
]
SEARCH = {"continuations": 8, "threads": 1}  # a small search keeps the rollout cases fast


def _bot(spec: str, variant: str, lucky: str | None, num_players: int, seat: int):
    """The bot of a spec as the arena makes it (Longo's lucky rule to the bots that model it)."""
    from qwixx_env.arena.schedule import parse_bot

    entry = parse_bot(spec)
    if entry.name == "rollout":
        entry.params = {**SEARCH, **entry.params}
    return entry.make(variant=variant, num_players=num_players, seed=seat, lucky=lucky)


def play_aec(variant: str, lucky: str | None, specs: list[str], seed: int) -> dict:
    """One game through `qwixx_v0.env`: every decision, the final scores, the final snapshot."""
    from qwixx_env import qwixx_v0

    P = len(specs)
    options = {"lucky": lucky} if lucky else {}
    env = qwixx_v0.env(num_players=P, variant=variant, **options)
    players = [_bot(s, variant, lucky, P, seat) for seat, s in enumerate(specs)]
    env.reset(seed=seed)
    actions, rewards = [], {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            rewards[agent] = float(reward)
            env.step(None)
            continue
        action = int(players[int(agent.split("_")[1])].act(obs))
        actions.append(action)
        env.step(action)
    snap = env.unwrapped.snapshot()
    return {"actions": actions, "rewards": rewards, "snapshot": json.loads(json.dumps(snap))}


def play_batched() -> dict:
    """64 classic 2-player games stepped 400 times with autoreset: a hash of every observation,
    mask and reward, and the per-game finished-game count and last rewards."""
    from qwixx_env import BatchedQwixx

    engine = BatchedQwixx(64, num_players=2, reward="score_delta")
    obs, masks = engine.reset(seed=2024)
    rng = np.random.default_rng(7)
    h = hashlib.sha256()
    finished = np.zeros(64, np.int64)
    for _ in range(400):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, masks, rewards, done = engine.step(actions)
        for a in (obs, masks, rewards, done):
            h.update(np.ascontiguousarray(a).tobytes())
        finished += done
    return {"sha256": h.hexdigest(), "finished": finished.tolist(), "last_rewards": rewards.tolist()}


def play_vector() -> dict:
    """16 vector-env games against heuristic, greedy and random opponents, 300 random learner
    steps: a hash of every observation and reward, and the learner's summed rewards."""
    from qwixx_env import QwixxVectorEnv

    env = QwixxVectorEnv(16, num_players=3, opponents=["heuristic", "greedy", "random"], reward="win")
    obs, _ = env.reset(seed=99)
    rng = np.random.default_rng(8)
    h = hashlib.sha256()
    total = np.zeros(16)
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
        obs, rewards, terminated, truncated, _ = env.step(actions)
        for a in (obs["observation"], obs["action_mask"], rewards, terminated):
            h.update(np.ascontiguousarray(a).tobytes())
        total += rewards
    return {"sha256": h.hexdigest(), "learner_rewards": total.tolist()}


def afterstate_ratings() -> dict:
    """The afterstate inputs' raw chances for 40 positions of random 2-player play, rounded to
    1e-12 (they are float64 sums; the rounding leaves room for nothing but a real change)."""
    from qwixx_env import BatchedQwixx
    from qwixx_env.bots.afterstate import afterstate_chances

    engine = BatchedQwixx(8, num_players=2)
    obs, masks = engine.reset(seed=5)
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(5):
        rows.append(obs.copy())
        obs, masks, _, _ = engine.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    chances = afterstate_chances(np.concatenate(rows))
    return {"chances": np.round(chances, 12).tolist()}


def record() -> dict:
    out = {name: play_aec(v, lucky, specs, seed) for name, v, lucky, specs, seed in AEC_CASES}
    out["batched"] = play_batched()
    out["vector"] = play_vector()
    out["afterstate"] = afterstate_ratings()
    return out


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("name, variant, lucky, specs, seed", AEC_CASES, ids=[c[0] for c in AEC_CASES])
def test_aec_games_with_bots_are_the_recorded_games(golden, name, variant, lucky, specs, seed):
    got = play_aec(variant, lucky, specs, seed)
    want = golden[name]
    assert len(got["actions"]) == len(want["actions"])
    first = next((i for i, (a, b) in enumerate(zip(got["actions"], want["actions"])) if a != b), None)
    assert first is None, f"decision {first} differs: {got['actions'][first]} != {want['actions'][first]}"
    assert got["rewards"] == want["rewards"]
    assert got["snapshot"] == want["snapshot"]


def test_batched_engine_games_are_the_recorded_games(golden):
    got = play_batched()
    assert got["finished"] == golden["batched"]["finished"]
    assert got["last_rewards"] == golden["batched"]["last_rewards"]
    assert got["sha256"] == golden["batched"]["sha256"]


def test_vector_env_games_are_the_recorded_games(golden):
    got = play_vector()
    assert got["learner_rewards"] == golden["vector"]["learner_rewards"]
    assert got["sha256"] == golden["vector"]["sha256"]


def test_afterstate_ratings_are_the_recorded_ratings(golden):
    got = np.array(afterstate_ratings()["chances"])
    np.testing.assert_allclose(got, np.array(golden["afterstate"]["chances"]), rtol=0, atol=1e-11)


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/test_golden.py --record   (rewrites tests/data/golden_games.json)")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
