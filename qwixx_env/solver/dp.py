"""The dynamic programme: the optimal expected further points of every solo sheet.

`V[combo, pen]` is what a sheet (a canonical row combination, see `states`) with `pen`
penalties is still worth, in expectation under optimal play, *before* the next roll: the
points its future crosses add (a cross in a row with n crosses adds table[n+1] - table[n],
the lock cell adds its lock cross too) minus the future penalties. Over sheets are worth 0;
the table starts as zeros, so sheets with two locked rows never need computing.

One roll from a sheet s, white sum t, colour dice d_r::

    value = max( C(t),  max_r Y_r(d_r) )
    C(t)   = best white option without a colour cross (pass-pass: -5 and a penalty)
    Y_r(d) = best white option followed by a colour cross in row r with w1+d or w2+d

The player sees all six dice, but the Y_r depend on one coloured die each, so for fixed
white dice E[max] is read off the product of the Y_r's distribution functions: sort the
values above C and sweep (at most 4*F of them) instead of enumerating F^4 dice.

Every cross moves some row's rightmost cross to the right, so sheets are solved in layers
of decreasing `progress` (the sum over rows of p+1, K for a locked row): a sheet's
successors all lie in layers already solved. Within a sheet, more penalties come first
(pass-pass only adds a penalty). A layer is split over the cores with `prange`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numba import prange

from qwixx_env.core.compile import kernel, leaf
from qwixx_env.core.variant import RuleTables, Variant
from qwixx_env.solver.states import Space, combo_index, cross, make_space

CHUNK = 256  # sheets per parallel work item: the scratch buffers are made once per item

NEG = -1.0e300  # "no such option"


class WhiteDice(NamedTuple):
    """The unordered white throws (w1 <= w2) and their probabilities (`white_dice`)."""

    w1: np.ndarray  # (n,) int64
    w2: np.ndarray  # (n,) int64
    prob: np.ndarray  # (n,) float64


class SheetScratch(NamedTuple):
    """The work arrays of `_solve_sheet` (K cells, F faces, MP penalty counts), made once per
    parallel work item."""

    S1: np.ndarray  # (4, K, MP): one cross's points + the value after it, per penalty count
    G1: np.ndarray  # (4, K): the points of one cross
    C1: np.ndarray  # (4, K) int64: the row code after it
    W: np.ndarray  # (2F - 1, MP, 4): per white sum, a white cross and no colour cross
    A: np.ndarray  # (2F - 1, MP, 4, K): per white sum, the best white option then a colour cross
    cv: np.ndarray  # (4F,): the values above the best no-colour option, sorted
    cr: np.ndarray  # (4F,) int64: their rows


@leaf
def _with(rows, r1, v1, r2, v2):
    """Canonical index of `rows` with row r1 set to code v1 and row r2 to v2 (r2 = -1: none)."""
    c0 = v1 if r1 == 0 else (v2 if r2 == 0 else rows[0])
    c1 = v1 if r1 == 1 else (v2 if r2 == 1 else rows[1])
    c2 = v1 if r1 == 2 else (v2 if r2 == 2 else rows[2])
    c3 = v1 if r1 == 3 else (v2 if r2 == 3 else rows[3])
    return combo_index(c0, c1, c2, c3)


@kernel()
def _solve_sheet(V, me, rows, tb, sp, dice, work):
    """Fill V[me, :] for the sheet with row codes `rows` (successors must be solved);
    `dice`: the `WhiteDice`, `work`: a `SheetScratch`."""
    S1, G1, C1, W, A, cv, cr = work
    dw1, dw2, dprob = dice
    K = tb.cells
    F = tb.faces
    MP = V.shape[1]
    p = np.empty(4, np.int64)
    open_row = np.empty(4, np.bool_)
    nlocked = 0
    for r in range(4):
        open_row[r] = rows[r] != sp.locked
        p[r] = sp.row_p[rows[r]]  # K-1 for a locked row: no cell left
        if not open_row[r]:
            nlocked += 1

    # One cross: S1[r, c, pen] = its points + the value after it; G1, C1 its points and code.
    S1[:] = NEG
    for r in range(4):
        for c in range(p[r] + 1, K):
            code, gain = cross(sp, tb, rows[r], c)
            if code < 0:
                continue
            idx = _with(rows, r, code, -1, 0)
            G1[r, c] = gain
            C1[r, c] = code
            for pen in range(MP):
                S1[r, c, pen] = gain + V[idx, pen]

    # Per white sum: W (white cross, no colour cross) and A (best white option, then a
    # colour cross in row r at cell c), for every penalty count at once.
    W[:] = NEG
    A[:] = NEG
    wcell = np.empty(4, np.int64)
    wok = np.empty(4, np.bool_)
    for s in range(2, 2 * F + 1):
        t = s - 2
        for q in range(4):
            wcell[q] = tb.cell_of[q, s]
            wok[q] = S1[q, wcell[q], 0] > NEG
            if wok[q]:
                for pen in range(MP):
                    W[t, pen, q] = S1[q, wcell[q], pen]
                # A white cross that ends the game leaves no colour action.
                if C1[q, wcell[q]] == sp.locked and nlocked + 1 >= tb.rows_to_end:
                    wok[q] = False
        lo = max(1, s - F) + 1  # colour sums one of these white dice can make
        hi = min(F, s - 1) + F
        for r in range(4):
            if not open_row[r]:
                continue
            for u in range(lo, hi + 1):
                c = tb.cell_of[r, u]
                for pen in range(MP):
                    A[t, pen, r, c] = S1[r, c, pen]  # white pass, colour cross
                # White and colour cross in the same row: the colour cross right of it.
                wc = wcell[r]
                if wok[r] and c > wc:
                    code, gain = cross(sp, tb, C1[r, wc], c)
                    if code >= 0:
                        gain += G1[r, wc]
                        idx = _with(rows, r, code, -1, 0)
                        for pen in range(MP):
                            v = gain + V[idx, pen]
                            if v > A[t, pen, r, c]:
                                A[t, pen, r, c] = v
                if S1[r, c, 0] <= NEG:
                    continue  # the colour cross itself is illegal
                # White cross in another row q, colour cross in row r.
                for q in range(4):
                    if q == r or not wok[q]:
                        continue
                    idx = _with(rows, q, C1[q, wcell[q]], r, C1[r, c])
                    gain = G1[q, wcell[q]] + G1[r, c]
                    for pen in range(MP):
                        v = gain + V[idx, pen]
                        if v > A[t, pen, r, c]:
                            A[t, pen, r, c] = v

    # The expectation over the dice, most penalties first (pass-pass leads there).
    me_value = np.zeros(MP + 1)
    m = np.empty(4, np.int64)
    for pen in range(MP - 1, -1, -1):
        pass_pass = -tb.penalty_points + me_value[pen + 1]
        total = 0.0
        for k in range(dw1.shape[0]):
            w1 = dw1[k]
            w2 = dw2[k]
            t = w1 + w2 - 2
            best_c = pass_pass
            for q in range(4):
                if W[t, pen, q] > best_c:
                    best_c = W[t, pen, q]
            # Values above C, sorted ascending (insertion), tagged with their row.
            nc = 0
            for r in range(4):
                m[r] = F
                if not open_row[r]:
                    continue
                below = 0
                for d in range(1, F + 1):
                    y = A[t, pen, r, tb.cell_of[r, w1 + d]]
                    y2 = A[t, pen, r, tb.cell_of[r, w2 + d]]
                    if y2 > y:
                        y = y2
                    if y <= best_c:
                        below += 1
                        continue
                    j = nc
                    while j > 0 and cv[j - 1] > y:
                        cv[j] = cv[j - 1]
                        cr[j] = cr[j - 1]
                        j -= 1
                    cv[j] = y
                    cr[j] = r
                    nc += 1
                m[r] = below
            # E[max] = sum over ascending values of value * (increase of the joint CDF).
            scale = 1.0 / (F * F * F * F)
            cdf = m[0] * m[1] * m[2] * m[3] * scale
            e = best_c * cdf
            for j in range(nc):
                m[cr[j]] += 1
                nxt = m[0] * m[1] * m[2] * m[3] * scale
                e += cv[j] * (nxt - cdf)
                cdf = nxt
            total += dprob[k] * e
        me_value[pen] = total
        V[me, pen] = total


def parallel_tables(tb: RuleTables) -> RuleTables:
    """`tb` as a `prange` kernel can take it: numba's parallel lowering passes no tuple to the
    loop's body, so the row and die ids go as arrays (the kernels read R and D from their
    lengths, at run time here rather than when compiling)."""
    return tb._replace(row_ids=np.array(tb.row_ids, np.int64), die_ids=np.array(tb.die_ids, np.int64))


@kernel(parallel=True)
def _solve_layer(V, combos, rows4, tb, sp, dice):
    """Solve the sheets `combos` (row codes `rows4`), whose successors are all solved."""
    K = tb.cells
    F = tb.faces
    MP = V.shape[1]
    n = combos.shape[0]
    chunks = (n + CHUNK - 1) // CHUNK
    for ch in prange(chunks):
        work = SheetScratch(
            S1=np.empty((4, K, MP)),
            G1=np.zeros((4, K)),
            C1=np.zeros((4, K), np.int64),
            W=np.empty((2 * F - 1, MP, 4)),
            A=np.empty((2 * F - 1, MP, 4, K)),
            cv=np.empty(4 * F),
            cr=np.empty(4 * F, np.int64),
        )
        for i in range(ch * CHUNK, min(n, (ch + 1) * CHUNK)):
            _solve_sheet(V, combos[i], rows4[i], tb, sp, dice, work)


def white_dice(faces: int) -> WhiteDice:
    """The unordered white throws (w1 <= w2) and their probabilities."""
    w1, w2, prob = [], [], []
    for a in range(1, faces + 1):
        for b in range(a, faces + 1):
            w1.append(a)
            w2.append(b)
            prob.append((1 if a == b else 2) / faces**2)
    return WhiteDice(np.array(w1, np.int64), np.array(w2, np.int64), np.array(prob))


def layers(space: Space, rows_to_end: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The sheets still in play, as (combo indices, (n, 4) row codes) per layer, in solving order.

    A layer holds the sheets of one `progress` (sum of p+1 over rows, K for a locked row);
    every cross raises it, so solving from the highest progress down finds successors done.
    """
    P = space.num_pairs
    hi = np.repeat(np.arange(P, dtype=np.int64), np.arange(1, P + 1))  # combo = T(hi) + lo
    lo = np.arange(space.num_combos, dtype=np.int64) - hi * (hi + 1) // 2
    pair_hi = np.repeat(np.arange(space.num_codes, dtype=np.int64), np.arange(1, space.num_codes + 1))
    pair_lo = np.arange(P, dtype=np.int64) - pair_hi * (pair_hi + 1) // 2
    rows = np.stack([pair_lo[lo], pair_hi[lo], pair_lo[hi], pair_hi[hi]], axis=1)
    del hi, lo
    progress = (space.row_p[rows] + 1).sum(axis=1)
    in_play = (rows == space.locked).sum(axis=1) < rows_to_end
    out = []
    for level in range(int(progress.max()), -1, -1):
        idx = np.flatnonzero(in_play & (progress == level))
        if idx.size:
            out.append((idx, np.ascontiguousarray(rows[idx])))
    return out


def solve_values(
    variant: Variant,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """V: (combos, max_penalties) float64, the expected further points of every solo sheet.

    `progress(done, total)` is called after every layer with the number of sheets solved.
    """
    tb = parallel_tables(variant.tables)
    sp = make_space(variant)
    V = np.zeros((sp.num_combos, variant.max_penalties))
    dice = white_dice(variant.faces)
    plan = layers(sp, variant.rows_to_end)
    total = sum(len(c) for c, _ in plan)
    done = 0
    for combos, rows4 in plan:
        _solve_layer(V, combos, rows4, tb, sp, dice)
        done += len(combos)
        if progress is not None:
            progress(done, total)
    return V
