"""A sheet of your own in every door: a sheet file named by ``--variant`` on the commands
(`qwixx arena`, `qwixx play`, `qwixx bench`, `qwixx solve`, `qwixx serve`), by ``variant:`` in a
training config (relative to the config) and offered by a play server started with it."""

from __future__ import annotations

import io
import json

import pytest

from qwixx_env import benchmark
from qwixx_env.cli import main
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import CLASSIC, Row, Variant
from qwixx_env.training.config import config_from_dict, load_config

UP = tuple(range(2, 13))


def write_sheet(folder, name: str, suffix: str = ".json"):
    """A colour-mixed two-row sheet ('Mixx'-style) written to `folder`; returns its path."""
    rows = (Row("a", UP, ("red", "yellow") * 5 + ("red",)), Row("b", UP[::-1], ("green", "blue") * 5 + ("green",)))
    sheet = Variant(name=name, faces=6, lock_cells=1, lock_threshold=5, score_table=CLASSIC.score_table,
                    rows_to_end=1, rows=rows)
    return sheet.to_file(folder / f"{name}{suffix}")


def test_qwixx_arena_plays_a_sheet_file(tmp_path, capsys):
    path = write_sheet(tmp_path, "doors_arena")
    assert main(["arena", "random", "greedy", "--variant", str(path), "--games", "2", "--workers", "2",
                 "--quiet", "--records", str(tmp_path / "games")]) == 0
    out = capsys.readouterr().out
    assert "doors_arena, 2 player(s): 2 deals" in out
    index = json.loads((tmp_path / "games" / "index.json").read_text())
    assert Variant.from_dict(index["sheet"]) == Variant.from_file(path)


@pytest.mark.parametrize("command", [["arena", "random"], ["play"], ["solve"], ["bench", "random"]])
def test_every_command_refuses_a_sheet_file_that_is_not_there_naming_it(tmp_path, capsys, command):
    assert main([*command, "--variant", str(tmp_path / "nothing.toml")]) == 2
    assert f"--variant: variant file '{tmp_path / 'nothing.toml'}': no such file" in capsys.readouterr().err


def test_qwixx_arena_names_what_it_accepts_for_an_unknown_variant(capsys):
    assert main(["arena", "random", "--variant", "mixx"]) == 2
    assert "--variant: got 'mixx'; expected one of ('classic', 'longo')" in capsys.readouterr().err


def test_qwixx_play_plays_a_sheet_file_from_scripted_input(tmp_path, capsys, monkeypatch):
    path = write_sheet(tmp_path, "doors_play", ".json")
    monkeypatch.setattr("sys.stdin", io.StringIO("p\n" * 300))
    record = tmp_path / "game.json"
    assert main(["play", "--variant", str(path), "--seed", "1", "--record", str(record), "--color", "never"]) == 0
    assert "Game over" in capsys.readouterr().out
    assert json.loads(record.read_text())["options"]["variant"] == "doors_play"


def test_qwixx_solve_says_why_it_cannot_solve_a_sheet_not_of_the_classic_shape(tmp_path, capsys):
    path = write_sheet(tmp_path, "doors_solve")
    assert main(["solve", "--variant", str(path)]) == 2
    assert "the solo solver covers the classic sheet's shape only" in capsys.readouterr().err


def test_a_users_sheet_gets_protocols_of_its_own_marked_as_not_the_packages(tmp_path):
    path = write_sheet(tmp_path, "doors_bench")
    with pytest.raises(ValueError, match=r"protocol: got 'doors_bench-2p'; .*-Np/user"):
        benchmark.protocol("doors_bench-2p")  # not registered yet: no protocol
    assert main(["arena", "random", "--variant", str(path), "--games", "1", "--quiet"]) == 0  # registers it
    proto = benchmark.protocol("doors_bench-3p")
    classic = benchmark.protocol("classic-3p")
    assert proto.name == "doors_bench-3p/user" and proto is not classic and proto.user
    assert benchmark.protocol("doors_bench-3p/user") == proto
    assert [proto.seed(lineup) for lineup in proto.lineups()] == [classic.seed(x) for x in classic.lineups()]
    assert [proto.others(lineup) for lineup in proto.lineups()] == [classic.others(x) for x in classic.lineups()]
    d = proto.describe()
    assert d["user"] is True and Variant.from_dict(d["sheet"]) == Variant.from_file(path)
    assert "user" not in classic.describe()
    assert benchmark.protocol_for(TableOptions(num_players=3, variant="doors_bench")) == proto
    assert "doors_bench-2p/user" in [p.name for p in benchmark.user_protocols()]


def test_qwixx_bench_scores_an_agent_on_a_sheet_file(tmp_path, capsys):
    path = write_sheet(tmp_path, "doors_bench_cli")
    out_json = tmp_path / "bench.json"
    assert main(["bench", "greedy", "--variant", str(path), "--limit", "1", "--workers", "1", "--quiet",
                 "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "doors_bench_cli-2p/user" in out and "a user's sheet: not one of the package's protocols" in out
    result = json.loads(out_json.read_text())["results"][0]
    assert result["definition"]["user"] is True and result["protocol"] == "doors_bench_cli-2p/user"


def test_a_training_config_names_a_sheet_file_relative_to_itself(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    write_sheet(folder, "doors_train")
    (folder / "mixx_2p.yaml").write_text(
        "name: mixx\ntotal_steps: 1024\nvariant: doors_train.json\nnum_envs: 8\n"
        "ppo: {n_steps: 64, batch_size: 256}\nopponents: {scripted: {greedy: 1}}\n"
    )
    cfg = load_config(folder / "mixx_2p.yaml")
    assert cfg.variant == "doors_train" and cfg.table.rules == Variant.from_file(folder / "doors_train.json")
    assert config_from_dict(cfg.to_dict()).variant == "doors_train"  # a run's saved config reads back by name
    with pytest.raises(ValueError, match=r"variant file '.*nothing.json': no such file"):
        config_from_dict({**cfg.to_dict(), "variant": "nothing.json"}, folder)
    with pytest.raises(ValueError, match=r"variant: got 'mixx'; expected one of \('classic', 'longo'\)"):
        config_from_dict({**cfg.to_dict(), "variant": "mixx"})


def test_a_server_started_with_a_sheet_file_offers_it_and_plays_it(tmp_path, monkeypatch):
    pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the test extra)")
    from starlette.testclient import TestClient

    from qwixx_env.play import server

    path = write_sheet(tmp_path, "doors_serve")
    given = {}
    monkeypatch.setattr(server, "serve", lambda **options: given.update(options))
    assert main(["serve", "--variant", str(path)]) == 0  # registered, and handed to the server
    assert given["variants"] == ["classic", "longo", "doors_serve"]
    with TestClient(server.create_app(max_games=3, variants=given["variants"])) as client:
        info = client.get("/api/info").json()
        assert info["variants"] == ["classic", "longo", "doors_serve"]
        mine = next(s for s in info["sheets"] if s["name"] == "doors_serve")
        assert mine["lucky_numbers"] is False and "a sheet of your own" in mine["about"]
        assert any(t["variant"] == "doors_serve" for b in info["bots"] for t in b["tables"])
        r = client.post("/api/games", json={"variant": "doors_serve", "players": 2, "bots": ["greedy"], "seed": 1})
        assert r.status_code == 201, r.text
        assert r.json()["sheet"]["row_names"] == ["a", "b"]
        record = client.get(f"/api/games/{r.json()['id']}/record").json()
        assert record["sheet"]["name"] == "doors_serve"  # the game's record carries its sheet
        assert client.post("/api/replays", json=record).status_code == 201  # and the viewer opens it
        other = {**record, "sheet": {**record["sheet"], "name": "doors_elsewhere"}}
        r = client.post("/api/replays", json=other)  # a request never registers a sheet
        assert r.status_code == 400 and "record sheet: a sheet named 'doors_elsewhere', which this server does " \
                                        "not know" in r.text
    with TestClient(server.create_app(max_games=3)) as client:  # a server not given the sheet does not offer it
        r = client.post("/api/games", json={"variant": "doors_serve", "players": 2, "bots": ["greedy"]})
        assert r.status_code == 400 and "variant: got 'doors_serve'; expected one of ('classic', 'longo')" in r.text
