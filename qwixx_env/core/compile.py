"""`kernel`: how every compiled function of the package is made.

It is `numba.njit(cache=True, nogil=True)` with one difference: the machine code is cached in
a directory keyed by a hash of the source of the kernel packages (core, envs, solver). Numba
checks a cached function only against its own file, but our kernels inline the rules from
other modules (rules.py into the policies, the engines, the bots), so an edit to rules.py
would otherwise leave stale code running elsewhere. The directory is ``$QWIXX_ENV_CACHE/numba/<hash>`` (default cache root as
for the solver's tables: ``$XDG_CACHE_HOME/qwixx_env`` or ``~/.cache/qwixx_env``), unless
``NUMBA_CACHE_DIR`` is set, which then wins as usual.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba import njit

_PACKAGE = Path(__file__).resolve().parent.parent


def cache_root() -> Path:
    """The package's cache directory: ``$QWIXX_ENV_CACHE``, else the user cache directory."""
    explicit = os.environ.get("QWIXX_ENV_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qwixx_env"


# The packages whose code a kernel can inline or freeze in (functions, constants, tables).
_KERNEL_PACKAGES = ("core", "envs", "solver")


def _source_digest() -> str:
    """A hash of every module a kernel can depend on."""
    h = hashlib.sha256(numba.__version__.encode())
    for package in _KERNEL_PACKAGES:
        for path in sorted((_PACKAGE / package).rglob("*.py")):
            h.update(path.relative_to(_PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _kernel_cache_dir() -> str | None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None  # the user's choice stands
    target = cache_root() / "numba" / _source_digest()
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None  # not writable: numba falls back to its own locations
    return str(target)


_CACHE_DIR = _kernel_cache_dir()


def kernel(*, refcounts: bool = True, **options: Any) -> Callable:
    """Decorator: ``numba.njit(cache=True, nogil=True, **options)`` cached as described above.

    ``refcounts=False`` compiles without numba's runtime (``_nrt=False``): the kernel keeps no
    reference counts on the arrays it is given or slices, and may not allocate an array,
    itself or in anything it calls (numba then refuses to compile it). Each count is an atomic
    instruction, and a kernel that reads a `State` (a tuple of 12 arrays) through inlined
    rules makes dozens of them per game, enough to dominate a batched step (measured in
    docs/benchmarks.md, "Reference counts"). Use it on the hot kernels that only read and
    write arrays their caller passes in.
    """

    def wrap(fn: Callable) -> Callable:
        previous = numba.config.CACHE_DIR
        if _CACHE_DIR is not None:
            numba.config.CACHE_DIR = _CACHE_DIR  # read once, when caching is enabled below
        flags = {"nogil": True, **({} if refcounts else {"_nrt": False}), **options}
        try:
            return njit(cache=True, **flags)(fn)
        finally:
            numba.config.CACHE_DIR = previous

    return wrap
