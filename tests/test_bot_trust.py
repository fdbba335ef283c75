"""One line from a bot never stops a game (issue 22 §2): lines are bounded before parsing and every
parse failure is a fault of that bot; no process sees two seats of one game; only an accepted answer
restarts the clock; a late duplicate answer is told from the next one by its ``seq``; a bot's helper
processes end with it; bot text is escaped; the default bot-log folder is the user's own.

Real bot processes (tests/bots/faulty_bot.py) play real games through ``training.arena.play``."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from process_kit import gone

from agents.registry import load_agent
from meld8_env.protocol import (
    JSON_NULL,
    MAX_DEPTH,
    MAX_DIGITS,
    MAX_LINE,
    ProtocolError,
    decode_answer,
    decode_hello,
)
from meld8_env.rules import RuleConfig
from meld8_env.seat_process import BotOptions, BotStartError, ExternalAgent, default_log_dir, printable, slug
from training.arena import play

ROOT = Path(__file__).resolve().parents[1]
FAULTY = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'faulty_bot.py'}"
RULES = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)
GREEDY = load_agent("greedy", RULES)  # the fallback handed to bots built directly


def _bot(mode: str, *extra: str, n: int = 3, tmp_path: Path, **opts) -> ExternalAgent:
    options = BotOptions(log_dir=str(tmp_path / "logs"), **opts)
    return ExternalAgent(" ".join([FAULTY, mode, str(n), *extra]), RULES, options=options, fallback=GREEDY)


def _play(bot, seats, games: int = 3, batch: int = 3):
    others = [load_agent("greedy", RULES), load_agent("random", RULES)]
    recs = play([bot, *others], np.array([seats] * games), list(range(1, games + 1)), RULES, batch=batch)
    assert all(sorted(r.placements) == [1, 2, 3] for r in recs)  # every game finished, the faulted seat played on
    return recs


def _one_game_faults(bot) -> list[dict]:
    """The faults of one game with ``bot`` in seat 0 (it is closed after, whatever happens)."""
    try:
        recs = _play(bot, [0, 1, 2], games=1, batch=1)
    finally:
        bot.close()
    return [f for r in recs for f in r.faults]


# -- bounded lines --------------------------------------------------------------------------------
HOSTILE = [
    b"[" * 2000 + b"]" * 2000,  # json.loads: RecursionError
    b'{"game": 0, "action": ' + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1) + b"}",
    b'{"game": 0, "action": ' + b"9" * 5000 + b"}",  # json.loads: ValueError (int digit limit)
    b'{"game": 0, "action": ' + b"1" * (MAX_DIGITS + 1) + b"}",
    b'{"game": 0, "action": 1, "pad": "' + b"x" * MAX_LINE + b'"}',
    b"\xff\xfe\x00",
    b"",
    b"null",
    b'["game", "action"]',
    b'{"game": 0}',
    b'{"game": 0, "action": 1',
    # json.loads(bytes) would read UTF-16/32 and a UTF-8 BOM; the protocol is UTF-8 (docs/protocol.md), and the
    # bounds count UTF-8 bytes (a UTF-16 character can hold a quote byte that hides brackets from them)
    '{"game": 0, "action": 1}'.encode("utf-16"),
    '{"game": 0, "action": 1}'.encode("utf-16-le"),
    '{"game": 0, "action": 1}'.encode("utf-32"),
    ('{"game": 0, "action": 1, "x": "\u2200", "y": ' + "[" * 900 + "]" * 900 + "}").encode("utf-16-le"),
    b"\xef\xbb\xbf" + b'{"game": 0, "action": 1}',
    # a key given twice: json kept the last, so this was played as action 1 (red team, session 36)
    b'{"game": 0, "action": 999, "action": 1}',
    b'{"type": "hello", "protocol": 0, "protocol": 1}',
    # numbers Python's reader takes and JSON does not: they were answered "got nan" / "got inf" (session 46)
    b'{"game": 0, "action": NaN}',
    b'{"game": 0, "action": 1e400}',
    b'{"game": -Infinity, "action": 1}',
    b'{"type": "hello", "protocol": 1, "x": Infinity}',
]


@pytest.mark.parametrize("line", HOSTILE, ids=range(len(HOSTILE)))
def test_every_unreadable_line_is_a_garbage_protocol_error(line):
    with pytest.raises(ProtocolError) as err:
        decode_answer(line)
    assert err.value.kind == "garbage"
    with pytest.raises(ProtocolError):
        decode_hello(line)


@pytest.mark.parametrize(
    ("number", "said"),
    [("NaN", "NaN is not a JSON number"), ("-Infinity", "-Infinity is not a JSON number"),
     ("1e400", "the number 1e400 is beyond a float's range"), ("-2.5e999", "the number -2.5e999 is beyond")],
)  # fmt: skip
def test_a_number_json_does_not_allow_is_named_in_the_garbage_fault(number, said):
    with pytest.raises(ProtocolError, match=said) as err:
        decode_answer(f'{{"game": 0, "action": {number}}}')
    assert err.value.kind == "garbage"
    assert decode_answer('{"game": 0, "action": 2.5e3}')[1] == 2500.0  # a finite float reads as before


def test_the_bounds_skip_json_strings_as_a_regex_over_whole_strings_did():
    """``check_line`` counts brackets and digits outside JSON strings in one pass (``_outside_strings``). Its
    oracle is the regex it replaced (strings that close become ``""``; an unclosed one is left in), which rescanned
    the rest of the line from every quote of a string that never closed: quadratic, 50 ms per 4 KB line on the web
    table's event loop (red team, session 33). Where the string never closes the two may differ, and then the line
    is no JSON: it must still fail as garbage."""
    import random
    import re

    from meld8_env.protocol import _outside_strings, loads_bounded

    strings, digits = re.compile(rb'"(?:[^"\\]|\\.)*"'), re.compile(rb"[0-9]+")

    def oracle(raw: bytes) -> tuple[int, int]:
        bare = strings.sub(b'""', raw)
        depth = deepest = 0
        for ch in bare:
            depth += (ch in b"[{") - (ch in b"]}")
            deepest = max(deepest, depth)
        return deepest, max((len(m) for m in digits.findall(bare)), default=0)

    rng = random.Random(33)
    closed = 0
    for _ in range(20_000):
        raw = bytes(rng.choice(b'[]{}"\\0123456789a ,:') for _ in range(rng.randrange(1, 40)))
        if b'"' not in strings.sub(b"", raw):  # every string closes
            closed += 1
            assert _outside_strings(raw) == oracle(raw), raw
    assert closed > 5_000
    evil = b"{" * 9 + b'"' + b'\\"' * 2043  # 4 KB, a string that never closes behind 9 brackets
    with pytest.raises(ProtocolError, match="nested 9 deep"):
        loads_bounded(evil)
    with pytest.raises(ProtocolError, match="not JSON"):
        loads_bounded(b'{"a": "' + b"[" * 20 + b'\\"' * 100)  # brackets inside the unclosed string: no JSON


@pytest.mark.parametrize("version", ["true", "1.0", '"1"', "0", "2"])
def test_a_hello_speaks_exactly_the_integer_protocol_version(version):
    # red team: true and 1.0 were accepted (they equal 1 in Python)
    with pytest.raises(ProtocolError, match=f"speaks protocol {version}"):
        decode_hello(f'{{"type": "hello", "protocol": {version}}}')
    assert decode_hello('{"type": "hello", "protocol": 1}')["protocol"] == 1


def test_bounds_keep_what_a_bot_may_really_say():
    assert decode_answer(b'{"game": 12, "action": "discard 7h", "seq": 3}') == (12, "discard 7h", 3)
    assert decode_answer(b'{"game": 1, "action": 2}')[2] is None  # seq left out: allowed
    assert decode_answer(b'{"game": 1, "action": 2, "seq": null}')[2] is JSON_NULL  # null: no integer, refused
    assert decode_answer('{"game": 1, "action": 63, "note": "[{\\"deep\\": [[[[[[[[[[]]]]]]]]]]}"}')[:2] == (1, 63)
    assert decode_answer(b'{"game": 1, "action": 9, "x": "' + b"9" * 100 + b'"}')[1] == 9  # digits in a string


def test_random_mutations_of_answers_never_raise_anything_but_protocol_errors():
    rng = random.Random(7)
    base = [b'{"game": 3, "action": 10, "seq": 4}', b'{"type": "hello", "protocol": 1, "name": "x"}']
    alphabet = b'[]{}",:0123456789 \\ex\xff\n'
    tried = 0
    for _ in range(3000):
        line = bytearray(rng.choice(base))
        for _ in range(rng.randint(1, 8)):
            op, at = rng.randrange(3), rng.randrange(len(line) + 1)
            if op == 0:
                line[at:at] = bytes([rng.choice(alphabet)]) * rng.choice([1, 1, 5, 50, 3000])
            elif op == 1 and line:
                del line[at : at + rng.randint(1, 4)]
            else:
                line[at:at] = rng.choice([b"[" * 40, b"9" * 40, b'"\\u0000"'])
        tried += 1
        try:
            decode_answer(bytes(line))
        except ProtocolError as exc:
            assert exc.kind == "garbage"
    assert tried == 3000


@pytest.mark.parametrize("mode", ["deep", "digits", "long", "nonewline", "binary"])
def test_a_hostile_line_is_a_garbage_fault_and_the_games_finish(tmp_path, mode):
    bot = _bot(mode, tmp_path=tmp_path)
    try:
        recs = _play(bot, [0, 1, 2])
    finally:
        bot.close()
    kinds = {f["kind"] for r in recs for f in r.faults}
    assert kinds == {"garbage"}, kinds
    line = next(f["line"] for r in recs for f in r.faults)
    assert len(line) <= 300  # the record keeps a bounded excerpt


# -- one process per seat -------------------------------------------------------------------------
def test_no_process_ever_sees_two_seats_of_one_game(tmp_path):
    seen = tmp_path / "seen"
    bot = _bot("ok", "--seenfile", str(seen), tmp_path=tmp_path)
    try:
        # the agent fills two seats of every game (cmd:X,cmd:X,greedy seats copies of one spec so), in each order
        others = [load_agent("greedy", RULES)]
        seats = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]] * 2)
        recs = play([bot, *others], seats, list(range(6)), RULES, batch=6)
        assert not any(r.faults for r in recs)
    finally:
        bot.close()
    by_pid: dict[int, set[int]] = {}
    for row in seen.read_text().split("\n")[:-1]:
        pid, seat = map(int, row.split())
        by_pid.setdefault(pid, set()).add(seat)
    assert sum(len(s) for s in by_pid.values()) == 3 and len(by_pid) == 3  # seats 0, 1, 2: three processes
    assert all(len(s) == 1 for s in by_pid.values()), by_pid  # each process plays one seat number only


def test_copies_of_one_bot_in_a_tournament_get_separate_processes(tmp_path):
    from training.tournament import TournamentConfig, run

    seen = tmp_path / "seen"
    spec = f"cmd:{FAULTY} ok 1 --seenfile {seen}"
    run(TournamentConfig(agents=[spec, spec, "greedy"], boards=1, out=str(tmp_path / "t"), progress=False,
                         chart=False, rules=RULES))  # fmt: skip
    seen_by: dict[int, list[int]] = {}
    for row in seen.read_text().split("\n")[:-1]:
        pid, seat = map(int, row.split())
        seen_by.setdefault(pid, []).append(seat)
    assert all(len(set(s)) == 1 for s in seen_by.values()), seen_by


# -- the clock and the sequence numbers -----------------------------------------------------------
def test_ignored_lines_do_not_restart_the_clock(tmp_path):
    bot = _bot("chatty", n=2, tmp_path=tmp_path, timeout=1.0)
    t0 = time.monotonic()
    try:
        recs = _play(bot, [0, 1, 2], games=2, batch=1)
    finally:
        bot.close()
    assert {f["kind"] for r in recs for f in r.faults} == {"timeout"}
    assert time.monotonic() - t0 < 20  # the bot talks for 30 s: a clock restarted by every line never times out
    assert "late answer" in bot.log_path.read_text()


def test_a_bot_that_exits_while_its_helper_holds_stdout_is_a_crash_not_timeouts(tmp_path):
    """Red team, session 46: the pipe stays open while a process the bot started holds it, so its exit looked like
    silence: a timeout in every game of the process. At its first timeout the exit is seen: a crash (the fault
    table's word for "exited"), its helper killed with its process group."""
    pids = tmp_path / "pids"
    bot = _bot("exit_holding", "--pidfile", str(pids), n=2, tmp_path=tmp_path, timeout=1.0)
    faults = _one_game_faults(bot)
    assert [f["kind"] for f in faults] == ["crash"], faults
    assert faults[0]["detail"] == "exited (exit code 0); a process it started holds its stdout"
    helper = int(pids.read_text().split()[1])
    assert gone(helper, wait=10), "the helper holding the pipe outlived the bot"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="F_SETPIPE_SZ is Linux's")
def test_a_write_cut_inside_a_character_goes_on_with_the_rest_of_its_bytes():
    """Red team, session 46: the pipe took a write up to the middle of a two-byte character; the tail was kept as
    text with a lone surrogate, and the next write's strict encoding raised UnicodeEncodeError, which ended the
    tournament. The tail stays bytes now, and text that cannot be encoded is escaped, never raised."""
    import fcntl
    import types

    import meld8_env.seat_process as ext

    r, w = os.pipe()
    try:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
        os.set_blocking(w, False)
        fake = types.SimpleNamespace(stdin=types.SimpleNamespace(fileno=lambda: w), stdout=None)
        conn = ext._Conn(fake, None, threading.Event())
        text = "x" + "\u00e9" * 3000 + "\n"  # 6,002 bytes: the pipe's 4,096 end inside an e-acute
        conn.out = [text, "lone \udca9 surrogate\n"]
        got = b""
        while conn.write_some():
            got += os.read(r, 1 << 16)
        got += os.read(r, 1 << 16)
        assert got == text.encode() + b"lone \\udca9 surrogate\n"
    finally:
        os.close(r)
        os.close(w)


def test_pump_stops_reading_once_max_queued_lines_wait(monkeypatch):
    """Red team, session 46: while a game's end was written to a bot, ``pump`` read whatever it flooded for up to a
    timeout (45M lines, 2.5 GB in 5 s). Past MAX_QUEUED waiting lines it reads no more and returns at once."""
    import types

    import meld8_env.seat_process as ext

    monkeypatch.setattr(ext, "MAX_QUEUED", 100)
    r, w = os.pipe()
    try:
        os.write(w, b"ab\n" * 1000)  # one read takes them all: 1,000 lines past the cap of 100
        reader = types.SimpleNamespace(fileno=lambda: r)
        fake = types.SimpleNamespace(stdin=types.SimpleNamespace(fileno=lambda: w), stdout=reader)
        os.set_blocking(r, False)
        conn = ext._Conn(fake, None, threading.Event())
        t0 = time.monotonic()
        assert conn.pump(t0 + 5.0, lambda: False) is False
        assert time.monotonic() - t0 < 2.0 and len(conn.lines) == 1000  # it returned, not read on to the deadline
        os.write(w, b"ab\n" * 10)
        conn.pump(time.monotonic() + 5.0, lambda: False)
        assert len(conn.lines) == 1000  # nothing more read while they wait
    finally:
        os.close(r)
        os.close(w)


def test_a_bot_that_writes_lines_but_never_answers_is_dropped_after_three_timeouts(tmp_path):
    """Red team, session 46: any line counted as life, so a process that stopped reading and wrote a stale answer
    every 0.1 s was never dropped: each new game cost a whole timeout (356 timeouts in 60 boards). Three timeouts in
    a row without an accepted answer now drop it as ``hang``, lines or not; the log says it wrote no answer."""
    bot = _bot("chatty", n=2, tmp_path=tmp_path, timeout=0.5)
    try:
        recs = _play(bot, [0, 1, 2], games=6, batch=1)
    finally:
        bot.close()
    log = bot.log_path.read_text()
    said = "its process was ended (hang): no accepted answer in 3 timeouts of 0.5 s in a row (it wrote lines, none"
    assert said in log, log[-3000:]
    # the process was started again after its third timeout (the chatty bot would have talked for 30 s)
    starts = [x for x in log.splitlines() if x.startswith("--- meld8") and ": starting " in x]
    assert len(starts) == 2 and {f["kind"] for r in recs for f in r.faults} == {"timeout"}


def test_a_bot_that_never_stops_writing_ignored_lines_still_times_out(tmp_path):
    # red team, session 32: with a line always waiting, the loop took the lines and skipped the clock, so a bot
    # flooding old-seq answers hung the tournament (and the web table) for ever. A real flooding process races
    # with the reader (the pipe is sometimes empty at a poll, where the old loop did time out), so the flood is a
    # connection that select() always finds readable and that hands over a fresh batch of ignored lines at
    # every read: deterministic, and without the fix it never returns.
    import collections
    import threading
    import types

    import meld8_env.seat_process as ext
    from meld8_env.protocol import encode

    r, w = os.pipe()
    os.write(w, b"x")  # never read: select() always reports the connection readable
    late = encode({"game": 7, "action": 1, "seq": 0}).encode()  # game 7: given once, long over (a late answer)

    class FloodConn:
        seat, given, deadline, silent_timeouts, fruitless_timeouts = 0, {0, 7}, 0.0, 0, 0
        proc = types.SimpleNamespace(poll=lambda: None)  # alive: the flood is its own, not a helper's

        def __init__(self):
            self.lines: list[bytes] = []
            self.out: list[str] = []

        def fileno(self) -> int:
            return r

        def write_some(self) -> bool:
            self.out.clear()
            return False

        def read_some(self) -> None:
            self.lines += [late] * 50

    agent = ExternalAgent.__new__(ExternalAgent)
    agent._streams = {5: ext._Stream(0, {"seat": 0}, 0, seq=1)}
    agent._by_wire, agent._conns, agent.faults = {0: 5}, {0: FloodConn()}, {k: 0 for k in ext.FAULT_KINDS}
    agent.shown_name, agent.options, agent._shown = "cmd:x", BotOptions(timeout=0.2), 99
    agent.log_path, agent._late = tmp_path / "bot.log", collections.Counter()
    acts = np.full(1, -1, np.int64)
    exchange = threading.Thread(target=agent._exchange, args=({0: {0: 0}}, np.ones((1, 64), bool), acts), daemon=True)
    exchange.start()
    exchange.join(30)  # a timeout of 0.2 s; before the fix: never
    hung = exchange.is_alive()
    agent._conns = {}  # ends a hung loop (no live connection left)
    os.close(r)
    os.close(w)
    assert not hung, "the flooding bot was never timed out"
    assert [f["kind"] for f in agent._streams[5].faults] == ["timeout"] and acts[0] == -1  # the fallback plays it
    assert "further late answers for game 7" in agent.log_path.read_text()


def test_a_late_duplicate_answer_is_never_taken_for_the_next_request(tmp_path):
    dup = _bot("dupslow", tmp_path=tmp_path)
    clean = _bot("ok", tmp_path=tmp_path)
    try:
        got = _play(dup, [0, 1, 2], games=3)
        want = _play(clean, [0, 1, 2], games=3)
    finally:
        dup.close()
        clean.close()
    assert not any(r.faults for r in got)  # each duplicate was recognised by its seq and ignored
    assert [r.final_scores for r in got] == [r.final_scores for r in want]
    assert "late answer" in dup.log_path.read_text()


def test_an_answer_with_a_seq_never_sent_is_a_fault_of_that_game():
    import meld8_env.seat_process as ext
    from meld8_env.protocol import encode

    class FakeConn:
        given = {0}

    agent = ExternalAgent.__new__(ExternalAgent)
    agent._streams = {5: ext._Stream(0, {"seat": 0}, 0, seq=2)}
    agent._by_wire, agent._conns, agent.faults = {0: 5}, {}, {k: 0 for k in ext.FAULT_KINDS}
    agent.shown_name, agent.options, agent._shown = "cmd:x", BotOptions(), 99
    agent.log_path = Path(os.devnull)
    masks = np.ones((1, 64), bool)
    acts = np.full(1, -1, np.int64)
    for seq in (3, -1, "2", 10**6):
        agent._streams[5].faulted = False
        need = {0: 0}
        # the game is settled at once (the fallback plays it): no wait for a timeout and no second fault
        assert agent._answer(FakeConn, encode({"game": 0, "action": 1, "seq": seq}).encode(), need, masks, acts)
        assert need == {} and agent._streams[5].faults[-1]["kind"] == "garbage" and acts[0] == -1
    assert len(agent._streams[5].faults) == 4


@pytest.mark.parametrize(
    "mode, shown", [("str_seq", 'the string "0"'), ("bool_seq", "the boolean true"), ("null_seq", "null")]
)
def test_a_seq_that_is_no_integer_is_refused_as_such(tmp_path, mode, shown):
    """Red team, session 44: "seq": "0" was "answered with seq '0', which meld8 never sent (the request's is 0)", and
    true (an int in Python) was "seq True", and null was taken for no seq (review, session 44): the fault now says seq
    must be an integer and what came, as JSON."""
    bot = _bot(mode, n=1, tmp_path=tmp_path)  # its first request (seq 0 of its one game) is answered so
    faults = _one_game_faults(bot)
    assert [f["kind"] for f in faults] == ["garbage"], faults
    assert faults[0]["detail"] == f"seq must be an integer (the request's seq, 0), got {shown}", faults[0]
    assert "never sent" not in bot.log_path.read_text()


def test_a_flood_of_late_answers_is_not_logged_line_by_line(tmp_path):
    import collections

    import meld8_env.seat_process as ext

    agent = ExternalAgent.__new__(ExternalAgent)
    agent.log_path, agent._late = tmp_path / "bot.log", collections.Counter()
    for game in (0, 1):
        for k in range(500):
            agent._log_late(game, f"late answer for game {game} ignored: {k}")
    lines = agent.log_path.read_text().splitlines()
    assert len(lines) == 2 * (ext.LATE_LOGGED + 1)
    assert sum("further late answers for game 1" in line for line in lines) == 1


def test_a_bots_stderr_stops_at_the_log_limit_and_the_bot_plays_on(tmp_path, monkeypatch):
    """meld8 copies a bot's stderr to its log while the file is under LOG_LIMIT and drops the rest: one wrote
    908 MB in 1.5 s and a full disk stopped the tournament (red team, session 33). The cap is the file's, not each
    process's (three processes of one command share the log), and the bots are neither blocked nor ended: each
    writes 3 MiB past a 1 MiB limit and every game is played without a fault."""
    import meld8_env.seat_process as ext

    monkeypatch.setattr(ext, "LOG_LIMIT", 1 << 20)  # read by the copying threads: 1 MiB keeps the test small
    bot = _bot("stderrflood", n=2, tmp_path=tmp_path)
    try:
        recs = _play(bot, [0, 0, 0], games=2)  # the bot in all three seats: three processes, one log
    finally:
        bot.close()
    assert [f for r in recs for f in r.faults] == []
    log = bot.log_path.read_bytes()
    assert (1 << 20) <= len(log) < (1 << 20) + 3 * (1 << 16) + 4096, len(log)  # a chunk per process at most past
    assert b"--- meld8: stderr past 1 MiB is dropped" in log


def test_meld8s_own_log_lines_stop_a_little_past_the_limit(tmp_path, monkeypatch):
    """Padded late answers made 1.4 MB of escaped log lines a second and the log grew without end (red team, session
    33): meld8's lines stop at LOG_LIMIT + LOG_SLACK."""
    import collections

    import meld8_env.seat_process as ext

    monkeypatch.setattr(ext, "LOG_LIMIT", 1 << 14)
    monkeypatch.setattr(ext, "LOG_SLACK", 1 << 12)
    agent = ExternalAgent.__new__(ExternalAgent)
    agent.log_path, agent._late = tmp_path / "bot.log", collections.Counter()
    for k in range(400):
        agent._log(f"late answer ignored: {chr(127) * 250} {k}")
    assert (1 << 14) < agent.log_path.stat().st_size <= (1 << 14) + (1 << 12)


def test_a_log_that_is_no_regular_file_is_refused_without_waiting(tmp_path):
    """A FIFO planted at the log path made open() wait for a reader for ever (red team, session 33)."""
    (tmp_path / "logs").mkdir()
    fifo = tmp_path / "logs" / f"{slug(FAULTY + ' ok 3')}.stderr.log"
    os.mkfifo(fifo)
    with pytest.raises(BotStartError, match="is not a regular file: refused"):
        _bot("ok", tmp_path=tmp_path)


def test_the_stderr_copy_ends_after_its_bot_even_when_a_helper_escaped_with_the_pipe(tmp_path):
    """A helper in its own session (setsid) outlives the bot's process group and holds its stderr: the copying
    thread still ends, DRAIN_GRACE after the bot is killed (it leaked a thread and two descriptors per bot)."""
    import threading

    import meld8_env.seat_process as ext

    pids = tmp_path / "pids"
    bot = _bot("setsid_helper", "--pidfile", str(pids), tmp_path=tmp_path)
    bot_pid, helper = map(int, pids.read_text().split())
    (copy,) = [t for t in threading.enumerate() if t.name == f"meld8-stderr-{bot_pid}"]
    try:
        bot.close()
        copy.join(timeout=ext.DRAIN_GRACE + 10)
        assert not copy.is_alive()
    finally:
        os.kill(helper, signal.SIGKILL)


def test_a_log_past_the_limit_is_moved_aside_when_a_bot_starts(tmp_path, monkeypatch):
    """A log is shared by every run of its command (the default folder, --resume): one past the limit is moved to
    ``.1`` when a process starts, so the new process's lines are kept and the folder stays bounded (review)."""
    import meld8_env.seat_process as ext

    monkeypatch.setattr(ext, "LOG_LIMIT", 1 << 16)
    bot = _bot("ok", n=2, tmp_path=tmp_path)
    old = bot.log_path.read_bytes()
    bot.close()
    bot.log_path.write_bytes(old + b"x" * (1 << 16))
    again = _bot("ok", n=2, tmp_path=tmp_path)
    try:
        _play(again, [0, 1, 2], games=1)
    finally:
        again.close()
    assert bot.log_path.with_name(bot.log_path.name + ".1").read_bytes() == old + b"x" * (1 << 16)
    assert b"starting" in again.log_path.read_bytes() and again.log_path.stat().st_size < 1 << 16


def test_a_bots_fault_log_never_names_a_seed(tmp_path, capsys):
    """The bot can read its own log, and a board's seed gives away the deals of the boards after it (red team,
    session 33): fault lines name the game and seat, never the seed (the game records keep it)."""
    bot = _bot("garbage", n=2, tmp_path=tmp_path)
    try:
        recs = _play(bot, [0, 1, 2], games=1)
    finally:
        bot.close()
    log = bot.log_path.read_text()
    assert "garbage in game" in log and "seat 0" in log and "seed" not in log
    assert "seed" not in capsys.readouterr().err and recs[0].seed == 1


# -- processes ------------------------------------------------------------------------------------
def test_a_bots_helper_processes_end_with_it(tmp_path):
    pids = tmp_path / "pids"
    bot = _bot("helper", "--pidfile", str(pids), tmp_path=tmp_path)
    bot_pid, helper = map(int, pids.read_text().split())
    assert not gone(helper, wait=0.1)
    bot.close()
    assert gone(bot_pid) and gone(helper)


def test_a_bots_helper_processes_end_at_interpreter_exit(tmp_path):
    pids = tmp_path / "pids"
    script = (
        "from meld8_env.seat_process import ExternalAgent, BotOptions\n"
        f"a = ExternalAgent({FAULTY + ' helper 3 --pidfile ' + str(pids)!r},\n"
        f"                  options=BotOptions(log_dir={str(tmp_path)!r}), fallback=None)\n"
        "import sys; sys.exit(0)\n"
    )  # fmt: skip
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert all(gone(int(p)) for p in pids.read_text().split())


def test_every_play_process_says_bye(tmp_path):
    from training.tournament import TournamentConfig, run

    byes, pids = tmp_path / "byes", tmp_path / "pids"
    spec = f"cmd:{FAULTY} ok 1 --byefile {byes} --pidfile {pids}"
    run(TournamentConfig(agents=[spec, "greedy", "random"], boards=2, workers=2, out=str(tmp_path / "t"),
                         progress=False, chart=False, rules=RULES))  # fmt: skip
    started = sorted(pids.read_text().split())
    assert len(started) >= 3  # the load check, then the worker processes
    assert sorted(byes.read_text().split()) == started


# -- text and files ------------------------------------------------------------------------------
def test_control_characters_from_a_bot_are_escaped(tmp_path, capsys):
    bot = _bot("escape", n=2, tmp_path=tmp_path)
    try:
        recs = _play(bot, [0, 1, 2], games=2, batch=1)
    finally:
        bot.close()
    assert {f["kind"] for r in recs for f in r.faults} == {"garbage"}
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    ours = [x for x in bot.log_path.read_text().splitlines() if x.startswith("--- meld8")]
    assert ours and not any("\x1b" in x for x in ours)
    # the bot's line is quoted, escaped, in its log (the terminal names the fault without the line since session 36:
    # a player at `meld8 play` reads it)
    assert any("\\x1b[2J" in x and "\\u202e" in x for x in ours)
    assert printable("a\x00b\x9bc\u2028d\te") == "a\\x00b\\x9bc\\u2028d\\x09e"


def test_the_default_log_folder_is_private_and_created_safely(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = default_log_dir()
    assert folder.parent == tmp_path and str(os.getuid()) in folder.name
    bot = ExternalAgent(f"{FAULTY} ok", RULES, fallback=GREEDY)
    bot.close()
    assert bot.log_path.parent == folder and (folder.stat().st_mode & 0o777) == 0o700
    assert (bot.log_path.stat().st_mode & 0o777) == 0o600
    # a folder we own but others may enter is closed again
    os.chmod(folder, 0o777)
    ExternalAgent(f"{FAULTY} ok", RULES, fallback=GREEDY).close()
    assert (folder.stat().st_mode & 0o777) == 0o700
    # a planted symlink, as folder or as log file, is refused and never followed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for entry in folder.iterdir():
        entry.unlink()
    folder.rmdir()
    folder.symlink_to(elsewhere)
    with pytest.raises(BotStartError, match="symlink"):
        ExternalAgent(f"{FAULTY} ok", RULES, fallback=GREEDY)
    assert list(elsewhere.iterdir()) == []
    folder.unlink()
    folder.mkdir(0o700)
    (folder / bot.log_path.name).symlink_to(elsewhere / "victim")
    with pytest.raises(BotStartError, match="symlink"):
        ExternalAgent(f"{FAULTY} ok", RULES, fallback=GREEDY)
    assert not (elsewhere / "victim").exists()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root to plant another user's folder")
def test_a_log_folder_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = default_log_dir()
    folder.mkdir(0o700)
    os.chown(folder, 65534, 65534)
    with pytest.raises(BotStartError, match="another user"):
        ExternalAgent(f"{FAULTY} ok", RULES, fallback=GREEDY)


def test_log_names_of_similar_commands_differ():
    assert slug("python bot.py --x 1") != slug("python bot.py --x=1")
    assert slug("a" * 200) != slug("a" * 201)


def test_requests_on_the_wire_carry_seq_and_rounds_end_with_waiting(tmp_path):
    log = tmp_path / "wire"
    script = tmp_path / "tee_bot.py"
    script.write_text(
        "import sys, runpy\n"
        f"log = open({str(log)!r} + '.' + str(__import__('os').getpid()), 'wb')\n"
        "real = sys.stdin.buffer\n"
        "class Tee:\n"
        "    def readline(self):\n"
        "        x = real.readline(); log.write(x); log.flush(); return x\n"
        "    def read1(self, n):\n"
        "        x = real.read1(n); log.write(x); log.flush(); return x\n"
        "class In:\n"
        "    buffer = Tee()\n"
        "sys.stdin = In()\n"
        f"sys.argv = [{str(ROOT / 'examples' / 'bots' / 'python_bot.py')!r}]\n"
        f"runpy.run_path({str(ROOT / 'examples' / 'bots' / 'python_bot.py')!r}, run_name='__main__')\n"
    )
    bot = ExternalAgent(f"{sys.executable} {script}", RULES, options=BotOptions(log_dir=str(tmp_path)), fallback=GREEDY)
    try:
        recs = _play(bot, [0, 1, 2], games=2, batch=2)
    finally:
        bot.close()
    assert not any(r.faults for r in recs)
    files = sorted(tmp_path.glob("wire.*"))
    assert len(files) == 1  # the agent sits in seat 0 only: one process
    for f in files:  # what each process read
        msgs = [json.loads(x) for x in f.read_bytes().splitlines()]
        requests = [m for m in msgs if m.get("type") == "request"]
        for game in {m["game"] for m in requests}:
            seqs = [m["seq"] for m in requests if m["game"] == game]
            assert seqs == list(range(len(seqs)))  # numbered 0, 1, ... in each game id
        waiting = [m for m in msgs if m.get("type") == "waiting"]
        assert waiting and all(set(w) == {"type", "games"} for w in waiting)
        pending: set[int] = set()
        for m in msgs:  # every request is listed by the next waiting marker
            if m.get("type") == "request":
                pending.add(m["game"])
            elif m.get("type") == "waiting":
                assert pending <= set(m["games"]), (pending, m)
                pending = set()
        assert msgs[-1] == {"type": "bye"}
