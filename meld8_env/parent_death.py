"""Child processes that end with their parent (Linux ``PR_SET_PDEATHSIG``).

A process started for meld8 (a bot's seat process, a tournament's worker) must not outlive the meld8 that started it:
killed with ``kill`` or ``kill -9``, that parent runs no cleanup, and a worker busy on a task of boards plays on for
minutes, its results going nowhere. :func:`die_with_parent` asks the kernel to signal the calling process when its
parent ends. It is safe between ``fork`` and ``exec`` (``subprocess``'s ``preexec_fn``): the C library handle is
loaded at import, so the call itself imports nothing. Elsewhere than Linux it does nothing and says so (False).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

__all__ = ["die_with_parent"]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_LIBC: ctypes.CDLL | None = None
if sys.platform.startswith("linux"):
    try:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    except OSError:  # no C library to load: nothing to ask
        _LIBC = None


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> bool:
    """Have the kernel send ``sig`` to this process when its parent exits; True if the request took.

    ``parent``: the pid of the parent the caller expects. A parent that ended before the request took effect
    cannot signal any more (this process was re-parented), so then this process exits at once (status 1).
    The signal follows the parent *thread* that started this process (``prctl(2)``): start such children from a
    thread that lives as long as they should."""
    if _LIBC is None:
        return False
    try:
        if _LIBC.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            return False
    except (AttributeError, OSError):  # a libc without prctl
        return False
    if parent is not None and os.getppid() != parent:
        os._exit(1)
    return True
