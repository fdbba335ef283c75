"""Starting Ray quietly, for both places meld8 starts it (``meld8 train --backend rllib`` and
``meld8 tournament --backend ray``).

Ray prints start-up notices that say nothing about a meld8 run: the token-auth notice, RLlib's "new
API stack" warning, a core-worker "E" line about actor constructor arguments, RLlib's own
DeprecationWarnings about its internals, "Install gputil for GPU system monitoring". All but the "E"
line go through the ``ray`` loggers: :func:`quiet_ray` raises them to errors only and says so in one
line, which also explains the "E" line (Ray's C++ core prints it; silencing it through
``RAY_BACKEND_LOG_LEVEL`` prints a notice of its own). ``MELD8_RAY_VERBOSE=1`` shows everything
again; errors are never hidden.
"""

from __future__ import annotations

import logging
import os

from training.run_folder import say

VERBOSE = "MELD8_RAY_VERBOSE"


LOGGERS = ("ray", "ray.rllib", "ray.tune", "ray.data")


def quiet_ray(what: str) -> None:
    """Before ``ray.init``: Ray's notices and warnings off (errors stay), one line saying so; call
    :func:`quiet_loggers` again after ``ray.init`` (which may set its loggers up anew)."""
    if os.environ.get(VERBOSE):
        return
    quiet_loggers()
    say(f"meld8: starting Ray for {what} (its notices and warnings are hidden, {VERBOSE}=1 shows them; a line "
        "'E ... core_worker ... constructor arguments' from Ray's C++ core is harmless)")  # fmt: skip


def quiet_loggers() -> None:
    """Ray's Python loggers at errors only (token notice, API stack, deprecations, gputil)."""
    if os.environ.get(VERBOSE):
        return
    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
