"""PufferLib: Qwixx as a native PufferLib environment over the batched engine.

>>> import pufferlib.vector
>>> from qwixx_env.integrations.pufferlib import QwixxPufferEnv
>>> env = QwixxPufferEnv(num_games=1024, num_players=2, opponents="greedy")
>>> observations, infos = env.reset(seed=0)             # env.observations: (1024, D + A) float32
>>> observations, rewards, terminals, truncations, infos = env.step(actions)  # the same arrays
>>> vecenv = pufferlib.vector.make(QwixxPufferEnv, num_envs=2, num_workers=2,
...                                backend=pufferlib.vector.Multiprocessing, env_kwargs={"num_games": 512})

`QwixxPufferEnv` is a `pufferlib.PufferEnv` (PufferLib's vectorised form, not its PettingZoo
emulation): each of its ``num_agents`` rows is one game of `QwixxVectorEnv`, seen from that
game's learning seat, which plays against opponents inside the engine and restarts a game
that ends in the same step. The tables, opponents and rewards are `QwixxVectorEnv`'s, whose
options it takes (but ``autoreset_mode``: PufferLib's envs restart in the same step).

**The buffers** are PufferLib's own: ``observations``, ``rewards``, ``terminals``,
``truncations`` and ``masks``, made by `PufferEnv` or handed in by PufferLib's vectorisation
(``buf``: shared memory under `pufferlib.vector.Multiprocessing`). Every `reset` and `step`
writes into them in place and returns them. The rules run in `QwixxVectorEnv`, which steps the
engine and hands back its arrays; one copy a step moves them into PufferLib's buffers, where
the observation and the int8 mask share one float32 row.

**The action mask** travels in the observation, PufferLib's only channel to a policy (its
``masks`` buffer says which rows hold a live agent: here every row, always): a row is the
learner's observation (``observation_size`` floats, as `qwixx_v0` encodes it) followed by its
legal actions as 0/1 floats (``num_actions`` of them). `observation_and_mask` splits a batch
of rows again; ``env.observation`` and ``env.action_mask`` are those two views of the
buffer. An action the mask does not offer ends that game as `QwixxVectorEnv` ends it
(``illegal_action="terminate"``: the learner's return for it is ``illegal_reward``).

**Seeds.** ``reset(seed)`` seeds game b with ``seed * num_games + b``, so that PufferLib's
workers, which it seeds ``seed``, ``seed + 1``, ..., play different games; the constructor's
``seed`` (PufferLib passes one) is used by a first reset given none.

**infos** is a list, as PufferLib asks: one dict on a step in which games ended, with their
mean return (``episode_return``), mean length in learner decisions (``episode_length``), how
many ended (``games``) and how many of those an illegal action ended (``illegal_actions``).

**A policy.** `MaskedPolicy` is a torch module in PufferLib's policy form (``forward`` and
``forward_eval`` take rows and return (logits, values)) that splits the mask from each row,
gives the actions it leaves out no chance, and has a value head; ``act`` is its deterministic
choice for a batch (the form `QwixxVectorEnv` plays as an opponent) and ``act_one`` for one
AEC observation. `qwixx_env.integrations.pufferlib_ppo` trains one on the CPU.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from pufferlib import PufferEnv  # pyright: ignore[reportMissingImports]
from pufferlib.pytorch import layer_init  # pyright: ignore[reportMissingImports]
from torch import nn

from qwixx_env.core.checks import check_int
from qwixx_env.envs.vector import QwixxVectorEnv
from qwixx_env.files import write_atomically

MASKED = -1e9  # the logit of an action the mask leaves out: probability 0, and finite, so entropies stay finite
POLICY_FORMAT = "qwixx_env.integrations.pufferlib.MaskedPolicy/1"


def observation_and_mask(observations: Any, observation_size: int) -> tuple[Any, Any]:
    """(the observations, the action masks) of rows as `QwixxPufferEnv` writes them (a numpy
    array or a torch tensor of shape (..., observation_size + num_actions)): two views."""
    return observations[..., :observation_size], observations[..., observation_size:]


# pyright, without pufferlib installed, finds `pufferlib` in this module's own folder: this very file
class QwixxPufferEnv(PufferEnv):  # pyright: ignore[reportGeneralTypeIssues]
    """`num_games` games of one table as a native PufferLib env (see the module docstring).

    `options` are `QwixxVectorEnv`'s keyword options (``num_players``, ``variant``, ``opponents``,
    ``learner_seat``, ``reward``, ``illegal_reward``, ...), checked as it checks them; `buf` and
    `seed` are what PufferLib's vectorisation passes.
    """

    def __init__(self, num_games: int = 1024, *, buf: dict | None = None, seed: int | None = None, **options: Any):
        if "autoreset_mode" in options:
            raise ValueError(f"autoreset_mode: got {options['autoreset_mode']!r}; QwixxPufferEnv restarts a game in "
                             "the step it ends in, as PufferLib's envs do (leave autoreset_mode out)")
        self.games = QwixxVectorEnv(num_games, **options)
        layout, A = self.games.layout, self.games.single_action_space.n
        self.observation_size, self.num_actions = layout.size, int(A)
        self.single_observation_space = spaces.Box(
            np.concatenate([layout.low, np.zeros(A)]).astype(np.float32),
            np.concatenate([layout.high, np.ones(A)]).astype(np.float32),
            dtype=np.float32,
        )
        self.single_action_space = spaces.Discrete(A)
        self.num_agents = self.games.num_envs
        self.first_seed = seed
        super().__init__(buf)  # PufferLib's buffers: made here, or the ones handed in
        self.observation, self.action_mask = observation_and_mask(self.observations, self.observation_size)
        self._returns = np.zeros(self.num_agents, np.float64)  # each game's return so far, for infos
        self._lengths = np.zeros(self.num_agents, np.int64)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, list[dict]]:
        """Start every game (see Seeds in the module docstring); returns (observations, [])."""
        if seed is None and not self.games.has_reset:
            seed = self.first_seed
        obs, _ = self.games.reset(seed=None if seed is None else seed * self.num_agents)
        self._write(obs)
        self.rewards[:] = 0.0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = True
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return self.observations, []

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """One learner decision per game; fills and returns (observations, rewards, terminals,
        truncations, infos), a game that ended showing the first decision of its next one."""
        obs, rewards, terminated, truncated, infos = self.games.step(actions)
        self._write(obs)
        self.rewards[:] = rewards
        self.terminals[:] = terminated
        self.truncations[:] = truncated
        self._returns += rewards
        self._lengths += 1
        ended = terminated | truncated
        if not ended.any():
            return self.observations, self.rewards, self.terminals, self.truncations, []
        illegal = infos.get("illegal_action", np.zeros_like(ended))
        summary = {
            "episode_return": float(self._returns[ended].mean()),
            "episode_length": float(self._lengths[ended].mean()),
            "games": int(ended.sum()),
            "illegal_actions": int(illegal[ended].sum()),
        }
        self._returns[ended] = 0.0
        self._lengths[ended] = 0
        return self.observations, self.rewards, self.terminals, self.truncations, [summary]

    def close(self) -> None:
        self.games.close()

    def _write(self, obs: dict[str, np.ndarray]) -> None:
        self.observation[...] = obs["observation"]
        self.action_mask[...] = obs["action_mask"]


class MaskedPolicy(nn.Module):
    """A masked actor-critic over `QwixxPufferEnv`'s rows: a tanh MLP trunk of `hidden` widths,
    an action head whose logits the mask sets to `MASKED` where it leaves an action out, and a
    value head (CleanRL's orthogonal initialisation, through PufferLib's `layer_init`).

    It is PufferLib's policy form: ``forward(rows, state=None)`` and ``forward_eval`` return
    (logits (n, A), values (n, 1)) for rows of ``observation_size + num_actions`` floats, the
    mask last, as `QwixxPufferEnv` writes them. `get_action_and_value` is CleanRL's sampling
    and evaluation step; `act` and `act_one` choose the most likely legal action.
    """

    def __init__(self, observation_size: int, num_actions: int, hidden: Sequence[int] = (128, 128)):
        super().__init__()
        self.observation_size = check_int("observation_size", observation_size, minimum=1)
        self.num_actions = check_int("num_actions", num_actions, minimum=1)
        if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Sequence) or not hidden:
            raise ValueError(f"hidden: got {hidden!r}; expected a non-empty sequence of layer widths")
        self.hidden = tuple(check_int("hidden", width, minimum=1, accepted="layer widths of at least 1")
                            for width in hidden)
        layers: list[nn.Module] = []
        width = self.observation_size
        for size in self.hidden:
            layers += [layer_init(nn.Linear(width, size)), nn.Tanh()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.actor = layer_init(nn.Linear(width, self.num_actions), std=0.01)  # near-uniform at first
        self.critic = layer_init(nn.Linear(width, 1), std=1.0)
        self.metadata: dict[str, Any] = {}  # what `save` wrote beside the weights, once loaded

    @classmethod
    def for_env(cls, env: QwixxPufferEnv, hidden: Sequence[int] = (128, 128)) -> MaskedPolicy:
        """A fresh policy for the rows of `env` (a `QwixxPufferEnv`, or a PufferLib vectorisation's
        ``driver_env``)."""
        return cls(env.observation_size, env.num_actions, hidden)

    def heads(self, observations: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (n, A), values (n, 1)) from observations (n, D) and 0/1 masks (n, A)."""
        hidden = self.trunk(observations.float())
        logits = self.actor(hidden).masked_fill(masks < 0.5, MASKED)
        return logits, self.critic(hidden)

    def forward(self, rows: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits, values) of rows as `QwixxPufferEnv` writes them (PufferLib's form; no state)."""
        width = self.observation_size + self.num_actions
        if rows.shape[-1] != width:
            raise ValueError(f"rows: got {rows.shape[-1]} values a row; expected {width} (observation_size "
                             f"{self.observation_size} + num_actions {self.num_actions}, the mask last)")
        return self.heads(*observation_and_mask(rows, self.observation_size))

    def forward_eval(self, rows: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """`forward`: PufferLib's name for the call that only chooses actions."""
        return self.forward(rows, state)

    def get_value(self, rows: torch.Tensor) -> torch.Tensor:
        """The value head's estimate for each row, (n,)."""
        return self.forward(rows)[1].squeeze(-1)

    def get_action_and_value(
        self, rows: torch.Tensor, action: torch.Tensor | None = None, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """CleanRL's step: (action, its log-probability, the entropy over the legal actions,
        the value), each (n,). Without `action` one is sampled (from `generator`, if given)
        among the legal actions; with it, that action is scored."""
        logits, values = self.forward(rows)
        log_probs = torch.log_softmax(logits, dim=-1)
        probs = log_probs.exp()
        if action is None:
            action = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
        legal = logits > MASKED  # masked entropy: the left-out actions add nothing
        entropy = -(probs * log_probs).where(legal, torch.zeros((), dtype=probs.dtype)).sum(-1)
        return action, log_probs.gather(-1, action.unsqueeze(-1)).squeeze(-1), entropy, values.squeeze(-1)

    @torch.no_grad()
    def act(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The most likely legal action of each row, (n,) int64, from observations (n, D) and
        masks (n, A): a frozen batched policy, as `QwixxVectorEnv` plays an opponent."""
        logits, _ = self.heads(torch.as_tensor(np.asarray(observations)), torch.as_tensor(np.asarray(masks)))
        return logits.argmax(-1).numpy().astype(np.int64)

    def act_one(self, observation: dict[str, np.ndarray]) -> int:
        """The most likely legal action for one AEC observation (``{"observation", "action_mask"}``),
        as a bot's ``act`` returns it."""
        return int(self.act(observation["observation"][None], observation["action_mask"][None])[0])

    def save(self, path: str | Path, **metadata: Any) -> None:
        """Write the policy (sizes, weights) and `metadata` (plain values: numbers, strings, lists,
        dicts) to `path`, atomically: the old file or the new, never a part. `load` reads it."""
        blob = {"format": POLICY_FORMAT, "observation_size": self.observation_size, "num_actions": self.num_actions,
                "hidden": list(self.hidden), "weights": self.state_dict(), "metadata": metadata}
        buffer = io.BytesIO()
        torch.save(blob, buffer)
        write_atomically(Path(path), buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> MaskedPolicy:
        """A policy `save` wrote; what was saved beside it is its ``metadata`` attribute (a dict)."""
        try:
            blob = torch.load(Path(path), map_location="cpu", weights_only=True)
        except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as err:  # missing, unreadable, not ours
            raise ValueError(f"path: cannot read {str(path)!r} as a saved MaskedPolicy ({err})") from None
        if not isinstance(blob, dict) or blob.get("format") != POLICY_FORMAT:
            raise ValueError(f"path: {str(path)!r} is not a saved MaskedPolicy (expected format {POLICY_FORMAT!r})")
        policy = cls(blob["observation_size"], blob["num_actions"], blob["hidden"])
        policy.load_state_dict(blob["weights"])
        policy.metadata = dict(blob["metadata"])
        return policy
