"""Records and checkpoints carry their sheet: a variant that is not the package's own is
written whole into a game record (``"sheet"``) and a network file, so that `replay`,
`bots.load` and the arena work in a fresh process where nothing is registered, and a
definition that differs under the same name is named as such."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from qwixx_env import qwixx_v0, replay
from qwixx_env.core.observation import layout_for
from qwixx_env.core.options import TableOptions
from qwixx_env.core.variant import CLASSIC, Row, Variant, register_variant
from qwixx_env.nets import NumpyPolicy
from qwixx_env.nets.checkpoint import CheckpointError, write_policy

UP = tuple(range(2, 13))


def sheet(name: str, **change) -> Variant:
    """Two rows whose cells alternate between two dice each (a 'Mixx'-style sheet)."""
    rows = (Row("a", UP, ("red", "yellow") * 5 + ("red",)), Row("b", UP[::-1], ("green", "blue") * 5 + ("green",)))
    return Variant(name=name, faces=6, lock_cells=1, lock_threshold=5, score_table=CLASSIC.score_table,
                   rows_to_end=1, rows=rows, **change)


def played_record(variant: str, seed: int = 3) -> dict:
    """A whole game of `variant`, each seat crossing its highest legal action."""
    env = qwixx_v0.raw_env(num_players=2, variant=variant)
    env.reset(seed=seed)
    for _ in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[-1]))
    return env.record()


def small_policy(path, variant: Variant) -> None:
    """A tiny random policy checkpoint of `variant` for 2 players."""
    rng = np.random.default_rng(0)
    width, actions = layout_for(variant, 2).size, variant.num_actions
    write_policy(path, policy=[(rng.normal(size=(actions, width)), np.zeros(actions), None)],
                 value=[(rng.normal(size=(1, width)), np.zeros(1), None)], variant=variant.name, num_players=2,
                 meta={"test": True})


def test_a_record_of_a_users_sheet_carries_it_and_the_packages_own_do_not():
    register_variant(sheet("carried_rec"))
    record = played_record("carried_rec")
    assert Variant.from_dict(record["sheet"]) == sheet("carried_rec")
    assert replay(record).snapshot() == record["snapshot"]
    assert "sheet" not in played_record("classic")  # every process knows the package's own


def test_a_checkpoint_of_a_users_sheet_carries_it(tmp_path):
    register_variant(sheet("carried_net"))
    small_policy(tmp_path / "net", sheet("carried_net"))
    assert Variant.from_dict(json.loads((tmp_path / "net.json").read_text())["sheet"]) == sheet("carried_net")
    assert NumpyPolicy.load(tmp_path / "net.json").variant == "carried_net"


def test_a_record_or_checkpoint_of_another_definition_under_the_same_name_is_named_as_such(tmp_path):
    theirs, mine = sheet("carried_clash", penalty_points=3), sheet("carried_clash")
    register_variant(theirs)
    record = played_record("carried_clash")
    small_policy(tmp_path / "net", theirs)
    register_variant(mine, replace=True)  # a notebook edits its sheet under the same name
    with pytest.raises(ValueError, match=r"record sheet: the record's variant 'carried_clash' is not the one "
                                         r"registered in this process under that name \(penalty_points 5 / 3"):
        replay(record)
    with pytest.raises(CheckpointError, match=r"sheet: the file's variant 'carried_clash' is not the one registered"):
        NumpyPolicy.load(tmp_path / "net.json")
    old = {k: v for k, v in record.items() if k != "sheet"}  # kept before records carried their sheet
    with pytest.raises(ValueError, match=r"\(the record was changed, or the variant 'carried_clash' registered here "
                                         r"is not the one it was played with"):
        replay(old)
    register_variant(theirs, replace=True)
    assert replay(old).snapshot() == record["snapshot"]  # an old record replays where its variant is registered


FRESH = textwrap.dedent("""\
    import json, sys
    from qwixx_env import bots, replay
    from qwixx_env.cli import main
    from qwixx_env.core.variant import variant_names
    folder = sys.argv[1]
    assert "carried_fresh" not in variant_names()
    record = json.load(open(folder + "/game.json"))
    old = {k: v for k, v in record.items() if k != "sheet"}  # kept before records carried their sheet
    try:
        replay(old)
    except ValueError as err:
        print("OLD:", err)
    main(["arena", folder + "/net.json", "random", "--games", "1", "--workers", "2", "--quiet"])  # its table
    print("ARENA:", "carried_fresh" in variant_names())
    print("SCORES:", [p["score"] for p in replay(record).snapshot()["players"]])
    print("BOT:", bots.load(folder + "/net.json").act is not None)
""")


def test_a_record_and_a_checkpoint_replay_and_play_in_a_fresh_process_with_nothing_registered(tmp_path):
    register_variant(sheet("carried_fresh"))
    record = played_record("carried_fresh")
    (tmp_path / "game.json").write_text(json.dumps(record))
    small_policy(tmp_path / "net", sheet("carried_fresh"))
    out = subprocess.run([sys.executable, "-c", FRESH, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "carried_fresh, 2 player(s)" in out.stdout and "ARENA: True" in out.stdout
    assert "OLD: record options: variant 'carried_fresh' is not registered in this process and the record carries " \
           "no sheet" in out.stdout
    assert f"SCORES: {[p['score'] for p in record['snapshot']['players']]}" in out.stdout
    assert "BOT: True" in out.stdout


def test_a_table_of_a_users_sheet_pickles_with_it_for_a_worker_that_never_registered_it():
    table = TableOptions(num_players=3, variant=sheet("carried_pickled"), reward="score")
    read_back = ("import pickle, sys\nfrom qwixx_env.core.variant import variant_names\n"
                 "assert 'carried_pickled' not in variant_names()\n"
                 "table = pickle.loads(sys.stdin.buffer.read())\n"
                 "print(table.rules.dice_colors, table.num_players, table.reward)\n")
    out = subprocess.run([sys.executable, "-c", read_back], input=pickle.dumps(table), capture_output=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().strip() == "('red', 'yellow', 'green', 'blue') 3 score"
    assert pickle.loads(pickle.dumps(TableOptions())) == TableOptions()  # the package's own: by name
