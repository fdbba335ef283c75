"""Ctrl-C as a request to stop at the next safe point (the SB3 trainer behind ``meld8 train``).

Python turns SIGINT into a ``KeyboardInterrupt`` raised wherever the main thread happens to be: half-way
through writing a checkpoint or a scratch copy, inside a ``finally``, between two ``try`` blocks (where
no handler saves anything), or in a finaliser (where Python prints it and carries on). A trainer that
must save one complete checkpoint whenever it is stopped cannot build on that, so for the length of a
run :class:`StopRequest` takes SIGINT over:

- the first SIGINT only sets :attr:`StopRequest.requested` and puts the previous handler back, so a
  second Ctrl-C raises ``KeyboardInterrupt`` at once (stop now, save nothing);
- the run's loops poll it at safe points (each step of the demonstration games and each minibatch of
  behaviour cloning, each step of the evaluation games, each PPO step) and end by raising
  :class:`StopRequested` (or, in SB3's ``learn``, by the callback returning False); the trainer then
  writes its checkpoint and raises ``training.run_folder.TrainingInterrupted``;
- leaving the ``with`` block puts the previous handler back, however it is left.

SIGTERM (``kill PID``, a job scheduler ending a job, ``docker stop``) is taken over the same way and by
the same rules: the first one of either signal asks for the stop and puts both previous handlers back, so a
second SIGTERM ends the process at once as it always did. Before session 46 a SIGTERM ended a run without any
checkpoint since its last periodic one. :attr:`StopRequest.signum` tells which signal asked (the command's exit
status is 128 + it: 130 for Ctrl-C, 143 for SIGTERM).

Where SIGINT is ignored when the run starts - a job that a non-interactive shell started in the
background (``nohup cmd &``, ``cmd & disown``): the shell's way of keeping the terminal's Ctrl-C away
from it - it stays ignored, as Python itself leaves it; off the main thread (where no handler can be
set) nothing is installed. In both cases :attr:`StopRequest.active` is False; off the main thread ``requested``
stays False unless :meth:`StopRequest.request` is called, while a run with SIGINT ignored still takes SIGTERM.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any


class StopRequested(BaseException):
    """Raised at a safe point of a loop after a stop was requested (a BaseException, like
    ``KeyboardInterrupt``, so that no ``except Exception`` on the way up can swallow it)."""


def check_stop(stop: Callable[[], bool] | None, where: str) -> None:
    """The safe point of a loop: raise :class:`StopRequested` naming ``where`` if ``stop()`` says so."""
    if stop is not None and stop():
        raise StopRequested(where)


class StopRequest:
    """``with StopRequest() as stop:``: SIGINT and SIGTERM set ``stop.requested`` instead of raising or ending
    the process (see the module docstring); ``stop`` is also the callable the loops poll (``stop()`` is
    ``stop.requested``)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self.signum = signal.SIGINT  # the signal that asked for the stop (Ctrl-C when request() was called)
        self.active = False
        self._why_not = ""
        self._previous: dict[int, Any] = {}
        self._taken: tuple[int, ...] = ()  # the signals taken over on entry (how_to_stop reads them, not _previous)

    def __call__(self) -> bool:
        return self.requested

    def request(self) -> None:
        """Ask the run to stop at its next safe point (what the first SIGINT does)."""
        self.requested = True

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # a handler runs between two bytecodes of the main thread: set a flag and nothing else (printing
        # here could re-enter a write to stderr that the signal cut into)
        self.requested = True
        self.signum = signum
        self._restore()  # the second Ctrl-C (or SIGTERM) stops at once

    def _restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is not threading.main_thread():
            self._why_not = "this run is off the main thread, where no SIGINT handler can be set"
            return self
        for sig in self.SIGNALS:
            previous = signal.getsignal(sig)
            if previous is signal.SIG_IGN or previous is None:  # ignored, or a handler set outside Python: left
                if sig == signal.SIGINT:
                    self._why_not = (
                        "SIGINT is ignored in this process (a background job): Ctrl-C and kill -INT do not stop it"
                        if previous is signal.SIG_IGN
                        else "SIGINT has a handler set outside Python; it is left in place"
                    )
                continue
            self._previous[sig] = previous
            signal.signal(sig, self._on_signal)
        self.active = signal.SIGINT in self._previous
        self._taken = tuple(self._previous)
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()
        self.active = False

    def how_to_stop(self) -> str:
        """The end of a trainer's start line: what Ctrl-C does in this run."""
        if signal.SIGTERM in self._taken:
            return "Ctrl-C (or SIGTERM) saves a checkpoint" if self.active else f"{self._why_not}; SIGTERM saves one"
        return "Ctrl-C saves a checkpoint" if self.active else self._why_not or "Ctrl-C is not taken over"


class Terminated(KeyboardInterrupt):
    """A SIGTERM raised in the main thread as an interrupt (:func:`sigterm_as_interrupt`)."""


class SigtermWatch:
    """What :func:`sigterm_as_interrupt` yields: ``seen`` turns True when a SIGTERM came (Ray may catch the
    :class:`Terminated` inside a remote call and raise a plain ``KeyboardInterrupt`` in its place)."""

    def __init__(self) -> None:
        self.seen = False


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[SigtermWatch]:
    """For a run whose stop path is ``except KeyboardInterrupt`` (the RLlib trainer): a SIGTERM raises
    :class:`Terminated` where the main thread is, so it saves a checkpoint as Ctrl-C does. Ray's driver sets its own
    SIGTERM handler (``sys.exit``), which skipped the save and left Ray's traceback; a second SIGTERM goes to the
    handler that was there before. Off the main thread, or with SIGTERM ignored, nothing is changed."""
    watch = SigtermWatch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN or previous is None:
        yield watch
        return

    def _raise(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, previous)
        watch.seen = True
        raise Terminated

    signal.signal(signal.SIGTERM, _raise)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGTERM, previous)
