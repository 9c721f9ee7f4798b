"""Fill the kernel cache ahead of time: ``python -m qwixx_env.warm`` (``make`` runs it).

A fresh install has no compiled kernels, so the first game of each entry point compiles them
(see `qwixx_env.core.compile`). This plays a short game through each entry point a newcomer
meets first, which compiles and caches exactly the kernels, for exactly the argument types,
those entry points use: the AEC environment (`qwixx_v0`) and its Parallel view, the batched engine
(`BatchedQwixx`), the Gymnasium vector env with its scripted opponents (`QwixxVectorEnv`), the
heuristic bot and the coach's values (`qwixx_env.play.coach`). Kernels do not depend on the
player count (a value, not a type); the AEC and batched kernels come in two versions, with and
without the lucky-cross rules (an `Engine` of a variant without lucky numbers compiles its
kernel without them), so those two are warmed for each of the package's variants (classic and
Longo, `VARIANT_NAMES`). A warm cache makes this a no-op in all but the time to load it.
"""

from __future__ import annotations

import logging
import sys
import time
from functools import partial

import numpy as np

from qwixx_env import BatchedQwixx, QwixxVectorEnv, bots, qwixx_v0
from qwixx_env.core.compile import cache_location, first_compile_notice
from qwixx_env.core.variant import VARIANT_NAMES, get_variant
from qwixx_env.play import coach

logger = logging.getLogger("qwixx_env")


def _aec_game(bot_name: str | None = None, variant: str = "classic") -> None:
    env = qwixx_v0.env(num_players=2, variant=variant)
    bot = None if bot_name is None else bots.make(bot_name)
    env.reset(seed=0)
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
        else:
            assert obs is not None, "last() observes unless told not to"
            env.step(int(obs["action_mask"].argmax()) if bot is None else bot.act(obs))


def _batched_steps(variant: str = "classic") -> None:
    engine = BatchedQwixx(2, variant=variant)
    _, masks = engine.reset(seed=0)
    for _ in range(3):
        _, masks, _, _ = engine.step(masks.argmax(axis=1))


def _parallel_views() -> None:
    for variant in VARIANT_NAMES:  # its kernel, as the AEC env's, with and without lucky crosses
        qwixx_v0.parallel_env(num_players=2, variant=variant).reset(seed=0)


def _vector_steps() -> None:
    envs = QwixxVectorEnv(3, opponents={"random": 1.0, "greedy": 1.0, "heuristic": 1.0})
    obs, _ = envs.reset(seed=0)
    for _ in range(3):
        obs, *_ = envs.step(np.asarray(obs["action_mask"]).argmax(axis=1))


def _coach_values() -> None:
    # the heuristic's values (lucky numbers), then the afterstate network's (none)
    for variant in sorted(VARIANT_NAMES, key=lambda v: not get_variant(v).lucky_count):
        env = qwixx_v0.raw_env(num_players=2, variant=variant)
        env.reset(seed=0)
        coach.advise(env)


# What is warmed, in order: (name, function).
ENTRY_POINTS = (
    *((f"qwixx_v0 (AEC), {variant}", partial(_aec_game, variant=variant)) for variant in VARIANT_NAMES),
    ("heuristic bot", lambda: _aec_game("heuristic")),
    ("qwixx_v0.parallel_env", _parallel_views),
    *((f"BatchedQwixx, {variant}", partial(_batched_steps, variant)) for variant in VARIANT_NAMES),
    ("QwixxVectorEnv", _vector_steps),
    ("play coach", _coach_values),
)


def warm() -> None:
    """Compile (or load) the kernels of every entry point in `ENTRY_POINTS`."""
    for name, play in ENTRY_POINTS:
        start = time.perf_counter()
        play()
        logger.info("warm: %s ready (%.1f s)", name, time.perf_counter() - start)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    first_compile_notice.told = True  # this command says what it does itself
    print(f"qwixx_env: compiling or loading the kernels of the common entry points into {cache_location()}")
    start = time.perf_counter()
    warm()
    print(f"qwixx_env kernels are cached in {cache_location()} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
