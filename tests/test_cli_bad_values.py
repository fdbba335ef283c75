"""Every subcommand, every option, bad values of its type: one line on stderr, exit 2, no traceback
(hardening). A new option fails ``test_every_option_is_walked`` until it has bad values here."""

from __future__ import annotations

import json
import sys

import pytest
from cli_kit import one_line_error

from meld8_app.cli import build_parser

HAND = "2s 3s 4s 6h 7h 8h 9d 9c"
BASE = {
    "score": [HAND, "--win", "8h"],
    "waits": ["2s 3s 4s 6h 7h 8h 9d"],
    "distance": ["2s 5h 9d Kc Qh 3c 7s"],
    "simulate": ["--games", "2"],
    "tournament": ["--agents", "random,random,random", "--boards", "1"],
    "train": [],
    "replay": ["{DIR}/good.json"],
    "play": ["--no-browser"],
    "view": ["{DIR}/good.json", "--no-browser"],
    "review": ["{DIR}/good.json", "--seat", "0"],
}
INTS = ["abc", "1.5", "-1", "99999999999999999999999"]
FILES = ["/nonexistent/x.yaml", "{DIR}/bad.yaml", "{DIR}/list.yaml"]
CARDS = ["ZZ", "2s 2s", "", "2h 7d Kc"]  # the last: three cards that are no Pon or Chii
BAD = {
    ("score", "cards"): ["ZZ", "2s 3s", "2s 3s 4s 6h 7h 8h 9d 9c 9h JK"],
    ("score", "--win"): ["ZZ", "Ks"],
    ("score", "--round"): INTS + ["0", "7"],
    ("score", "--meld"): CARDS + ["JK 2s 3s"],
    ("score", "--dora-indicator"): ["ZZ", "2s 3s"],
    ("score", "--discards"): ["ZZ"],
    ("score", "--rules"): FILES + ["no_such_rules"],
    ("waits", "cards"): CARDS + ["2s 3s"],
    ("waits", "--meld"): CARDS,
    ("distance", "cards"): CARDS + ["2s 3s 4s"],
    ("distance", "--meld"): CARDS,
    ("distance", "--seen"): ["ZZ"],
    ("simulate", "--games"): INTS + ["0"],
    ("simulate", "--seed"): INTS + ["18446744073709551616"],
    ("simulate", "--batch"): INTS + ["0"],
    ("simulate", "--rules"): FILES,
    ("tournament", "--agents"): ["wizard,random,random", "random", ",,,", "cmd", "cmd:,random,random",
                                 "cmd:no-such-program-meld8,random,random",
                                 f"cmd:{sys.executable} -c pass,random,random"],
    ("tournament", "--bot-timeout"): ["abc", "0", "-1", "nan", "inf"],
    ("tournament", "--bot-log-dir"): ["/proc/meld8-not-writable"],
    ("tournament", "--boards"): INTS + ["0"],
    ("tournament", "--seed"): INTS + ["18446744073709551616"],
    ("tournament", "--workers"): INTS + ["0"],
    ("tournament", "--backend"): ["gpu"],
    ("tournament", "--out"): ["/proc/meld8-not-writable", "{DIR}/bad.yaml"],  # the last: a file, not a folder
    ("tournament", "--rules"): FILES,
    ("tournament", "--config"): FILES + ["{DIR}/agents42.yaml", "{DIR}/boards_list.yaml"],
    ("train", "config"): FILES,
    ("train", "--backend"): ["gpu", "tf"],
    ("train", "--address"): ["nowhere", "http://x", ""],
    ("train", "--set"): ["total_timesteps=[1", "nonsense", "total_timesteps=abc", "opponents=42", "wizard=1",
                         "progress=off"],  # off is the word, as in a config file (YAML 1.1 read False)
    ("replay", "file"): ["/nonexistent.json", "{DIR}/bad.yaml", "{DIR}/replay_null_seed.json",
                         "{DIR}/replay_float_actions.json"],
    ("replay", "--game"): INTS + ["0"],
    ("play", "--agents"): ["wizard", "greedy,greedy,greedy", ",,"],
    ("play", "--seat"): INTS + ["3"],
    ("play", "--rules"): FILES,
    ("play", "--seed"): INTS + ["18446744073709551616"],
    ("play", "--replays"): ["/proc/meld8-not-writable"],
    ("play", "--host"): ["256.1.1.1", "example.com", "", "0.0.0.0", "::"],  # every address: refused (s. 46)
    ("play", "--port"): INTS + ["0", "65536"],
    ("play", "--limit-concurrency"): INTS + ["0", "7", "65536"],
    ("view", "file"): ["/nonexistent.json", "{DIR}/bad.yaml", "{DIR}/replay_null_seed.json"],
    ("view", "--game"): INTS,
    ("view", "--host"): ["256.1.1.1", "0.0.0.0"],
    ("view", "--port"): INTS + ["0"],
    ("view", "--limit-concurrency"): INTS + ["0", "7", "65536"],
    ("review", "file"): ["/nonexistent.json", "{DIR}/bad.yaml"],
    ("review", "--seat"): INTS + ["3"],
    ("review", "--game"): INTS,
    ("review", "--agent"): ["wizard", "ppo:/nonexistent.zip", f"cmd:{sys.executable} -c pass"],
    ("review", "--threshold"): ["abc", "-0.5", "2", "nan"],
    ("review", "--host"): ["256.1.1.1"],
    ("review", "--port"): INTS + ["0"],
    ("review", "--limit-concurrency"): INTS + ["0", "7", "65536"],
}  # fmt: skip


def _options():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, type(parser._subparsers._group_actions[0])))
    for name, sp in sub.choices.items():
        for a in sp._actions:
            if a.dest == "help" or a.nargs == 0 or (a.option_strings and a.choices is not None and a.dest != "backend"):
                continue
            yield name, a.option_strings[0] if a.option_strings else a.dest


def test_every_option_is_walked():
    missing = [o for o in _options() if o not in BAD]
    assert missing == []


@pytest.fixture
def files(tmp_path):
    (tmp_path / "bad.yaml").write_text("key: [unclosed\n")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    (tmp_path / "agents42.yaml").write_text("agents: 42\n")
    (tmp_path / "boards_list.yaml").write_text("agents: [random, random, random]\ndeals: [1, 2]\n")
    good = {"format": "meld8-replay", "version": "0", "rules": {}, "rules_hash": "x", "seed": None, "actions": [],
            "result": {}, "checksum": "x"}  # fmt: skip
    (tmp_path / "replay_null_seed.json").write_text(json.dumps(good))
    (tmp_path / "replay_float_actions.json").write_text(json.dumps({**good, "seed": 1, "actions": [1.5]}))
    from meld8_env.protocol import GameStreams
    from meld8_env.replay import save_replay
    from meld8_env.rules import RuleConfig

    rules = RuleConfig(max_replays=1)
    g = GameStreams(rules, seed=1)
    while (p := g.pending()) is not None:
        g.step(p[1]["actions"][0]["id"])
    save_replay(tmp_path / "good.json", rules, 1, g.answers)
    return tmp_path


CASES = [(cmd, opt, bad) for (cmd, opt), values in BAD.items() for bad in values]


@pytest.mark.parametrize("cmd, opt, bad", CASES, ids=[f"{c}-{o}-{b!r}" for c, o, b in CASES])
def test_bad_value_is_one_line_exit_2(cmd, opt, bad, files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    bad = bad.replace("{DIR}", str(files))
    argv = [cmd, *(a.replace("{DIR}", str(files)) for a in BASE[cmd])]
    if opt.startswith("--"):
        argv += [opt, bad]
    elif cmd in ("score", "waits", "distance", "view", "review", "replay"):
        argv[1] = bad
    else:  # train's config / replay's file
        argv.insert(1, bad)
    if cmd == "train" and opt == "--set":
        (files / "t.yaml").write_text("total_timesteps: 10\n")
        argv = ["train", str(files / "t.yaml"), "--set", bad]
    if cmd == "tournament" and opt == "--config":  # the config's own values, not the base ones
        argv = ["tournament", "--config", bad]
    if cmd == "tournament":
        argv += ["--out", str(files / "out")] if opt != "--out" else []
    if opt == "--bot-log-dir":  # only a cmd: agent writes a log
        argv[2] = f"cmd:{sys.executable} -c pass,random,random"
    err = one_line_error(argv, capsys)
    # nothing is written before every check has passed (red team: play made replays/ before checking its agents),
    # but the stderr log of a bot that started and then failed, which the error names
    written = [p for p in (files / "replays", files / "out") if p.exists()]
    if "(its stderr: " in err:
        assert [p.name for p in (files / "out").iterdir()] == ["bots"] and str(files / "out" / "bots") in err
        written.remove(files / "out")
    assert written == [], f"{argv} wrote {written} before failing"
