"""PPO self-play training for qwixx_env (needs the ``train`` extra: torch, stable-baselines3,
sb3-contrib, tensorboard, PyYAML, rich, matplotlib). The repository's top-level ``training/``
folder installs as this subpackage.

- `qwixx_env.training.train`: the command (``python -m qwixx_env.training.train CONFIG`` /
  ``qwixx-train``); `qwixx_env.training.trainer`: the run itself, with `ppo` (MaskablePPO's
  options) and `progress` (its log lines and progress bar).
- `qwixx_env.training.config`: the YAML config, checked into frozen dataclasses
  (`config_yaml` reads the file, `config_schema` checks the data field by field).
- `qwixx_env.training.bc`: the behaviour-cloning warm start.
- `qwixx_env.training.pool`: the self-play opponent pool; `qwixx_env.training.evaluate`:
  arena evaluation during a run; `qwixx_env.training.checkpoint`: atomic checkpoints;
  `qwixx_env.training.curves`: learning-curve plots.
- `qwixx_env.training.export`: a MaskablePPO policy exported to a numpy checkpoint.
- `qwixx_env.training.rllib`: PPO self-play on Ray RLlib (the ``rllib`` extra;
  ``qwixx-train --engine rllib CONFIG``), exported to the same numpy checkpoint format.
- `qwixx_env.training.publish`: a finished run published as a pretrained bot (`install`:
  its files, `benchmark`: its arena tables, `model_card`: its card).
- `qwixx_env.training.demo`: ``make demo``, a short run from scratch and its arena table.
- `qwixx_env.training.value_leaf` and `qwixx_env.training.afterstate`: the win-chance
  networks of the `rollout` and `afterstate` bots.

The layers point one way: training imports the rest of `qwixx_env`, never the reverse.
`docs/training.md` is the guide.
"""

import importlib.util
import sys

# the train extra's modules (import name -> package to install)
TRAIN_EXTRA = {
    "yaml": "PyYAML", "torch": "torch", "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib",
    "tensorboard": "tensorboard", "rich": "rich", "matplotlib": "matplotlib",
}


# the rllib extra's modules that the RLlib engine imports (import name -> package to install)
RLLIB_EXTRA = {"ray": "ray", "torch": "torch", "yaml": "PyYAML"}


def missing_extra(extra: dict[str, str] = TRAIN_EXTRA) -> list[str]:
    """The packages of an extra (`TRAIN_EXTRA` by default) that are not installed here."""
    return [package for module, package in extra.items() if importlib.util.find_spec(module) is None]


def main(argv: list[str] | None = None) -> int:
    """``qwixx-train``: `qwixx_env.training.train.main`, once the train extra is known to be installed
    (else a one-line error saying what to install, and exit status 2). ``--engine rllib`` runs
    `qwixx_env.training.rllib.main` instead (the rllib extra); ``--engine sb3`` is the default."""
    argv = sys.argv[1:] if argv is None else list(argv)
    engine = "sb3"
    for i, arg in enumerate(argv):
        if arg == "--engine" and i + 1 < len(argv) or arg.startswith("--engine="):
            engine = argv[i + 1] if arg == "--engine" else arg.split("=", 1)[1]
            del argv[i : i + (2 if arg == "--engine" else 1)]
            break
    if engine not in ("sb3", "rllib"):
        print(f"error: --engine: got {engine!r}; expected 'sb3' (MaskablePPO, the default) or 'rllib'", file=sys.stderr)
        return 2
    if engine == "rllib":
        missing = missing_extra(RLLIB_EXTRA)
        if missing:
            print(f"error: qwixx-train --engine rllib needs the rllib extra, and {missing} are not installed: "
                  "pip install 'qwixx_env[rllib]'", file=sys.stderr)
            return 2
        # imported only now: it needs the rllib extra, whose presence is checked just above
        from qwixx_env.training.rllib import main as train_rllib

        return train_rllib(argv)
    missing = missing_extra()
    if missing:
        print(f"error: qwixx-train needs the train extra, and {missing} are not installed: "
              "pip install 'qwixx_env[train]' (from a checkout: pip install -e '.[train]'; on a machine "
              "without a GPU install torch's CPU build first, as the Makefile does)", file=sys.stderr)
        return 2
    # imported only now: it needs the train extra, whose presence is checked just above
    from qwixx_env.training.train import main as train

    return train(argv)
