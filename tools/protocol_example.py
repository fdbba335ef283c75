"""Write the example game of docs/protocol.md: one short game, seat 0's whole conversation.

Usage: python tools/protocol_example.py [--seed S] > transcript.jsonl

Every seat plays examples/bots/python_bot.py's policy; the rules are the defaults cut to one round
(``rounds: 1``) so the game is short but complete. Lines starting ``>`` are what meld8 sends seat 0,
``<`` what the bot answers. tests/test_protocol_doc.py re-plays the transcript embedded in the doc
and checks that meld8 still sends exactly those lines.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from meld8_env.protocol import GameStreams, encode, encode_body, encode_for, hello
from meld8_env.rules import RuleConfig

ROOT = Path(__file__).resolve().parents[1]
RULES = RuleConfig(rounds=1, min_yaku_han=(1,))


def bot_class():
    spec = importlib.util.spec_from_file_location("python_bot", ROOT / "examples" / "bots" / "python_bot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Bot


def transcript(seed: int, game: int = 0) -> list[str]:
    """Seat 0's conversation for the game seeded ``seed`` (``> `` sent, ``< `` received)."""
    Bot = bot_class()
    bots = [Bot() for _ in range(RULES.num_players)]
    g = GameStreams(RULES, seed=seed, game_id=game)
    greeting = json.dumps({"type": "hello", "protocol": 1, "name": "python_bot"}, separators=(",", ":"))
    lines = ["> " + hello(server="meld8", rules_hash=RULES.rules_hash).strip(), "< " + greeting]
    sent = [0] * RULES.num_players
    seq = [0] * RULES.num_players  # each game id numbers its requests (meld8_env.seat_process does the same)
    progressed = True
    while progressed:  # every bot reads what is new in its stream, one event at a time
        progressed = False
        for seat, bot in enumerate(bots):
            while sent[seat] < len(g.streams[seat]):
                ev = g.streams[seat][sent[seat]]
                sent[seat] += 1
                progressed = True
                body = {k: v for k, v in ev.items() if k != "game"}
                if body["type"] == "request":
                    body = {"type": "request", "seq": seq[seat], **body}
                    seq[seat] += 1
                if seat == 0:
                    lines.append("> " + encode_for(game, encode_body(body)).strip())
                    if body["type"] == "request":  # the round's requests are all out: meld8 waits for these games
                        lines.append("> " + encode({"type": "waiting", "games": [game]}).strip())
                answer = bot.on_event({**body, "game": game})
                if answer is not None:
                    if seat == 0:
                        lines.append("< " + encode(answer).strip())
                    g.step(answer["action"])
    lines.append("> " + encode({"type": "bye"}).strip())
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print("\n".join(transcript(args.seed)))


if __name__ == "__main__":
    main()
