"""House rules that no linter checks: imports inside functions are for optional dependencies only.

(The layers themselves are checked by import-linter: `make lint`, contracts in pyproject.toml.)
"""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(REPO / "qwixx_env").rglob("*.py"), *(REPO / "training").rglob("*.py")])

OPTIONAL = {"torch", "stable_baselines3", "sb3_contrib", "rich", "matplotlib", "yaml", "tensorboard"}
"""The optional dependencies (the train, demo and bench extras): the only imports a function may hold,
so that `import qwixx_env` needs none of them."""


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


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_a_function_imports_only_optional_dependencies(path):
    hidden = [
        f"line {line}: {module}"
        for line, module in function_imports(ast.parse(path.read_text(), str(path)))
        if module.split(".")[0] not in OPTIONAL
    ]
    assert not hidden, f"imports inside functions (move them to the top of the module): {hidden}"


def test_the_rule_sees_a_hidden_import():
    tree = ast.parse("def f():\n    from qwixx_env import bots\n    import torch\n")
    assert function_imports(tree) == [(2, "qwixx_env"), (3, "torch")]
