"""What the browser test modules share: the Chromium they drive and a uvicorn server in a thread.

``.ci/run`` installs chromium and sets MELD8_REQUIRE_BROWSER=1, so there a missing browser fails
instead of skipping."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest


def chromium_or_skip() -> str:
    """The chromium binary; skips the calling test module when there is none (fails under CI's flag)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("MELD8_REQUIRE_BROWSER"):
            raise RuntimeError("MELD8_REQUIRE_BROWSER is set but chromium is not on PATH (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)
    return found


class Server:
    """uvicorn serving one app on a free local port (or ``port``), in a thread. ``app``: the app, or a function of
    the port returning it (an app that checks the Host it is served as must know its port)."""

    def __init__(self, app: Any | Callable[[int], Any], port: int | None = None) -> None:
        import uvicorn

        if port is None:  # a free one (``port``: a restarted server at a stopped one's address)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        self.port = port
        if not hasattr(app, "router") and callable(app):  # a factory, not a Starlette app
            app = app(self.port)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        end = time.monotonic() + 20
        while not self.server.started:  # a signal from the server itself, not a fixed sleep
            assert time.monotonic() < end, "the server did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
