"""A seat-protocol bot that misbehaves on purpose, for the fault tests (tests/test_external_bots.py).

Usage: python faulty_bot.py MODE [N] [--pidfile PATH]

It plays like examples/bots/python_bot.py until its N-th request (default 5), then, by MODE:
crash (exits 3), hang (sleeps forever), garbage (prints a line that is not JSON), illegal (answers an
illegal action id), unknown_game (answers a game id it was never given), slow (sleeps 1.5 s once,
then plays on), badname (answers an action name that does not exist), silent_crash_at_start (exits before
its hello), oldproto (says hello with protocol 0), reverse (never faults: answers each batch of
requests in reverse order, to show answers may come in any order), ok (never faults).
"""

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "python_bot", Path(__file__).resolve().parents[2] / "examples" / "bots" / "python_bot.py"
)
python_bot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(python_bot)


def main():
    args = sys.argv[1:]
    if "--pidfile" in args:
        i = args.index("--pidfile")
        with open(args[i + 1], "a") as f:
            f.write(f"{os.getpid()}\n")
        del args[i : i + 2]
    mode = args[0]
    n = int(args[1]) if len(args) > 1 else 5
    print(f"faulty_bot {mode} {n} pid {os.getpid()}", file=sys.stderr, flush=True)
    if mode == "silent_crash_at_start":
        sys.exit(4)
    sys.stdin.buffer.readline()
    print(json.dumps({"type": "hello", "protocol": 0 if mode == "oldproto" else 1}), flush=True)
    bot, asked, rest = python_bot.Bot(), 0, b""
    while True:
        chunk = sys.stdin.buffer.read1(1 << 16)
        if not chunk:
            return
        *lines, rest = (rest + chunk).split(b"\n")
        answers = []
        for line in lines:
            ev = json.loads(line)
            if ev.get("type") == "bye":
                return
            answer = bot.on_event(ev)
            if answer is None:
                continue
            asked += 1
            if asked == n:
                if mode == "crash":
                    print("faulty_bot: crashing on purpose", file=sys.stderr, flush=True)
                    os._exit(3)
                if mode == "hang":
                    time.sleep(3600)
                if mode == "garbage":
                    answers.append("this is not json")
                    continue
                if mode == "illegal":
                    legal = {a["id"] for a in ev["actions"]}
                    answer["action"] = next(a for a in range(64) if a not in legal)
                if mode == "badname":
                    answer["action"] = "discard the joker"
                if mode == "unknown_game":
                    answer["game"] = 10**9
                if mode == "slow":
                    time.sleep(1.5)
            answers.append(json.dumps(answer))
        if mode == "reverse":
            answers.reverse()
        if answers:
            sys.stdout.write("\n".join(answers) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
