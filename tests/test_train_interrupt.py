"""``meld8 train`` as a user meets it: no config prints usage (nothing starts), --help lists every
option, Ctrl-C at any stage saves a checkpoint that resume continues from and exits with one line,
and no scratch file is left behind."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading

import pytest

pytest.importorskip("sb3_contrib")

from meld8_app.cli import main  # noqa: E402

TINY = ["n_envs=8", "n_steps=16", "batch_size=64", "n_epochs=1", "eval_boards=1", "net_arch=[32]", "progress=false"]


def test_no_config_prints_usage_and_starts_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train"]) == 2
    assert "usage: meld8 train CONFIG" in capsys.readouterr().err and not (tmp_path / "runs").exists()


def test_help_lists_every_option_with_default_and_meaning(capsys):
    import dataclasses

    from training.train_ppo import TrainConfig

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    for f in dataclasses.fields(TrainConfig):
        line = next((x for x in out.splitlines() if x.split()[:1] == [f.name]), None)
        assert line is not None and len(line.split()) >= 3, f"{f.name} is not documented in --help"


@pytest.mark.parametrize("stage", ["cloning", "ppo"])
def test_ctrl_c_saves_a_checkpoint_and_resume_continues(tmp_path, stage):
    out = tmp_path / "run"
    cfg = tmp_path / "t.yaml"
    extra = ["bc_decisions=2000000", "bc_teacher=random"] if stage == "cloning" else []
    sets = [*TINY, "total_timesteps=100000000", "eval_every=100000000", "checkpoint_every=100000000", f"out={out}",
            *extra]  # fmt: skip
    cfg.write_text("features: false\nnetwork: shared\n")
    cmd = [sys.executable, "-m", "meld8_app", "train", str(cfg)] + [a for s in sets for a in ("--set", s)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # wait for the trainer's own signal that it is in its loop (a line on stderr), never a fixed sleep
    marker = "behaviour cloning of" if stage == "cloning" else "meld8 train: PPO from step"
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        while not any(marker in x for x in seen):
            seen.append(lines.get(timeout=300))
    except queue.Empty:
        proc.kill()
        pytest.fail(f"the trainer never said {marker!r}: {seen}")
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=300)
    reader.join(timeout=60)  # stderr reaches its end once the process is gone
    while not lines.empty():
        seen.append(lines.get())
    err = "".join(seen)
    assert proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("meld8 train: interrupted: stopped at") and "resume=true" in last and "Traceback" not in err
    ckpts = list(out.glob("ckpt_*.zip"))
    assert len(ckpts) == 1 and not list(out.glob("_eval*"))
    steps = int(ckpts[0].stem.split("_")[1])
    resumed = sets[:] + ["resume=true"]
    resumed[resumed.index("total_timesteps=100000000")] = f"total_timesteps={steps + 256}"
    resumed = [s for s in resumed if not s.startswith("bc_")]
    assert main(["train", str(cfg)] + [a for s in resumed for a in ("--set", s)]) == 0
    assert (out / "final.zip").exists()
