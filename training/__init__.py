"""PPO self-play training for qwixx_env (needs the ``train`` extra: torch, stable-baselines3,
sb3-contrib, tensorboard).

- `training.config`: the YAML config, checked into frozen dataclasses.
- `training.train`: the run (``python -m training.train CONFIG`` / ``qwixx-train``).
- `training.bc`: the behaviour-cloning warm start.
- `training.pool`: the self-play opponent pool; `training.evaluate`: arena evaluation;
  `training.checkpoint`: atomic checkpoints; `training.curves`: learning-curve plots.
- `training.demo`: ``make demo``, a short run from scratch and its arena table.

The layers point one way: training imports `qwixx_env`, never the reverse. `docs/training.md`
is the guide.
"""
