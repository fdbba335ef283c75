"""The play table's broadcast against a page that stops reading (a hung tab, a client stopped without closing its
socket): every move's state goes to every open page through that page's own outbox, so such a page is dropped
once it leaves meld8_app.web.app.MAX_BACKLOG states unread, and never holds up the other tabs. A real server
(uvicorn) and real sockets: the in-process TestClient has no send buffers to fill."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
ws_client = pytest.importorskip("websockets.sync.client", reason="websockets (the web extra)")

from browser_kit import Server  # noqa: E402

MOVES = 700  # before the outbox, one page that never read froze every tab after about 450 moves (3.3 MB of states)


def _hung_page(port: int, query: str = "") -> socket.socket:
    """A websocket opened by hand (a 4 KB receive buffer) that never reads what the table sends."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        f"GET /ws/play{query} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
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


def _frame(text: bytes) -> bytes:
    """One masked text frame from a client (the payload shorter than 126 bytes)."""
    mask = os.urandom(4)
    return bytes([0x81, 0x80 | len(text)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(text))


def _queues(server_port: int, client_port: int) -> tuple[int, int]:
    """(bytes unsent, bytes unread) of the server's socket to this client (/proc/net/tcp, Linux)."""
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, _, queues = row.split()[1:5]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == client_port:
            tx, rx = queues.split(":")
            return int(tx, 16), int(rx, 16)
    return 0, 0


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the server's send queue from /proc/net/tcp")
def test_ctrl_c_stops_the_server_while_a_client_that_never_reads_holds_its_buffers_full():
    """Red team, session 34: with such a client connected, Ctrl-C left `meld8 play` waiting for that connection to
    close for good (uvicorn said so only at its info level). Now it waits meld8_app.web.app.SHUTDOWN_GRACE seconds
    and says in one line that it closed what was still open."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cmd = [sys.executable, "-m", "meld8_app", "play", "--no-browser", "--port", str(port), "--agents", "greedy,greedy"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        token = re.search(r"\?token=(\S+)", proc.stdout.readline()).group(1)
        end = time.monotonic() + 30
        while True:  # "the table is at" is printed before uvicorn listens
            try:
                hung = _hung_page(port, f"?token={token}")
                break
            except ConnectionRefusedError:
                assert time.monotonic() < end and proc.poll() is None, "the server did not start"
                time.sleep(0.05)
        with hung:
            hung.setblocking(False)
            bad = _frame(b'{"action": 999}')  # each one answered with an error and a state the page never reads
            client_port = hung.getsockname()[1]
            end = time.monotonic() + 60
            # the state that hung Ctrl-C: the page dropped for its backlog (its handler no longer takes its frames) and
            # the server's buffer to it full. The signal to wait for: the server stopped reading (its receive queue
            # full) and its send queue holds still for a second (a page still served keeps growing it until dropped)
            last, still = (-1, -1), time.monotonic()
            while True:
                now = _queues(port, client_port)
                if now != last:
                    last, still = now, time.monotonic()
                elif min(now) >= 1 << 16 and time.monotonic() - still > 1.0:
                    break
                assert time.monotonic() < end, f"the server's queues never filled: {now}"
                for _ in range(200):
                    try:
                        hung.send(bad)
                    except BlockingIOError:
                        break
                time.sleep(0.05)
            stopped = time.monotonic()
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail("Ctrl-C did not stop the server within 30 s while a client held its buffers full")
            took = time.monotonic() - stopped
        err = proc.stderr.read()
        assert proc.returncode == 0, err
        assert took < 15, took
        # the one line, when it had to close a connection (a busy machine may not have dropped the page yet)
        assert err in ("", "meld8: closed the connections still open after 3 s\n"), err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
