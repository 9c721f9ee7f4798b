"""Bots: policies that act from what any agent sees, made by name.

Every bot is an object with ``act(observation) -> int`` that takes the PettingZoo observation
dict (``"observation"`` + ``"action_mask"``) of whichever seat it plays and returns a legal
action. It reads the vector through `qwixx_env.ObservationView` and never touches engine
state, so a bot sees exactly what a learned policy sees.

>>> from qwixx_env import bots
>>> bot = bots.make("random", variant="classic", num_players=2, seed=0)
>>> bots.available()
>>> bot = bots.load("ppo-classic-2p")   # a pretrained bot (`qwixx_env.bots.pretrained`)
"""

# Importing a bot module registers its bot (see `registry`).
from qwixx_env.bots import afterstate, greedy, heuristic, pretrained, random_bot, rollout, solo_optimal  # noqa: F401
from qwixx_env.bots.pretrained import load
from qwixx_env.bots.registry import (
    NO_LEGAL_ACTION,
    Bot,
    available,
    build,
    decision_state,
    make,
    register,
    takes,
)

__all__ = ["NO_LEGAL_ACTION", "Bot", "available", "build", "decision_state", "load", "make", "register", "takes"]
