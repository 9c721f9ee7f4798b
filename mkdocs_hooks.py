"""MkDocs hooks for the documentation site (mkdocs.yml names this file under `hooks:`).

The pages under docs/ are written to read on GitHub, where a relative link may point anywhere
in the repository (`../benchmarks/results/aec_speed.json`, `../qwixx_env/nets`). The site holds
docs/ only, so this hook makes such links absolute links into the repository at its main
branch, and the home page is README.md itself, whose links are absolute already (it is also
the package page); links of its that point at a docs/ page become the site's own pages. Every
link it rewrites must name a path that exists in the tree: one that does not is a warning,
which `mkdocs build --strict` turns into a failure, as MkDocs does for a missing page.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import griffe
from mkdocs.structure.files import File, Files

REPOSITORY = "https://github.com/qwixx-env/qwixx_env"
BLOB = f"{REPOSITORY}/blob/main/"
TREE = f"{REPOSITORY}/tree/main/"
RAW = "https://raw.githubusercontent.com/qwixx-env/qwixx_env/main/"
ROOT = Path(__file__).resolve().parent
IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif")

log = logging.getLogger("mkdocs.hooks.links")

# A Markdown inline link or image: the text in brackets, then the target up to a space or `)`.
# Fenced code is left alone (see `_outside_code`).
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^(```|~~~)")
DOCTEST = re.compile(r"^([ \t]*)>>> ")
# A relative link to a Markdown page in a notebook's HTML (nbconvert leaves links as written).
NOTEBOOK_LINK = re.compile(r'href="([^":#]+\.md)(#[^"]*)?"')


def on_files(files: Files, config: Any) -> Files:
    """Add the home page, index.md, generated from README.md (one text for both)."""
    files.append(File.generated(config, "index.md", content=(ROOT / "README.md").read_text(encoding="utf-8")))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Rewrite the page's links as the module docstring says, outside fenced code."""
    source = page.file.src_uri  # e.g. "research/training-results.md", relative to docs/
    return _outside_code(markdown, lambda text: LINK.sub(lambda m: _link(m, source), text))


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """A notebook's links to pages (`../training.md`, relative as GitHub reads them) as the
    site's own; MkDocs checks those only in Markdown pages, so a missing page warns here."""
    if not page.file.src_uri.endswith(".ipynb"):
        return html

    def site_link(match: re.Match[str]) -> str:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), match.group(1)))
        found = files.get_file_from_path(path)
        if found is None:
            log.warning(f"{page.file.src_uri}: the link {match.group(1)!r} names {path}, which is not a page")
            return match.group(0)
        return f'href="{found.url_relative_to(page.file)}{match.group(2) or ""}"'

    return NOTEBOOK_LINK.sub(site_link, html)


def _outside_code(markdown: str, rewrite: Callable[[str], str]) -> str:
    """Apply `rewrite` to the text between fenced code blocks, leaving the blocks as written."""
    out: list[list[str]] = []
    chunk: list[str] = []
    fenced = False
    for line in markdown.splitlines(keepends=True):
        if FENCE.match(line.lstrip()):
            out.append(chunk if fenced else [rewrite("".join(chunk))])
            chunk, fenced = [], not fenced
            out.append([line])
            continue
        chunk.append(line)
    out.append(chunk if fenced else [rewrite("".join(chunk))])
    return "".join("".join(part) for part in out)


def _link(match: re.Match[str], source: str) -> str:
    """One link of the page `source` (docs/-relative) as the site needs it."""
    target = match.group(2)
    new = _docs_page(target)
    if new is not None:
        # From the home page (index.md at the site's root) a docs/ page is a sibling.
        return match.group(1) + posixpath.relpath(new, posixpath.dirname(source) or ".") + match.group(3)
    if "://" in target or target.startswith(("#", "mailto:")):
        return match.group(0)
    path, hash_, anchor = target.partition("#")
    resolved = posixpath.normpath(posixpath.join("docs", posixpath.dirname(source), path))
    if resolved == "docs" or resolved.startswith("docs/"):
        return match.group(0)  # a page or image of the site: MkDocs checks it
    if resolved.startswith("../"):
        log.warning(f"{source}: the link {target!r} points outside the repository")
        return match.group(0)
    found = ROOT / resolved
    if not found.exists():
        log.warning(f"{source}: the link {target!r} names {resolved}, which is not in the repository")
        return match.group(0)
    if found.is_dir():
        base = TREE
    else:
        base = RAW if match.group(1).startswith("!") and resolved.endswith(IMAGE_SUFFIXES) else BLOB
    return match.group(1) + base + resolved + hash_ + anchor + match.group(3)


def _docs_page(target: str) -> str | None:
    """The docs/-relative path (with its anchor) of an absolute link to a file under docs/."""
    for base in (BLOB, RAW):
        if target.startswith(base + "docs/"):
            return target[len(base) + len("docs/"):]
    return None


class InstalledLayout(griffe.Extension):
    """A griffe extension (mkdocs.yml's mkdocstrings options): the top-level training/ folder
    as the subpackage qwixx_env.training, where pyproject.toml's package-dir installs it and
    where static analysis of qwixx_env/ cannot find it."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Graft training/ under qwixx_env once qwixx_env is loaded."""
        if pkg.name == "qwixx_env":
            training = griffe.load("training", search_paths=[str(ROOT)], extensions=loader.extensions,
                                   docstring_parser=loader.docstring_parser, docstring_options=loader.docstring_options)
            pkg.set_member("training", training)


class Doctests(griffe.Extension):
    """A griffe extension: the `>>>` examples in docstrings as code blocks. Read as Markdown,
    `>>>` would start nested quotes and `x["key"]` would look like a reference link."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Fence each run of `>>>` lines (and the output lines after them) of the docstring."""
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)


def fence_doctests(text: str) -> str:
    """`text` with every doctest block (from a `>>>` line to the next blank line) fenced as
    pycon; blocks already inside a fence stay as written."""
    lines, out, i, fenced = text.split("\n"), [], 0, False
    while i < len(lines):
        match = DOCTEST.match(lines[i])
        if FENCE.match(lines[i].lstrip()):
            fenced = not fenced
        if match is None or fenced:
            out.append(lines[i])
            i += 1
            continue
        indent = match.group(1)
        if out and out[-1].strip():
            out.append("")
        out.append(indent + "```pycon")
        while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
            out.append(lines[i])
            i += 1
        out += [indent + "```", ""]
    return "\n".join(out)
