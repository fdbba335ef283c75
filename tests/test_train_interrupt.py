"""``meld8 train`` as a user meets it: no config prints usage (nothing starts), --help lists every
option, Ctrl-C at any stage saves a checkpoint that resume continues from and exits with one line,
and no scratch file is left behind.

Ctrl-C is a real SIGINT everywhere here: sent to a trainer process, or raised in this process
(``signal.raise_signal``) at chosen moments of an in-process run - moments found by wrapping a function
the run calls there, never by timing - where Python runs the trainer's handler before the call returns."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

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


@pytest.mark.parametrize(
    ("stage", "sig"), [("cloning", signal.SIGINT), ("ppo", signal.SIGINT), ("ppo", signal.SIGTERM)]
)
def test_ctrl_c_saves_a_checkpoint_and_resume_continues(tmp_path, stage, sig):
    """Ctrl-C, or a SIGTERM (a scheduler ending the job; session 46: it ended the run without a checkpoint), stops
    the run at its next safe point with one whole checkpoint, and the exit status names the signal (128 + it)."""
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
        assert "Ctrl-C (or SIGTERM) saves a checkpoint" in seen[-1], seen[-1]  # the signal reaches the handler
        proc.send_signal(sig)
        proc.wait(timeout=300)
    except (queue.Empty, subprocess.TimeoutExpired):
        pytest.fail(f"the trainer never said {marker!r} or never stopped after Ctrl-C: {seen}")
    finally:
        if proc.poll() is None:  # a trainer that did not stop must not outlive the test
            proc.kill()
            proc.wait()
    reader.join(timeout=60)  # stderr reaches its end once the process is gone
    while not lines.empty():
        seen.append(lines.get())
    err = "".join(seen)
    assert proc.returncode == 128 + sig, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("meld8 train: interrupted: stopped at") and "resume=true" in last and "Traceback" not in err
    ckpts = list(out.glob("ckpt_*.zip"))
    assert len(ckpts) == 1 and not [p.name for p in out.iterdir() if p.name.startswith("_")]  # no scratch
    steps = int(ckpts[0].stem.split("_")[1])
    resumed = sets[:] + ["resume=true"]
    resumed[resumed.index("total_timesteps=100000000")] = f"total_timesteps={steps + 256}"
    resumed = [s for s in resumed if not s.startswith("bc_")]
    assert main(["train", str(cfg)] + [a for s in resumed for a in ("--set", s)]) == 0
    assert (out / "final.zip").exists()


# -- Ctrl-C at chosen moments of an in-process run ----------------------------------------------------------
# Each moment wraps a function the run calls exactly there; the wrapper delivers SIGINT (the real handler
# runs) and then carries on with the call, as a signal from a terminal would land in the middle of it.
CLONING = dict(features=False, network="shared", n_envs=8, n_steps=16, batch_size=64, n_epochs=1, eval_boards=1,
               net_arch=[32], progress=False, opponents=["greedy", "greedy"], bc_teacher="random",
               bc_decisions=1500, bc_batch_size=256, bc_epochs=2, eval_every=10**8, checkpoint_every=128,
               total_timesteps=4096)  # fmt: skip
# (a run that lost the Ctrl-C ends at 4096 steps with final.zip instead of raising TrainingInterrupted)


def _sigint_in(monkeypatch, owner, name: str, when, times: int = 1) -> list[str]:
    """Wrap ``owner.name`` so that the calls for which ``when(*args)`` holds deliver SIGINT first (at
    most ``times`` of them); returns the list of deliveries, so a test can tell the moment came."""
    original = getattr(owner, name)
    fired: list[str] = []

    def wrapper(*args, **kwargs):
        if len(fired) < times and when(*args, **kwargs):
            fired.append(name)
            signal.raise_signal(signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return fired


def _interrupted_run(tmp_path) -> str:
    """Run the CLONING config into ``tmp_path``; the line of the TrainingInterrupted it must end in.
    (A bare KeyboardInterrupt is caught here too: it is a failure to report, not one that stops pytest.)"""
    from training.train_ppo import TrainConfig, TrainingInterrupted, train

    try:
        train(TrainConfig(out=str(tmp_path), **CLONING))
    except KeyboardInterrupt as exc:
        assert isinstance(exc, TrainingInterrupted), f"a bare {exc!r} escaped the run: nothing saved, no message"
        return str(exc)
    pytest.fail("the run went on to its end: the Ctrl-C was lost")


def _moment(monkeypatch, moment: str) -> list[str]:
    import torch

    import agents.checkpoint
    import training.train_ppo
    from agents.random_agent import RandomAgent
    from training.run_folder import RunFolder

    calls = {"n": 0}

    def nth(n: int):
        def when(*args, **kwargs) -> bool:
            calls["n"] += 1
            return calls["n"] == n

        return when

    if moment == "cloning announced":
        return _sigint_in(monkeypatch, training.train_ppo, "say", lambda text: "behaviour cloning of" in text)
    if moment == "collecting demonstrations":  # the teacher's third batch of decisions
        return _sigint_in(monkeypatch, RandomAgent, "act_batch", nth(3))
    if moment == "cloning minibatch":  # inside the second optimiser step of behaviour cloning
        return _sigint_in(monkeypatch, torch.optim.Adam, "step", nth(2))
    if moment == "between cloning and PPO":  # the run reads eval.jsonl after cloning, before learn()
        return _sigint_in(monkeypatch, RunFolder, "rows", lambda self, name: name == "eval.jsonl")
    if moment == "saving the evaluation copy":  # half-way through writing _eval.zip
        return _sigint_in(monkeypatch, agents.checkpoint, "write_metadata", lambda p, m: Path(p).name == "_eval.zip")
    if moment == "evaluating":  # the cloned policy's evaluation, as it starts its games
        return _sigint_in(monkeypatch, training.train_ppo, "evaluate", lambda *a, **k: True)
    if moment == "first PPO step":
        return _sigint_in(monkeypatch, training.train_ppo, "say", lambda text: "PPO from step" in text)
    if moment == "periodic checkpoint":  # half-way through writing ckpt_128.zip
        return _sigint_in(monkeypatch, agents.checkpoint, "write_metadata", lambda p, m: Path(p).name == "ckpt_128.zip")
    raise AssertionError(f"no such moment: {moment}")


MOMENTS = ["cloning announced", "collecting demonstrations", "cloning minibatch", "between cloning and PPO",
           "saving the evaluation copy", "evaluating", "first PPO step", "periodic checkpoint"]  # fmt: skip


@pytest.mark.parametrize("moment", MOMENTS)
def test_ctrl_c_at_any_moment_stops_at_a_safe_point_with_one_whole_checkpoint(tmp_path, monkeypatch, moment):
    """Wherever SIGINT lands - in a loop, half-way through writing a file, between the cloning and PPO -
    the run stops, writes one complete checkpoint, leaves no scratch and says so (never carries on)."""
    from agents.checkpoint import read_metadata

    fired = _moment(monkeypatch, moment)
    line = _interrupted_run(tmp_path)
    assert fired, f"the run never reached the moment {moment!r}"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the run put Python's handler back
    ckpts = list(tmp_path.glob("ckpt_*.zip"))
    assert line.startswith("stopped at ") and len(ckpts) == 1 and str(ckpts[0]) in line, (moment, ckpts, line)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("_")], "scratch left behind"
    assert not (tmp_path / "final.zip").exists()
    steps = int(ckpts[0].stem.split("_")[1])
    assert read_metadata(ckpts[0])["num_timesteps"] == steps
    cloning = MOMENTS.index(moment) < MOMENTS.index("saving the evaluation copy")
    assert (steps == 0) if cloning else (steps <= 128 + CLONING["n_envs"]), (moment, steps)  # never carried on
    # cut short inside the cloning, the resume clones again from the start: the line says so
    unfinished = MOMENTS.index(moment) < MOMENTS.index("between cloning and PPO")
    assert line.endswith("(behaviour cloning starts over: it was stopped unfinished)") == unfinished, (moment, line)


@pytest.mark.parametrize("cloning", [True, False], ids=["cloned policy at 0", "first periodic"])
def test_a_first_evaluation_cut_by_ctrl_c_runs_on_resume(tmp_path, monkeypatch, cloning):
    """Session 46: Ctrl-C during a run's first evaluation left no eval.jsonl row, and the resume scheduled the next
    evaluation one period after the checkpoint, so the one cut short never ran (and best.zip became the final policy,
    unevaluated). It now runs at the resume's first step."""
    import training.train_ppo
    from training.train_ppo import TrainConfig, train

    cfg = {**CLONING, "eval_every": 10**8} if cloning else {**CLONING, "bc_decisions": 0, "eval_every": 128}
    fired = _sigint_in(monkeypatch, training.train_ppo, "evaluate", lambda *a, **k: True)
    try:
        train(TrainConfig(out=str(tmp_path), **cfg))
        pytest.fail("the run went on to its end: the Ctrl-C was lost")
    except KeyboardInterrupt as exc:
        assert fired and str(exc).startswith("stopped at "), exc
    assert not (tmp_path / "eval.jsonl").exists() or not (tmp_path / "eval.jsonl").read_text().strip()
    steps = int(next(tmp_path.glob("ckpt_*.zip")).stem.split("_")[1])
    train(TrainConfig(out=str(tmp_path), **{**cfg, "resume": True, "total_timesteps": steps + 64}))
    rows = [json.loads(x) for x in (tmp_path / "eval.jsonl").read_text().splitlines()]
    assert rows and rows[0]["timesteps"] <= steps + cfg["n_envs"], (steps, rows)


def test_a_second_ctrl_c_stops_at_once_without_a_new_checkpoint(tmp_path, monkeypatch):
    """The first Ctrl-C asks for a checkpoint; a second one during that checkpoint's write stops the run
    there: no half-written checkpoint, no scratch, one line saying what happened."""
    import agents.checkpoint
    import training.train_ppo

    first = _sigint_in(monkeypatch, training.train_ppo, "say", lambda text: "behaviour cloning of" in text)
    second = _sigint_in(monkeypatch, agents.checkpoint, "write_metadata", lambda p, m: Path(p).name == "ckpt_0.zip")
    line = _interrupted_run(tmp_path)
    assert first and second
    assert line == "a second Ctrl-C stopped the run at once, without a new checkpoint; no checkpoint was written yet"
    assert not list(tmp_path.glob("ckpt_*")) and not [p.name for p in tmp_path.iterdir() if p.name.startswith("_")]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_run_with_sigint_ignored_keeps_it_ignored_and_says_so(tmp_path, capsys):
    """A job a script started in the background (`nohup meld8 train ... &`) has SIGINT ignored by its
    shell: the run leaves it so (kill -INT does nothing) and its start line says so, rather than
    promising a checkpoint on Ctrl-C that would never come."""
    from training.train_ppo import TrainConfig, train

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cfg = {**CLONING, "bc_decisions": 0, "total_timesteps": 64}
        final = train(TrainConfig(out=str(tmp_path), **cfg))
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
    start = next(x for x in capsys.readouterr().err.splitlines() if "PPO from step" in x)
    assert "SIGINT is ignored in this process" in start and "saves a checkpoint" not in start
    assert final.is_file()
