"""The tutorial notebook, docs/tutorials/first-bot.ipynb, runs from top to bottom on a tiny
budget: a random game, a PPO run of one rollout, an arena of a few deals, the plot, and a game
against a pretrained bot. Executed with nbclient in a fresh folder, as a reader would run it."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

# Looked up, not imported: importing sb3_contrib (and torch) would slow every test run's collection.
RUNNER = ("nbformat", "nbclient", "ipykernel", "sb3_contrib")
MISSING = [name for name in RUNNER if importlib.util.find_spec(name) is None]

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "tutorials" / "first-bot.ipynb"


def outputs(cell: dict) -> str:
    """A code cell's text: its streams and its results' plain text."""
    return "".join(out.get("text", "") or out.get("data", {}).get("text/plain", "") for out in cell["outputs"])


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"running the tutorial needs {MISSING}: pip install --group docs "
                    "and the train extra")
def test_the_tutorial_runs_on_a_tiny_budget(tmp_path, monkeypatch):
    import nbclient
    import nbformat

    monkeypatch.setenv("QWIXX_TUTORIAL_STEPS", "512")  # PPO rounds it up to one rollout: 16 games x 64 steps
    monkeypatch.setenv("QWIXX_TUTORIAL_DEALS", "2")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    random_scores = ast.literal_eval(code[1]["outputs"][-1]["data"]["text/plain"])
    assert len(random_scores) == 2 and all(isinstance(score, int) for score in random_scores)
    final = json.loads((tmp_path / "runs" / "first-bot" / "final.json").read_text())
    assert final["meta"]["steps"] == 16 * 64  # the budget read from the environment, not the default
    assert "first-bot/final" in outputs(code[3]) and "heuristic" in outputs(code[3])
    assert any("image/png" in out.get("data", {}) for out in code[4]["outputs"])  # the plot, drawn
    last = ast.literal_eval(code[5]["outputs"][-1]["data"]["text/plain"])
    assert set(last) == {"player_0", "player_1"}


def test_the_tutorial_is_stored_small_and_without_errors():
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert NOTEBOOK.stat().st_size < 150_000, "keep the stored outputs small (docs/tutorials/first-bot.ipynb)"
    errors = [out for cell in notebook["cells"] for out in cell.get("outputs", []) if out["output_type"] == "error"]
    assert errors == []
