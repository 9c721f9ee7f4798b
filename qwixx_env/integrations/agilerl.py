"""AgileRL's DQN learning a seat of a Qwixx table through AgileRL's own training loop.

>>> from qwixx_env.integrations.agilerl import Settings, train, win_share
>>> run = train(Settings(steps=2000, opponent="greedy", seed=0))
>>> run.best, run.fitnesses, len(run.memory)
>>> win_share(run.best, "random", games=100)["win_rate"]

or from a shell: ``python -m qwixx_env.integrations.agilerl --steps 20000 --opponent self``.

AgileRL's `train_off_policy` steps a Gymnasium vector env and stores, for each game, the
observation, action, reward and next observation that env returns. Over ``qwixx_v0.env()``
(AEC) a seat's next observation would be whichever seat decides next: in every roll each seat
makes its white decision and then the active seat its colour decision, so the learner may
decide twice in a row, or not at all between two of its opponents' decisions. `agilerl_env`
gives AgileRL one learning seat instead, as `qwixx_env.integrations.tianshou.tianshou_env`
gives Tianshou: `qwixx_env.envs.vector.QwixxVectorEnv` plays every other seat inside the env
(bots, or frozen copies of the learner), so each step runs from one learner decision to its
next (or to the game's end) with the learner's rewards in between summed, and the next
observation is the learner's own. AgileRL reads a step's action mask from
``info["action_mask"]``; `AgileRLVectorEnv` puts it there and gives the observation vector alone.

`train` builds a population of AgileRL DQNs (``DQN.population``), one shared `ReplayBuffer`,
AgileRL's `TournamentSelection` and `Mutations` (evolutionary HPO: after each ``evo_steps``
every agent is tested in the env, the fittest survive and are mutated), and hands them to
`agilerl.training.train_off_policy.train_off_policy`. Against a bot that is one call; with
``opponent="self"`` it is one call per generation, the env's opponents becoming a frozen copy of
the fittest agent before each.

Needs the ``agilerl`` extra (``pip install "qwixx_env[agilerl]"``); importing `qwixx_env` never
imports this module. `docs/integrations.md` (AgileRL) has the snippet as tested.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import torch
from agilerl.algorithms.core.registry import (  # pyright: ignore[reportMissingImports]
    HyperparameterConfig,
    RLParameter,
)
from agilerl.algorithms.dqn import DQN  # pyright: ignore[reportMissingImports]
from agilerl.components.replay_buffer import ReplayBuffer  # pyright: ignore[reportMissingImports]
from agilerl.hpo.mutation import Mutations  # pyright: ignore[reportMissingImports]
from agilerl.hpo.tournament import TournamentSelection  # pyright: ignore[reportMissingImports]
from agilerl.training.train_off_policy import train_off_policy  # pyright: ignore[reportMissingImports]
from gymnasium import spaces
from gymnasium.vector import VectorWrapper

from qwixx_env.arena import run_arena
from qwixx_env.core.checks import check_int, check_number
from qwixx_env.core.options import TableOptions
from qwixx_env.envs.vector import QwixxVectorEnv

SELF = "self"
"""`Settings.opponent` for self-play: a frozen copy of the fittest agent in every other seat."""


class AgileRLVectorEnv(VectorWrapper):
    """A `QwixxVectorEnv` as AgileRL's loops read a masked env: the (N, D) observation vectors
    as observations, the (N, A) legal actions in ``info["action_mask"]`` of every reset and step
    (of the observation returned: after a game's end, its next game's first)."""

    def __init__(self, env: QwixxVectorEnv):
        super().__init__(env)
        self.games = env  # typed: `self.env` is gymnasium's VectorEnv to a type checker
        self.single_observation_space = env.single_observation_space["observation"]
        self.observation_space = cast(spaces.Dict, env.observation_space)["observation"]

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        obs, info = self.games.reset(seed=seed, options=options)
        return obs["observation"], {**info, "action_mask": obs["action_mask"]}

    def step(self, actions: Any):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return obs["observation"], rewards, terminated, truncated, {**info, "action_mask": obs["action_mask"]}


def agilerl_env(num_envs: int = 8, **options: Any) -> AgileRLVectorEnv:
    """`AgileRLVectorEnv` over ``QwixxVectorEnv(num_envs, **options)``: the table's options
    (num_players, variant, reward, ...), `opponents` (bot specs or frozen policies; default
    ``"random"``), `learner_seat` (a seat, or ``"random"``: drawn per game)."""
    return AgileRLVectorEnv(QwixxVectorEnv(num_envs, **options))


class FrozenDQN:
    """A frozen copy of an AgileRL DQN as the vector env's opponent policy
    (``(observations (n, D), masks (n, A)) -> actions (n,)``, greedy within each mask)."""

    def __init__(self, agent: Any):
        self.agent = agent.clone()
        self.agent.set_training_mode(False)

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.asarray(self.agent.get_action(observations, epsilon=0.0, action_mask=masks))

    def __repr__(self) -> str:
        return "FrozenDQN()"


@dataclass(frozen=True)
class Settings:
    """How `train` trains; every field is checked when `train` starts. The DQN's and the loop's
    defaults are AgileRL's own (`DQN`'s constructor, `train_off_policy`'s epsilon schedule)."""

    num_players: int = field(default=2, metadata={"help": "seats at the table (1 to 5)"})
    variant: str = field(default="classic", metadata={"help": "classic or longo"})
    reward: str = field(default="win", metadata={"help": "the env's reward: win, score, score_delta or margin"})
    steps: int = field(default=20_000, metadata={
        "help": "learner decisions each agent of the population trains for (AgileRL's max_steps)"})
    opponent: str = field(default="greedy", metadata={
        "help": "the other seats: 'self' (a frozen copy of the fittest agent, renewed every generation) or "
                "a bot spec (random, greedy, heuristic, ...)"})
    seed: int = field(default=0, metadata={
        "help": "seeds the dice, the bots, the networks, AgileRL's sampling and HPO"})
    population: int = field(default=4, metadata={"help": "agents in the population (1: no evolutionary HPO)"})
    evo_steps: int = field(default=5000, metadata={"help": "learner decisions per agent between evolutions"})
    num_envs: int = field(default=8, metadata={"help": "games stepped at once"})
    eval_loop: int = field(default=1, metadata={"help": "fitness test: rounds of num_envs games per agent"})
    architecture: float = field(default=0.2, metadata={
        "help": "relative probability of an architecture mutation (AgileRL draws among its kinds in an order "
                "that follows string hashing: such a run repeats exactly only under a fixed PYTHONHASHSEED)"})
    hidden: int = field(default=64, metadata={"help": "hidden width of the Q-network's encoder and head"})
    lr: float = field(default=1e-4, metadata={"help": "Adam's learning rate"})
    batch_size: int = field(default=64, metadata={"help": "transitions per learning step"})
    learn_step: int = field(default=5, metadata={"help": "learner decisions between learning steps"})
    gamma: float = field(default=0.99, metadata={"help": "discount per learner decision"})
    tau: float = field(default=1e-3, metadata={"help": "soft update rate of the target network"})
    buffer_size: int = field(default=100_000, metadata={"help": "replay buffer capacity"})
    eps_start: float = field(default=1.0, metadata={"help": "exploration at the start"})
    eps_end: float = field(default=0.01, metadata={"help": "least exploration"})
    eps_decay: float = field(default=0.999, metadata={"help": "exploration's factor per step of the num_envs games"})

    def checked(self) -> Settings:
        """These settings with every number checked (a `ValueError` names the bad one)."""
        for name in ("steps", "population", "evo_steps", "num_envs", "eval_loop", "hidden", "batch_size",
                     "learn_step", "buffer_size"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("seed", self.seed, minimum=0)
        if self.evo_steps < self.num_envs:
            raise ValueError(f"evo_steps: got {self.evo_steps}; expected at least num_envs ({self.num_envs}), "
                             "the decisions of one step of the games")
        for name in ("lr", "tau"):
            check_number(name, getattr(self, name), minimum=1e-12)
        for name in ("gamma", "eps_start", "eps_end", "eps_decay", "architecture"):
            check_number(name, getattr(self, name), minimum=0, maximum=1)
        return self


class Trainer:
    """A population of AgileRL DQNs, its replay memory, HPO and env, trained by
    `train_off_policy` in as many calls as asked (`train_to`); `train` is one `train_to`."""

    def __init__(self, settings: Settings):
        s = self.settings = settings.checked()
        torch.manual_seed(s.seed)  # the first weights, AgileRL's exploration and replay sampling
        np.random.seed(s.seed)  # noqa: NPY002 (AgileRL's tournament draws from NumPy's global generator)
        table = TableOptions(num_players=s.num_players, variant=s.variant, reward=s.reward)
        self.env = agilerl_env(s.num_envs, table=table, opponents="random" if s.opponent == SELF else s.opponent)
        self.env.reset(seed=s.seed)  # train_off_policy resets without a seed: the generators go on from here
        hp_config = HyperparameterConfig(
            lr=RLParameter(min=6.25e-5, max=1e-2),
            batch_size=RLParameter(min=8, max=512, dtype=int),
            learn_step=RLParameter(min=1, max=16, dtype=int, grow_factor=1.5, shrink_factor=0.75),
        )
        self.population = DQN.population(
            size=s.population, observation_space=self.env.single_observation_space,
            action_space=self.env.single_action_space, hp_config=hp_config,
            net_config={"encoder_config": {"hidden_size": [s.hidden]}, "head_config": {"hidden_size": [s.hidden]},
                        "random_seed": s.seed},  # the networks' architecture mutations draw from it
            batch_size=s.batch_size, lr=s.lr, learn_step=s.learn_step, gamma=s.gamma, tau=s.tau,
        )
        self.memory = ReplayBuffer(max_size=s.buffer_size)
        evolve = s.population > 1
        self.tournament = TournamentSelection(2, True, s.population) if evolve else None
        # no parameter (ReGraMa) mutation: AgileRL 2.58's reads the gradients captured in the agent's last
        # training step, which an architecture mutation at the end of one train_off_policy call leaves stale
        # for the mutation that opens the next call (a zip() error), and train_to makes several calls
        self.mutation = Mutations(no_mutation=0.4, architecture=s.architecture, new_layer_prob=0.2, parameters=0,
                                  activation=0, rl_hp=0.2, rand_seed=s.seed) if evolve else None
        self.fitnesses: list[float] = []
        self.epsilon = s.eps_start
        self.generations = 0

    @property
    def steps(self) -> int:
        """Learner decisions each agent has trained for so far (AgileRL's step count)."""
        return max(agent.metrics.steps for agent in self.population)

    @property
    def decisions(self) -> int:
        """Learner decisions the population has chosen in training so far (every agent's,
        exploration included; not the fitness tests')."""
        return self.steps * len(self.population)

    @property
    def best(self) -> Any:
        """The agent with the best last fitness (the first agent before any test)."""
        if not self.fitnesses:
            return self.population[0]
        return self.population[int(np.argmax(self.fitnesses))]

    def train_to(self, steps: int) -> None:
        """Train until every agent has trained for at least `steps` learner decisions: whole
        generations of ``evo_steps``, through `train_off_policy`."""
        s = self.settings
        check_int("steps", steps, minimum=1)
        per_generation = s.evo_steps // s.num_envs * s.num_envs
        while self.steps < steps:
            # self-play: the others become the fittest agent, one generation per call
            if s.opponent == SELF:
                self.env.games.set_opponents(FrozenDQN(self.best))
                target = self.steps + per_generation
            else:
                target = steps
            before = self.steps
            self.population, self.fitnesses = train_off_policy(
                self.env, env_name=f"qwixx-{s.variant}-{s.num_players}p", algo="DQN", pop=self.population,
                memory=self.memory, max_steps=target, evo_steps=s.evo_steps, eval_loop=s.eval_loop,
                eps_start=self.epsilon, eps_end=s.eps_end, eps_decay=s.eps_decay,
                selection_strategy=self.tournament, mutation=self.mutation, verbose=False,
            )
            generations = (self.steps - before) // per_generation
            self.generations += generations
            # the loop carries epsilon from one generation to the next; so does this, across calls
            self.epsilon = max(s.eps_end, self.epsilon * s.eps_decay ** (generations * per_generation // s.num_envs))


@dataclass
class Training:
    """What `train` returns: the fittest agent (`best`, an AgileRL `DQN`), the whole `population`
    and its last `fitnesses` (mean return per game in the env's fitness test), the shared replay
    `memory`, the learner decisions the population chose in training (`decisions`) and the
    generations (rounds of training, fitness test, tournament and mutation) it ran."""

    best: Any
    population: list[Any]
    fitnesses: list[float]
    memory: Any
    decisions: int
    generations: int


def train(settings: Settings | None = None) -> Training:
    """Train a population of AgileRL DQNs on `settings` (the defaults when None) through
    AgileRL's `train_off_policy`, with its evolutionary HPO when `Settings.population` > 1."""
    trainer = Trainer(settings or Settings())
    trainer.train_to(trainer.settings.steps)
    return Training(best=trainer.best, population=trainer.population, fitnesses=trainer.fitnesses,
                    memory=trainer.memory, decisions=trainer.decisions, generations=trainer.generations)


def dqn_action(agent: Any, observation: dict[str, np.ndarray]) -> int:
    """The action AgileRL's DQN picks (greedily) for one seat's observation dict, within its mask."""
    return int(agent.get_action(observation["observation"][None], epsilon=0.0,
                                action_mask=observation["action_mask"][None])[0])


class DQNBot:
    """A trained AgileRL DQN as a qwixx_env bot (``act(observation) -> int``), for the arena."""

    name = "agilerl-dqn"

    def __init__(self, agent: Any):
        self.agent = agent

    def act(self, observation: dict[str, Any]) -> int:
        return dqn_action(self.agent, observation)


def win_share(agent: Any, opponent: str = "greedy", *, num_players: int = 2, variant: str = "classic",
              games: int = 100, seed: int = 0) -> dict[str, Any]:
    """The arena's summary row for `agent` against `opponent` bots (`qwixx_env.arena.run_arena`,
    every seat order, in this process): ``win_rate``, ``win_interval``, ``score_mean``, ...."""

    def agilerl_dqn(*, table: TableOptions, seed: int | None) -> DQNBot:
        return DQNBot(agent)

    result = run_arena([agilerl_dqn, opponent], num_players=num_players, variant=variant, games=games, seed=seed,
                       workers=1)
    return result.bots[0]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m qwixx_env.integrations.agilerl",
        description="Train a population of AgileRL DQNs on a Qwixx table through AgileRL's train_off_policy "
                    "(self-play or against a bot), then measure the fittest one's win share against a bot.")
    for f in dataclasses.fields(Settings):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default,
                            help=f"{f.metadata['help']} (default: {f.default})")
    parser.add_argument("--eval-bot", default="random", help="the bot to measure against (default: random)")
    parser.add_argument("--eval-games", type=int, default=100, help="arena deals to measure on, 0: none (default: 100)")
    args = vars(parser.parse_args(argv))
    eval_bot, eval_games = args.pop("eval_bot"), args.pop("eval_games")
    settings = Settings(**args)
    torch.set_num_threads(1)  # small networks: one thread is fastest
    run = train(settings)
    print(f"trained: {run.decisions} learner decisions by {len(run.population)} agents in {run.generations} "
          f"generations against {settings.opponent}; fitnesses {', '.join(f'{f:.2f}' for f in run.fitnesses)}")
    if eval_games:
        row = win_share(run.best, eval_bot, num_players=settings.num_players, variant=settings.variant,
                        games=eval_games, seed=settings.seed)
        low, high = row["win_interval"]
        print(f"the fittest against {eval_bot}: win share {row['win_rate']:.3f} (95% interval {low:.3f} to "
              f"{high:.3f}) over {row['games']} games")


if __name__ == "__main__":
    main()
