"""Finding policy checkpoints: the installed ones by name, a user's by path.

Installed checkpoints live in the ``qwixx_env.checkpoints`` package (the repository's
top-level ``checkpoints/`` folder). A checkpoint is named by a plain name
(``"ppo-classic-2p"``: an installed one) or by a path (a str with a path separator or a
``.json``/``.npz`` ending, or any `os.PathLike`): a file with or without its suffix, or a
training run's folder, which means its policy: a PPO run's final one (``runs/my2p`` is
``runs/my2p/final``), an RLlib run's export (``runs/rllib_2p`` is ``runs/rllib_2p/policy``).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from qwixx_env.nets.checkpoint import CheckpointError, json_and_npz


def checkpoints_dir() -> Path:
    """The installed checkpoints: the ``qwixx_env.checkpoints`` package's folder, or, in a
    source checkout where that package is not installed, the repository's ``checkpoints/``."""
    try:
        return Path(str(resources.files("qwixx_env.checkpoints")))
    except ModuleNotFoundError as err:
        if err.name != "qwixx_env.checkpoints":
            raise
        return Path(__file__).resolve().parents[2] / "checkpoints"


def checkpoint_names() -> list[str]:
    """The names of the installed checkpoints (their JSON files), sorted."""
    return names_in(checkpoints_dir())


def names_in(folder: Path) -> list[str]:
    """The names of the checkpoints (their JSON files) in `folder`, sorted."""
    return sorted(p.name[: -len(".json")] for p in folder.glob("*.json")) if folder.is_dir() else []


def is_checkpoint_name(name_or_path: str | os.PathLike[str]) -> bool:
    """Whether `load` reads the argument as an installed checkpoint's name rather than a
    file's path: a `str` with no path separator and no ``.json``/``.npz`` ending."""
    text = os.fspath(name_or_path)
    return isinstance(name_or_path, str) and not (
        any(s in text for s in ("/", os.sep)) or text.endswith((".json", ".npz"))
    )


RUN_POLICY = "final"  # the policy a PPO training run's folder holds when the run is done
RLLIB_RUN_POLICY = "policy"  # an RLlib run's (qwixx_env.training.rllib): exported at each checkpoint


def checkpoint_label(name_or_path: str | os.PathLike[str]) -> str:
    """A short name for a checkpoint in tables that tells runs apart: an installed one's name,
    else its folder's name and its stem (``runs/my2p/final.json`` -> ``"my2p/final"``; a run
    folder likewise)."""
    if is_checkpoint_name(name_or_path):
        return os.fspath(name_or_path)
    json_path, _ = resolve(name_or_path)
    folder = json_path.resolve().parent.name
    stem = json_path.name[: -len(".json")]
    return f"{folder}/{stem}" if folder else stem


def resolve(name_or_path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """(json, npz) paths of a checkpoint name or path (see `NumpyPolicy.load`)."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(
            f"checkpoint: got {name_or_path!r}; expected a checkpoint name or a path (str or Path)"
        )
    text = os.fspath(name_or_path)
    if is_checkpoint_name(name_or_path):
        if text not in checkpoint_names():
            raise CheckpointError(
                f"checkpoint: got name {text!r}; installed checkpoints are {checkpoint_names()} "
                f"(in {checkpoints_dir()}); for a file of your own pass its path, e.g. './{text}.json'"
            )
        base = checkpoints_dir() / text
    else:
        base = Path(text)
        if base.is_dir():  # a training run's folder: its policy
            base = run_policy(base, text)
    return json_and_npz(base)


def run_policy(folder: Path, text: str) -> Path:
    """The policy (path without suffix) of a training run's `folder` (given as `text`): a PPO
    run's ``final``, else an RLlib run's ``policy``; a FileNotFoundError naming both if neither."""
    for name in (RUN_POLICY, RLLIB_RUN_POLICY):
        if (folder / f"{name}.json").is_file():
            return folder / name
    raise FileNotFoundError(
        f"checkpoint {text}: a folder without {RUN_POLICY}.json; nor {RLLIB_RUN_POLICY}.json: a PPO training "
        f"run's folder holds its policy as {folder / RUN_POLICY} once the run is done, an RLlib run's as "
        f"{folder / RLLIB_RUN_POLICY} from its first checkpoint (pass a checkpoint file's path otherwise)"
    )
