"""The bot registry: every bot is made by name through `make`; `register` adds one.

Each bot module registers its bot when `qwixx_env.bots` imports it; a user's bot is one
`register` call. The table options a bot is made for (`variant`, `num_players`, `lucky`,
`seed`) are checked here, once, for every bot.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from qwixx_env.core.checks import check_choice, check_seed
from qwixx_env.core.observation import ObservationView, state_from_observation
from qwixx_env.core.options import check_num_players, check_variant
from qwixx_env.core.variant import LUCKY_RULES, Variant

NO_LEGAL_ACTION = "observation: the action mask offers no legal action (not this seat's turn?)"


class Bot(Protocol):
    """The one policy interface: act from an observation dict, return a legal action."""

    name: str

    def act(self, observation: dict[str, Any]) -> int: ...


_REGISTRY: dict[str, Callable[..., Bot]] = {}


def decision_state(
    observation: dict[str, Any], variant: Variant, num_players: int, out: Any = None
) -> tuple[Any, np.ndarray]:
    """What a compiled bot acts on: (the engine state rebuilt from `observation`, the observer
    as seat 0, into `out` if given; the action mask as contiguous int8). A `ValueError` when
    the mask offers no legal action."""
    view = ObservationView(observation, variant, num_players)
    mask = np.ascontiguousarray(observation["action_mask"], np.int8)
    if not mask.any():
        raise ValueError(NO_LEGAL_ACTION)
    return state_from_observation(view, out=out), mask


def register(name: str, factory: Callable[..., Bot]) -> None:
    """Add a bot factory ``factory(*, variant, num_players, seed, **params) -> Bot``. `make`
    passes `variant` and `num_players` only when its caller gives them, so the factory's own
    defaults apply otherwise (the scripted bots: classic with 2 players; a checkpoint: its game)."""
    if name in _REGISTRY:
        raise ValueError(f"bot name: {name!r} is already registered")
    _REGISTRY[name] = factory


def takes(bot: str | Callable[..., Bot], option: str) -> bool:
    """Whether a bot (a registered name, or a factory) takes the keyword `option` by name, e.g.
    ``takes("heuristic", "lucky")``: the scripted bots that model Longo's lucky rule take it."""
    if isinstance(bot, str):
        if bot not in _REGISTRY:
            raise ValueError(f"bot name: got {bot!r}; expected one of {available()}")
        bot = _REGISTRY[bot]
    try:
        parameters = inspect.signature(bot).parameters
    except (TypeError, ValueError):  # a callable without a signature: it takes nothing by name
        return False
    return option in parameters and parameters[option].kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def available() -> list[str]:
    """The names `make` accepts, sorted."""
    return sorted(_REGISTRY)


def make(
    name: str,
    *,
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
    seed: int | None = None,
    **params: Any,
) -> Bot:
    """A bot by name for a variant and player count.

    `variant` and `num_players` default to the bot's own defaults: ``"classic"`` and 2 for the
    scripted bots, what its checkpoint plays for a pretrained bot (``make("ppo-classic-1p")``
    is a solo bot). `lucky`, Longo's lucky rule, goes to the bots that model it (see `build`).
    Raises `ValueError` naming the bad value for an unknown bot, variant, player count or
    lucky rule, or a parameter the bot does not take.
    """
    if name not in _REGISTRY:
        raise ValueError(f"bot name: got {name!r}; expected one of {available()}")
    factory = _REGISTRY[name]
    if variant is not None:
        check_variant(variant)
    if num_players is not None:
        check_num_players(num_players)
    if lucky is not None:
        check_choice("lucky", lucky, LUCKY_RULES)
    signature = inspect.signature(factory).parameters.values()
    accepted = [
        p.name
        for p in signature
        if p.kind == p.KEYWORD_ONLY and p.name not in ("variant", "num_players", "seed", "lucky")
    ]
    unknown = sorted(set(params) - set(accepted))
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in signature):
        raise ValueError(f"bot {name!r}: got parameter(s) {unknown}; it accepts {accepted or 'none'}")
    return build(factory, variant=variant, num_players=num_players, lucky=lucky, seed=seed, **params)


def build(
    factory: Callable[..., Bot],
    *,
    variant: str | None = None,
    num_players: int | None = None,
    lucky: str | None = None,
    seed: int | None = None,
    **params: Any,
) -> Bot:
    """Call a bot factory with the table options: `variant` and `num_players` when given (else
    the factory's defaults apply), and `lucky` when given and the factory takes it (the bots
    that model Longo's lucky rule, which the observation does not show)."""
    check_seed(seed)
    table = {k: v for k, v in (("variant", variant), ("num_players", num_players)) if v is not None}
    if lucky is not None and takes(factory, "lucky"):
        table["lucky"] = lucky
    return factory(seed=seed, **table, **params)
