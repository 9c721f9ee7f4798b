"""BenchMARL's command line for the Qwixx task: BenchMARL's own ``run.py`` with `QwixxCallback`.

    python -m qwixx_env.integrations.benchmarl_run algorithm=mappo task=qwixx/classic_3p \\
        experiment.max_n_frames=600_000 +qwixx.opponent=heuristic +qwixx.games=200

It composes the same Hydra config as ``python -m benchmarl.run`` (BenchMARL's ``conf`` folder,
with the Qwixx tables on the search path: it adds `benchmarl.SEARCH_PATH` to the command line), and runs the
experiment with ``QwixxCallback(opponent, games, seed)``: each seat trains on its own decisions
only, and each evaluation prints and logs the win share against ``qwixx.opponent`` (default
``greedy``; ``null`` for none; the ``+`` because BenchMARL's config has no ``qwixx`` key).
BenchMARL's ``run.py`` names the task too (``task=qwixx/...`` with ``hydra.searchpath=[pkg://
qwixx_env.integrations.benchmarl_conf]``) but takes no callbacks, so its run stops at the first
batch and points here.
Needs the ``benchmarl`` extra.
"""

from __future__ import annotations

import sys

import hydra  # pyright: ignore[reportMissingImports]
from benchmarl.hydra_config import load_experiment_from_hydra  # pyright: ignore[reportMissingImports]
from hydra.core.hydra_config import HydraConfig  # pyright: ignore[reportMissingImports]
from omegaconf import DictConfig, OmegaConf  # pyright: ignore[reportMissingImports]

from qwixx_env.integrations.benchmarl import SEARCH_PATH, QwixxCallback, register_tasks

DEFAULTS = {"opponent": "greedy", "games": 100, "seed": 0}
"""The ``qwixx.*`` options of the command line and their defaults (`QwixxCallback`'s)."""


def callback_from(cfg: DictConfig) -> QwixxCallback:
    """The `QwixxCallback` of the ``qwixx`` options in `cfg` (absent ones take `DEFAULTS`)."""
    given = OmegaConf.to_container(cfg.get("qwixx", {})) or {}
    if not isinstance(given, dict) or set(given) - set(DEFAULTS):
        raise ValueError(f"qwixx: got {given!r}; expected options among {sorted(DEFAULTS)}")
    return QwixxCallback(**{**DEFAULTS, **given})


@hydra.main(version_base=None, config_path="pkg://benchmarl.conf", config_name="config")
def main(cfg: DictConfig) -> None:
    task_name = HydraConfig.get().runtime.choices.task
    callback = callback_from(cfg)
    print(f"\nAlgorithm: {HydraConfig.get().runtime.choices.algorithm}, Task: {task_name}")
    print(OmegaConf.to_yaml(cfg))
    load_experiment_from_hydra(cfg, task_name=task_name, callbacks=[callback]).run()  # it reads no "qwixx" key


register_tasks()

if __name__ == "__main__":
    if not any(arg.startswith("hydra.searchpath") for arg in sys.argv[1:]):
        sys.argv.insert(1, SEARCH_PATH)  # the Qwixx tables' YAML, as BenchMARL's own tasks have theirs
    main()  # pyright: ignore[reportCallIssue]  (Hydra's decorator passes the config)
