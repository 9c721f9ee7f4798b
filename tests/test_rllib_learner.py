"""`BatchedAdvantages`: the vector path's learner pipeline, as array operations.

Its train batch must be RLlib's own pipeline's (PPO's default learner connectors and
`GeneralAdvantageEstimation`) without the artificial rows: the same observations, actions and
log-probabilities row for row, the same value targets, and advantages that differ only by
where the standardization's mean and spread are taken. Skipped, with the reason, when the
rllib extra (ray) is not installed.
"""

import copy

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra is not installed: pip install -e '.[rllib]'")

import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.connectors.learner import AddOneTsToEpisodesAndTruncate, GeneralAdvantageEstimation  # noqa: E402
from ray.rllib.core import DEFAULT_MODULE_ID  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # noqa: E402
from ray.rllib.evaluation.postprocessing import Postprocessing  # noqa: E402
from ray.rllib.utils.postprocessing.value_predictions import compute_value_targets  # noqa: E402

from qwixx_env.integrations.rllib import masked_module_spec, vector_ppo_config  # noqa: E402
from qwixx_env.integrations.rllib_learner import BatchedAdvantages, value_targets  # noqa: E402
from qwixx_env.integrations.rllib_runner import BatchedEnvRunner  # noqa: E402

GAMMA, LAMBDA = 0.99, 0.9


def rllib_targets(values, rewards, lengths, terminated):
    """RLlib's value targets for the same episodes, each given its artificial last step as
    `AddOneTsToEpisodesAndTruncate` adds it; the artificial rows left out again."""
    v, r, term, trunc, real = [], [], [], [], []
    at_v = at_r = 0
    for length, ended in zip(lengths, terminated, strict=True):
        v.append(values[at_v:at_v + length + 1])
        r.append(np.append(rewards[at_r:at_r + length], 0.0))
        term.append([False] * (length - 1) + [bool(ended)] + [False])
        trunc.append([False] * (length - 1) + [not ended] + [False])
        real.append([True] * length + [False])
        at_v, at_r = at_v + length + 1, at_r + length
    targets = compute_value_targets(np.concatenate(v), np.concatenate(r), np.concatenate(term).astype(np.float32),
                                    np.concatenate(trunc).astype(np.float32), GAMMA, LAMBDA)
    return targets[np.concatenate(real)]


@pytest.mark.parametrize("seed", range(5))
def test_value_targets_are_rllibs_for_terminated_and_cut_episodes_of_any_length(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 30, size=12)
    lengths[0] = 1  # a one-step chunk, at the front
    terminated = rng.random(12) < 0.5
    values = rng.normal(size=int((lengths + 1).sum())).astype(np.float32)
    rewards = rng.normal(size=int(lengths.sum())).astype(np.float32)
    ours = value_targets(values, rewards, lengths, terminated, GAMMA, LAMBDA)
    np.testing.assert_allclose(ours, rllib_targets(values, rewards, lengths, terminated), rtol=1e-5, atol=1e-5)


def test_a_terminated_episode_does_not_read_the_value_after_its_end():
    values = np.array([1.0, 2.0, 100.0], np.float32)  # 100: the value of the final observation
    rewards = np.array([0.0, 1.0], np.float32)
    done = value_targets(values, rewards, np.array([2]), np.array([True]), 1.0, 1.0)
    cut = value_targets(values, rewards, np.array([2]), np.array([False]), 1.0, 1.0)
    np.testing.assert_allclose(done, [1.0, 1.0])  # the return to the end
    np.testing.assert_allclose(cut, [101.0, 101.0])  # bootstrapped from the last observation


@pytest.fixture(scope="module")
def sampled():
    """Episodes of a vector env runner (finished games and chunks cut at the call's end), and
    a learner module with the runner's spaces."""
    config = (vector_ppo_config(num_players=2, hidden=(16,), opponents={"greedy": 1})
              .env_runners(num_env_runners=0, num_envs_per_env_runner=16).debugging(seed=5))
    runner = BatchedEnvRunner(config=config)
    try:
        episodes = runner.sample(num_timesteps=600) + runner.sample(num_timesteps=300)
    finally:
        runner.stop()
    spec = masked_module_spec((16,))
    spec.observation_space, spec.action_space = episodes[0].observation_space, episodes[0].action_space
    torch.manual_seed(0)
    module = MultiRLModuleSpec(rl_module_specs={DEFAULT_MODULE_ID: spec}).build()
    return episodes, module


def rllibs_batch(episodes, module):
    config = vector_ppo_config(num_players=2, learner_pipeline="rllib")
    space = episodes[0].observation_space
    pipeline = config.build_learner_connector(space, episodes[0].action_space)
    pipeline.prepend(AddOneTsToEpisodesAndTruncate())
    pipeline.append(GeneralAdvantageEstimation(gamma=GAMMA, lambda_=LAMBDA))
    batch = pipeline(rl_module=module, batch={}, episodes=copy.deepcopy(episodes), shared_data={})
    return batch[DEFAULT_MODULE_ID]


def test_the_batch_is_rllibs_without_the_artificial_rows(sampled):
    episodes, module = sampled
    assert any(e.is_terminated for e in episodes) and any(not e.is_done for e in episodes)
    theirs = rllibs_batch(episodes, module)
    ours = BatchedAdvantages(gamma=GAMMA, lambda_=LAMBDA)(rl_module=module, batch={}, episodes=episodes)
    ours = ours[DEFAULT_MODULE_ID]
    real = theirs[Columns.LOSS_MASK].numpy().astype(bool)
    assert len(ours[Columns.ACTIONS]) == real.sum() == sum(len(e) for e in episodes)
    for key in ("observations", "action_mask"):
        np.testing.assert_array_equal(ours[Columns.OBS][key].numpy(), theirs[Columns.OBS][key].numpy()[real])
    for key in (Columns.ACTIONS, Columns.ACTION_LOGP, Columns.ACTION_DIST_INPUTS):
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy()[real])
    np.testing.assert_allclose(ours[Postprocessing.VALUE_TARGETS].numpy(),
                               theirs[Postprocessing.VALUE_TARGETS].numpy()[real], rtol=1e-5, atol=1e-5)
    # the advantages: standardized over the real rows here, over all rows by RLlib; the same before
    with torch.no_grad():
        values = module[DEFAULT_MODULE_ID].compute_values({Columns.OBS: ours[Columns.OBS]}).numpy()
    raw = ours[Postprocessing.VALUE_TARGETS].numpy() - values
    advantages = ours[Postprocessing.ADVANTAGES].numpy()
    np.testing.assert_allclose(advantages, (raw - raw.mean()) / raw.std(), rtol=1e-4, atol=1e-4)
    assert abs(advantages.mean()) < 1e-5 and abs(advantages.std() - 1) < 1e-4


def train_once(config):
    """One iteration's result, in a Ray of its own (shut down after: the next test may start its own)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=80 * 2**20)
    try:
        algo = config.build_algo()
        try:
            return algo.train()
        finally:
            algo.stop()
    finally:
        ray.shutdown()


def test_ppo_trains_with_either_pipeline_and_the_batched_one_has_no_masked_rows():
    for pipeline in ("batched", "rllib"):
        result = train_once(vector_ppo_config(num_players=2, hidden=(16,), learner_pipeline=pipeline)
                            .env_runners(num_env_runners=0, num_envs_per_env_runner=8)
                            .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
                            .debugging(seed=1))
        learned = result["learners"][DEFAULT_MODULE_ID]
        assert np.isfinite(learned["policy_loss"]) and np.isfinite(learned["vf_loss"])
        sampled = result["env_runners"]["num_env_steps_sampled"]
        trained = learned["num_module_steps_trained"]
        if pipeline == "batched":
            assert trained == sampled  # every row a real decision, once an epoch
        else:
            assert trained > sampled  # RLlib's artificial rows ride along, masked


def test_an_unknown_learner_pipeline_is_named():
    with pytest.raises(ValueError, match="learner_pipeline.*'fast'"):
        vector_ppo_config(num_players=2, learner_pipeline="fast")
