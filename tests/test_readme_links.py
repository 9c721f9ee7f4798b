"""README.md is also the package page, where a relative link or image breaks: every link in it
is absolute, and every link into this repository names a path that exists in its tree."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
REPOSITORY = ("https://github.com/qwixx-env/qwixx_env/blob/main/", "https://github.com/qwixx-env/qwixx_env/tree/main/",
              "https://raw.githubusercontent.com/qwixx-env/qwixx_env/main/")
SITE = "https://qwixx-env.github.io/qwixx_env/"

# Markdown links and images `[text](target)`, autolinks `<https://...>`, and HTML src/href.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)|<(https?://[^>\s]+)>|(?:src|href)=\"([^\"]+)\"")


def links(text: str) -> list[str]:
    """Every link target of `text` outside fenced code blocks, in order."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return [next(group for group in match.groups() if group) for match in LINK.finditer(prose)]


def tracked_files() -> set[str]:
    """The paths git tracks, with every folder above them."""
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return set(listed) | {str(parent) for path in listed for parent in Path(path).parents if str(parent) != "."}


def repository_paths(url: str) -> list[str]:
    """The repository paths a link may name (anchor and query dropped; a site page is its
    Markdown or notebook source under docs/, the site's home page is README.md); [] for any
    other site."""
    for prefix in REPOSITORY:
        if url.startswith(prefix):
            return [url[len(prefix):].split("#")[0].split("?")[0].rstrip("/")]
    if url.startswith(SITE):
        page = url[len(SITE):].split("#")[0].strip("/")
        return [f"docs/{page}{suffix}" for suffix in (".md", ".ipynb", "/index.md")] if page else ["README.md"]
    return []


def test_the_link_finder_sees_links_images_and_autolinks_but_not_code():
    text = "[a](docs/x.md) ![b](https://e.org/i.png) <https://e.org/c>\n```bash\n[d](e.md)\n```\n<img src=\"f.png\">"
    assert links(text) == ["docs/x.md", "https://e.org/i.png", "https://e.org/c", "f.png"]


def test_readme_has_no_relative_link():
    relative = [target for target in links(README.read_text(encoding="utf-8")) if "://" not in target]
    assert links(README.read_text(encoding="utf-8")), "no link found: the pattern no longer matches the README"
    assert relative == [], f"relative links break on the package page; make them absolute: {relative}"


def test_every_repository_path_the_readme_links_exists():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist): the repository's tree is not here to check")
    tree = tracked_files()
    named = [(url, repository_paths(url)) for url in links(README.read_text(encoding="utf-8"))]
    missing = [url for url, paths in named if paths and not tree.intersection(paths)]
    assert any(paths for _, paths in named), "no repository link found"
    assert missing == [], f"these links name paths that git does not track: {missing}"


def test_a_site_page_is_its_source_under_docs():
    assert repository_paths(SITE + "arena/#using-it") == ["docs/arena.md", "docs/arena.ipynb", "docs/arena/index.md"]
    assert repository_paths(SITE) == ["README.md"]
    assert repository_paths(REPOSITORY[0] + "docs/rules.md#lucky") == ["docs/rules.md"]
    assert repository_paths("https://example.org/docs/rules.md") == []
