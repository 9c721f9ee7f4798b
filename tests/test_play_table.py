"""Several people at one table on the play server: seat secrets, join links, the game list,
eviction that never drops a game in play, the event stream, and games kept with ``--store``.

Every request that is refused leaves the game as it was."""

import http.client
import json
import os
import re
import threading
import time

import pytest

pytest.importorskip("starlette", reason="the play extra (starlette) is not installed")
pytest.importorskip("httpx2", reason="Starlette's TestClient needs httpx2 (the test extra)")

from starlette.testclient import TestClient  # noqa: E402

from qwixx_env import replay  # noqa: E402
from qwixx_env.cli import main as cli_main  # noqa: E402
from qwixx_env.core.variant import encode_action  # noqa: E402
from qwixx_env.play import saved  # noqa: E402
from qwixx_env.play.server import SEAT_HEADER, SEATS_HEADER, create_app  # noqa: E402

from conftest import serving  # noqa: E402

TABLE = {  # two people and a bot: Ann at seat 0, Bob at seat 1, greedy at seat 2
    "players": 3, "seed": 5,
    "seats": [{"kind": "human", "name": "Ann"}, {"kind": "human", "name": "Bob"}, {"kind": "bot", "bot": "greedy"}],
}
WHITE = ("white", "lucky")


def create(client, body=TABLE):
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def secrets_of(game):
    return {j["seat"]: j["secret"] for j in game["joins"]}


def view(client, game_id, secret=None):
    headers = {SEAT_HEADER: secret} if secret else {}
    r = client.get(f"/api/games/{game_id}", headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def move(client, game_id, secret, seat, action, status=200):
    r = client.post(f"/api/games/{game_id}/moves", json={"seat": seat, "action": action},
                    headers={SEAT_HEADER: secret})
    assert r.status_code == status, r.text
    return r.json()


def unchanged(client, game_id, secret):
    g = view(client, game_id, secret)
    return {k: g[k] for k in ("snapshot", "decisions", "events_total", "legal", "to_decide", "pending", "over")}


def play(clients, game_id, keys, until=lambda g: g["over"]):
    """Play with one client per person's seat (`keys`: seat -> secret), each deciding its own
    seat's first legal option, until `until` holds; returns every seat's last view."""
    views = {seat: view(clients[seat], game_id, key) for seat, key in keys.items()}
    while not until(next(iter(views.values()))):
        seat = next(iter(views.values()))["to_decide"]
        mine = views[seat]
        move(clients[seat], game_id, keys[seat], seat, mine["legal"][0]["action"])
        views = {s: view(clients[s], game_id, key) for s, key in keys.items()}
    return views


@pytest.fixture
def client():
    with TestClient(create_app(max_games=3)) as c:
        yield c


# --- secrets ------------------------------------------------------------------------------


def test_game_ids_and_seat_secrets_are_128_random_bits(client):
    game = create(client)
    assert re.fullmatch(r"[0-9a-f]{32}", game["id"])  # 16 bytes in hex
    keys = secrets_of(game)
    assert sorted(keys) == [0, 1] and len(set(keys.values())) == 2
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", k) for k in keys.values())  # token_urlsafe(16)
    assert [j["link"] for j in game["joins"]] == [f"/#join={game['id']}.{keys[s]}" for s in (0, 1)]
    assert [(j["seat"], j["name"]) for j in game["joins"]] == [(0, "Ann"), (1, "Bob")]
    assert game["you"] == 0 and [s["kind"] for s in game["seats"]] == ["you", "human", "bot"]


def test_acting_in_another_seat_or_without_a_secret_is_refused(client):
    game = create(client)
    gid, keys = game["id"], secrets_of(game)
    seat = game["to_decide"]
    other = 1 - seat
    action = view(client, gid, keys[seat])["legal"][0]["action"]
    before = unchanged(client, gid, keys[seat])
    for secret, words in [(keys[other], [f"seat {seat}", "its own seat secret", f"not seat {seat}'s"]),
                          ("forged-secret-0123456789", [f"seat {seat}", "not seat"])]:
        message = move(client, gid, secret, seat, action, status=403)["error"]
        assert all(w in message for w in words), message
    r = client.post(f"/api/games/{gid}/moves", json={"seat": seat, "action": action})
    assert r.status_code == 403 and "none was given" in r.json()["error"]
    assert client.get(f"/api/games/{gid}/coach", headers={SEAT_HEADER: "nobody"}).status_code == 403
    assert client.get(f"/api/games/{gid}/coach").status_code == 403
    assert client.get(f"/api/games/{gid}", headers={SEAT_HEADER: "nobody"}).status_code == 403
    assert move(client, gid, keys[seat], 2, 44, status=403)["error"].startswith("move: seat 2 is played by the bot")
    assert unchanged(client, gid, keys[seat]) == before
    spectator = view(client, gid)  # no secret: the table, but nobody's options or pending choice
    assert spectator["you"] is None and spectator["legal"] == [] and spectator["pending"] == []


def test_the_game_list_shows_only_the_games_of_the_secrets_held(client):
    ann_game, solo = create(client), create(client, {"players": 1, "bots": [], "seed": 1})
    mine = {SEATS_HEADER: f"{secrets_of(ann_game)[1]}, {secrets_of(solo)[0]}"}
    listed = client.get("/api/games", headers=mine).json()
    assert [(g["id"], g["yours"]) for g in listed["games"]] == [(ann_game["id"], [1]), (solo["id"], [0])]
    assert listed["held"] == 2
    assert client.get("/api/games").json()["games"] == []
    assert client.get("/api/games", headers={SEATS_HEADER: "forged,also-forged"}).json()["games"] == []


# --- eviction -----------------------------------------------------------------------------


def test_a_full_server_drops_finished_games_and_refuses_when_all_are_in_play():
    with TestClient(create_app(max_games=2)) as c:
        first, second = create(c, {"players": 1, "bots": [], "seed": 1}), create(c)
        held = {SEATS_HEADER: ",".join([*secrets_of(first).values(), *secrets_of(second).values()])}
        listed = c.get("/api/games", headers=held).json()["games"]
        r = c.post("/api/games", json=TABLE)
        assert r.status_code == 503
        assert "the server holds 2 games in play; finish or leave one" in r.json()["error"]
        assert c.get("/api/games", headers=held).json()["games"] == listed  # nothing changed
        play({0: c}, first["id"], secrets_of(first))  # the solo game ends: now it may go
        third = create(c)
        assert third["dropped"] == [first["id"]]
        assert c.get(f"/api/games/{second['id']}").status_code == 200  # the game in play stays
        assert c.get(f"/api/games/{first['id']}").status_code == 404


def test_a_full_server_drops_the_game_idle_longest_beyond_the_idle_limit():
    with TestClient(create_app(max_games=2, idle_limit=0.0)) as c:
        older, newer = create(c), create(c)
        time.sleep(0.01)
        move(c, newer["id"], secrets_of(newer)[0], 0, newer["legal"][0]["action"])  # newer was played last
        assert create(c)["dropped"] == [older["id"]]


# --- two people, one bot ------------------------------------------------------------------


@pytest.mark.slow
def test_two_people_and_a_bot_play_to_the_end_from_two_clients(client):
    """Ann and Bob play from their own clients; at every step each sees only their own pending
    white choice, and another seat's white choice only once the white action is revealed."""
    game = create(client)
    gid, keys = game["id"], secrets_of(game)
    with TestClient(client.app) as bob:
        clients = {0: client, 1: bob}
        views = {s: view(clients[s], gid, keys[s]) for s in (0, 1)}
        chosen_unrevealed = 0
        while not views[0]["over"]:
            seat = views[0]["to_decide"]
            assert views[1 - seat]["legal"] == []  # the other page offers nothing
            legal = views[seat]["legal"]
            move(clients[seat], gid, keys[seat], seat, legal[0]["action"])
            views = {s: view(clients[s], gid, keys[s]) for s in (0, 1)}
            for s, v in views.items():
                assert all(p["seat"] == s for p in v["pending"])
                for e in v["events"]:
                    if e["kind"] == "decision" and e["phase"] in WHITE and e["seat"] != s:
                        assert e["hidden"] and e["action"] is None and e["mark"] is None
            if views[seat]["pending"] and views[1 - seat]["snapshot"]["phase"] in WHITE:
                # the other sees that this seat chose, not what: its sheet is as at the roll
                chosen_unrevealed += 1
                assert views[1 - seat]["pending"] == []
                assert views[1 - seat]["snapshot"] == views[seat]["snapshot"]
        assert chosen_unrevealed > 0
        reveals = [e for e in views[0]["events"] if e["kind"] == "white"]
        assert reveals and all(sorted(c["seat"] for c in r["choices"]) == [0, 1, 2] for r in reveals
                               if len(r["choices"]) == 3)
        rec = client.get(f"/api/games/{gid}/record").json()
        final = replay(rec).snapshot()
        assert views[0]["snapshot"] == views[1]["snapshot"] == final
        assert [p["score"] for p in final["players"]] == [p["score"] for p in views[1]["snapshot"]["players"]]


# --- the event stream ---------------------------------------------------------------------


def test_a_lucky_tie_is_hidden_from_the_other_seats_until_the_reveal(client):
    """Longo, seed 8: Ann's white cross of red 8 makes her lucky cross (8 is one of her lucky
    numbers) tie between three rows, so she decides twice. Bob, and a spectator, must not be
    able to tell: nothing changes for them between her two decisions, and afterwards they see
    one hidden white decision of hers, never a lucky phase; Ann sees both of her choices."""
    game = create(client, {"players": 2, "variant": "longo", "lucky": "bonus", "seed": 8,
                           "seats": [{"kind": "human", "name": "Ann"}, {"kind": "human", "name": "Bob"}]})
    gid, keys = game["id"], secrets_of(game)
    r8, g16 = encode_action(("red", 8), "longo"), encode_action(("green", 16), "longo")
    before = {who: unchanged(client, gid, keys.get(who)) for who in (1, None)}
    ann = move(client, gid, keys[0], 0, r8)
    assert (ann["snapshot"]["phase"], ann["to_decide"], ann["decisions"]) == ("lucky", 0, 1)  # hers to break
    for who in (1, None):  # Bob's page and a spectator's: as if Ann were still choosing her white cross
        assert unchanged(client, gid, keys.get(who)) == before[who]
        assert view(client, gid, keys.get(who))["snapshot"]["phase"] == "white"
    ann = move(client, gid, keys[0], 0, g16)
    mine = [e for e in ann["events"] if e["kind"] == "decision" and e["seat"] == 0]
    assert [(e["phase"], e["action"], e["lucky"]["action"]) for e in mine] == [("white", r8, g16)]
    for who in (1, None):
        seen = view(client, gid, keys.get(who))
        assert seen["decisions"] == 1 and seen["to_decide"] == 1
        hers = [e for e in seen["events"] if e["kind"] == "decision" and e["seat"] == 0]
        assert len(hers) == 1 and hers[0]["hidden"] and "lucky" not in hers[0]
        assert all(e.get("phase") != "lucky" and e.get("snapshot", {}).get("phase") != "lucky" for e in seen["events"])
    bob = move(client, gid, keys[1], 1, view(client, gid, keys[1])["legal"][-1]["action"])  # Bob passes: the reveal
    reveal = next(e for e in bob["events"] if e["kind"] == "white")
    assert [(c["seat"], c["action"]) for c in reveal["choices"]][:2] == [(0, r8), (0, g16)]  # all told now


def test_the_event_stream_tells_every_page_when_the_game_changes():
    app = create_app(max_games=2)
    with serving(app) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])

        def call(method, path, body=None, headers=None):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            conn.request(method, path, body=json.dumps(body) if body is not None else None,
                         headers={"Content-Type": "application/json", **(headers or {})})
            r = conn.getresponse()
            return json.loads(r.read())

        game = call("POST", "/api/games", TABLE)
        keys = secrets_of(game)
        stream = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        stream.request("GET", f"/api/games/{game['id']}/events")
        r = stream.getresponse()
        assert r.status == 200 and r.getheader("content-type").startswith("text/event-stream")

        def next_data():
            while True:
                line = r.readline().decode()
                if line.startswith("data: "):
                    return json.loads(line[6:])

        assert next_data() == {"version": 0, "over": False}
        seat = game["to_decide"]
        legal = call("GET", f"/api/games/{game['id']}", headers={SEAT_HEADER: keys[seat]})["legal"]
        after = call("POST", f"/api/games/{game['id']}/moves", {"seat": seat, "action": legal[0]["action"]},
                     headers={SEAT_HEADER: keys[seat]})
        assert next_data() == {"version": after["decisions"], "over": False}
        stream.close()


# --- --store ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_stored_game_continues_identically_after_a_restart(tmp_path):
    """Some decisions on one server; a new server on the same folder resumes the game (same
    id, secrets, events): playing on from both with the same decisions ends in the same game."""
    with TestClient(create_app(store=tmp_path)) as first:
        game = create(first)
        gid, keys = game["id"], secrets_of(game)
        play({0: first, 1: first}, gid, keys, until=lambda g: g["decisions"] >= 12)
        assert [p.name for p in tmp_path.iterdir()] == [f"{gid}.json"]
        kept = unchanged(first, gid, keys[1])
        with TestClient(create_app(store=tmp_path)) as second:
            assert second.app.state.store_problems == []
            assert unchanged(second, gid, keys[1]) == kept  # the join link works: the same secret
            ends = [play({0: c, 1: c}, gid, keys)[0] for c in (first, second)]
            assert ends[0]["snapshot"] == ends[1]["snapshot"] and ends[1]["over"]
            rec = second.get(f"/api/games/{gid}/record").json()
            assert [p["score"] for p in replay(rec).snapshot()["players"]] == [
                p["score"] for p in ends[1]["snapshot"]["players"]]
    assert saved.load(tmp_path / f"{gid}.json").over  # the file was rewritten after the last decision


def test_a_stored_game_with_a_lucky_tie_resumes_after_a_restart(tmp_path):
    """Longo, seed 8: Ann's first white choice causes a lucky tie (told as one decision with
    the lucky one); a new server on the same folder resumes the game just after it."""
    body = {"players": 2, "variant": "longo", "lucky": "bonus", "seed": 8,
            "seats": [{"kind": "human", "name": "Ann"}, {"kind": "human", "name": "Bob"}]}
    with TestClient(create_app(store=tmp_path)) as first:
        game = create(first, body)
        gid, keys = game["id"], secrets_of(game)
        move(first, gid, keys[0], 0, encode_action(("red", 8), "longo"))
        move(first, gid, keys[0], 0, encode_action(("green", 16), "longo"))
        move(first, gid, keys[1], 1, view(first, gid, keys[1])["legal"][-1]["action"])  # Bob passes: the reveal
        kept = {who: unchanged(first, gid, keys[who]) for who in (0, 1)}
    with TestClient(create_app(store=tmp_path)) as second:
        assert second.app.state.store_problems == []
        assert {who: unchanged(second, gid, keys[who]) for who in (0, 1)} == kept


def test_nothing_is_written_without_store(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with TestClient(create_app(max_games=2)) as c:
        game = create(c, {"players": 1, "bots": [], "seed": 2})
        play({0: c}, game["id"], secrets_of(game), until=lambda g: g["decisions"] >= 3)
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_is_not_a_folder_is_refused(tmp_path, capsys):
    afile = tmp_path / "games.json"
    afile.write_text("{}")
    with pytest.raises(ValueError, match="--store: got .*games.json.*is not a folder"):
        create_app(store=afile)
    assert cli_main(["serve", "--store", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_kept_file_that_is_not_a_game_is_named_and_left(tmp_path):
    (tmp_path / ("0" * 32 + ".json")).write_text('{"format": "chess/1"}')
    app = create_app(store=tmp_path)
    assert len(app.state.games) == 0
    assert len(app.state.store_problems) == 1 and "format" in app.state.store_problems[0]


def test_a_kept_file_nested_too_deeply_is_named_and_the_other_games_served(tmp_path):
    """A store file of 100,000 nested brackets stopped the server with a RecursionError; now it
    is named, left as it is, and a good kept game beside it is resumed."""
    with TestClient(create_app(store=tmp_path)) as first:
        game = create(first)
        gid, keys = game["id"], secrets_of(game)
        play({0: first, 1: first}, gid, keys, until=lambda g: g["decisions"] >= 4)
        kept = unchanged(first, gid, keys[1])
    deep = tmp_path / ("f" * 32 + ".json")
    deep.write_text("[" * 100_000)
    with TestClient(create_app(store=tmp_path)) as second:
        [problem] = second.app.state.store_problems
        assert str(deep) in problem and "nested too deeply" in problem
        assert unchanged(second, gid, keys[1]) == kept
    assert deep.read_text() == "[" * 100_000


@pytest.fixture
def kept(tmp_path):
    """A store folder holding one game four decisions in: its id, its seats' secrets and
    Bob's view of it, which every store test below checks is resumed unchanged."""
    with TestClient(create_app(store=tmp_path)) as c:
        game = create(c)
        gid, keys = game["id"], secrets_of(game)
        play({0: c, 1: c}, gid, keys, until=lambda g: g["decisions"] >= 4)
        return gid, keys, unchanged(c, gid, keys[1])


def resumed(folder):
    """A new server on `folder`, made in a thread that must end: a store file that hangs the
    read (a named pipe) fails the test instead of hanging it."""
    made = []
    maker = threading.Thread(target=lambda: made.append(create_app(store=folder)), daemon=True)
    maker.start()
    maker.join(timeout=30)
    assert made, "the server did not start: reading the store hung or failed"
    return made[0]


def _make_odd(path, kind, tmp_path, kept_file):
    if kind == "a dangling symbolic link":
        path.symlink_to(tmp_path / "nowhere.json")
    elif kind == "a symbolic link loop":
        path.symlink_to(path)
    elif kind == "a symbolic link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "a symbolic link to a kept game":
        path.symlink_to(kept_file)
    elif kind == "a named pipe (FIFO)":
        os.mkfifo(path)
    elif kind == "a folder":
        path.mkdir()
    elif kind == "over the size limit":
        with open(path, "wb") as f:
            f.truncate(saved.MAX_FILE + 1)  # sparse: no disk, nothing to read unless read
    elif kind == "owned by another user":
        path.write_text("{}")
        os.chown(path, 12345, -1)


ODD_FILES = {  # each odd file, and what the warning calls it
    "a dangling symbolic link": "a symbolic link", "a symbolic link loop": "a symbolic link",
    "a symbolic link to /dev/zero": "a symbolic link", "a symbolic link to a kept game": "a symbolic link",
    "a named pipe (FIFO)": "a named pipe (FIFO)", "a folder": "a folder",
    "over the size limit": f"{saved.MAX_FILE + 1} bytes, over the limit of {saved.MAX_FILE} bytes",
    "owned by another user": "owned by user 12345",
}


@pytest.mark.skipif(os.name != "posix", reason="symbolic links, named pipes and owners as POSIX has them")
@pytest.mark.parametrize("kind", ODD_FILES)
def test_an_odd_file_in_the_store_is_named_and_skipped(tmp_path, kept, kind):
    """A dangling symlink or a loop stopped the server (the sort key's stat), a named pipe
    hung it before it listened, a symlink to /dev/zero grew its memory without bound and a
    200 MB file was read whole. The store reads only regular files it owns, within a size
    limit: anything else is named, left as it is, and the kept game beside it resumed."""
    if kind == "owned by another user" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    gid, keys, before = kept
    odd = tmp_path / ("e" * 32 + ".json")
    _make_odd(odd, kind, tmp_path, tmp_path / f"{gid}.json")
    app = resumed(tmp_path)
    [problem] = app.state.store_problems
    assert problem.startswith(f"{odd}: skipped: {ODD_FILES[kind]}"), problem
    with TestClient(app) as c:
        assert [g for g, _ in c.app.state.games.items()] == [gid]
        assert unchanged(c, gid, keys[1]) == before
    assert os.path.lexists(odd)


SECRET = "s" * 22
BAD_FIELDS = [  # (field, value): each as a kept file might hold it, none as `save` writes it
    ("seat_secrets", []), ("seat_secrets", None), ("seat_secrets", {"0": 12345}), ("seat_secrets", {"0": ""}),
    ("seat_secrets", {"zero": SECRET, "1": SECRET}), ("seat_secrets", {"0": SECRET}),
    ("record", []), ("record", {"decisions": [[0]]}), ("record", {"decisions": [[0, True]]}),
    ("record", {"decisions": "all of them"}), ("record", {}),
    ("new_game", None), ("new_game", {"players": 9}), ("id", None), ("format", None),
]


@pytest.mark.parametrize("field, value", BAD_FIELDS)
def test_a_kept_game_with_a_bad_field_is_named_and_skipped(tmp_path, kept, field, value):
    """"seat_secrets": [], null or {"0": 12345} stopped the server (AttributeError). Every field
    the store uses is checked: a bad one is named with its file, which is left as it is, and
    the other kept game is resumed unchanged."""
    gid, keys, before = kept
    data = json.loads((tmp_path / f"{gid}.json").read_text())
    odd = tmp_path / ("e" * 32 + ".json")
    odd.write_text(json.dumps({**data, "id": "e" * 32, field: value}))
    app = resumed(tmp_path)
    [problem] = app.state.store_problems
    assert problem.startswith(f"{odd}: not resumed: {field}: "), problem
    assert len(problem) < len(str(odd)) + 300
    with TestClient(app) as c:
        assert [g for g, _ in c.app.state.games.items()] == [gid]
        assert unchanged(c, gid, keys[1]) == before


def test_stale_temporary_files_of_killed_saves_are_removed_at_start(tmp_path, kept):
    """A save killed between its temporary file and the rename leaves `.<id>.json.*.tmp`:
    nothing removed them. The server removes its own at start, and nothing else."""
    gid, keys, before = kept
    stale = [tmp_path / f".{gid}.json.k2x_9q4r.tmp", tmp_path / f".{'e' * 32}.json.abcdefgh.tmp"]
    for path in stale:
        path.write_text('{"format": "qwixx_env.play-game/1"')
    others = [tmp_path / "notes.tmp", tmp_path / ".notes.json.abcdefgh.tmp"]
    for path in others:
        path.write_text("mine")
    app = resumed(tmp_path)
    assert app.state.store_problems == []
    assert not any(path.exists() for path in stale) and all(path.read_text() == "mine" for path in others)
    with TestClient(app) as c:
        assert unchanged(c, gid, keys[1]) == before


@pytest.mark.skipif(os.name != "posix", reason="folder modes as POSIX has them")
def test_the_store_folder_is_made_private_or_a_warning_says_why_not(tmp_path, kept, monkeypatch):
    """The store's folder kept its 0755 silently; its files' names are the game ids, a
    spectator's way in. It is made 0700 at start, or a warning says it could not be."""
    gid, keys, before = kept
    tmp_path.chmod(0o755)
    assert resumed(tmp_path).state.store_problems == []
    assert tmp_path.stat().st_mode & 0o777 == 0o700
    tmp_path.chmod(0o755)

    def refuse(path, mode):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(saved.os, "chmod", refuse)
    app = resumed(tmp_path)
    [problem] = app.state.store_problems
    assert problem.startswith(f"{tmp_path}: mode 0755") and "0700" in problem and "Operation not permitted" in problem
    with TestClient(app) as c:
        assert unchanged(c, gid, keys[1]) == before


def test_kept_game_files_are_readable_by_their_owner_only(tmp_path):
    """A kept game holds every person's seat secret: 0600, not the 0644 of package data."""
    with TestClient(create_app(store=tmp_path)) as c:
        game = create(c)
        play({0: c, 1: c}, game["id"], secrets_of(game), until=lambda g: g["decisions"] >= 2)
    [kept] = tmp_path.iterdir()
    assert kept.stat().st_mode & 0o777 == 0o600
