"""Helpers for the tests that watch processes end (not a test module)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def gone(pid: int, wait: float = 10.0) -> bool:
    """Whether ``pid`` has exited (or is a zombie) within ``wait`` seconds: polled, not a fixed sleep."""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie child of this process counts as gone
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        try:  # a zombie that is not our child: its state follows the command name's closing parenthesis
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, IndexError):
            pass
        time.sleep(0.05)
    return False


# -- targets for training.worker_pool's tests (module level: a spawned worker imports them by name) --------------
def pool_setup(fail: bool) -> None:
    if fail:
        raise ValueError("the set-up failed")


def pool_double(task: int) -> int:
    """Twice the task; 7 raises, -1 ends the worker without an answer (as a kill or a crash in C would)."""
    if task == 7:
        raise ValueError("seven is refused")
    if task == -1:
        os._exit(3)
    time.sleep(0.001 * (task % 3))  # answers come back out of order
    return 2 * task


def pool_done() -> None:
    pass


class SigintWhenSent:
    """Sends this process a SIGINT when pickled, as a worker's start-up arguments are in the parent while the
    workers start (a Ctrl-C in that window, on cue); a worker unpickles it as 0."""

    def __reduce__(self):
        import signal

        os.kill(os.getpid(), signal.SIGINT)
        return (int, (0,))
