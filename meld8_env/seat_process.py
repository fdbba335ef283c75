"""Bots outside the package, in any language, playing through the seat protocol (``docs/protocol.md``).

Agent spec ``cmd:COMMAND`` (split like a shell would, no shell run). Loading the agent starts the
command once and exchanges hellos (``{"type": "hello", "protocol": 1, ...}`` both ways): a bot that
cannot start or greet is refused right there. It then receives, as JSON lines on stdin, the event
streams of the seats it plays (each game seat has its own ``game`` id, so one process plays many
games at once), and answers each ``request`` with one line ``{"game": G, "action": ID or NAME,
"seq": N}`` on stdout (``seq`` echoes the request's, optional), in any order. After the requests of a
round meld8 writes ``{"type": "waiting", "games": [...]}``: every game it now waits for.

**One process per seat number.** Seat ``s`` of every game this agent plays goes to process ``s``
(started when first needed; the load check's process serves the first seat), so no process ever
sees two seats of one game - even when the agent fills several seats of it (``cmd:X,cmd:X,greedy``).

Bounds, checked before anything is parsed (``meld8_env.protocol.check_line``): a line of at most
``MAX_LINE`` bytes, JSON nested at most ``MAX_DEPTH`` deep, integers of at most ``MAX_DIGITS``
digits; whatever else makes a line unreadable is a ``garbage`` fault of that bot, never an error
of meld8. Text from a bot is escaped (:func:`printable`) before it reaches the terminal or a log.

Faults, and what happens (the seat is then played by the fallback bot, ``greedy`` by default, for the
rest of that game; the game is finished and logged like any other, with the fault in its record):

| kind | what the bot did | games it hits |
|---|---|---|
| ``illegal`` | answered an action that is not legal (or no action id or name) | that game |
| ``garbage`` | an answer to a game not waiting for one, or with a ``seq`` meld8 never sent | that game |
| ``garbage`` | a line that is not an answer object, or breaks a bound | every game of the process (dropped) |
| ``unknown_game`` | answered a game id it was never given (by this process) | every game of the process (dropped) |
| ``timeout`` | no answer within ``timeout`` s (only an accepted answer restarts the clock) | the games still waiting |
| ``hang`` | two timeouts in a row without a line, or three without an accepted answer | every game (killed) |
| ``crash`` | exited, or closed its stdout | every game of the process |
| ``disabled`` | crashed, was dropped or failed to start ``max_restarts`` + 1 times: not started again | each new game |

Late answers (a game that ended or went to the fallback, or a ``seq`` older than the request
waiting) are ignored and logged; they do not restart the clock. A dropped process gets no
``fault`` lines (it is killed); a dropped or crashed process is started again for the next new game.

Processes: each runs in its own session (``start_new_session``: a Ctrl-C reaches only meld8) and is
ended with its whole process group (``killpg``), so helpers a bot starts end with it: when the agent
is closed (``bye``, then :data:`BYE_GRACE` seconds to exit), at interpreter exit and at the exit of a
multiprocessing worker (both send ``bye`` too), and with the parent even when it is killed (Linux
``PR_SET_PDEATHSIG``, the bot itself). Stderr goes to ``LOG_DIR/<command>-<hash>.stderr.log``; the
default ``LOG_DIR`` is :func:`default_log_dir`, private to the user. meld8 copies each process's stderr there
(a thread per process) while the log file is under :data:`LOG_LIMIT` bytes and drops the rest; the copy ends
:data:`DRAIN_GRACE` after its process is killed (a helper still writing to it then gets EPIPE). A log that cannot be
written is refused when the agent loads; when a process is restarted mid-run, it plays on with its stderr dropped
(said once on meld8's stderr): the log is meld8's side, and a failed restart would be counted against the bot. A
helper that leaves the bot's session (``setsid``) is out of meld8's reach: a bot is not sandboxed (README "Trust and
safety").
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import dataclasses
import errno
import hashlib
import json
import multiprocessing.util
import os
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

import numpy as np

from meld8_env.actions import illegal_action_message
from meld8_env.agent import BUILTIN, reseed_in_place
from meld8_env.parent_death import die_with_parent
from meld8_env.protocol import (
    JSON_NULL,
    MAX_LINE,
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
from meld8_env.safe_text import printable
from meld8_env.version import __version__

PREFIX = "cmd:"
FAULT_KINDS = ("illegal", "garbage", "unknown_game", "timeout", "hang", "crash", "disabled")
SHOWN_FAULTS = 5  # faults printed to stderr per agent; all of them are in the game records
BYE_GRACE = 2.0
LATE_LOGGED = 20  # ignored late answers logged per game (a flood of them is not logged line by line)
"""Seconds a bot has, after ``bye``, to read it and exit before its process group is killed."""


@dataclasses.dataclass
class BotOptions:
    """How external bots are run (``meld8 tournament --bot-timeout / --fallback / --bot-log-dir``)."""

    timeout: float = 5.0
    """seconds a bot may take per decision (only an accepted answer restarts the clock)"""
    fallback: str = "greedy"
    """built-in bot that plays a faulted seat for the rest of its game"""
    log_dir: str | None = None
    """folder of the bots' stderr logs (default: :func:`default_log_dir`)"""
    max_restarts: int = 3
    """restarts after crashes / drops; then the agent is disabled for new games"""
    startup_timeout: float = 20.0
    """seconds to start and say hello"""

    def __post_init__(self) -> None:
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, int | float) or not 0 < self.timeout < 1e6:
            raise ValueError(f"bot timeout must be a number of seconds > 0 and < 1,000,000, got {self.timeout!r}")
        if self.fallback not in BUILTIN:
            raise ValueError(f"fallback must be a built-in bot ({', '.join(BUILTIN)}), got {self.fallback!r}")
        if self.max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {self.max_restarts!r}")


class BotStartError(ValueError):
    """A bot command that cannot be started or does not greet correctly."""


# -- text and files from and for bots -------------------------------------------------------------
def default_log_dir() -> Path:
    """``TMPDIR/meld8-bots-<uid>``: the user's own folder of bot logs, created 0700 (see :func:`safe_dir`)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"meld8-bots-{uid}"


def safe_dir(path: Path, private: bool) -> Path:
    """``path`` as a folder this user may write logs into, created if missing; BotStartError if it is
    a symlink, not a folder, or (``private``: the shared-TMPDIR default) owned by another user. A
    private folder is created 0700 and kept so (someone else's planted folder or link is refused,
    never followed)."""
    try:
        if private:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
        else:
            path.mkdir(parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError as exc:
        raise BotStartError(
            f"cannot create the bot-log folder {path}: {exc.strerror or exc} (set --bot-log-dir)"
        ) from None
    if stat.S_ISLNK(st.st_mode):
        raise BotStartError(f"the bot-log folder {path} is a symlink: refused (remove it or set --bot-log-dir)")
    if not stat.S_ISDIR(st.st_mode):
        raise BotStartError(f"the bot-log folder {path} is not a folder (remove it or set --bot-log-dir)")
    if private and hasattr(os, "getuid"):
        if st.st_uid != os.getuid():
            raise BotStartError(
                f"the bot-log folder {path} belongs to another user (uid {st.st_uid}): refused "
                "(remove it or set --bot-log-dir)"
            )
        if st.st_mode & 0o077:
            os.chmod(path, 0o700)
    return path


def open_log(path: Path) -> int:
    """An append-only descriptor on ``path`` (created 0600); a symlink planted there is refused, and so is anything
    that is not a regular file (a FIFO planted there blocked meld8 in ``open`` for good: red team, session 33)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BotStartError(f"the bot log {path} is a symlink: refused (remove it)") from None
        if exc.errno == errno.ENXIO:  # a FIFO no one reads: O_NONBLOCK fails instead of waiting
            raise BotStartError(f"the bot log {path} is not a regular file: refused (remove it)") from None
        raise BotStartError(f"cannot write the bot log {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BotStartError(f"the bot log {path} is not a regular file: refused (remove it)")
    return fd


def slug(command: str) -> str:
    """A file-name-safe short name for a command (its log file's name): readable, then 8 hex digits of
    the command's hash, so two commands that read alike never share a log."""
    short = re.sub(r"[^A-Za-z0-9._-]+", "_", command).strip("_.")[:60] or "bot"
    return f"{short}-{hashlib.sha256(command.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


# -- processes ------------------------------------------------------------------------------------
_LIVE: weakref.WeakSet = weakref.WeakSet()


def _close_all() -> None:
    for agent in list(_LIVE):
        agent.close()


atexit.register(_close_all)
# a multiprocessing worker leaves through os._exit, past atexit; its finalizers still run
multiprocessing.util.Finalize(None, _close_all, exitpriority=100)


LOG_LIMIT = 16 << 20
"""Largest a bot's log grows from its stderr: past it the rest is read and dropped (one line says so), so the bot
never blocks on a full pipe. A bot that wrote 908 MB of stderr in 1.5 s filled the disk and stopped the
tournament (red team, session 33). The cap is on the file, whatever writes to it (every process of the command,
every run): a log past it when a process starts is moved to ``<log>.1`` (replacing the one before)."""
LOG_SLACK = 1 << 20
"""meld8's own lines (starts, faults, late answers) may take a log this far past LOG_LIMIT, so a flood still leaves
room for them, and no further: padded late answers made 1.4 MB of escaped lines a second (red team, session 33)."""
DRAIN_GRACE = 1.0
"""Seconds the stderr copy goes on after its bot was killed: a helper that left the bot's session may hold the
pipe open for ever, and the copying thread must end (it leaked a thread and two descriptors per bot)."""


def _rotate(path: Path) -> None:
    """Move a log past LOG_LIMIT aside (``<log>.1``) before a new process writes to it."""
    with contextlib.suppress(OSError):
        if path.stat().st_size >= LOG_LIMIT and not path.is_symlink():
            os.replace(path, path.with_name(path.name + ".1"))


def _room(log: int, limit: int) -> int:
    """Bytes the log may still take below ``limit`` (0 on any error)."""
    try:
        return max(limit - os.fstat(log).st_size, 0)
    except OSError:
        return 0


def _drain(pipe: int, log: int, killed: threading.Event, tail: bytearray | None = None) -> None:
    """Copy a bot's stderr (``pipe``) to its ``log`` until EOF while the file is under LOG_LIMIT, then read and drop
    the rest; after ``killed`` is set, DRAIN_GRACE more seconds at most. Closes both. A failing write (a full disk)
    ends the copying, never the reading: the bot must not block on its stderr. ``log`` -1: read and drop it all.
    ``tail`` (when given) keeps the last TAIL_BYTES this pipe carried: the log is shared by every process of the
    command, so what one process said is read here, never from the file."""
    writing, until = log >= 0, float("inf")
    try:
        while time.monotonic() < until:
            if killed.is_set() and until == float("inf"):
                until = time.monotonic() + DRAIN_GRACE
            if not select.select([pipe], [], [], 0.2)[0]:
                continue
            chunk = os.read(pipe, 1 << 16)
            if not chunk:
                break
            if tail is not None:
                tail += chunk[-TAIL_BYTES:]
                del tail[:-TAIL_BYTES]
            if not writing:
                continue
            try:
                keep = chunk[: _room(log, LOG_LIMIT)]
                while keep:
                    keep = keep[os.write(log, keep) :]
                if not _room(log, LOG_LIMIT):
                    os.write(log, f"\n--- meld8: stderr past {LOG_LIMIT >> 20} MiB is dropped\n".encode())
                    writing = False
            except OSError:
                writing = False
    except (OSError, ValueError):
        pass
    finally:
        for fd in (pipe, log):
            with contextlib.suppress(OSError):
                if fd >= 0:
                    os.close(fd)


FRUITLESS_TIMEOUTS = 3
"""Timeouts in a row without an accepted answer after which a process that keeps writing is dropped as ``hang``."""
MAX_QUEUED = 10_000
"""Lines a bot wrote that :meth:`_Conn.pump` keeps before it stops reading (a round's answers are far fewer)."""


class _Died(Exception):
    """The bot's pipe closed under us."""


class _Conn:
    """One bot process: its pipes, what is queued for it, the complete lines it wrote."""

    def __init__(self, proc: subprocess.Popen, seat: Place | None, killed: threading.Event) -> None:
        self.proc = proc
        self.killed = killed  # tells its stderr copy (_drain) that the process is gone
        self.seat = seat  # the place (seat, deal copy) it plays in every game; None: the load check's, unplaced
        self.out: list[str] = []
        self.unsent = b""  # the bytes of ``out`` the pipe has not taken yet
        self.buf = b""
        self.lines: list[bytes] = []
        self.given: set[int] = set()  # every game id it was ever given
        self.silent_timeouts = 0
        self.fruitless_timeouts = 0  # timeouts in a row without an accepted answer, lines or not
        self.deadline = 0.0

    def fileno(self) -> int:  # select() on the connection = on its stdout
        return self.proc.stdout.fileno()

    def write_some(self) -> bool:
        """Write what the pipe takes now; True while something is left. _Died when it is closed."""
        if self.out:
            # what the pipe did not take stays bytes: a tail cut mid-character, kept as text, failed to encode on
            # the next write and ended the tournament (red team, session 46: a bot whose own long name was quoted
            # back in a fault line, with a small stdin pipe); backslashreplace: no text can make encoding raise
            self.unsent += "".join(self.out).encode("utf-8", "backslashreplace")
            self.out = []
        if not self.unsent:
            return False
        try:
            n = os.write(self.proc.stdin.fileno(), self.unsent)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, ValueError, OSError):
            raise _Died("closed its stdin") from None
        self.unsent = self.unsent[n:]
        return bool(self.unsent)

    def read_some(self) -> None:
        """Read what is there into ``lines``; a line longer than MAX_LINE is cut at the bound, so the
        buffer never holds more than one bound of a line. _Died when stdout is closed."""
        try:
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            raise _Died("closed its stdout") from None
        if not chunk:
            raise _Died("closed its stdout")
        *lines, self.buf = (self.buf + chunk).split(b"\n")
        self.lines += lines
        if len(self.buf) > MAX_LINE:  # no newline within the bound: it is garbage already, stop buffering it
            self.lines.append(self.buf[: MAX_LINE + 1])
            self.buf = b""

    def pump(self, deadline: float, done) -> bool:
        """Write the queue and read lines until ``done()`` (True) or the deadline (False). Past MAX_QUEUED lines
        waiting to be handled it stops reading: a bot that flooded lines while a game's ending was written to it
        grew this queue by 45M lines (2.5 GB) in 5 s (red team, session 46)."""
        while True:
            writing = self.write_some()
            if done() and not writing:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            reading = [self] if len(self.lines) < MAX_QUEUED else []
            if not reading and not writing:  # nothing to do until the caller takes lines: they are its to handle
                return False
            r, _, _ = select.select(reading, [self.proc.stdin] if writing else [], [], left)
            if r:
                self.read_some()

    def kill(self) -> None:
        """Kill the process and its whole process group (its session: helpers it started die too)."""
        proc = self.proc
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: the group id is the bot's pid
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        finally:  # even when the wait is interrupted (Ctrl-C), the stderr copy must learn to stop
            self.killed.set()


LAST_WORDS = 160
"""Characters of a failed start's last stderr line quoted in its error (the whole stderr stays in the log)."""
TAIL_BYTES = 1024
"""Bytes of a process's stderr its copying thread keeps for :func:`_last_words`."""


def _last_words(tail: bytearray, drain: threading.Thread) -> str:
    """The last line a bot that failed to start wrote to its stderr, for the error: "" when it wrote none. A bot
    that could not even open its script said why only in the log, and the error pointed there (session 46): the
    reason now comes with it. Read from this process's own pipe (``tail``, kept by :func:`_drain`), after its copy
    ended (DRAIN_GRACE after the kill at the latest): the log is shared by the command's other processes, whose
    words are theirs (review, session 46). Only a refusal at load quotes it; a restart's fault detail is public."""
    drain.join(DRAIN_GRACE + 1.0)
    said = [line.strip() for line in bytes(tail).decode("utf-8", "replace").splitlines() if line.strip()]
    if not said:
        return ""
    last = said[-1]
    shown = printable(last[:LAST_WORDS]) + ("..." if len(last) > LAST_WORDS else "")
    return f'; its stderr ends "{shown}"'


def _unended(buf: bytes) -> str:
    """What a bot wrote after its last newline, for the message of a start that saw no line: "" when nothing. Lines
    end with a newline (docs/protocol.md, Framing), and a hello without one was waited for until the start timed out
    and said only "no hello within 20 s" (red team, session 44): it is still no line, and the message now says what
    came, escaped and cut short."""
    if not buf:
        return ""
    # bytes that are no UTF-8 show as U+FFFD: backslashreplace then repr doubled their backslashes, so that they read
    # like a bot that wrote a backslash (review, session 44)
    shown = printable(repr(buf[:60].decode("utf-8", "replace")))
    more = f" (the first 60 of {len(buf):,} bytes)" if len(buf) > 60 else ""
    fix = "end the hello with \\n and flush (docs/protocol.md, Framing)"
    return f"; it wrote {shown}{more} without the newline that ends every line: {fix}"


def _json_value(value: object) -> str:
    """A value from a bot's line, named by its JSON type and shown as JSON, escaped and cut short, for a fault line:
    ``the string "0"``, ``the boolean true``, ``the number 1.0``."""
    if value is JSON_NULL:
        return "null"
    kind = {bool: "boolean", str: "string", float: "number", list: "array", dict: "object"}.get(type(value), "value")
    shown = json.dumps(value, ensure_ascii=True)
    return f"the {kind} {printable(shown if len(shown) <= 40 else shown[:37] + '...')}"


Place = int | tuple[int, int]
"""Which process plays a stream: its seat number, or (seat number, copy of the deal) past a deal's first copy."""


@dataclasses.dataclass
class _Stream:
    wire: int  # the game id the bot sees
    info: dict
    seat: Place  # which process plays it
    faulted: bool = False
    phase: str = "?"  # of the last request, for error messages
    seq: int = -1  # of the last request sent
    faults: list = dataclasses.field(default_factory=list)


def _place_name(place: Place) -> str:
    return str(place) if isinstance(place, int) else f"{place[0]}, copy {place[1] + 1} of its deals"


class ExternalAgent:
    """A ``cmd:COMMAND`` agent. It plays only through ``meld8_env.table.Table`` (arena, tournaments,
    Gymnasium / SB3 opponents, the browser table), which feeds it event streams; ``faults`` counts
    every fault by kind; :meth:`stream_faults` lists one stream's so far."""

    plays_streams = True

    def __init__(self, command: str, rules: RuleConfig | None = None, seed: int = 0,
                 options: BotOptions | None = None, *, fallback) -> None:  # fmt: skip
        self.command = command
        self.name = PREFIX + command
        self.shown_name = printable(self.name)
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:  # "No closing quotation": say whose command it is
            raise BotStartError(f"{self.shown_name}: {exc} (quote it as a shell would)") from None
        if not self.argv:
            raise BotStartError("cmd: needs a command, e.g. 'cmd:python mybot.py'")
        if shutil.which(self.argv[0]) is None:  # refused before its log is written: there would be nothing in it
            raise BotStartError(
                f"{self.shown_name}: cannot start {printable(self.argv[0])!r}: no such program (or not executable)"
            )
        self.rules = rules or RuleConfig()
        self.options = options or BotOptions()
        self.fallback = fallback  # handed in (meld8_env.agent_spec loads options.fallback)
        if self.options.log_dir:
            log_dir = safe_dir(Path(self.options.log_dir), private=False)
        else:
            log_dir = safe_dir(default_log_dir(), private=True)
        self.log_path = log_dir / f"{slug(command)}.stderr.log"
        os.close(open_log(self.log_path))  # a planted link or an unwritable log fails now, in one line
        self.faults = {k: 0 for k in FAULT_KINDS}
        self.restarts = 0
        self.failed_starts = 0
        self.peer: dict = {}
        self._streams: dict[int, _Stream] = {}
        self._by_wire: dict[int, int] = {}
        self._late: collections.Counter[int] = collections.Counter()  # ignored late answers per game id
        self._next_wire = 0
        self._conns: dict[Place | None, _Conn] = {}  # by seat number (and deal copy); None: the load check's process
        self._started: set[Place] = set()  # places that had a process (a new one is a restart)
        self._bodies: dict[int, tuple[dict, str]] = {}  # events shared by several streams, encoded once
        self._shown = 0
        self._log_lost = False  # a restart found the log unwritable (said once)
        self._conns[None] = self._start(None)
        _LIVE.add(self)

    def reseed(self, seed: int) -> None:
        """The bot's process never sees a seed; only the fallback that plays a faulted seat is drawn from it. The
        process is not started again (a seeded Gymnasium reset restarted every bot, 0.1 s and more each)."""
        reseed_in_place(self.fallback, seed)

    @property
    def _proc(self) -> subprocess.Popen | None:
        """A live process of this agent (the first), or None."""
        return next((c.proc for c in self._conns.values()), None)

    @property
    def pids(self) -> list[int]:
        """The process ids of this agent's live bot processes."""
        return [c.proc.pid for c in self._conns.values()]

    def setup(self, rules: RuleConfig) -> None:
        self.rules = rules
        self.fallback.setup(rules)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.act_batch(np.asarray(obs)[None], np.asarray(mask)[None])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        raise TypeError(
            f"{self.shown_name} plays through the seat protocol: seat it with meld8_env.table.Table (tournaments, "
            "training.arena.play, the Gymnasium / SB3 opponents do), not with act_batch"
        )

    # -- the processes ----------------------------------------------------------------------------
    def _start(self, seat: Place | None) -> _Conn:
        """Start the command and exchange hellos; BotStartError says why it failed."""
        _rotate(self.log_path)
        self._log(f"starting {self.command!r}" + ("" if seat is None else f" for seat {_place_name(seat)}"))
        try:
            err = open_log(self.log_path)
        except BotStartError as exc:
            if seat is None:  # loading the agent: refused before anything is played
                raise
            # mid-run the log is meld8's side, not the bot's: a restart plays on without it, said once (disabling
            # the bot would count meld8's fault against it in every game after)
            err = -1
            if not self._log_lost:
                self._log_lost = True
                print(f"meld8: {printable(str(exc))}: the stderr of {self.shown_name} is dropped from now on",
                      file=sys.stderr, flush=True)  # fmt: skip
        try:
            proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                start_new_session=True, preexec_fn=die_with_parent if sys.platform == "linux" else None,
            )  # fmt: skip
        except OSError as exc:
            if err >= 0:
                os.close(err)
            raise BotStartError(
                f"{self.shown_name}: cannot start {printable(self.argv[0])!r}: {exc.strerror or exc}"
            ) from None
        # the drain thread owns the pipe's descriptor and the log's from here (it closes both at its end)
        pipe = os.dup(proc.stderr.fileno())
        proc.stderr.close()
        killed = threading.Event()
        # what this process says on stderr, last TAIL_BYTES: kept only at load, the one refusal that quotes it
        tail = bytearray() if seat is None else None
        drain = threading.Thread(
            target=_drain, args=(pipe, err, killed, tail), name=f"meld8-stderr-{proc.pid}", daemon=True
        )
        drain.start()
        os.set_blocking(proc.stdin.fileno(), False)
        os.set_blocking(proc.stdout.fileno(), False)
        conn = _Conn(proc, seat, killed)
        conn.out = [hello(server=f"meld8 {__version__}", rules_hash=self.rules.rules_hash)]
        try:
            if not conn.pump(time.monotonic() + self.options.startup_timeout, lambda: bool(conn.lines)):
                raise BotStartError(f"no hello within {self.options.startup_timeout:g} s{_unended(conn.buf)}")
            self.peer = decode_hello(conn.lines.pop(0))
        except _Died as exc:  # a hello without its newline, then exit: said as such, not as a bare "closed its stdout"
            conn.kill()
            words = _last_words(tail, drain) if tail is not None else ""
            raise BotStartError(
                f"{self.shown_name}: {exc}{_unended(conn.buf)}{words} (its stderr: {self.log_path})"
            ) from None
        except (BotStartError, ProtocolError) as exc:
            conn.kill()
            words = _last_words(tail, drain) if tail is not None else ""
            said = printable(str(exc))
            raise BotStartError(f"{self.shown_name}: {said}{words} (its stderr: {self.log_path})") from None
        return conn

    def _conn_for(self, key: int, seat: Place) -> _Conn | None:
        """The process of seat number ``seat``, started (or the load check's taken) if there is none;
        None, with the stream faulted, when it cannot be."""
        conn = self._conns.get(seat)
        if conn is not None:
            return conn
        if None in self._conns:  # the load check's process plays the first seat number asked for
            conn = self._conns.pop(None)
        else:
            restart = seat in self._started  # this place's process died, or failed to start: a restart
            # a failed first start is charged as a restart too, and once the charges reach max_restarts no place is
            # started again: a bot whose later processes never greeted was started for each game, never disabled, 20
            # s of hello wait each (red team, session 36). A start that succeeds after a failure is not charged.
            if (restart or self.failed_starts) and self.restarts >= self.options.max_restarts:
                self._fault(key, "disabled", f"not started again after {self.restarts} failed or restarted processes")
                return None
            if restart:
                self.restarts += 1
            try:
                conn = self._start(seat)
            except BotStartError as exc:
                self.failed_starts += 1
                if not restart:
                    self.restarts += 1
                    self._started.add(seat)  # its next start is a restart
                self._fault(key, "crash", f"{'restart' if restart else 'start'} failed: {exc}")
                return None
        conn.seat = seat
        self._conns[seat] = conn
        self._started.add(seat)
        return conn

    def close(self) -> None:
        """Say bye to every process, give them :data:`BYE_GRACE` seconds to exit, then kill their groups."""
        _LIVE.discard(self)
        conns = list(self._conns.values())
        self._conns.clear()
        end = time.monotonic() + BYE_GRACE
        for c in conns:
            c.out.append(encode({"type": "bye"}))
            try:
                c.pump(min(end, time.monotonic() + 1.0), lambda: True)
                c.proc.stdin.close()
            except (_Died, OSError):
                pass
        for c in conns:
            try:
                c.proc.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            c.kill()

    def __del__(self) -> None:  # pragma: no cover - best effort; close() is the contract
        try:
            for c in self._conns.values():
                c.kill()
        except Exception:
            pass

    # -- streams ----------------------------------------------------------------------------------
    def open_stream(self, key: int, info: dict) -> None:
        """A new game seat (``info``: ``seat``, and labels for fault reports; never the seed) this agent plays."""
        wire = self._next_wire
        self._next_wire += 1
        seat = info.get("seat", 0)
        seat = seat if isinstance(seat, int) else 0
        copy = info.get("deal_copy", 0)
        # one process per seat number and copy of a deal: no process sees two seats of one game, nor one deal twice
        # (a tournament plays each board under every seating, in one batch)
        place = seat if not copy or not isinstance(copy, int) else (seat, copy)
        self._streams[key] = _Stream(wire, info, place)
        self._by_wire[wire] = key
        conn = self._conn_for(key, place)
        if conn is not None:
            conn.given.add(wire)

    def stream_faults(self, key: int) -> list[dict]:
        """The faults of stream ``key`` so far (``kind``, ``detail``, ``line``)."""
        st = self._streams.get(key)
        return list(st.faults) if st is not None else []

    def feed(self, key: int, events: list[dict]) -> None:
        st = self._streams[key]
        conn = self._conns.get(st.seat)
        if st.faulted or conn is None:
            return
        cache = self._bodies
        if len(cache) > 4096:
            cache.clear()
        for ev in events:
            if ev["type"] == "request":  # one stream's own: numbered, so a late answer is told from a new one
                st.phase = ev["phase"]
                st.seq += 1
                conn.out.append(encode_for(st.wire, encode_body({"type": "request", "seq": st.seq, **ev})))
                continue
            hit = cache.get(id(ev))
            if hit is None or hit[0] is not ev:  # the cache holds the event, so its id cannot be reused
                hit = cache[id(ev)] = (ev, encode_body(ev))
            conn.out.append(encode_for(st.wire, hit[1]))

    def flush(self) -> None:
        """Write what the pipes take now without waiting (the bots start thinking while other agents
        act; ``act_streams`` writes the rest)."""
        for c in list(self._conns.values()):
            try:
                c.write_some()
            except _Died:
                pass  # act_streams reports it, with the games it hits

    def close_stream(self, key: int) -> list[dict]:
        """The game of this stream ended: its faults (``kind``, ``detail``, ``line``)."""
        st = self._streams.pop(key)
        self._by_wire.pop(st.wire, None)
        conn = self._conns.get(st.seat)
        unsent = conn is not None and (conn.out or conn.unsent)
        if unsent and not any(s.seat == st.seat for s in self._streams.values()):
            try:  # the last games' endings reach the bot before it idles
                conn.pump(time.monotonic() + self.options.timeout, lambda: True)
            except _Died as exc:
                self._dropped(conn, "crash", str(exc), None)
        return st.faults

    def act_streams(self, keys: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Answers to the requests pending in the streams ``keys`` (their observations and masks
        stand by for the fallback)."""
        acts = np.full(len(keys), -1, np.int64)
        need: dict[int, dict[int, int]] = {}  # seat number -> {game id: row}
        for row, key in enumerate(keys.tolist()):
            st = self._streams[key]
            if not st.faulted and st.seat in self._conns:
                need.setdefault(st.seat, {})[st.wire] = row
        if need:
            self._exchange(need, masks, acts)
        rows = np.flatnonzero(acts < 0)
        if rows.size:
            acts[rows] = self.fallback.act_batch(obs[rows], masks[rows])
        return acts

    def _exchange(self, need: dict[int, dict[int, int]], masks: np.ndarray, acts: np.ndarray) -> None:
        """Collect the answers of every process at once; each has its own clock, restarted only by an
        accepted answer."""
        timeout = self.options.timeout
        now = time.monotonic()
        heard: dict[int, bool] = {}  # any line at all: a bot that talks is slow or wrong, not hung
        for seat, waiting in need.items():
            conn = self._conns[seat]
            conn.out.append(encode({"type": "waiting", "games": sorted(waiting)}))
            conn.deadline = now + timeout
            heard[seat] = False
        while True:
            live = [s for s, waiting in need.items() if waiting and s in self._conns]
            if not live:
                return
            now = time.monotonic()
            for seat in live:
                conn = self._conns[seat]
                if conn.lines:
                    heard[seat] = True
                    conn.silent_timeouts = 0
                    while conn.lines and self._conns.get(seat) is conn:
                        if self._answer(conn, conn.lines.pop(0), need[seat], masks, acts):
                            conn.deadline = time.monotonic() + timeout
                            conn.fruitless_timeouts = 0
                # the clock is read after the lines too: a bot that never stops writing ignored lines always has
                # some waiting, and must still time out
                if need[seat] and self._conns.get(seat) is conn and now >= conn.deadline:
                    if conn.proc.poll() is not None:  # it exited: a crash, as the fault table says, not a timeout
                        # (red team, session 46: a helper it started held its stdout open, so no end of file came)
                        code = conn.proc.returncode
                        try:
                            conn.read_some()  # answers it wrote before its exit are taken first (review, s. 46)
                        except _Died as exc:
                            self._dropped(conn, "crash", f"{exc} (exit code {code})", None)
                            need[seat].clear()
                            continue
                        if conn.lines:
                            continue
                        self._dropped(conn, "crash", f"exited (exit code {code}); a process it started holds its "
                                      "stdout", None)  # fmt: skip
                        need[seat].clear()
                        continue
                    for wire in list(need[seat]):
                        self._fault(self._by_wire[wire], "timeout", f"no answer within {timeout:g} s")
                    need[seat].clear()
                    conn.silent_timeouts = 0 if heard[seat] else conn.silent_timeouts + 1
                    conn.fruitless_timeouts += 1
                    if conn.silent_timeouts >= 2:
                        detail = f"not a line in {conn.silent_timeouts} timeouts of {timeout:g} s"
                        self._dropped(conn, "hang", detail, None)
                    elif conn.fruitless_timeouts >= FRUITLESS_TIMEOUTS:
                        # lines, but none an answer: it was never dropped, and each new game cost a whole timeout
                        # (red team, session 46: 356 timeouts in 60 boards)
                        detail = f"no accepted answer in {conn.fruitless_timeouts} timeouts of {timeout:g} s in a row"
                        self._dropped(conn, "hang", detail + " (it wrote lines, none an answer)", None)
            live = [s for s, waiting in need.items() if waiting and s in self._conns and not self._conns[s].lines]
            if not live:
                continue
            readers, writers = [], []
            for seat in live:
                conn = self._conns[seat]
                try:
                    if conn.write_some():
                        writers.append(conn.proc.stdin)
                except _Died as exc:
                    self._dropped(conn, "crash", f"{exc} (exit code {self._exit_code(conn)})", None)
                    continue
                readers.append(conn)
            if not readers:
                continue
            left = max(0.0, min(c.deadline for c in readers) - time.monotonic())
            ready, _, _ = select.select(readers, writers, [], left)
            for conn in ready:
                try:
                    conn.read_some()
                except _Died as exc:
                    self._dropped(conn, "crash", f"{exc} (exit code {self._exit_code(conn)})", None)

    def _answer(self, conn: _Conn, line: bytes, need: dict[int, int], masks: np.ndarray, acts: np.ndarray) -> bool:
        """Take one line of ``conn``: an action for a waiting game (True: accepted), or a fault / a late
        answer ignored (False)."""
        text = printable(line[:300].decode("utf-8", "replace"))
        try:
            game, action, seq = decode_answer(line)
        except ProtocolError as exc:
            self._dropped(conn, "garbage", f"{exc}", text)
            return False
        if isinstance(game, bool) or not isinstance(game, int):  # 9.0 was "game 9.0, which it was never given"
            self._dropped(conn, "garbage", f"game must be an integer game id, got {printable(repr(game))[:80]}", text)
            return False
        if game not in conn.given:
            self._dropped(conn, "unknown_game", f"answered game {game}, which it was never given", text)
            return False
        key = self._by_wire.get(game)
        if key is None or self._streams[key].faulted:
            self._log_late(game, f"late answer for game {game} ignored: {text}")  # ended, or went to the fallback
            return False
        st = self._streams[key]
        if seq is not None:
            wrong = None
            if isinstance(seq, bool) or not isinstance(seq, int):  # "0" was "seq '0', which meld8 never sent (the
                # request's is 0)", and true passed isinstance(int) as 1 until refused (red team, session 44)
                wrong = f"seq must be an integer (the request's seq, {st.seq}), got {_json_value(seq)}"
            elif not 0 <= seq <= st.seq:
                wrong = f"answered with seq {seq}, which meld8 never sent (the request's is {st.seq})"
            if wrong is not None:
                self._fault(key, "garbage", wrong, text)
                if game in need:  # settled: the fallback plays it now, not after a timeout (and a second fault)
                    need.pop(game)
                    return True
                return False
            if seq < st.seq or game not in need:
                self._log_late(game, f"late answer for game {game} (seq {seq}, waiting: {st.seq}) ignored: {text}")
                return False
        if game not in need:
            self._fault(key, "garbage", "answered a game that is not waiting for an answer", text)
            return False
        row = need.pop(game)
        try:
            a = parse_action(action)
        except ValueError as exc:
            self._fault(key, "illegal", printable(str(exc)), text)
            return True
        if not 0 <= a < masks.shape[1] or not masks[row, a]:
            legal = np.flatnonzero(masks[row]).tolist()
            who = f"seat {st.info.get('seat', '?')}"
            # the legal list (the bot's hand, in effect) goes to the bot and its log only: a live table shows the
            # fault to the other players (leak audit, session 36: the web page listed the bot's hand)
            # the public detail names no phase either: which seats a claim window asks is hidden (R22; review, s. 36)
            self._fault(key, "illegal", f"an illegal action for {who} (the bot's log says which)", text,
                        private=illegal_action_message(a, who, st.phase, legal))  # fmt: skip
            return True
        acts[row] = a
        return True

    def _log_late(self, game: int, msg: str) -> None:
        """Log an ignored late answer, the first :data:`LATE_LOGGED` of each game only: a bot flooding stale
        answers costs no fault, and must not fill the disk through meld8's log either."""
        self._late[game] += 1
        if self._late[game] <= LATE_LOGGED:
            self._log(msg)
        if self._late[game] == LATE_LOGGED:
            self._log(f"further late answers for game {game} are ignored without a log line")

    # -- faults -----------------------------------------------------------------------------------
    @staticmethod
    def _exit_code(conn: _Conn) -> int | None:
        try:
            return conn.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return None

    def _dropped(self, conn: _Conn, kind: str, detail: str, line: str | None) -> None:
        """The connection is over (crash, garbage, unknown game, hang): every live game on it faults;
        the process is killed (it gets no fault lines)."""
        if self._conns.get(conn.seat) is conn:
            del self._conns[conn.seat]
        conn.kill()
        hit = [key for key, st in self._streams.items() if not st.faulted and st.seat == conn.seat]
        for key in hit:
            self._fault(key, kind, detail, line)
        if not hit:  # its games had faulted already (the timeouts before a hang): the log still says why it went
            self._log(f"{self.shown_name}: its process was ended ({kind}): {detail}")

    def _fault(self, key: int, kind: str, detail: str, line: str | None = None, private: str | None = None) -> None:
        """Fault stream ``key``: ``detail`` is what anyone may read (its fault records, the terminal, a live table's
        notice); ``private`` (default ``detail``) what only the bot and its log are told."""
        st = self._streams[key]
        st.faulted = True
        fault = {"kind": kind, "detail": detail}
        if line is not None:
            fault["line"] = line
        st.faults.append(fault)
        self.faults[kind] += 1
        # never the seed: the bot can read its own log, and a board's seed gives away the deals of the boards after it
        shown = {k: v for k, v in st.info.items() if k != "seed" and not (k == "deal_copy" and v == 0)}
        where = ", ".join(f"{k} {v}" for k, v in shown.items())
        said = f"{self.shown_name}: {kind} in game {st.wire} ({where}): "
        tail = f"; line: {line}" if line else ""
        # the terminal gets no line: a player at `meld8 play` reads it, and an answer can say what the seat was asked
        msg = printable(said + detail)
        told = printable(said + (private or detail) + tail)
        self._log(told + f"; {self.options.fallback} plays the seat for the rest of the game")
        conn = self._conns.get(st.seat)
        if conn is not None:
            conn.out.append(encode({"type": "fault", "game": st.wire, "kind": kind, "detail": private or detail}))
        self._shown += 1
        if self._shown <= SHOWN_FAULTS:
            more = f" (stderr: {self.log_path})" if self._shown < SHOWN_FAULTS else " (further faults: see the log)"
            print(f"meld8: {msg}; {self.options.fallback} plays on{more}", file=sys.stderr)

    def _log(self, text: str) -> None:
        try:
            fd = open_log(self.log_path)
        except BotStartError:
            return  # the log went away or was replaced by a link: never follow it, never crash for it
        # a full log (LOG_LIMIT + LOG_SLACK) or a full disk ends the log, never the tournament: the faults are in its
        # records
        with contextlib.suppress(OSError), os.fdopen(fd, "a", encoding="utf-8", errors="replace") as f:
            line = f"--- meld8 {time.strftime('%H:%M:%S')}: {printable(text)}\n"
            if len(line.encode("utf-8", "replace")) <= _room(f.fileno(), LOG_LIMIT + LOG_SLACK):
                f.write(line)


__all__ = [
    "BYE_GRACE",
    "PREFIX",
    "BotOptions",
    "BotStartError",
    "ExternalAgent",
    "FAULT_KINDS",
    "default_log_dir",
    "printable",
    "safe_dir",
]
