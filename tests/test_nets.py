"""The shipped win-chance networks: one checked file format with the policy checkpoints."""

import json
import shutil

import numpy as np
import pytest

from qwixx_env.nets import CheckpointError, checkpoints_dir, win_chance_network, write_win_chance
from qwixx_env.nets.checkpoint import POLICY, WIN_CHANCE, json_and_npz, read, write
from qwixx_env.nets.win_chance import kernel_arrays, networks_dir
from qwixx_env.policies.value import num_features

SHIPPED = [("value", 2), ("afterstate", 2), ("afterstate", 3), ("afterstate", 4)]


def random_network(players, rng, hidden=(8, 4)):
    sizes = (num_features(players), *hidden, 1)
    out = []
    for a, b in zip(sizes, sizes[1:]):
        out += [rng.normal(size=(a, b)), rng.normal(size=b)]
    return tuple(out)


@pytest.mark.parametrize("role, players", SHIPPED)
def test_every_shipped_network_is_a_checked_file_the_kernels_can_read(role, players):
    net = win_chance_network(role, "classic", players)
    assert win_chance_network(role, "classic", players) is net  # read once per process
    assert [a.dtype for a in net] == [np.float64] * 6 and all(a.flags.c_contiguous for a in net)
    assert net[0].shape[0] == num_features(players) and net[4].shape[1] == 1
    spec = json.loads((networks_dir() / f"{role}-classic-{players}p.json").read_text())
    assert spec["format"] == "qwixx_env.win_chance/1" and spec["num_players"] == players


def test_a_network_written_and_read_back_is_the_same_to_the_bit(tmp_path):
    net = random_network(3, np.random.default_rng(0))
    path = write_win_chance(tmp_path / "mine", net, variant="classic", num_players=3, meta={"seed": 0})
    back = kernel_arrays(*read(*json_and_npz(path), kind=WIN_CHANCE))
    assert all(np.array_equal(a, b) and a.shape == b.shape for a, b in zip(net, back))


def test_a_changed_network_file_is_refused_by_its_hash(tmp_path):
    for suffix in ("json", "npz"):
        shutil.copy(networks_dir() / f"value-classic-2p.{suffix}", tmp_path / f"value-classic-2p.{suffix}")
    npz = tmp_path / "value-classic-2p.npz"
    data = bytearray(npz.read_bytes())
    data[-200] ^= 1  # one bit of one weight
    npz.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"sha256 .* differs"):
        read(*json_and_npz(npz), kind=WIN_CHANCE)


def test_a_network_of_one_kind_is_refused_as_the_other():
    with pytest.raises(CheckpointError, match=r"format: got 'qwixx_env.win_chance/1'; expected 'qwixx_env.policy/1'"):
        read(*json_and_npz(networks_dir() / "value-classic-2p"), kind=POLICY)
    with pytest.raises(CheckpointError, match=r"format: got 'qwixx_env.policy/1'; expected 'qwixx_env.win_chance/1'"):
        read(*json_and_npz(checkpoints_dir() / "ppo-classic-2p"), kind=WIN_CHANCE)


def test_a_network_of_the_wrong_width_is_refused_before_anything_is_written(tmp_path):
    net = random_network(2, np.random.default_rng(1))
    with pytest.raises(CheckpointError, match=r"networks.win_chance\[0\].in: got 36; the features have 52"):
        write_win_chance(tmp_path / "x", net, variant="classic", num_players=3, meta={})
    assert list(tmp_path.iterdir()) == []


def test_a_network_the_kernels_cannot_run_is_refused_when_written(tmp_path):
    w1, b1, w2, b2, w3, b3 = random_network(2, np.random.default_rng(2))
    two_layers = (w1, b1, np.zeros((8, 1)), np.zeros(1))
    with pytest.raises(CheckpointError, match=r"networks.win_chance: expected three layers, relu, relu"):
        write(tmp_path / "x", {"variant": "classic", "num_players": 2, "num_features": num_features(2), "meta": {}},
              {"win_chance": [(two_layers[0].T, two_layers[1], "relu"), (two_layers[2].T, two_layers[3], None)]},
              WIN_CHANCE)
    assert list(tmp_path.iterdir()) == []
