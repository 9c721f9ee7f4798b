"""The first-compile notice: said once when kernels are compiled, never from a warm cache."""

from __future__ import annotations

import ast
import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from qwixx_env.core import compile as kernel_compile
from qwixx_env.core import rules
from qwixx_env.policies.scripted import policy_action

# Compiles one small package kernel (a cold cache) or loads it (a warm one).
SNIPPET = """
import numpy as np
from qwixx_env.core import rules
from qwixx_env.core.state import new_state
from qwixx_env.core.variant import get_variant
variant = get_variant("classic")
rules.scores(variant, new_state(2))
"""


def compile_event(fn):
    return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=fn)})


def test_the_notice_is_logged_once_for_package_kernels(caplog):
    notice = kernel_compile._FirstCompileNotice()
    with caplog.at_level(logging.WARNING, logger="qwixx_env"):
        notice.on_start(compile_event(len))  # not a package kernel
        assert caplog.records == []
        notice.on_start(compile_event(rules.reset_batch.py_func))
        notice.on_start(compile_event(rules.apply_batch.py_func))
    assert len(caplog.records) == 1
    record = caplog.records[0]
    assert record.name == "qwixx_env" and record.levelno == logging.WARNING
    assert "compiling" in record.getMessage() and kernel_compile.cache_location() in record.getMessage()


def test_the_notice_names_what_a_caller_is_preparing(caplog, monkeypatch):
    notice = kernel_compile._FirstCompileNotice()
    monkeypatch.setattr(kernel_compile, "first_compile_notice", notice)
    with caplog.at_level(logging.WARNING, logger="qwixx_env"), kernel_compile.preparing("the kernels of greedy"):
        notice.on_start(compile_event(rules.reset_batch.py_func))
    assert caplog.records[0].getMessage().startswith("qwixx_env is compiling the kernels of greedy for first use")
    assert notice.what == kernel_compile.KERNELS  # as before the block


def test_the_notice_names_numba_cache_dir_when_the_user_set_it(monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/somewhere/numba")
    assert "/somewhere/numba" in kernel_compile.cache_location()


# What `import qwixx_env` does, told by the child: the modules it loaded, whether it hashed
# the kernel sources (`kernel_cache_dir` computed), the folders it made (outside __pycache__).
IMPORT_ONLY = """
import sys
made = []
sys.addaudithook(
    lambda event, args: made.append(str(args[0]))
    if event == "os.mkdir" and "__pycache__" not in str(args[0]) else None
)
import gymnasium
import qwixx_env
from qwixx_env.core import compile
print("qwixx_env/Qwixx-v0" in gymnasium.registry)
print(compile.kernel_cache_dir.cache_info().currsize)
print(made)
print(sorted(m for m in sys.modules if m.startswith("qwixx_env.")))
"""


def test_import_writes_nothing_and_hashes_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["QWIXX_ENV_CACHE"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ONLY], env=env, capture_output=True, text=True, check=True
    )
    registered, hashed, made, modules = done.stdout.splitlines()
    assert registered == "True"  # the Gymnasium id is there all the same
    assert hashed == "0" and made == "[]"
    assert not (tmp_path / "cache").exists()
    # the environments, PettingZoo adapters and bots load when first used
    assert not {"qwixx_env.envs.qwixx_v0", "qwixx_env.envs.vector", "qwixx_env.bots"} & set(ast.literal_eval(modules))


def test_the_public_names_load_on_first_use():
    import qwixx_env
    from qwixx_env import BatchedQwixx, qwixx_v0
    from qwixx_env.envs import batched

    assert BatchedQwixx is batched.BatchedQwixx and qwixx_v0.__name__ == "qwixx_env.envs.qwixx_v0"
    assert qwixx_env.bots.load is not None  # as before, after a bare `import qwixx_env`
    assert set(qwixx_env.__all__) <= set(dir(qwixx_env))
    with pytest.raises(AttributeError, match="no attribute 'qwixx_vO'"):
        qwixx_env.qwixx_vO  # noqa: B018


def run_snippet(cache_dir) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["QWIXX_ENV_CACHE"] = str(cache_dir)
    done = subprocess.run(
        [sys.executable, "-c", SNIPPET], env=env, capture_output=True, text=True, check=True
    )
    return done.stderr


@pytest.mark.slow
def test_an_empty_cache_says_so_once_and_a_warm_one_says_nothing(tmp_path):
    cold = run_snippet(tmp_path)
    assert cold.count("compiling its numba kernels") == 1
    assert str(tmp_path) in cold
    warm = run_snippet(tmp_path)
    assert "compiling" not in warm


def is_compiled(fn: ast.FunctionDef) -> bool:
    words = ("kernel", "jit", "inlined", "internal", "leaf")
    return any(word in ast.unparse(d) for d in fn.decorator_list for word in words)


def calls_outside_kernels(path: Path, helpers: set[str]) -> list[str]:
    """Calls of package `helpers` in `path` that plain Python makes (not inside a compiled
    function). A name counts where the file defines it or imports it from qwixx_env, called
    bare or as an attribute of a module imported from qwixx_env."""
    tree = ast.parse(path.read_text())
    names, modules = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("qwixx_env"):
            for alias in node.names:
                (names if alias.name in helpers else modules).add(alias.asname or alias.name)
        elif isinstance(node, ast.FunctionDef) and node.name in helpers and is_compiled(node):
            names.add(node.name)
    found = []

    def visit(node: ast.AST, compiled: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = compiled
            if isinstance(child, ast.FunctionDef):
                inside = is_compiled(child)
            if isinstance(child, ast.Call) and not compiled:
                f = child.func
                bare = isinstance(f, ast.Name) and f.id in names
                dotted = (
                    isinstance(f, ast.Attribute) and f.attr in helpers
                    and isinstance(f.value, ast.Name) and f.value.id in modules
                )
                if bare or dotted:
                    found.append(f"{path}:{child.lineno}: {ast.unparse(child)}")
            visit(child, inside)

    visit(tree, False)
    return found


def test_no_python_code_calls_a_helper_without_a_python_entry_point():
    # Importing the kernel modules registers their helpers.
    import qwixx_env.bots  # noqa: F401
    import qwixx_env.envs.batched  # noqa: F401
    import qwixx_env.envs.vector  # noqa: F401
    import qwixx_env.integrations.openspiel_bots  # noqa: F401

    assert "apply_one" in kernel_compile.KERNEL_ONLY
    root = Path(__file__).resolve().parent.parent
    sources = [p for folder in ("qwixx_env", "training", "benchmarks") for p in (root / folder).rglob("*.py")]
    assert [hit for p in sources for hit in calls_outside_kernels(p, kernel_compile.KERNEL_ONLY)] == []


def test_a_helper_without_a_python_entry_point_refuses_a_python_call():
    from qwixx_env.core import get_variant, new_state

    with pytest.raises(TypeError, match=r"qwixx_env.core.rules.score is called from compiled kernels only"):
        rules.score(new_state(2), get_variant("classic").tables, 0, 0)


def test_a_classic_game_compiles_its_kernel_without_the_lucky_rules():
    from numba import types

    from qwixx_env import qwixx_v0
    from qwixx_env.core import get_variant
    from qwixx_env.core.engine import table_kernel

    assert rules.lucky_code_switch(get_variant("classic").tables) is None
    assert rules.lucky_code_switch(get_variant("longo").tables) is rules.WITH_LUCKY_CODE
    qwixx_v0.env(num_players=2)  # resolves (compiles or loads) its kernel
    assert types.none in {sig[-1] for sig in table_kernel.signatures}


def test_a_kernel_pickles_by_name_so_a_kernel_it_is_passed_to_loads_from_the_cache():
    """A kernel passed to another as an argument (`Engine.play_table`'s policy) is part of that
    kernel's signature, which numba reads back from the disk cache by unpickling it: it must
    come back as the same kernel, or the cache never hits and every process compiles again."""
    read_back = (
        "import pickle, sys\n"
        "from qwixx_env.core import rules\n"
        "from qwixx_env.policies.scripted import policy_action\n"
        "kernels = pickle.loads(sys.stdin.buffer.read())\n"
        "print(kernels[0] is policy_action, kernels[1] is rules.apply_batch)\n"
    )
    done = subprocess.run([sys.executable, "-c", read_back], input=pickle.dumps((policy_action, rules.apply_batch)),
                          capture_output=True, check=True)
    assert done.stdout.split() == [b"True", b"True"]


def test_a_kernel_already_compiled_resolves_while_another_thread_compiles():
    """Numba's `compile` takes its global compiler lock before it looks for a version it has:
    a new engine (which resolves its kernel with `compiled`) waited for whatever another thread
    was compiling, a minute on a cold cache (the play server's requests, behind its background
    preparation). A kernel this process has resolves without the lock; a new one still waits."""
    import threading

    from numba.core.compiler_lock import global_compiler_lock

    from qwixx_env import qwixx_v0

    qwixx_v0.raw_env(num_players=2).reset(seed=0)  # this process has its kernel now
    held, release = threading.Event(), threading.Event()

    def compiling():  # another thread compiling: it holds the lock until the test releases it
        with global_compiler_lock:
            held.set()
            release.wait(120)

    def new_engine(out):  # a new game's environment: its engine resolves its kernel
        out.append(qwixx_v0.raw_env(num_players=2))

    compiler = threading.Thread(target=compiling)
    compiler.start()
    assert held.wait(30)
    made = []
    try:
        worker = threading.Thread(target=new_engine, args=[made])
        worker.start()
        worker.join(60)  # without the lock's wait it takes milliseconds; with it, until release
        assert not worker.is_alive() and len(made) == 1
    finally:
        release.set()
        compiler.join()
