"""Hostile run folders, checkpoints and data files (red team, session 47): each is refused in one line naming the
file and what it should be, before anything is written; a refused resume leaves the run folder as it was."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import warnings
import zipfile
from pathlib import Path

import pytest
from cli_kit import one_line_error

from meld8_app.cli import main

pytest.importorskip("sb3_contrib")

#: a 64-step run: ckpt_64.zip, final.zip (64 steps), best.zip and one eval.jsonl row, in seconds
TINY = {"total_timesteps": 64, "n_envs": 8, "n_steps": 8, "batch_size": 64, "n_epochs": 1, "eval_every": 64,
        "eval_boards": 1, "checkpoint_every": 64, "net_arch": [32], "network": "separate", "features": False,
        "opponents": ["random", "random"], "eval_opponents": ["random", "random"], "progress": False}  # fmt: skip


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path]:
    """(config file, the folder of a finished 64-step run)."""
    config = tmp_path_factory.mktemp("config") / "tiny.yaml"
    config.write_text(json.dumps(TINY))  # JSON is YAML
    run = tmp_path_factory.mktemp("tiny") / "run"
    assert main(["train", str(config), "--set", f"out={run}"]) == 0
    assert {"ckpt_64.zip", "final.zip", "best.zip", "eval.jsonl", "config.yaml"} <= {p.name for p in run.iterdir()}
    return config, run


def _copy(tiny, tmp_path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(tiny[1], run, symlinks=True)
    return run


def _snapshot(folder: Path) -> dict[str, object]:
    """Every entry (a file's bytes, a link's target, or the kind of anything else) but the lock."""
    out: dict[str, object] = {}
    for p in sorted(folder.rglob("*")):
        if p.name == ".lock":
            continue
        key = p.relative_to(folder).as_posix()
        out[key] = os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "folder"
    return out


def _resume(config: Path, run: Path, capsys, total: int = 128) -> str:
    """A refused resume (exit 2): its one line on stderr."""
    capsys.readouterr()
    rc = main(["train", str(config), "--set", f"out={run}", "--set", "resume=true", "--set",
               f"total_timesteps={total}"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _set_meta(path: Path, **changes) -> None:
    """``meld8.json`` of the checkpoint zip ``path`` with ``changes``."""
    with zipfile.ZipFile(path) as z:
        items = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(items["meld8.json"])
    meta.update(changes)
    items["meld8.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in items.items():
            z.writestr(name, data)


def _steps(path: Path) -> int:
    return json.loads(zipfile.ZipFile(path).read("meld8.json"))["num_timesteps"]


def _folder_at(run: Path, name: str) -> None:
    if (run / name).exists():
        (run / name).unlink()
    (run / name).mkdir()


def _file_at(run: Path, name: str) -> None:
    shutil.rmtree(run / name, ignore_errors=True)
    (run / name).write_text("x\n")


# ---------------------------------------------------------------------------------------------------- item 1 (kinds)


@pytest.mark.parametrize(
    "name, make, says",
    [
        ("_saving", _file_at, "is not a folder but a file"),  # failed with a raw [Errno 17] after config.yaml
        ("_saving", lambda run, name: (run / name).symlink_to(run.parent / "elsewhere"),
         "is not a folder but a symbolic link"),  # rmtree(ignore_errors) left it: checkpoints went through it
        ("_eval.zip", _folder_at, "is not a regular file but a folder"),  # a raw [Errno 21]
        ("best.zip", _folder_at, "is not a regular file but a folder"),  # named the run's best evaluation
        ("final.zip", _folder_at, "is not a regular file but a folder"),
        ("ckpt_128.zip", _folder_at, "is not a regular file but a folder"),  # the next checkpoint's name
        ("config.yaml.tmp", _folder_at, "is not a regular file but a folder"),
        ("tb", _file_at, "is not a folder but a file"),
    ],
)  # fmt: skip
def test_a_fixed_name_of_the_wrong_kind_refuses_the_resume_before_anything_is_written(tiny, tmp_path, capsys, name,
                                                                                      make, says):  # fmt: skip
    run = _copy(tiny, tmp_path)
    (tmp_path / "elsewhere").mkdir()
    make(run, name)
    before, outside = _snapshot(run), _snapshot(tmp_path / "elsewhere")
    err = _resume(tiny[0], run, capsys)
    assert err.startswith(f"meld8 train: error: {run / name} {says}: meld8 keeps "), err
    assert "move it out of" in err and "[Errno" not in err
    assert _snapshot(run) == before and _snapshot(tmp_path / "elsewhere") == outside


def test_a_stray_scratch_file_refuses_a_fresh_start_and_a_killed_runs_scratch_folder_is_cleaned(tiny, tmp_path,
                                                                                                capsys):  # fmt: skip
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "_saving").write_text("x\n")
    err = one_line_error(["train", str(tiny[0]), "--set", f"out={fresh}"], capsys)
    assert f"{fresh / '_saving'} is not a folder but a file" in err
    assert sorted(p.name for p in fresh.iterdir()) == ["_saving"]
    # a _saving folder left by a kill is what a run removes: the resume goes on, and leaves no scratch
    run = _copy(tiny, tmp_path)
    (run / "_saving" / "sub").mkdir(parents=True)
    (run / "_saving" / "sub" / "ckpt_9.zip").write_text("half a checkpoint")
    assert main(["train", str(tiny[0]), "--set", f"out={run}", "--set", "resume=true", "--set",
                 "total_timesteps=128"]) == 0  # fmt: skip
    assert not (run / "_saving").exists() and (run / "ckpt_128.zip").is_file() and _steps(run / "final.zip") >= 128


# ---------------------------------------------------------------------------------------------- item 2 (step count)


@pytest.mark.parametrize(
    "steps, says",
    [
        ("abc", "'num_timesteps' must be an integer 0..2**62 - 1"),  # silently passed over for ckpt_64.zip
        (-5, "'num_timesteps' must be an integer 0..2**62 - 1"),
        (True, "'num_timesteps' must be an integer 0..2**62 - 1"),
        (2**62, "'num_timesteps' must be an integer 0..2**62 - 1"),
        (2**61, "far beyond total_timesteps 128"),  # trained nothing, said "trained" and was written back
    ],
)
def test_a_tampered_step_count_in_final_zip_refuses_the_resume(tiny, tmp_path, capsys, steps, says):
    run = _copy(tiny, tmp_path)
    _set_meta(run / "final.zip", num_timesteps=steps)
    before = _snapshot(run)
    err = _resume(tiny[0], run, capsys)
    assert err.startswith(f"meld8 train: error: resume: {run / 'final.zip'}") and says in err, err
    assert _snapshot(run) == before


def test_a_checkpoint_whose_count_is_not_its_name_refuses_the_resume(tiny, tmp_path, capsys):
    run = _copy(tiny, tmp_path)
    (run / "final.zip").unlink()  # the resume goes on from ckpt_64.zip
    _set_meta(run / "ckpt_64.zip", num_timesteps=60)
    before = _snapshot(run)
    err = _resume(tiny[0], run, capsys)
    assert f"{run / 'ckpt_64.zip'}: 'num_timesteps' is 60, but meld8 names a checkpoint by the steps" in err, err
    assert _snapshot(run) == before


def test_a_final_zip_behind_the_newest_checkpoint_is_passed_over_with_a_note(tiny, tmp_path, capsys):
    """A final.zip older than the newest ckpt is what a later session stopped by Ctrl-C leaves: the resume goes on
    from the ckpt, and says so (it overwrites final.zip when it ends)."""
    run = _copy(tiny, tmp_path)
    _set_meta(run / "final.zip", num_timesteps=0)
    capsys.readouterr()
    assert main(["train", str(tiny[0]), "--set", f"out={run}", "--set", "resume=true", "--set",
                 "total_timesteps=128"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    says = f"resume: {run / 'final.zip'} (0 learner steps) is behind ckpt_64.zip: going on from ckpt_64.zip; final"
    assert says in err and "error" not in err, err
    assert _steps(run / "final.zip") >= 128


# ------------------------------------------------------------------------------------------------ item 3 (config)


@pytest.mark.parametrize(
    "text, says",
    [
        ("a: &a [x, x, x]\nb: [*a, *a]\n", "an alias (*name), which config files may not use"),
        ('a: !!python/object/apply:os.system ["touch PWNED"]\n', "could not determine a constructor"),
        ("[1, 2]\n", "expected a mapping of options"),
    ],
)
def test_an_unreadable_run_config_refuses_the_resume_and_is_kept(tiny, tmp_path, capsys, monkeypatch, text, says):
    # resume overwrote it with no notice and no config.prev.yaml: the run's record of its options was lost
    monkeypatch.chdir(tmp_path)
    run = _copy(tiny, tmp_path)
    (run / "config.yaml").write_text(text)
    before = _snapshot(run)
    err = _resume(tiny[0], run, capsys)
    assert f"{run / 'config.yaml'} is not a config meld8 wrote (" in err and says in err, err
    assert "restore it, or train into another out" in err
    assert _snapshot(run) == before and not (tmp_path / "PWNED").exists()


def test_a_run_config_key_that_is_no_option_is_kept_in_config_prev(tiny, tmp_path, capsys):
    run = _copy(tiny, tmp_path)
    first = (run / "config.yaml").read_text().replace(str(tiny[1]), str(run)) + "note: my first try\n"
    (run / "config.yaml").write_text(first)
    capsys.readouterr()
    assert main(["train", str(tiny[0]), "--set", f"out={run}", "--set", "resume=true"]) == 0
    assert "'note' 'my first try' (no option) dropped" in capsys.readouterr().err
    assert (run / "config.prev.yaml").read_text() == first


# ------------------------------------------------------------------------------------------------ item 4 (distill)


def test_a_fifo_among_the_distillation_parts_is_refused_without_opening_it(tmp_path, capsys, alarm):
    from meld8_env.rules import RuleConfig
    from training.distill import generate_parts
    from training.distill import main as distill
    from training.distill_data import DistillDataError, read_part

    data = tmp_path / "data"
    (part,) = generate_parts("search:worlds=2+cands=2+stages=1+extend=0", 1, 3, RuleConfig(), data, chunk=1,
                             log=lambda _: None)  # fmt: skip
    os.mkfifo(data / "part_zz.npz")  # beside a real part: the read hung forever
    os.mkfifo(tmp_path / "fifo.npz")  # given by name: "no such file or folder", which it is not
    out = tmp_path / "net.zip"
    for given, fifo in (([data], data / "part_zz.npz"), ([part, tmp_path / "fifo.npz"], tmp_path / "fifo.npz")):
        with pytest.raises(SystemExit):
            distill(["train", "--data", *map(str, given), "--epochs", "1", "--out", str(out)])
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{fifo} is not a regular file but a FIFO: give part" in err
    assert not out.exists() and not list(tmp_path.glob("*.png"))
    with pytest.raises(DistillDataError, match="fifo.npz is not a regular file"):  # generate's resume reads so
        read_part(tmp_path / "fifo.npz")


# ------------------------------------------------------------------------------------------ items 5, 7 (checkpoints)


def _edited_baseline(tmp_path: Path, name: str, meta: dict | None = None, policy: bytes | None = None) -> Path:
    from agents.registry import shipped_baseline

    path = tmp_path / name
    shutil.copy(shipped_baseline(), path)
    with zipfile.ZipFile(path) as z:
        items = {n: z.read(n) for n in z.namelist()}
    if meta:
        items["meld8.json"] = json.dumps({**json.loads(items["meld8.json"]), **meta}).encode()
    if policy is not None:
        items["policy.pth"] = policy
    with zipfile.ZipFile(path, "w") as z:
        for member, data in items.items():
            z.writestr(member, data)
    return path


@pytest.mark.parametrize("rounds", [0, 17, 99])
def test_checkpoint_metadata_with_rounds_no_rule_set_has_is_refused(tmp_path, capsys, rounds):
    from agents.checkpoint import CheckpointError, read_metadata

    path = _edited_baseline(tmp_path, "rounds.zip", {"rounds": rounds})
    with pytest.raises(CheckpointError, match=rf"field 'rounds' must be 1\.\.16 \(a rule set's rounds\), got {rounds}"):
        read_metadata(path)
    err = one_line_error(["tournament", "--agents", f"ppo:{path},random,random", "--boards", "1", "--out",
                          str(tmp_path / "t")], capsys)  # fmt: skip
    assert "field 'rounds' must be 1..16" in err and not (tmp_path / "t").exists()


def test_a_pickled_policy_is_refused_without_torchs_warning(tmp_path, capsys):
    """torch printed two lines of a UserWarning ("Detected pickle protocol 4") before the one-line refusal."""
    from agents.registry import AgentLoadError, load_agent

    path = _edited_baseline(tmp_path, "pickled.zip", policy=pickle.dumps(Path("/x"), protocol=4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AgentLoadError, match="policy.pth is not a plain tensor file") as exc:
            load_agent(f"ppo:{path}")
    assert not [w for w in caught if "pickle protocol" in str(w.message)], [str(w.message) for w in caught]
    assert "weights_only` set to `False`" not in str(exc.value)  # torch's advice to load it unsafely is not passed on
    err = one_line_error(["tournament", "--agents", f"ppo:{path},random,random", "--boards", "1", "--out",
                          str(tmp_path / "t")], capsys)  # fmt: skip
    assert "policy.pth is not a plain tensor file (it holds pickled objects" in err


# ---------------------------------------------------------------------------------------------- item 6 (batch_size)


def test_a_batch_size_larger_than_the_rollout_is_refused_before_anything_is_written(tiny, tmp_path, capsys):
    from meld8_env.config_io import builtin_names
    from training.train_ppo import TrainConfig, train

    out = tmp_path / "run"
    err = one_line_error(["train", str(tiny[0]), "--set", f"out={out}", "--set", "batch_size=100000"], capsys)
    assert "'batch_size' is 100,000, more than a rollout (n_envs * n_steps = 8 * 8 = 64): give batch_size at most " \
           "64" in err, err  # fmt: skip
    # the default 4096 with a smaller rollout: MaskablePPO took the whole rollout as one minibatch, unannounced
    err = one_line_error(["train", "ppo_vs_bots", "--set", f"out={out}", "--set", "n_envs=8"], capsys)
    assert "'batch_size' is 4,096, more than a rollout (n_envs * n_steps = 8 * 64 = 512)" in err, err
    with pytest.raises(ValueError, match="more than a rollout"):  # a config built in code is checked too
        train(TrainConfig(out=str(out), **{**TINY, "batch_size": 65}))
    assert not out.exists()
    for name in builtin_names("train"):  # the shipped configs keep their minibatches inside a rollout
        if not name.startswith("rllib"):
            TrainConfig.load(name)
