"""Torch's intra-op threads around small forward passes that share the machine's cores with C threads.

Torch runs each op on one thread per core by default, and its idle workers go on spinning for a while after
each op. The search agent asks its networks about a handful of rows at a time, between rollouts that keep every
core busy with threads of their own (``meld8_env.rollout``): the spinning workers then take cores from the
rollouts. :func:`one_torch_thread` runs a block on one intra-op thread and gives the caller's setting back
when the last block open on any thread ends. Changing the setting costs under a microsecond, and the shipped
network's output on a batch is the same bit for bit at one or two threads (session 42, on 2,048 stored decisions at
batch sizes 1, 64 and 2,048).

Measured (``python bench/ab.py --baseline <worktree of b9bc0b1> --rounds 3 bench/search_speed.py --spec SPEC
--states 150 --batch 64``, session 42, ``docs/speed_runs/search_torch_threads_s42.txt``): ``search:worlds=96+prior=
distilled+keep=prior`` 16.86 -> 12.49 ms median a decision (x0.741) and 29.9 -> 17.5 CPU ms (x0.587);
``search:prior=distilled+keep=prior`` 13.72 -> 8.25 ms (x0.601); the same decisions and rollouts. Large batches are
another matter: a ``distilled`` seat playing 64 games at once is faster on two threads (239 against 168 games/s,
``bench/seated_speed.py``), so :class:`agents.policy.PolicyAgent` itself keeps torch's default.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

# torch's setting is the process's: blocks open on several threads at once (the web table plays each table's game on
# a thread of its own) share it, the first to enter keeps the caller's setting and the last to leave restores it (one
# restoring on its own would have left another's 1 for good, or set 1 back under a block still running)
_lock = threading.Lock()
_open = 0
_saved = 0


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)``; the caller's thread count is restored when the last block
    open on any thread ends."""
    import torch

    global _open, _saved
    with _lock:
        if _open == 0:
            _saved = torch.get_num_threads()
            torch.set_num_threads(1)
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0:
                torch.set_num_threads(_saved)
