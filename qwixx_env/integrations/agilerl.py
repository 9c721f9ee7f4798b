"""AgileRL's DQN learning a seat of a Qwixx table, against a bot or a frozen copy of itself.

>>> from qwixx_env.integrations.agilerl import Settings, train_dqn, win_share
>>> run = train_dqn(Settings(steps=2000, opponent="self", seed=0))
>>> run.decisions, run.games, run.illegal, len(run.memory)
>>> win_share(run.agent, "greedy", games=100)["win_rate"]

or from a shell: ``python -m qwixx_env.integrations.agilerl --steps 2000 --opponent greedy``.

AgileRL's own self-play loop (its Connect Four tutorial) lets two players alternate one move
each. Qwixx's turns are not like that: in every roll each seat makes its white decision and then
the active seat its colour decision, so the learner may decide twice in a row, or not at all
between two of its opponents' decisions. `train_dqn` therefore drives `qwixx_v0.env()` itself:

- the learner acts whenever `env.agent_selection` is its seat, the other seats (a scripted bot,
  or a frozen copy of the learner refreshed every `Settings.refresh` games) act otherwise;
- a transition runs from one learner decision to its next (or to the game's end), with the
  reward the AEC env accumulated for the learner in between (``env.last()``), so the next
  observation is always the learner's own;
- every action comes through AgileRL's ``DQN.get_action(obs, epsilon, action_mask=...)`` with
  the seat's mask (the frozen copy's too), so no illegal action is sampled; `Training.illegal`
  counts any that reached the env anyway;
- the learner takes each seat in turn, one game each, so it learns to play first and later.

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
from agilerl.algorithms.dqn import DQN  # pyright: ignore[reportMissingImports]
from agilerl.components.data import Transition  # pyright: ignore[reportMissingImports]
from agilerl.components.replay_buffer import ReplayBuffer  # pyright: ignore[reportMissingImports]

from qwixx_env import bots, qwixx_v0
from qwixx_env.arena import run_arena
from qwixx_env.core.checks import check_int, check_number
from qwixx_env.core.options import TableOptions

SELF = "self"
"""`Settings.opponent` for self-play: a frozen copy of the learner in every other seat."""


@dataclass(frozen=True)
class Settings:
    """How `train_dqn` trains; every field is checked when `train_dqn` starts."""

    num_players: int = field(default=2, metadata={"help": "seats at the table (1 to 5)"})
    variant: str = field(default="classic", metadata={"help": "classic or longo"})
    reward: str = field(default="win", metadata={"help": "the env's reward: win, score, score_delta or margin"})
    steps: int = field(default=5000, metadata={"help": "learner decisions to train for (the last game is finished)"})
    opponent: str = field(default=SELF, metadata={
        "help": "the other seats: 'self' (a frozen copy of the learner) or a bot spec (greedy, heuristic, ...)"})
    refresh: int = field(default=20, metadata={"help": "self-play: games between copies of the learner to the others"})
    seed: int = field(default=0, metadata={"help": "seeds the dice, the bots, the network and AgileRL's sampling"})
    hidden: int = field(default=128, metadata={"help": "hidden width of the Q-network's encoder and head"})
    lr: float = field(default=1e-3, metadata={"help": "Adam's learning rate"})
    batch_size: int = field(default=64, metadata={"help": "transitions per learning step"})
    learn_step: int = field(default=4, metadata={"help": "learner decisions between learning steps"})
    gamma: float = field(default=0.99, metadata={"help": "discount per learner decision"})
    tau: float = field(default=0.01, metadata={"help": "soft update rate of the target network"})
    buffer_size: int = field(default=50_000, metadata={"help": "replay buffer capacity"})
    epsilon_start: float = field(default=1.0, metadata={"help": "exploration at the start"})
    epsilon_end: float = field(default=0.05, metadata={"help": "exploration after epsilon_decay of the steps"})
    epsilon_decay: float = field(default=0.5, metadata={"help": "share of the steps over which epsilon falls"})

    def checked(self) -> Settings:
        """These settings with every number checked (a `ValueError` names the bad one)."""
        for name in ("steps", "refresh", "hidden", "batch_size", "learn_step", "buffer_size"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("seed", self.seed, minimum=0)
        for name in ("lr", "tau"):
            check_number(name, getattr(self, name), minimum=1e-12)
        for name in ("gamma", "epsilon_start", "epsilon_end", "epsilon_decay"):
            check_number(name, getattr(self, name), minimum=0, maximum=1)
        return self


@dataclass
class Training:
    """What `train_dqn` returns: the trained `agent` (an AgileRL `DQN`), its replay `memory`, and
    counts of the run: learner `decisions`, `games`, learning steps (`updates`), actions the env
    was given that their seat's mask did not offer (`illegal`), the learner's return per game."""

    agent: Any
    memory: Any
    decisions: int = 0
    games: int = 0
    updates: int = 0
    illegal: int = 0
    returns: list[float] = field(default_factory=list)


def make_dqn(settings: Settings, env: Any) -> Any:
    """An AgileRL DQN for the env's observation vector and actions."""
    agent_name = env.possible_agents[0]
    return DQN(
        observation_space=env.observation_space(agent_name)["observation"],
        action_space=env.action_space(agent_name),
        net_config={"encoder_config": {"hidden_size": [settings.hidden]},
                    "head_config": {"hidden_size": [settings.hidden]}},
        batch_size=settings.batch_size, lr=settings.lr, learn_step=settings.learn_step, gamma=settings.gamma,
        tau=settings.tau,
    )


def dqn_action(agent: Any, observation: dict[str, np.ndarray], epsilon: float = 0.0) -> int:
    """The action AgileRL's DQN picks for one seat's observation dict, within its action mask."""
    return int(agent.get_action(observation["observation"][None], epsilon=epsilon,
                                action_mask=observation["action_mask"][None])[0])


def transition(obs: np.ndarray, action: int, reward: float, next_obs: np.ndarray, done: bool) -> Any:
    """One learner transition as AgileRL's ReplayBuffer stores it (a batch of one)."""
    return Transition(
        obs=obs[None], action=np.array([action]), reward=np.array([reward], np.float32), next_obs=next_obs[None],
        done=np.array([done], np.float32), batch_size=[1],
    ).to_tensordict()


def train_dqn(settings: Settings | None = None) -> Training:
    """Train AgileRL's DQN on `settings` (the defaults when None): whole games of the AEC env, the
    learner's seat turning each game, until the learner has made `settings.steps` decisions."""
    s = (settings or Settings()).checked()
    table = TableOptions(num_players=s.num_players, variant=s.variant, reward=s.reward)
    torch.manual_seed(s.seed)  # the network's first weights; AgileRL's exploration and replay sampling
    env = qwixx_v0.env(table=table)
    run = Training(agent=make_dqn(s, env), memory=ReplayBuffer(max_size=s.buffer_size))
    # the other seats: a frozen copy of the learner, or a bot per seat (each with its own stream)
    frozen = make_dqn(s, env) if s.opponent == SELF else None
    if frozen is not None:
        frozen.actor.load_state_dict(run.agent.actor.state_dict())
    seat_bots = {} if frozen is not None else {
        name: bots.make_bot(s.opponent, table, seed=s.seed + seat) for seat, name in enumerate(env.possible_agents)}
    env.reset(seed=s.seed)
    while run.decisions < s.steps:
        learner = env.possible_agents[run.games % s.num_players]
        pending = None  # the learner's last (observation, action), waiting for its next observation
        game_return = 0.0
        for name in env.agent_iter():
            last, reward, termination, truncation, _ = env.last()
            observation = cast(dict[str, np.ndarray], last)  # last() observes (PettingZoo types it Optional)
            if name == learner:
                game_return += float(reward)  # the reward accumulated since the learner last acted
                if pending is not None:
                    run.memory.add(transition(*pending, float(reward), observation["observation"], termination))
                    pending = None
            if termination or truncation:
                env.step(None)
                continue
            if name == learner:
                epsilon = s.epsilon_start + (s.epsilon_end - s.epsilon_start) * min(
                    1.0, run.decisions / max(1.0, s.epsilon_decay * s.steps))
                action = dqn_action(run.agent, observation, epsilon)
                pending = (observation["observation"], action)
                run.decisions += 1
                if run.decisions % s.learn_step == 0 and len(run.memory) >= s.batch_size:
                    run.agent.learn(run.memory.sample(s.batch_size))
                    run.updates += 1
            elif frozen is not None:
                action = dqn_action(frozen, observation)
            else:
                action = seat_bots[name].act(observation)
            run.illegal += int(not observation["action_mask"][action])
            env.step(action)
        run.games += 1
        run.returns.append(game_return)
        if frozen is not None and run.games % s.refresh == 0:
            frozen.actor.load_state_dict(run.agent.actor.state_dict())
        env.reset()  # the next game continues the seeded generator
    return run


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
        description="Train AgileRL's DQN on a Qwixx table (self-play or against a bot), then measure its win "
                    "share against a bot in the arena.")
    for f in dataclasses.fields(Settings):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default,
                            help=f"{f.metadata['help']} (default: {f.default})")
    parser.add_argument("--eval-bot", default="greedy", help="the bot to measure against (default: greedy)")
    parser.add_argument("--eval-games", type=int, default=100, help="arena deals to measure on, 0: none (default: 100)")
    args = vars(parser.parse_args(argv))
    eval_bot, eval_games = args.pop("eval_bot"), args.pop("eval_games")
    settings = Settings(**args)
    torch.set_num_threads(1)  # a small network: one thread is fastest
    run = train_dqn(settings)
    print(f"trained: {run.decisions} learner decisions in {run.games} games against {settings.opponent}, "
          f"{run.updates} learning steps, {run.illegal} illegal actions")
    if eval_games:
        row = win_share(run.agent, eval_bot, num_players=settings.num_players, variant=settings.variant,
                        games=eval_games, seed=settings.seed)
        low, high = row["win_interval"]
        print(f"win share against {eval_bot}: {row['win_rate']:.3f} (95% interval {low:.3f} to {high:.3f}) "
              f"over {row['games']} games")


if __name__ == "__main__":
    main()
