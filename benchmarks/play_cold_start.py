"""The play server's first minutes on a fresh install: how long requests take, when games begin.

The script starts ``qwixx serve`` in a fresh process on 127.0.0.1 at a free port, with every
cache empty: ``NUMBA_CACHE_DIR`` (the compiled kernels) and ``QWIXX_ENV_CACHE`` (the solo
solver's table) each point at a new temporary folder, as on a fresh install. As soon as the
server listens, a scripted client does what a page does:

* ``GET /api/info`` once, then again every ``--info-every`` seconds until the end;
* `GAMES`: 12 new games (mixed variants, player counts and bots, the pretrained ones and
  ``solo_optimal`` included), one every ``--stagger`` seconds, each in its own thread, which
  then looks at its game (``GET /api/games/{id}``) every ``--poll`` seconds until it has
  begun, and then plays ``--moves`` decisions (its first legal option), each after asking the
  coach and looking at the game again.

Every request is timed (from sending it to the whole answer read). The results: the time the
server took to listen, every request's duration (the slowest overall and per kind), and for
each game the seconds from the server's start until it began. A request that waits on the
compiler shows here as a slow request; a game that waits for what it needs shows as a late
start, with its requests answered at once. The load average at the start and at the end is
recorded: the machine may be shared.

Run: ``python benchmarks/play_cold_start.py --label after [--tree PATH] [--json PATH]``.
``--tree`` runs the server from another checkout (its ``qwixx_env`` first on PYTHONPATH), to
measure an older version with the same client: ``git worktree add /tmp/base <commit>`` then
``--tree /tmp/base --label before``. Each label's run is kept in the JSON under ``runs``
(default: benchmarks/results/play_cold_start.json); running a label again replaces it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "play_cold_start.json"
SEAT_HEADER = "X-Qwixx-Seat"

# The 12 game starts: a new-game request each (the person at seat 0, bots after).
GAMES: list[dict[str, Any]] = [
    {"variant": "classic", "players": 2, "bots": ["greedy"]},
    {"variant": "classic", "players": 1, "bots": []},
    {"variant": "classic", "players": 2, "bots": ["heuristic"]},
    {"variant": "longo", "players": 2, "lucky": "bonus", "bots": ["heuristic"]},
    {"variant": "classic", "players": 3, "bots": ["random", "greedy"]},
    {"variant": "longo", "players": 4, "lucky": "instead", "bots": ["greedy", "heuristic", "random"]},
    {"variant": "classic", "players": 2, "bots": ["ppo-classic-2p"]},
    {"variant": "longo", "players": 2, "lucky": "bonus", "bots": ["ppo-longo-2p"]},
    {"variant": "classic", "players": 2, "bots": ["rollout"]},
    {"variant": "classic", "players": 2, "bots": ["afterstate"]},
    {"variant": "classic", "players": 2, "bots": ["selfplay-classic-2p"]},
    {"variant": "classic", "players": 2, "bots": ["solo_optimal"]},
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Timings:
    """Every request's kind, path, status, start (seconds after the server was started) and duration."""

    def __init__(self, t0: float):
        self.t0 = t0
        self.rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def call(self, port: int, kind: str, method: str, path: str, body: Any = None,
             secret: str | None = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if secret:
            headers[SEAT_HEADER] = secret
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1200)
        start = time.monotonic()
        try:
            conn.request(method, path, None if body is None else json.dumps(body), headers)
            answer = conn.getresponse()
            status, data = answer.status, json.loads(answer.read() or b"null")
        finally:
            conn.close()
        seconds = time.monotonic() - start
        with self._lock:
            self.rows.append({"kind": kind, "path": path.split("?")[0], "status": status,
                              "at_s": round(start - self.t0, 3), "seconds": round(seconds, 4)})
        return status, data


def play_one(port: int, timings: Timings, body: dict[str, Any], poll: float, moves: int,
             deadline: float, out: dict[str, Any]) -> None:
    """Start one game, look at it until it begins, then play `moves` decisions, each after
    asking the coach and looking again."""
    status, view = timings.call(port, "new game", "POST", "/api/games", body)
    out.update(request=body, created_status=status)
    if status != 201:
        out["error"] = view
        return
    game_id, secret = view["id"], view["joins"][0]["secret"]
    while not view.get("begun") and time.monotonic() < deadline:
        time.sleep(poll)
        status, view = timings.call(port, "look at game", "GET", f"/api/games/{game_id}", secret=secret)
    if not view.get("begun"):
        out["began_after_s"] = None
        return
    out["began_after_s"] = round(time.monotonic() - timings.t0, 2)
    for _ in range(moves):
        if view.get("over") or view.get("to_decide") != 0 or not view.get("legal"):
            break
        timings.call(port, "coach", "GET", f"/api/games/{game_id}/coach", secret=secret)  # 200, or 503 getting ready
        status, view = timings.call(port, "look at game", "GET", f"/api/games/{game_id}", secret=secret)
        move = {"seat": 0, "action": view["legal"][0]["action"], "decision": view["decisions"]}
        status, view = timings.call(port, "move", "POST", f"/api/games/{game_id}/moves", move, secret=secret)
        if status != 200:
            out["move_error"] = view
            break
    out["moves_played"] = True


def measure(tree: Path, stagger: float, poll: float, moves: int, info_every: float, max_seconds: float) -> dict:
    caches = tempfile.mkdtemp(prefix="play-cold-start-")
    env = {**os.environ, "PYTHONPATH": str(tree), "NUMBA_CACHE_DIR": f"{caches}/numba",
           "QWIXX_ENV_CACHE": f"{caches}/qwixx_env"}
    port = free_port()
    serve = "import sys; from qwixx_env.cli import main; sys.exit(main(sys.argv[1:]))"
    load_before = os.getloadavg()
    t0 = time.monotonic()
    server = subprocess.Popen([sys.executable, "-c", serve, "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tree)
    log: list[str] = []
    listening = threading.Event()

    def read_log() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            log.append(line.rstrip())
            if "the page is at" in line:
                listening.set()

    threading.Thread(target=read_log, daemon=True).start()
    if not listening.wait(600):
        server.kill()
        raise SystemExit("the server did not listen within 600 s:\n" + "\n".join(log))
    listen_s = time.monotonic() - t0
    timings = Timings(t0)
    deadline = t0 + max_seconds
    games: list[dict[str, Any]] = [{} for _ in GAMES]
    done = threading.Event()

    def info_loop() -> None:
        while not done.is_set():
            timings.call(port, "info", "GET", "/api/info")
            done.wait(info_every)

    try:
        timings.call(port, "info", "GET", "/api/info")  # the page's first request
        threading.Thread(target=info_loop, daemon=True).start()
        players = []
        for body, out in zip(GAMES, games):
            seeded = {**body, "seed": len(players)}
            t = threading.Thread(target=play_one, args=(port, timings, seeded, poll, moves, deadline, out))
            t.start()
            players.append(t)
            time.sleep(stagger)
        for t in players:
            t.join(max(deadline - time.monotonic(), 0) + 60)
        done.set()
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
    load_after = os.getloadavg()
    rows = timings.rows
    slowest = max(rows, key=lambda r: r["seconds"])
    by_kind: dict[str, dict[str, Any]] = {}
    for row in rows:
        kind = by_kind.setdefault(row["kind"], {"requests": 0, "max_s": 0.0, "over_1s": 0})
        kind["requests"] += 1
        kind["max_s"] = max(kind["max_s"], row["seconds"])
        kind["over_1s"] += row["seconds"] > 1.0
    began = [g.get("began_after_s") for g in games]
    return {
        "listening_after_s": round(listen_s, 2),
        "requests": len(rows),
        "slowest_request": slowest,
        "requests_over_1s": sum(r["seconds"] > 1.0 for r in rows),
        "by_kind": by_kind,
        "games": [{"bots": g.get("request", {}).get("bots"), "variant": g.get("request", {}).get("variant"),
                   "players": g.get("request", {}).get("players"), "began_after_s": g.get("began_after_s"),
                   **({"error": g["error"]} if "error" in g else {}),
                   **({"move_error": g["move_error"]} if "move_error" in g else {})} for g in games],
        "last_game_began_after_s": None if None in began else max(b for b in began if b is not None),
        "load_average_at_start": [round(x, 2) for x in load_before],
        "load_average_at_end": [round(x, 2) for x in load_after],
        "server_log": log[-20:],
        "requests_over_half_a_second": [r for r in rows if r["seconds"] > 0.5],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", required=True, help="the run's name in the JSON (before, after, ...)")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose qwixx_env the server runs")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("--stagger", type=float, default=1.0, help="seconds between game starts")
    parser.add_argument("--poll", type=float, default=1.5, help="seconds between looks at a game (the page's)")
    parser.add_argument("--moves", type=int, default=2, help="decisions each game plays once begun")
    parser.add_argument("--info-every", type=float, default=5.0)
    parser.add_argument("--max-seconds", type=float, default=1500.0)
    args = parser.parse_args()
    tree = args.tree.resolve()
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    result = measure(tree, args.stagger, args.poll, args.moves, args.info_every, args.max_seconds)
    run = {"label": args.label, "tree_commit": commit, "cpus": os.cpu_count(), "python": platform.python_version(),
           "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "settings": {"games": len(GAMES), "stagger_s": args.stagger, "poll_s": args.poll, "moves": args.moves,
                        "info_every_s": args.info_every, "caches": "empty (fresh NUMBA_CACHE_DIR, QWIXX_ENV_CACHE)"},
           **result}
    old = json.loads(args.json.read_text()) if args.json.exists() else {}
    runs = {**old.get("runs", {}), args.label: run}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"benchmark": "play_cold_start", "runs": runs}, indent=2) + "\n")
    print(f"{args.label}: listening after {run['listening_after_s']} s; slowest request "
          f"{run['slowest_request']['seconds']:.2f} s ({run['slowest_request']['kind']} "
          f"{run['slowest_request']['path']}); {run['requests_over_1s']} of {run['requests']} over 1 s")
    for g in run["games"]:
        print(f"  {g['variant']} {g['players']}p {g['bots']}: began after {g['began_after_s']} s"
              + (f"  error {g['error']}" if "error" in g else ""))
    print(f"load average: {run['load_average_at_start']} -> {run['load_average_at_end']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
