"""How fast the batched engine plays on one core, against the AEC environment and OpenSpiel's pig.

Everything is measured in this one process, pinned to one core (``--cpu``, default 0), with
numba, OpenMP and BLAS limited to one thread. Every figure counts **decisions**: a move chosen
by a player, with its observation and action mask built for it.

* ``BatchedQwixx(N)``  -- N 2-player classic games stepped together (autoreset on). Each step a
  compiled picker draws one uniformly random legal action per game from ``masks`` (one
  splitmix64 generator per game), then ``engine.step(actions)`` applies them and builds the
  next observations and masks: N decisions per step. Swept over ``--batch-sizes``; memory per
  game is ``engine.memory_per_game()``.
* ``qwixx_v0.env()`` / ``qwixx_v0.raw_env()`` -- the AEC environment (guarded / unwrapped) in the
  standard ``agent_iter`` / ``last`` / ``step`` loop, random legal actions from
  ``np.flatnonzero(mask)``. Decisions are the steps of live agents; the final ``step(None)`` of
  each finished agent is counted apart (agent-steps = decisions + those).
* ``pyspiel.load_game("pig")`` -- OpenSpiel's C++ dice game (2 players, to 100) driven from
  Python: chance nodes sampled from ``chance_outcomes()``, and at each player node
  ``observation_tensor(player)`` and ``legal_actions()`` built, then a random legal action.
  Decisions are the player (non-chance) moves.
* ``QwixxVectorEnv(N, opponents="greedy" | "random")`` -- the single-agent training view: one
  random legal learner action per game from ``obs["action_mask"]`` (the same compiled picker),
  opponents played inside the engine. Reports learner decisions/s and total decisions/s
  (learner + opponents). Opponent decisions are counted exactly by the engine itself
  (``QwixxVectorEnv.opponent_decisions``).

Each measurement runs for ``--seconds`` of wall time after a warm-up; ``--repeats`` rounds
visit every configuration in turn (so drift in the machine's speed hits them alike) and the
**median** round is reported. Target: the batched engine makes >= 1,000,000 decisions/s on
one core at some batch size.

Run: ``python benchmarks/batched_speed.py [--seconds 3] [--repeats 3] [--batch-sizes 64,256,...]
[--cpu 0] [--out benchmarks/results] [--quick]``. Writes ``batched_speed.json`` and
``batched_scaling.png`` under ``--out``. Needs the ``bench`` extra (rich, matplotlib) and
open_spiel (pyspiel).
"""

from __future__ import annotations

import os

# One thread everywhere; must be set before numpy / numba are imported.
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from importlib.metadata import PackageNotFoundError, version  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from qwixx_env import qwixx_v0  # noqa: E402
from qwixx_env.core.compile import kernel  # noqa: E402
from qwixx_env.envs.batched import BatchedQwixx  # noqa: E402
from qwixx_env.envs.vector import QwixxVectorEnv  # noqa: E402
from qwixx_env.files import save_figure, write_atomically  # noqa: E402
from qwixx_env.policies.scripted import random_legal  # noqa: E402

TARGET = 1_000_000
DEFAULT_BATCH_SIZES = (64, 256, 1024, 4096, 16384)
VECTOR_SIZES = (1024, 4096)
NUM_PLAYERS = 2


# --- compiled helpers ---------------------------------------------------------------------


@kernel()
def pick_actions(masks, pick_rng, actions):
    """One uniformly random legal action per row of `masks`, from generator `pick_rng[b]`."""
    for b in range(masks.shape[0]):
        actions[b] = random_legal(masks[b], pick_rng, b)


def pick_rngs(n: int, seed: int) -> np.ndarray:
    return np.random.SeedSequence(seed).generate_state(n, np.uint64)


# --- the runners: each plays for `seconds` and returns counts ------------------------------


def run_batched(engine: BatchedQwixx, seconds: float, seed: int) -> dict:
    obs, masks = engine.reset(seed=seed)
    rng = pick_rngs(engine.num_games, seed + 1)
    actions = np.zeros(engine.num_games, np.int64)
    steps = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        pick_actions(masks, rng, actions)
        obs, masks, rewards, done = engine.step(actions)
        steps += 1
        if time.perf_counter() >= deadline:
            break
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    decisions = steps * engine.num_games
    return {
        "steps": steps,
        "decisions": decisions,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "decisions_per_s": decisions / elapsed,
    }


def aec_pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def run_aec(env, seconds: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    decisions = dead_steps = games = 0
    game_seed = seed * 10**6
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        env.reset(seed=game_seed)
        game_seed += 1
        for _ in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                dead_steps += 1
            else:
                env.step(aec_pick(rng, obs["action_mask"]))
                decisions += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return {
        "decisions": decisions,
        "dead_steps": dead_steps,
        "games": games,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "decisions_per_s": decisions / elapsed,
        "agent_steps_per_s": (decisions + dead_steps) / elapsed,
    }


def run_pig(game, seconds: float, seed: int) -> dict:
    rnd = random.Random(seed)
    decisions = chance = games = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                u = rnd.random()
                outcomes = state.chance_outcomes()
                action = outcomes[-1][0]
                for a, p in outcomes:
                    u -= p
                    if u < 0:
                        action = a
                        break
                state.apply_action(action)
                chance += 1
            else:
                player = state.current_player()
                obs = state.observation_tensor(player)  # noqa: F841 -- built, as a learner would need
                legal = state.legal_actions()
                state.apply_action(legal[rnd.randrange(len(legal))])
                decisions += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return {
        "decisions": decisions,
        "chance_moves": chance,
        "games": games,
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "decisions_per_s": decisions / elapsed,
    }


def vector_loop(
    env: QwixxVectorEnv, seed: int, seconds: float | None, max_steps: int | None
) -> tuple[int, int, float, float]:
    """Random learner play; stops at the deadline or after max_steps."""
    obs, _ = env.reset(seed=seed)
    rng = pick_rngs(env.num_envs, seed + 1)
    actions = np.zeros(env.num_envs, np.int64)
    steps = episodes = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + (seconds if seconds is not None else float("inf"))
    while max_steps is None or steps < max_steps:
        pick_actions(obs["action_mask"], rng, actions)
        obs, rewards, terminated, truncated, infos = env.step(actions)
        episodes += int(terminated.sum())
        steps += 1
        if seconds is not None and time.perf_counter() >= deadline:
            break
    return steps, episodes, time.perf_counter() - start, time.process_time() - cpu_start


def run_vector(env: QwixxVectorEnv, opponents: str, seconds: float, seed: int) -> dict:
    before = env.opponent_decisions
    steps, episodes, elapsed, cpu = vector_loop(env, seed, seconds, None)
    learner = steps * env.num_envs
    opp = env.opponent_decisions - before  # counted by the engine (reset included)
    return {"steps": steps, "learner_decisions": learner, "opponent_decisions": opp, "episodes": episodes,
            "seconds": elapsed, "cpu_seconds": cpu, "decisions_per_s": learner / elapsed,
            "total_decisions_per_s": (learner + opp) / elapsed}


# --- the benchmark ------------------------------------------------------------------------


def measure(batch_sizes, seconds: float, repeats: int, warmup: float, console: Console) -> dict[str, dict]:
    """Build every configuration, warm it up, then `repeats` rounds over all of them."""
    import pyspiel

    configs: dict[str, dict] = {}
    for n in batch_sizes:
        engine = BatchedQwixx(n, num_players=NUM_PLAYERS)
        configs[f"batched N={n}"] = {"kind": "batched", "N": n, "memory_per_game": engine.memory_per_game(),
                                     "run": lambda s, seed, e=engine: run_batched(e, s, seed)}
    for name, make in (("qwixx_v0.env()", qwixx_v0.env), ("qwixx_v0.raw_env()", qwixx_v0.raw_env)):
        env = make(num_players=NUM_PLAYERS)
        configs[name] = {"kind": "aec", "run": lambda s, seed, e=env: run_aec(e, s, seed)}
    pig = pyspiel.load_game("pig")
    configs["openspiel pig"] = {"kind": "pig", "run": lambda s, seed: run_pig(pig, s, seed)}
    for opp in ("greedy", "random"):
        for n in VECTOR_SIZES:
            env = QwixxVectorEnv(n, num_players=NUM_PLAYERS, opponents=opp)
            configs[f"vector N={n} vs {opp}"] = {
                "kind": "vector",
                "N": n,
                "opponents": opp,
                "run": lambda s, seed, e=env, o=opp: run_vector(e, o, s, seed),
            }
    console.print(f"warming up {len(configs)} configurations ({warmup:g} s each) ...")
    for c in configs.values():
        c["run"](warmup, 10**6)
        c["runs"] = []
    for r in range(repeats):
        console.print(f"round {r + 1}/{repeats} ({len(configs)} x {seconds:g} s) ...")
        for c in configs.values():
            c["runs"].append(c["run"](seconds, r))
    for c in configs.values():
        del c["run"]
    return configs


def summarise(configs: dict[str, dict]) -> dict:
    for c in configs.values():
        rates = [r["decisions_per_s"] for r in c["runs"]]
        c["median_decisions_per_s"] = statistics.median(rates)
        c["best_decisions_per_s"] = max(rates)
        c["worst_decisions_per_s"] = min(rates)
        # The share of wall time this process was on the CPU (below ~0.95: another process competed).
        c["median_cpu_share"] = statistics.median(r["cpu_seconds"] / r["seconds"] for r in c["runs"])
        c["median_decisions_per_cpu_s"] = statistics.median(
            r["decisions_per_s"] * r["seconds"] / r["cpu_seconds"] for r in c["runs"])
        if c["kind"] == "vector":
            c["median_total_decisions_per_s"] = statistics.median(
                r["total_decisions_per_s"] for r in c["runs"]
            )
            learner = sum(r["learner_decisions"] for r in c["runs"])
            c["opponent_decisions_per_learner_decision"] = (
                sum(r["opponent_decisions"] for r in c["runs"]) / learner
            )
            c["learner_decisions_per_episode"] = learner / max(1, sum(r["episodes"] for r in c["runs"]))
        if c["kind"] == "aec":
            c["median_agent_steps_per_s"] = statistics.median(r["agent_steps_per_s"] for r in c["runs"])
    batched = {k: c for k, c in configs.items() if c["kind"] == "batched"}
    best_name = max(batched, key=lambda k: batched[k]["median_decisions_per_s"])
    best = batched[best_name]["median_decisions_per_s"]
    refs = {
        k: configs[k]["median_decisions_per_s"]
        for k in ("qwixx_v0.env()", "qwixx_v0.raw_env()", "openspiel pig")
    }
    return {
        "best": {"config": best_name, "N": batched[best_name]["N"], "decisions_per_s": best},
        "ratios": {f"batched best / {k}": best / v for k, v in refs.items()},
        "ratios_per_cpu_s": {
            f"batched best / {k}": batched[best_name]["median_decisions_per_cpu_s"]
            / configs[k]["median_decisions_per_cpu_s"]
            for k in refs
        },
        "target": {"decisions_per_s": TARGET, "passed": best >= TARGET},
    }


def plot(configs: dict[str, dict], path: Path, cpu: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    batched = sorted((c for c in configs.values() if c["kind"] == "batched"), key=lambda c: c["N"])
    xs = [c["N"] for c in batched]
    fig, ax = plt.subplots(figsize=(8, 6.4), dpi=130)
    per_game = f"{batched[0]['memory_per_game']:,} bytes/game"
    ax.plot(xs, [c["median_decisions_per_s"] for c in batched], "o-", color="tab:blue", lw=2.2, ms=7,
            label=f"BatchedQwixx per wall second (median; {per_game})", zorder=3)
    ax.plot(xs, [c["median_decisions_per_cpu_s"] for c in batched], "o--", color="tab:blue", alpha=0.4,
            lw=1.2, ms=4, label="BatchedQwixx per CPU-second (median)", zorder=2)
    for c in batched:
        ax.annotate(f"{c['median_decisions_per_s'] / 1e6:.2f}M", (c["N"], c["median_decisions_per_s"]),
                    textcoords="offset points", xytext=(-7, 7), ha="right", fontsize=9, color="tab:blue")
    vec = {}
    for c in configs.values():
        if c["kind"] == "vector":
            vec.setdefault(c["opponents"], []).append(c)
    styles = {"greedy": ("tab:green", "s"), "random": ("tab:olive", "^")}
    for opp, cs in vec.items():
        cs = sorted(cs, key=lambda c: c["N"])
        color, marker = styles.get(opp, ("tab:gray", "x"))
        ax.plot([c["N"] for c in cs], [c["median_total_decisions_per_s"] for c in cs], marker=marker, ls="--",
                color=color, label=f"QwixxVectorEnv vs {opp}: all decisions")
        ax.plot([c["N"] for c in cs], [c["median_decisions_per_s"] for c in cs], marker=marker, ls=":",
                color=color, mfc="none", label=f"QwixxVectorEnv vs {opp}: learner decisions")
    lines = [
        (TARGET, "target 1M", "tab:red", "-"),
        (configs["openspiel pig"]["median_decisions_per_s"], "OpenSpiel pig", "tab:purple", "-."),
        (
            configs["qwixx_v0.raw_env()"]["median_decisions_per_s"],
            "qwixx_v0.raw_env() (AEC)",
            "tab:orange",
            "-.",
        ),
        (configs["qwixx_v0.env()"]["median_decisions_per_s"], "qwixx_v0.env() (AEC)", "tab:brown", ":"),
    ]
    ticks = sorted({*xs, *(c["N"] for cs in vec.values() for c in cs)})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(ticks[0] / 1.6, ticks[-1] * 1.6)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(x) for x in ticks])
    ax.minorticks_off()
    for y, label, color, ls in lines:
        ax.axhline(y, color=color, ls=ls, lw=1.4, label=f"{label}: {y:,.0f}/s")
    ax.set_xlabel("batch size N (games stepped together)")
    ax.set_ylabel("decisions per second (one core)")
    ax.set_title(f"Random legal 2-player Qwixx, obs + masks built, one core (CPU {cpu})")
    ax.grid(True, which="major", alpha=0.35)
    lo = min(y for y, *_ in lines) / 2
    hi = max([c["median_decisions_per_cpu_s"] for c in batched] + [TARGET]
             + [c["median_total_decisions_per_s"] for cs in vec.values() for c in cs]) * 2
    ax.set_ylim(lo, hi)
    yticks = [m * 10**e for e in range(3, 9) for m in (1, 2, 5) if lo <= m * 10**e <= hi]
    ax.set_yticks(yticks)
    ax.set_yticklabels([f"{y / 1e6:g}M" if y >= 1e6 else f"{y / 1e3:g}k" for y in yticks])
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=8.5, frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path)


def short(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k"


def pkg_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="wall time per configuration per round (default 3)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the median is reported (default 3)")
    parser.add_argument(
        "--warmup", type=float, default=0.5, help="seconds of warm-up per configuration (default 0.5)"
    )
    parser.add_argument(
        "--batch-sizes",
        default=",".join(map(str, DEFAULT_BATCH_SIZES)),
        help="comma-separated batch sizes of the engine sweep (default 64,256,1024,4096,16384)",
    )
    parser.add_argument("--cpu", type=int, default=0, help="the core to pin this process to (default 0)")
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: 0.3 s x 1 round, batch sizes 64,1024"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results",
        help="folder for batched_speed.json and batched_scaling.png (default benchmarks/results)",
    )
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if the target is missed")
    args = parser.parse_args(argv)
    try:
        batch_sizes = sorted({int(x) for x in args.batch_sizes.split(",") if x.strip()})
    except ValueError:
        parser.error(f"--batch-sizes: got {args.batch_sizes!r}; expected comma-separated integers")
    if args.quick:
        args.seconds, args.repeats, args.warmup = 0.3, 1, 0.2
        if args.batch_sizes == ",".join(map(str, DEFAULT_BATCH_SIZES)):
            batch_sizes = [64, 1024]
    if args.seconds <= 0 or args.repeats < 1 or args.warmup < 0 or not batch_sizes or min(batch_sizes) < 1:
        parser.error("--seconds must be > 0, --repeats >= 1, --warmup >= 0, batch sizes >= 1")
    if args.cpu not in os.sched_getaffinity(0):
        parser.error(
            f"--cpu: got {args.cpu}; expected one of this process's cores {sorted(os.sched_getaffinity(0))}"
        )
    os.sched_setaffinity(0, {args.cpu})
    numba.set_num_threads(1)

    console = Console()
    if not console.is_terminal:
        console = Console(width=150)
    load_before = os.getloadavg()
    console.print(
        f"One process pinned to CPU {args.cpu} ({os.cpu_count()} CPUs on the machine), numba threads "
        f"{numba.get_num_threads()}; {args.repeats} round(s) x {args.seconds:g} s per configuration "
        f"after {args.warmup:g} s warm-up. Load average before: "
        + ", ".join(f"{x:.2f}" for x in load_before)
    )
    t0 = time.perf_counter()
    configs = measure(batch_sizes, args.seconds, args.repeats, args.warmup, console)
    summary = summarise(configs)
    load_after = os.getloadavg()
    wall = time.perf_counter() - t0

    best = summary["best"]["decisions_per_s"]
    table = Table(title="Decisions per second on one core (median of rounds)")
    for col in ("configuration", "decisions/s", "best .. worst", "+ opponents/s", "agent-steps/s",
                "bytes/game", "best batched ÷", "CPU share", "per CPU-s"):
        table.add_column(col, justify="left" if col == "configuration" else "right")
    for name, c in configs.items():
        total = f"{c['median_total_decisions_per_s']:,.0f}" if c["kind"] == "vector" else ""
        steps = f"{c['median_agent_steps_per_s']:,.0f}" if c["kind"] == "aec" else ""
        mem = f"{c['memory_per_game']:,}" if c["kind"] == "batched" else ""
        table.add_row(
            name,
            f"{c['median_decisions_per_s']:,.0f}",
            f"{short(c['best_decisions_per_s'])} .. {short(c['worst_decisions_per_s'])}",
            total,
            steps,
            mem,
            f"{best / c['median_decisions_per_s']:,.1f}x",
            f"{c['median_cpu_share']:.2f}",
            f"{c['median_decisions_per_cpu_s']:,.0f}",
        )
    console.print(table)
    vec = [c for c in configs.values() if c["kind"] == "vector"]
    console.print(
        "  batched: engine.step with autoreset, N decisions per step; "
        "bytes/game = engine.memory_per_game().\n"
        "  AEC: decisions = live-agent steps; agent-steps also count each finished agent's step(None).\n"
        "  pig: player moves (observation_tensor + legal_actions each); chance moves sampled, not counted.\n"
        "  vector: decisions/s = learner decisions; '+ opponents' adds the opponents' decisions, counted "
        "exactly by the engine ("
        + ", ".join(
            f"N={c['N']} {c['opponents']}: {c['opponent_decisions_per_learner_decision']:.3f}" for c in vec
        )
        + " opponent decisions per learner decision).\n"
        "  CPU share: process CPU time / wall time while measuring "
        "(below ~0.95 another process took the core; "
        "'per CPU-s' divides decisions by CPU time instead, less sensitive to that)."
    )
    for k, v in summary["ratios"].items():
        console.print(f"  {k}: {v:,.1f}x  (per CPU-second: {summary['ratios_per_cpu_s'][k]:,.1f}x)")
    passed = summary["target"]["passed"]
    console.print(
        f"target: batched engine >= 1,000,000 decisions/s on one core: "
        f"[{'green' if passed else 'red'}]{'PASS' if passed else 'FAIL'}[/] "
        f"(best N={summary['best']['N']}: {best:,.0f} decisions/s)"
    )
    console.print(
        "Load average after: " + ", ".join(f"{x:.2f}" for x in load_after) + f"; {wall:.0f} s in all."
    )

    args.out.mkdir(parents=True, exist_ok=True)
    png = args.out / "batched_scaling.png"
    plot(configs, png, args.cpu)
    report = {
        "benchmark": "batched_speed",
        "statistic": "median",
        "seconds": args.seconds,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "quick": args.quick,
        "cpu": args.cpu,
        "num_players": NUM_PLAYERS,
        "variant": "classic",
        "load_average_before": load_before,
        "load_average_after": load_after,
        **summary,
        "configs": configs,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "numba_threads": numba.get_num_threads(),
            **{pkg: pkg_version(pkg) for pkg in ("numpy", "numba", "open_spiel", "qwixx_env")},
        },
    }
    json_path = args.out / "batched_speed.json"
    write_atomically(json_path, (json.dumps(report, indent=2) + "\n").encode())
    console.print(f"figures written to {json_path} and {png}")
    return 1 if args.strict and not passed else 0


if __name__ == "__main__":
    sys.exit(main())
