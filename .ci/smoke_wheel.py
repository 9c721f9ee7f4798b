"""The installed wheel as a user gets it (run by .ci/test-wheel, from an empty folder outside the tree).

``python .ci/smoke_wheel.py STAGE README.md docs/training.md`` with the interpreter of a fresh venv
holding the wheel; .ci/test-wheel runs the three stages in turn, installing more between them:

- ``core``: the wheel alone (no extra, no torch, no rich). The README's Python snippets (its
  fenced ```python blocks, read from the file so that they cannot drift), ``qwixx --version``
  against the metadata, ``qwixx arena`` as plain text, the environment's demo, a pretrained bot
  loaded and played, ``qwixx-train`` without the train extra (--help and --list work, a run
  and --show name the extra), the shipped training configs, and a sheet of your own: the
  worked example of docs/environment.md's "Sheets of your own", written as a file in this
  folder, through ``qwixx arena`` (its records kept), ``qwixx play`` (scripted input),
  ``qwixx bench`` (a few deals of its solo protocol) and ``replay`` in a fresh process.
- ``arena``: with the ``arena`` extra: ``qwixx arena --png``.
- ``play``: with the ``play`` extra: ``qwixx serve --variant mixx.toml`` (the core stage's sheet
  file) on a free port, a game of that sheet played over HTTP against a bot, its record replayed
  in a fresh process, the server stopped with Ctrl-C.
- ``train``: with torch and the ``train`` extra: the training guide's first ```bash block, every
  line run as written in this folder (the config that ``--show`` writes is edited down to a few
  thousand steps between, as the guide invites; the full run of a shipped config and
  TensorBoard's server are stopped once they are under way), then the guide's quick publish;
  then that small config again naming the sheet file (``variant: mixx.toml``), trained into
  ``runs/mixx``, its policy carrying the sheet.

Each check prints a line; the first that fails raises.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import urllib.request
from importlib import metadata, resources
from pathlib import Path

FENCED_PYTHON = re.compile(r"^```python[ \t]*\n(.*?)^```", re.S | re.M)
FENCED_TOML = re.compile(r"^```toml[ \t]*\n(.*?)^```", re.S | re.M)


def readme_snippets(readme: Path) -> list[str]:
    """The fenced ```python blocks of a Markdown file, in order."""
    return FENCED_PYTHON.findall(readme.read_text(encoding="utf-8"))


def command(*args: str) -> subprocess.CompletedProcess[str]:
    """A console script of the venv (next to this interpreter), run to its end."""
    script = Path(sys.executable).parent / args[0]
    return subprocess.run([str(script), *args[1:]], capture_output=True, text=True, timeout=300)


_last = [time.perf_counter()]


def check(what: str, ok: bool, detail: object = "") -> None:
    """Print the check with the seconds since the one before; raise on the first that fails."""
    if not ok:
        raise SystemExit(f"smoke_wheel: FAILED: {what} {detail}")
    now = time.perf_counter()
    print(f"smoke_wheel: ok: {what} ({now - _last[0]:.1f} s)", flush=True)
    _last[0] = now


FENCED_BASH = re.compile(r"^```bash[ \t]*\n(.*?)^```", re.S | re.M)
# Commands of the training guide that run for hours or serve until stopped: each is stopped once
# its output holds the marker (it is under way), or fails if it exits first or not in time.
UNDER_WAY = {"qwixx-train classic_2p": "training on cpu", "tensorboard ": "http://"}
# A user's edit of the config `--show` wrote: a run of a few seconds, every part of it still on.
SMALL = {"total_steps": 2048, "num_envs": 16, "checkpoint_every": 1024, "ppo": {"n_steps": 64, "batch_size": 256,
         "n_epochs": 1}, "opponents": {"self_play": {"snapshot_every": 1024}},
         "evaluation": {"every": 1024, "games": 10, "opponents": ["greedy"]}, "bc": {"samples": 2000, "epochs": 1}}


def venv_first() -> dict[str, str]:
    """This environment with the venv's scripts first on PATH, as an activated venv has it."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def shell(line: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """A line of a guide, run by bash in this folder with the venv's scripts first on PATH."""
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=timeout, env=venv_first())


def under_way(line: str, marker: str, timeout: float = 300) -> str:
    """Start a long command, read its output until `marker` shows, stop it; what it printed."""
    proc = subprocess.Popen(["bash", "-c", f"exec {line}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=venv_first())
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")) if proc.stdout else None,
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None and not any(marker in s for s in seen):
        time.sleep(0.2)
    found = any(marker in s for s in seen)
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    text = "".join(seen)
    check(f"{line!r} is under way ({marker!r} printed)", found, text[-2000:])
    return text


def merge(into: dict, change: dict) -> None:
    for key, value in change.items():
        if isinstance(value, dict):
            merge(into[key], value)
        else:
            into[key] = value


def core(readme: Path) -> None:
    """The wheel alone: no extra, no torch, no rich."""
    import numpy as np

    import qwixx_env

    began = time.perf_counter()
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    check("qwixx_env is the installed wheel, not a source tree",
          Path(qwixx_env.__file__).resolve().is_relative_to(site), qwixx_env.__file__)
    check("no extra is installed (torch, rich, matplotlib, yaml)",
          all(importlib.util.find_spec(m) is None for m in ("torch", "rich", "matplotlib", "yaml")))
    env = qwixx_env.qwixx_v0.env(num_players=2)
    env.reset(seed=0)
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    print(f"smoke_wheel: the first AEC step, from the start of this script: {time.perf_counter() - began:.1f} s")

    snippets = readme_snippets(readme)
    check(f"README.md has Python snippets ({len(snippets)})", len(snippets) > 0)
    for i, code in enumerate(snippets, 1):
        exec(compile(code, f"{readme.name}, python block {i}", "exec"), {"__name__": "__readme__"})
        check(f"README python block {i} runs on the core install", True)

    version = metadata.version("qwixx_env")
    check("qwixx_env.__version__ is the metadata's", qwixx_env.__version__ == version, qwixx_env.__version__)
    done = command("qwixx", "--version")
    check("qwixx --version", done.returncode == 0 and done.stdout.strip() == f"qwixx {version}", done)
    files = [str(f) for f in metadata.files("qwixx_env") or ()]
    check("the LICENSE is in the dist-info", any(f.endswith(".dist-info/licenses/LICENSE") for f in files))

    done = command("qwixx", "arena", "greedy", "heuristic", "--games", "10", "--workers", "1")
    check("qwixx arena prints its table without rich",
          done.returncode == 0 and "greedy" in done.stdout and "heuristic" in done.stdout, done.stdout + done.stderr)
    done = subprocess.run([sys.executable, "-m", "qwixx_env.demo"], capture_output=True, text=True, timeout=300)
    check("python -m qwixx_env.demo runs without rich", done.returncode == 0 and "Traceback" not in done.stderr,
          done.stdout[-1000:] + done.stderr[-2000:])

    bot = qwixx_env.bots.load("ppo-classic-2p")
    game = qwixx_env.qwixx_v0.env(num_players=2)
    game.reset(seed=1)
    for _agent in game.agent_iter():
        obs, _, terminated, truncated, _ = game.last()
        game.step(None if terminated or truncated else bot.act(obs))
    check("bots.load('ppo-classic-2p') plays a game without torch", "torch" not in sys.modules)

    # The train extra is not installed here: --help and --list work all the same; a run and --show
    # say which extra to install (exit 2) rather than a traceback.
    done = command("qwixx-train", "--help")
    check("qwixx-train --help works without the train extra and shows --list and --show",
          done.returncode == 0 and all(w in done.stdout for w in ("--list", "--show", "--engine", "train extra")),
          done.stdout + done.stderr)
    done = command("qwixx-train", "--list")
    check("qwixx-train --list lists the shipped configs without the train extra",
          done.returncode == 0 and done.stdout.startswith("classic_1p") and "\ndemo " in done.stdout,
          done.stdout + done.stderr)
    for args in (("classic_2p",), ("--show", "demo")):
        done = command("qwixx-train", *args)
        check(f"qwixx-train {' '.join(args)} names the train extra", done.returncode == 2
              and 'pip install "qwixx_env[train]"' in done.stderr and "Traceback" not in done.stderr, done.stderr)
    shipped = sorted(p.name for p in resources.files("qwixx_env.configs").iterdir() if p.name.endswith(".yaml"))
    check(f"the training configs ship ({len(shipped)})", {"classic_2p.yaml", "demo.yaml"} <= set(shipped), shipped)


def sheet_of_your_own(guide: Path) -> None:
    """The environment guide's sheet file, written here as a user would save it, through every
    command that takes it; its records replay in a process that never registered it."""
    blocks = FENCED_TOML.findall(guide.read_text(encoding="utf-8"))
    check(f"{guide.name} has the worked sheet file (a toml block)", len(blocks) == 1, len(blocks))
    Path("mixx.toml").write_text(blocks[0], encoding="utf-8")
    done = command("qwixx", "arena", "random", "greedy", "--variant", "mixx.toml", "--games", "3", "--workers", "2",
                   "--records", "mixx_games", "--quiet")
    check("qwixx arena --variant mixx.toml plays it and keeps its records",
          done.returncode == 0 and "mixx, 2 player(s)" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:])
    script = Path(sys.executable).parent / "qwixx"
    done = subprocess.run([str(script), "play", "--variant", "mixx.toml", "--seed", "2", "--record", "mixx_play.json",
                           "--color", "never"], input="p\n" * 400, capture_output=True, text=True, timeout=300)
    check("qwixx play --variant mixx.toml plays a game from scripted input",
          done.returncode == 0 and "Game over" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:])
    done = command("qwixx", "bench", "greedy", "--variant", "mixx.toml", "--table", "mixx-1p", "--limit", "3",
                   "--workers", "1", "--quiet")
    check("qwixx bench --variant mixx.toml scores on its protocol, marked as a user's",
          done.returncode == 0 and "mixx-1p/user" in done.stdout and "a user's sheet" in done.stdout,
          done.stdout[-2000:] + done.stderr[-2000:])
    games = sorted(p for p in Path("mixx_games").glob("game*.json"))
    done = replayed_in_a_fresh_process(["mixx_play.json", *map(str, games)])
    check(f"replay rebuilds its {len(games) + 1} records in a fresh process with nothing registered",
          done.returncode == 0 and len(games) == 6, done.stdout + done.stderr[-2000:])


def replayed_in_a_fresh_process(paths: list[str]) -> subprocess.CompletedProcess[str]:
    """`replay` of each record file in a new interpreter, where the sheet was never registered:
    each must rebuild its game to the snapshot the record holds."""
    code = ("import json, sys\nfrom qwixx_env import replay\nfrom qwixx_env.core.variant import variant_names\n"
            "assert 'mixx' not in variant_names()\n"
            "for path in sys.argv[1:]:\n"
            "    assert replay(path).snapshot() == json.load(open(path))['snapshot'], path\n"
            "print('replayed', len(sys.argv) - 1)\n")
    return subprocess.run([sys.executable, "-c", code, *paths], capture_output=True, text=True, timeout=300)


def free_port() -> int:
    """A TCP port no one listens on now (the system's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http(port: int, method: str, path: str, body: object = None, seat: str | None = None) -> dict:
    """One request to the play server on `port`, as the page makes it; its JSON answer."""
    headers = {"Content-Type": "application/json"} | ({"X-Qwixx-Seat": seat} if seat else {})
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def serve_a_sheet_of_your_own() -> None:
    """With the play extra: ``qwixx serve --variant mixx.toml`` (the core stage's file) on a
    free port; a game of that sheet against the random bot played over HTTP to its end, as the
    page plays it; its record replayed in a fresh process; Ctrl-C stops the server."""
    from qwixx_env.core.variant import Variant

    port = free_port()
    script = Path(sys.executable).parent / "qwixx"
    proc = subprocess.Popen([str(script), "serve", "--variant", "mixx.toml", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")) if proc.stdout else None,
                              daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 300  # a cold kernel cache compiles first (it says so, then the address)
        while time.monotonic() < deadline and proc.poll() is None and not any(f":{port}/" in s for s in seen):
            time.sleep(0.2)
        check(f"qwixx serve --variant mixx.toml listens on port {port}", any(f":{port}/" in s for s in seen),
              "".join(seen)[-2000:])
        info = http(port, "GET", "/api/info")
        check("the server offers the sheet beside the package's two", info["variants"] == ["classic", "longo", "mixx"],
              info["variants"])
        game = http(port, "POST", "/api/games", {"variant": "mixx", "players": 2, "bots": ["random"], "seed": 5})
        secret, path = game["joins"][0]["secret"], f"/api/games/{game['id']}"
        deadline = time.monotonic() + 300
        while not game["begun"] and time.monotonic() < deadline:  # the server prepares the bot's kernels first
            time.sleep(0.5)
            game = http(port, "GET", path, seat=secret)
        rows = list(Variant.from_file("mixx.toml").row_names)
        check(f"the game of mixx begins, its rows {rows}", game["begun"] and game["sheet"]["row_names"] == rows,
              game.get("getting_ready"))
        moves = 0
        while not game["over"] and moves < 1000:
            body = {"seat": game["you"], "action": game["legal"][0]["action"], "decision": game["decisions"]}
            game = http(port, "POST", f"{path}/moves", body, seat=secret)
            moves += 1
        check(f"the game is played over HTTP to its end ({moves} moves)", game["over"] and game["winners"], moves)
        record = http(port, "GET", f"{path}/record", seat=secret)
        check("its record carries the sheet", record.get("sheet", {}).get("name") == "mixx", list(record))
        Path("mixx_served.json").write_text(json.dumps(record), encoding="utf-8")
        done = replayed_in_a_fresh_process(["mixx_served.json"])
        check("the served game's record replays in a fresh process", done.returncode == 0, done.stderr[-2000:])
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C, as a user stops it
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(10)
    out = "".join(seen)
    # uvicorn shuts down on the signal and returns (exit 0), or raises it again (the command's 130)
    check("Ctrl-C stops qwixx serve cleanly", proc.returncode in (0, 130) and "Traceback" not in out,
          f"{proc.returncode} {out[-2000:]}")


def arena() -> None:
    """With the arena extra: the arena's picture."""
    out = Path("arena.png")
    done = command("qwixx", "arena", "random", "greedy", "--games", "10", "--workers", "1", "--png", str(out))
    check("qwixx arena --png", done.returncode == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", done.stderr)


def train(guide: Path) -> None:
    """With torch and the train extra: the training guide's first bash block, as written."""
    import yaml

    block = FENCED_BASH.findall(guide.read_text(encoding="utf-8"))[0]
    lines = [line.split(" #", 1)[0].strip() for line in block.splitlines() if line.strip()]
    check(f"{guide.name}'s first bash block is qwixx-train's and tensorboard's commands ({len(lines)})",
          all(line.startswith(("qwixx-train ", "tensorboard ")) for line in lines), lines)
    for line in lines:
        long = [marker for start, marker in UNDER_WAY.items() if line.startswith(start)]
        if long:
            under_way(line, long[0])
            continue
        done = shell(line)
        check(f"{line!r} runs", done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:])
        if " --show " in f" {line} " and ">" in line:
            path = Path(line.rsplit(">", 1)[1].strip())
            config = yaml.safe_load(path.read_text())
            check(f"{path} stands alone (no extends:)", "extends" not in config, list(config))
            merge(config, SMALL)
            path.write_text(yaml.safe_dump(config, sort_keys=False))
            print(f"smoke_wheel: edited {path} down to {SMALL['total_steps']} steps, as a user may")
        if line.startswith("qwixx-train") and "--out" in line and "--resume" not in line:
            final = Path(line.split("--out", 1)[1].split()[0], "final.json")
            check(f"{line!r} says its device and writes the final policy",
                  "training on cpu" in done.stdout and final.is_file(), done.stdout[-2000:])
    quick = re.search(r"^python -m qwixx_env\.training\.publish runs/mine .*?(?= +#|$)", guide.read_text(), re.M)
    check(f"{guide.name} gives publish's quick look on runs/mine", quick is not None)
    done = shell(quick.group(0) if quick else "false")
    check(f"{quick.group(0) if quick else ''!r} writes under published/", done.returncode == 0
          and Path("published/checkpoints/mine.json").is_file(), done.stdout[-2000:] + done.stderr[-3000:])
    import qwixx_env

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    check("nothing was published into the installed package",
          not (site / "qwixx_env" / "checkpoints" / "mine.json").exists())
    bot = qwixx_env.bots.load("published/checkpoints/mine")
    check("the published bot loads by its path", bot is not None)


def train_a_sheet_of_your_own(config: Path) -> None:
    """The small config the training guide's lines left in `config`, naming the core stage's
    sheet file instead (``variant: mixx.toml``, relative to the config), trained to its end: its
    final policy plays mixx and carries the sheet (a fresh process needs nothing registered)."""
    import yaml

    data = {**yaml.safe_load(config.read_text()), "name": "mixx_run", "variant": "mixx.toml"}
    Path("mixx_train.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    done = shell("qwixx-train mixx_train.yaml --out runs/mixx --no-progress")
    final = Path("runs/mixx/final.json")
    check("qwixx-train trains a config that names the sheet file", done.returncode == 0 and final.is_file(),
          done.stdout[-2000:] + done.stderr[-3000:])
    policy = json.loads(final.read_text())
    check("the trained policy plays mixx and carries its sheet",
          policy.get("variant") == "mixx" and policy.get("sheet", {}).get("name") == "mixx", sorted(policy))


STAGES = ("core", "arena", "play", "train")


def main(argv: list[str]) -> None:
    if len(argv) != 3 or argv[0] not in STAGES:
        raise SystemExit(f"usage: python .ci/smoke_wheel.py {'|'.join(STAGES)} README.md docs/training.md")
    began = time.perf_counter()
    stage, readme, guide = argv[0], Path(argv[1]).resolve(), Path(argv[2]).resolve()
    if stage == "core":
        core(readme)
        sheet_of_your_own(guide.parent / "environment.md")
    elif stage == "arena":
        arena()
    elif stage == "play":
        serve_a_sheet_of_your_own()
    else:
        train(guide)
        train_a_sheet_of_your_own(Path("mine.yaml"))
    print(f"smoke_wheel: {stage}: all checks passed in {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
