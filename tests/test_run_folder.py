"""One run folder for both trainers (issue 19 item 5, 22 §5, 23 §2): a folder holding a run is only
continued by the backend that wrote it, a refused start writes nothing (config.yaml stays byte for
byte), ``best`` is replaced by renames only, options share their names (old RLlib names read with a
one-line deprecation), and every option is checked at load with a message naming it."""

from __future__ import annotations

import json
import math

import pytest

from meld8_app.cli import main
from training.run_folder import RunFolder, RunFolderError, recover, swap_in
from training.train_ppo import TrainConfig


def _snapshot(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _sb3_run(folder):
    """The files an SB3 run leaves (enough to be recognised; no torch needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text('{"backend": "sb3"}\n')
    (folder / "config.yaml").write_text("seed: 7\n")
    (folder / "eval.jsonl").write_text(json.dumps({"timesteps": 100, "mean_placement": 1.9, "mean_score": 1}) + "\n")
    return folder


def test_a_fresh_folder_passes_and_a_run_is_named_with_the_resume_hint(tmp_path):
    RunFolder(tmp_path / "new", "sb3").check(resume=False)
    _sb3_run(tmp_path / "old")
    with pytest.raises(RunFolderError, match=r"already holds a run \(run.json, config.yaml, eval.jsonl\).*resume=true"):
        RunFolder(tmp_path / "old", "sb3").check(resume=False)
    RunFolder(tmp_path / "old", "sb3").check(resume=True)


@pytest.mark.parametrize("resume", [False, True])
def test_a_run_of_the_other_backend_is_never_continued_or_overwritten(tmp_path, resume):
    _sb3_run(tmp_path)
    with pytest.raises(RunFolderError, match="holds a run of the sb3 backend"):
        RunFolder(tmp_path, "rllib").check(resume)
    (tmp_path / "run.json").unlink()
    (tmp_path / "ckpt_100.zip").write_bytes(b"")  # an older run without run.json: told by its files
    with pytest.raises(RunFolderError, match="holds a run of the sb3 backend"):
        RunFolder(tmp_path, "rllib").check(resume)


def test_a_run_file_meld8_did_not_write_is_one_line(tmp_path):
    tmp_path.joinpath("run.json").write_text('{"backend": "tensorflow"}')
    with pytest.raises(RunFolderError, match="names no backend meld8 knows"):
        RunFolder(tmp_path, "sb3").check(resume=True)


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_best_is_swapped_by_renames_and_a_kill_between_them_is_recovered(tmp_path, kind):
    final, new = tmp_path / "best", tmp_path / "best.tmp"

    def make(path, text):
        if kind == "file":
            path.write_text(text)
        else:
            path.mkdir()
            (path / "meld8.json").write_text(text)

    def read(path):
        return path.read_text() if kind == "file" else (path / "meld8.json").read_text()

    make(final, "old")
    make(new, "new")
    swap_in(new, final)
    assert read(final) == "new" and not new.exists() and not (tmp_path / "best.old").exists()
    if kind == "folder":  # a kill after the first rename: best/ is gone, best.old/ is complete
        (tmp_path / "best").rename(tmp_path / "best.old")
        recover(final)
        assert read(final) == "new"


def test_sb3_refuses_to_start_over_a_run_and_writes_nothing(tmp_path, capsys):
    run = _sb3_run(tmp_path / "run")
    (run / "ckpt_100.zip").write_bytes(b"")  # a run that saved a checkpoint: continued, never started over
    before = _snapshot(run)
    assert main(["train", "ppo_vs_bots", "--set", f"out={run}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds a run" in err and "resume=true" in err
    # a refused start with a bad value in that folder: still nothing written (config.yaml untouched)
    assert main(["train", "ppo_vs_bots", "--set", f"out={run}", "--set", "n_envs=0"]) == 2
    assert main(["train", "ppo_vs_bots", "--set", f"out={run}", "--set", "eval_opponents=[greedy, grdy]"]) == 2
    capsys.readouterr()
    assert _snapshot(run) == before and not (run / ".lock").exists()


@pytest.mark.parametrize("backend", ["sb3", "rllib"])
def test_a_training_run_is_refused_in_a_tournament_folder_and_writes_nothing(tmp_path, capsys, backend):
    """Session 46: ``meld8 train ... out=T`` over a tournament's folder started and wrote config.yaml and run.json
    beside its games (a tournament was already refused in a run's folder)."""
    from training import run_folder, tournament

    assert run_folder.TOURNAMENT_OUTPUTS == tournament.OUTPUTS
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "results.json").write_text("{}")
    config = ["ppo_vs_bots"] if backend == "sb3" else ["rllib_selfplay", "--backend", "rllib"]
    assert main(["train", *config, "--set", f"out={folder}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{folder} holds a tournament (results.json): choose another output" in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["results.json"]


def test_a_refused_resume_leaves_no_folder_behind(tmp_path, capsys):
    assert main(["train", "ppo_vs_bots", "--set", f"out={tmp_path / 'none'}", "--set", "resume=true"]) == 2
    assert "no checkpoint" in capsys.readouterr().err and not (tmp_path / "none").exists()


def test_the_rllib_config_without_backend_says_it_is_an_rllib_config(capsys):
    assert main(["train", "rllib_selfplay"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and "rllib_selfplay is a config of the rllib backend" in err and "--backend rllib" in err
    )


def test_one_list_of_built_in_configs(capsys):
    from meld8_env.config_io import builtin_names

    names = builtin_names("train")
    assert {"ppo_vs_bots", "selfplay", "rllib_selfplay"} <= set(names)
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert ", ".join(names) in " ".join(out.split())
    assert main(["train"]) == 2
    assert ", ".join(names) in capsys.readouterr().err


@pytest.mark.parametrize(
    "option, says",
    [
        ("learning_rate=.nan", "'learning_rate' must be a finite number >= 0"),
        ("learning_rate=.inf", "'learning_rate' must be a finite number >= 0"),
        ("learning_rate=-0.001", "'learning_rate' must be a finite number >= 0"),
        ("learning_rate=0", "'learning_rate' must be > 0"),
        ("ent_coef=.nan", "'ent_coef' must be a finite number >= 0"),
        ("ent_coef=-1", "'ent_coef' must be a finite number >= 0"),
        ("net_arch=[]", "'net_arch' must be a non-empty list"),
        ("net_arch=[0]", "'net_arch' must be a non-empty list"),
        ("net_arch=[64, -4]", "'net_arch' must be a non-empty list"),
        ("net_arch=[100000000]", "'net_arch' must be a non-empty list"),
        ("seed=-1", "train option 'seed' must be an integer 0..2\\*\\*63"),
        ("seed=1180591620717411303424", "train option 'seed' must be an integer"),
        # review, session 36: SB3 refused 2**32 only after the out folder was made, naming no option; RLlib's
        # evaluation overflowed near 2**63
        ("seed=4294967296", "train option 'seed' must be an integer 0..4294967295 .*got 4294967296"),
        ("eval_every=0", "'eval_every' must be (an integer )?>= 1"),
    ],
)
@pytest.mark.parametrize("backend", ["sb3", "rllib"])
def test_bad_values_are_refused_at_load_naming_the_option(option, says, backend):
    from training.rllib_train import RllibConfig

    cls = TrainConfig if backend == "sb3" else RllibConfig
    with pytest.raises(ValueError, match=says):
        cls.load(None, [option])


@pytest.mark.parametrize(
    "option, says",
    [
        ("num_env_runners=1000", "'num_env_runners' must be at most"),
        ("num_envs_per_env_runner=100000", "'num_envs_per_env_runner' must be at most"),
        ("num_cpus_per_env_runner=4096", "'num_cpus_per_env_runner' must be at most"),
        ("batch_size=8000", "'batch_size' .* must be at most train_batch_size"),
        ("mix_self=.nan", "'mix_self' must be a probability"),
    ],
)
def test_rllib_resources_beyond_reason_are_refused(option, says, monkeypatch):
    from training.rllib_train import RllibConfig

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ValueError, match=says):
        RllibConfig.load(None, [option])


def test_old_rllib_names_still_work_with_one_line_each(capsys):
    from training.rllib_train import RllibConfig

    cfg = RllibConfig.load(None, ["lr=0.01", "entropy_coeff=0.02", "hidden=[8]", "num_epochs=2", "minibatch_size=64",
                                  "iterations=3", "train_batch_size=100"])  # fmt: skip
    assert (cfg.learning_rate, cfg.ent_coef, cfg.net_arch, cfg.n_epochs, cfg.batch_size) == (0.01, 0.02, [8], 2, 64)
    assert cfg.total_timesteps == 300 and cfg.iterations == 3
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 6 and all("deprecated" in line for line in err)
    assert any("'lr' is deprecated, use 'learning_rate'" in line for line in err)
    with pytest.raises(ValueError, match="are one option"):
        RllibConfig.load(None, ["lr=0.01", "learning_rate=0.02"])
    assert RllibConfig.load("rllib_selfplay").iterations == 700  # the shipped config: 700 iterations as before
    assert not any("deprecated" in line for line in capsys.readouterr().err.splitlines())


def test_both_backends_share_the_names_of_what_they_share():
    import dataclasses

    from training.rllib_train import RllibConfig

    shared = {"total_timesteps", "learning_rate", "ent_coef", "net_arch", "n_epochs", "batch_size", "gamma",
              "gae_lambda", "network", "features", "shaping", "eval_every", "eval_boards", "eval_opponents", "seed",
              "out", "rules", "resume", "progress"}  # fmt: skip
    sb3 = {f.name for f in dataclasses.fields(TrainConfig)}
    rllib = {f.name for f in dataclasses.fields(RllibConfig)}
    assert shared <= sb3 & rllib
    assert not {"lr", "entropy_coeff", "hidden", "num_epochs", "minibatch_size", "iterations"} & rllib


# -- the RLlib trainer checks before it writes (needs the rllib extra for its env) -------------------
def _rllib_cfg(out, *extra):
    from training.rllib_train import RllibConfig

    return RllibConfig.load(None, [f"out={out}", "progress=false", "net_arch=[16]", "snapshot_slots=1", *extra])


def _league(folder, **kw):
    state = {"iteration": 4, "filled": 1, "next_slot": 0, "best": 2.1, "timesteps": 1600, "evaluated": 4, **kw}
    (folder / "checkpoint").mkdir(parents=True, exist_ok=True)
    (folder / "checkpoint" / "league.json").write_text(json.dumps(state))
    (folder / "run.json").write_text('{"backend": "rllib"}')
    row = {"iteration": 0, "timesteps": 0, "mean_placement": 2.3, "mean_score": -1500.0}
    (folder / "eval.jsonl").write_text(json.dumps(row) + "\n")


@pytest.mark.parametrize(
    "tamper, says",
    [
        ({"iteration": "4"}, "iteration is not an integer"),
        ({"filled": True}, "filled is not an integer"),
        ({"filled": 5}, "5 filled snapshot slots"),
        ({"next_slot": 3}, "next slot 3"),
        ({"best": 99}, "best placement 99"),
        ({"wall_s": -5}, "wall_s"),
        ({"evaluated": 9}, "evaluated 9"),
        ({"timesteps": -1}, "timesteps is not an integer"),
    ],
)
def test_a_tampered_league_state_is_refused_before_anything_is_written(tmp_path, tamper, says):
    pytest.importorskip("ray.rllib")
    from training.rllib_train import train

    _league(tmp_path, **tamper)
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=f"not a league state meld8 wrote.*{says}"):
        train(_rllib_cfg(tmp_path, "resume=true"))
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "row, says",
    [
        ({"iteration": 2, "timesteps": 800, "mean_placement": 2.2}, r"line 2 has no 'mean_score'"),
        ({"iteration": 2, "timesteps": 8, "mean_placement": 0.5, "mean_score": 0}, r"line 2: 'mean_placement' is 0.5"),
        ({"iteration": 2, "timesteps": "x", "mean_placement": 2.0, "mean_score": 0}, r"line 2: 'timesteps' is x"),
    ],
)
def test_a_bad_eval_row_stops_an_rllib_resume_before_anything_is_written(tmp_path, row, says):
    """Found in session 35, fixed in 36: the SB3 trainer checked eval.jsonl's rows on resume, the RLlib trainer
    kept a bad row and went on (the curve skipped it); now both refuse it in one line naming the file and line."""
    pytest.importorskip("ray.rllib")
    from training.rllib_train import train

    _league(tmp_path)
    with (tmp_path / "eval.jsonl").open("a") as f:
        f.write(json.dumps(row) + "\n")
    before = _snapshot(tmp_path)
    with pytest.raises(RunFolderError, match=f"eval.jsonl: {says}"):
        train(_rllib_cfg(tmp_path, "resume=true"))
    assert _snapshot(tmp_path) == before


def test_options_that_do_not_fit_the_checkpoint_are_refused_before_anything_is_written(tmp_path):
    pytest.importorskip("ray.rllib")
    from training.rllib_train import league_shape, train

    _league(tmp_path, shape=league_shape(_rllib_cfg(tmp_path)))
    before = _snapshot(tmp_path)
    with pytest.raises(ValueError, match=r"trained with net_arch=\[16\], the options ask for \[64\]"):
        train(_rllib_cfg(tmp_path, "resume=true", "net_arch=[64]"))
    with pytest.raises(ValueError, match="already holds a run"):
        train(_rllib_cfg(tmp_path, "seed=-0"))
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("opponents, says", [("[]", "must name 2 agents"), ("[greedy]", "must name 2 agents"),
                                             ("[greedy, wizard]", "wizard")])  # fmt: skip
def test_unknown_or_missing_eval_opponents_are_refused_before_anything_is_written(tmp_path, opponents, says):
    pytest.importorskip("ray.rllib")
    from training.rllib_train import train

    with pytest.raises(ValueError, match=says):
        train(_rllib_cfg(tmp_path / "run", f"eval_opponents={opponents}"))
    assert not (tmp_path / "run").exists()


def test_rllib_never_trims_or_rewrites_an_sb3_runs_logs(tmp_path):
    pytest.importorskip("ray.rllib")
    from training.rllib_train import train

    run = _sb3_run(tmp_path / "run")
    before = _snapshot(run)
    for extra in ([], ["resume=true"]):
        with pytest.raises(ValueError, match="holds a run of the sb3 backend"):
            train(_rllib_cfg(run, *extra))
    assert _snapshot(run) == before


def test_an_evaluation_cut_by_ctrl_c_is_due_again_on_resume(tmp_path):
    """The league state a Ctrl-C during the evaluation of iteration 4 saves: iteration 4 trained,
    evaluated 2. The resume plan evaluates iteration 4 again (its eval row, if any, is dropped first)."""
    pytest.importorskip("ray.rllib")
    from training.rllib_train import _check_folder, _eval_point

    _league(tmp_path, evaluated=2)
    cfg = _rllib_cfg(tmp_path, "resume=true", "eval_every=2")
    saved, league = _check_folder(cfg, __import__("meld8_env.rules").rules.RuleConfig(), RunFolder(tmp_path, "rllib"))
    assert saved == tmp_path / "checkpoint"
    assert league["evaluated"] == 2 < league["iteration"] == 4 and _eval_point(cfg, 4)
    del league["evaluated"]
    _league(tmp_path, **{k: v for k, v in league.items() if k != "evaluated"})
    state = json.loads((tmp_path / "checkpoint" / "league.json").read_text())
    state.pop("evaluated")
    (tmp_path / "checkpoint" / "league.json").write_text(json.dumps(state))
    _, old = _check_folder(cfg, __import__("meld8_env.rules").rules.RuleConfig(), RunFolder(tmp_path, "rllib"))
    assert old["evaluated"] == 4  # a state written before the field: its evaluation was done
    assert math.isclose(old["best"], 2.1)


def test_a_resume_never_drops_log_rows_it_cannot_read(tmp_path):
    # red team, session 32: a row with "timesteps": 64.0, a trailing comma or a list was silently dropped when a
    # resume rewrote eval.jsonl (every row, for a file of such lines)
    from training.train_ppo import _logged_by

    folder = RunFolder(tmp_path, "sb3")
    log = tmp_path / "eval.jsonl"
    good = '{"mean_placement": 2.0, "timesteps": 64}\n'
    log.write_text(good + '{"mean_placement": 1.5, "timesteps": 128},\n' + good)
    with pytest.raises(RunFolderError, match=r"eval.jsonl: line 2 is not a JSON object"):
        folder.keep_rows("eval.jsonl", lambda r: _logged_by(r, log) <= 100)
    log.write_text(good + '{"mean_placement": 1.5, "timesteps": 128.0}\n')
    with pytest.raises(ValueError, match=r"a row's 'timesteps' is 128.0, not an integer"):
        folder.keep_rows("eval.jsonl", lambda r: _logged_by(r, log) <= 100)
    assert log.read_text() == good + '{"mean_placement": 1.5, "timesteps": 128.0}\n'  # nothing was rewritten
    log.write_text(good + '{"mean_placement": 1.5, "timesteps": 128}\n{"mean_pla')  # a kill cut the last line
    folder.keep_rows("eval.jsonl", lambda r: _logged_by(r, log) <= 100)
    assert log.read_text() == good  # the torn line and the rows after the checkpoint go, as before


@pytest.mark.parametrize("text", ["null", "[" * 5000])
def test_a_run_file_of_null_or_deep_json_is_refused_not_overwritten(tmp_path, text):
    # red team, session 32: a run.json of null counted as missing, and the folder was taken over
    (tmp_path / "run.json").write_text(text)
    (tmp_path / "best.zip").write_bytes(b"x")
    with pytest.raises(RunFolderError, match="is not a run file meld8 wrote"):
        RunFolder(tmp_path, "sb3").check(resume=True)
    assert (tmp_path / "run.json").read_text() == text
