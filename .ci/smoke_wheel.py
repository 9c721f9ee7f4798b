"""The installed wheel as a user gets it (run by .ci/test-wheel, from a folder outside the tree).

``python .ci/smoke_wheel.py README.md`` with the interpreter of a fresh venv holding the wheel
and its ``arena`` extra (not ``train``, not torch): the README's Python snippets (its fenced
```python blocks, read from the file so that they cannot drift), ``qwixx --version`` against the
metadata, ``qwixx arena`` with ``--png``, a pretrained bot loaded and played without torch,
``qwixx-train`` without the train extra (--help and --list work, a run names the extra), and
the shipped training configs. Each check prints a line; the first that fails raises.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import sysconfig
import time
from importlib import metadata, resources
from pathlib import Path

FENCED_PYTHON = re.compile(r"^```python[ \t]*\n(.*?)^```", re.S | re.M)


def readme_snippets(readme: Path) -> list[str]:
    """The fenced ```python blocks of a Markdown file, in order."""
    return FENCED_PYTHON.findall(readme.read_text(encoding="utf-8"))


def command(*args: str) -> subprocess.CompletedProcess[str]:
    """A console script of the venv (next to this interpreter), run to its end."""
    script = Path(sys.executable).parent / args[0]
    return subprocess.run([str(script), *args[1:]], capture_output=True, text=True, timeout=300)


def check(what: str, ok: bool, detail: object = "") -> None:
    if not ok:
        raise SystemExit(f"smoke_wheel: FAILED: {what} {detail}")
    print(f"smoke_wheel: ok: {what}")


def main(readme: Path) -> None:
    began = time.perf_counter()
    import numpy as np

    import qwixx_env

    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    check("qwixx_env is the installed wheel, not a source tree",
          Path(qwixx_env.__file__).resolve().is_relative_to(site), qwixx_env.__file__)
    check("torch is not installed", importlib.util.find_spec("torch") is None)
    env = qwixx_env.qwixx_v0.env(num_players=2)
    env.reset(seed=0)
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    print(f"smoke_wheel: the first AEC step, from the start of this script: {time.perf_counter() - began:.1f} s")

    snippets = readme_snippets(readme)
    check(f"README.md has Python snippets ({len(snippets)})", len(snippets) > 0)
    for i, code in enumerate(snippets, 1):
        exec(compile(code, f"{readme.name}, python block {i}", "exec"), {"__name__": "__readme__"})
        check(f"README python block {i} runs", True)

    version = metadata.version("qwixx_env")
    check("qwixx_env.__version__ is the metadata's", qwixx_env.__version__ == version, qwixx_env.__version__)
    done = command("qwixx", "--version")
    check("qwixx --version", done.returncode == 0 and done.stdout.strip() == f"qwixx {version}", done)
    files = [str(f) for f in metadata.files("qwixx_env") or ()]
    check("the LICENSE is in the dist-info", any(f.endswith(".dist-info/licenses/LICENSE") for f in files))

    out = Path("arena.png")
    done = command("qwixx", "arena", "random", "greedy", "--games", "10", "--workers", "1", "--png", str(out))
    check("qwixx arena --png", done.returncode == 0 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", done.stderr)

    bot = qwixx_env.bots.load("ppo-classic-2p")
    game = qwixx_env.qwixx_v0.env(num_players=2)
    game.reset(seed=1)
    for _agent in game.agent_iter():
        obs, _, terminated, truncated, _ = game.last()
        game.step(None if terminated or truncated else bot.act(obs))
    check("bots.load('ppo-classic-2p') plays a game without torch", "torch" not in sys.modules)

    # The train extra is not installed here: --help and --list work all the same; a run says which
    # extra to install (exit 2) rather than a traceback.
    done = command("qwixx-train", "--help")
    check("qwixx-train --help works without the train extra and shows --list and --show",
          done.returncode == 0 and all(w in done.stdout for w in ("--list", "--show", "--engine", "train extra")),
          done.stdout + done.stderr)
    done = command("qwixx-train", "--list")
    check("qwixx-train --list lists the shipped configs without the train extra",
          done.returncode == 0 and done.stdout.startswith("classic_1p") and "\ndemo " in done.stdout,
          done.stdout + done.stderr)
    done = command("qwixx-train", "classic_2p")
    check("qwixx-train classic_2p names the train extra",
          done.returncode == 2 and "qwixx_env[train]" in done.stderr and "Traceback" not in done.stderr, done.stderr)
    shipped = sorted(p.name for p in resources.files("qwixx_env.configs").iterdir() if p.name.endswith(".yaml"))
    check(f"the training configs ship ({len(shipped)})", {"classic_2p.yaml", "demo.yaml"} <= set(shipped), shipped)
    print(f"smoke_wheel: all checks passed in {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python .ci/smoke_wheel.py README.md")
    main(Path(sys.argv[1]).resolve())
