"""The release's facts written once: the version (pyproject.toml, read back through the installed
metadata), the licence, the changelog and the citation file agree; `qwixx --version` says it."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

import qwixx_env
from qwixx_env import cli

REPO = Path(__file__).resolve().parent.parent


def test_the_version_is_the_installed_metadata_and_qwixx_says_it(capsys):
    version = metadata.version("qwixx_env")
    assert qwixx_env.__version__ == version
    assert re.search(rf'^version = "{re.escape(version)}"', (REPO / "pyproject.toml").read_text(), re.M)
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"qwixx {version}\n"


def test_the_changelog_and_the_citation_name_the_version():
    version = qwixx_env.__version__
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M)
    citation = (REPO / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", citation, re.M)
    assert re.search(rf"^version: {re.escape(version)}$", citation, re.M)


def test_the_licence_is_mit_and_its_text_ships():
    meta = metadata.metadata("qwixx_env")
    assert meta["License-Expression"] == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n\nCopyright (c) ")
    assert "License :: " not in " ".join(meta.get_all("Classifier") or [])  # the SPDX field says it
