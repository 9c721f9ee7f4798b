"""The extras the package checks for, and the one message a missing extra gives."""

import re
import sys
from pathlib import Path
from types import SimpleNamespace

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


def hide(monkeypatch, *modules):
    """find_spec finds none of `modules`, as where they are not installed."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in modules else real(name, *a))


def test_qwixx_serve_without_the_play_extra_says_what_to_install(monkeypatch, capsys):
    from qwixx_env import cli

    hide(monkeypatch, "uvicorn")
    started = SimpleNamespace(serve=lambda **options: pytest.fail("the server started"))
    monkeypatch.setitem(sys.modules, "qwixx_env.play.server", started)
    assert cli.main(["serve"]) == 2
    assert capsys.readouterr().err == extras.needs("qwixx serve", "play", ["uvicorn"]) + "\n"


def test_an_sb3_zip_without_the_train_extra_says_what_to_install(monkeypatch, tmp_path):
    from qwixx_env import benchmark

    hide(monkeypatch, "sb3_contrib")
    path = tmp_path / "model.zip"
    path.write_bytes(b"PK")
    with pytest.raises(ValueError) as refused:
        benchmark.run(str(path), "classic-2p", workers=1, limit=1)
    assert str(refused.value) == extras.needs(f"agent {str(path)!r}: an SB3 .zip", "train", ["sb3-contrib"])


@pytest.mark.parametrize("command", ["arena", "bench", "play", "serve", "solve"])
def test_the_help_names_pages_of_the_docs_site_not_files_a_wheel_lacks(command, capsys):
    from qwixx_env import cli

    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines, and an address with them
    assert not re.search(r"docs/\w+\.md|Makefile", text)
    pages = re.findall(re.escape(extras.DOCS) + r"(\w+)/", text)
    assert all((Path(__file__).parent.parent / "docs" / f"{page}.md").is_file() for page in pages), pages
