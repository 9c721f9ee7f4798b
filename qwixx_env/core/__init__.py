"""The rules core: variants as data, the game state as arrays, the rules as compiled functions,
the observation layout, and `Engine`, the one public face of a table. Knows nothing of
PettingZoo or Gymnasium."""

from qwixx_env.core import rules
from qwixx_env.core.engine import Engine
from qwixx_env.core.observation import ObservationLayout, ObservationView, layout_for, state_from_observation
from qwixx_env.core.options import TableOptions
from qwixx_env.core.snapshot import snapshot, state_from_snapshot
from qwixx_env.core.state import COLOR, LUCKY, OVER, PHASES, WHITE, State, new_state, seed_to_rng
from qwixx_env.core.variant import (
    CLASSIC,
    COLORS,
    LONGO,
    Variant,
    decode_action,
    encode_action,
    get_variant,
    register_variant,
    variant_names,
)

__all__ = [
    "CLASSIC", "COLOR", "COLORS", "LONGO", "LUCKY", "OVER", "PHASES", "WHITE",
    "Engine", "ObservationLayout", "ObservationView", "State", "TableOptions", "Variant",
    "decode_action", "encode_action", "get_variant", "layout_for", "new_state", "register_variant", "rules",
    "seed_to_rng", "snapshot", "state_from_observation", "state_from_snapshot", "variant_names",
]
