"""House rules that no linter checks: imports inside functions are for optional dependencies only.

(The layers themselves, and who may import the rule book, are checked by import-linter: `make lint`,
contracts in pyproject.toml; the tests here cover what it cannot see.)
"""

import ast
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(REPO / "qwixx_env").rglob("*.py"), *(REPO / "training").rglob("*.py")])

OPTIONAL = {
    "torch", "stable_baselines3", "sb3_contrib", "rich", "matplotlib", "yaml", "tensorboard", "starlette", "uvicorn",
}
"""The optional dependencies (the train, demo, bench and play extras): the only imports a function may hold,
so that `import qwixx_env` needs none of them."""

NEEDS_AN_EXTRA = {
    ("training/__init__.py", "qwixx_env.training.train"),
    ("training/__init__.py", "qwixx_env.training.rllib"),  # `qwixx-train --engine rllib`, after checking
    ("training/__init__.py", "qwixx_env.training.selfplay"),  # `qwixx-train --engine selfplay`, after checking
    ("training/__init__.py", "qwixx_env.training.jax_ppo"),  # `qwixx-train --engine jax`, after checking
    ("training/__init__.py", "qwixx_env.training.config"),  # `qwixx-train --show`, after checking PyYAML
    ("training/selfplay.py", "qwixx_env.training.selfplay_ray"),  # `runners:`, after checking the rllib extra
    ("qwixx_env/cli.py", "qwixx_env.play.server"),  # `qwixx serve`, after checking the play extra
}
"""Project modules that need an extra, imported by a function only once it has checked the extra is
installed (`qwixx-train`, `qwixx serve` say what to install instead of failing on the first missing import)."""


def function_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import inside a function or method."""
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    found += [(node.lineno, alias.name) for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_a_function_imports_only_optional_dependencies(path):
    hidden = [
        f"line {line}: {module}"
        for line, module in function_imports(ast.parse(path.read_text(), str(path)))
        if module.split(".")[0] not in OPTIONAL and (path.relative_to(REPO).as_posix(), module) not in NEEDS_AN_EXTRA
    ]
    assert not hidden, f"imports inside functions (move them to the top of the module): {hidden}"


def imported_modules(tree: ast.AST) -> set[str]:
    """Every module a file imports (absolute imports; the package has no relative ones)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", sorted((REPO / "qwixx_env").rglob("*.py")), ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_in_the_package_imports_the_training_layer(path):
    """qwixx_env.training is the top layer; it installs from the top-level training/ folder,
    where import-linter does not look, so this test stands in for its contract."""
    names = imported_modules(ast.parse(path.read_text(), str(path)))
    assert not {n for n in names if n == "training" or n.startswith(("training.", "qwixx_env.training"))}


RULE_BOOK = "qwixx_env.core.rules"
RULE_BOOK_READERS = {"core", "policies", "solver"}
"""The packages that may import the rule book; every other module plays through the `Engine`."""


def rule_book_contract() -> dict:
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["type"] == "forbidden" and c["forbidden_modules"] == [RULE_BOOK])


def test_the_rule_book_contract_names_every_other_module():
    """import-linter checks only the modules its contract names: a new module outside the
    rule book's readers must be named there too."""
    children = {p.stem for p in (REPO / "qwixx_env").iterdir() if (p / "__init__.py").exists() or
                (p.suffix == ".py" and p.stem != "__init__")}
    named = {m.removeprefix("qwixx_env.") for m in rule_book_contract()["source_modules"]}
    assert named == children - RULE_BOOK_READERS


@pytest.mark.parametrize("path", sorted((REPO / "training").rglob("*.py")), ids=lambda p: str(p.relative_to(REPO)))
def test_training_does_not_import_the_rule_book(path):
    """The training layer plays through the `Engine` and the compiled policies; import-linter
    does not look in training/, so this test stands in for the rule book contract there."""
    assert RULE_BOOK not in imported_modules(ast.parse(path.read_text(), str(path)))


def test_the_rule_sees_a_hidden_import():
    tree = ast.parse("def f():\n    from qwixx_env import bots\n    import torch\n")
    assert function_imports(tree) == [(2, "qwixx_env"), (3, "torch")]
    assert "qwixx_env.training" in imported_modules(ast.parse("from qwixx_env import training\n"))
