"""Load on the play server: many tables at once, each client on its own connection, over HTTP.

The script starts ``qwixx serve`` (uvicorn) on 127.0.0.1 at a free port in a subprocess,
holding exactly ``--games`` games (``--max-games``), then:

0. **Warm-up** (untimed): a game against each bot below, played to the end, so that no timing
   includes loading a kernel or a network.
1. **Load**: creates ``--games`` tables, all in play at once: every ``--shared-every``-th is a
   3-player table of two people and `greedy` (two clients, one per person's seat), the others a
   person against `greedy`. Every client is its own thread with its own keep-alive connection,
   all playing at the same time; a person at a table of two follows the game through its
   event stream (``GET /api/games/{id}/events``, a second connection) and moves on its turn,
   as the page does. Each request carries the seat's secret; every decision is a random legal
   option from a per-seat generator.
   With every game held in play (before the play starts), one more new game must be refused
   (503) and change nothing.
2. **Eviction**: once they are over, ``--games // 2`` more tables are played the same way,
   each new game making room by dropping a finished one.

At the end of each round every game's record must hold exactly the decisions each client
sent for its seat (nothing lost, nothing mixed up), and ``qwixx_env.replay`` of the record must
give the final snapshot the last answer showed. Then, with the server otherwise idle, one client
plays ``--solo-games`` games against each non-search bot and times each move (the person's
decision and the bots' answers up to the person's next turn, over HTTP on loopback).

Bounded: at most ``--max-seconds`` of playing per round (then it stops and reports what it has)
and a fixed number of requests per seat; the server is stopped at the end. Results (median,
95th percentile and worst response times in milliseconds) go to
benchmarks/results/play_load.json.

Run: ``python benchmarks/play_load.py [--games 200] [--shared-every 3] [--json PATH]`` (needs
the play extra).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from qwixx_env import replay
from qwixx_env.files import write_atomically

RESULTS = Path(__file__).resolve().parent / "results" / "play_load.json"
SOLO_BOTS = ("random", "greedy", "heuristic", "afterstate", "ppo-classic-2p")
MAX_MOVES_PER_SEAT = 400  # a game has well under 100 decisions of one seat
SEAT = "X-Qwixx-Seat"
SHARED = {"players": 3, "seats": [{"kind": "human", "name": "Ann"}, {"kind": "human", "name": "Bob"},
                                  {"kind": "bot", "bot": "greedy"}]}


class Client:
    """One keep-alive HTTP connection to the server, timing every request."""

    def __init__(self, port: int):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, path: str, body: object = None, secret: str | None = None) -> tuple[int, dict, float]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if secret is not None:
            headers[SEAT] = secret
        start = time.perf_counter()
        try:
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # uvicorn closes a connection left idle for seconds (a person waiting for their
            # turn); the request was not read, so open a new one and send it again, as a browser does
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            start = time.perf_counter()
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
        payload = json.loads(response.read())
        return response.status, payload, (time.perf_counter() - start) * 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, max_games: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "qwixx_env.cli", "serve", "--port", str(port), "--max-games", str(max_games)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 600  # a cold cache compiles the kernels and solves the solo table first
    while time.time() < deadline and server.poll() is None:
        try:
            status, info, _ = Client(port).call("GET", "/api/info")
            # measured once the server has prepared what games need (its "getting ready" is not load)
            if status == 200 and all(item["state"] in ("ready", "failed") for item in info["ready"].values()):
                return server
        except OSError:
            pass
        time.sleep(0.25)
    server.terminate()
    raise SystemExit(f"the server did not answer on port {port}: {server.stdout.read() if server.stdout else ''}")


def summary(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "requests": len(ordered),
        "median_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "max_ms": round(ordered[-1], 2),
    }


class Seat:
    """One person at one table: plays its seat to the end on its own connection, timing its
    moves; at a table of several people it waits for its turn on the game's event stream."""

    def __init__(self, port: int, view: dict, seat: int, secret: str, rng: np.random.Generator, shared: bool):
        self.port, self.game_id, self.seat, self.secret, self.rng = port, view["id"], seat, secret, rng
        self.shared = shared
        self.view = view
        self.sent: list[int] = []
        self.move_ms: list[float] = []
        self.problems: list[str] = []

    def play(self, deadline: float) -> None:
        conn = Client(self.port)
        stream = self._open_stream() if self.shared else None
        view = conn.call("GET", f"/api/games/{self.game_id}", secret=self.secret)[1]
        while not view["over"] and time.time() < deadline and len(self.sent) < MAX_MOVES_PER_SEAT:
            if view["to_decide"] != self.seat:
                stream = self._wait_past(stream, view["decisions"])
                view = conn.call("GET", f"/api/games/{self.game_id}", secret=self.secret)[1]
                continue
            action = int(self.rng.choice([o["action"] for o in view["legal"]]))
            body = {"seat": self.seat, "action": action, "decision": view["decisions"]}
            status, answer, ms = conn.call("POST", f"/api/games/{self.game_id}/moves", body, self.secret)
            self.move_ms.append(ms)
            if status != 200 or answer.get("id") != self.game_id:
                self.problems.append(f"{self.game_id} seat {self.seat}: {status} {answer.get('error')}")
                return
            self.sent.append(action)
            view = answer
        self.view = view

    def _open_stream(self) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.request("GET", f"/api/games/{self.game_id}/events")
        return conn.getresponse()

    def _wait_past(self, stream: http.client.HTTPResponse | None, version: int) -> http.client.HTTPResponse:
        """Read the event stream until it names a version past `version` (reopening it when the
        server ends it); returns the stream to read on."""
        while True:
            if stream is None:
                stream = self._open_stream()
            line = stream.readline()
            if not line:  # the server ends a quiet stream; the page reconnects, so does this
                stream = None
                continue
            if line.startswith(b"data: ") and json.loads(line[6:])["version"] > version:
                return stream


def play_round(port: int, games: int, shared_every: int, seed0: int, max_seconds: float, check_full: bool) -> dict:
    """Create `games` tables (every `shared_every`-th of two people), then play them all at
    once, one thread and connection per person; check every record at the end. With
    `check_full`, the server (now full of games in play) must refuse one more first."""
    client = Client(port)
    create_ms, seats, dropped = [], [], []
    for g in range(games):
        shared = shared_every > 0 and g % shared_every == 0
        body = {**SHARED, "seed": seed0 + g} if shared else {"players": 2, "bots": ["greedy"], "seed": seed0 + g}
        status, view, ms = client.call("POST", "/api/games", body)
        assert status == 201, view
        create_ms.append(ms)
        dropped += view["dropped"]
        for join in view["joins"]:
            rng = np.random.default_rng([seed0 + g, join["seat"]])
            seats.append(Seat(port, view, join["seat"], join["secret"], rng, shared))
    full = refused_when_full(port) if check_full else None
    deadline = time.time() + max_seconds
    threads = [threading.Thread(target=seat.play, args=(deadline,)) for seat in seats]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    by_game: dict[str, list[Seat]] = {}
    for seat in seats:
        by_game.setdefault(seat.game_id, []).append(seat)
    client = Client(port)  # a new connection: uvicorn closes one left idle for seconds
    unfinished, lost, mixed_up, replay_mismatch = [], [], [], []
    for game_id, players in by_game.items():
        status, record, _ = client.call("GET", f"/api/games/{game_id}/record")
        if status != 200:
            lost.append(game_id)
            continue
        if not all(p.view["over"] for p in players):
            unfinished.append(game_id)
        for p in players:
            if [a for seat, a in record["decisions"] if seat == p.seat] != p.sent:
                mixed_up.append(f"{game_id} seat {p.seat}")
        if replay(record).snapshot() != max((p.view for p in players), key=lambda v: v["decisions"])["snapshot"]:
            replay_mismatch.append(game_id)
    shared_ms = [ms for s in seats if s.shared for ms in s.move_ms]
    alone_ms = [ms for s in seats if not s.shared for ms in s.move_ms]
    problems = [p for s in seats for p in s.problems]
    return {
        "tables": games,
        "tables_of_two_people": sum(1 for players in by_game.values() if len(players) == 2),
        "clients": len(seats),
        "wall_s": round(wall, 2),
        "stopped_by_time_limit": time.time() >= deadline,
        "create": summary(create_ms),
        "dropped_to_make_room": len(dropped),
        "move": summary(shared_ms + alone_ms),
        "move_at_a_table_of_two_people": summary(shared_ms) if shared_ms else None,
        "move_against_a_bot": summary(alone_ms) if alone_ms else None,
        "moves_per_s": round(len(shared_ms + alone_ms) / wall, 1),
        "finished": len(by_game) - len(unfinished) - len(lost),
        "unfinished": unfinished,
        "lost": lost,
        "mixed_up": mixed_up,
        "replay_mismatch": replay_mismatch,
        "refused": problems,
        "full_server_refuses": full,
        "ok": not (unfinished or lost or mixed_up or replay_mismatch or problems) and (full is None or full["ok"]),
    }


def refused_when_full(port: int) -> dict:
    """With every game held in play, one more is refused (503) and the list is unchanged."""
    client = Client(port)
    held = client.call("GET", "/api/info")[1]["games_held"]
    status, answer, ms = client.call("POST", "/api/games", {"players": 1, "bots": [], "seed": 0})
    after = client.call("GET", "/api/info")[1]["games_held"]
    return {"status": status, "error": answer.get("error"), "ms": round(ms, 2), "held_before": held,
            "held_after": after, "ok": status == 503 and held == after}


def one_player(port: int, solo_games: int) -> dict:
    client = Client(port)
    out = {}
    for bot in SOLO_BOTS:
        ms_all = []
        for seed in range(solo_games):
            status, view, _ = client.call("POST", "/api/games", {"players": 2, "bots": [bot], "seed": 1000 + seed})
            assert status == 201, view
            secret = view["joins"][0]["secret"]
            rng = np.random.default_rng(seed)
            while not view["over"]:
                action = int(rng.choice([o["action"] for o in view["legal"]]))
                status, view, ms = client.call(
                    "POST", f"/api/games/{view['id']}/moves", {"seat": 0, "action": action}, secret
                )
                assert status == 200, view
                ms_all.append(ms)
        out[bot] = summary(ms_all)
    return out


def warm_up(port: int) -> None:
    """One game per bot played to the end, untimed: loads every kernel and network first (and
    leaves only finished games, which a full server may drop)."""
    client = Client(port)
    for bot in SOLO_BOTS:
        status, view, _ = client.call("POST", "/api/games", {"players": 2, "bots": [bot], "seed": 0})
        assert status == 201, view
        secret = view["joins"][0]["secret"]
        while not view["over"]:
            body = {"seat": 0, "action": view["legal"][-1]["action"]}  # pass: a short game
            status, view, _ = client.call("POST", f"/api/games/{view['id']}/moves", body, secret)
            assert status == 200, view


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="tables in play at once; the server holds as many "
                        "(default 200)")
    parser.add_argument("--shared-every", type=int, default=3,
                        help="every Nth table is two people and a bot (default 3; 0: none)")
    parser.add_argument("--solo-games", type=int, default=3, help="games per bot for the one-player timing")
    parser.add_argument("--max-seconds", type=float, default=600, help="stop a round after this long (default 600)")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args(argv)
    port = free_port()
    server = start_server(port, max_games=args.games)
    try:
        warm_up(port)
        # every table in play at once: the full server refuses one more, then they are played
        first = play_round(port, args.games, args.shared_every, 0, args.max_seconds, check_full=True)
        # all over now: each new table makes room by dropping a finished one
        again = play_round(port, args.games // 2, args.shared_every, 10_000, args.max_seconds, check_full=False)
        again["ok"] = again["ok"] and again["dropped_to_make_room"] == args.games // 2
        result = {
            "benchmark": "play_load",
            "command": "python benchmarks/play_load.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "machine": {
                "python": platform.python_version(), "cpu_count": os.cpu_count(),
                "load_average_at_start": list(os.getloadavg()),
            },
            "server": f"qwixx serve --max-games {args.games} (uvicorn, one process) on 127.0.0.1",
            "load": first,
            "after_eviction": again,
            "one_player_move": one_player(port, args.solo_games),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
    write_atomically(args.json, (json.dumps(result, indent=2) + "\n").encode())
    print(json.dumps({k: result[k] for k in ("load", "after_eviction", "one_player_move")}, indent=2))
    return 0 if first["ok"] and again["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
