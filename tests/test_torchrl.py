"""TorchRL (the torchrl extra): `PettingZooWrapper(..., use_mask=True)` over the AEC env and over
the Parallel view passes TorchRL's `check_env_specs`, a masked random rollout plays whole games
by the rules, `torchrl_env` says which seats decide and lets the others only pass, and the docs'
TorchRL snippet runs as written."""

from __future__ import annotations

import warnings

import pytest
from test_parallel import run_snippets

from qwixx_env import qwixx_v0

MISSING = "the torchrl extra is not installed (pip install -e '.[torchrl]')"
torchrl_envs = pytest.importorskip("torchrl.envs", reason=MISSING)
from torchrl.envs.utils import check_env_specs  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

MAKERS = {
    "aec": qwixx_v0.env,
    "parallel": qwixx_v0.parallel_env,
}


def wrap(make, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL says it was tested with another PettingZoo release
        return torchrl_envs.PettingZooWrapper(make(**options), use_mask=True, seed=0)


@pytest.mark.parametrize(
    "options",
    [
        {"num_players": 1, "variant": "classic"},
        {"num_players": 3, "variant": "longo", "lucky": "bonus"},
    ],
    ids=["classic-1", "longo-3"],
)
@pytest.mark.parametrize("api", MAKERS)
def test_check_env_specs(api, options):
    env = wrap(MAKERS[api], **options)
    check_env_specs(env)
    groups = env.group_map
    if api == "parallel":
        assert groups == {"player": env._env.possible_agents}  # one group, every seat in one tensor
    else:
        assert groups == {a: [a] for a in env._env.possible_agents}  # TorchRL's default for AEC envs


@pytest.mark.parametrize("api", MAKERS)
def test_masked_random_rollout_plays_a_game_by_the_rules(api):
    """TorchRL's random actions follow the action mask it reads from the observations: a whole
    game ends by the rules (not by an illegal action) and the rewards sum to the final scores."""
    env = wrap(MAKERS[api], num_players=2, variant="longo", reward="score")
    td = env.rollout(1000, break_when_any_done=True)
    raw = env._env.unwrapped
    snap = raw.snapshot()
    assert snap["phase"] == "over" and not getattr(env._env, "_illegal_end", False)
    assert bool(td["next", "done"][-1]) and not td["next", "done"][:-1].any()
    for seat, agent in enumerate(raw.possible_agents):
        group = "player" if api == "parallel" else agent
        index = seat if api == "parallel" else 0
        actions = td[group, "action"][:, index]
        masks = td[group, "action_mask"][:, index]
        acted = td[group, "mask"][:, index]
        assert masks[acted].gather(-1, actions[acted].unsqueeze(-1)).all()  # every action legal
        total = td["next", group, "reward"][:, index].sum().item()
        assert total == snap["players"][seat]["score"]


@pytest.mark.slow
def test_docs_snippet_runs_as_written(capsys):
    out, shown = run_snippets("TorchRL", capsys)
    assert shown.startswith("batch (256,), actions (256, 2), all legal: True, games ended: ")
    assert shown in out  # after TorchRL's own log line


@pytest.mark.parametrize("api", MAKERS)
def test_a_seat_that_does_not_decide_can_only_pass_and_decides_says_which_seat_does(api):
    """Through `torchrl_env`, `(group, "decides")` names the seats whose action the step plays
    (the AEC env's seat to decide; at a Parallel step of a new roll every seat, else one), and
    every other seat has the pass-only mask, so its random action is pass. Plain
    `PettingZooWrapper` over the AEC env gives a waiting seat an all-ones mask instead."""
    from qwixx_env.integrations.torchrl import torchrl_env

    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL says it was tested with another PettingZoo release
        env = torchrl_env(api, num_players=3, variant="longo", lucky="bonus", seed=0)
    check_env_specs(env)
    td = env.rollout(400, break_when_any_done=True)
    pass_action = env.full_action_spec[next(iter(env.base_env.group_map)), "action"].space.n - 1
    waiting_frames = 0
    for group in env.base_env.group_map:
        decides, mask, actions = td[group, "decides"], td[group, "action_mask"], td[group, "action"]
        waiting = ~decides
        waiting_frames += int(waiting.sum())
        assert (mask[waiting].sum(-1) == 1).all() and mask[waiting][:, pass_action].all()
        assert (actions[waiting] == pass_action).all()
        assert mask.gather(-1, actions.unsqueeze(-1)).all()  # every action legal
        if api == "aec":
            assert (decides == td[group, "mask"]).all()
    counts = td["player", "decides"].sum(-1) if api == "parallel" else None
    assert waiting_frames > 0
    if counts is not None:  # a white action: every seat; a colour action or a lucky tie: one
        assert set(counts.tolist()) == {1, 3}
        assert td["player", "mask"][:-1].all()  # TorchRL's own mask: every live seat


def test_plain_pettingzoo_wrapper_gives_a_waiting_aec_seat_every_action():
    # what `torchrl_env` is for: TorchRL's wrapper alone fills a waiting seat's mask with ones
    env = wrap(qwixx_v0.env, num_players=2)
    td = env.reset()
    waiting = [a for a in env.group_map if not td[a, "mask"].all()]
    assert waiting and all(td[a, "action_mask"].all() for a in waiting)
