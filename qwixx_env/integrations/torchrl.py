"""TorchRL over Qwixx: TorchRL's `PettingZooWrapper` with each seat told whether it decides.

>>> from qwixx_env.integrations.torchrl import torchrl_env
>>> env = torchrl_env("parallel", num_players=3, seed=0)    # or "aec"; table options as qwixx_v0's
>>> td = env.reset()
>>> td["player", "decides"], td["player", "action_mask"]      # (3,) bools; (3, actions)

TorchRL's `PettingZooWrapper` takes the AEC env and the Parallel view as they are, but it does
not say what a Qwixx learner needs about the seats that do not decide this step:

- over the AEC env, a waiting seat's ``(group, "action_mask")`` is all ones (TorchRL's stand-in
  for "not this agent's turn"), so a masked policy samples any action for it, which the game
  then ignores;
- over the Parallel view, ``(group, "mask")`` is true for every live seat; the seats without a
  decision have pass alone in their ``action_mask``, but nothing names the seats that decide.

`WhoDecides`, a TorchRL transform that `torchrl_env` appends, adds ``(group, "decides")``, one
bool per seat of the group (true for the seat to decide in the AEC env, for every seat in a
Parallel step of a new roll, for the one seat otherwise, for none once the game is over), and
gives every seat that does not decide the pass-only mask, in ``action_mask`` and in the action
spec that TorchRL's random actions follow, so a waiting seat's action is always pass. Needs the
``torchrl`` extra; importing `qwixx_env` never imports this module. docs/integrations.md
(TorchRL) has a snippet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from tensordict import TensorDictBase
from torchrl.data import Categorical, Composite, OneHot
from torchrl.envs import PettingZooWrapper, TransformedEnv
from torchrl.envs.transforms import Transform

from qwixx_env import qwixx_v0
from qwixx_env.core.checks import check_choice

APIS = {"aec": qwixx_v0.env, "parallel": qwixx_v0.parallel_env}


class WhoDecides(Transform):
    """Adds ``(group, "decides")`` and gives each seat that does not decide the pass-only mask
    (see the module docstring). `env` is the PettingZoo env that the `PettingZooWrapper` wraps
    and `group_map` the wrapper's (group -> its agents)."""

    def __init__(self, env: AECEnv | ParallelEnv, group_map: Mapping[str, Sequence[str]]):
        super().__init__(in_keys=[], out_keys=[])
        self.env, self.group_map = env, {group: list(agents) for group, agents in group_map.items()}
        space = env.action_space(env.possible_agents[0])
        if not isinstance(space, spaces.Discrete):
            raise ValueError(f"env: its action space is {space!r}; expected a Qwixx env's Discrete one")
        self.pass_only = torch.zeros(int(space.n), dtype=torch.bool)
        self.pass_only[-1] = True  # pass is the last action

    def deciding(self) -> set[str]:
        """The seats whose action the next step plays."""
        env = self.env
        if isinstance(env, ParallelEnv):
            return set(getattr(env, "acting_agents", []))
        over = not env.agents or all(env.terminations.values())
        return set() if over else {env.agent_selection}

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        deciding = self.deciding()
        for group, agents in self.group_map.items():
            decides = torch.tensor([a in deciding for a in agents], dtype=torch.bool)
            next_tensordict.set((group, "decides"), decides)
            mask = next_tensordict.get((group, "action_mask")).clone()
            mask[~decides] = self.pass_only
            next_tensordict.set((group, "action_mask"), mask)
            spec = None if self.container is None else self.container.full_action_spec[group, "action"]
            if isinstance(spec, (Categorical, OneHot)):  # the random actions follow the spec's mask
                spec.update_mask(mask.clone())
        return next_tensordict

    def _reset(self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase) -> TensorDictBase:
        return self._call(tensordict_reset)

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        for group, agents in self.group_map.items():
            observation_spec[group]["decides"] = Categorical(n=2, shape=torch.Size((len(agents),)), dtype=torch.bool,
                                                             device=observation_spec.device)
        return observation_spec


def torchrl_env(api: str = "parallel", *, seed: int | None = 0, **options: Any) -> TransformedEnv:
    """TorchRL's `PettingZooWrapper` (``use_mask=True``) over ``qwixx_v0.env(**options)``
    (`api` ``"aec"``: one group per seat, one TorchRL step per decision) or
    ``qwixx_v0.parallel_env(**options)`` (``"parallel"``: one group ``player`` holding every
    seat, one step per parallel step), with `WhoDecides` appended."""
    check_choice("api", api, tuple(APIS))
    env = APIS[api](**options)
    wrapped = PettingZooWrapper(env, use_mask=True, seed=seed)
    groups = wrapped.group_map  # a dict once the wrapper is made
    assert isinstance(groups, dict)
    return TransformedEnv(wrapped, WhoDecides(env, groups))
