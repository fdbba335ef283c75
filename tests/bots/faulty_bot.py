"""A seat-protocol bot that misbehaves on purpose, for the fault tests (tests/test_external_bots.py).

Usage: python faulty_bot.py MODE [N] [--pidfile PATH]

It plays like examples/bots/python_bot.py until its N-th request (default 5), then, by MODE:
crash (exits 3), hang (sleeps forever), garbage (prints a line that is not JSON), illegal (answers an
illegal action id), unknown_game (answers a game id it was never given), slow (sleeps 1.5 s once,
then plays on), badname (answers an action name that does not exist), str_seq / bool_seq / null_seq (answers
with the seq as a string / as true / as null), silent_crash_at_start (exits before its hello), hello_nonewline
(writes its hello without the newline, then waits), oldproto (says hello with protocol 0), reverse (never
faults: answers each batch of requests in reverse order, to show answers may come in any order), ok (never faults).

Hostile lines (issue 22 §2), written instead of the N-th answer: deep (JSON nested 2,000 deep),
digits (an integer of 5,000 digits), long (a 100 kB line), nonewline (1 MB without a newline, then
waits), binary (bytes that are not UTF-8), escape (a line with terminal escape sequences).
chatty: from the N-th request on, never answers but repeats its previous answer (old seq) every 0.1 s
for 30 s. dupslow: never faults - answers every request, then sends that answer again just before
answering the next request (a late duplicate, told apart by its seq). helper: starts a helper process
(sleep) that writes its pid to the pidfile, then plays on. stderrflood: at the N-th request writes 3 MiB to
stderr, then plays on. setsid_helper: as helper, but the helper starts its own session (setsid), holding the bot's
stderr. exit_holding: as helper, then exits 0 at the N-th request while the helper holds its stdout.
Options: --pidfile PATH (appends the pid), --seenfile PATH (appends "pid seat" at each game_start),
--byefile PATH (appends the pid when bye arrives).
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
    files = {}
    for opt in ("--pidfile", "--seenfile", "--byefile"):
        if opt in args:
            i = args.index(opt)
            files[opt] = args[i + 1]
            del args[i : i + 2]

    def note(opt, text):
        if opt in files:
            with open(files[opt], "a") as f:
                f.write(text + "\n")

    note("--pidfile", str(os.getpid()))
    mode = args[0]
    n = int(args[1]) if len(args) > 1 else 5
    print(f"faulty_bot {mode} {n} pid {os.getpid()}", file=sys.stderr, flush=True)
    if mode == "silent_crash_at_start":
        sys.exit(4)
    if mode in ("helper", "setsid_helper", "exit_holding"):
        import subprocess

        # setsid_helper: the helper starts its own session, out of the process group meld8 kills, holding stderr open
        helper = subprocess.Popen(["sleep", "600"], start_new_session=mode == "setsid_helper")
        note("--pidfile", str(helper.pid))
    sys.stdin.buffer.readline()
    if mode == "hello_nonewline":
        # a raw ESC (shown escaped) and a byte that is no UTF-8 (shown as U+FFFD, not as a written backslash)
        sys.stdout.buffer.write(b'{"type": "hello", "protocol": 1, "name": "\x1b[2Jx\xff"}')
        sys.stdout.flush()
        time.sleep(n)  # then exits: 0, at once
        return
    print(json.dumps({"type": "hello", "protocol": 0 if mode == "oldproto" else 1}), flush=True)
    bot, asked, rest = python_bot.Bot(), 0, b""
    last = None  # the previous answer line (dupslow, chatty)
    out = sys.stdout.buffer
    while True:
        chunk = sys.stdin.buffer.read1(1 << 16)
        if not chunk:
            return
        *lines, rest = (rest + chunk).split(b"\n")
        answers = []
        for line in lines:
            ev = json.loads(line)
            if ev.get("type") == "bye":
                note("--byefile", str(os.getpid()))
                return
            if ev.get("type") == "game_start":
                note("--seenfile", f"{os.getpid()} {ev['seat']}")
            answer = bot.on_event(ev)
            if answer is None:
                continue
            answer["seq"] = ev["seq"]
            asked += 1
            if mode == "dupslow" and last is not None:
                answers.append(last)
            if mode == "chatty" and asked >= n and last is not None:
                end = time.monotonic() + 30
                while time.monotonic() < end:
                    out.write(last.encode() + b"\n")
                    out.flush()
                    time.sleep(0.1)
                return
            hostile = {
                "deep": "[" * 2000 + "]" * 2000,
                "digits": '{"game": 0, "action": ' + "9" * 5000 + "}",
                "long": '{"game": 0, "action": 1, "pad": "' + "x" * 100_000 + '"}',
                "escape": "\x1b[2J\x1b]0;pwned\x07 \u202e not an answer",
            }
            if asked == n and mode in hostile:
                answers.append(hostile[mode])
                continue
            if asked == n and mode == "binary":
                out.write(b"\xff\xfe\x00garbage\n")
                out.flush()
                continue
            if asked == n and mode == "stderrflood":
                for _ in range(3):  # 3 MiB past the test's 1 MiB log limit, then plays on
                    sys.stderr.write("x" * (1 << 20))
                sys.stderr.flush()
            if asked == n and mode == "nonewline":
                out.write(b"x" * 1_000_000)
                out.flush()
                time.sleep(3600)
            if asked == n:
                if mode == "crash":
                    print("faulty_bot: crashing on purpose", file=sys.stderr, flush=True)
                    os._exit(3)
                if mode == "hang":
                    time.sleep(3600)
                if mode == "exit_holding":  # exits 0; its helper (sleep) holds the stdout it inherited
                    os._exit(0)
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
                if mode == "float_game":  # the right game, as a float
                    answer["game"] = float(answer["game"])
                if mode == "str_seq":  # the right seq, as a string
                    answer["seq"] = str(answer["seq"])
                if mode == "bool_seq":  # true: an int in Python, not in JSON
                    answer["seq"] = True
                if mode == "null_seq":  # null: no integer, and no absent seq either
                    answer["seq"] = None
                if mode == "slow":
                    time.sleep(1.5)
            last = json.dumps(answer)
            answers.append(last)
        if mode == "reverse":
            answers.reverse()
        if answers:
            out.write(("\n".join(answers) + "\n").encode("utf-8", "surrogatepass"))
            out.flush()


if __name__ == "__main__":
    main()
