"""Tianshou (the tianshou extra): the docs' snippet, in which Tianshou's multi-agent manager
trains its masked DQN as player_0 against a scripted bot in player_1's seat, runs as written,
prints what the page shows, and played by the rules."""

from __future__ import annotations

import numpy as np
import pytest
from test_parallel import run_snippets

from qwixx_env import bots

pytest.importorskip("tianshou", reason="the tianshou extra is not installed (runs in make test-integrations)")
import torch  # noqa: E402  (Tianshou needs it: there when Tianshou is)

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def test_docs_snippet_trains_the_learner_on_legal_actions_against_the_bot(capsys):
    ns: dict = {"__name__": "__docs__"}
    out, shown = run_snippets("Tianshou", capsys, ns)
    assert shown.startswith("training: ") and "all legal: True" in shown
    assert out == shown

    buffer, n = ns["buffer"], len(ns["buffer"])
    seats, acts, masks = buffer.obs.agent_id[:n], buffer.act[:n], buffer.obs.mask[:n]
    assert set(seats) == {"player_0", "player_1"}
    # every action taken, the learner's exploration included, is one its mask offered
    assert masks[np.arange(n), acts].all()
    # one terminal transition per game the trainer counted
    assert buffer.done[:n].sum() == ns["result"].train_episode > 0
    # the bot's seat played what a fresh heuristic bot picks from the same observations
    # (the heuristic bot's choice depends on the observation alone)
    bot = bots.make("heuristic", num_players=2, seed=0)
    theirs = np.flatnonzero(seats == "player_1")
    assert len(theirs) > 100
    assert all(
        acts[i] == bot.act({"observation": buffer.obs.obs[i], "action_mask": masks[i].astype(np.int8)}) for i in theirs
    )
    # DQN updated the network: every weight tensor moved from the seeded first ones
    env = ns["env"]
    torch.manual_seed(0)
    first = ns["Net"](state_shape=env.observation_space["observation"].shape, action_shape=env.action_space.n,
                      hidden_sizes=[64])
    assert all(not torch.equal(a, b) for a, b in zip(first.state_dict().values(), ns["net"].state_dict().values()))
