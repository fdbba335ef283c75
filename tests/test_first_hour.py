"""A first hour without surprises (issue 23 §3): each item checked as a user meets it."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from meld8_app.cli import build_parser, main
from meld8_env.rules import RuleConfig

ROOT = Path(__file__).resolve().parents[1]
FAST = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0)


def _subparser(name: str):
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return action.choices[name]


@pytest.mark.parametrize("command", ["waits", "distance", "simulate"])
def test_every_option_has_help_text(command):
    for action in _subparser(command)._actions:
        if action.dest != "help":
            assert action.help and len(action.help) > 10, f"meld8 {command}: {action.dest} has no --help text"


@pytest.mark.parametrize("command", ["tournament", "play"])
def test_agents_help_lists_every_kind_of_spec(command):
    agents = next(a for a in _subparser(command)._actions if a.dest == "agents")
    for kind in ("greedy", "ppo:PATH.zip", "rllib:FOLDER", "cmd:COMMAND", "pkg.mod:Class"):
        assert kind in agents.help, f"meld8 {command} --agents help lacks {kind}"


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    from training.tournament import TournamentConfig, run

    out = tmp_path_factory.mktemp("t")
    cfg = TournamentConfig(["greedy", "random", "random"], boards=1, seed=4, out=str(out), rules=FAST, progress=False,
                           chart=False)  # fmt: skip
    first = run(cfg)
    return cfg, first, out / "games.jsonl"


def test_replay_into_head_ends_quietly(log):
    _, _, path = log
    p = subprocess.Popen([sys.executable, "-m", "meld8_app", "replay", str(path), "--game", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert p.stdout.readline()  # `head -1`: one line, then the reader goes away
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 0 and err == "", err


def test_a_finished_tournament_resumed_gives_the_same_results_again(log, capsys):
    """What a second ``make demo`` does (its tournament line has --resume): the same results, and one line saying
    that every board is logged (it drew an empty progress bar and said nothing)."""
    import dataclasses

    from training.tournament import run

    cfg, first, path = log
    capsys.readouterr()
    assert run(dataclasses.replace(cfg, resume=True, progress=True)) == first
    err = capsys.readouterr().err
    assert err == f"{path}: 1 of 1 boards logged; the results are made again from the log\n", err


def test_make_demo_starts_fresh_and_resumes_once_its_log_is_there(tmp_path):
    """The first ``make demo`` must not pass --resume (refused where no log is: review, session 37), a second must."""
    (tmp_path / "Makefile").write_bytes((ROOT / "Makefile").read_bytes())

    def demo_line() -> list[str]:
        dry = ["make", "-n", "-o", "install", "demo"]  # -o install: print the recipe without setting anything up
        out = subprocess.run(dry, cwd=tmp_path, capture_output=True, text=True).stdout
        return next(x for x in out.splitlines() if "meld8 tournament" in x).split()

    first = demo_line()
    assert "--resume" not in first and first[first.index("--out") + 1] == "results/demo"
    (tmp_path / "results" / "demo").mkdir(parents=True)
    assert demo_line() == first  # a folder without the log: nothing to resume yet (review, session 37)
    (tmp_path / "results" / "demo" / "games.jsonl").write_text("")
    assert demo_line() == [*first, "--resume"]


def test_a_port_in_use_is_one_meld8_line_before_anything_is_served(tmp_path, log):
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    _, _, path = log
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = subprocess.run([sys.executable, "-m", "meld8_app", "view", str(path), "--game", "0", "--port", str(port),
                            "--no-browser"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"port {port} on 127.0.0.1 is in use" in p.stderr and "table is at" not in p.stdout + p.stderr


def test_pytest_shows_skip_reasons():
    import tomllib

    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-rs" in addopts.split()


def test_readme_names_files_that_exist_and_no_internal_issue_numbers():
    text = (ROOT / "README.md").read_text()
    assert "RULES.md" not in text and not re.search(r"\(issues? \d", text)
    for target in re.findall(r"\]\(((?:docs|agents|configs|examples)/[^)#]+)\)", text):
        assert (ROOT / target).exists(), f"README links {target}, which does not exist"
    for name in re.findall(r"`((?:docs|configs)/[\w/.-]+\.(?:md|yaml|json|jsonl|png))`", text):
        assert (ROOT / name).exists(), f"README names {name}, which does not exist"


def test_readme_gives_one_figure_for_the_rllib_run_and_timings():
    text = " ".join((ROOT / "README.md").read_text().split())
    minutes = set(re.findall(r"(\d+) minutes (?:of wall time|on 2 cores)", text))
    assert minutes == {"46"}, minutes  # the RLlib run, everywhere it is quoted
    config = (ROOT / "configs/train/rllib_selfplay.yaml").read_text()
    assert "About 46 minutes" in config
    assert "~20 s" not in text and re.search(r"test suite \(about [\d,]+ tests\) took \d+ minutes", text)


def test_messages_name_commands_not_python_functions(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.jsonl").write_text(json.dumps({"timesteps": 1, "mean_placement": 2.0}) + "\n")
    (run / "ckpt_1.zip").write_bytes(b"")  # a run that saved a checkpoint (one that never did is told to move it)
    assert main(["train", "ppo_vs_bots", "--set", f"out={run}"]) == 2
    err = capsys.readouterr().err
    assert "--set resume=true" in err and "()" not in err and "train_ppo" not in err


def test_rays_start_up_notices_are_hidden_and_explained_in_one_line(capsys, monkeypatch):
    """The notices come from Ray's own loggers (token auth, new API stack, deprecations, gputil): after
    quiet_ray they print nothing, an error still does, and meld8 says so in one line."""
    import logging

    pytest.importorskip("ray")
    from ray._common.deprecation import deprecation_warning
    from ray._private.authentication.authentication_token_setup import _warn_token_auth_enabled

    from training.ray_setup import LOGGERS, quiet_ray

    monkeypatch.delenv("MELD8_RAY_VERBOSE", raising=False)
    levels = {n: logging.getLogger(n).level for n in LOGGERS}
    try:
        quiet_ray("a test")
        _warn_token_auth_enabled()
        deprecation_warning(old="RLModule(config=...)", new="RLModule(observation_space=...)")
        logging.getLogger("ray.tune.utils.util").warning("Install gputil for GPU system monitoring.")
        logging.getLogger("ray.rllib.algorithms.algorithm_config").warning("You are running PPO on the new API stack!")
        logging.getLogger("ray.rllib").error("a real error")
        err = capsys.readouterr().err
        # an error still gets through: judged by the logger's level, since Ray's handler may hold a stderr
        # bound before this test's capture began (it does when another test started Ray first)
        errors_shown = logging.getLogger("ray.rllib").isEnabledFor(logging.ERROR)
    finally:
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)
    lines = err.splitlines()
    assert lines[0].startswith("meld8: starting Ray for a test") and "MELD8_RAY_VERBOSE=1" in lines[0]
    assert "Token" not in err and "deprecated" not in err and "gputil" not in err and "API stack" not in err
    assert errors_shown
