"""How fast the JAX game (`qwixx_env.jax`) plays, beside `BatchedQwixx` and pgx's games, in one run.

Every figure counts **decisions**: a move chosen by a player, with its observation and action
mask built for it. All of it runs in this one process, pinned to one core (``--cpu``, default
0), numba and XLA limited to one thread, so the figures compare engines, not core counts.

* ``jax N`` -- N 2-player classic games of `qwixx_env.jax.Qwixx` (jax.vmap), stepped inside one
  `jax.jit` (a `fori_loop` of steps): each step builds every game's legal mask and the
  observation of the seat to decide, draws a uniformly random legal action (`jax.random`),
  steps, and restarts a finished game from its own generator (autoreset). N decisions per step.
  The observations are summed into the loop's carry, so XLA cannot drop them.
* ``BatchedQwixx N`` -- the core's batched engine at the same N, autoreset on, random legal
  actions from a compiled picker (`batched_speed.run_batched`, the loop of that benchmark).
* ``pgx connect_four N``, ``pgx backgammon N`` -- pgx's own games in the same loop (random legal
  action, `state.observation` built by pgx's step, autoreset), as the anchor of what a JAX game
  makes on this machine; only if pgx imports (``pip install pgx``).

Each configuration is compiled and warmed up first (the compile time is reported), then
``--repeats`` rounds of ``--seconds`` each visit every configuration in turn and the median
round is reported, with the JAX / BatchedQwixx ratio at each N. A batch size whose state would
not fit ``--max-bytes`` is skipped. No GPU is used: JAX runs on its CPU backend (on a machine
with a GPU, ``--platform cuda`` measures there, and the figure is absolute).

Run (in a venv with the ``jax`` and ``bench`` extras): ``python benchmarks/jax_speed.py
[--seconds 2] [--repeats 3] [--batch-sizes 1,4,...,65536] [--pgx-sizes 1,64,1024,16384]
[--cpu 0] [--out benchmarks/results] [--quick]``. Writes ``jax_speed.json`` under ``--out``.
"""

from __future__ import annotations

import os

# One thread everywhere; must be set before numpy, numba and jax are imported.
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numba  # noqa: E402
from batched_speed import pkg_version, run_batched, short  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from qwixx_env.envs.batched import BatchedQwixx  # noqa: E402
from qwixx_env.files import write_atomically  # noqa: E402
from qwixx_env.jax import Qwixx, seed_states  # noqa: E402

DEFAULT_BATCH_SIZES = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536)
DEFAULT_PGX_SIZES = (1, 64, 1024, 16384)
NUM_PLAYERS = 2
CALL_SECONDS = 0.25  # one jitted call plays about this long: the host's overhead stays out


def _select(over: jax.Array, fresh, state):
    """`fresh` where a game is `over`, else `state`, field by field (a batch's autoreset)."""
    return jax.tree.map(lambda a, b: jnp.where(over.reshape(over.shape + (1,) * (a.ndim - 1)), a, b), fresh, state)


def qwixx_loop(env: Qwixx, n: int):
    """(the first carry, a jitted `run(carry, steps)`) for N games of `env` in random legal play."""
    init = jax.vmap(env.init_rng)
    mask_of, obs_of, step, over_of = (
        jax.vmap(f) for f in (env.legal_action_mask, env.observe, env.step, env.terminated)
    )

    def body(_, carry):
        state, key, acc = carry
        key, sub = jax.random.split(key)
        mask = mask_of(state)
        acc = acc + obs_of(state, state.turn).sum(axis=1)
        action = jax.random.categorical(sub, jnp.where(mask, 0.0, -jnp.inf), axis=-1)
        state = step(state, action)
        state = _select(over_of(state), init(state.rng), state)  # each game's generator goes on
        return state, key, acc

    @jax.jit
    def run(carry, steps):
        return jax.lax.fori_loop(0, steps, body, carry)

    start = jnp.asarray(seed_states(range(n)))
    return (init(start), jax.random.PRNGKey(0), jnp.zeros(n)), run


def pgx_loop(name: str, n: int):
    """The same loop for pgx's game `name`: random legal action, pgx's observation, autoreset."""
    import pgx

    env = pgx.make(name)
    init, step = jax.vmap(env.init), jax.vmap(env.step)

    def body(_, carry):
        state, key, acc = carry
        key, pick, roll, fresh = jax.random.split(key, 4)
        acc = acc + state.observation.reshape(n, -1).sum(axis=1)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(pick, logits, axis=-1)
        state = step(state, action, jax.random.split(roll, n))
        state = _select(state.terminated | state.truncated, init(jax.random.split(fresh, n)), state)
        return state, key, acc

    @jax.jit
    def run(carry, steps):
        return jax.lax.fori_loop(0, steps, body, carry)

    return (init(jax.random.split(jax.random.PRNGKey(0), n)), jax.random.PRNGKey(1), jnp.zeros(n)), run


def jax_runner(carry, run, n: int) -> tuple[Callable[[float], dict], float, int]:
    """A runner playing `run` for some seconds, the compile time, and the steps per call
    (chosen so that one call takes about CALL_SECONDS)."""
    t0 = time.perf_counter()
    carry = jax.block_until_ready(run(carry, 1))
    compile_s = time.perf_counter() - t0
    steps = 8
    while True:
        t0 = time.perf_counter()
        carry = jax.block_until_ready(run(carry, steps))
        took = time.perf_counter() - t0
        if took >= CALL_SECONDS / 4 or steps >= 1 << 22:
            break
        steps *= 4
    steps = max(1, int(steps * CALL_SECONDS / max(took, 1e-9)))
    state = {"carry": carry}

    def measure(seconds: float) -> dict:
        calls = 0
        start, cpu_start = time.perf_counter(), time.process_time()
        while True:
            state["carry"] = jax.block_until_ready(run(state["carry"], steps))
            calls += 1
            if time.perf_counter() - start >= seconds:
                break
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        decisions = calls * steps * n
        return {
            "steps": calls * steps,
            "decisions": decisions,
            "seconds": elapsed,
            "cpu_seconds": cpu,
            "decisions_per_s": decisions / elapsed,
        }

    return measure, compile_s, steps


def state_bytes(carry) -> int:
    """Bytes of a loop's carry per game."""
    leaves = jax.tree.leaves(carry[0])
    return sum(x.nbytes for x in leaves) // leaves[0].shape[0]


def build(batch_sizes, pgx_sizes, max_bytes: int, console: Console) -> tuple[dict[str, dict], list[str]]:
    """Every configuration, compiled and warmed up; and the notes of what was left out."""
    configs: dict[str, dict] = {}
    notes: list[str] = []
    env = Qwixx(num_players=NUM_PLAYERS)
    one = qwixx_loop(env, 1)[0]
    per_game = state_bytes(one) + 4 * (env.observation_size + env.num_actions)
    games = [("qwixx", None, n) for n in batch_sizes]
    try:
        import pgx  # noqa: F401

        games += [("pgx", name, n) for name in ("connect_four", "backgammon") for n in pgx_sizes]
    except ImportError as err:
        notes.append(f"pgx not measured: {err}")
    for kind, name, n in games:
        if kind == "qwixx" and n * per_game > max_bytes:
            notes.append(f"jax N={n} skipped: about {n * per_game:,} bytes of state and views over --max-bytes")
            continue
        label = f"jax N={n}" if kind == "qwixx" else f"pgx {name} N={n}"
        console.print(f"compiling {label} ...")
        carry, run = qwixx_loop(env, n) if kind == "qwixx" else pgx_loop(name, n)
        measure, compile_s, steps = jax_runner(carry, run, n)
        configs[label] = {
            "kind": "jax" if kind == "qwixx" else "pgx",
            "game": name or "qwixx classic 2p",
            "N": n,
            "compile_seconds": compile_s,
            "steps_per_call": steps,
            "state_bytes_per_game": state_bytes(carry),
            "run": measure,
        }
        if kind == "qwixx":
            engine = BatchedQwixx(n, num_players=NUM_PLAYERS)
            configs[f"BatchedQwixx N={n}"] = {
                "kind": "batched",
                "game": "qwixx classic 2p",
                "N": n,
                "state_bytes_per_game": engine.memory_per_game(),
                "run": lambda s, seed=0, e=engine: run_batched(e, s, seed),
            }
    return configs, notes


def measure_all(configs: dict[str, dict], seconds: float, repeats: int, warmup: float, console: Console) -> None:
    for c in configs.values():
        c["run"](warmup)
        c["runs"] = []
    for r in range(repeats):
        console.print(f"round {r + 1}/{repeats} ({len(configs)} x {seconds:g} s) ...")
        for c in configs.values():
            c["runs"].append(c["run"](seconds))
    for c in configs.values():
        del c["run"]
        rates = [x["decisions_per_s"] for x in c["runs"]]
        c["median_decisions_per_s"] = statistics.median(rates)
        c["median_cpu_share"] = statistics.median(x["cpu_seconds"] / x["seconds"] for x in c["runs"])
        c["median_decisions_per_cpu_s"] = statistics.median(
            x["decisions"] / x["cpu_seconds"] for x in c["runs"] if x["cpu_seconds"] > 0
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="wall time per configuration per round (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds; the median is reported (default 3)")
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds of warm-up per configuration")
    parser.add_argument(
        "--batch-sizes",
        default=",".join(map(str, DEFAULT_BATCH_SIZES)),
        help="comma-separated N of the JAX and BatchedQwixx sweep (default 1,4,...,65536)",
    )
    parser.add_argument(
        "--pgx-sizes",
        default=",".join(map(str, DEFAULT_PGX_SIZES)),
        help="comma-separated N of pgx's games (default 1,64,1024,16384; empty: none)",
    )
    parser.add_argument("--max-bytes", type=int, default=2 << 30, help="skip a JAX batch larger than this")
    parser.add_argument("--cpu", type=int, default=0, help="the core to pin this process to (default 0)")
    parser.add_argument(
        "--platform", default="cpu", help="JAX's backend (default cpu; cuda on a GPU with a CUDA build of jaxlib)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke test: 0.3 s x 1 round, N 1,64,1024")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent / "results",
        help="folder for jax_speed.json (default benchmarks/results)",
    )
    args = parser.parse_args(argv)
    try:
        sizes = sorted({int(x) for x in args.batch_sizes.split(",") if x.strip()})
        pgx_sizes = sorted({int(x) for x in args.pgx_sizes.split(",") if x.strip()})
    except ValueError:
        parser.error(
            f"--batch-sizes / --pgx-sizes: got {args.batch_sizes!r} / {args.pgx_sizes!r}; "
            "expected comma-separated integers"
        )
    if args.quick:
        args.seconds, args.repeats, args.warmup = 0.3, 1, 0.1
        sizes, pgx_sizes = [1, 64, 1024], [64]
    if args.seconds <= 0 or args.repeats < 1 or args.warmup < 0 or not sizes or min(sizes + pgx_sizes) < 1:
        parser.error("--seconds must be > 0, --repeats >= 1, --warmup >= 0, batch sizes >= 1")
    if args.cpu not in os.sched_getaffinity(0):
        parser.error(f"--cpu: got {args.cpu}; expected one of this process's cores {sorted(os.sched_getaffinity(0))}")
    os.sched_setaffinity(0, {args.cpu})
    numba.set_num_threads(1)
    jax.config.update("jax_platforms", args.platform)
    device = jax.devices()[0]

    console = Console() if Console().is_terminal else Console(width=140)
    load_before = os.getloadavg()
    console.print(
        f"JAX {jax.__version__} on {device.platform} ({device.device_kind}); one process pinned to CPU "
        f"{args.cpu} of {os.cpu_count()}; load average before: " + ", ".join(f"{x:.2f}" for x in load_before)
    )
    t0 = time.perf_counter()
    configs, notes = build(sizes, pgx_sizes, args.max_bytes, console)
    measure_all(configs, args.seconds, args.repeats, args.warmup, console)
    load_after = os.getloadavg()

    table = Table(title=f"Decisions per second, random legal play, {device.platform}, one core (median of rounds)")
    for col in (
        "N",
        "jax",
        "BatchedQwixx",
        "jax / BatchedQwixx",
        "per CPU-s",
        "jax compile s",
        "pgx connect_four",
        "pgx backgammon",
    ):
        table.add_column(col, justify="right")
    ratios, cpu_ratios = {}, {}
    for n in sorted({c["N"] for c in configs.values()}):
        jx, bq = configs.get(f"jax N={n}"), configs.get(f"BatchedQwixx N={n}")
        if jx and bq:
            ratios[str(n)] = jx["median_decisions_per_s"] / bq["median_decisions_per_s"]
            cpu_ratios[str(n)] = jx["median_decisions_per_cpu_s"] / bq["median_decisions_per_cpu_s"]
        cells = [configs.get(f"pgx {g} N={n}") for g in ("connect_four", "backgammon")]
        table.add_row(
            str(n),
            short(jx["median_decisions_per_s"]) if jx else "",
            short(bq["median_decisions_per_s"]) if bq else "",
            f"{ratios[str(n)]:.2f}x" if str(n) in ratios else "",
            f"{cpu_ratios[str(n)]:.2f}x" if str(n) in cpu_ratios else "",
            f"{jx['compile_seconds']:.1f}" if jx else "",
            *(short(c["median_decisions_per_s"]) if c else "" for c in cells),
        )
    console.print(table)
    for note in notes:
        console.print(f"  {note}")
    shares = [c["median_cpu_share"] for c in configs.values()]
    console.print(
        f"  CPU share while measuring: {min(shares):.2f} .. {max(shares):.2f} (below ~0.95 another "
        "process took the core). Load average after: "
        + ", ".join(f"{x:.2f}" for x in load_after)
        + f"; {time.perf_counter() - t0:.0f} s in all."
    )
    best = {
        k: max((c for c in configs.values() if c["kind"] == k), key=lambda c: c["median_decisions_per_s"], default=None)
        for k in ("jax", "batched")
    }
    report = {
        "benchmark": "jax_speed",
        "unit": "decisions per wall second (median of rounds), random legal play with observation and mask",
        "statistic": "median",
        "seconds": args.seconds,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "quick": args.quick,
        "cpu": args.cpu,
        "num_players": NUM_PLAYERS,
        "variant": "classic",
        "device": {
            "platform": device.platform,
            "kind": device.device_kind,
            "gpu": "none: no GPU was used for these figures" if device.platform == "cpu" else device.device_kind,
        },
        "load_average_before": load_before,
        "load_average_after": load_after,
        "best": {k: {"N": c["N"], "decisions_per_s": c["median_decisions_per_s"]} for k, c in best.items() if c},
        "ratios_jax_over_batched": ratios,
        "ratios_jax_over_batched_per_cpu_s": cpu_ratios,
        "notes": notes,
        "configs": configs,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
            "numba_threads": numba.get_num_threads(),
            "xla_flags": os.environ["XLA_FLAGS"],
            **{pkg: pkg_version(pkg) for pkg in ("numpy", "numba", "jax", "jaxlib", "pgx", "qwixx_env")},
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "jax_speed.json"
    write_atomically(path, (json.dumps(report, indent=2) + "\n").encode())
    console.print(f"figures written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
