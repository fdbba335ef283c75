"""Shared fixtures: every hand test runs on both backends (C and the pure-Python twin)."""

from __future__ import annotations

import signal

import pytest

import meld8_env.hands as hands

# A shell starts background jobs with SIGINT ignored, and an ignored signal stays ignored across exec: a
# suite run as `make test &` would hand that to every meld8 process its tests start, so the tests that
# press Ctrl-C (SIGINT) on a tournament, a trainer or the web table would wait for an exit that never
# comes. A handler (unlike SIG_IGN) is reset to the default at exec, so the children get Python's own.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(params=["c", "python"])
def backend(request):
    """Run the test once per evaluator backend; restores the previous one afterwards."""
    previous = hands.BACKEND
    hands.set_backend(request.param)
    yield request.param
    hands.set_backend(previous)


class Hung(Exception):
    """Raised by :func:`alarm`: a read that blocks (not an OSError, which ``meld8`` would report as one line)."""


@pytest.fixture
def alarm():
    """Turns a read that blocks into :class:`Hung` after a few seconds (without a fix the test fails, not hangs)."""

    def hung(*_):
        raise Hung("a read blocked")

    old = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, 20)
    yield
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)
