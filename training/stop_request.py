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

Where SIGINT is ignored when the run starts - a job that a non-interactive shell started in the
background (``nohup cmd &``, ``cmd & disown``): the shell's way of keeping the terminal's Ctrl-C away
from it - it stays ignored, as Python itself leaves it; off the main thread (where no handler can be
set) nothing is installed. In both cases :attr:`StopRequest.active` is False and ``requested`` stays
False unless :meth:`StopRequest.request` is called.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
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
    """``with StopRequest() as stop:``: SIGINT sets ``stop.requested`` instead of raising (see the module
    docstring); ``stop`` is also the callable the loops poll (``stop()`` is ``stop.requested``)."""

    def __init__(self) -> None:
        self.requested = False
        self.active = False
        self._why_not = ""
        self._previous: Any = None

    def __call__(self) -> bool:
        return self.requested

    def request(self) -> None:
        """Ask the run to stop at its next safe point (what the first SIGINT does)."""
        self.requested = True

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        # a handler runs between two bytecodes of the main thread: set a flag and nothing else (printing
        # here could re-enter a write to stderr that the signal cut into)
        self.requested = True
        signal.signal(signal.SIGINT, self._previous)  # the second Ctrl-C stops at once

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is not threading.main_thread():
            self._why_not = "this run is off the main thread, where no SIGINT handler can be set"
            return self
        previous = signal.getsignal(signal.SIGINT)
        if previous is signal.SIG_IGN:
            self._why_not = "SIGINT is ignored in this process (a background job): Ctrl-C and kill -INT do not stop it"
            return self
        if previous is None:  # a handler set outside Python: leave it alone
            self._why_not = "SIGINT has a handler set outside Python; it is left in place"
            return self
        self._previous = previous
        signal.signal(signal.SIGINT, self._on_sigint)
        self.active = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            signal.signal(signal.SIGINT, self._previous)
            self.active = False

    def how_to_stop(self) -> str:
        """The end of a trainer's start line: what Ctrl-C does in this run."""
        return "Ctrl-C saves a checkpoint" if self.active else self._why_not or "Ctrl-C is not taken over"
