"""Helpers the test modules share: they build positions and drive games; the tests assert.

Import them by name (``from conftest import position``); pytest puts this folder on the path.
Sheets are hand-drawn as one dict per seat: colour -> crossed numbers, plus optional "locks"
(rows whose lock the seat crossed), "penalties" and Longo's "lucky" numbers. Dice are written
(white, white, red, yellow, green, blue), None for a die out of play.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from qwixx_env import BatchedQwixx
from qwixx_env.core import COLORS, get_variant, layout_for, state_from_snapshot
from qwixx_env.nets import write_policy
from qwixx_env.solver import load_table


def position(v, sheets, dice, active=0, phase="white", turn=None):
    """A one-game core state of variant `v` from hand-drawn sheets (in seat order) and dice;
    `turn`, when given, is the seat to decide (by default the one the phase makes it)."""
    players = [
        {
            "marks": {c: list(sheet.get(c, [])) for c in COLORS},
            "locks": list(sheet.get("locks", [])),
            "penalties": sheet.get("penalties", 0),
            "lucky_numbers": list(sheet.get("lucky", [])),
        }
        for sheet in sheets
    ]
    snap = {
        "num_players": len(sheets),
        "players": players,
        "dice": {"white": list(dice[:2]), **dict(zip(COLORS, dice[2:]))},
        "active_player": active,
        "phase": phase,
    }
    st = state_from_snapshot(v, snap)
    if turn is not None:
        st.turn[0] = turn
    return st


def random_legal_action(mask: np.ndarray, rng: np.random.Generator) -> int:
    """One uniformly random legal action of one action mask."""
    return int(rng.choice(np.flatnonzero(mask)))


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of masks (pass, the last action, where a row
    offers none)."""
    actions = np.full(len(masks), masks.shape[1] - 1, np.int64)
    for b, row in enumerate(masks):
        legal = np.flatnonzero(row)
        if legal.size:
            actions[b] = rng.choice(legal)
    return actions


def random_positions(games: int, steps: int, seed: int = 0, **options):
    """Yield (engine, b) for every game b of a `BatchedQwixx(games, **options)` over `steps`
    rounds of random legal play from `reset(seed=seed)`."""
    engine = BatchedQwixx(games, **options)
    engine.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        for b in range(games):
            yield engine, b
        engine.step(random_legal_actions(engine.masks, rng))


def play_game(env, players, seed: int | None = None) -> list[tuple[dict, int]]:
    """Play one AEC game to its end, from `reset(seed=seed)` when a seed is given: each seat's
    bot (`players` in seat order, or one bot for every seat) acts on its own observation and the
    finished agents' None steps are taken here. Returns the decisions as (observation, action)."""
    if seed is not None:
        env.reset(seed=seed)
    seats = env.unwrapped.agent_name_mapping
    decisions = []
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        bot = players[seats[agent]] if isinstance(players, (list, tuple)) else players
        action = bot.act(obs)
        decisions.append((obs, action))
        env.step(action)
    return decisions


def visible(game) -> dict:
    """Everything an outsider can read of a raw AEC game: snapshot, every agent's observation
    and mask, the agent to act."""
    return {
        "snapshot": game.snapshot(),
        "agent_selection": game.agent_selection,
        "obs": {a: game.observe(a)["observation"].tobytes() for a in game.possible_agents},
        "masks": {a: game.observe(a)["action_mask"].tobytes() for a in game.possible_agents},
    }


def random_layers(sizes, activation, rng: np.random.Generator) -> list:
    """Network layers (weight (out, in), bias, activation) of random weights for the widths
    `sizes`, no activation after the last."""
    return [
        (
            rng.normal(0, 1 / np.sqrt(a), (b, a)),
            rng.normal(0, 0.1, b),
            activation if i < len(sizes) - 2 else None,
        )
        for i, (a, b) in enumerate(zip(sizes, sizes[1:]))
    ]


def tiny_checkpoint(folder, name="tiny", variant="classic", num_players=2, activation="tanh", seed=0):
    """A checkpoint with random weights: one hidden layer of 16 in each network."""
    rng = np.random.default_rng(seed)
    D, A = layout_for(variant, num_players).size, get_variant(variant).num_actions
    return write_policy(
        Path(folder) / name,
        policy=random_layers([D, 16, A], activation, rng),
        value=random_layers([D, 16, 1], activation, rng),
        variant=variant,
        num_players=num_players,
        meta={"made_by": "tests/conftest.py", "seed": seed},
    )


@pytest.fixture
def one_torch_thread():
    """One torch thread for the test: tiny networks on a shared 2-core machine, where torch's
    thread pool only costs (the torch-based integrations' tests use it for every test)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def classic(tmp_path_factory):
    """The solo classic value table, solved from nothing into a fresh cache directory once per
    test session (the solver's tests and the solo coach's share it); `solver.load_table`
    returns this table for the rest of the session."""
    directory = tmp_path_factory.mktemp("qwixx_cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QWIXX_ENV_CACHE", str(directory))
        yield load_table("classic")


@contextlib.contextmanager
def serving(app):
    """`app` under uvicorn on a free loopback port: yields the page's address
    (``http://127.0.0.1:PORT/``). For the play server's tests (the play extra)."""
    import uvicorn  # the play extra's: only the play tests call this

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
