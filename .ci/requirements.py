#!/usr/bin/env python3
"""Requirement lines read from pyproject.toml, one a line, for the CI's throwaway venvs.

    .ci/requirements.py lowest                 # each core dependency at its lower bound: numpy==2.0 ...
    .ci/requirements.py lowest train rllib     # and each package of those extras: torch==2.13 ...
    .ci/requirements.py group test pytest hypothesis   # those entries of a dependency group, as written

Read from pyproject.toml so that what `make test-lowest` and `make test-pythons` install cannot
drift from what is declared. A package in two lists (torch in train and rllib) is pinned once;
two lists that give it different lower bounds are an error, since one venv cannot test both.
Runs on the Python 3.10 standard library (no tomllib there, so the lists are read with a small
parser of the TOML arrays this file uses).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def array(text: str, key: str, section: str) -> list[str]:
    """The strings of the TOML array `key = [...]` in `[section]`."""
    body = re.search(rf"^\[{re.escape(section)}\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    if body is None:
        raise SystemExit(f"requirements.py: no [{section}] in {PYPROJECT}")
    # up to the first ] outside a string and a comment: "ray[tune]" holds one
    found = re.search(rf'^{re.escape(key)} = \[((?:"[^"]*"|#[^\n]*|[^]"#])*)\]', body.group(1), re.M)
    if found is None:
        raise SystemExit(f"requirements.py: no {key} in [{section}] of {PYPROJECT}")
    lines = [line.split("#", 1)[0] for line in found.group(1).splitlines()]  # comments out
    return re.findall(r'"([^"]+)"', "\n".join(lines))


NAME = re.compile(r"[A-Za-z0-9_.\-]+")  # a requirement's project name, at its start


def name_of(requirement: str) -> str:
    """The project name a requirement starts with (``numpy`` of ``numpy>=2.0,<3``)."""
    found = NAME.match(requirement)
    if found is None:
        raise SystemExit(f"requirements.py: {requirement!r} does not start with a project name")
    return found.group(0)


def lowest(requirement: str) -> str:
    """``name[extras]>=low,<high`` as ``name[extras]==low``, an environment marker kept
    (``tomli==2.0.1; python_version < '3.11'``); a requirement without a lower bound is an error
    (every dependency test-lowest installs declares one, and it is what it tests)."""
    name = name_of(requirement)
    extras = re.match(r"\[[^\]]*\]", requirement[len(name):])
    low = re.search(r">=\s*([^,;\s]+)", requirement[len(name):])
    if low is None:
        raise SystemExit(f"requirements.py: {requirement!r} has no lower bound (>=); declare the lowest tested version")
    marker = requirement.partition(";")[2].strip()
    return f"{name}{extras.group(0) if extras else ''}=={low.group(1)}" + (f"; {marker}" if marker else "")


def normalized(name: str) -> str:
    """A project name as pip compares it (PEP 503): ``PyYAML`` and ``pyyaml``, ``dm_tree`` and ``dm-tree``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def lowest_pins(text: str, extras: list[str]) -> list[str]:
    """The core dependencies and those of `extras`, each at its lower bound, each package once."""
    requirements = array(text, "dependencies", "project")
    for extra in extras:
        requirements += array(text, extra, "project.optional-dependencies")
    pins: dict[str, str] = {}
    for requirement in requirements:
        pin = lowest(requirement)
        key = normalized(name_of(pin))
        if pins.setdefault(key, pin) != pin:
            raise SystemExit(f"requirements.py: {pins[key]!r} and {pin!r}: one package, two lower bounds; "
                             "declare the same one in every list")
    return list(pins.values())


def main(argv: list[str]) -> None:
    text = PYPROJECT.read_text(encoding="utf-8")
    if argv[:1] == ["lowest"]:
        lines = lowest_pins(text, argv[1:])
    elif argv[:1] == ["group"] and len(argv) >= 2:
        entries = array(text, argv[1], "dependency-groups")
        wanted = set(argv[2:])
        lines = [e for e in entries if not wanted or name_of(e) in wanted]
        missing = wanted - {name_of(e) for e in lines}
        if missing:
            raise SystemExit(f"requirements.py: {sorted(missing)} not in dependency group {argv[1]!r}")
    else:
        raise SystemExit("usage: .ci/requirements.py lowest [EXTRA ...] | group NAME [PACKAGE ...]")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
