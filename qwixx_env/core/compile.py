"""`kernel`: how every compiled function of the package is made (and `compiled`: how a caller
resolves one for the argument types it always passes).

It is `numba.njit(cache=True, nogil=True)` with one difference: the machine code is cached in
a directory keyed by a hash of the source of the kernel packages (core, policies, envs, solver). Numba
checks a cached function only against its own file, but our kernels inline the rules from
other modules (rules.py into the policies, the engines, the bots), so an edit to rules.py
would otherwise leave stale code running elsewhere. The directory is
``$QWIXX_ENV_CACHE/numba/<hash>`` (default cache root as for the solver's tables:
``$XDG_CACHE_HOME/qwixx_env`` or ``~/.cache/qwixx_env``), unless ``NUMBA_CACHE_DIR`` is set,
which then wins as usual.

The first time a process compiles one of these kernels (nothing cached yet: a fresh install,
or an edit to the kernel sources) it says so once, as a WARNING of the ``qwixx_env`` logger,
the way matplotlib announces that it is building its font cache: without it a newcomer's
first game looks like a frozen prompt. A warm cache compiles nothing and says nothing. A
caller that knows what it prepares names it for the notice (`preparing`: the arena names its bots).
``python -m qwixx_env.warm`` (run by ``make``) fills the cache ahead of time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
from numba import njit
from numba.core import config as numba_config
from numba.core import event, sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

logger = logging.getLogger("qwixx_env")

_PACKAGE = Path(__file__).resolve().parent.parent


def cache_root() -> Path:
    """The package's cache directory: ``$QWIXX_ENV_CACHE``, else the user cache directory."""
    explicit = os.environ.get("QWIXX_ENV_CACHE")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qwixx_env"


# The packages whose code a kernel can inline or freeze in (functions, constants, tables).
_KERNEL_PACKAGES = ("core", "policies", "envs", "solver")


def _source_digest() -> str:
    """A hash of every module a kernel can depend on."""
    h = hashlib.sha256(numba.__version__.encode())
    for package in _KERNEL_PACKAGES:
        for path in sorted((_PACKAGE / package).rglob("*.py")):
            h.update(path.relative_to(_PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


# Where the kernels are cached is decided when the package is imported, from the environment
# alone (no file is read or written): a later change of QWIXX_ENV_CACHE in this process (the
# solver tests point it at a temporary folder for their tables) must not move compiled
# kernels, or every kernel would compile again. The folder itself, whose name hashes the
# sources, is made on the first compile (`kernel_cache_dir`).
_CACHE_ROOT: Path | None = None if os.environ.get("NUMBA_CACHE_DIR") else cache_root()


@functools.cache
def kernel_cache_dir() -> str | None:
    """The folder the package's kernels are cached in, made on the first call: None where
    ``NUMBA_CACHE_DIR`` was set when the package was imported (numba's own choice stands) or
    the package cache directory is not writable (numba falls back to its own locations)."""
    if _CACHE_ROOT is None:
        return None
    target = _CACHE_ROOT / "numba" / _source_digest()
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(target)


def cache_location() -> str:
    """Where the compiled kernels are cached, in words for a message."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return f"NUMBA_CACHE_DIR ({os.environ['NUMBA_CACHE_DIR']})"
    location = kernel_cache_dir()
    if location is None:
        return "numba's default locations (the package cache directory is not writable)"
    return location


COMPILING_MESSAGE = (
    "qwixx_env is compiling %s for first use; this takes a few seconds to a "
    "minute, once: they are cached in %s. `python -m qwixx_env.warm` compiles the common ones "
    "ahead of time."
)
KERNELS = "its numba kernels"
"""What `COMPILING_MESSAGE` says is compiling, unless a caller names it (`preparing`)."""


class _FirstCompileNotice(event.Listener):
    """Logs `COMPILING_MESSAGE` at the first compile of a package kernel in this process.

    Numba raises a "numba:compile" event only when it compiles (a cache hit raises none),
    so a warm cache stays silent.
    """

    def __init__(self) -> None:
        self.told = False
        self.what = KERNELS

    def on_start(self, ev: event.Event) -> None:
        if self.told or ev.data is None:  # numba's compile events carry their dispatcher in data
            return
        module = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
        if module.startswith("qwixx_env."):
            self.told = True
            logger.warning(COMPILING_MESSAGE, self.what, cache_location())

    def on_end(self, ev: event.Event) -> None:
        pass


first_compile_notice = _FirstCompileNotice()
event.register("numba:compile", first_compile_notice)


@contextlib.contextmanager
def preparing(what: str) -> Iterator[None]:
    """Within the block, the first-compile notice says what is being prepared: `what`, e.g.
    ``"the numba kernels of the table and of greedy, heuristic"`` (said only if the block
    compiles the process's first kernel, and once)."""
    previous, first_compile_notice.what = first_compile_notice.what, what
    try:
        yield
    finally:
        first_compile_notice.what = previous


class CachedKernel(CPUDispatcher):
    """A package kernel: numba's dispatcher, with its disk cache turned on at its first compile
    (or cache load) instead of when it is decorated.

    ``njit(cache=True)`` finds the function's cache folder, and makes it, when the function is
    decorated, that is when its module is imported; turned on here, importing the package
    reads no file and writes none, and the cache folder (`kernel_cache_dir`) is made by the
    first kernel that compiles. Every compile and cache load goes through `compile`, also when
    a kernel is typed inside another one.
    """

    _caching = False

    def __reduce__(self) -> Any:
        """Pickled by name where it is its module's global: a kernel passed to another as an
        argument (`core.engine.Engine.play_table`'s policy) is part of that kernel's cached
        signature, which numba reads back from the cache by unpickling it; by name, it is
        this same kernel (numba's own pickle would make a new one, and miss the cache)."""
        module, name = self.py_func.__module__, self.py_func.__qualname__
        if getattr(sys.modules.get(module), name, None) is not self:
            return super().__reduce__()
        return _kernel_named, (module, name)

    def compile(self, sig: Any) -> Any:
        """The entry point of `sig` when this process has it already, without numba's global
        compiler lock; else turn the disk cache on (once), then compile or load `sig` as numba
        does. Numba's own `compile` takes that lock before it looks: a caller that resolves a
        kernel it already has (`compiled`, as every new engine does) would wait for whatever
        another thread compiles meanwhile, for a minute on a cold cache (the play server's
        requests waited so on its background preparation)."""
        existing = self.overloads.get(tuple(sigutils.normalize_signature(sig)[0]))
        if existing is not None:
            return existing.entry_point
        if not self._caching:
            with global_compiler_lock:  # two threads' first calls turn it on once
                if not self._caching:
                    self._enable_package_cache()
        return super().compile(sig)

    def _enable_package_cache(self) -> None:
        location = kernel_cache_dir()
        # numba.core.config sets its names at import through globals(), which pyright cannot see
        previous = numba_config.CACHE_DIR  # pyright: ignore[reportAttributeAccessIssue]
        if location is not None:
            numba_config.CACHE_DIR = location  # pyright: ignore[reportAttributeAccessIssue]  # read once, in enable_caching
        try:
            self.enable_caching()
        finally:
            numba_config.CACHE_DIR = previous  # pyright: ignore[reportAttributeAccessIssue]
        self._caching = True


def _kernel_named(module: str, name: str) -> Any:
    """The kernel a module holds under `name` (how `CachedKernel` unpickles)."""
    return getattr(importlib.import_module(module), name)


def kernel(*, refcounts: bool = True, **options: Any) -> Callable:
    """Decorator: ``numba.njit(cache=True, nogil=True, **options)`` cached as described above.

    ``refcounts=False`` compiles without numba's runtime (``_nrt=False``): the kernel keeps no
    reference counts on the arrays it is given or slices, and may not allocate an array,
    itself or in anything it calls (numba then refuses to compile it). Each count is an atomic
    instruction, and a kernel that reads a `State` (a tuple of 12 arrays) through inlined
    rules makes dozens of them per game, enough to dominate a batched step (measured in
    docs/benchmarks.md, "Reference counts"). Use it, as `batch_kernel`, on the hot kernels that
    only read and write arrays their caller passes in.
    """
    flags = {"nogil": True, **({} if refcounts else {"_nrt": False}), **options}

    def wrap(fn: Callable) -> Callable:
        dispatcher = njit(**flags)(fn)  # the cache is turned on at the first compile
        dispatcher.__class__ = CachedKernel
        return dispatcher

    return wrap


def inline_kernel(*, python: bool = False, forceinline: bool = True, **options: Any) -> Callable:
    """Decorator for a helper that kernels call: compiled once per argument types without
    numba's runtime (as `batch_kernel`), then inlined by LLVM into every kernel that calls it
    (numba's ``forceinline``), so a call costs nothing at run time.

    Numba's own ``inline="always"`` (`leaf`) copies a helper's IR into each caller before
    typing, and the rules' helpers nest (a step inlines the white action, which inlines the
    lock and end checks, ...): that copying, repeated for every caller, was most of a new
    user's first-run compile time. LLVM inlining types and lowers each helper once.

    A helper has no Python entry point (its wrapper, which unboxes a `State` of 12 arrays, is
    a large part of a small function's compile time) unless ``python=True``, for the few that
    plain Python calls too. Called from Python, a helper without one raises `TypeError`
    (`KernelOnly`) instead of calling into code that is not there; `KERNEL_ONLY` lists them.

    ``forceinline=False`` (`internal`) leaves the inlining to LLVM's own judgement: for the
    larger helpers that several kernels call (the heuristic's look-ahead), which are then
    compiled without the wrappers no Python code calls.
    """
    wrappers = {} if python else {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}
    compile_helper = kernel(refcounts=False, forceinline=forceinline, **wrappers, **options)

    def wrap(fn: Callable) -> Callable:
        helper = compile_helper(fn)
        if not python:
            KERNEL_ONLY.add(fn.__name__)
            helper.__class__ = KernelOnly  # numba still sees a dispatcher; Python gets a clear error
        return helper

    return wrap


class KernelOnly(CachedKernel):
    """A compiled helper that only kernels may call (see `inline_kernel`): calling it from
    Python raises `TypeError`, where numba itself would call a missing entry point and crash."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"{self.py_func.__module__}.{self.py_func.__name__} is called from compiled kernels only "
            "(it has no Python entry point); call the batch functions of qwixx_env.core.rules instead"
        )


# Names of the helpers without a Python entry point (see `KernelOnly`).
KERNEL_ONLY: set[str] = set()

# The compile modes, one name each; a module decorates its functions with these names:
#   @kernel()        a kernel with numba's runtime: it may allocate arrays (the solver, tools)
#   @batch_kernel    a hot kernel over arrays its caller passes in, without reference counts
#   @inlined         a helper that kernels call, inlined by LLVM, no Python entry point
#   @internal        a larger helper that kernels call, no Python entry point, inlined where
#                    LLVM chooses
#   @leaf            a small leaf whose few lines numba copies into each caller before typing
#                    (numba's inline="always"): cheaper, for a leaf, than compiling it alone
batch_kernel = kernel(refcounts=False)
inlined = inline_kernel()
internal = inline_kernel(forceinline=False)
leaf = kernel(inline="always")


def compiled(kernel: Any, *args: Any) -> Callable[..., Any]:
    """The compiled specialisation of a numba `kernel` for these arguments' types.

    Numba's dispatcher works out the argument types on every call, which is slow for the
    tuple arguments used here (a `State`, `RuleTables`, a bot's scratch arrays); a caller that
    calls the same kernel with the same arrays every time (the engine's step, a bot's decision)
    resolves the specialisation once. The returned function does no type checks: call it only
    with arguments of exactly these types.
    """
    return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
