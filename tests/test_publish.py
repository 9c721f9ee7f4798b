"""Publishing a run (`qwixx_env.training.publish`): the checkpoint copied and loadable, the curves
copied, the arena evaluation saved as JSON, and a model card whose tables hold the JSON's
numbers. Tiny policies (random weights) and a few deals keep it fast; every target folder is
a temporary one."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rich")
pytest.importorskip("yaml")

from qwixx_env import benchmark as benchmark_module
from qwixx_env import bots
from qwixx_env.bots.pretrained import write_policy
from qwixx_env.core import get_variant, layout_for
from qwixx_env.training import benchmark, model_card, publish
from qwixx_env.training.config import config_from_dict

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ["## Loading", "## Evaluation", "## Limitations", "## Training", "## Learning curves"]


def tiny_config(num_players: int, variant: str = "classic") -> dict:
    data = {
        "name": "tiny",
        "seed": 3,
        "variant": variant,
        "num_players": num_players,
        "total_steps": 1024,
        "num_envs": 8,
        "network": {"pi": [16], "vf": [16]},
        "ppo": {"n_steps": 64, "batch_size": 256},
        "evaluation": {"every": 512, "games": 3},
        "bc": {"teacher": "heuristic", "samples": 500, "epochs": 1, "batch_size": 128},
    }
    if num_players > 1:
        data["opponents"] = {"scripted": {"greedy": 1}}
    return config_from_dict(data).to_dict()


def tiny_run(
    folder: Path, num_players: int = 2, *, curves: bool = True, seed: int = 0, variant: str = "classic"
) -> Path:
    """A run folder as `training.train` leaves it, as far as publishing reads it: a tiny
    final policy (random weights, one hidden layer of 16) with the trainer's meta, and curves."""
    rng = np.random.default_rng(seed)
    D, A = layout_for(variant, num_players).size, get_variant(variant).num_actions

    def layers(sizes):
        return [
            (rng.normal(0, 1 / np.sqrt(a), (b, a)), rng.normal(0, 0.1, b), "tanh" if i == 0 else None)
            for i, (a, b) in enumerate(zip(sizes, sizes[1:]))
        ]

    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "name": "tiny",
        "config": tiny_config(num_players, variant),
        "steps": 2048,
        "wall_time": 75.5,
        "machine": {"platform": "Linux-test", "cpu_count": 2, "torch_threads": 1},
        "bc": {
            "teacher": "heuristic",
            "samples": 512,
            "games": 20,
            "agreement": 0.8125,
            "agreement_before": 0.25,
            "agreement_chance": 0.375,
        },
        "last_eval": None,
    }
    write_policy(
        folder / "final",
        policy=layers([D, 16, A]),
        value=layers([D, 16, 1]),
        variant=variant,
        num_players=num_players,
        meta=meta,
    )
    if curves:
        (folder / "curves.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a picture")
    return folder


def run_main(tmp_path: Path, run: Path, name: str, *extra: str) -> int:
    return publish.main(
        [
            str(run),
            "--name",
            name,
            "--workers",
            "1",
            "--no-progress",
            "--checkpoints",
            str(tmp_path / "ck"),
            "--results",
            str(tmp_path / "res"),
            "--images",
            str(tmp_path / "img"),
            "--leaderboard",
            str(tmp_path / "lb"),
            *extra,
        ]
    )


def card_rows(card: str, table: int = 0) -> dict[str, list[str]]:
    """The rows of the evaluation's `table`-th table of a card (a second: the rollout table
    of 3+ players), by the bot in the first cell."""
    section = card.split("## Evaluation")[1].split("## Limitations")[0]
    section = section.split("The search bot's")[table]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `([^`]+)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def percent(cell: str) -> float:
    return float(cell.rstrip("%")) / 100


def close_pct(cell: str, x: float) -> bool:
    return abs(percent(cell) - x) <= 0.0005 + 1e-12


def close_score(cell: str, mean: float, se: float | None) -> bool:
    parts = [float(p) for p in cell.split("±")]
    return abs(parts[0] - mean) <= 0.005 + 1e-9 and (se is None or abs(parts[1] - se) <= 0.005 + 1e-9)


def close_interval(cell: str, iv: list[float]) -> bool:
    lo, hi = cell.strip("[]").split(",")
    return close_pct(lo.strip(), iv[0]) and close_pct(hi.strip(), iv[1])


@pytest.mark.slow
def test_publishing_a_two_player_run_installs_evaluates_and_writes_a_card(tmp_path):
    run = tiny_run(tmp_path / "run")
    assert run_main(tmp_path, run, "ppo-test", "--limit", "2", "--arena", "--games", "2", "--search-games", "1") == 0
    ck, res, img = tmp_path / "ck", tmp_path / "res", tmp_path / "img"
    # The checkpoint: byte for byte the run's, readable by all, no temporary files left.
    assert (ck / "ppo-test.npz").read_bytes() == (run / "final.npz").read_bytes()
    assert (ck / "ppo-test.json").read_bytes() == (run / "final.json").read_bytes()
    assert sorted(p.name for p in ck.iterdir()) == ["ppo-test.json", "ppo-test.md", "ppo-test.npz"]
    assert (ck / "ppo-test.npz").stat().st_mode & 0o777 == 0o644
    assert bots.load(ck / "ppo-test").policy.meta["steps"] == 2048
    assert (img / "ppo-test-curves.png").read_bytes() == (run / "curves.png").read_bytes()

    record = json.loads((res / "ppo-test.json").read_text())
    ev = record["evaluation"]
    assert ev["kind"] == "head_to_head" and ev["seed"] == publish.PUBLISH_SEED
    assert [o["opponent"] for o in ev["opponents"]] == list(benchmark.HEAD_TO_HEAD)
    for o in ev["opponents"]:
        assert o["games"] == 2 * o["deals"] and o["deals"] == (1 if o["opponent"] == "rollout" else 2)
        assert o["win_interval"][0] <= o["win_rate"] <= o["win_interval"][1]
        assert abs(o["win_rate"] + o["opponent_win_rate"] - 1) < 1e-9
    assert record["training"]["steps"] == 2048 and record["training"]["reward"] == "win"

    card = (ck / "ppo-test.md").read_text()
    assert card.startswith("# ppo-test\n")
    positions = [card.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert 'bots.load("ppo-test")' in card and 'bots.make("ppo-test"' in card
    assert record["command"] in card and "--search-games 1" in record["command"]
    assert "![learning curves of ppo-test](../img/ppo-test-curves.png)" in card
    assert "```yaml\nname: tiny\n" in card and "2,048" in card and "1 min 16 s" in card
    assert "81.2%" in card  # the warm start's agreement
    rows = card_rows(card)
    assert list(rows) == [o["opponent"] for o in ev["opponents"]]
    for o in ev["opponents"]:
        deals, games, win, iv, mine, theirs, verdict = rows[o["opponent"]]
        assert int(deals) == o["deals"] and int(games) == o["games"]
        assert close_pct(win, o["win_rate"]) and close_interval(iv, o["win_interval"])
        assert close_score(mine, o["score_mean"], o["score_se"])
        assert close_score(theirs, o["opponent_score_mean"], o["opponent_score_se"])
        assert verdict == model_card.verdict(o)
        if verdict == "loses to":
            assert f"It loses to `{o['opponent']}`: {win}" in card


def test_publishing_a_solo_run_reports_the_regret_against_the_solver(tmp_path):
    run = tiny_run(tmp_path / "run", num_players=1, curves=False)
    assert run_main(tmp_path, run, "ppo-solo", "--limit", "3", "--arena", "--games", "3") == 0
    record = json.loads((tmp_path / "res" / "ppo-solo.json").read_text())
    ev = record["evaluation"]
    assert ev["kind"] == "solo" and [b["label"] for b in ev["bots"]] == [
        "ppo-solo",
        "heuristic",
        "solo_optimal",
    ]
    assert ev["optimum"] == pytest.approx(115.4831, abs=1e-4)
    me = ev["bots"][0]
    assert ev["regret"] == pytest.approx(ev["optimum"] - me["score_mean"]) and me["games"] == 3
    assert record["training"]["reward"] == "score"
    card = (tmp_path / "ck" / "ppo-solo.md").read_text()
    rows = card_rows(card)
    for b in ev["bots"]:
        games, mean, regret = rows[b["label"]]
        assert int(games) == b["games"] and close_score(mean, b["score_mean"], b["score_se"])
        assert abs(float(regret) - (ev["optimum"] - b["score_mean"])) <= 0.005 + 1e-9
    assert f"**{ev['regret']:.2f} ± {ev['regret_se']:.2f}**" in card
    assert "The run left no `curves.png`." in card and not (tmp_path / "img").exists()
    # One deal has no standard error: the card says the regret without one.
    assert run_main(tmp_path, run, "ppo-solo", "--limit", "1", "--arena", "--games", "1") == 0
    ev = json.loads((tmp_path / "res" / "ppo-solo.json").read_text())["evaluation"]
    assert (
        ev["regret_se"] is None
        and f"**{ev['regret']:.2f}** points" in (tmp_path / "ck" / "ppo-solo.md").read_text()
    )


@pytest.mark.slow
def test_publishing_a_three_player_run_plays_a_mixed_table_and_a_rollout_table(tmp_path):
    run = tiny_run(tmp_path / "run", num_players=3)
    assert run_main(tmp_path, run, "ppo-3p", "--limit", "1", "--arena", "--games", "1", "--search-games", "1") == 0
    ev = json.loads((tmp_path / "res" / "ppo-3p.json").read_text())["evaluation"]
    assert ev["kind"] == "table" and ev["deals"] == 1 and ev["skipped"] == {}
    assert [b["label"] for b in ev["bots"]] == ["ppo-3p", "random", "greedy", "heuristic", "solo_optimal"]
    search = ev["search_table"]
    assert search["deals"] == 1 and [b["label"] for b in search["bots"]] == ["ppo-3p", "rollout", "heuristic"]
    assert ev["table_games"] == 30 + 3  # 5 bots, 3 seats: 10 sets x 3 rotations; then 3 rotations
    assert all(b["games"] == 3 for b in search["bots"])  # every bot in every game of the rollout table
    me, me_there = ev["bots"][0], search["bots"][0]
    assert ev["beats_every_scripted"] == (
        all(me["win_rate"] > b["win_rate"] for b in ev["bots"][1:])
        and all(me_there["win_rate"] > b["win_rate"] for b in search["bots"][1:])
    )
    card = (tmp_path / "ck" / "ppo-3p.md").read_text()
    for rows, table_bots in ((card_rows(card, 0), ev["bots"]), (card_rows(card, 1), search["bots"])):
        for b in table_bots:
            games, win, iv, mean, rating = rows[b["label"]]
            assert int(games) == b["games"] and close_pct(win, b["win_rate"])
            assert close_interval(iv, b["win_interval"]) and close_score(mean, b["score_mean"], b["score_se"])
            assert rating == f"{b['rating']['mu']:.1f} ± {b['rating']['sigma']:.1f}"
    assert "The search bot's 3-player table of 3 bots" in card
    assert (
        f"win more often than every scripted opponent? **{'Yes' if ev['beats_every_scripted'] else 'No'}**"
        in card
    )
    # the sentence's intervals agree with the closest rival's (the widest lead of any other bot)
    rival, mine = max(
        ((b, t[0]) for t in (ev["bots"], search["bots"]) for b in t[1:]),
        key=lambda p: p[0]["win_rate"] - p[1]["win_rate"],
    )
    if mine["win_interval"][0] > rival["win_interval"][1]:
        assert "(the 95% intervals do not overlap)." in card
    elif mine["win_interval"][1] < rival["win_interval"][0]:
        assert f"(the 95% intervals do not overlap: `{rival['label']}` wins more often)." in card
    else:
        assert "(the 95% intervals overlap)." in card


def test_the_intervals_sentence_says_which_side_is_ahead():
    def row(label, rate, lo, hi):
        return {"label": label, "games": 90, "win_rate": rate, "win_interval": [lo, hi], "score_mean": 50.0,
                "score_se": 1.0, "rating": {"mu": 25.0, "sigma": 1.0}}

    def sentence(me, rival):
        ev = {
            "kind": "table",
            "seed": 5_000_000,
            "table_games": 90,
            "seconds": 1.0,
            "workers": 1,
            "deals": 30,
            "equal_share": 0.5,
            "skipped": {},
            "beats_every_scripted": me[1] > rival[1],
            "bots": [row("me", *me), row("heuristic", *rival)],
        }
        record = {"name": "me", "command": "c", "checkpoint": {"num_players": 2}, "evaluation": ev}
        return [line for line in model_card.evaluation_section(record) if line.startswith("Does")][0]

    assert sentence((0.7, 0.6, 0.8), (0.3, 0.2, 0.4)).endswith("(the 95% intervals do not overlap).")
    assert sentence((0.0, 0.0, 0.39), (0.83, 0.44, 0.97)).endswith(
        "(the 95% intervals do not overlap: `heuristic` wins more often)."
    )
    assert sentence((0.5, 0.4, 0.6), (0.45, 0.35, 0.55)).endswith("(the 95% intervals overlap).")


def test_an_output_folder_that_is_a_file_is_refused_before_the_evaluation(tmp_path, capsys):
    run = tiny_run(tmp_path / "run")
    (tmp_path / "res").write_text("a file where the results folder goes")
    assert run_main(tmp_path, run, "ppo-x", "--limit", "1") == 2
    assert f"--results: {tmp_path / 'res'} is not a folder" in capsys.readouterr().err
    assert not (tmp_path / "ck").exists() and not (tmp_path / "img").exists()


def test_an_interrupted_evaluation_leaves_the_published_files_as_they_were(tmp_path, monkeypatch):
    run = tiny_run(tmp_path / "run")
    folder = tmp_path / "ck"
    folder.mkdir()
    old = json.dumps({"weights": {"sha256": "0" * 64}})
    (folder / "ppo-x.json").write_text(old)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(publish.bench, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publish.publish(run, "ppo-x", limit=1, workers=1, force=True, checkpoints=folder, results=tmp_path / "res",
                        leaderboard=tmp_path / "lb", images=tmp_path / "img", progress=False)
    assert (
        sorted(p.name for p in folder.iterdir()) == ["ppo-x.json"]
        and (folder / "ppo-x.json").read_text() == old
    )
    assert not any((tmp_path / d).exists() for d in ("res", "img", "lb"))


def test_a_table_without_search_games_skips_rollout_and_longo_skips_solo_optimal(tmp_path):
    run = tiny_run(tmp_path / "run", num_players=3, variant="longo")
    assert run_main(tmp_path, run, "ppo-l3", "--limit", "1", "--arena", "--games", "1", "--search-games", "0") == 0
    ev = json.loads((tmp_path / "res" / "ppo-l3.json").read_text())["evaluation"]
    assert [b["label"] for b in ev["bots"]] == ["ppo-l3", "random", "greedy", "heuristic"]
    assert set(ev["skipped"]) == {"rollout", "solo_optimal"} and "search_table" not in ev
    assert ev["beats_every_scripted"] == all(
        ev["bots"][0]["win_rate"] > b["win_rate"] for b in ev["bots"][1:]
    )


def test_default_deals_give_the_bot_ten_thousand_games():
    assert publish.default_deals(1, 1) == 10_000
    assert publish.default_deals(2, 1) == 5_000
    assert publish.default_deals(3, 3) == 1_112  # in 9 of the 12 lineups
    assert publish.default_deals(4, 3) == 2_500
    assert publish.default_deals(3, 4) == 556  # with solo_optimal: in 18 of the 30 lineups
    assert publish.default_deals(4, 4) == 625  # in 16 of the 20


def test_a_run_without_a_final_policy_is_an_error_naming_the_file(tmp_path, capsys):
    empty = tmp_path / "unfinished"
    empty.mkdir()
    assert run_main(tmp_path, empty, "ppo-x") == 2
    err = capsys.readouterr().err
    assert f"{empty / 'final.json'}: not found" in err and "finished training run" in err
    assert run_main(tmp_path, tmp_path / "nowhere", "ppo-x") == 2
    assert f"RUN_DIR {tmp_path / 'nowhere'}: not a folder" in capsys.readouterr().err
    assert not (tmp_path / "ck").exists()


def test_bad_names_seeds_and_replacing_another_policy_are_refused(tmp_path, capsys):
    run = tiny_run(tmp_path / "run")
    for name in ("greedy", "../up", "a.json", ""):
        assert run_main(tmp_path, run, name) == 2
        assert "--name" in capsys.readouterr().err
    with pytest.raises(
        ValueError, match=r"--seed: 10000 .* overlap the run's training evaluation deals 10003\.\.10005"
    ):
        publish.publish(run, "ppo-x", arena=True, games=5, seed=10_000, checkpoints=tmp_path / "ck", progress=False)
    assert not (tmp_path / "ck").exists()  # refused before anything is written
    # Another policy under a published name needs --force.
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "ppo-x.json").write_text(json.dumps({"weights": {"sha256": "0" * 64}}))
    with pytest.raises(ValueError, match=r"ppo-x\.json already holds another policy; pass --force"):
        publish.install(
            run, json.loads((run / "final.json").read_text()), "ppo-x", folder, tmp_path / "img", force=False
        )
    paths = publish.install(
        run, json.loads((run / "final.json").read_text()), "ppo-x", folder, tmp_path / "img", force=True
    )
    assert paths["policy"].num_players == 2 and not paths["by_name"]


def test_table_limitations_name_a_lead_within_the_noise_and_a_loss():
    def row(label, rate, lo, hi):
        return {"label": label, "games": 900, "win_rate": rate, "win_interval": [lo, hi]}

    record = {
        "checkpoint": {"variant": "classic", "num_players": 4},
        "evaluation": {
            "kind": "table",
            "deals": 625,
            "equal_share": 0.25,
            "skipped": {},
            "bots": [row("me", 0.52, 0.51, 0.53), row("heuristic", 0.45, 0.44, 0.46)],
            "search_table": {
                "deals": 300,
                "bots": [
                    row("me", 0.304, 0.28, 0.33),
                    row("rollout", 0.302, 0.28, 0.33),
                    row("greedy", 0.35, 0.32, 0.38),
                ],
            },
        },
    }
    lines = model_card.limitations(record)
    assert not any("`heuristic`" in line for line in lines)  # a clear lead: nothing to say
    assert (
        "Its lead over `rollout` at its table (30.4% against 30.2%) is within the noise: "
        "the 95% intervals overlap."
        in lines
    )
    assert "It does not win more often than `greedy` at its table (30.4% against 35.0%)." in lines


def test_publishing_benchmarks_the_run_on_its_protocol_and_the_card_shows_its_figures(tmp_path):
    run = tiny_run(tmp_path / "run", num_players=3, variant="longo")
    assert run_main(tmp_path, run, "ppo-b3", "--limit", "2") == 0
    record = json.loads((tmp_path / "res" / "ppo-b3.json").read_text())
    b = record["benchmark"]
    assert b["protocol"] == "longo-3p/v1" and b["agent"] == "ppo-b3" and not b["complete"]
    assert record["evaluation"] is None and record["reference"] is None
    assert {lineup: f["deals"] for lineup, f in b["lineups"].items()} == {"heuristic": 2, "rollout": 2}
    # the same games as `qwixx bench` of the run's policy (the label aside)
    again = benchmark_module.run(run / "final.json", "longo-3p", workers=1, limit=2)
    assert benchmark_module.strip(again) == benchmark_module.strip({**b, "agent": again["agent"]})
    # a partial benchmark is no leaderboard entry
    assert not (tmp_path / "lb").exists()
    card = (tmp_path / "ck" / "ppo-b3.md").read_text()
    positions = [card.index(s) for s in ["## Loading", "## Benchmark", "## Limitations", "## Training"]]
    assert positions == sorted(positions) and "## Evaluation" not in card
    assert "**PARTIAL**" in card and "Its benchmark is partial" in card
    h = b["lineups"]["heuristic"]
    row = next(line for line in card.splitlines() if line.startswith("| beside `heuristic` |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert int(cells[1]) == h["games"] and close_pct(cells[2], h["win_share"])
    assert close_interval(cells[3], h["win_interval"]) and close_score(cells[5], h["score_mean"], h["score_se"])
    assert [c["goal"] for c in record["strength"]] == [False, True]
    for check in record["strength"]:
        assert f"{check['target']}: **{'met' if check['met'] else 'not met'}**" in card
    assert "Trained by" not in card  # the tiny run's config is not a shipped one


def test_a_complete_solo_benchmark_writes_the_leaderboard_entry_and_compares_heuristic(tmp_path):
    run = tiny_run(tmp_path / "run", num_players=1, variant="longo", curves=False)
    assert run_main(tmp_path, run, "ppo-l1") == 0
    record = json.loads((tmp_path / "res" / "ppo-l1.json").read_text())
    b, ref = record["benchmark"], record["reference"]
    assert b["complete"] and b["lineups"]["heuristic"]["games"] == 2_000 and ref["games"] == 2_000
    heuristic = benchmark_module.run("heuristic", "longo-1p", workers=1, lineups=["heuristic"])
    assert ref["score_mean"] == heuristic["lineups"]["heuristic"]["score_mean"]
    [check] = record["strength"]
    assert check["met"] == (b["lineups"]["heuristic"]["score_mean"] - 1.96 * b["lineups"]["heuristic"]["score_se"]
                            > ref["score_mean"] + 1.96 * ref["score_se"])
    entry = json.loads((tmp_path / "lb" / "ppo-l1.json").read_text())
    assert entry["agent"] == "ppo-l1" and entry["results"] == [b]
    assert set(entry["skipped"]) == set(benchmark_module.PROTOCOLS) - {"longo-1p/v1"}
    assert "plays num_players=1 only" in entry["skipped"]["longo-2p/v1"]
    page = benchmark_module.leaderboard_markdown([entry])
    assert "[ppo-l1](../benchmarks/results/leaderboard/ppo-l1.json)" in page
    # --refresh rebuilds the record and card from the leaderboard's files, playing nothing: the same card
    card = (tmp_path / "ck" / "ppo-l1.md").read_text()
    shutil.copy(REPO / "benchmarks" / "results" / "leaderboard" / "heuristic.json", tmp_path / "lb")
    assert publish.main(["--refresh", "ppo-l1", "--checkpoints", str(tmp_path / "ck"), "--results",
                         str(tmp_path / "res"), "--leaderboard", str(tmp_path / "lb")]) == 0
    assert (tmp_path / "ck" / "ppo-l1.md").read_text() == card
    assert json.loads((tmp_path / "res" / "ppo-l1.json").read_text())["strength"] == record["strength"]
    publish.refresh("ppo-l1", checkpoints=tmp_path / "ck", results=tmp_path / "res", leaderboard=tmp_path / "lb",
                    notes=["Tried: a longer run."])
    limits = (tmp_path / "ck" / "ppo-l1.md").read_text().split("## Limitations")[1].split("## Training")[0]
    assert "- Tried: a longer run.\n" in limits
    entry["results"][0]["complete"] = False
    (tmp_path / "lb" / "ppo-l1.json").write_text(json.dumps(entry))
    with pytest.raises(ValueError, match=r"holds no complete longo-1p/v1 result; run `python benchmarks/leader"):
        publish.refresh("ppo-l1", checkpoints=tmp_path / "ck", results=tmp_path / "res", leaderboard=tmp_path / "lb")


def _bench_result(players: int, me: tuple, others: list[tuple], hard: tuple | None = None,
                  hard_others: list[tuple] | None = None) -> dict:
    def lineup(share, lo, hi, rest):
        return {"games": 100, "win_share": share, "win_interval": [lo, hi], "score_mean": 80.0, "score_se": 1.0,
                "margin_mean": 0.0, "margin_se": 1.0,
                "others": [{"label": label, "win_share": s, "win_interval": [a, z], "score_mean": 70.0}
                           for label, s, a, z in rest]}

    lineups = {"heuristic": lineup(*me, others)}
    if hard is not None:
        lineups["rollout"] = lineup(*hard, hard_others)
    return {"definition": {"num_players": players}, "lineups": lineups}


def test_the_strength_targets_follow_the_intervals():
    # 2 players: the lower bound above 50%; the goal: rollout's interval below the bot's
    two = _bench_result(2, (0.56, 0.51, 0.61), [("heuristic", 0.44, 0.39, 0.49)],
                        (0.53, 0.48, 0.58), [("rollout", 0.47, 0.42, 0.52)])
    bar, goal = model_card.strength(two)
    assert bar["met"] and not bar["goal"] and goal["goal"] and not goal["met"]
    assert "the intervals overlap" in goal["detail"]
    two["lineups"]["heuristic"]["win_interval"] = [0.499, 0.62]
    assert not model_card.strength(two)[0]["met"]
    # 3+ players: apart from the best `heuristic` seat, not just the first
    three = _bench_result(3, (0.40, 0.37, 0.43), [("heuristic", 0.25, 0.22, 0.28), ("heuristic#2", 0.35, 0.32, 0.38)],
                          (0.45, 0.40, 0.50), [("rollout", 0.30, 0.26, 0.34), ("heuristic", 0.25, 0.21, 0.29)])
    bar, goal = model_card.strength(three)
    assert not bar["met"] and "`heuristic#2`" in bar["detail"] and goal["met"]
    three["lineups"]["heuristic"]["others"][1]["win_interval"] = [0.30, 0.369]
    assert model_card.strength(three)[0]["met"]
    # solo: above heuristic's mean, the intervals (mean ± 1.96 s.e.) apart
    solo = {"definition": {"num_players": 1},
            "lineups": {"heuristic": {"games": 10, "score_mean": 170.0, "score_se": 1.0}}}
    ref = {"lineups": {"heuristic": {"games": 10, "score_mean": 166.0, "score_se": 1.0}}}
    assert model_card.strength(solo, ref)[0]["met"]
    ref["lineups"]["heuristic"]["score_mean"] = 166.2
    assert not model_card.strength(solo, ref)[0]["met"]


def test_arena_options_without_arena_are_refused(tmp_path, capsys):
    run = tiny_run(tmp_path / "run")
    with pytest.raises(SystemExit):
        run_main(tmp_path, run, "ppo-x", "--games", "3")
    assert "add --arena" in capsys.readouterr().err
    assert not (tmp_path / "ck").exists()


def test_every_installed_card_is_its_record_rendered():
    """Each shipped model card is exactly `model_card` of its saved record (so a card says
    what the record says), and every record carries a complete benchmark of its own table."""
    from qwixx_env.nets import checkpoint_names, checkpoints_dir

    for name in checkpoint_names():
        record = json.loads((REPO / "benchmarks" / "results" / "pretrained" / f"{name}.json").read_text())
        assert (checkpoints_dir() / f"{name}.md").read_text() == model_card.model_card(record), name
        b = record["benchmark"]
        assert b["complete"] and b["agent"] == name and record["strength"], name
        assert b["protocol"] == benchmark_module.default_protocol(name).name


def test_publishing_writes_the_repositorys_folders_in_a_checkout_and_published_ones_from_a_wheel(
    tmp_path, monkeypatch
):
    """From a wheel the defaults are folders under ./published/, never the installed package's."""
    assert publish.target_folders()["checkpoints"] == publish.REPO / "checkpoints"  # this checkout
    monkeypatch.setattr(publish, "REPO", tmp_path / "site-packages" / "qwixx_env")
    folders = publish.target_folders(images=tmp_path / "img")
    assert folders == {
        "checkpoints": Path("published/checkpoints"), "results": Path("published/results"),
        "leaderboard": Path("published/leaderboard"), "images": tmp_path / "img",
    }
