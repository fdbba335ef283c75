"""The play table's broadcast against a page that stops reading (a hung tab, a client stopped without closing its
socket): every move's state goes to every open page through that page's own outbox, so such a page is dropped
once it leaves meld8_app.web.app.MAX_BACKLOG states unread, and never holds up the other tabs. A real server
(uvicorn) and real sockets: the in-process TestClient has no send buffers to fill."""

from __future__ import annotations

import base64
import json
import os
import socket
import time

import pytest

pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
ws_client = pytest.importorskip("websockets.sync.client", reason="websockets (the web extra)")

from browser_kit import Server  # noqa: E402

MOVES = 700  # before the outbox, one page that never read froze every tab after about 450 moves (3.3 MB of states)


def _hung_page(port: int) -> socket.socket:
    """A websocket opened by hand (a 4 KB receive buffer) that never reads what the table sends."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        f"GET /ws/play HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0], head
    return s


def _state(ws, timeout: float = 20.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.01, end - time.monotonic())))
        if msg["type"] == "state":
            return msg["state"]


def test_a_page_that_never_reads_holds_up_no_other_tab():
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    server = Server(
        lambda port: create_app("play", new_game=lambda: LiveGame(["greedy", "defensive"], seed=3), port=port)
    )
    hung = _hung_page(server.port)
    try:
        with ws_client.connect(f"ws://127.0.0.1:{server.port}/ws/play", max_size=None, open_timeout=10) as ws:
            st = _state(ws)
            for _ in range(MOVES):
                req = st["request"]
                ids = [a["id"] for a in req["actions"]] if req else []
                act = next((i for i in (52, 53, 63) if i in ids), ids[-1] if ids else None)
                ws.send(json.dumps({"new_game": True} if act is None else {"action": act, "seq": st["seq"]}))
                st = _state(ws)  # with the hung page in the broadcast this timed out for good
            ws.send(json.dumps({"action": 999}))  # and the loop still answers at once
            assert "illegal" in json.loads(ws.recv(timeout=20))["message"]
        # the hung page, reading at last, gets what was buffered and then the end of the connection (its tab
        # reconnects and is shown the table as it is), not a socket left open and silent for ever
        hung.settimeout(20)
        while chunk := hung.recv(1 << 16):
            assert chunk
    finally:
        hung.close()
        server.stop()


def test_a_state_that_cannot_be_sent_is_said_on_the_terminal(capfd):
    """A fault of the table's own in sending a state (here a state JSON cannot encode) is printed where meld8 was
    started, not swallowed with the page (every tab would drop and reconnect with nothing said)."""
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    class Broken(LiveGame):
        calls = 0

        def state(self) -> dict:
            s = super().state()
            Broken.calls += 1
            if Broken.calls > 1:  # the first state goes out; the one after the move cannot
                s["oops"] = {1, 2}  # a set: not JSON
            return s

    server = Server(
        lambda port: create_app("play", new_game=lambda: Broken(["greedy", "defensive"], seed=3), port=port)
    )
    try:
        with ws_client.connect(f"ws://127.0.0.1:{server.port}/ws/play", max_size=None, open_timeout=10) as ws:
            st = _state(ws)
            act = [a["id"] for a in st["request"]["actions"]][-1]
            ws.send(json.dumps({"action": act, "seq": st["seq"]}))
            with pytest.raises(Exception):  # noqa: B017 - the server ends the connection (or stays silent)
                _state(ws, timeout=5)
    finally:
        server.stop()
    assert "meld8 play: a page's state could not be sent: TypeError" in capfd.readouterr().err
