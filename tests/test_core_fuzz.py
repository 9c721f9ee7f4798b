"""The core's entry points given arrays of wrong shapes and dtypes (issue 52): every call either
plays or raises a `ValueError`, and the process never crashes.

The compiled kernels check nothing and index past an array's end without a word, so a state
of another sheet once crashed the process (a segfault in `rules.scores`). The fuzzing runs in a
child process: a crash there is a failed test here, not a dead test run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

FUZZ = textwrap.dedent("""\
    import traceback
    import numpy as np
    from qwixx_env.core import rules
    from qwixx_env.core.engine import Engine
    from qwixx_env.core.observation import ObservationView, layout_for, state_from_observation
    from qwixx_env.core.options import TableOptions
    from qwixx_env.core.state import State, new_state
    from qwixx_env.core.variant import CLASSIC, LONGO, Row, Variant

    UP, DOWN = tuple(range(2, 13)), tuple(range(12, 1, -1))
    FIVE = Variant(name="fuzz_five", faces=6, lock_cells=1, lock_threshold=5, score_table=CLASSIC.score_table,
                   max_penalties=3, rows_to_end=3,
                   rows=(*(Row(c, UP if r < 2 else DOWN) for r, c in enumerate(("red", "yellow", "green", "blue"))),
                         Row("purple", UP)))
    MIXED = Variant(name="fuzz_mixed", faces=6, lock_cells=1, lock_threshold=5, score_table=CLASSIC.score_table,
                    rows_to_end=1, rows=(Row("a", UP, ("red", "yellow") * 5 + ("red",)),
                                         Row("b", DOWN, ("green", "blue") * 5 + ("green",))))
    DTYPES = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64)
    rng = np.random.default_rng(52)

    def wrong(a):
        \"\"\"`a` changed in one way: its dtype, one axis's length, its axes, its kind, or writeable.\"\"\"
        a = np.asarray(a)
        kind = rng.integers(7)
        if kind == 0:
            return a.astype(DTYPES[rng.integers(len(DTYPES))])
        if kind == 1 and a.ndim:
            shape = list(a.shape)
            axis = rng.integers(a.ndim)
            shape[axis] = max(0, shape[axis] + int(rng.choice([-1, 1, 3])))
            return np.zeros(shape, a.dtype)
        if kind == 2:
            return a[..., None] if rng.integers(2) else a.reshape(-1)
        if kind == 3:
            return a.tolist()
        if kind == 4:
            return [None, "x", 3.5, a.astype(object)][rng.integers(4)]
        if kind == 5 and a.ndim:
            return a[:0]
        ro = a.copy()
        ro.flags.writeable = False
        return ro

    calls = refused = 0

    def call(what, fn):
        global calls, refused
        calls += 1
        try:
            fn()
        except ValueError:
            refused += 1
        except Exception:
            print("NOT A ValueError:", what)
            traceback.print_exc()
            raise SystemExit(1)

    for variant in (CLASSIC, LONGO, FIVE, MIXED):
        for players in (1, 2, 4):
            layout = layout_for(variant, players)
            for _ in range(12):
                base = new_state(players, 3, variant=variant)
                rules.reset(variant, base)
                for _ in range(int(rng.integers(6))):  # somewhere in a game
                    mask = rules.legal_mask(variant, base)
                    rules.apply(variant, base, np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0
                                                         for m in mask]))
                field = State._fields[rng.integers(len(State._fields))]
                bad = base.clone()._replace(**{field: wrong(getattr(base, field))})
                if rng.integers(8) == 0:  # another sheet's state, or not a State at all
                    bad = [new_state(players, 3), tuple(base), None][rng.integers(3)]
                B, A = 3, variant.num_actions
                call(f"reset {field}", lambda: rules.reset(variant, bad))
                call(f"legal_mask {field}", lambda: rules.legal_mask(variant, bad))
                call(f"apply {field}", lambda: rules.apply(variant, bad, np.full(B, variant.pass_action)))
                call(f"scores {field}", lambda: rules.scores(variant, bad))
                call(f"encode {field}", lambda: layout.encode(bad, np.zeros(B, np.int64)))
                # the other arguments, wrong on a good state
                good = base.clone()
                call("reset games", lambda: rules.reset(variant, good, games=wrong(np.arange(B))))
                call("reset lucky", lambda: rules.reset(variant, good, lucky_numbers=wrong(np.zeros((players, 2)))))
                call("reset start", lambda: rules.reset(variant, good, start_player=[-2, players, 0.5, "0"][
                    rng.integers(4)]))
                call("legal_mask out", lambda: rules.legal_mask(variant, good, out=wrong(np.zeros((B, A), np.int8))))
                call("scores out", lambda: rules.scores(variant, good, out=wrong(np.zeros((B, players), np.int64))))
                call("apply actions", lambda: rules.apply(variant, good, wrong(np.zeros(B, np.int64))))
                call("apply any action in range", lambda: rules.apply(variant, good, rng.integers(0, A, B)))
                call("encode seats", lambda: layout.encode(good, wrong(np.zeros(B, np.int64))))
                call("encode out", lambda: layout.encode(good, np.zeros(B, np.int64),
                                                         out=wrong(np.zeros((B, layout.size), np.float32))))
                vector = layout.encode(good, good.turn)[0]
                call("view", lambda: state_from_observation(ObservationView(wrong(vector), variant, players)))
                call("view out", lambda: state_from_observation(ObservationView(vector, variant, players),
                                                                out=bad))
                engine = Engine(TableOptions(num_players=players, variant=variant), 3)
                call("attach", lambda: engine.attach(bad))
                call("attach masks", lambda: engine.attach(good, masks=wrong(np.ones((B, A), np.int8))))
    print("CALLS", calls, "REFUSED", refused)
""")


def test_the_core_entry_points_refuse_wrong_shapes_and_dtypes_and_never_crash():
    out = subprocess.run([sys.executable, "-c", FUZZ], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, (out.returncode, out.stdout[-3000:], out.stderr[-3000:])
    calls, refused = (int(w) for w in out.stdout.split()[-3::2])
    assert calls > 2000 and refused > calls // 3  # the wrong calls were made, and refused
