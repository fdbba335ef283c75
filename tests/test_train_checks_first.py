"""``meld8 train`` checks everything before it writes (red team, session 35): an edited checkpoint, a wrong number
of opponents, meaningless options and hand-edited or hostile ``eval.jsonl`` files are refused in one line, and a
refused resume leaves the run folder byte for byte as it was."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from meld8_app.cli import main
from training.run_folder import RunFolder, RunFolderError, plot_learning_curve

#: a 64-step run with an oracle critic: its checkpoint holds tensors a player never loads (the critic)
TINY = {"total_timesteps": 64, "n_envs": 8, "n_steps": 8, "batch_size": 64, "n_epochs": 1, "eval_every": 64,
        "eval_boards": 1, "checkpoint_every": 64, "net_arch": [32], "critic": "oracle", "critic_arch": [16],
        "bc_decisions": 0, "vf_warmup": 0, "opponents": ["greedy", "random"], "eval_opponents": ["greedy", "random"],
        "progress": False}  # fmt: skip


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory) -> Path:
    """The config file of a 64-step run (a check that is undone then trains seconds, never a real run)."""
    config = tmp_path_factory.mktemp("config") / "tiny.yaml"
    config.write_text(json.dumps(TINY))  # JSON is YAML
    return config


@pytest.fixture(scope="module")
def tiny(tiny_config, tmp_path_factory) -> tuple[Path, Path]:
    """(config file, the folder of a finished 64-step run with ckpt_64.zip and one eval.jsonl row)."""
    run = tmp_path_factory.mktemp("tiny") / "run"
    assert main(["train", str(tiny_config), "--set", f"out={run}"]) == 0
    assert (run / "ckpt_64.zip").is_file() and (run / "eval.jsonl").read_text()
    return tiny_config, run


def _copy(tiny, tmp_path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(tiny[1], run)
    return run


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file but the lock (each run writes its pid there)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".lock"}  # fmt: skip


def _replace_member(path: Path, name: str, obj) -> None:
    """``name`` inside the checkpoint zip ``path`` replaced by ``torch.save(obj)``."""
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    with zipfile.ZipFile(path) as z:
        items = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w") as z:
        for info, data in items:
            z.writestr(info, buf.getvalue() if info.filename == name else data)


def _resume(config: Path, run: Path, capsys) -> str:
    """A refused resume (exit 2): its one line on stderr."""
    capsys.readouterr()
    assert main(["train", str(config), "--set", f"out={run}", "--set", "resume=true", "--set", "seed=5", "--set",
                 "total_timesteps=128"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def _weights(run: Path) -> dict:
    from agents.checkpoint import load_tensors

    return load_tensors(run / "ckpt_64.zip", "policy.pth")


def _optimizer(run: Path) -> dict:
    from agents.checkpoint import load_tensors

    return load_tensors(run / "ckpt_64.zip", "policy.optimizer.pth")


def _no_critic(run: Path) -> dict:
    state = _weights(run)
    return {k: v for k, v in state.items() if not k.startswith("oracle_critic.")}


def _nan_value_head(run: Path) -> dict:
    state = _weights(run)
    state["value_net.weight"] = state["value_net.weight"] * float("nan")
    return state


def _bad_moment(run: Path) -> dict:
    import torch

    opt = _optimizer(run)
    opt["state"] = {0: {"step": torch.tensor(1.0), "exp_avg": torch.zeros(3), "exp_avg_sq": torch.zeros(3)}}
    return opt


def _bad_eps(run: Path) -> dict:
    opt = _optimizer(run)
    opt["param_groups"][0]["eps"] = -1.0
    return opt


@pytest.mark.parametrize(
    "member, edit, says",
    [
        ("policy.pth", lambda run: {"x": __import__("torch").zeros(3)}, "weights hold no layer of 32 units"),
        ("policy.pth", _nan_value_head, "'value_net.weight' of policy.pth is not dense finite floats"),
        ("policy.pth", _no_critic, "policy.pth has no tensor 'oracle_critic."),
        ("policy.optimizer.pth", _bad_moment, "exp_avg of parameter 0 has shape (3,)"),
        ("policy.optimizer.pth", _bad_eps, "policy.optimizer.pth sets eps=-1.0"),
    ],
)
def test_an_edited_checkpoint_refuses_the_resume_before_anything_is_written(tiny, tmp_path, capsys, member, edit,
                                                                           says):  # fmt: skip
    # red team, session 35: a RuntimeError traceback from load_state_dict, after config.yaml had been rewritten
    from training.train_ppo import _resume_point

    run = _copy(tiny, tmp_path)
    target = _resume_point(run)  # final.zip: its steps equal the last ckpt's, and it is saved after it
    _replace_member(target, member, edit(run))
    before = _snapshot(run)
    err = _resume(tiny[0], run, capsys)
    assert says in err and f"{target}" in err and err.startswith("meld8 train: error: resume: "), err
    assert _snapshot(run) == before


@pytest.mark.parametrize(
    "row, says",
    [
        ({"timesteps": 0, "mean_placement": 1.5}, "line 1 has no 'mean_score' (a finite number)"),
        ({"timesteps": 0, "mean_placement": 1.5, "mean_score": "x"}, "line 1: 'mean_score' is x, not a finite number"),
        ({"timesteps": 0, "mean_placement": 0.5, "mean_score": 1.0}, "'mean_placement' is 0.5, not a number in 1..3"),
        ({"timesteps": 0, "mean_placement": float("nan"), "mean_score": 1.0}, "'mean_placement' is nan, not a number"),
        ({"timesteps": 0, "mean_placement": 2, "mean_score": 10**400}, "'mean_score' is 1000"),
        ({"mean_placement": 2.0, "mean_score": 1.0}, "line 1 has no 'timesteps' (an integer >= 0)"),
    ],
)
def test_a_hand_edited_eval_log_refuses_the_resume_before_training(tiny, tmp_path, capsys, row, says):
    # red team, session 35: KeyError 'mean_score' after training had finished, "Unknown format code 'f'" in the last
    # line printed, and an impossible best placement (0.5) that blocked every later best.zip
    run = _copy(tiny, tmp_path)
    log = run / "eval.jsonl"
    log.write_text(json.dumps(row) + "\n" + log.read_text())
    before = _snapshot(run)
    err = _resume(tiny[0], run, capsys)
    assert f"{log}: line 1" in err and says in err, err
    assert _snapshot(run) == before


@pytest.mark.parametrize("name", ["eval.jsonl", "run.json"])
def test_a_fifo_in_the_run_folder_is_refused_without_blocking(tiny, tmp_path, capsys, alarm, name):
    # red team, session 35: a FIFO as eval.jsonl made a resume hang
    run = _copy(tiny, tmp_path)
    (run / name).unlink()
    os.mkfifo(run / name)
    err = _resume(tiny[0], run, capsys)
    assert str(run / name) in err and ("not a regular file" in err or "not a run file meld8 wrote" in err), err
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(RunFolderError, match="fifo is not a regular file"):
        RunFolder(tmp_path, "sb3").rows("fifo")


def test_a_fifo_as_the_lock_is_one_line(tiny, tmp_path, capsys, alarm):
    run = _copy(tiny, tmp_path)
    (run / ".lock").unlink()
    os.mkfifo(run / ".lock")
    err = _resume(tiny[0], run, capsys)
    assert f"{run / '.lock'} is not a regular file" in err, err


def test_the_curve_and_the_last_line_skip_rows_they_cannot_draw(tmp_path):
    # the RLlib trainer and a file edited after the resume check still reach these: they never fail a finished run
    from meld8_app.cli.train import best_line

    rows = [{"timesteps": 0, "mean_placement": 1.5}, {"timesteps": 1, "mean_placement": 2.5, "mean_score": "x"},
            {"timesteps": 2, "mean_placement": 2.0, "mean_score": 10**400},
            {"timesteps": 64, "mean_placement": 2.25, "mean_score": 1000.0}]  # fmt: skip
    (tmp_path / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert plot_learning_curve(tmp_path) == tmp_path / "learning_curve.png"
    assert best_line(tmp_path, "steps") == "best: mean placement 2.250 (mean score 1,000) at 64 steps, 1 evaluations"


def test_a_wrong_number_of_opponents_is_refused_before_the_folder(tiny_config, tmp_path, capsys):
    # red team, session 35: the count was checked when the env was built, after run.json and config.yaml were
    # written, and the folder then refused the corrected rerun (a run without a checkpoint)
    from training.train_ppo import TrainConfig

    for option in ("opponents", "eval_opponents"):
        out = tmp_path / option
        assert main(["train", str(tiny_config), "--set", f"out={out}", "--set", f"{option}=[greedy]"]) == 2
        err = capsys.readouterr().err.strip()
        assert f"train option '{option}' must name 2 agents" in err and len(err.splitlines()) == 1, err
        assert not out.exists()
        with pytest.raises(ValueError, match=f"'{option}' must name 2 agents"):
            TrainConfig.load(None, [f"{option}=[greedy]"])
    with pytest.raises(ValueError, match="'opponents' must name 1 agent "):  # two players: one opponent
        TrainConfig.load(None, ["rules=two_player", "eval_opponents=[greedy]"])


@pytest.mark.parametrize(
    "option, says",
    [
        ("clip_range=-1", "'clip_range' must be a number in (0, 1], got -1"),
        ("clip_range=.nan", "'clip_range' must be a number in (0, 1], got nan"),
        ("clip_range=5", "'clip_range' must be a number in (0, 1], got 5"),
        ("target_kl=-1", "'target_kl' must be a finite number > 0, or null for no limit, got -1"),
        ("target_kl=.nan", "'target_kl' must be a finite number > 0, or null for no limit, got nan"),
        ("vf_warmup=-5", "'vf_warmup' must be an integer >= 0, got -5"),
        ("bc_decisions=-5", "'bc_decisions' must be an integer >= 0, got -5"),
        ("out=/dev/null", "train option 'out' names /dev/null, which exists and is not a folder"),
    ],
)
def test_meaningless_options_are_one_line_errors(tiny_config, tmp_path, capsys, option, says):
    from meld8_env.config_io import load_yaml_text
    from training.train_ppo import TrainConfig, check_ppo_options, train

    assert main(["train", str(tiny_config), "--set", f"out={tmp_path / 'cli'}", "--set", option]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1 and not (tmp_path / "cli").exists(), err
    if not option.startswith("out="):  # a TrainConfig built in code is checked by train() too, before any folder
        key, value = option.split("=")
        cfg = TrainConfig(**{**TINY, "critic": "plain", "out": str(tmp_path / "run"), key: load_yaml_text(value)})
        with pytest.raises(ValueError, match=f"'{key}' must be"):
            train(cfg)
        assert not (tmp_path / "run").exists()
    # no target_kl is still no limit
    assert TrainConfig.load(None, ["target_kl=null"]).target_kl is None
    assert TrainConfig.load(None, ["target_kl=0.02", "clip_range=0.1", "vf_warmup=0"]).target_kl == 0.02
    check_ppo_options(TrainConfig.load(None, ["clip_range=1"]))  # the widest meaningful clip is taken


@pytest.mark.parametrize(
    "option, says",
    [  # red team, session 43: both were taken, and ran out of memory hours in, after the run folder was written
        ("bc_decisions=100000000", "'bc_decisions' must be at most 2,000,000 (each is held in memory"),
        ("eval_boards=1000000000000", "'eval_boards' must be at most 10,000 (each evaluation plays"),
    ],
)
def test_options_held_in_memory_are_bounded_before_the_run_folder(tmp_path, capsys, option, says):
    from meld8_env.config_io import load_yaml_text
    from training.train_ppo import TrainConfig, train

    out = tmp_path / "cli"
    assert main(["train", "ppo_vs_bots", "--set", f"out={out}", "--set", option]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1 and not out.exists(), err
    key, value = option.split("=")
    cfg = TrainConfig(**{**TINY, "critic": "plain", "out": str(tmp_path / "run"), key: load_yaml_text(value)})
    with pytest.raises(ValueError, match=f"'{key}' must be at most"):
        train(cfg)
    assert not (tmp_path / "run").exists()


def test_an_out_folder_the_system_cannot_create_is_one_line_naming_it(tiny_config, tmp_path, capsys):
    """Red team, session 44: out=/proc/x passed every check and failed at the run folder's mkdir as a bare "[Errno 2]
    No such file or directory: '/proc/x'", naming no option; a name too long for the system failed as a bare
    "[Errno 36]". Both are one line naming the option, the folder and the system's reason, before anything is
    written; a folder that can be created is tried and nothing of it is left."""
    from meld8_env.paths import creatable_folder
    from training.train_ppo import TrainConfig, train

    long = tmp_path / ("x" * 300) / "run"
    assert main(["train", str(tiny_config), "--set", f"out={long}"]) == 2
    err = capsys.readouterr().err
    assert f"train option 'out' names {long}, which this system cannot use as a path (File name too long)" in err
    assert err.count("\n") == 1 and "Errno" not in err, err
    what = "a folder for the run (checkpoints, logs, config.yaml)"
    if Path("/proc/self").is_dir():  # Linux: a folder no one can make (as root too: mkdir says ENOENT, not EACCES)
        with pytest.raises(ValueError, match=r"^train option 'out' names /proc/meld8-x/run, but the folder cannot be "
                           r"created \((No such file or directory|Permission denied)\): give a folder for the run "
                           r"\(checkpoints, logs, config.yaml\) you can write to$"):  # fmt: skip
            creatable_folder("/proc/meld8-x/run", "train option 'out'", what)
        assert main(["train", str(tiny_config), "--set", "out=/proc/meld8-x/run"]) == 2
        err = capsys.readouterr().err
        assert "train option 'out' names /proc/meld8-x/run, but" in err and err.count("\n") == 1
        assert "Errno" not in err, err
        with pytest.raises(ValueError, match="train option 'out' names /proc/meld8-x/run, but"):
            train(TrainConfig(**{**TINY, "out": "/proc/meld8-x/run"}))  # a config built in code: train() checks it
    assert creatable_folder(tmp_path / "a" / "b", "train option 'out'", what) == tmp_path / "a" / "b"
    assert creatable_folder(tmp_path, "train option 'out'", what) == tmp_path  # there already: kept
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # the folders tried were removed
    # as mkdir(parents=True, exist_ok=True), which the run uses: "new/../run" is fine (mkdir "new/.." says EEXIST) and
    # nothing is left (review, session 44: it was refused as "(File exists)")
    assert creatable_folder(tmp_path / "new" / ".." / "run", "train option 'out'", what)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # a symbolic link to nothing on the way is named (mkdir said a bare "[Errno 17] File exists")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for out in (tmp_path / "dangling", tmp_path / "dangling" / "run"):
        with pytest.raises(ValueError, match=f"^train option 'out' names {out}, but {tmp_path / 'dangling'} is a "
                           "symbolic link to nothing \\(or a loop\\): give a folder"):  # fmt: skip
            creatable_folder(out, "train option 'out'", what)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling"]
