"""docs/results.md says what the reference learning curves' results files say
(benchmarks/learning/report.py renders it from benchmarks/results/learning/)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import trim_mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "learning"))

import common  # noqa: E402
import report  # noqa: E402


@pytest.fixture(scope="module")
def summary():
    return json.loads(report.SUMMARY.read_text())


def learner_sections(summary):
    """Each learner's table, summary row and section of the page, in the summary's order."""
    sections = report.PAGE.read_text().split("\n### ")[1:]
    for table, t in summary["tables"].items():
        for row in t["learners"]:
            yield table, row, next(s for s in sections if s.startswith(f"{row['learner']} ({table})"))


def test_the_page_is_the_summary_rendered(summary):
    assert report.PAGE.read_text() == report.render(summary)
    assert report.PLOT.is_file()


def test_the_summary_holds_every_results_file_and_its_seeds(summary):
    files = report.runs()
    assert files, "no results file in benchmarks/results/learning"
    listed = {(row["learner"], table): row for table, t in summary["tables"].items() for row in t["learners"]}
    assert set(listed) == {(f["learner"], f["table"]) for f in files}
    for f in files:
        row = listed[f["learner"], f["table"]]
        assert row["seeds"] == [r["seed"] for r in f["runs"]]
        assert row["budget"] == f["budget"] and row["ended"] == [r["points"][-1]["decisions"] for r in f["runs"]]


def test_every_run_reaches_the_budget_or_the_page_says_where_it_ended(summary):
    for table, row, section in learner_sections(summary):
        short = min(row["ended"]) < row["budget"]
        assert ("**Short of the budget.**" in section) == short, (row["learner"], table)
        if short:
            assert ", ".join(f"{n:,}" for n in row["ended"]) in section


def test_each_figure_is_the_interquartile_mean_of_the_seeds_with_an_interval_around_it(summary):
    """Recomputed here with scipy (the IQM: a 25% trimmed mean), not with rliable."""
    for f in report.runs():
        row = next(r for r in summary["tables"][f["table"]]["learners"] if r["learner"] == f["learner"])
        for i, point in enumerate(row["points"]):
            at = [r["points"][i] for r in f["runs"]]
            assert point["decisions"] == round(np.mean([p["decisions"] for p in at]))
            for opponent in common.OPPONENTS:
                values = np.array([p["win_share"][opponent] for p in at])
                iqm, low, high = point["win_share"][opponent]
                assert iqm == pytest.approx(trim_mean(values, 0.25), abs=1e-4)
                assert values.min() - 1e-4 <= low <= iqm + 1e-4 and iqm - 1e-4 <= high <= values.max() + 1e-4


def test_the_verdict_on_greedy_follows_the_final_interval(summary):
    for t in summary["tables"].values():
        for row in t["learners"]:
            _, low, high = row["points"][-1]["win_share"]["greedy"]
            expected = "yes" if low > t["parity"] else "no" if high < t["parity"] else "not shown"
            assert row["beats_greedy"] == expected


def test_every_learner_that_does_not_beat_greedy_says_why(summary):
    for table, row, section in learner_sections(summary):
        said = "**Why it does not beat greedy here.**" in section
        assert said == (row["beats_greedy"] != "yes"), (row["learner"], table)
        if said:  # the trend it names is the summary's last two points against greedy
            before, after = (100 * p["win_share"]["greedy"][0] for p in row["points"][-2:])
            assert f"from {before:.1f}% to {after:.1f}%" in section


def test_a_learner_short_of_seeds_is_marked_and_its_missing_seeds_listed(summary):
    """A results file with two of the three seeds: its row says so, and the missing seed is in the
    table of what is not measured yet (made from a copy of the summary, one seed dropped)."""
    table, t = next(iter(summary["tables"].items()))
    row = dict(t["learners"][0], seeds=[0, 1])
    short = {**summary, "tables": {table: {**t, "learners": [row]}}}
    page = report.render(short)
    assert f"[{row['learner']}](../benchmarks/results/learning/{row['file']}) (2 of 3 seeds) |" in page
    missing = page.split("## Not measured yet")[1].split("\n## ")[0]
    assert f"| `{row['learner']}` | {table} | seed 2: " in missing
    whole = report.render({**summary, "tables": {table: {**t, "learners": [t["learners"][0]]}}})
    assert "of 3 seeds" not in whole


def test_a_run_that_ended_before_the_budget_is_marked(summary):
    """Made from a copy of the summary with one run's end moved below the budget."""
    table, t = next(iter(summary["tables"].items()))
    first = t["learners"][0]
    row = dict(first, ended=[first["budget"] - 300, *first["ended"][1:]])
    page = report.render({**summary, "tables": {table: {**t, "learners": [row]}}})
    assert f"| {row['budget']:,} (short) |" in page
    assert f"**Short of the budget.** Its runs ended at {row['budget'] - 300:,}, " in page
    whole = report.render({**summary, "tables": {table: {**t, "learners": [first]}}})
    assert "(short)" not in whole and "Short of the budget" not in whole
