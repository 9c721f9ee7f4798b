"""qwixx_env: the dice games Qwixx and Qwixx Longo as reinforcement-learning environments.

>>> from qwixx_env import qwixx_v0
>>> env = qwixx_v0.env(num_players=2, variant="classic")
"""

from qwixx_env.core import (
    CLASSIC,
    COLORS,
    LONGO,
    ObservationLayout,
    ObservationView,
    Variant,
    decode_action,
    encode_action,
    get_variant,
)
from qwixx_env.envs import BatchedQwixx, QwixxGymEnv, QwixxVectorEnv, qwixx_v0, replay

__version__ = "0.1.0"

__all__ = [
    "BatchedQwixx", "CLASSIC", "COLORS", "QwixxGymEnv", "QwixxVectorEnv", "LONGO", "ObservationLayout",
    "ObservationView", "Variant",
    "decode_action", "encode_action", "get_variant", "qwixx_v0", "replay", "__version__",
]
