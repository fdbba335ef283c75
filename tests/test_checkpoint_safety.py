"""Checkpoints cannot run code (hardening): a crafted SB3 zip whose pickled ``data`` would execute code
is loaded weights-only (nothing runs) by every path - agent specs, tournaments, ``meld8 train``
resume - and a zip without meld8 metadata is refused unless trusted explicitly."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents.checkpoint import MEMBER, CheckpointError, read_metadata  # noqa: E402
from agents.policy import PolicyAgent  # noqa: E402
from agents.registry import AgentLoadError, load_agent, shipped_baseline  # noqa: E402
from meld8_app.cli import main  # noqa: E402
from meld8_env.vector import Meld8Vector  # noqa: E402


class _Payload:
    """Unpickling this writes a marker file: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('code ran')",))


def _plant(src_zip: Path, dst_zip: Path, marker: Path, keep_metadata: bool = True) -> None:
    """Copy a checkpoint zip with a code-running pickle planted in SB3's ``data`` member."""
    with zipfile.ZipFile(src_zip) as src, zipfile.ZipFile(dst_zip, "w") as dst:
        for name in src.namelist():
            blob = src.read(name)
            if name == "data":
                data = json.loads(blob)
                data["policy_class"][":serialized:"] = base64.b64encode(pickle.dumps(_Payload(str(marker)))).decode()
                blob = json.dumps(data).encode()
            if name == MEMBER and not keep_metadata:
                continue
            dst.writestr(name, blob)


def _evil_copy(tmp_path: Path, keep_metadata: bool) -> tuple[Path, Path]:
    """The shipped baseline with the payload planted."""
    marker, evil = tmp_path / "pwned.txt", tmp_path / "evil.zip"
    _plant(Path(str(shipped_baseline())), evil, marker, keep_metadata)
    return evil, marker


def test_the_payload_is_real_sb3_runs_it_when_trusted(tmp_path):
    evil, marker = _evil_copy(tmp_path, keep_metadata=True)
    try:
        PolicyAgent(evil, trust=True)
    except Exception:  # the payload replaced the policy class: SB3 then fails, after the code ran
        pass
    assert marker.exists()


def test_default_loading_runs_no_code_and_plays_like_the_original(tmp_path):
    evil, marker = _evil_copy(tmp_path, keep_metadata=True)
    agent = load_agent(f"ppo:{evil}")
    assert not marker.exists()
    clean = load_agent("ppo")
    v = Meld8Vector(64, seed=9)
    v.reset()
    assert np.array_equal(agent.act_batch(v.observation, v.action_mask), clean.act_batch(v.observation, v.action_mask))


def test_zip_without_metadata_is_refused_naming_the_flag(tmp_path):
    evil, marker = _evil_copy(tmp_path, keep_metadata=False)
    with pytest.raises(AgentLoadError, match="--trust-checkpoint"):
        load_agent(f"ppo:{evil}")
    assert not marker.exists()


def test_tournament_with_a_crafted_checkpoint_runs_no_code(tmp_path, capsys):
    evil, marker = _evil_copy(tmp_path, keep_metadata=True)
    rc = main(["tournament", "--agents", f"ppo:{evil},random,random", "--boards", "1", "--out", str(tmp_path / "o")])
    assert rc == 0 and not marker.exists()
    capsys.readouterr()  # the first run's progress bar
    (tmp_path / "b").mkdir()
    evil2, marker2 = _evil_copy(tmp_path / "b", keep_metadata=False)
    rc = main(["tournament", "--agents", f"ppo:{evil2},random,random", "--boards", "1", "--out", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert rc == 2 and "--trust-checkpoint" in err and err.count("\n") == 1 and not marker2.exists()


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_tensor_members_are_read_weights_only(tmp_path):
    """A policy.pth that is a pickle of code (not tensors) is refused by torch's weights-only reader."""
    evil, marker = _evil_copy(tmp_path, keep_metadata=True)
    bad = tmp_path / "bad_weights.zip"
    with zipfile.ZipFile(evil) as src, zipfile.ZipFile(bad, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, pickle.dumps(_Payload(str(marker))) if name == "policy.pth" else src.read(name))
    with pytest.raises(AgentLoadError, match="policy.pth is not a plain tensor file"):
        load_agent(f"ppo:{bad}")
    assert not marker.exists()


def test_metadata_is_required_and_checked():
    meta = read_metadata(shipped_baseline())
    assert meta["features"] is True and meta["network"] == "card_heads" and meta["obs_size"] == 1017
    with pytest.raises(CheckpointError, match="not found"):
        read_metadata("/nonexistent.zip")


def test_train_resume_loads_weights_only(tmp_path):
    """``meld8 train`` resume reads the newest checkpoint's tensors; a payload in its data never runs,
    and training continues from its weights and step count."""
    import torch

    from agents.checkpoint import load_tensors
    from training.train_ppo import TrainConfig, train

    tiny = dict(total_timesteps=256, n_envs=8, n_steps=16, batch_size=64, n_epochs=1, eval_every=10**6,
                eval_boards=1, checkpoint_every=128, net_arch=[32], progress=False)  # fmt: skip
    train(TrainConfig(out=str(tmp_path), **tiny))
    newest = max(tmp_path.glob("ckpt_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    marker = tmp_path / "pwned.txt"
    planted = tmp_path / "planted.zip"
    _plant(newest, planted, marker)
    planted.replace(newest)
    before = load_tensors(newest, "policy.pth")
    steps = int(read_metadata(newest)["num_timesteps"])
    train(TrainConfig(out=str(tmp_path), resume=True, **{**tiny, "total_timesteps": steps + 128}))
    assert not marker.exists()
    after = tmp_path / "final.zip"  # written after the resumed run's PPO update
    assert int(read_metadata(after)["num_timesteps"]) > steps
    moved = load_tensors(after, "policy.pth")
    assert set(moved) == set(before) and any(not torch.equal(moved[k], before[k]) for k in before)


def test_trust_reaches_only_a_seated_checkpoint_file(tmp_path, capsys):
    """--trust-checkpoint is refused where no seated agent loads a checkpoint file itself, in load_agent's order (a
    search's networks are loaded without trust, whatever its spec ends with); a search given a foreign zip is not
    told to add the flag (session 38's review)."""
    from meld8_env.agent_spec import names_checkpoint_file

    assert names_checkpoint_file("ppo:x.zip") and names_checkpoint_file("runs/x.zip")
    for spec in ("ppo", "distilled", "search:prior=ppo:x.zip", "search:me=ppo:x.zip", "rllib:x.zip", "cmd:bot m.zip"):
        assert not names_checkpoint_file(spec), spec
    evil, marker = _evil_copy(tmp_path, keep_metadata=False)
    argv = ["tournament", "--agents", f"search:prior=ppo:{evil},greedy,random", "--boards", "1"]
    assert main([*argv, "--out", str(tmp_path / "a"), "--trust-checkpoint"]) == 2
    assert (
        "--trust-checkpoint applies to checkpoint files (ppo:PATH.zip), and none is seated" in capsys.readouterr().err
    )
    assert main([*argv, "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "search option prior=" in err and "a search option loads only meld8's own checkpoints" in err
    assert "--trust-checkpoint" not in err and err.count("\n") == 1 and not marker.exists()
