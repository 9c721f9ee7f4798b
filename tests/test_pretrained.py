"""Pretrained bots: export from MaskablePPO, the numpy forward pass, the safety checks of
loading, the bot registry, and loading from an installed wheel.

Every test makes its own tiny checkpoint (random numpy weights, or a small MaskablePPO for
the torch comparisons); only `test_each_installed_checkpoint_loads_and_plays_a_legal_game`
reads the committed ones.
"""

import hashlib
import io
import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from qwixx_env import QwixxVectorEnv, bots, qwixx_v0
from qwixx_env.arena import run_arena
from qwixx_env.bots import pretrained, registry
from qwixx_env.bots.pretrained import CheckpointError, NumpyPolicy, PretrainedBot, write_policy
from qwixx_env.bots.specs import as_spec
from qwixx_env.core.options import TableOptions
from qwixx_env.nets import checkpoint, installed
from qwixx_env.training.export import export_policy

from conftest import play_game, random_layers, random_legal_actions, tiny_checkpoint

REPO = Path(__file__).resolve().parents[1]


def random_play(variant, steps=50, games=64, seed=0):
    """(observations, masks) of the learner's decisions in `steps` rounds of random play."""
    env = QwixxVectorEnv(games, num_players=2, variant=variant, opponents="random")
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen, masks = [], []
    for _ in range(steps):
        seen.append(obs["observation"])
        masks.append(obs["action_mask"])
        obs, *_ = env.step(random_legal_actions(obs["action_mask"], rng))
    return np.concatenate(seen), np.concatenate(masks)


def rewrite(json_path, **changes):
    """Change fields of a checkpoint's JSON (to make it wrong on purpose)."""
    spec = json.loads(json_path.read_text())
    spec.update(changes)
    json_path.write_text(json.dumps(spec))


def replace_weights(json_path, data):
    """Put `data` in the npz and make the JSON's size and sha256 agree, as a forger would."""
    json_path.with_suffix(".npz").write_bytes(data)
    rewrite(json_path, weights={"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})


# --- the numpy policy against the torch policy it was exported from ---------------------------


@pytest.fixture(
    scope="module", params=[("classic", "Tanh", 256), ("longo", "ReLU", 0)], ids=lambda p: f"{p[0]}-{p[1]}"
)
def exported(request, tmp_path_factory):
    """(MaskablePPO model, its exported NumpyPolicy, JSON path): a tiny classic model trained
    for a few hundred steps and an untrained Longo one with relu."""
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from qwixx_env.envs.sb3 import Sb3VecEnv

    torch.set_num_threads(1)
    variant, activation, steps = request.param
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        Sb3VecEnv(QwixxVectorEnv(8, num_players=2, variant=variant)),
        n_steps=16,
        batch_size=32,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32, 32], "activation_fn": getattr(torch.nn, activation)},
    )
    if steps:
        model.learn(steps)
    path = export_policy(model, tmp_path_factory.mktemp("export") / "ppo", meta={"steps": steps})
    return model, NumpyPolicy.load(path), path


@pytest.mark.slow
def test_numpy_policy_picks_the_torch_policys_actions_logits_and_values(exported):
    import torch

    model, policy, _ = exported
    obs, masks = random_play(policy.variant)
    assert len(obs) == 3200
    expected, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    with torch.no_grad():
        latent_pi, latent_vf = model.policy.mlp_extractor(model.policy.extract_features(torch.as_tensor(obs)))
        logits = model.policy.action_net(latent_pi).numpy()
        values = model.policy.value_net(latent_vf).numpy()[:, 0]
        probs = model.policy.get_distribution(
            torch.as_tensor(obs), masks.astype(bool)
        ).distribution.probs.numpy()
    # MaskablePPO takes the argmax of the float32 softmax: legal logits closer than its rounding
    # (1e-7 apart, where these tiny nets' logits are ~1e-3) tie there and go to the lowest action.
    # Everywhere else the two pick the same action; on those ties, numpy picks a tied one.
    best = probs == probs.max(axis=1, keepdims=True)
    assert (expected == best.argmax(axis=1)).all()
    got = policy(obs, masks)
    unique = best.sum(axis=1) == 1
    assert unique.mean() > 0.99
    np.testing.assert_array_equal(got[unique], expected[unique])
    assert best[np.arange(len(got)), got].all()
    np.testing.assert_allclose(policy.logits(obs), logits, atol=1e-5, rtol=0)
    np.testing.assert_allclose(policy.value(obs), values, atol=1e-5, rtol=0)


@pytest.mark.slow
def test_export_describes_the_game_the_layers_and_the_training(exported):
    model, policy, path = exported
    spec = json.loads(path.read_text())
    npz = path.with_suffix(".npz").read_bytes()
    assert spec["format"] == "qwixx_env.policy/1"
    assert (spec["variant"], spec["num_players"]) == (policy.variant, 2)
    assert spec["lucky"] == (None if policy.variant == "classic" else "bonus")
    assert spec["observation_size"] == model.observation_space.shape[0]
    assert spec["num_actions"] == model.action_space.n
    activation = "tanh" if policy.variant == "classic" else "relu"
    hidden = [
        {"in": spec["observation_size"], "out": 32, "activation": activation},
        {"in": 32, "out": 32, "activation": activation},
    ]
    assert spec["networks"]["policy"] == [*hidden, {"in": 32, "out": spec["num_actions"], "activation": None}]
    assert spec["networks"]["value"] == [*hidden, {"in": 32, "out": 1, "activation": None}]
    assert spec["weights"] == {"sha256": hashlib.sha256(npz).hexdigest(), "bytes": len(npz)}
    assert spec["meta"] == policy.meta and "steps" in spec["meta"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["ppo.json", "ppo.npz"]  # no temp files left


@pytest.mark.slow
def test_export_refuses_a_model_whose_game_it_cannot_tell(exported, tmp_path):
    model, _, _ = exported
    env = model.get_env()
    model.env = None
    try:
        with pytest.raises(ValueError, match="pass variant= and num_players="):
            export_policy(model, tmp_path / "x", meta={})
        path = export_policy(
            model, tmp_path / "x", meta={}, variant=env.env.variant.name, num_players=2
        )
        assert NumpyPolicy.load(path).variant == env.env.variant.name
    finally:
        model.env = env


# --- the policy and the bot in play ------------------------------------------------------------


def test_numpy_policy_is_a_frozen_opponent_of_the_vector_env(tmp_path):
    policy = NumpyPolicy.load(tiny_checkpoint(tmp_path))
    env = QwixxVectorEnv(16, num_players=2, opponents={policy: 1, "random": 1})
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs, *_ = env.step(random_legal_actions(obs["action_mask"], rng))
    assert env.opponent_decisions > 0


def test_numpy_policy_takes_the_highest_legal_logit_and_the_lowest_action_on_ties(tmp_path):
    policy = NumpyPolicy.load(tiny_checkpoint(tmp_path))
    obs = np.zeros((2, policy.observation_size), np.float32)
    masks = np.zeros((2, policy.num_actions), np.int8)
    masks[0, [3, 7, 44]] = 1
    masks[1, :] = 1
    logits = policy.logits(obs)
    assert policy(obs, masks)[0] == [3, 7, 44][int(np.argmax(logits[0, [3, 7, 44]]))]
    assert policy(obs, masks)[1] == int(np.argmax(logits[1]))
    rng = np.random.default_rng(0)
    flat = write_policy(  # an output layer of zeros: every logit equal
        tmp_path / "flat",
        policy=[*random_layers([198, 16, 45], "tanh", rng)[:-1], (np.zeros((45, 16)), np.zeros(45), None)],
        value=random_layers([198, 1], "tanh", rng),
        variant="classic",
        num_players=2,
        meta={},
    )
    assert NumpyPolicy.load(flat)(obs, masks).tolist() == [3, 0]  # ties: the lowest legal action


@pytest.mark.parametrize("variant, num_players", [("classic", 2), ("classic", 1), ("longo", 3)])
def test_bot_picks_only_legal_actions_in_full_aec_games(tmp_path, variant, num_players):
    bot = bots.load(tiny_checkpoint(tmp_path, variant=variant, num_players=num_players))
    env = qwixx_v0.raw_env(num_players=num_players, variant=variant)  # raw: an illegal action raises
    for seed in range(3):
        decisions = play_game(env, bot, seed=seed)
        for obs, action in decisions:
            assert action is None or obs["action_mask"][action] == 1
        assert len(decisions) > 10


def test_bot_plays_in_the_arena_from_a_factory(tmp_path):
    path = tiny_checkpoint(tmp_path)

    def tiny(**options):
        return bots.load(path, **options)

    result = run_arena([tiny, "random"], num_players=2, games=3, seed=0, workers=1)
    assert [b["label"] for b in result.bots] == ["tiny", "random"]
    assert [b["games"] for b in result.bots] == [6, 6]


def test_bot_rejects_a_variant_or_player_count_the_checkpoint_does_not_play(tmp_path):
    path = tiny_checkpoint(tmp_path, num_players=2)
    assert bots.load(path, variant="classic", num_players=2).num_players == 2
    with pytest.raises(
        ValueError, match=r"num_players: got 3; checkpoint 'tiny' .* plays num_players=2 only"
    ):
        bots.load(path, num_players=3)
    with pytest.raises(
        ValueError, match=r"variant: got 'longo'; checkpoint 'tiny' .* plays variant='classic' only"
    ):
        bots.load(path, variant="longo")
    with pytest.raises(ValueError, match=r"observations: got shape \(1, 5\); .* expects \(n, 198\)"):
        NumpyPolicy.load(path)(np.zeros((1, 5)), np.ones((1, 45)))
    with pytest.raises(ValueError, match=r"masks: got shape \(1, 61\); .* expects \(n, 45\)"):
        NumpyPolicy.load(path)(np.zeros((1, 198)), np.ones((1, 61)))
    with pytest.raises(ValueError, match="row 0 offers no legal action"):
        NumpyPolicy.load(path)(np.zeros((1, 198)), np.zeros((1, 45)))


# --- finding checkpoints: paths, names, the registry -------------------------------------------


def test_load_takes_a_path_with_or_without_suffix_and_an_installed_name(tmp_path, monkeypatch):
    path = tiny_checkpoint(tmp_path)
    for spelling in (path, str(path), path.with_suffix(".npz"), str(path.with_suffix(""))):
        assert bots.load(spelling).name == "tiny"
    monkeypatch.setattr(installed, "checkpoints_dir", lambda: tmp_path)
    assert installed.checkpoint_names() == ["tiny"]
    assert isinstance(bots.load("tiny"), PretrainedBot)
    with pytest.raises(CheckpointError, match=r"got name 'tinny'; installed checkpoints are \['tiny'\]"):
        bots.load("tinny")


def test_registered_checkpoints_are_made_by_name_and_read_only_then(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    tiny_checkpoint(tmp_path, name="ppo-tiny-2p")
    (tmp_path / "ppo-broken.json").write_text("{ not json")  # registering does not read it
    assert pretrained._register_folder(tmp_path) == ["ppo-broken", "ppo-tiny-2p"]
    assert {"ppo-broken", "ppo-tiny-2p"} <= set(bots.available())
    bot = bots.make("ppo-tiny-2p", num_players=2)
    assert bot.name == "ppo-tiny-2p" and bot.num_players == 2
    with pytest.raises(ValueError, match="plays num_players=2 only"):
        bots.make("ppo-tiny-2p", num_players=4)
    with pytest.raises(CheckpointError, match=r"ppo-broken.json: not valid JSON"):
        bots.make("ppo-broken")


def test_make_defaults_to_the_game_the_checkpoint_plays(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    tiny_checkpoint(tmp_path, name="ppo-tiny-3p", num_players=3)
    pretrained._register_folder(tmp_path)
    bot = bots.make("ppo-tiny-3p")  # no num_players: the checkpoint's 3, not make's usual 2
    assert (bot.variant.name, bot.num_players) == ("classic", 3)
    assert bot.table == TableOptions(num_players=3) and bot.variant == bot.table.rules  # as every bot keeps it
    with pytest.raises(ValueError, match="got 2; checkpoint 'ppo-tiny-3p'.*plays num_players=3 only"):
        bots.make("ppo-tiny-3p", num_players=2)
    with pytest.raises(ValueError, match=r"num_players: got 7; expected an integer from 1 to 5"):
        bots.make("ppo-tiny-3p", num_players=7)
    with pytest.raises(ValueError, match=r"variant: got 'longoo'"):
        bots.make("ppo-tiny-3p", variant="longoo")
    assert bots.make("heuristic").num_players == 2  # scripted bots keep classic, 2 players


# --- safety: bad files are clear errors and nothing in them runs ----------------------------------


class WritesAFile:
    """Pickles to a call of open(path, "w"): unpickling it would create the file."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_missing_files_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nothing.json: no such file"):
        bots.load(tmp_path / "nothing")
    path = tiny_checkpoint(tmp_path)
    path.with_suffix(".npz").unlink()
    with pytest.raises(
        FileNotFoundError, match=r"tiny.npz: no such file \(the weights tiny.json describes\)"
    ):
        bots.load(path)


def test_truncated_weights_are_refused(tmp_path):
    path = tiny_checkpoint(tmp_path)
    npz = path.with_suffix(".npz")
    size = npz.stat().st_size
    npz.write_bytes(npz.read_bytes()[: size // 2])
    with pytest.raises(
        CheckpointError, match=rf"tiny.npz: {size // 2} bytes, but tiny.json says {size} \(truncated"
    ):
        bots.load(path)


def test_tampered_weights_are_refused(tmp_path):
    path = tiny_checkpoint(tmp_path)
    npz = path.with_suffix(".npz")
    data = bytearray(npz.read_bytes())
    data[-20] ^= 1  # one bit of a weight
    npz.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"tiny.npz: sha256 [0-9a-f]{64} differs from .* in tiny.json"):
        bots.load(path)


def test_pickled_arrays_are_refused_and_never_unpickled(tmp_path):
    path = tiny_checkpoint(tmp_path)
    marker = tmp_path / "unpickled"
    arrays = dict(np.load(path.with_suffix(".npz")))
    arrays["policy.0.bias"] = np.array([WritesAFile(marker)] * 16, dtype=object)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    replace_weights(path, buffer.getvalue())
    # refused from the member's header, before numpy is asked for the data
    with pytest.raises(
        CheckpointError, match=r"tiny.npz: array 'policy.0.bias' is object \(16,\); expected float32"
    ):
        bots.load(path)
    assert not marker.exists()


def test_a_header_declaring_a_huge_array_is_refused_before_anything_is_allocated(tmp_path):
    path = tiny_checkpoint(tmp_path)
    with zipfile.ZipFile(path.with_suffix(".npz")) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = io.BytesIO()  # 2**33 float32 (32 GiB) declared, no data behind it
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2**33,)})
    members["policy.0.bias.npy"] = header.getvalue()  # the magic and the header, nothing more
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    replace_weights(path, buffer.getvalue())
    with pytest.raises(
        CheckpointError, match=r"array 'policy.0.bias' is float32 \(8589934592,\); expected float32 \(16,\)"
    ):
        bots.load(path)


def forged_hidden_layer(path, hidden):
    """Make the checkpoint at `path` declare a policy hidden layer of `hidden` units, in its JSON
    and in the npz members' headers, with 16 bytes of data behind each forged header. Returns
    (the npz's bytes, member name -> the bytes its header needs)."""
    spec = json.loads(path.read_text())
    spec["networks"]["policy"][0]["out"] = spec["networks"]["policy"][1]["in"] = hidden
    rewrite(path, networks=spec["networks"])
    with np.load(path.with_suffix(".npz")) as npz:
        arrays = {k: npz[k] for k in npz.files}
    shapes = {"policy.0.weight": (hidden, 198), "policy.0.bias": (hidden,), "policy.1.weight": (45, hidden)}
    buffer, needs = io.BytesIO(), {}
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, a in arrays.items():
            member = io.BytesIO()
            if name in shapes:
                np.lib.format.write_array_header_1_0(
                    member, {"descr": "<f4", "fortran_order": False, "shape": shapes[name]})
                needs[name + ".npy"] = member.tell() + 4 * math.prod(shapes[name])
                member.write(bytes(16))
            else:
                np.lib.format.write_array(member, a)
            archive.writestr(name + ".npy", member.getvalue())
    return buffer.getvalue(), needs


def test_a_forged_pair_declaring_a_huge_layer_without_its_data_is_refused_unallocated(tmp_path):
    """The JSON and the headers agree on a hidden layer of 2**30, but the data is not there:
    refused from the member's size, before numpy is asked for 2**30 x 198 floats."""
    path = tiny_checkpoint(tmp_path)
    data, _ = forged_hidden_layer(path, 2**30)
    replace_weights(path, data)
    with pytest.raises(
        CheckpointError,
        match=r"array 'policy.0.\w+' holds 16 bytes of data \(its zip entry says 16\); float32 \(1073741824",
    ):
        bots.load(path)


def test_a_zip_entry_declaring_more_data_than_it_stores_is_refused_unallocated(tmp_path):
    """The forger also sets the zip directory's uncompressed sizes to what the headers need
    (2**20 rows: 830 MB), while each entry stores 16 bytes: the sizes must agree."""
    path = tiny_checkpoint(tmp_path)
    stored, needs = forged_hidden_layer(path, 2**20)
    data = bytearray(stored)
    at = data.find(b"PK\x01\x02")
    while at >= 0:  # each central directory record: its uncompressed size, as the forger wants it
        length = int.from_bytes(data[at + 28:at + 30], "little")
        member = data[at + 46:at + 46 + length].decode()
        if member in needs:
            data[at + 24:at + 28] = needs[member].to_bytes(4, "little")
        at = data.find(b"PK\x01\x02", at + 4)
    replace_weights(path, bytes(data))
    with pytest.raises(
        CheckpointError, match=r"array 'policy.\d.\w+' holds 16 bytes of data \(its zip entry says \d+\)"
    ):
        bots.load(path)


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_path_that_is_not_a_regular_file_is_refused_as_such(tmp_path, kind):
    path = tiny_checkpoint(tmp_path)
    npz = path.with_suffix(".npz")
    npz.unlink()
    npz.mkdir() if kind == "folder" else os.mkfifo(npz)  # a fifo would block a reader forever
    with pytest.raises(
        CheckpointError, match=r"tiny.npz: not a regular file \(the weights tiny.json describes\)"
    ):
        bots.load(path)


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tiny_checkpoint(tmp_path)
    npz = path.with_suffix(".npz")
    size = npz.stat().st_size
    with open(npz, "ab") as f:
        f.truncate(size + 2**31)  # sparse: 2 GiB more on paper
    real_read = Path.read_bytes

    def read_bytes(self):
        assert self.stat().st_size < 2**30, f"{self} was read"
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(CheckpointError, match=rf"tiny.npz: {size + 2**31} bytes, but tiny.json says {size}"):
        bots.load(path)
    with open(path, "ab") as f:
        f.truncate(2**30)
    with pytest.raises(CheckpointError, match=r"tiny.json: 1073741824 bytes; a checkpoint's JSON is at most"):
        bots.load(path)


def test_an_encrypted_member_is_refused(tmp_path):
    path = tiny_checkpoint(tmp_path)
    data = bytearray(path.with_suffix(".npz").read_bytes())
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # local and central headers
        at = data.find(signature)
        while at >= 0:
            data[at + flag_at] |= 0x1  # general purpose bit 0: encrypted
            at = data.find(signature, at + 4)
    replace_weights(path, bytes(data))
    with pytest.raises(CheckpointError, match=r"tiny.npz: compressed or encrypted members"):
        bots.load(path)


def test_a_longo_checkpoint_plays_only_its_lucky_rule(tmp_path):
    assert bots.make("ppo-longo-2p", lucky="bonus").policy.lucky == "bonus"
    with pytest.raises(
        ValueError, match=r"lucky: got 'instead'; checkpoint 'ppo-longo-2p' .* plays lucky='bonus' only"
    ):
        bots.make("ppo-longo-2p", lucky="instead")
    with pytest.raises(ValueError, match=r"bot 'ppo-longo-2p': lucky: got 'instead'"):
        run_arena(["ppo-longo-2p", "heuristic"], variant="longo", lucky="instead", games=1, workers=1)
    with pytest.raises(
        ValueError,
        match=r"opponents: bot 'ppo-longo-2p' cannot play longo .*lucky: got 'instead'; .* plays lucky='bonus' only",
    ):
        QwixxVectorEnv(2, variant="longo", lucky="instead", opponents="ppo-longo-2p")
    assert (
        bots.make("ppo-classic-2p", lucky="bonus").policy.lucky is None
    )  # classic: the default rule is harmless
    with pytest.raises(ValueError, match=r"lucky: got 'instead'; the 'classic' variant has no lucky numbers"):
        bots.make("ppo-classic-2p", lucky="instead")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"format": "pickle/1"}, r"format: got 'pickle/1'; expected 'qwixx_env.policy/1'"),
        ({"variant": "chess"}, r"variant: got 'chess'; expected one of \('classic', 'longo'\)"),
        ({"num_players": 9}, r"num_players: got 9; expected an integer from 1 to 5"),
        (
            {"lucky": "instead"},
            r"lucky: got 'instead'; expected null \(classic has no lucky numbers\) for classic",
        ),
        ({"lucky": "bonus"}, r"lucky: got 'bonus'; expected null"),
        (
            {"inputs": [["afterstate"]]},
            r"inputs: got \[\['afterstate'\]\]; expected a list of distinct names",
        ),
        (
            {"observation_size": 198.0},
            r"observation_size: got 198\.0; the classic game for 2 player\(s\) has 198",
        ),
        ({"num_actions": 45.0}, r"num_actions: got 45\.0; the classic game"),
        ({"observation_size": 200}, r"observation_size: got 200; the classic game for 2 player\(s\) has 198"),
        ({"num_actions": 61}, r"num_actions: got 61; the classic game for 2 player\(s\) has 45"),
        ({"meta": []}, r"meta: got \[\]; expected an object"),
        (
            {"weights": {"sha256": "abc", "bytes": 10}},
            r"weights.sha256: got 'abc'; expected 64 lowercase hex digits",
        ),
        ({"extra": 1}, r"fields: missing \[\], unexpected \['extra'\]"),
        (
            {"networks": {"policy": []}},
            r"networks: got .*; expected an object with layer lists \['policy', 'value'\]",
        ),
    ],
    ids=lambda x: str(x)[:24],
)
def test_a_wrong_description_names_the_file_and_the_field(tmp_path, change, message):
    path = tiny_checkpoint(tmp_path)
    rewrite(path, **change)
    with pytest.raises(CheckpointError, match=rf"checkpoint .*tiny.json: {message}"):
        bots.load(path)


def test_a_wrong_layer_list_is_refused(tmp_path):
    path = tiny_checkpoint(tmp_path)
    spec = json.loads(path.read_text())
    layers = spec["networks"]["policy"]
    for layer, change, message in [
        (1, {"in": 17}, r"networks.policy\[1\].in: got 17; the layer before gives 16"),
        (
            0,
            {"activation": "sigmoid"},
            r"networks.policy\[0\].activation: got 'sigmoid'; expected one of \['relu', 'tanh'\]",
        ),
        (
            1,
            {"activation": "tanh"},
            r"networks.policy\[1\].activation: got 'tanh'; expected null \(the output layer\)",
        ),
        (1, {"out": 44}, r"networks.policy: outputs 44; expected 45"),
    ]:
        broken = [dict(entry) for entry in layers]
        broken[layer].update(change)
        rewrite(path, networks={"policy": broken, "value": spec["networks"]["value"]})
        with pytest.raises(CheckpointError, match=message):
            bots.load(path)


def test_weights_that_do_not_fit_the_layers_are_refused(tmp_path):
    path = tiny_checkpoint(tmp_path)
    arrays = dict(np.load(path.with_suffix(".npz")))
    for change, message in [
        (
            {"policy.0.bias": np.zeros(15, np.float32)},
            r"array 'policy.0.bias' is float32 \(15,\); expected float32 \(16,\)",
        ),
        (
            {"policy.0.bias": np.zeros(16, np.float64)},
            r"array 'policy.0.bias' is float64 \(16,\); expected float32",
        ),
        (
            {"policy.0.bias": np.full(16, np.nan, np.float32)},
            r"array 'policy.0.bias' holds NaN or infinite values",
        ),
        ({"extra": np.zeros(1, np.float32)}, r"holds \[.*'extra.npy'.*\]; expected exactly \["),
    ]:
        buffer = io.BytesIO()
        np.savez(buffer, **{**arrays, **change})
        replace_weights(path, buffer.getvalue())
        with pytest.raises(CheckpointError, match=rf"tiny.npz: {message}"):
            bots.load(path)
    replace_weights(path, b"not a zip file at all")
    with pytest.raises(CheckpointError, match=r"tiny.npz: not a plain numpy .npz \(File is not a zip file\)"):
        bots.load(path)
    with zipfile.ZipFile(path.with_suffix(".npz"), "w", zipfile.ZIP_DEFLATED) as archive:
        for name, a in arrays.items():
            with archive.open(name + ".npy", "w") as f:
                np.lib.format.write_array(f, a)
    replace_weights(path, path.with_suffix(".npz").read_bytes())
    with pytest.raises(CheckpointError, match=r"tiny.npz: compressed or encrypted members"):
        bots.load(path)


def test_not_json_is_refused(tmp_path):
    path = tiny_checkpoint(tmp_path)
    for text, message in [("{ nope", "not valid JSON"), ("[1, 2]", r"got a JSON list; expected an object")]:
        path.write_text(text)
        with pytest.raises(CheckpointError, match=rf"tiny.json: {message}"):
            bots.load(path)


# --- writing: checked first, atomic, JSON last --------------------------------------------------


def test_writing_checks_the_layers_and_meta_before_any_file(tmp_path):
    rng = np.random.default_rng(0)
    good = dict(
        policy=random_layers([198, 8, 45], "tanh", rng),
        value=random_layers([198, 8, 1], "tanh", rng),
        variant="classic",
        num_players=2,
    )
    with pytest.raises(ValueError, match=r"meta: got .*; expected JSON-ready data"):
        write_policy(tmp_path / "x", **good, meta={"when": object()})
    with pytest.raises(CheckpointError, match=r"networks.policy\[0\].in: got 198; the observation has 288"):
        write_policy(tmp_path / "x", **{**good, "variant": "longo"}, meta={})
    with pytest.raises(
        ValueError, match=r"policy layer 0: got a weight of shape \(198,\); expected \(out, in\)"
    ):
        write_policy(tmp_path / "x", **{**good, "policy": [(np.zeros(198), np.zeros(45), None)]}, meta={})
    assert list(tmp_path.iterdir()) == []


def test_a_crash_between_the_two_files_leaves_a_pair_loading_refuses(tmp_path, monkeypatch):
    """The npz is renamed into place first; if the JSON never follows, the old JSON's sha256
    no longer matches and loading says so, rather than running weights it did not describe."""
    path = tiny_checkpoint(tmp_path, seed=0)
    real = checkpoint.write_atomically

    def crash_on_json(target, data):
        if target.suffix == ".json":
            raise KeyboardInterrupt("killed")
        real(target, data)

    monkeypatch.setattr(checkpoint, "write_atomically", crash_on_json)
    with pytest.raises(KeyboardInterrupt):
        tiny_checkpoint(tmp_path, seed=1)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.json", "tiny.npz"]
    with pytest.raises(CheckpointError, match="sha256 .* differs"):
        bots.load(path)
    assert bots.load(tiny_checkpoint(tmp_path, seed=1)).policy.meta["seed"] == 1  # a full rewrite heals it


# --- installed checkpoints and the wheel --------------------------------------------------------


@pytest.mark.parametrize("name", pretrained.checkpoint_names())
def test_each_installed_checkpoint_loads_and_plays_a_legal_game(name):
    folder = pretrained.checkpoints_dir()
    assert (folder / f"{name}.md").is_file(), f"{name}: no model card {name}.md"
    assert name in bots.available()
    policy = NumpyPolicy.load(name)
    bot = bots.make(name, variant=policy.variant, num_players=policy.num_players)
    assert repr(bot) == f"PretrainedBot({name!r}: {policy.variant}, {policy.num_players} player(s))"
    env = qwixx_v0.raw_env(
        num_players=policy.num_players, variant=policy.variant, lucky=policy.lucky or "bonus"
    )
    play_game(env, bot, seed=0)  # raw: an illegal action raises


@pytest.mark.slow
def test_checkpoints_load_from_an_installed_wheel(tmp_path):
    """Build a wheel of a copy of the package with a tiny checkpoint added, install it into a
    folder, and load the checkpoint by name from there in a fresh interpreter without torch."""
    source = tmp_path / "source"
    # qwixx_env and the folders pyproject maps into it
    for package in ("qwixx_env", "training", "configs"):
        shutil.copytree(REPO / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    (source / "checkpoints").mkdir()
    shutil.copy(REPO / "checkpoints" / "__init__.py", source / "checkpoints")
    tiny_checkpoint(source / "checkpoints", name="ppo-wheel-test")
    (source / "checkpoints" / "ppo-wheel-test.md").write_text("# ppo-wheel-test\n")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(source)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("qwixx_env-*.whl")
    modules = {p.relative_to(source).as_posix() for p in (source / "qwixx_env").rglob("*.py")}
    modules |= {f"qwixx_env/training/{p.relative_to(source / 'training').as_posix()}"
                for p in (source / "training").rglob("*.py")}  # the training/ folder, mapped
    names = set(zipfile.ZipFile(wheel).namelist())
    assert modules <= names, (
        f"modules missing from the wheel (pyproject's package list?): {sorted(modules - names)}"
    )
    assert not [n for n in names if n.startswith("training/")], "a top-level training package in the wheel"
    assert {f"qwixx_env/checkpoints/ppo-wheel-test.{s}" for s in ("json", "npz", "md")} <= names
    assert "qwixx_env/integrations/benchmarl_conf/task/qwixx/classic_2p.yaml" in names  # BenchMARL's task=qwixx/...
    assert {f"qwixx_env/nets/data/value-classic-2p.{s}" for s in ("json", "npz")} <= names  # the rollout leaf
    subprocess.run(
        [*pip, "install", "--no-deps", "--target", str(tmp_path / "site"), str(wheel)],
        check=True,
        capture_output=True,
    )
    script = (  # without torch and SB3: None in sys.modules makes their import fail
        "import sys; sys.modules.update(torch=None, stable_baselines3=None, sb3_contrib=None)\n"
        "import numpy as np, qwixx_env; from qwixx_env import bots; from qwixx_env.bots import pretrained\n"
        "bot = bots.make('ppo-wheel-test', num_players=2)\n"
        "mask = np.zeros(45, np.int8); mask[[4, 44]] = 1\n"
        "from qwixx_env.nets import win_chance_network; "
        "assert win_chance_network('value', 'classic', 2)[0].shape[0] == 36\n"
        "print(qwixx_env.__file__, pretrained.checkpoints_dir(), "
        "bot.act({'observation': np.zeros(198), 'action_mask': mask}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    package, folder, action = done.stdout.split()
    assert (
        Path(package).is_relative_to(tmp_path / "site")
        and Path(folder) == tmp_path / "site/qwixx_env/checkpoints"
    )
    assert action in ("4", "44")


def test_the_old_home_of_export_policy_says_where_it_went():
    with pytest.raises(AttributeError, match=r"export_policy moved to qwixx_env.training.export"):
        pretrained.export_policy  # noqa: B018


def test_every_table_has_a_pretrained_bot_that_plays_it_through_the_wrapped_env():
    """Each of the 15 tables (one per benchmark protocol) has an installed checkpoint that
    loads by name and plays a whole game of that table through `qwixx_v0.env()` (the wrapped
    env, which ends a game on an illegal action): every action it takes is legal."""
    from qwixx_env import benchmark

    tables = {}
    for name in pretrained.checkpoint_names():
        proto = benchmark.protocol_for(as_spec(name).default_table())
        assert proto.name not in tables, f"{name} and {tables.get(proto.name)} both play {proto.name}"
        tables[proto.name] = name
    assert sorted(tables) == sorted(benchmark.PROTOCOLS), sorted(set(benchmark.PROTOCOLS) - set(tables))
    for proto, name in tables.items():
        decisions = play_game(qwixx_v0.env(table=benchmark.protocol(proto).table), bots.load(name), seed=7)
        assert len(decisions) > 10 and all(obs["action_mask"][a] for obs, a in decisions), name
