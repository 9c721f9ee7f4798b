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
- `qwixx_env.training.jax_ppo`: PPO self-play on the JAX game (``qwixx-train --engine jax``, the
  ``jax`` extra), exported to the same checkpoint format.
- `qwixx_env.training.selfplay`: teacher-free self-play (``qwixx-train --engine selfplay``),
  the network of the `selfplay` bots.

The layers point one way: training imports the rest of `qwixx_env`, never the reverse.
`docs/training.md` is the guide.
"""

import argparse
import importlib
import sys
from importlib import resources

from qwixx_env import extras

DOCS = f"{extras.DOCS}training/"
"""The training guide, online (a wheel has no docs folder)."""


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options every training command takes (PPO's and RLlib's): ``--out`` (the run folder,
    `qwixx_env.training.config.run_folder`) and ``--resume``."""
    parser.add_argument("--out", help="run folder (default runs/<name>)")
    parser.add_argument("--resume", action="store_true", help="continue from the run folder's newest checkpoint")


def command_parser() -> argparse.ArgumentParser:
    """``qwixx-train``'s command line (PPO on Stable-Baselines3; ``--engine rllib`` hands the rest
    to RLlib's, `qwixx_env.training.rllib`). Building it needs no extra, so ``--help`` always works."""
    parser = argparse.ArgumentParser(
        prog="qwixx-train",
        description="Train a bot by PPO self-play from a YAML config.",
        epilog=f"The training guide: {DOCS}. Without a GPU, install PyTorch's CPU build before the train "
        f"extra: {extras.CPU_TORCH}",
    )
    parser.add_argument("config", nargs="?",
                        help="YAML config: a file's path, or a shipped config's name (see --list), e.g. classic_2p")
    add_run_options(parser)
    parser.add_argument("--steps", type=int, help="total learner steps (overrides total_steps)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (log lines only)")
    parser.add_argument("--engine", choices=("sb3", "rllib", "selfplay", "jax"), default="sb3",
                        help="sb3: MaskablePPO (the train extra; the default); rllib: Ray RLlib (the rllib extra); "
                        "selfplay: teacher-free TD(lambda) self-play (qwixx_env.training.selfplay); "
                        "jax: PPO self-play on the JAX game (the jax extra; qwixx_env.training.jax_ppo)")
    parser.add_argument("--list", action="store_true", help="list the shipped configs, one line each, and exit")
    parser.add_argument("--show", metavar="NAME",
                        help="print a config whole and exit: its extends: resolved, every default filled in, "
                        "ready to edit and train (qwixx-train --show classic_2p > mine.yaml; qwixx-train mine.yaml)")
    return parser


def shipped_summaries() -> dict[str, str]:
    """{name: the first sentence of its leading comment} of every shipped config, by name."""
    folder = resources.files("qwixx_env.configs")
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            comment = []
            for line in entry.read_text(encoding="utf-8").splitlines():
                if not line.startswith("#"):
                    break
                comment.append(line.lstrip("#").strip())
            text = " ".join(comment)
            end = text.find(". ")
            out[entry.name[: -len(".yaml")]] = text if end < 0 else text[: end + 1]
    return out


def _show(name: str) -> int:
    absent = extras.missing("train", ["yaml"])
    if absent:
        print(f"error: {extras.needs('qwixx-train --show', 'train', absent)}", file=sys.stderr)
        return 2
    import yaml  # the train extra's, checked just above

    from qwixx_env.training.config import load_config

    try:
        cfg = load_config(name)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"# qwixx-train --show {name}: the whole config, extends: resolved and every default filled in.\n"
          f"# Edit it and train it with qwixx-train FILE. Every key: {DOCS}")
    print(yaml.safe_dump(cfg.to_dict(), sort_keys=False), end="")
    return 0


ENGINES: dict[str, tuple[str, list[str] | None, str]] = {
    "selfplay": ("train", ["torch", "yaml"], "qwixx_env.training.selfplay"),
    "jax": ("jax", None, "qwixx_env.training.jax_ppo"),
    "rllib": ("rllib", None, "qwixx_env.training.rllib"),
}
"""The engines other than SB3's: each one's extra, the modules of it that it needs (None: all)
and the module whose ``main`` takes the rest of the command line."""


def main(argv: list[str] | None = None) -> int:
    """``qwixx-train``: `qwixx_env.training.train.main`, once the train extra is known to be installed
    (else a one-line error saying what to install, and exit status 2). ``--engine rllib`` runs
    `qwixx_env.training.rllib.main` instead (the rllib extra); ``--engine sb3`` is the default.
    ``--help``, ``--list`` and ``--show`` need no extra (``--show``: PyYAML only)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    engine = "sb3"
    for i, arg in enumerate(argv):
        if arg == "--engine" and i + 1 < len(argv) or arg.startswith("--engine="):
            engine = argv[i + 1] if arg == "--engine" else arg.split("=", 1)[1]
            del argv[i : i + (2 if arg == "--engine" else 1)]
            break
    if engine not in ("sb3", "rllib", "selfplay", "jax"):
        print(f"error: --engine: got {engine!r}; expected 'sb3' (MaskablePPO, the default), 'rllib', 'selfplay' "
              "or 'jax'", file=sys.stderr)
        return 2
    if engine == "sb3" and any(a in ("-h", "--help", "--list") or a == "--show" or a.startswith("--show=")
                               for a in argv):
        args = command_parser().parse_args(argv)  # --help prints and exits here
        if args.list:
            for name, line in shipped_summaries().items():
                print(f"{name:<24} {line}")
            return 0
        return _show(args.show)
    if engine in ENGINES:
        extra, modules, module = ENGINES[engine]
        absent = extras.missing(extra, modules)
        if absent:
            print(f"error: {extras.needs(f'qwixx-train --engine {engine}', extra, absent)}", file=sys.stderr)
            return 2
        # imported only now: it needs its extra, whose presence is checked just above
        return importlib.import_module(module).main(argv)
    absent = extras.missing("train")
    if absent:
        print(f"error: {extras.needs('qwixx-train', 'train', absent)}; the guide: {DOCS}", file=sys.stderr)
        return 2
    # imported only now: it needs the train extra, whose presence is checked just above
    from qwixx_env.training.train import main as train

    return train(argv)
