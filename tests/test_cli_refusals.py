"""The command line refuses what it would otherwise ignore, misread or overwrite (red team, session 37): options
given twice, bot options with no bot, null or mixed-type config keys, folders holding another run's outputs, a resume
with nothing to resume, agent specs with empty parts, a crashing user agent, and a log without its header."""

from __future__ import annotations

import json

import pytest

from meld8_app.cli import main

FAST = ["--agents", "random,random,greedy", "--boards", "1"]


def err_of(capsys, argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals (meld8_app.cli.OneLineParser) exit
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "error:" in line]  # a progress bar may share stderr
    assert len(said) == 1 and "Traceback" not in err
    return said[0]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["tournament", *FAST, "--deals", "2"], "--deals repeats --boards (another name of it): give it once"),
        (["tournament", *FAST, "--agents", "random,random,random"], "--agents given twice: give it once"),
        (["score", "2s 3s 4s 6h 7h 8h 9d 9c", "--win", "9c", "--win", "2s"], "--win given twice"),
    ],
)
def test_an_option_given_twice_is_refused(capsys, tmp_path, argv, says):
    assert says in err_of(capsys, [*argv, *(["--out", str(tmp_path / "o")] if argv[0] == "tournament" else [])])
    assert not (tmp_path / "o").exists()


def test_bot_options_without_a_bot_are_refused(capsys, tmp_path):
    for extra in (["--bot-timeout", "3"], ["--fallback", "random"], ["--bot-log-dir", str(tmp_path / "b")]):
        err = err_of(capsys, ["tournament", *FAST, "--out", str(tmp_path / "o"), *extra])
        assert f"{extra[0]} applies to cmd: bots, and no cmd: agent is seated" in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "text, says",
    [
        ("agents: [random, random, random]\nboards: 1\nworkers: null\n", "workers must be an integer 1..1,024"),
        ("agents: [random, random, random]\nboards: null\n", "boards must be an integer 1.."),
        ("agents: [random, random, random]\n1: 1\nfoo: 2\n", "unknown key 1; known keys: agents"),
    ],
)
def test_tournament_config_values_are_checked_before_the_folder(capsys, tmp_path, text, says):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(text + f"out: {tmp_path / 'o'}\n")
    assert says in err_of(capsys, ["tournament", "--config", str(cfg)])
    assert not (tmp_path / "o").exists()


def test_rules_with_mixed_unknown_keys_name_the_file_and_a_key(capsys, tmp_path):
    rules = tmp_path / "r.yaml"
    rules.write_text("1: 2\nfoo: 3\n")
    assert f"{rules}: unknown rule option 1; known options:" in err_of(capsys, ["simulate", "--rules", str(rules)])


def test_a_tournament_never_overwrites_another_runs_outputs(capsys, tmp_path):
    out = tmp_path / "o"
    assert main(["tournament", *FAST, "--out", str(out)]) == 0
    capsys.readouterr()
    results = (out / "results.json").read_bytes()
    (out / "games.jsonl").rename(tmp_path / "kept.jsonl")  # e.g. gzipped away, as docs/search_runs keeps logs
    err = err_of(capsys, ["tournament", "--agents", "random,random,random", "--boards", "1", "--out", str(out)])
    assert "holds another tournament's results.json, games.csv, chart.png without its games.jsonl" in err
    assert (out / "results.json").read_bytes() == results
    err = err_of(capsys, ["tournament", *FAST, "--out", str(out), "--resume"])
    assert f"--resume: {out} holds no games.jsonl to continue; drop --resume" in err
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"backend": "sb3"}))
    assert "holds a training run" in err_of(capsys, ["tournament", *FAST, "--out", str(run)])
    assert sorted(p.name for p in run.iterdir()) == ["run.json"]


def test_a_resume_typo_starts_nothing(capsys, tmp_path):
    err = err_of(capsys, ["tournament", *FAST, "--out", str(tmp_path / "typo"), "--resume"])
    assert "holds no games.jsonl to continue" in err and not (tmp_path / "typo").exists()


@pytest.mark.parametrize(
    "spec, says",
    [
        ("search:", "agent 'search:': nothing after ':': give search or search:key=value"),
        ("search:worlds=1+", "an empty option (a stray ',' or '+')"),
        ("search:worlds=1000000000", "give an integer of at most 9 digits"),
        ("greedy:x=1", "agent 'greedy:x=1': greedy takes no options; give greedy"),
        ("distilled:x", "agent 'distilled:x': distilled is a shipped checkpoint and takes no options; give distilled"),
    ],
)
def test_agent_specs_with_empty_or_impossible_options_are_refused(capsys, tmp_path, spec, says):
    err = err_of(capsys, ["tournament", "--agents", f"{spec},random,random", "--boards", "1", "--out", str(tmp_path)])
    assert says in err


def test_a_checkpoint_path_with_a_comma_is_named_not_counted_as_two_agents(capsys, tmp_path):
    """Red team, session 44: the tournament said "give one agent per seat: 3 agents, got 4" and play "checkpoint not
    found: .../a"; a YAML list in --config takes such a path (nothing splits it)."""
    (tmp_path / "a,b.zip").write_bytes(b"PK")
    path = f"ppo:{tmp_path}/a,b.zip"
    err = err_of(capsys, ["tournament", "--agents", f"{path},defensive,greedy", "--boards", "1", "--out",
                          str(tmp_path / "o")])  # fmt: skip
    assert f"--agents: {path!r} is one agent whose path contains ','" in err
    assert "a path in an agent list cannot contain ',', and quoting does not help; rename or move the file, or list " \
           "the agents in --config (agents: [...], a YAML list, takes any path)" in err  # fmt: skip
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"agents: '{path},defensive,greedy'\nout: {tmp_path / 'o'}\n")
    err = err_of(capsys, ["tournament", "--config", str(cfg)])
    assert f"'agents' in {cfg}: {path!r} is one agent whose path contains ','" in err
    err = err_of(capsys, ["play", "--agents", path, "--replays", str(tmp_path / "r"), "--no-browser"])
    assert f"--agents: {path!r} is one agent whose path contains ','" in err and "rename or move the file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a,b.zip", "t.yaml"]  # nothing written


def test_a_search_option_after_a_comma_in_an_agent_list_is_named_with_the_plus_form(capsys, tmp_path):
    """A user wrote the spec as the agent docs show it (search:worlds=8,cands=2) inside --agents: "give one agent per
    seat: 3 agents, got 4" did not say that ',' had cut the spec, nor what to write instead."""
    err = err_of(capsys, ["tournament", "--agents", "search:worlds=8,cands=2,greedy,random", "--boards", "1",
                          "--out", str(tmp_path / "o")])  # fmt: skip
    assert "--agents: 'cands=2' looks like an option of the agent before it ('search:worlds=8')" in err
    assert "join an agent's options with '+' ('search:worlds=8+cands=2')" in err
    assert not (tmp_path / "o").exists()
    from meld8_env.agent_spec import split_agents

    assert split_agents("search:worlds=8+cands=2,greedy,wary:lam=10") == ["search:worlds=8+cands=2", "greedy",
                                                                          "wary:lam=10"]  # fmt: skip
    # only an agent that takes options in its spec gets the advice: a bot's arguments and a path are no options
    assert split_agents("cmd:python bot.py --level=3,depth=2,greedy") == ["cmd:python bot.py --level=3", "depth=2",
                                                                         "greedy"]  # fmt: skip
    assert split_agents("ppo:runs/lr=3e-4/best.zip,lr=1e-3.zip") == ["ppo:runs/lr=3e-4/best.zip", "lr=1e-3.zip"]


BOOM = """
class Boom:
    name = "boom"

    def act(self, obs, mask):
        raise RuntimeError("boom at first decision")

    def act_batch(self, obs, masks):
        raise RuntimeError("boom at first decision")
"""


def test_a_user_agent_that_raises_ends_in_one_line_naming_it(capsys, tmp_path, monkeypatch):
    (tmp_path / "boom_agent.py").write_text(BOOM)
    monkeypatch.syspath_prepend(str(tmp_path))
    err = err_of(capsys, ["tournament", "--agents", "boom_agent:Boom,random,random", "--boards", "1",
                          "--out", str(tmp_path / "o")])  # fmt: skip
    assert "agent 'boom' failed at a decision: RuntimeError: boom at first decision" in err


def test_a_tournament_that_fails_before_any_board_leaves_a_log_a_plain_rerun_starts(capsys, tmp_path, monkeypatch):
    """The header goes in with the first board: a header-only log made the rerun ask for --resume (session 37)."""
    (tmp_path / "boom_agent.py").write_text(BOOM)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "o"
    err = err_of(capsys, ["tournament", "--agents", "boom_agent:Boom,random,random", "--boards", "1",
                          "--out", str(out)])  # fmt: skip
    assert "failed at a decision" in err
    assert (out / "games.jsonl").read_text() == ""
    for cmd in (["view"], ["replay"]):  # an empty log is named so (it was "a single replay")
        err = err_of(capsys, [*cmd, str(out / "games.jsonl"), "--game", "0"])
        assert "games.jsonl is empty: no game to show (a tournament log before its first board" in err
    assert main(["tournament", *FAST, "--out", str(out)]) == 0
    lines = (out / "games.jsonl").read_text().splitlines()
    assert '"type": "header"' in lines[0] or '"type":"header"' in lines[0]
    assert len(lines) > 1


def test_trust_checkpoint_without_a_checkpoint_file_seated_is_refused(capsys, tmp_path):
    err = err_of(capsys, ["tournament", *FAST, "--trust-checkpoint", "--out", str(tmp_path / "o")])
    assert "--trust-checkpoint applies to checkpoint files (ppo:PATH.zip), and none is seated; leave it out" in err
    assert not (tmp_path / "o").exists()


def test_a_log_without_its_header_is_named_so(capsys, tmp_path):
    out = tmp_path / "o"
    assert main(["tournament", *FAST, "--out", str(out)]) == 0
    capsys.readouterr()
    lines = (out / "games.jsonl").read_text().splitlines()
    headless = tmp_path / "headless.jsonl"
    headless.write_text("\n".join(lines[1:]) + "\n")
    for extra in ([], ["--game", "0"]):
        err = err_of(capsys, ["replay", str(headless), *extra])
        assert "line 1 is a tournament board, not the log's header (it is missing or damaged)" in err


def test_play_seeds_wrap_past_the_largest_seed():
    from itertools import islice

    from meld8_app.cli.play import given_seeds
    from meld8_env.engine.seeding import MAX_SEED

    assert list(islice(given_seeds(MAX_SEED - 1), 4)) == [MAX_SEED - 1, MAX_SEED, 0, 1]
    assert list(islice(given_seeds(5), 2)) == [5, 6]


def test_review_refuses_server_options_it_would_ignore(capsys, tmp_path):
    out = tmp_path / "o"
    assert main(["tournament", *FAST, "--out", str(out)]) == 0
    capsys.readouterr()
    log = str(out / "games.jsonl")
    for mode in ("--json", "--text"):
        for extra in (["--port", "99999"], ["--host", "not a host"], ["--limit-concurrency", "8"]):
            err = err_of(capsys, ["review", log, "--game", "0", "--seat", "0", mode, *extra])
            assert f"{extra[0]} sets the browser page, which {mode} replaces" in err
    assert main(["review", log, "--game", "0", "--seat", "0", "--json"]) == 0


def test_the_ray_backend_without_ray_is_refused_before_the_folder_is_made(capsys, tmp_path, monkeypatch):
    """Without the ray extra the run drew its progress bars, then failed, leaving an empty games.jsonl and its lock
    (a user, session 45). Ray's absence is what Python sees when the module cannot be imported."""
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as it does where Ray is not installed
    out = tmp_path / "o"
    err = err_of(capsys, ["tournament", "--agents", "greedy,defensive,random", "--boards", "2", "--backend", "ray",
                          "--out", str(out)])  # fmt: skip
    assert "--backend ray needs Ray: pip install 'meld8[ray]'" in err and "board" not in err
    assert not out.exists()
