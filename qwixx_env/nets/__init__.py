"""Networks: the checked file format, the numpy forward pass, the shipped win-chance networks.

The layer between the rules core and the envs and bots: everything here reads numpy arrays
and the core, never an env or a bot, so the envs (a pretrained opponent in the vector env)
and the bots (the pretrained, `afterstate` and `rollout` bots) both build on it.

- `checkpoint`: the network file format (json + npz, checked header and sha256) and its one
  loader and writer;
- `policy`: `NumpyPolicy`, a policy checkpoint run by numpy;
- `installed`: the installed checkpoints, by name;
- `win_chance`: the shipped win-chance networks (``data/``);
- `afterstate`: afterstate ratings of a batch of observations;
- `heuristic`: the heuristic's ratings of a batch of observations;
- `inputs`: the extra inputs a policy may read, by name.
"""

from qwixx_env.nets.afterstate import (
    afterstate_chances,
    afterstate_gaps,
    afterstate_inputs,
    afterstate_policy,
)
from qwixx_env.nets.checkpoint import (
    AFTERSTATE_TABLES,
    FORMAT,
    INPUTS,
    CheckpointError,
    Layer,
    afterstate_tables,
    write_policy,
)
from qwixx_env.nets.heuristic import heuristic_inputs
from qwixx_env.nets.inputs import extra_inputs, with_inputs
from qwixx_env.nets.installed import checkpoint_names, checkpoints_dir, is_checkpoint_name
from qwixx_env.nets.policy import NumpyPolicy
from qwixx_env.nets.win_chance import (
    LEAF_TABLES,
    check_afterstate_table,
    win_chance_network,
    write_win_chance,
)

__all__ = [
    "AFTERSTATE_TABLES", "FORMAT", "INPUTS", "LEAF_TABLES", "CheckpointError", "Layer", "NumpyPolicy",
    "afterstate_chances", "afterstate_gaps", "afterstate_inputs", "afterstate_policy", "afterstate_tables",
    "check_afterstate_table", "checkpoint_names", "checkpoints_dir", "extra_inputs", "heuristic_inputs",
    "is_checkpoint_name", "win_chance_network", "with_inputs", "write_policy", "write_win_chance",
]
