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
    games = sent[1:-1]
    assert all(list(e)[0] == "game" and e["game"] == 0 for e in games)  # the game id comes first
    types = [e["type"] for e in games]
    assert types[0] == "game_start" and types[-1] == "game_end"
    for kind in ("hand_start", "draw", "discard", "request", "call", "win", "settlement"):
        assert kind in types, kind
    # every request is answered with one of its own legal ids, before the next event arrives
    requests = [e for e in games if e["type"] == "request"]
    assert len(requests) == len(answers) - 1
    for req, ans in zip(requests, answers[1:], strict=True):
        assert ans["action"] in {a["id"] for a in req["actions"]}
    # other seats' draws hide the card; ours show it
    draws = [e for e in games if e["type"] == "draw"]
    assert all(("card" in d) == (d["seat"] == 0) for d in draws)
