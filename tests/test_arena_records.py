"""The arena keeps its games: `run_arena(..., records=DIR)` and `qwixx arena --records DIR` write
each table game's record, which `qwixx_env.replay` rebuilds to the arena's final scores, the same
for any number of workers, whole or not at all."""

import json
import os

import pytest
from test_variant_registry import SHORT

import qwixx_env.arena as arena
from qwixx_env import replay
from qwixx_env.arena import run_arena
from qwixx_env.arena.records import INDEX_FORMAT, INDEX_NAME, record_name, safe_label
from qwixx_env.cli import main as cli_main
from qwixx_env.core.variant import Variant
from qwixx_env.envs.qwixx_v0 import RECORD_FORMAT


def files_of(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize(
    "specs, options",
    [
        (["random", "greedy"], {"num_players": 2, "variant": "classic", "games": 2, "seed": 5}),
        (["heuristic", "greedy:max_skip=1"], {"num_players": 3, "variant": "longo", "lucky": "instead", "games": 1}),
    ],
    ids=["classic 2p", "longo 3p"],
)
def test_every_record_replays_to_the_arenas_scores_for_any_worker_count(tmp_path, specs, options):
    one = run_arena(specs, workers=1, records=tmp_path / "one", **options)
    two = run_arena(specs, workers=2, records=tmp_path / "two" / "made", **options)  # missing folders are made
    assert files_of(tmp_path / "one") == files_of(tmp_path / "two" / "made")  # byte for byte
    games = len(one.games.rolls)
    index = json.loads((tmp_path / "one" / INDEX_NAME).read_text())
    assert index["format"] == INDEX_FORMAT and len(index["games"]) == games
    assert sorted(files_of(tmp_path / "one")) == sorted([INDEX_NAME] + [g["file"] for g in index["games"]])
    for g, entry in enumerate(index["games"]):
        deal, lineup = divmod(g, len(one.lineups))
        labels = [one.labels[b] for b in one.lineups[lineup]]
        assert entry["bots"] == labels and (entry["deal"], entry["lineup"]) == (deal, lineup)
        assert entry["seed"] == one.seed + deal
        assert entry["bot_seeds"] == [arena.bot_seed(one.seed, deal, lineup, s) for s in range(one.num_players)]
        path = one.record_path(g)
        assert path.name == entry["file"] == record_name(g, one.seed + deal, labels)
        assert path.name.startswith(f"game{g:06d}_seed{one.seed + deal}_")
        record = json.loads(path.read_text())
        assert record["format"] == RECORD_FORMAT and record["seed"] == one.seed + deal
        assert record["options"]["variant"] == one.variant and record["options"]["lucky"] == one.lucky
        final = replay(path).snapshot()  # rebuilt move by move through the rules, dice checked
        assert [p["score"] for p in final["players"]] == one.games.scores[g].tolist() == entry["scores"]
        assert [p["penalties"] for p in final["players"]] == one.games.penalties[g].tolist()
        assert final["roll"] + 1 == one.games.rolls[g] and final["phase"] == "over"
    assert one.to_dict() | {"timing": None} == two.to_dict() | {"timing": None}


def test_a_tournament_of_a_variant_value_writes_its_sheet_into_the_index(tmp_path):
    result = run_arena(["random", "greedy"], num_players=2, variant=SHORT, games=1, workers=1, records=tmp_path)
    index = json.loads((tmp_path / INDEX_NAME).read_text())
    assert result.variant == index["variant"] == "short_test" and result.to_dict()["variant"] == "short_test"
    assert Variant.from_dict(index["sheet"]) == SHORT
    classic = run_arena(["random", "greedy"], games=1, workers=1, records=tmp_path / "classic")
    assert "sheet" not in json.loads((classic.records / INDEX_NAME).read_text())  # every process knows it


def test_file_names_say_game_seed_and_bots_in_safe_characters():
    assert record_name(7, 3, ["greedy", "random"]) == "game000007_seed3_greedy-vs-random.json"
    assert safe_label("greedy:max_skip=2") == "greedy_max_skip=2"
    assert safe_label('heuristic:weights={"opponent_weight":0.5}') == "heuristic_weights=_opponent_weight_0.5"
    assert safe_label("runs/my2p/final") == "runs_my2p_final" and safe_label("greedy#2") == "greedy_2"
    assert safe_label("::") == "bot" and len(safe_label("x" * 100)) == 40
    assert record_name(1234567, 0, ["a"]) == "game1234567_seed0_a.json"


def test_without_records_nothing_is_written_and_record_path_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_arena(["greedy"], games=1, workers=1)
    assert result.records is None and list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match=r"kept no records \(run_arena\(\.\.\., records=DIR\)"):
        result.record_path(0)
    kept = run_arena(["greedy"], games=1, workers=1, records=tmp_path / "r")
    with pytest.raises(ValueError, match="game: got 1; expected an integer from 0 to 0"):
        kept.record_path(1)


def test_a_bad_records_folder_is_refused_before_any_game(tmp_path, monkeypatch):
    def no_games(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(arena, "play_games", no_games)
    full = tmp_path / "full"
    full.mkdir()
    (full / "old.json").write_text("{}")
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for folder, words in (
        (full, "already holds 1 file(s); expected a new or empty folder"),
        (a_file, "is not a folder"),
        (a_file / "below", "is not a folder (its parent"),
        (3, "records: got 3; expected a folder path"),
        ("", "records: got ''; expected a folder path"),
    ):
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            run_arena(["greedy"], games=1, records=folder)
    with pytest.raises(ValueError, match="bot name: got 'nobody'"):  # a bad bot: no folder is made
        run_arena(["nobody"], games=1, records=tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "full"]
    assert [p.name for p in full.iterdir()] == ["old.json"]


def test_a_stopped_tournament_leaves_only_whole_records(tmp_path):
    """Games are written as they finish, each whole (written beside and renamed); the index only
    at the end. A bot that fails in the third game stops the run with two records kept."""

    class FailsLate:
        name = "fails-late"
        games = 0

        def __init__(self, **table):
            FailsLate.games += 1

        def act(self, observation):
            if FailsLate.games > 3:  # made once up front to check it, then once per game
                raise RuntimeError("the bot crashed")
            return int(observation["action_mask"].nonzero()[0][-1])

    folder = tmp_path / "records"
    with pytest.raises(RuntimeError, match="the bot crashed"):
        run_arena([FailsLate], num_players=1, games=5, workers=1, records=folder)
    names = sorted(os.listdir(folder))
    assert names == ["game000000_seed0_fails-late.json", "game000001_seed1_fails-late.json"]
    for name in names:
        assert replay(folder / name).snapshot()["phase"] == "over"


def test_cli_keeps_records_and_refuses_a_folder_in_use(tmp_path, capsys):
    folder = tmp_path / "games"
    args = ["arena", "random", "greedy", "--games", "1", "--workers", "1", "--quiet", "--seed", "4"]
    assert cli_main([*args, "--records", str(folder)]) == 0
    out = capsys.readouterr().out
    assert f"2 game records in {folder} (listed in its index.json)" in out
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["game000000_seed4_random-vs-greedy.json", "game000001_seed4_greedy-vs-random.json", "index.json"]
    before = files_of(folder)
    assert cli_main([*args, "--records", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"qwixx arena: --records: {str(folder)!r} already holds 3 file(s); expected a new or empty folder" in err
    assert files_of(folder) == before
