"""Load on the play server: 200 games at once against `greedy`, played to the end over HTTP.

The script starts ``qwixx serve`` (uvicorn) on 127.0.0.1 at a free port in a subprocess, then:

0. **Warm-up** (untimed): a game against each bot below, so that no timing includes loading
   a kernel or a network.
1. **Load**: creates ``--games`` 2-player classic games (seat 1 `greedy`, seeds 0, 1, ...), all held
   by the server at once, and plays them to the end from ``--clients`` threads that take turns
   over the games (each request one decision of the person's seat, a random legal option from a
   per-game generator), so every game is in progress at the same time. Each answer must name
   the game asked for. At the end every game must still be held, over, and its record must hold
   exactly the decisions this script sent for it (nothing lost, nothing mixed up), and
   ``qwixx_env.replay`` of the record must give the final snapshot the last answer showed.
2. **One player**: with the server otherwise idle, one client plays ``--solo-games`` games
   against each non-search bot and times each move (the person's decision and the bots' answers
   up to the person's next turn, over HTTP on loopback).

Bounded: at most ``--max-seconds`` of playing (then it stops and reports what it has) and a
fixed number of requests per game; the server is stopped at the end. Results (median, 95th
percentile and worst response times in milliseconds) go to benchmarks/results/play_load.json.

Run: ``python benchmarks/play_load.py [--games 200] [--clients 16] [--json PATH]`` (needs the
play extra).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import queue
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
MAX_MOVES_PER_GAME = 400  # a 2-player game has well under 100 decisions of one seat


class Client:
    """One keep-alive HTTP connection to the server, timing every request."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(self, method: str, path: str, body: object = None) -> tuple[int, dict, float]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
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


def load(port: int, games: int, clients: int, max_seconds: float) -> dict:
    client = Client(port)
    create_ms, state = [], {}
    for seed in range(games):
        status, view, ms = client.call("POST", "/api/games", {"players": 2, "bots": ["greedy"], "seed": seed})
        assert status == 201, view
        create_ms.append(ms)
        state[view["id"]] = {"view": view, "sent": [], "rng": np.random.default_rng(seed)}
    held = {g["id"] for g in client.call("GET", "/api/games")[1]["games"]}
    assert set(state) <= held, "the server does not hold every game it made"
    todo: queue.Queue[str] = queue.Queue()
    for game_id in state:
        todo.put(game_id)
    move_ms: list[float] = []
    problems: list[str] = []
    lock = threading.Lock()
    deadline = time.time() + max_seconds

    def worker() -> None:
        me = Client(port)
        while time.time() < deadline:
            try:
                game_id = todo.get_nowait()
            except queue.Empty:
                return
            game = state[game_id]
            view = game["view"]
            if view["over"] or len(game["sent"]) >= MAX_MOVES_PER_GAME:
                continue
            action = int(game["rng"].choice([o["action"] for o in view["legal"]]))
            body = {"seat": 0, "action": action, "decision": view["decisions"]}
            status, answer, ms = me.call("POST", f"/api/games/{game_id}/moves", body)
            with lock:
                move_ms.append(ms)
                if status != 200 or answer.get("id") != game_id:
                    problems.append(f"{game_id}: {status} {answer.get('error') or answer.get('id')}")
                    continue
            game["sent"].append(action)
            game["view"] = answer
            todo.put(game_id)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    unfinished = [g for g, s in state.items() if not s["view"]["over"]]
    client = Client(port)  # a new connection: uvicorn closes one left idle for seconds
    held = {g["id"] for g in client.call("GET", "/api/games")[1]["games"]}
    lost = sorted(set(state) - held)
    replay_mismatch, mixed_up = [], []
    for game_id, game in state.items():
        status, record, _ = client.call("GET", f"/api/games/{game_id}/record")
        if status != 200:
            lost.append(game_id)
            continue
        if [a for seat, a in record["decisions"] if seat == 0] != game["sent"]:
            mixed_up.append(game_id)
        if replay(record).snapshot() != game["view"]["snapshot"]:
            replay_mismatch.append(game_id)
    return {
        "games": games,
        "clients": clients,
        "wall_s": round(wall, 2),
        "stopped_by_time_limit": time.time() >= deadline,
        "create": summary(create_ms),
        "move": summary(move_ms),
        "moves_per_s": round(len(move_ms) / wall, 1),
        "finished": games - len(unfinished),
        "unfinished": unfinished,
        "lost": lost,
        "mixed_up": mixed_up,
        "replay_mismatch": replay_mismatch,
        "refused": problems,
        "ok": not (unfinished or lost or mixed_up or replay_mismatch or problems),
    }


def one_player(port: int, solo_games: int) -> dict:
    client = Client(port)
    out = {}
    for bot in SOLO_BOTS:
        ms_all = []
        for seed in range(solo_games):
            status, view, _ = client.call("POST", "/api/games", {"players": 2, "bots": [bot], "seed": 1000 + seed})
            assert status == 201, view
            rng = np.random.default_rng(seed)
            while not view["over"]:
                action = int(rng.choice([o["action"] for o in view["legal"]]))
                status, view, ms = client.call("POST", f"/api/games/{view['id']}/moves", {"seat": 0, "action": action})
                assert status == 200, view
                ms_all.append(ms)
        out[bot] = summary(ms_all)
    return out


def warm_up(port: int) -> None:
    """One game per bot, two moves each, untimed: loads every kernel and network first."""
    client = Client(port)
    for bot in SOLO_BOTS:
        status, view, _ = client.call("POST", "/api/games", {"players": 2, "bots": [bot], "seed": 0})
        for _ in range(2):
            if status == 201 or status == 200:
                status, view, _ = client.call(
                    "POST", f"/api/games/{view['id']}/moves", {"seat": 0, "action": view["legal"][0]["action"]}
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games played at once (default 200)")
    parser.add_argument("--clients", type=int, default=16, help="client threads taking turns over them (default 16)")
    parser.add_argument("--solo-games", type=int, default=3, help="games per bot for the one-player timing")
    parser.add_argument("--max-seconds", type=float, default=600, help="stop playing after this long (default 600)")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"results file (default {RESULTS})")
    args = parser.parse_args(argv)
    port = free_port()
    server = start_server(port, max_games=args.games + len(SOLO_BOTS) * (args.solo_games + 1))
    try:
        warm_up(port)
        result = {
            "benchmark": "play_load",
            "command": "python benchmarks/play_load.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "machine": {
                "python": platform.python_version(), "cpu_count": os.cpu_count(),
                "load_average_at_start": list(os.getloadavg()),
            },
            "server": "qwixx serve (uvicorn, one process) on 127.0.0.1",
            "load": load(port, args.games, args.clients, args.max_seconds),
            "one_player_move": one_player(port, args.solo_games),
        }
    finally:
        server.terminate()
        server.wait(timeout=30)
    write_atomically(args.json, (json.dumps(result, indent=2) + "\n").encode())
    print(json.dumps({k: result[k] for k in ("load", "one_player_move")}, indent=2))
    return 0 if result["load"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
