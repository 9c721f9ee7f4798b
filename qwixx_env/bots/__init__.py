"""Bots: policies that act from what any agent sees, made by one factory.

Every bot is an object with ``act(observation) -> int`` that takes the PettingZoo observation
dict (``"observation"`` + ``"action_mask"``) of whichever seat it plays and returns a legal
action. It reads the vector through `qwixx_env.ObservationView` and never touches engine
state, so a bot sees exactly what a learned policy sees. `make_bot(spec, table, seed)` makes
any bot (a spec's text such as ``"greedy:max_skip=1"``, a checkpoint's path, a `BotSpec`) for
a table (`TableOptions`); `make` is the same with the table's options as keywords.

>>> from qwixx_env import bots
>>> bot = bots.make_bot("rollout:threads=1", TableOptions(num_players=3), seed=0)
>>> bot = bots.make("random", variant="classic", num_players=2, seed=0)
>>> bots.available()
>>> bot = bots.load("ppo-classic-2p")   # a pretrained bot (`qwixx_env.bots.pretrained`)
"""

# Importing a bot module registers its bot (see `registry`).
from qwixx_env.bots import afterstate, greedy, heuristic, pretrained, random_bot, rollout, selfplay, solo_optimal  # noqa: F401
from qwixx_env.bots.pretrained import load
from qwixx_env.bots.registry import NO_LEGAL_ACTION, Bot, available, decision_state, register
from qwixx_env.bots.specs import BotSpec, make, make_bot

__all__ = ["NO_LEGAL_ACTION", "Bot", "BotSpec", "available", "decision_state", "load", "make", "make_bot", "register"]
