"""Path-valued options and agents the browser table cannot seat (red team 33, findings 10, 15 and 16): an
empty path is refused in one line naming the option (``Path("")`` is the current folder, never "the default"),
an output folder that is a file is refused before anything starts, a checkpoint path that is a folder or a
device says so, and ``meld8 play`` refuses a CHEATING records agent (as ``meld8 tournament`` does) or an agent
that already raised in its trial game, before the server starts. Each case checks that nothing was written."""

from __future__ import annotations

import socket
import sys

import numpy as np
import pytest
from cli_kit import one_line_error

from meld8_env.rules import RuleConfig

GREEDY3 = ["--agents", "greedy,greedy,greedy", "--boards", "1"]
CHEAT = "search:cheat=1+worlds=2+cands=1+stages=1"  # wants_records: it decides from the true records


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An empty current folder with one file, ``afile``; the test checks that nothing else appears in it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder\n")
    return tmp_path


def _untouched(folder) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["afile"]


@pytest.fixture
def no_server(monkeypatch):
    """``meld8_app.web.app.serve`` replaced by a recorder: a refusal must come before it is called."""
    pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
    import meld8_app.web.app as web

    calls: list[tuple] = []
    monkeypatch.setattr(web, "serve", lambda *a, **k: calls.append(a))
    return calls


# -- finding 15: an empty path is not the default -------------------------------------------------
@pytest.mark.parametrize(
    "argv, says",
    [
        (["tournament", *GREEDY3, "--out", ""], "--out is an empty path: give a folder for the tournament's outputs"),
        (["tournament", *GREEDY3, "--out", "afile"], "--out names afile, which exists and is not a folder"),
        (["tournament", *GREEDY3, "--out", "afile/sub"], "--out names afile/sub, but afile is not a folder"),
        (["tournament", *GREEDY3, "--out", "o", "--rules", ""], "--rules is an empty path: give a rule config YAML"),
        (["tournament", *GREEDY3, "--out", "o", "--config", ""], "--config is an empty path: give a tournament YAML"),
        (["tournament", *GREEDY3, "--out", "o", "--bot-log-dir", ""], "--bot-log-dir is an empty path: give a folder"),
        (["simulate", "--games", "1", "--rules", ""], "--rules is an empty path: give a rule config YAML"),
        (["replay", ""], "FILE is an empty path: give a replay file"),
    ],
)
def test_an_empty_or_file_path_is_refused_in_one_line_and_nothing_is_written(argv, says, here, capsys):
    err = one_line_error(argv, capsys)
    assert says in err
    _untouched(here)  # before the fix, --out "" wrote results.json, games.csv, ... here ("written: /results.json")


@pytest.mark.parametrize("key", ["out", "rules"])
def test_an_empty_path_in_the_tournament_config_is_refused_naming_the_key_and_file(key, here, capsys):
    other = "rules: default" if key == "out" else "out: o"
    (here / "t.yaml").write_text(f'agents: [greedy, greedy, greedy]\nboards: 1\n{other}\n{key}: ""\n')
    err = one_line_error(["tournament", "--config", "t.yaml"], capsys)
    assert f"'{key}' in t.yaml is an empty path" in err
    (here / "t.yaml").unlink()
    _untouched(here)


@pytest.mark.parametrize(
    "replays, says",
    [
        ("", "--replays is an empty path: give a folder for the finished games' replays (default replays/)"),
        ("afile", "--replays names afile, which exists and is not a folder"),  # was "[Errno 17] File exists"
        ("afile/sub", "--replays names afile/sub, but afile is not a folder"),
    ],
)
def test_play_refuses_a_replays_path_that_is_empty_or_a_file_before_serving(replays, says, here, capsys, no_server):
    err = one_line_error(
        ["play", "--agents", "greedy", "--no-browser", "--replays", replays, "--port", str(_free_port())], capsys
    )
    assert says in err and no_server == []
    _untouched(here)


def test_play_refuses_empty_rules_before_serving(here, capsys, no_server):
    err = one_line_error(
        ["play", "--agents", "greedy", "--no-browser", "--rules", "", "--port", str(_free_port())], capsys
    )
    assert "--rules is an empty path" in err and no_server == []
    _untouched(here)


@pytest.mark.parametrize("command", [["view", ""], ["review", "", "--seat", "0", "--json"], ["replay", ""]])
def test_view_review_and_replay_refuse_an_empty_file(here, capsys, command):
    pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
    err = one_line_error(
        [*command, "--no-browser", "--port", str(_free_port())] if command[0] == "view" else command, capsys
    )
    assert "FILE is an empty path" in err and "'.'" not in err and ": ." not in err


def test_an_empty_rllib_path_is_named_empty():
    from agents.rllib_policy import RllibPolicyAgent
    from meld8_env.agent import CheckpointError

    with pytest.raises(
        CheckpointError, match=r"^the RLlib policy is an empty path: give a policy folder \(rllib:OUT/best\)"
    ):
        RllibPolicyAgent("")


def test_rules_from_keeps_none_as_the_defaults():
    from meld8_app.cli.common import rules_from

    assert rules_from(None) == RuleConfig() and rules_from("two_player") == RuleConfig.two_player()


# -- finding 10: agents the browser table cannot seat are refused before it serves -------------------
@pytest.mark.parametrize("cheat", [CHEAT, "agents.oracle:OracleAgent"])
def test_play_refuses_a_records_agent_before_serving_as_tournament_does(cheat, here, capsys, no_server):
    err = one_line_error(["play", "--agents", f"{cheat},greedy", "--no-browser", "--port", str(_free_port())], capsys)
    assert f"agent {cheat!r} is a CHEATING diagnostic" in err and "training.search_eval" in err
    assert no_server == []  # before the fix: served, then greedy quietly took the seat at its first decision
    _untouched(here)  # no replays/ folder either
    tour = one_line_error(["tournament", "--agents", f"{cheat},greedy,greedy", "--boards", "1", "--out", "o"], capsys)
    assert f"agent {cheat!r} is a CHEATING diagnostic" in tour  # the same refusal, the same words


def test_live_game_refuses_a_records_agent():
    from meld8_app.web.session import LiveGame, PlayError

    with pytest.raises(PlayError, match="CHEATING diagnostic"):
        LiveGame([CHEAT, "greedy"], seat=0, seed=3)


def test_play_refuses_an_agent_that_raised_in_its_trial_game(here, capsys, no_server):
    """Seat 0 moves before the human at seat 1 (seed 3: seat 0 deals; without a seed the dealer is drawn and the
    human could move first): the base Agent's act_batch raises NotImplementedError there."""
    argv = ["play", "--agents", "meld8_env.agent:Agent,greedy", "--seat", "1", "--seed", "3", "--no-browser"]
    err = one_line_error([*argv, "--port", str(_free_port())], capsys)
    assert "agent 'meld8_env.agent:Agent' (seat 0) failed at its first decision" in err
    assert "its act_batch raised NotImplementedError" in err and no_server == []
    _untouched(here)


def test_a_bare_exception_is_named_with_the_call_that_raised_and_listed_in_failures():
    from meld8_app.web.session import LiveGame

    g = LiveGame(["meld8_env.agent:Agent", "greedy"], seat=1, seed=3)
    try:
        notes = g.take_notices()
        assert len(notes) == 1 and "NotImplementedError: ;" not in notes[0]  # the old words: an empty reason
        assert "seat 0 (meld8_env.agent:Agent) failed: its act_batch raised NotImplementedError; greedy" in notes[0]
        assert g.failures == [(0, "meld8_env.agent:Agent", "its act_batch raised NotImplementedError")]
    finally:
        g.close()
    ok = LiveGame(["greedy"], seat=1, seed=3)
    ok.close()
    assert ok.failures == []


class FloatAnswers:
    """Answers with float action ids (the first legal one + 0.0): a malformed answer, not a raise."""

    name = "floats"

    def act(self, obs, mask):
        return self.act_batch(obs[None], mask[None])[0]

    def act_batch(self, obs, masks):
        return np.asarray(masks).astype(bool).argmax(axis=1) + 0.0


def test_a_malformed_answer_fails_the_seat_like_a_raise(monkeypatch):
    """The table refuses a float answer (meld8_env.table.agent_actions); the browser table must treat that as the
    agent failing, fallback and notice, not stop mid-game (review, session 33: 'it is not your turn' for ever)."""
    import types

    from meld8_app.web.session import LiveGame

    monkeypatch.setitem(sys.modules, "floatagents", types.SimpleNamespace(FloatAnswers=FloatAnswers))
    g = LiveGame(["floatagents:FloatAnswers", "greedy"], seat=1, seed=3)
    try:
        (note,) = g.take_notices()
        assert "seat 0 (floatagents:FloatAnswers) failed: its act_batch raised ValueError: agent 'floats': " in note
        assert "got float64 values of shape (1,); greedy plays that seat from now on" in note
        assert g.state()["seq"] >= 0 and not g.over  # the game goes on, the fallback at seat 0
    finally:
        g.close()


def test_the_fallback_notice_reaches_the_terminal_too(capfd):
    """The page's message box clears at the next move; the terminal that started the server keeps the line."""
    pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
    from starlette.testclient import TestClient

    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    app = create_app("play", new_game=lambda: LiveGame(["meld8_env.agent:Agent", "greedy"], seat=1, seed=3), port=8008)
    with TestClient(app, base_url="http://127.0.0.1:8008").websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        assert ws.receive_json()["type"] == "state"
        note = ws.receive_json()
    assert note["notice"] and "act_batch raised NotImplementedError" in note["message"]
    assert f"meld8 play: {note['message']}\n" in capfd.readouterr().err


# -- finding 16: checkpoint paths that exist but are no checkpoint file --------------------------------
@pytest.mark.parametrize(
    "path, says",
    [
        ("", "the checkpoint is an empty path: give a checkpoint file (as an agent: ppo:PATH.zip, or plain ppo"),
        ("{tmp}", "{tmp} exists but is not a checkpoint file (a regular .zip file): it is a folder"),
        ("/dev/zero", "/dev/zero exists but is not a checkpoint file (a regular .zip file): it is a device"),
        ("{tmp}/missing.zip", "checkpoint not found: {tmp}/missing.zip"),
    ],
)
def test_a_checkpoint_path_says_what_it_is(path, says, tmp_path):
    from agents.checkpoint import CheckpointError, read_metadata

    path, says = path.replace("{tmp}", str(tmp_path)), says.replace("{tmp}", str(tmp_path))
    if path == "/dev/zero" and not sys.platform.startswith("linux"):
        pytest.skip("/dev/zero is a Linux device here")
    with pytest.raises(CheckpointError) as got:
        read_metadata(path)
    assert says in str(got.value)
    pytest.importorskip("sb3_contrib", reason="ppo: agents need the train extra")
    from agents.registry import AgentLoadError, load_agent

    with pytest.raises(AgentLoadError) as got:  # the agent spec ppo:PATH says the same
        load_agent(f"ppo:{path}")
    assert says in str(got.value)
    with pytest.raises(AgentLoadError) as got:  # and so does a trusted one (/dev/zero was read until memory ran out)
        load_agent(f"ppo:{path}", trust=True)
    assert says in str(got.value)


def test_a_trusted_checkpoint_keeps_sb3s_implied_zip_suffix(tmp_path):
    """SB3's loader adds ``.zip`` to a path without it; trusted ``ppo:PATH`` relied on that before the path check."""
    pytest.importorskip("sb3_contrib", reason="ppo: agents need the train extra")
    from agents.registry import load_agent, shipped_baseline

    (tmp_path / "net.zip").write_bytes(shipped_baseline().read_bytes())
    assert load_agent(f"ppo:{tmp_path / 'net'}", trust=True).path == str(tmp_path / "net.zip")


def test_a_training_runs_folder_given_as_a_checkpoint_names_the_checkpoints_in_it(tmp_path):
    """``ppo:RUN`` (a run's folder) said only "it is a folder" (a user, session 45): the run's best.zip and final.zip
    are named; a folder without them is said as before."""
    from agents.checkpoint import CheckpointError, checkpoint_file

    (tmp_path / "best.zip").write_bytes(b"PK")
    (tmp_path / "final.zip").write_bytes(b"PK")
    with pytest.raises(CheckpointError) as got:
        checkpoint_file(tmp_path)
    assert str(got.value).endswith(f"it is a folder; in it: {tmp_path / 'best.zip'} or {tmp_path / 'final.zip'}")
    (tmp_path / "best.zip").unlink()
    (tmp_path / "final.zip").unlink()
    with pytest.raises(CheckpointError) as got:
        checkpoint_file(tmp_path)
    assert str(got.value).endswith("it is a folder")


def test_a_trusted_zip_that_is_no_sb3_save_is_one_line(tmp_path, capsys):
    """Helper walkthrough, session 46: ``--trust-checkpoint`` with a zip holding only a text file ended in SB3's
    ``AssertionError: No data found in the saved file`` and its traceback; nothing is written either way."""
    import zipfile

    pytest.importorskip("sb3_contrib", reason="ppo: agents need the train extra")
    from meld8_app.cli import main

    path = tmp_path / "notckpt.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.txt", "hi")
    out = tmp_path / "t"
    argv = ["tournament", "--agents", f"ppo:{path},greedy,random", "--boards", "1", "--trust-checkpoint"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SB3 cannot load it as a MaskablePPO checkpoint (AssertionError: " in err, err
    assert not out.exists()
