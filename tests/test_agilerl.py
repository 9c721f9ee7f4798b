"""AgileRL (the agilerl extra): `qwixx_env.integrations.agilerl` trains a population of AgileRL
DQNs through AgileRL's own `train_off_policy`, with its tournament and mutations, by self-play
or against a bot; every transition AgileRL stores runs from a learner decision to the learner's
own next decision (counted here); the same seed gives the same run; and the docs' AgileRL
snippet runs as written."""

from __future__ import annotations

import numpy as np
import pytest
from test_parallel import run_snippets

pytest.importorskip("agilerl", reason="the agilerl extra is not installed (runs in make test-integrations)")
import torch  # noqa: E402  (AgileRL needs it: there when AgileRL is)

from qwixx_env.integrations import agilerl as ours  # noqa: E402
from qwixx_env.integrations.agilerl import AgileRLVectorEnv, Settings, Trainer, main, train  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

TINY = dict(steps=240, evo_steps=120, num_envs=4, population=2, batch_size=16, hidden=16)


class Recording(AgileRLVectorEnv):
    """The env AgileRL steps, writing down every observation it hands AgileRL, whether it is a
    decision of the learner's (the seat to move is the learner's, and it has a legal action),
    and every action it was given that the mask did not offer."""

    def __init__(self, env):
        super().__init__(env)
        self.learners: set[bytes] = set()
        self.others = self.illegal = 0

    def _note(self, obs, info):
        vec = self.env
        mine = (vec.engine.seats == vec.learner) & info["action_mask"].any(axis=1)
        self.learners.update(row.tobytes() for row in obs[mine])
        self.others += int((~mine).sum())
        return obs, info

    def reset(self, **kwargs):
        return self._note(*super().reset(**kwargs))

    def step(self, actions):
        obs, rewards, terminated, truncated, info = super().step(actions)
        self.illegal += int(info.get("illegal_action", np.zeros(1, bool)).sum())
        self._note(obs, info)
        return obs, rewards, terminated, truncated, info


@pytest.mark.parametrize(("num_players", "opponent"), [(2, "self"), (3, "greedy")])
def test_every_stored_transition_runs_to_the_learners_own_next_decision(monkeypatch, num_players, opponent):
    monkeypatch.setattr(ours, "AgileRLVectorEnv", Recording)  # what agilerl_env builds
    trainer = Trainer(Settings(num_players=num_players, opponent=opponent, seed=1, **TINY))
    env = trainer.env
    first = [t.clone() for t in trainer.population[0].actor.state_dict().values()]
    trainer.train_to(TINY["steps"])

    assert isinstance(env, Recording) and env.illegal == 0 and env.others == 0
    n = len(trainer.memory)
    # every training decision of every agent is one stored transition (the fitness tests' are not stored)
    assert n == trainer.decisions == TINY["steps"] * TINY["population"]
    stored = trainer.memory.storage[:n]
    obs, next_obs, done = stored["obs"].numpy(), stored["next_obs"].numpy(), stored["done"].numpy().astype(bool)
    # each observation and next observation AgileRL stored is one the env showed at a learner's decision
    mine = [row.tobytes() in env.learners for row in np.concatenate([obs, next_obs])]
    assert sum(mine) == 2 * n
    # and a transition that does not end its game goes on from its next observation: AgileRL
    # stores num_envs games per step, evo_steps // num_envs steps per agent and generation
    runs = obs.reshape(-1, TINY["evo_steps"] // TINY["num_envs"], TINY["num_envs"], obs.shape[-1])
    nexts, ends = next_obs.reshape(runs.shape), done.reshape(runs.shape[:3])
    going = ~ends[:, :-1]
    assert going.sum() > n // 2
    assert np.array_equal(nexts[:, :-1][going], runs[:, 1:][going])
    assert 0 < ends.sum() < n // 10  # some games ended (a game is dozens of decisions)
    assert all(not torch.equal(a, b) for a, b in zip(first, trainer.population[0].actor.state_dict().values()))


def test_the_population_evolves_and_the_same_seed_gives_the_same_run():
    # no architecture mutations: AgileRL draws among their kinds in an order set by string hashing
    settings = dict(TINY, architecture=0.0)

    def run(seed):
        result = train(Settings(seed=seed, **settings))
        return result, [t.clone() for t in result.best.actor.state_dict().values()]

    (one, net), (again, net_again), (_, net_other) = run(2), run(2), run(3)
    assert one.generations == 2 and len(one.population) == len(one.fitnesses) == 2 and one.decisions == 480
    assert set(one.fitnesses) <= {-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0}  # means of 4 games' wins
    assert one.fitnesses == again.fitnesses and all(torch.equal(a, b) for a, b in zip(net, net_again))
    assert not all(torch.equal(a, b) for a, b in zip(net, net_other))
    # AgileRL's tournament replaced the population by offspring (new indices), and its mutations
    # moved hyperparameters away from the settings' (batch size, learn step, learning rate)
    assert min(agent.index for agent in one.population) >= 2
    given = (settings["batch_size"], Settings.learn_step, Settings.lr)
    assert {(agent.batch_size, agent.learn_step, agent.lr) for agent in one.population} != {given}


@pytest.mark.parametrize(("option", "value", "message"), [
    ("steps", 0, "steps: got 0; expected a positive integer"),
    ("gamma", 1.5, "gamma: got 1.5"),
    ("evo_steps", 4, "evo_steps: got 4; expected at least num_envs"),
    ("opponent", "nobody", "nobody"),
    ("num_players", 6, "num_players"),
])
def test_bad_settings_are_named(option, value, message):
    with pytest.raises(ValueError, match=message):
        train(Settings(**{option: value}))


def test_the_command_trains_and_measures(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0 and "--opponent" in capsys.readouterr().out
    main(["--steps", "64", "--evo-steps", "32", "--num-envs", "4", "--population", "2", "--batch-size", "16",
          "--eval-games", "2"])
    out = capsys.readouterr().out
    assert "trained: 128 learner decisions by 2 agents in 2 generations against greedy" in out
    assert "the fittest against random: win share " in out and "over 4 games" in out


def test_docs_snippet_runs_as_written(capsys):
    out, shown = run_snippets("AgileRL", capsys)
    assert "trained through train_off_policy" in shown
    assert out == shown
