"""``training.stop_request``: the first SIGINT only asks to stop, the second raises at once, the handler
that was there is back afterwards, and an ignored SIGINT (a background job) stays ignored.

Signals are delivered with ``signal.raise_signal``: the process really receives SIGINT and Python runs
the installed handler before the call returns, so nothing here waits or sleeps."""

from __future__ import annotations

import signal
import threading

import pytest

from training.stop_request import StopRequest, StopRequested, Terminated, check_stop, sigterm_as_interrupt


@pytest.fixture
def sigterm_recorded():
    """SIGTERM with a recording handler in place of the default (which would end pytest): the handler a second
    SIGTERM must reach."""
    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
    yield seen
    signal.signal(signal.SIGTERM, before)


@pytest.fixture
def sigint_as_python_starts():
    """SIGINT with Python's own handler (what a process started from a terminal has), whatever the
    shell that started pytest did (a background job has SIGINT ignored)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_first_sigint_sets_the_flag_the_second_raises_at_once(sigint_as_python_starts):
    with StopRequest() as stop:
        assert stop.active and not stop() and stop.how_to_stop() == "Ctrl-C (or SIGTERM) saves a checkpoint"
        signal.raise_signal(signal.SIGINT)  # would raise KeyboardInterrupt without the StopRequest
        assert stop.requested and stop()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # already put back
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_previous_handler_is_back_however_the_block_is_left(sigint_as_python_starts):
    seen = []
    signal.signal(signal.SIGINT, lambda s, f: seen.append(s))
    mine = signal.getsignal(signal.SIGINT)
    with pytest.raises(RuntimeError), StopRequest() as stop:
        assert signal.getsignal(signal.SIGINT) is not mine
        raise RuntimeError("the run failed")
    assert signal.getsignal(signal.SIGINT) is mine and not stop.requested and not stop.active
    signal.raise_signal(signal.SIGINT)
    assert seen == [signal.SIGINT]


def test_an_ignored_sigint_stays_ignored_and_the_start_line_says_so(sigint_as_python_starts):
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in `nohup meld8 train ... &` from a script
    with StopRequest() as stop:
        assert not stop.active and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)
        assert not stop.requested
        assert "SIGINT is ignored" in stop.how_to_stop()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_off_the_main_thread_nothing_is_installed(sigint_as_python_starts):
    result = {}

    def run() -> None:
        with StopRequest() as stop:
            result["active"], result["line"] = stop.active, stop.how_to_stop()
            stop.request()  # a caller can still ask by hand
            result["requested"] = stop()

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert result == {"active": False, "line": result["line"], "requested": True} and "main thread" in result["line"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_check_stop_raises_past_except_exception():
    check_stop(None, "nowhere")
    check_stop(lambda: False, "nowhere")
    with pytest.raises(StopRequested, match="collecting"):
        try:
            check_stop(lambda: True, "collecting")
        except Exception:  # noqa: BLE001 - the point: a broad handler on the way up must not swallow it
            pytest.fail("StopRequested was caught by `except Exception`")


def test_a_sigterm_asks_like_ctrl_c_and_a_second_reaches_the_handler_before(sigint_as_python_starts, sigterm_recorded):
    """Session 46: a SIGTERM (a scheduler ending the job) ended a run without a checkpoint; it now asks for the stop
    as the first Ctrl-C does, names itself (the exit status is 128 + it), and puts both handlers back."""
    mine = signal.getsignal(signal.SIGTERM)
    with StopRequest() as stop:
        assert signal.getsignal(signal.SIGTERM) is not mine
        signal.raise_signal(signal.SIGTERM)
        assert stop.requested and stop.signum == signal.SIGTERM and sigterm_recorded == []
        assert stop.how_to_stop() == "Ctrl-C (or SIGTERM) saves a checkpoint"  # what the run took, not what is left
        assert (
            signal.getsignal(signal.SIGTERM) is mine and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        )
        signal.raise_signal(signal.SIGTERM)  # the second: the handler that was there
        assert sigterm_recorded == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is mine


def test_a_background_job_with_sigint_ignored_still_stops_on_sigterm(sigint_as_python_starts, sigterm_recorded):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with StopRequest() as stop:
        assert not stop.active and stop.how_to_stop().endswith("; SIGTERM saves one")
        signal.raise_signal(signal.SIGTERM)
        assert stop.requested and stop.signum == signal.SIGTERM
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_sigterm_as_interrupt_raises_where_the_main_thread_is_then_puts_the_handler_back(sigterm_recorded):
    """The RLlib trainer's stop path is ``except KeyboardInterrupt``: a SIGTERM inside the block raises
    ``Terminated`` (a KeyboardInterrupt) there, once; a second goes to the handler that was there before."""
    mine = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), sigterm_as_interrupt() as watch:
        signal.raise_signal(signal.SIGTERM)
    assert watch.seen and signal.getsignal(signal.SIGTERM) is mine and sigterm_recorded == []
    with sigterm_as_interrupt() as watch:
        pass
    assert not watch.seen and signal.getsignal(signal.SIGTERM) is mine
