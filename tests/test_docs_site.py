"""The docs site's link rewriting and doctest fencing (mkdocs_hooks.py); `make docs-build`
builds the whole site with --strict."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("mkdocs", reason="the docs dependency group builds the site (pip install --group docs)")
pytest.importorskip("griffe", reason="the docs dependency group builds the site (pip install --group docs)")

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "mkdocs_hooks.py")
assert _spec is not None and _spec.loader is not None
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)

BLOB, TREE, RAW = hooks.BLOB, hooks.TREE, hooks.RAW


def rewrite(markdown: str, source: str) -> str:
    page = SimpleNamespace(file=SimpleNamespace(src_uri=source))
    return hooks.on_page_markdown(markdown, page=page, config=None, files=None)


def test_a_link_outside_docs_becomes_a_repository_link():
    text = ("[json](../benchmarks/results/aec_speed.json) ![plot](../benchmarks/results/batched_scaling.png) "
            "[folder](../qwixx_env/nets) [deep](../../benchmarks/results/cold_start.json#top)")
    assert rewrite(text, "benchmarks.md").split(" [deep]")[0] == (
        f"[json]({BLOB}benchmarks/results/aec_speed.json) ![plot]({RAW}benchmarks/results/batched_scaling.png) "
        f"[folder]({TREE}qwixx_env/nets)")
    assert rewrite("[deep](../../benchmarks/results/cold_start.json#top)", "research/benchmark-history.md") == (
        f"[deep]({BLOB}benchmarks/results/cold_start.json#top)")


def test_links_inside_the_site_and_code_stay_as_written():
    text = "[page](arena.md#using-it) [web](https://example.org/x) [here](#figures)\n```\n[code](../README.md)\n```\n"
    assert rewrite(text, "training.md") == text


def test_the_readmes_links_into_docs_become_site_pages():
    text = f"[rules]({BLOB}docs/rules.md#lucky) ![shot]({RAW}docs/images/play-coach.png) [src]({BLOB}qwixx_env/cli.py)"
    assert rewrite(text, "index.md") == (
        f"[rules](rules.md#lucky) ![shot](images/play-coach.png) [src]({BLOB}qwixx_env/cli.py)")
    assert rewrite(f"[rules]({BLOB}docs/rules.md)", "research/training-results.md") == "[rules](../rules.md)"


def test_a_link_to_a_missing_repository_path_is_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.links"):
        assert rewrite("[gone](../benchmarks/results/no_such.json)", "benchmarks.md") == (
            "[gone](../benchmarks/results/no_such.json)")
        rewrite("[out](../../elsewhere.md)", "benchmarks.md")
    assert [r.getMessage() for r in caplog.records] == [
        "benchmarks.md: the link '../benchmarks/results/no_such.json' names benchmarks/results/no_such.json, "
        "which is not in the repository",
        "benchmarks.md: the link '../../elsewhere.md' points outside the repository",
    ]


def test_doctests_in_docstrings_become_code_blocks():
    text = 'Play.\n>>> run(["a"])\n>>> result["win_rate"]\n0.5\n\nMore.\n```\n>>> kept\n```'
    assert hooks.fence_doctests(text) == (
        'Play.\n\n```pycon\n>>> run(["a"])\n>>> result["win_rate"]\n0.5\n```\n\n\nMore.\n```\n>>> kept\n```')


def test_a_notebooks_links_to_pages_become_site_links(caplog):
    from mkdocs.structure.files import File, Files

    def page_file(path: str, **dest: str) -> File:
        return File(path, str(ROOT / "docs"), str(ROOT / "site"), use_directory_urls=True, **dest)

    # mkdocs-jupyter makes the notebook a page at tutorials/first-bot/
    notebook = page_file("tutorials/first-bot.ipynb", dest_uri="tutorials/first-bot/index.html")
    files = Files([notebook, page_file("training.md"), page_file("arena.md")])
    page = SimpleNamespace(file=notebook)
    html = '<a href="../training.md">t</a> <a href="../arena.md#using-it">a</a> <a href="https://e.org/x.md">e</a>'
    assert hooks.on_page_content(html, page=page, config=None, files=files) == (
        '<a href="../../training/">t</a> <a href="../../arena/#using-it">a</a> <a href="https://e.org/x.md">e</a>')
    with caplog.at_level(logging.WARNING, logger="mkdocs.hooks.links"):
        hooks.on_page_content('<a href="../gone.md">g</a>', page=page, config=None, files=files)
    assert [r.getMessage() for r in caplog.records] == [
        "tutorials/first-bot.ipynb: the link '../gone.md' names gone.md, which is not a page"]
