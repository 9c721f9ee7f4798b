"""The files of publishing: the run's final policy, the bot name and the target folders
checked, then the policy copied in as an installed checkpoint and its learning curves beside
it (`qwixx_env.training.publish` runs the whole)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from qwixx_env import bots
from qwixx_env.bots import pretrained
from qwixx_env.files import folder_problem, write_atomically
from qwixx_env.nets import NumpyPolicy


def check_name(name: str) -> None:
    """A checkpoint name: letters, digits, '-', '_' (it becomes a bot name and file names),
    and not the name of a built-in bot (registering it would clash)."""
    ok = bool(name) and name[0].isalnum() and all(c.isalnum() or c in "-_" for c in name) and name.isascii()
    if not ok:
        raise ValueError(
            f"--name: got {name!r}; expected ASCII letters, digits, '-' and '_', starting with a letter or "
            "digit (e.g. 'ppo-classic-2p')"
        )
    builtin = sorted(set(bots.available()) - set(pretrained.checkpoint_names()))
    if name in builtin:
        raise ValueError(f"--name: {name!r} is a built-in bot; choose another name (built-in: {builtin})")


def read_run(run_dir: Path) -> tuple[Any, dict[str, Any]]:
    """The run's final policy (checked as loading checks it) and its JSON description."""
    if not run_dir.is_dir():
        raise FileNotFoundError(f"RUN_DIR {run_dir}: not a folder (expected a training run, runs/<name>)")
    for file in ("final.json", "final.npz"):
        if not (run_dir / file).is_file():
            raise FileNotFoundError(
                f"{run_dir / file}: not found; RUN_DIR must be a finished training run "
                "(qwixx-train writes final.json and final.npz when the run ends)"
            )
    policy = NumpyPolicy.load(run_dir / "final.json")
    return policy, json.loads((run_dir / "final.json").read_text())


def check_replace(spec: dict[str, Any], name: str, checkpoints: Path, *, force: bool) -> None:
    """Refuse to replace another policy already published as `name` unless `force`."""
    json_path = checkpoints / f"{name}.json"
    if json_path.exists() and not force:
        try:
            old = json.loads(json_path.read_text())["weights"]["sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            old = None
        if old != spec["weights"]["sha256"]:
            raise ValueError(
                f"--name: {json_path} already holds another policy; pass --force to replace it, or another --name"
            )


def check_folders(**folders: Path) -> None:
    """Each output folder exists as a writable folder or can be made (`files.folder_problem`)."""
    for option, folder in folders.items():
        problem = folder_problem(folder, create=True)
        if problem:
            raise ValueError(f"--{option}: {folder} {problem}; expected a folder to write into")


def install(
    run_dir: Path, spec: dict[str, Any], name: str, checkpoints: Path, images: Path, *, force: bool
) -> dict[str, Any]:
    """Copy the run's final policy (`spec`: its JSON, checked by `read_run`) to
    ``checkpoints/NAME.*`` (npz first, JSON last) and its curves to ``images/NAME-curves.png``;
    load it back. Returns the paths and the loaded policy."""
    check_replace(spec, name, checkpoints, force=force)
    checkpoints.mkdir(parents=True, exist_ok=True)
    json_path, npz_path = checkpoints / f"{name}.json", checkpoints / f"{name}.npz"
    npz_data, json_data = (run_dir / "final.npz").read_bytes(), (run_dir / "final.json").read_bytes()
    try:
        same_json = json.loads(json_data) == spec
    except ValueError:
        same_json = False
    if hashlib.sha256(npz_data).hexdigest() != spec["weights"]["sha256"] or not same_json:
        raise ValueError(f"{run_dir}: final.npz or final.json changed since it was read; publish again")
    write_atomically(npz_path, npz_data)
    write_atomically(json_path, json_data)
    installed = checkpoints.resolve() == pretrained.checkpoints_dir().resolve()
    # By name where it is the installed folder (as users will load it), else by path.
    bot = bots.load(name if installed else json_path)
    curves = None
    if (run_dir / "curves.png").is_file():
        images.mkdir(parents=True, exist_ok=True)
        curves = images / f"{name}-curves.png"
        write_atomically(curves, (run_dir / "curves.png").read_bytes())
    return {"json": json_path, "npz": npz_path, "curves": curves, "policy": bot.policy, "by_name": installed}
