"""``meld8 train`` refuses at load, before any folder exists, what used to fail after the run folder was written
(red team, session 37): CHEATING diagnostic agents in any option that names agents, a Ray ``address`` that is no
address, an empty ``rules``; and a run folder whose run never saved a checkpoint, or a finished short run that holds
only ``final.zip``, always leaves the user a way forward that the message states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_kit import one_line_error

from meld8_app.cli import main

#: a run of a few learner steps (a check that is undone trains seconds, never a real run)
TINY = ["--set", "n_envs=1", "--set", "n_steps=8", "--set", "batch_size=8", "--set", "bc_decisions=0", "--set",
        "progress=false", "--set", "eval_boards=1", "--set", "eval_every=1000", "--set", "total_timesteps=8",
        "--set", "net_arch=[16]"]  # fmt: skip

CHEATS = {
    "opponents": '[greedy, "search:cheat=2"]',
    "eval_opponents": '["search:ron=truth", greedy]',
    "pool_bots": '[greedy, "search:cheat=1"]',  # selfplay is off: the pool is checked all the same
    "bc_teacher": "search:cheat=2",
}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _rllib_cfg(out, *extra):
    pytest.importorskip("ray.rllib")
    from training.rllib_train import RllibConfig

    return RllibConfig.load(None, [f"out={out}", "progress=false", "net_arch=[16]", "snapshot_slots=1", *extra])


# -- 1. cheating diagnostics -------------------------------------------------------------------------------------
@pytest.mark.parametrize("option", list(CHEATS))
def test_a_cheating_agent_is_refused_naming_the_option_before_any_folder(tmp_path, capsys, option):
    out = tmp_path / "run"
    err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", f"{option}={CHEATS[option]}"],
                         capsys)  # fmt: skip
    assert f"train option {option!r}: agent 'search:" in err and "is a CHEATING diagnostic" in err, err
    assert "python -m training.search_eval" in err and not out.exists()


def test_the_rllib_backend_refuses_a_cheating_evaluation_opponent_before_ray_starts(tmp_path):
    from training.rllib_train import train

    cfg = _rllib_cfg(tmp_path / "run", f"eval_opponents={CHEATS['eval_opponents']}")
    with pytest.raises(ValueError, match="train option 'eval_opponents': agent 'search:ron=truth' is a CHEATING"):
        train(cfg)
    assert not (tmp_path / "run").exists()


def test_a_misspelt_pool_bot_is_refused_with_selfplay_off(tmp_path, capsys):
    out = tmp_path / "run"
    err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", "pool_bots=[grdy]"], capsys)
    assert "train option 'pool_bots': unknown agent 'grdy'" in err and not out.exists()


# -- 2. address --------------------------------------------------------------------------------------------------
def test_the_address_option_gets_the_check_of_the_address_flag(tmp_path):
    from training.rllib_train import RllibConfig

    for ok in ("auto", "local", "my_head:6379", "ray://10.0.0.1:10001"):  # local and _ hosts: review, session 37
        assert _rllib_cfg(tmp_path, f"address={ok}").address == ok
    with pytest.raises(ValueError, match=r"^train option 'address' must be HOST:PORT, ray://HOST:PORT, auto or local, "
                                         r"got 'foo'$"):  # fmt: skip
        _rllib_cfg(tmp_path, "address=foo")
    config = tmp_path / "cluster.yaml"
    config.write_text("address: foo\n")
    with pytest.raises(ValueError, match="train option 'address' must be HOST:PORT"):
        RllibConfig.load(str(config), [f"out={tmp_path / 'run'}"])


def test_address_flag_and_option_are_refused_in_one_line_before_any_folder(tmp_path, capsys):
    pytest.importorskip("ray.rllib")
    out = tmp_path / "run"
    err = one_line_error(["train", "rllib_selfplay", "--backend", "rllib", "--set", f"out={out}", "--set",
                          "address=foo"], capsys)  # fmt: skip
    assert "train option 'address' must be HOST:PORT, ray://HOST:PORT, auto or local, got 'foo'" in err
    assert not out.exists()
    err = one_line_error(["train", "rllib_selfplay", "--backend", "rllib", "--set", f"out={out}", "--address", "foo"],
                         capsys)  # fmt: skip
    assert "--address must be HOST:PORT, ray://HOST:PORT, auto or local, got 'foo'" in err and not out.exists()


def test_an_rllib_option_given_by_set_is_not_blamed_on_the_config_file(capsys):
    err = one_line_error(["train", "ppo_vs_bots", "--set", "address=foo"], capsys)
    assert "train option 'address' belongs to the rllib backend: add --backend rllib" in err, err


# -- 4. an empty rules value (3, the run folder, below) ---------------------------------------------------------
@pytest.mark.parametrize("value", ["", '""', "' '"])
def test_an_empty_rules_value_is_refused_not_read_as_the_defaults(tmp_path, capsys, value):
    out = tmp_path / "run"
    err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", f"rules={value}"], capsys)
    assert "rules" in err and ("gives no value" in err or "'rules' is an empty path" in err), err
    assert not out.exists()


def test_an_empty_rules_value_in_a_config_file_is_refused(tmp_path, capsys):
    config = tmp_path / "t.yaml"
    config.write_text('rules: ""\n')
    out = tmp_path / "run"
    err = one_line_error(["train", str(config), *TINY, "--set", f"out={out}"], capsys)
    assert "train option 'rules' is an empty path: give a rule config YAML or a built-in name" in err, err
    assert not out.exists()


def test_the_rllib_backend_refuses_an_empty_rules_value_at_load(tmp_path):
    from training.rllib_train import RllibConfig

    config = tmp_path / "t.yaml"
    config.write_text('rules: ""\n')
    with pytest.raises(ValueError, match="^train option 'rules' is an empty path"):
        _rllib_cfg(tmp_path / "run", 'rules=""')
    with pytest.raises(ValueError, match="^train option 'rules' is an empty path"):
        RllibConfig.load(str(config), [f"out={tmp_path / 'run'}"])


def test_null_rules_still_mean_the_defaults():
    """A run's own config.yaml says ``rules: null`` for the default rules: it must stay a config to train from."""
    from training.train_ppo import TrainConfig

    assert TrainConfig.load(None, ["rules=null"]).rules is None


def test_an_empty_set_value_is_refused_for_any_option(tmp_path, capsys):
    # init_from= read as null: a fresh network instead of the checkpoint meant, without a word
    out = tmp_path / "run"
    err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", "init_from="], capsys)
    assert "--set init_from= gives no value" in err and not out.exists(), err


# -- 3. a run that never saved a checkpoint; a finished run holding only final.zip ------------------------------
def _started(folder: Path, backend: str = "sb3", *more: str) -> Path:
    """What a start that failed before its first checkpoint leaves (run.json, config.yaml; ``more`` files)."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"backend": backend}) + "\n")
    (folder / "config.yaml").write_text("seed: 0\n")
    (folder / ".lock").write_text("pid 1 on gone")
    for name in more:
        if name == "tb":
            (folder / "tb" / "ppo_1").mkdir(parents=True)
            (folder / "tb" / "ppo_1" / "events.out").write_bytes(b"x")
        else:
            (folder / name).write_text(json.dumps({"timesteps": 0, "mean_placement": 2.0, "mean_score": 0}) + "\n")
    return folder


@pytest.mark.parametrize("resume", ["false", "true"])
def test_a_start_that_never_trained_is_refused_and_its_config_kept(tmp_path, capsys, resume):
    # review, session 37: a first version started afresh here and overwrote a config.yaml edited by hand
    out = _started(tmp_path / "run")
    (out / "config.yaml").write_text("# tuned by hand\nlearning_rate: 0.001\n")
    before = _snapshot(out)
    err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", f"resume={resume}"], capsys)
    assert f"{out} holds a run that never saved a checkpoint (ckpt_*.zip or final.zip), only " in err, err
    assert "move it away (keep its config.yaml if you edited it) or choose another out" in err
    assert _snapshot(out) == before
    assert main(["train", "ppo_vs_bots", *TINY, "--set", f"out={tmp_path / 'fresh'}"]) == 0  # the way forward


@pytest.mark.parametrize("resume", ["false", "true"])
def test_a_run_that_logged_but_never_saved_a_checkpoint_is_refused_untouched(tmp_path, capsys, resume):
    out = _started(tmp_path / "run", "sb3", "tb", "eval.jsonl")
    before = _snapshot(out)
    err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", f"resume={resume}"], capsys)
    assert f"{out} holds a run that never saved a checkpoint (ckpt_*.zip or final.zip), only eval.jsonl, tb" in err
    assert "move it away (keep its config.yaml if you edited it) or choose another out" in err, err
    assert _snapshot(out) == before


def test_a_checkpointless_run_in_use_is_never_called_movable(tmp_path, capsys):
    from training.run_folder import OutputLock

    out = _started(tmp_path / "run", "sb3", "eval.jsonl")
    with OutputLock(out):
        err = one_line_error(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}"], capsys)
    assert f"{out} is in use by pid " in err and "move it away" not in err, err


def test_the_rllib_trainer_gives_the_same_ways_forward(tmp_path):
    from meld8_env.rules import RuleConfig
    from training.rllib_train import _check_folder
    from training.run_folder import RunFolder

    out = _started(tmp_path / "run", "rllib")
    for resume in ("false", "true"):
        with pytest.raises(ValueError, match=r"holds a run that never saved a checkpoint \(checkpoint/\), only "):
            _check_folder(_rllib_cfg(out, f"resume={resume}"), RuleConfig(), RunFolder(out, "rllib"))
    (out / "policy_it0").mkdir()
    for resume in ("false", "true"):
        with pytest.raises(ValueError, match=r"never saved a checkpoint \(checkpoint/\), only policy_it0, .*move it"):
            _check_folder(_rllib_cfg(out, f"resume={resume}"), RuleConfig(), RunFolder(out, "rllib"))


def _resumed_from(out: Path, total: int, capsys, *extra: str) -> int:
    """Resume the run in ``out`` to ``total`` steps; the learner step its PPO went on from (its start line)."""
    capsys.readouterr()
    assert main(["train", "ppo_vs_bots", *TINY, *extra, "--set", f"out={out}", "--set", "resume=true", "--set",
                 f"total_timesteps={total}"]) == 0  # fmt: skip
    line = next(ln for ln in capsys.readouterr().err.splitlines() if "PPO from step" in ln)
    return int(line.split("PPO from step ")[1].split()[0])


def test_a_finished_run_holding_only_final_zip_is_resumed_from_it(tmp_path, capsys):
    from agents.checkpoint import read_metadata

    out = tmp_path / "run"
    assert main(["train", "ppo_vs_bots", *TINY, "--set", f"out={out}", "--set", "checkpoint_every=1000"]) == 0
    assert not list(out.glob("ckpt_*.zip"))
    done = read_metadata(out / "final.zip")["num_timesteps"]
    assert _resumed_from(out, done + 16, capsys, "--set", "checkpoint_every=1000") > done  # not from step 0
    assert read_metadata(out / "final.zip")["num_timesteps"] >= done + 16


def test_a_resume_goes_on_from_final_zip_when_it_is_past_the_last_checkpoint(tmp_path, capsys):
    from agents.checkpoint import read_metadata

    out = tmp_path / "run"
    extra = ["--set", "checkpoint_every=16"]
    assert main(["train", "ppo_vs_bots", *TINY, *extra, "--set", f"out={out}", "--set", "total_timesteps=24"]) == 0
    last = max(int(p.stem.split("_")[1]) for p in out.glob("ckpt_*.zip"))
    done = read_metadata(out / "final.zip")["num_timesteps"]
    assert last < done
    assert _resumed_from(out, done + 16, capsys, *extra) > done  # the steps after the last ckpt are kept


def test_final_zip_wins_a_tie_with_the_last_checkpoint_and_stray_copies_are_no_checkpoints(tmp_path, capsys):
    """Review, session 37: ckpt_N is saved before the last update of N steps and final.zip after it, so at equal
    steps the resume took the older weights; a copy named ``ckpt_16 (copy).zip`` failed in int()."""
    from agents.checkpoint import read_metadata
    from training.train_ppo import _checkpoints, _resume_point, _stopped_at_once

    out = tmp_path / "run"
    extra = ["--set", "checkpoint_every=16"]
    assert main(["train", "ppo_vs_bots", *TINY, *extra, "--set", f"out={out}", "--set", "total_timesteps=16"]) == 0
    last = max(int(p.stem.split("_")[1]) for p in out.glob("ckpt_*.zip"))
    assert read_metadata(out / "final.zip")["num_timesteps"] == last
    assert _resume_point(out) == out / "final.zip"
    assert f"continue from {out / 'final.zip'} with --set resume=true" in str(_stopped_at_once(out))
    (out / f"ckpt_{last} (copy).zip").write_bytes((out / f"ckpt_{last}.zip").read_bytes())
    assert [p.name for p in _checkpoints(out)] == [f"ckpt_{last}.zip"]
    capsys.readouterr()
    err = one_line_error(["train", "ppo_vs_bots", *TINY, *extra, "--set", f"out={out}"], capsys)
    assert "already holds a run" in err and "int()" not in err


def test_a_wrong_kind_of_value_says_which_kind_and_a_float_count_how_to_write_it(tmp_path, capsys):
    """Helper walkthrough, session 46: ``total_timesteps=1e6`` said "must be like its default 200000, got 1000000.0"."""
    out = tmp_path / "run"
    assert main(["train", "ppo_vs_bots", "--set", "total_timesteps=1e6", "--set", f"out={out}"]) == 2
    said = "train option 'total_timesteps' must be an integer (write 1000000: YAML reads 1e6 as a float), like its"
    assert said in capsys.readouterr().err
    assert main(["train", "ppo_vs_bots", "--set", "total_timesteps=2.5e5", "--set", f"out={out}"]) == 2
    assert "(write 250000: YAML reads 1e6 as a float)" in capsys.readouterr().err
    assert main(["train", "ppo_vs_bots", "--set", "progress=1", "--set", f"out={out}"]) == 2
    assert "'progress' must be true or false, like its default True, got 1" in capsys.readouterr().err
    assert not out.exists()
