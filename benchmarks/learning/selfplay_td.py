"""The teacher-free self-play learner's reference curve (``qwixx-train --engine selfplay``).

    python benchmarks/learning/selfplay_td.py --table classic-2p --seeds 0 1 2

The shipped config of the table (``selfplay_classic_2p``, ``selfplay_classic_3p``: TD(lambda)
on afterstates against itself and its snapshots, from random weights) with rounds of `GAMES`
games instead of 4,000, so that the budget holds several rounds. The run goes one round at a
time (``--resume`` with one more round), and when its decisions pass an evaluation point the
run folder is evaluated as a bot (`common.Curve`); a point's decisions are the run's own count
then, at or just past the point. The trainer's own evaluation is cut to two deals against
`random`. Needs the ``train`` extra.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from qwixx_env.bots import make_bot  # noqa: E402

LEARNER = "selfplay-td"
GAMES = 250


def main() -> None:
    args = common.arguments(LEARNER, "the self-play TD(lambda) learner from random weights")
    import yaml

    from qwixx_env.training import selfplay
    from qwixx_env.training.config_yaml import shipped_dir

    table = common.table_options(args.table)
    base = yaml.safe_load((shipped_dir() / f"selfplay_classic_{table.num_players}p.yaml").read_text())
    curves = []
    for seed in args.seeds:
        curve = common.Curve(LEARNER, library="qwixx_env.training.selfplay", algorithm="TD(lambda), afterstates",
                             table=args.table, seed=seed, trained_against="itself and its snapshots", deals=args.deals)
        with tempfile.TemporaryDirectory(prefix="selfplay-td-") as folder:
            run, config = Path(folder) / "run", Path(folder) / "config.yaml"
            config.write_text(yaml.safe_dump({
                **base, "name": f"{LEARNER}-{args.table}-s{seed}", "seed": seed, "games": GAMES, "hours": 100.0,
                "threads": 1, "eval_every": 1_000_000, "eval_deals": 2, "eval_opponents": ["random"]}))
            targets = common.checkpoints(args.decisions, args.points)
            rounds, decisions = 0, 0
            while targets:
                if decisions >= targets[0]:
                    bot = make_bot(str(run if rounds else initial(config, Path(folder) / "initial")), table, seed=0)
                    curve.point(decisions, bot.act)
                    while targets and decisions >= targets[0]:
                        targets.pop(0)
                    continue
                rounds += 1
                selfplay.main([str(config), "--out", str(run), "--rounds", str(rounds),
                               *(["--resume"] if rounds > 1 else [])])
                decisions = json.loads((run / "curve.json").read_text())[-1]["decisions"]
        curves.append(curve)
    if not args.quick:
        path = common.write(curves, budget=args.decisions, versions=common.versions("torch", "numba"),
                            notes=f"the shipped selfplay_classic_{table.num_players}p config with {GAMES}-game rounds, "
                                  "one round per segment (--resume)")
        print(f"wrote {path}")


def initial(config: Path, path: Path) -> Path:
    """The untrained network of the run `config` describes, written as a run writes its final one."""
    from qwixx_env.core.variant import get_variant
    from qwixx_env.nets.win_chance import write_win_chance
    from qwixx_env.policies.value import plain_num_features
    from qwixx_env.training import selfplay

    cfg = selfplay.load_config(config)
    width = plain_num_features(cfg.num_players, get_variant(cfg.variant).num_rows)
    network = selfplay.kernel_network(selfplay.new_model(width, cfg.hidden, cfg.seed))
    return write_win_chance(path, network, variant=cfg.variant, num_players=cfg.num_players,
                            meta={"rounds": 0}, features="plain")


if __name__ == "__main__":
    main()
