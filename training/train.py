"""Train a bot by PPO self-play from a YAML config (the ``qwixx-train`` command).

``python -m qwixx_env.training.train CONFIG [--out DIR] [--resume] [--steps N] [--no-progress]``

It reads the YAML config (`qwixx_env.training.config`), applies ``--steps``, and runs a
`Trainer` (`qwixx_env.training.trainer`) in the run folder ``--out`` (default ``runs/<name>``);
``--resume`` continues from the folder's latest checkpoint. A bad config or folder is a
one-line error and exit status 2; at the end a JSON summary is printed.
"""

from __future__ import annotations

import argparse
import json
import sys

from qwixx_env.training import command_parser
from qwixx_env.training.config import TrainConfig, config_from_dict, load_config, run_folder
from qwixx_env.training.trainer import Trainer


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = command_parser()  # qwixx-train's, which --help shows without the extra
    args = parser.parse_args(argv)
    if args.config is None:
        parser.error("the config is required: a YAML file's path or a shipped config's name (qwixx-train --list)")
    return args


def config_with_overrides(path: str, steps: int | None) -> TrainConfig:
    """The config file at `path`, with `total_steps` replaced by `steps` if given."""
    cfg = load_config(path)
    if steps is not None:
        cfg = config_from_dict({**cfg.to_dict(), "total_steps": steps})  # checked like the file
    return cfg


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cfg = config_with_overrides(args.config, args.steps)
        out = run_folder(args.out, cfg.name)
        summary = Trainer(cfg, out, resume=args.resume, progress=not args.no_progress).run()
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps({k: summary[k] for k in ("run", "steps", "wall_time", "ppo_steps_per_second", "final")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
