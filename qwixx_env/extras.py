"""The package's extras (what each adds), and the one message for a missing one.

Every command and module that needs an extra checks for it with `missing` and, when something
is not installed, says so with `needs`, so that a missing extra reads the same everywhere::

    qwixx arena --png needs the arena extra (matplotlib is not installed): pip install "qwixx_env[arena]"

For an extra with PyTorch in it the message adds PyTorch's CPU install line (plain pip resolves
torch to a CUDA build of several GB), and every message ends with the install guide's address,
which a wheel user can open (a wheel has no docs folder).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

DOCS = "https://qwixx-env.github.io/qwixx_env/"
"""The documentation site."""
INSTALL = f"{DOCS}#install"
"""The install section: what each extra adds, and the commands for a machine with or without a GPU."""
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
"""PyTorch's CPU build, from PyTorch's own index (plain pip resolves torch to the CUDA build)."""

EXTRAS: dict[str, dict[str, str]] = {
    "arena": {"rich": "rich", "matplotlib": "matplotlib"},
    "train": {
        "yaml": "PyYAML", "torch": "torch", "stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib",
        "tensorboard": "tensorboard", "rich": "rich", "matplotlib": "matplotlib",
    },
    "play": {"starlette": "starlette", "uvicorn": "uvicorn"},
    # stable_baselines3: the RLlib training command exports its policy through the SB3 path
    "rllib": {"ray": "ray", "torch": "torch", "yaml": "PyYAML", "stable_baselines3": "stable-baselines3"},
    "openspiel": {"pyspiel": "open_spiel"},
    "torchrl": {"torch": "torch", "torchrl": "torchrl", "tensordict": "tensordict"},
    "pufferlib": {"torch": "torch", "pufferlib": "pufferlib-core"},  # import pufferlib imports torch
    "tianshou": {"torch": "torch", "tianshou": "tianshou"},
    "agilerl": {"torch": "torch", "agilerl": "agilerl", "peft": "peft"},  # peft: AgileRL imports it, undeclared
    "benchmarl": {"torch": "torch", "torchrl": "torchrl", "tensordict": "tensordict", "benchmarl": "benchmarl"},
    "jax": {"jax": "jax", "jaxlib": "jaxlib", "equinox": "equinox", "optax": "optax", "yaml": "PyYAML"},
    "pgx": {"pgx": "pgx"},  # and the jax extra, which it installs
}
"""{extra: {module imported: package installed}}: the modules the package imports from each extra."""

WITH_TORCH = frozenset(extra for extra, modules in EXTRAS.items() if "torch" in modules)


def _check(extra: str) -> dict[str, str]:
    if extra not in EXTRAS:
        raise ValueError(f"extra: got {extra!r}; expected one of {sorted(EXTRAS)}")
    return EXTRAS[extra]


def missing(extra: str, modules: Sequence[str] | None = None) -> list[str]:
    """The packages of `extra` that are not installed here (only those of `modules`, import
    names, when given: a command that needs part of an extra checks that part)."""
    wanted = _check(extra)
    names = wanted if modules is None else modules
    unknown = [m for m in names if m not in wanted]
    if unknown:
        raise ValueError(f"modules: got {unknown}; expected modules of the {extra} extra: {sorted(wanted)}")
    return [wanted[m] for m in names if importlib.util.find_spec(m) is None]


def needs(what: str, extra: str, absent: Sequence[str] = ()) -> str:
    """The one message for a missing extra: `what` (``"qwixx arena"``) needs `extra`, which of its
    packages are `absent`, the install line (with PyTorch's CPU line first where the extra has
    torch) and the install guide's address."""
    _check(extra)
    packages = list(absent)
    which = f" ({', '.join(packages)} {'is' if len(packages) == 1 else 'are'} not installed)" if packages else ""
    line = f'pip install "qwixx_env[{extra}]"'
    if extra in WITH_TORCH:
        line = f"{line}, after PyTorch's CPU build where there is no GPU: {CPU_TORCH}"
    return f"{what} needs the {extra} extra{which}: {line}; see {INSTALL}"
