"""Compiled decision kernels over the core `State`: the scripted policies (random, greedy,
heuristic), the heuristic's evaluation, search playouts, the learned win-chance features,
afterstate ratings and the recorded games those are trained on. They read the rules from
`qwixx_env.core` and implement none; the bots in `qwixx_env.bots` wrap them in the
`act(observation)` interface."""

from collections.abc import Callable

import numpy as np

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A frozen batched policy: (observations (n, D) float32, masks (n, A) int8) -> actions (n,).
The vector env plays one inside the engine for an opponent seat; a checkpoint's `NumpyPolicy`
is one."""
