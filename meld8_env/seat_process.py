"""Bots outside the package, in any language, playing through the seat protocol (``docs/protocol.md``).

Agent spec ``cmd:COMMAND`` (split like a shell would, no shell run): the command is started once per
process that loads the agent, greeted with ``{"type": "hello", "protocol": 1, ...}`` and must answer
with its own hello. It then receives, as JSON lines on stdin, the event streams of every seat it plays
in every game (each game seat has its own ``game`` id, so one process plays many games at once), and
answers each ``request`` with one line ``{"game": G, "action": ID or NAME}`` on stdout, in any order.
Its stderr goes to ``LOG_DIR/<name>.stderr.log``.

Faults, and what happens (the seat is then played by the fallback bot, ``greedy`` by default, for the
rest of that game; the game is finished and logged like any other, with the fault in its record):

| kind | what the bot did | games it hits |
|---|---|---|
| ``illegal`` | answered an action that is not legal (or no action id or name) | that game |
| ``garbage`` | an answer to a game not waiting for one | that game |
| ``garbage`` | a line that is not an answer object | every game of the process (the connection is dropped) |
| ``unknown_game`` | answered a game id it was never given | every game of the process (dropped) |
| ``timeout`` | no answer within ``timeout`` seconds (the clock restarts with every answer) | the games still waiting |
| ``hang`` | two timeouts in a row without writing a line in between | every game of the process (killed) |
| ``crash`` | exited, or closed its stdout | every game of the process |
| ``disabled`` | crashed or was dropped more than ``max_restarts`` times: no longer started | each new game |

A dropped or crashed bot is started again for the next new game. The fallback instead of a forfeit:
a duplicate tournament compares every seating of a board, so a forfeited game would unpair the board;
with a fallback every game finishes and the fault is counted against the agent in ``results.json``.
Processes end with the agent (``close``), at interpreter exit, and with the parent process even when
it is killed (Linux ``PR_SET_PDEATHSIG``); they run in their own session, so a Ctrl-C reaches only
the parent, which then closes them.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import re
import select
import shlex
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path

import numpy as np

from meld8_env.actions import illegal_action_message
from meld8_env.agent import BUILTIN
from meld8_env.protocol import (
    ProtocolError,
    decode_answer,
    decode_hello,
    encode,
    encode_body,
    encode_for,
    hello,
    parse_action,
)
from meld8_env.rules import RuleConfig
from meld8_env.version import __version__

PREFIX = "cmd:"
FAULT_KINDS = ("illegal", "garbage", "unknown_game", "timeout", "hang", "crash", "disabled")
SHOWN_FAULTS = 5  # faults printed to stderr per agent; all of them are in the game records


@dataclasses.dataclass
class BotOptions:
    """How external bots are run (``meld8 tournament --bot-timeout / --fallback / --bot-log-dir``)."""

    timeout: float = 5.0
    """seconds a bot may take per decision (the clock restarts with each answer it gives)"""
    fallback: str = "greedy"
    """built-in bot that plays a faulted seat for the rest of its game"""
    log_dir: str | None = None
    """folder of the bots' stderr logs (default: TMPDIR/meld8-bots)"""
    max_restarts: int = 3
    """restarts after crashes / drops; then the agent is disabled for new games"""
    startup_timeout: float = 20.0
    """seconds to start and say hello"""

    def __post_init__(self) -> None:
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, int | float) or not 0 < self.timeout < 1e6:
            raise ValueError(f"bot timeout must be a number of seconds > 0 (and finite), got {self.timeout!r}")
        if self.fallback not in BUILTIN:
            raise ValueError(f"fallback must be a built-in bot ({', '.join(BUILTIN)}), got {self.fallback!r}")
        if self.max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {self.max_restarts!r}")


class BotStartError(ValueError):
    """A bot command that cannot be started or does not greet correctly."""


@dataclasses.dataclass
class _Stream:
    wire: int  # the game id the bot sees
    info: dict
    faulted: bool = False
    phase: str = "?"  # of the last request, for error messages
    faults: list = dataclasses.field(default_factory=list)


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for agent in list(_LIVE):
        agent.close()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def slug(command: str) -> str:
    """A file-name-safe short name for a command (its log file's name)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", command).strip("_")[:80] or "bot"


class ExternalAgent:
    """A ``cmd:COMMAND`` agent. It plays only through ``meld8_env.table.Table`` (arena, tournaments,
    Gymnasium / SB3 opponents), which feeds it event streams; ``faults`` counts every fault by kind."""

    plays_streams = True

    def __init__(self, command: str, rules: RuleConfig | None = None, seed: int = 0,
                 options: BotOptions | None = None, *, fallback) -> None:  # fmt: skip
        self.command = command
        self.argv = shlex.split(command)
        if not self.argv:
            raise BotStartError("cmd: needs a command, e.g. 'cmd:python mybot.py'")
        self.name = PREFIX + command
        self.rules = rules or RuleConfig()
        self.options = options or BotOptions()
        self.fallback = fallback  # handed in (meld8_env.agent_spec loads options.fallback)
        log_dir = Path(self.options.log_dir or Path(tempfile.gettempdir()) / "meld8-bots")
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"{slug(command)}.stderr.log"
        self.faults = {k: 0 for k in FAULT_KINDS}
        self.restarts = 0
        self._streams: dict[int, _Stream] = {}
        self._by_wire: dict[int, int] = {}
        self._next_wire = 0
        self._out: list[str] = []
        self._bodies: dict[int, tuple[dict, str]] = {}  # events shared by several streams, encoded once
        self._proc: subprocess.Popen | None = None
        self._silent_timeouts = 0
        self._shown = 0
        self._start()
        _LIVE.add(self)

    def setup(self, rules: RuleConfig) -> None:
        self.rules = rules
        self.fallback.setup(rules)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(obs)[None], np.asarray(mask)[None])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise TypeError(
            f"{self.name} plays through the seat protocol: seat it with meld8_env.table.Table (tournaments, "
            "training.arena.play, the Gymnasium / SB3 opponents do), not with act_batch"
        )

    # -- the process ------------------------------------------------------------------------------
    def _start(self) -> None:
        """Start the command and exchange hellos; BotStartError says why it failed."""
        self._log(f"starting {self.command!r}")
        err = open(self.log_path, "ab")
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, bufsize=0,
                start_new_session=True, preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )  # fmt: skip
        except OSError as exc:
            raise BotStartError(f"{self.name}: cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        finally:
            err.close()
        os.set_blocking(proc.stdin.fileno(), False)
        os.set_blocking(proc.stdout.fileno(), False)
        self._proc, self._buf, self._lines = proc, b"", []
        self._out = [hello(server=f"meld8 {__version__}", rules_hash=self.rules.rules_hash)]
        try:
            line = self._read_line(time.monotonic() + self.options.startup_timeout)
            if line is None:
                raise BotStartError(f"{self.name}: no hello within {self.options.startup_timeout:g} s")
            self.peer = decode_hello(line)
        except (BotStartError, ProtocolError, _Died) as exc:
            self._kill()
            raise BotStartError(f"{self.name}: {exc} (its stderr: {self.log_path})") from None
        self._silent_timeouts = 0

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def close(self) -> None:
        """Say bye, give the bot a moment to exit, then kill it."""
        _LIVE.discard(self)
        if self._proc is None:
            return
        self._out.append(encode({"type": "bye"}))
        try:
            self._pump(time.monotonic() + 1.0, lambda: not self._out)
            self._proc.stdin.close()
            self._proc.wait(timeout=1.0)
        except (_Died, OSError, subprocess.TimeoutExpired):
            pass
        self._kill()

    def __del__(self) -> None:  # pragma: no cover - best effort; close() is the contract
        try:
            self._kill()
        except Exception:
            pass

    # -- the pipe ---------------------------------------------------------------------------------
    def _pump(self, deadline: float, done) -> bool:
        """Write what is queued and read lines into ``self._lines`` until ``done()`` or the deadline
        (False). Raises _Died when the bot closes its stdout or stdin (exits)."""
        proc = self._proc
        data = "".join(self._out).encode()
        self._out = []
        while True:
            if data:
                try:
                    n = os.write(proc.stdin.fileno(), data)
                    data = data[n:]
                except BlockingIOError:
                    pass
                except (BrokenPipeError, ValueError):
                    raise _Died("closed its stdin") from None
            if done() and not data:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                if data:
                    self._out = [data.decode()]
                return False
            ready = self._wait(proc, left, bool(data))
            if ready:
                try:
                    chunk = os.read(proc.stdout.fileno(), 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise _Died("closed its stdout")
                self._buf += chunk
                *lines, self._buf = self._buf.split(b"\n")
                self._lines += lines

    @staticmethod
    def _wait(proc: subprocess.Popen, timeout: float, writing: bool) -> bool:
        """Wait until stdout is readable (True) or, while ``writing``, stdin is writable."""
        r, _, _ = select.select([proc.stdout], [proc.stdin] if writing else [], [], timeout)
        return bool(r)

    def _read_line(self, deadline: float) -> bytes | None:
        if not self._pump(deadline, lambda: bool(self._lines)):
            return None
        return self._lines.pop(0)

    # -- streams ----------------------------------------------------------------------------------
    def open_stream(self, key: int, info: dict) -> None:
        """A new game seat (``info``: ``seat``, ``seed``, ...) this agent plays."""
        wire = self._next_wire
        self._next_wire += 1
        self._streams[key] = _Stream(wire, info)
        self._by_wire[wire] = key
        if self._proc is None:
            if self.restarts >= self.options.max_restarts:
                self._fault(key, "disabled", f"not started again after {self.restarts} restarts")
                return
            self.restarts += 1
            try:
                self._start()
            except BotStartError as exc:
                self._fault(key, "crash", f"restart failed: {exc}")

    def feed(self, key: int, events: list[dict]) -> None:
        st = self._streams[key]
        if st.faulted or self._proc is None:
            return
        cache = self._bodies
        if len(cache) > 4096:
            cache.clear()
        for ev in events:
            if ev["type"] == "request":
                st.phase = ev["phase"]
            hit = cache.get(id(ev))
            if hit is None or hit[0] is not ev:  # the cache holds the event, so its id cannot be reused
                hit = cache[id(ev)] = (ev, encode_body(ev))
            self._out.append(encode_for(st.wire, hit[1]))

    def flush(self) -> None:
        """Write what the pipe takes now without waiting (the bot starts thinking while other agents
        act; ``act_streams`` writes the rest)."""
        if self._proc is not None and self._out:
            try:
                self._pump(time.monotonic(), lambda: True)
            except _Died:
                pass  # act_streams reports it, with the games it hits

    def close_stream(self, key: int) -> list[dict]:
        """The game of this stream ended: its faults (``kind``, ``detail``, ``line``)."""
        st = self._streams.pop(key)
        self._by_wire.pop(st.wire, None)
        if not self._streams and self._proc is not None and self._out:
            try:  # the last games' endings reach the bot before it idles
                self._pump(time.monotonic() + self.options.timeout, lambda: True)
            except _Died as exc:
                self._dropped("crash", str(exc), None)
        return st.faults

    def act_streams(self, keys: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Answers to the requests pending in the streams ``keys`` (their observations and masks
        stand by for the fallback)."""
        acts = np.full(len(keys), -1, np.int64)
        need = {}
        for row, key in enumerate(keys.tolist()):
            st = self._streams[key]
            if not st.faulted:
                need[st.wire] = row
        if need and self._proc is not None:
            self._exchange(need, masks, acts)
        rows = np.flatnonzero(acts < 0)
        if rows.size:
            acts[rows] = self.fallback.act_batch(obs[rows], masks[rows])
        return acts

    def _exchange(self, need: dict[int, int], masks: np.ndarray, acts: np.ndarray) -> None:
        timeout = self.options.timeout
        heard = False  # any line at all: a bot that talks is slow or wrong, not hung
        while need:
            try:
                got = self._pump(time.monotonic() + timeout, lambda: bool(self._lines))
            except _Died as exc:
                self._dropped("crash", f"{exc} (exit code {self._exit_code()})", None)
                return
            if not got:
                for wire in list(need):
                    self._fault(self._by_wire[wire], "timeout", f"no answer within {timeout:g} s")
                self._silent_timeouts = 0 if heard else self._silent_timeouts + 1
                if self._silent_timeouts >= 2:
                    detail = f"not a line in {self._silent_timeouts} timeouts of {timeout:g} s"
                    self._dropped("hang", detail, None)
                return
            heard = True
            self._silent_timeouts = 0
            while self._lines and self._proc is not None:
                self._answer(self._lines.pop(0), need, masks, acts)
            if self._proc is None:
                return

    def _answer(self, line: bytes, need: dict[int, int], masks: np.ndarray, acts: np.ndarray) -> None:
        """Take one answer line: an action for a waiting game, or a fault."""
        text = line.decode("utf-8", "replace")[:300]
        try:
            game, action = decode_answer(line)
        except ProtocolError as exc:
            self._dropped("garbage", f"{exc}", text)
            return
        if isinstance(game, bool) or not isinstance(game, int) or not 0 <= game < self._next_wire:
            self._dropped("unknown_game", f"answered game {game!r}, which it was never given", text)
            return
        key = self._by_wire.get(game)
        if key is None or self._streams[key].faulted:
            self._log(f"late answer for game {game} ignored: {text}")  # the game ended or went to the fallback
            return
        if game not in need:
            self._fault(key, "garbage", "answered a game that is not waiting for an answer", text)
            return
        row = need.pop(game)
        try:
            a = parse_action(action)
        except ValueError as exc:
            self._fault(key, "illegal", str(exc), text)
            return
        if not 0 <= a < masks.shape[1] or not masks[row, a]:
            st = self._streams[key]
            legal = np.flatnonzero(masks[row]).tolist()
            msg = illegal_action_message(a, f"seat {st.info.get('seat', '?')}", st.phase, legal)
            self._fault(key, "illegal", msg, text)
            return
        acts[row] = a

    # -- faults -----------------------------------------------------------------------------------
    def _exit_code(self) -> int | None:
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return None

    def _dropped(self, kind: str, detail: str, line: str | None) -> None:
        """The connection is over (crash, garbage, unknown game, hang): every live game faults."""
        self._kill()
        for key, st in self._streams.items():
            if not st.faulted:
                self._fault(key, kind, detail, line)

    def _fault(self, key: int, kind: str, detail: str, line: str | None = None) -> None:
        st = self._streams[key]
        st.faulted = True
        fault = {"kind": kind, "detail": detail}
        if line is not None:
            fault["line"] = line
        st.faults.append(fault)
        self.faults[kind] += 1
        where = ", ".join(f"{k} {v}" for k, v in st.info.items())
        msg = f"{self.name}: {kind} in game {st.wire} ({where}): {detail}" + (f"; line: {line}" if line else "")
        self._log(msg + f"; {self.options.fallback} plays the seat for the rest of the game")
        if self._proc is not None:
            self._out.append(encode({"type": "fault", "game": st.wire, "kind": kind, "detail": detail}))
        self._shown += 1
        if self._shown <= SHOWN_FAULTS:
            more = f" (stderr: {self.log_path})" if self._shown < SHOWN_FAULTS else " (further faults: see the log)"
            print(f"meld8: {msg}; {self.options.fallback} plays on{more}", file=sys.stderr)

    def _log(self, text: str) -> None:
        with open(self.log_path, "a") as f:
            f.write(f"--- meld8 {time.strftime('%H:%M:%S')}: {text}\n")


class _Died(Exception):
    """The bot's pipe closed under us."""


__all__ = ["PREFIX", "BotOptions", "BotStartError", "ExternalAgent", "FAULT_KINDS"]
