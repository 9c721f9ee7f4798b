"""Pretrained bots: policy checkpoints played through the common bot interface.

A checkpoint (a json + npz pair in the format of `qwixx_env.nets.checkpoint`) is run by
`qwixx_env.nets.NumpyPolicy`, a numpy forward pass: neither torch nor stable-baselines3 is
needed. `load` makes a bot from an installed checkpoint's name or a checkpoint file's path;
every installed checkpoint is also registered as a bot under its name, so
``bots.make("ppo-classic-2p")`` (variant and players default to the checkpoint's) and
`qwixx arena` know them too.

>>> from qwixx_env import bots
>>> bot = bots.load("ppo-classic-2p")                 # an installed checkpoint, by name
>>> bot = bots.load("runs/best.json", num_players=2)  # a file; a mismatch is an error
>>> bot.act(observation)                              # the common bot interface
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from qwixx_env.bots import registry
from qwixx_env.bots.registry import table_with
from qwixx_env.core.checks import check_seed
from qwixx_env.core.options import TableOptions
from qwixx_env.nets import (  # noqa: F401 (CheckpointError, NumpyPolicy, write_policy, ...: their former home)
    FORMAT,
    INPUTS,
    CheckpointError,
    Layer,
    NumpyPolicy,
    checkpoint_names,
    checkpoints_dir,
    is_checkpoint_name,
    write_policy,
)
from qwixx_env.nets.installed import names_in


class PretrainedBot(registry.TableBot):
    """The common bot interface over a `NumpyPolicy`: ``act(observation dict) -> action``.

    `table` (a `TableOptions`) is the game it plays, and must be the checkpoint's: its variant,
    player count and (Longo) lucky rule (a policy only reads the observation it was trained on,
    and plays the lucky rule it was trained under). Without a table, `variant`, `num_players`
    and `lucky` fill in the checkpoint's game where given (`table_with`); the checkpoint's own
    otherwise. As every bot, it keeps the table it plays as `table`, `variant` (its `Variant`)
    and `num_players` (`registry.TableBot`); the checkpoint's own fields are `policy`'s. The
    bot is deterministic, so `seed` is accepted for the interface and unused.
    """

    def __init__(
        self,
        policy: NumpyPolicy,
        table: TableOptions | None = None,
        *,
        variant: str | None = None,
        num_players: int | None = None,
        lucky: str | None = None,
        seed: int | None = None,
    ):
        check_seed(seed)
        table = table_with(checkpoint_table(policy), table, variant=variant, num_players=num_players, lucky=lucky)
        check_checkpoint_table(policy, table)
        super().__init__(table)
        self.policy = policy
        self.name = policy.name

    def __repr__(self) -> str:
        return f"PretrainedBot({self.name!r}: {self.variant.name}, {self.num_players} player(s))"

    def act(self, observation: dict[str, Any]) -> int:
        vector = np.asarray(observation["observation"], np.float32)[None]
        mask = np.asarray(observation["action_mask"])[None]
        return int(self.policy(vector, mask)[0])


def checkpoint_table(policy: NumpyPolicy) -> TableOptions:
    """The table a checkpoint's policy plays: its variant, player count and lucky rule."""
    return TableOptions(variant=policy.variant, num_players=policy.num_players, lucky=policy.lucky or "bonus")


def check_checkpoint_table(policy: NumpyPolicy, table: TableOptions) -> None:
    """Refuse a table that is not the checkpoint's game (`checkpoint_table`): a `ValueError`
    names the first option that differs (variant, player count, lucky rule) and why."""
    check_trained_table(table, checkpoint_table(policy), policy.name, policy.source)


def check_trained_table(table: TableOptions, plays: TableOptions, name: str, source: str) -> None:
    """Refuse `table` unless it is `plays`, the game that trained policy `name` (read from
    `source`) was trained on: a `ValueError` names the first option that differs (variant,
    player count, lucky rule where the game has lucky numbers) and why. Numpy checkpoints and
    SB3 ``.zip`` models (`qwixx_env.bots.sb3_zip`) are refused alike."""
    reads = "a policy reads the observation it was trained on"
    lucky = plays.lucky if plays.rules.lucky_count else None
    for option, trained, why in (
        ("variant", plays.variant, reads),
        ("num_players", plays.num_players, reads),
        ("lucky", lucky, "a policy plays the lucky rule it was trained under"),
    ):
        wanted = getattr(table, option)
        if trained is not None and wanted != trained:  # lucky None: the game has no lucky numbers
            raise ValueError(
                f"{option}: got {wanted!r}; checkpoint {name!r} ({source}) plays {option}={trained!r} only ({why})"
            )


def load(
    name_or_path: str | os.PathLike[str],
    table: TableOptions | None = None,
    *,
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
    seed: int | None = None,
) -> PretrainedBot:
    """A `PretrainedBot` from an installed checkpoint's name or a checkpoint file's path.

    See `NumpyPolicy.load` for how the argument is read and the errors; `table` (or `variant`,
    `num_players` and `lucky`), when given, must be the checkpoint's game (a `ValueError` says
    what it plays).
    """
    policy = NumpyPolicy.load(name_or_path)
    return PretrainedBot(policy, table, variant=variant, num_players=num_players, lucky=lucky, seed=seed)


class Checkpoint:
    """An installed checkpoint as a registered bot factory: ``Checkpoint(path)(table, seed=)``
    is `load`; its game is the table `bots.make` fills in."""

    models_lucky = True  # it plays one lucky rule, which a spec may name (and is refused otherwise)

    def __init__(self, path: Path):
        self.path = path

    def __call__(self, table: TableOptions | None = None, *, seed: int | None = None) -> PretrainedBot:
        return load(self.path, table, seed=seed)

    def default_table(self) -> TableOptions:
        """The checkpoint's own game (`checkpoint_table`)."""
        return checkpoint_table(NumpyPolicy.load(self.path))

    def check_table(self, table: TableOptions) -> None:
        """Refuse a table that is not the checkpoint's game (`check_checkpoint_table`)."""
        check_checkpoint_table(NumpyPolicy.load(self.path), table)


# --- finding checkpoints --------------------------------------------------------------------



def _register_folder(folder: Path) -> list[str]:
    """Register every checkpoint in `folder` as a bot under its name; return the names.
    Cheap: only the folder is listed; `bots.make` reads and checks the files."""
    names = names_in(folder)
    for name in names:
        registry.register(name, Checkpoint(folder / f"{name}.json"))
    return names


_register_folder(checkpoints_dir())


def __getattr__(name: str) -> Any:
    if name == "export_policy":  # it lived here before the training layer had a home
        raise AttributeError(
            "export_policy moved to qwixx_env.training.export (it needs the train extra: torch, "
            "stable-baselines3): from qwixx_env.training.export import export_policy"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
