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


def newest_release(changelog: str) -> tuple[str, str]:
    """The version and date of the changelog's newest release heading (``## [0.1.0] - 2026-12-02``)."""
    found = re.search(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", changelog, re.M)
    assert found, "CHANGELOG.md has no release heading"
    return found.group(1), found.group(2)


def test_the_citation_names_the_newest_release_and_its_date():
    changelog = (REPO / "CHANGELOG.md").read_text()
    version, date = newest_release(changelog)
    citation = (REPO / "CITATION.cff").read_text()
    assert re.search(r"^cff-version: 1\.2\.0$", citation, re.M)
    assert re.search(rf"^version: {re.escape(version)}$", citation, re.M)
    assert re.search(rf'^date-released: "{date}"$', citation, re.M)


def test_main_is_the_newest_release_or_a_development_version_after_it():
    """A wheel built between releases says so (0.2.0.dev0), and never passes for the release
    before it; the changelog then has an Unreleased section above the release."""
    from packaging.version import Version

    changelog = (REPO / "CHANGELOG.md").read_text()
    released, _ = newest_release(changelog)
    version = Version(qwixx_env.__version__)
    if version.is_devrelease:
        assert version > Version(released), f"{version} is not after the newest release {released}"
        assert changelog.index("## [Unreleased]") < changelog.index(f"## [{released}]")
        assert "[Unreleased]: " in changelog and f"compare/v{released}...HEAD" in changelog
    else:
        assert str(version) == released, f"{version} is a release, and the changelog's newest is {released}"


def test_the_licence_is_mit_and_its_text_ships():
    meta = metadata.metadata("qwixx_env")
    assert meta["License-Expression"] == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n\nCopyright (c) ")
    assert "License :: " not in " ".join(meta.get_all("Classifier") or [])  # the SPDX field says it
