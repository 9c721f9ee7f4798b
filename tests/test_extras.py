"""The extras the package checks for, and the one message a missing extra gives."""

import re
from pathlib import Path

import pytest
import tomllib

from qwixx_env import extras

DECLARED = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
    "optional-dependencies"
]


@pytest.mark.parametrize("extra", sorted(extras.EXTRAS))
def test_each_checked_extra_is_declared_with_every_package_it_checks(extra):
    declared = {re.split(r"[<>=!~ \[]", spec)[0].lower().replace("_", "-") for spec in DECLARED[extra]}
    checked = {package.lower().replace("_", "-") for package in extras.EXTRAS[extra].values()}
    assert checked <= declared, f"{extra}: {sorted(checked - declared)} checked but not declared"


def test_the_message_names_the_command_the_missing_packages_the_install_line_and_the_guide():
    message = extras.needs("qwixx arena --png", "arena", ["matplotlib"])
    assert message == (
        'qwixx arena --png needs the arena extra (matplotlib is not installed): pip install "qwixx_env[arena]"; '
        f"see {extras.INSTALL}"
    )


def test_an_extra_with_torch_gives_pytorchs_cpu_line_too():
    message = extras.needs("qwixx-train", "train", ["torch", "PyYAML"])
    assert "(torch, PyYAML are not installed)" in message and extras.CPU_TORCH in message


def test_missing_reads_the_installed_modules(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    assert extras.missing("play") == ["uvicorn"]
    assert extras.missing("play", ["starlette"]) == []


@pytest.mark.parametrize(("call", "bad"), [
    (lambda: extras.missing("gpu"), "'gpu'"),
    (lambda: extras.needs("x", "gpu"), "'gpu'"),
    (lambda: extras.missing("play", ["torch"]), "['torch']"),
])
def test_an_unknown_extra_or_module_is_named(call, bad):
    with pytest.raises(ValueError, match=re.escape(bad)):
        call()
