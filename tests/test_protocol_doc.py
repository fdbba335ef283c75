"""docs/protocol.md's annotated example game is what meld8 sends today (tools/protocol_example.py
writes it; this test re-plays it), and every line of it follows the documented format."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _example_lines() -> list[str]:
    text = (ROOT / "docs" / "protocol.md").read_text()
    body = text.split("<!-- example:begin -->")[1].split("<!-- example:end -->")[0]
    return [line for line in body.splitlines() if line.startswith(("> ", "< "))]


def _tool():
    spec = importlib.util.spec_from_file_location("protocol_example", ROOT / "tools" / "protocol_example.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_documented_game_is_what_meld8_sends():
    doc = _example_lines()
    assert len(doc) > 20
    assert doc == _tool().transcript(seed=2)


def test_the_documented_game_follows_the_documented_format():
    doc = _example_lines()
    sent = [json.loads(x[2:]) for x in doc if x.startswith("> ")]
    answers = [json.loads(x[2:]) for x in doc if x.startswith("< ")]
    assert sent[0]["type"] == "hello" and sent[0]["protocol"] == 1 and answers[0]["type"] == "hello"
    assert sent[-1] == {"type": "bye"}
    games = [e for e in sent[1:-1] if e["type"] != "waiting"]
    assert all(list(e)[0] == "game" and e["game"] == 0 for e in games)  # the game id comes first
    types = [e["type"] for e in games]
    assert types[0] == "game_start" and types[-1] == "game_end"
    for kind in ("hand_start", "draw", "discard", "request", "call", "win", "settlement"):
        assert kind in types, kind
    # every request is answered with one of its own legal ids, before the next event arrives
    requests = [e for e in games if e["type"] == "request"]
    assert len(requests) == len(answers) - 1
    for n, (req, ans) in enumerate(zip(requests, answers[1:], strict=True)):
        assert ans["action"] in {a["id"] for a in req["actions"]}
        assert req["seq"] == n and ans["seq"] == n  # numbered per game id, echoed
    # each request is followed by the waiting marker naming its game
    for k, e in enumerate(sent):
        if e.get("type") == "request":
            assert sent[k + 1] == {"type": "waiting", "games": [e["game"]]}
    # other seats' draws hide the card; ours show it
    draws = [e for e in games if e["type"] == "draw"]
    assert all(("card" in d) == (d["seat"] == 0) for d in draws)


def _section(name: str) -> str:
    text = (ROOT / "docs" / "protocol.md").read_text()
    return text.split(f"<!-- {name}:begin -->")[1].split(f"<!-- {name}:end -->")[0]


def test_the_action_table_is_the_engines():
    import re

    from meld8_env.actions import NUM_ACTIONS, action_name
    from meld8_env.cards import card_str

    rows = [r for r in _section("actions").splitlines() if r.startswith("| ") and not r.startswith("| ids")]
    covered = []
    for row in rows:
        ids, names = row.split(" | ")[0].strip("| "), row.split(" | ")[1]
        lo, hi = (int(x) for x in ids.split("-")) if "-" in ids else (int(ids), int(ids))
        covered += range(lo, hi + 1)
        if lo == 0:  # the discards: the rule the table states, for every card
            assert names.startswith("`discard <card>`")
            for a in range(lo, hi + 1):
                suit, rank = divmod(a, 13)
                assert action_name(a) == f"discard {card_str(a)}"
                assert card_str(a) == "A23456789TJQK"[rank] + "shdc"[suit]
        else:
            assert re.findall(r"`([^`]+)`", names) == [action_name(a) for a in range(lo, hi + 1)], row
    assert covered == list(range(NUM_ACTIONS))


def test_the_documented_bounds_and_faults_are_the_codes():
    from meld8_env.protocol import MAX_DEPTH, MAX_DIGITS, MAX_LINE
    from meld8_env.seat_process import BYE_GRACE, FAULT_KINDS, default_log_dir

    text = (ROOT / "docs" / "protocol.md").read_text()
    assert f"at most **{MAX_LINE} bytes**" in text
    assert f"nested at most **{MAX_DEPTH}** deep" in text and f"more than **{MAX_DIGITS}** digits" in text
    assert f"waits **{BYE_GRACE:g} seconds**" in text
    assert "meld8-bots-<uid>" in text and default_log_dir().name.startswith("meld8-bots-")
    faults = text.split("## Faults")[1]
    kinds = [r.split("|")[1].strip().strip("`") for r in faults.splitlines() if r.startswith("| `")]
    assert list(dict.fromkeys(kinds)) == list(FAULT_KINDS)
