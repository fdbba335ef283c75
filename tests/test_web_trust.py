"""The browser table is a local server no other website may use (issue 22 §1), tested with the real
app in Starlette's TestClient: Host and Origin checks on every route and the websocket, the launch
token, the seed hidden until the game is over, the fallback for an agent that fails mid-game, a game
that cannot start, hostile messages, and closing a game off the event loop.

The hostile cases a browser is the natural client for are in tests/test_web_browser_trust.py."""

from __future__ import annotations

import hashlib
import sys
import threading
import time
from pathlib import Path

import pytest

from meld8_app.web.session import LiveGame
from meld8_env.rules import RuleConfig

pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from meld8_app.web.app import create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAULTY = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'faulty_bot.py'}"
RULES = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1)
ROUTES = ["/", "/api/config", "/api/replay", "/api/review", "/static/app.js"]
GOOD = "http://127.0.0.1:8008"


def _app(token=None, **kw):
    kw.setdefault("new_game", lambda: LiveGame(["greedy", "random"], seat=0, seed=4, rules=RULES))
    return create_app("play", token=token, port=8008, **kw)


def _client(app, base=GOOD) -> TestClient:
    return TestClient(app, base_url=base)


# -- who may talk to the server ---------------------------------------------------------------------
BAD_HOSTS = ["evil.example", "evil.example:8008", "127.0.0.1.evil.example:8008", "localhost.evil:8008",
             "127.0.0.2:8008", "[::2]:8008", "127.0.0.1:9999", "", "[::1]evil.example:8008", "[::1]:8008x",
             "[::1"]  # fmt: skip
GOOD_HOSTS = ["127.0.0.1:8008", "localhost:8008", "[::1]:8008", "LOCALHOST:8008"]


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_refuses_a_host_it_is_not_served_as(route):
    client = _client(_app())
    for host in BAD_HOSTS:  # DNS rebinding: evil.example resolving to 127.0.0.1 sends Host: evil.example
        r = client.get(route, headers={"host": host})
        assert r.status_code == 403 and "refused: Host" in r.json()["error"], (host, r.status_code)
    for host in GOOD_HOSTS:
        assert client.get(route, headers={"host": host}).status_code in (200, 404), host


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_refuses_another_origin(route):
    client = _client(_app())
    for origin in ["http://evil.example", "null", "http://127.0.0.1:9999", "file://", "http://localhost:8008"]:
        r = client.get(route, headers={"origin": origin})
        assert r.status_code == 403 and "may not use this server" in r.json()["error"], origin
    assert client.get(route, headers={"origin": GOOD}).status_code in (200, 404)


def test_two_origin_or_host_headers_are_refused():
    client = _client(_app())
    for pairs in ([("origin", GOOD), ("origin", "http://evil.example")], [("origin", "http://evil.example"),
                  ("origin", GOOD)], [("host", "127.0.0.1:8008"), ("host", "evil.example:8008")]):  # fmt: skip
        r = client.get("/api/config", headers=pairs)
        assert r.status_code == 403 and "more than one" in r.json()["error"], pairs


def test_the_websocket_refuses_other_hosts_and_origins():
    client = _client(_app())
    bad = [{"host": h} for h in BAD_HOSTS] + [{"origin": o} for o in ["http://evil.example", "null", "http://x:8008"]]
    for headers in bad:
        with pytest.raises(WebSocketDisconnect) as err:
            with client.websocket_connect("ws://127.0.0.1:8008/ws/play", headers=headers) as ws:
                ws.receive_json()
        assert err.value.code == 1008, headers
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play", headers={"origin": GOOD}) as ws:
        assert ws.receive_json()["type"] == "state"


def test_the_launch_token_is_needed_and_kept_in_a_strict_cookie():
    client = _client(_app(token="s3cret-token"))
    for route in ROUTES:
        r = client.get(route)
        assert r.status_code == 403 and "launch token" in r.json()["error"], route
        assert client.get(route + "?token=wrong").status_code == 403
    with pytest.raises(WebSocketDisconnect):
        with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
            ws.receive_json()
    r = client.get("/?token=s3cret-token")
    assert r.status_code == 200
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # the page's own requests now carry the cookie: the API and the socket answer
    assert client.get("/api/config").json() == {"mode": "play"}
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        assert ws.receive_json()["type"] == "state"
    other = _client(_app(token="s3cret-token"))
    other.cookies.set(cookie.split("=")[0], "wrong")
    assert other.get("/api/config").status_code == 403


def test_a_token_that_is_not_ascii_is_refused_in_one_line():
    client = _client(_app(token="s3cret-token"))
    for bad in ["%C3%A9", "%FF", "s3cret-token%C3%A9"]:  # compare_digest raised TypeError on a non-ASCII str: a 500
        r = client.get(f"/api/config?token={bad}")
        assert r.status_code == 403 and "launch token" in r.json()["error"], bad
    name = f"meld8_{hashlib.sha256(b's3cret-token').hexdigest()[:12]}"  # the app's cookie for this token
    assert client.get("/api/config", headers={"cookie": f"{name}=".encode() + b"\xc3\xa9"}).status_code == 403


def test_the_token_cookie_is_found_among_many_others():
    """The token cookie is read by a plain split (``app._cookie``): SimpleCookie took 0.56 s per 16 KB header
    (quadratic), on the event loop, before refusing a request without the token (red team, session 33). Its time
    is measured in ``bench/hostile_input.py``, not here."""
    from meld8_app.web.app import _cookie

    client = _client(_app(token="s3cret-token"))
    name = f"meld8_{hashlib.sha256(b's3cret-token').hexdigest()[:12]}"
    assert client.get("/api/config", headers={"cookie": f"theme=dark; {name}=s3cret-token; x=1"}).status_code == 200
    assert client.get("/api/config", headers={"cookie": f"{name}x=s3cret-token"}).status_code == 403
    slow = 'a="' + "\\" * 8000 + '"'  # what made SimpleCookie quadratic
    assert client.get("/api/config", headers={"cookie": slow}).status_code == 403
    # every launch sets its own cookie: after ~90 launches the header passes 4 KB, and the token must still be found
    others = "; ".join(f"meld8_{k:012x}=t{k}" for k in range(200))
    assert client.get("/api/config", headers={"cookie": f"{others}; {name}=s3cret-token"}).status_code == 200
    assert _cookie(f"a=1; {name}=t", name) == "t" and _cookie("a", "a") == "" and _cookie(slow, name) == ""


def _ran(server, _) -> None:
    """uvicorn.Server.run's stand-in: no socket is opened, and the server counts as started (serve exits 3 when a
    server never started, as uvicorn.run does)."""
    server.started = True


@pytest.fixture
def quiet_uvicorn_config(monkeypatch):
    """uvicorn.Config built in this process, without its logging setup: that runs logging.config.dictConfig, which
    closes every logging handler of the process, pytest's capture among them (the next test's teardown then failed
    with "I/O operation on closed file"). What serve hands the Config is unchanged."""
    import uvicorn

    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)


def test_the_printed_link_carries_a_fresh_token(monkeypatch, capsys, quiet_uvicorn_config):
    import uvicorn

    from meld8_app.web import app as web

    made = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: _ran(self, made.append(self.config.app)))
    for _ in range(2):
        web.serve(lambda **guard: create_app("view", replay={"frames": []}, **guard), "127.0.0.1", 8123, False)
    links = [x.split("at ")[1].split()[0] for x in capsys.readouterr().out.splitlines()]
    assert len(links) == 2 and links[0] != links[1] and all("/?token=" in x for x in links)
    client = TestClient(made[0], base_url="http://127.0.0.1:8123")
    assert client.get("/api/replay").status_code == 403
    assert client.get("/api/replay?token=" + links[0].split("=")[1]).status_code == 200
    fresh = TestClient(made[0], base_url="http://127.0.0.1:8123")  # no cookie from the first launch's link
    assert fresh.get("/api/replay?token=" + links[1].split("=")[1]).status_code == 403


def test_the_server_caps_its_connections_and_refuses_a_bad_cap(monkeypatch, capsys, quiet_uvicorn_config):
    """Red team, session 44: uvicorn ran with no connection cap, so a flood of connections could exhaust the process.
    serve hands uvicorn's Config limit_concurrency (64 unless told; the web commands' --limit-concurrency); a cap that
    is no positive integer is refused in one line before the link is printed."""
    import uvicorn

    from meld8_app.web import app as web

    view = lambda **guard: create_app("view", replay={"frames": []}, **guard)  # noqa: E731
    assert web.LIMIT_CONCURRENCY == 64
    assert web.server_config(view(), "127.0.0.1", 8123).limit_concurrency == 64
    assert web.server_config(view(), "127.0.0.1", 8123, limit_concurrency=8).limit_concurrency == 8
    configs = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: _ran(self, configs.append(self.config)))
    web.serve(view, "127.0.0.1", 8123, False)
    web.serve(view, "127.0.0.1", 8123, False, limit_concurrency=9)
    assert [c.limit_concurrency for c in configs] == [64, 9] and all(c.port == 8123 for c in configs)
    capsys.readouterr()
    for bad in (0, -1, 1, 7, True, 1.5, "8", None, 65_536):  # 1: every request its own 503 (review, session 44)
        with pytest.raises(ValueError) as err:
            web.serve(view, "127.0.0.1", 8123, False, limit_concurrency=bad)
        assert str(err.value) == ("limit_concurrency must be an integer 8..65,535 (open connections, a request's "
                                  "own counted, past which a request is answered 503; default 64), "
                                  f"got {bad!r}")  # fmt: skip
        with pytest.raises(ValueError, match="^limit_concurrency must be an integer 8..65,535"):
            web.server_config(view(), "127.0.0.1", 8123, limit_concurrency=bad)
    assert len(configs) == 2 and capsys.readouterr().out == ""  # refused before the link was printed
    from meld8_app.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a.choices, dict))
    for name in ("play", "view", "review"):  # the option's help states serve's default
        option = next(a for a in sub.choices[name]._actions if a.dest == "limit_concurrency")
        assert f"; default {web.LIMIT_CONCURRENCY}:" in option.help and option.default is None


def _start_view(tmp_path: Path, *more: str):
    """``meld8 view`` of a one-board tournament's first game (played into ``tmp_path``) on a free port, no browser,
    with the options ``more``: (process, port). The caller reads the link (:func:`_token`) and ends the process."""
    import os
    import socket
    import subprocess

    from meld8_app.cli import main

    assert main(["tournament", "--agents", "random,random,greedy", "--boards", "1", "--out", str(tmp_path)]) == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "meld8_app", "view", str(tmp_path / "games.jsonl"), "--game", "0", "--port",
           str(port), "--no-browser", *more]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy()), port


def _token(proc) -> str:
    """The launch token of the link a web command prints just before uvicorn starts to listen."""
    line = proc.stdout.readline()
    assert "token=" in line, line + proc.stderr.read()
    return line.split("token=")[1].split()[0]


def test_a_request_past_the_cap_is_answered_503(tmp_path):
    """The cap at work in a real server (meld8 view --limit-concurrency 8, the smallest): with seven kept-alive
    connections open, the next connection's request is the eighth and is answered 503; once those are closed,
    requests are served again."""
    import http.client
    import signal

    proc, port = _start_view(tmp_path, "--limit-concurrency", "8")

    def get(conn: http.client.HTTPConnection) -> int:
        conn.request("GET", f"/api/config?token={token}", headers={"Host": f"127.0.0.1:{port}"})
        r = conn.getresponse()
        r.read()
        return r.status

    try:
        token = _token(proc)
        end = time.monotonic() + 30
        while True:  # until the port answers (the server's own signal that it listens), not a fixed sleep
            try:
                held = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                assert get(held) == 200  # answered, and kept alive: the server holds this connection
                break
            except ConnectionRefusedError:
                assert time.monotonic() < end and proc.poll() is None, "the server did not start"
                time.sleep(0.05)
        others = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(6)]
        assert [get(c) for c in others] == [200] * 6  # the 2nd..7th connections, each held open
        second = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        assert get(second) == 503
        second.close()
        held.close()
        for c in others:
            c.close()
        end = time.monotonic() + 30
        while True:  # served again once the server has seen both connections close (its signal: a 200)
            third = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            status = get(third)
            third.close()
            if status == 200:
                break
            assert status == 503 and time.monotonic() < end, status
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err, err


# -- the live game ----------------------------------------------------------------------------------
def _play_out(ws, state, limit=400):
    """Click the first legal action until the game is over; returns the states seen and other messages."""
    states, others = [state], []
    while state["request"] is not None and limit:
        limit -= 1
        ws.send_json({"action": state["request"]["actions"][0]["id"], "seq": state["seq"]})
        while True:
            msg = ws.receive_json()
            if msg["type"] == "state":
                state = msg["state"]
                states.append(state)
                break
            others.append(msg)
    return states, others


def test_the_seed_reaches_the_page_only_once_the_game_is_over():
    for seed in (1, 2, 3):
        client = _client(_app(new_game=lambda s=seed: LiveGame(["greedy", "random"], seat=1, seed=s, rules=RULES)))
        with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
            states, _ = _play_out(ws, ws.receive_json()["state"])
        assert states[-1]["request"] is None and states[-1]["seed"] == seed
        assert all(st["seed"] is None for st in states[:-1])
        assert all(str(seed) not in str(st.get("replay_file")) for st in states[:-1])


@pytest.mark.parametrize(
    "agent", ["tests.bots.flaky_agent:FlakyAgent", f"cmd:{FAULTY} garbage 2", f"cmd:{FAULTY} crash 2"]
)
def test_an_agent_failing_mid_game_is_replaced_by_the_fallback_and_the_page_is_told(agent, capfd):
    client = _client(_app(new_game=lambda: LiveGame([agent, "random"], seat=0, seed=987654, rules=RULES)))
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        first = ws.receive_json()
        notes = []
        if first["type"] == "error":  # it may fail before the human's first turn
            notes.append(first)
            first = ws.receive_json()
        states, others = _play_out(ws, first["state"])
    notes += [m for m in others if m.get("notice")]
    assert states[-1]["request"] is None  # the game finished: nobody is stuck on "it is not your turn"
    assert len(notes) == 1 and "seat 1" in notes[0]["message"] and "greedy plays that seat" in notes[0]["message"]
    assert states[-1]["notices"] == [notes[0]["message"]]
    out = capfd.readouterr()  # the fault's report on the terminal must not give the live game's seed away
    assert "987654" not in out.out + out.err + notes[0]["message"]


def test_a_game_that_cannot_start_says_why_and_keeps_the_connection():
    calls = []

    def broken():
        calls.append(1)
        return LiveGame(["no_such_agent"], seat=0, rules=RULES)

    client = _client(_app(new_game=broken))
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        msg = ws.receive_json()
        assert msg["type"] == "error" and msg["fatal"] and "cannot start" in msg["message"]
        assert "unknown agent 'no_such_agent'" in msg["message"]
        for again in ({"new_game": True}, {"action": 1, "seq": 0}):
            ws.send_json(again)  # still connected: each try is answered with the reason
            assert "cannot start" in ws.receive_json()["message"]
    assert len(calls) == 3


HOSTILE_TEXT = [
    "[" * 100_000 + "]" * 100_000,  # json.loads: RecursionError
    '{"action": ' + "[" * 50 + "]" * 50 + "}",
    '{"action": ' + "9" * 5000 + ', "seq": 0}',  # json.loads: ValueError (int digit limit)
    '{"action": 1, "seq": ' + "1" * 30 + "}",
    '{"action": "' + "x" * 10_000 + '"}',
    "\ud800",
    "not json",
    "[]",
    "null",
    '{"action": 1, "seq": 1e400}',  # numbers JSON does not have: garbage, like the lines above (session 47)
    '{"action": NaN, "seq": 0}',
]
BAD_MOVES = [
    '{"action": {"a": [1]}, "seq": 0}',
    '{"new_game": "no"}',
    '{"new_game": 1}',
]  # only true starts a new game (and only once this one is over)


def test_hostile_messages_get_an_error_and_the_connection_stays():
    client = _client(_app())
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        st = ws.receive_json()["state"]
        for text in HOSTILE_TEXT:
            ws.send_text(text)
            assert ws.receive_json()["type"] == "error", text[:40]
        for text in BAD_MOVES:  # messages, but not moves: an error, then the unchanged table
            ws.send_text(text)
            assert ws.receive_json()["type"] == "error", text
            assert ws.receive_json()["state"]["seq"] == st["seq"]
        for blob in (b"\x00\x01", b'{"action": 1}', b"x" * 100_000):
            ws.send_bytes(blob)
            assert "binary frames" in ws.receive_json()["message"]
        ws.send_json({"action": st["request"]["actions"][0]["id"], "seq": st["seq"]})  # and it still plays
        assert ws.receive_json()["state"]["seq"] > st["seq"]


def _refused(ws, st: dict, msg: dict) -> str:
    """The error a message gets; the table it leaves is ``st``'s (the same game, nothing played)."""
    ws.send_json(msg)
    err = ws.receive_json()
    assert err["type"] == "error", (msg, err)
    after = ws.receive_json()["state"]
    assert (after["game_id"], after["seq"], after["log"]) == (st["game_id"], st["seq"], st["log"]), msg
    return err["message"]


def test_a_move_of_another_game_or_with_a_key_it_may_not_hold_is_refused():
    """A move's unknown keys were ignored: one naming another game (or a seat) was played on this one."""
    client = _client(_app())
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        st = ws.receive_json()["state"]
        legal, seq, gid = st["request"]["actions"][0]["id"], st["seq"], st["game_id"]
        said = _refused(ws, st, {"action": legal, "seq": seq, "seat": 1, "game_id": "deadbeef"})
        assert said == "a move holds only the keys action, seq, game_id; not 'seat'", said
        assert "another game ('deadbeef')" in _refused(ws, st, {"action": legal, "seq": seq, "game_id": "deadbeef"})
        assert "another game (7)" in _refused(ws, st, {"action": legal, "seq": seq, "game_id": 7})
        said = _refused(ws, st, {"new_game": True, "action": legal})
        assert said == "a new game holds only the keys new_game; not 'action'", said
        assert "\n" not in said and len(_refused(ws, st, {"action": legal, "x" * 3000: 1})) <= 200  # one line
        ws.send_json({"action": legal, "seq": seq, "game_id": gid})  # this game's move plays
        assert ws.receive_json()["state"]["seq"] == seq + 1


def test_a_null_seq_or_game_id_is_refused_not_taken_as_absent():
    """Red team, session 44: "game_id": null or "seq": null played the move as if the key were absent, skipping the
    check it names. null is refused naming the key; a move that leaves them out still plays (scripts may)."""
    client = _client(_app())
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        st = ws.receive_json()["state"]
        legal, seq, gid = st["request"]["actions"][0]["id"], st["seq"], st["game_id"]
        for key in ("seq", "game_id"):
            said = _refused(ws, st, {"action": legal, "seq": seq, "game_id": gid, key: None})
            assert said == f"{key} must be the state's {key}, got null: give the state's {key}, or leave {key} out " \
                           "of the move", said  # fmt: skip
        ws.send_json({"action": legal})
        assert ws.receive_json()["state"]["seq"] == seq + 1


def test_a_stale_move_of_the_last_game_does_not_land_in_the_next():
    """seq restarts at 0 each game: a seq-0 move sent in game 1 and arriving after new game fitted game 2."""
    client = _client(_app())
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        first = ws.receive_json()["state"]
        _play_out(ws, first)
        ws.send_json({"new_game": True})
        fresh = ws.receive_json()["state"]
        assert fresh["game_id"] != first["game_id"] and fresh["seq"] == first["seq"] == 0
        old = {"action": fresh["request"]["actions"][0]["id"], "seq": 0, "game_id": first["game_id"]}
        assert "made in another game" in _refused(ws, fresh, old)


def test_new_game_is_refused_while_a_game_is_on_unless_it_failed():
    """new_game dropped the game being played, and nothing of it was kept (a replay is a finished game)."""

    class Failing(LiveGame):
        def play(self, action, seq=None, game_id=None):
            if action == "fail":
                raise RuntimeError("a fault of the table's own")
            super().play(action, seq, game_id)

    client = _client(_app(new_game=lambda: Failing(["greedy", "random"], seat=0, seed=4, rules=RULES)))
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        st = ws.receive_json()["state"]
        ws.send_json({"action": st["request"]["actions"][0]["id"], "seq": 0, "game_id": st["game_id"]})
        st = ws.receive_json()["state"]
        assert _refused(ws, st, {"new_game": True}).startswith("the game is not over: a new game starts once it is")
        ws.send_json({"action": "fail", "seq": st["seq"]})
        assert "the table failed: RuntimeError" in ws.receive_json()["message"]
        ws.receive_json()
        ws.send_json({"new_game": True})  # a game that failed may not go on: it may be replaced
        fresh = ws.receive_json()["state"]
        assert fresh["game_id"] != st["game_id"] and fresh["seq"] == 0
        assert _refused(ws, fresh, {"new_game": True}).startswith("the game is not over")  # and the new one is kept


def test_closing_a_game_does_not_block_the_event_loop():
    class SlowToClose(LiveGame):
        def close(self) -> None:
            time.sleep(2.0)  # a bot given its bye grace
            super().close()

    client = _client(_app(new_game=lambda: SlowToClose(["greedy", "random"], seat=0, seed=4, rules=RULES)))
    with client.websocket_connect("ws://127.0.0.1:8008/ws/play") as ws:
        _play_out(ws, ws.receive_json()["state"])  # a new game only once this one is over
        sent = threading.Event()

        def new_game():
            ws.send_json({"new_game": True})
            sent.set()

        threading.Thread(target=new_game).start()
        sent.wait(5)
        time.sleep(0.2)  # the close is under way in its thread
        t0 = time.monotonic()
        assert client.get("/api/config").status_code == 200
        assert time.monotonic() - t0 < 1.0  # answered while the old game closes
        assert ws.receive_json()["type"] == "state"


def test_the_guarded_seat_falls_back_for_any_exception():
    from agents.registry import load_agent
    from meld8_app.web.session import GuardedAgent

    class Boom:
        name = "boom"

        def act_batch(self, obs, masks):
            raise MemoryError("out of memory at the first forward pass")

    notes: list[str] = []
    from meld8_env.vector import Meld8Vector

    v = Meld8Vector(1, rules=RULES, seed=0)
    v.reset(seed=0)
    obs = v.observation
    g = GuardedAgent(Boom(), 2, "ppo:x.zip", load_agent("greedy", RULES), notes)
    masks = v.action_mask
    got = g.act_batch(obs, masks)
    assert masks[0, got[0]] and len(notes) == 1 and "MemoryError" in notes[0] and "seat 2 (ppo:x.zip)" in notes[0]
    g.act_batch(obs, masks)
    assert len(notes) == 1  # said once


def test_without_a_seed_each_games_seed_is_drawn_afresh():
    """A finished game shows its seed; were the next game's seed + 1, the page would give its cards away."""
    from meld8_app.cli.play import _fresh_seeds

    seeds = _fresh_seeds(100)
    got = [next(seeds) for _ in range(6)]
    assert got[0] == 100 and got[1:] != list(range(101, 106)) and all(0 <= s < 2**31 for s in got)


def test_a_request_h11_refuses_logs_one_line_not_a_traceback(tmp_path):
    """A bad chunked body on a GET: uvicorn answers 400 and said so in one line, then logged a 50-line traceback of
    h11's LocalProtocolError when the app's own answer met the closed connection (red team, session 38)."""
    import signal
    import socket

    proc, port = _start_view(tmp_path)
    try:
        token = _token(proc)
        end = time.monotonic() + 30
        while True:  # until the port answers (the server's own signal that it listens), not a fixed sleep
            try:
                socket.create_connection(("127.0.0.1", port), timeout=10).close()
                break
            except ConnectionRefusedError:
                assert time.monotonic() < end and proc.poll() is None, "the server did not start"
                time.sleep(0.05)
        for path in ("/api/config", "/api/replay"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
                c.sendall(f"GET {path}?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          "Transfer-Encoding: chunked\r\n\r\nzzzz\r\n".encode())  # fmt: skip
                assert c.recv(64).startswith(b"HTTP/1.1 400")
                c.recv(4096)  # the server closes the connection once it has answered
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert err.count("Invalid HTTP request received.") == 2
    assert "Traceback" not in err and "LocalProtocolError" not in err


def test_only_the_refused_requests_late_answer_loses_its_traceback():
    """The filter drops h11 refusing a response on a connection it has closed, and nothing else: another h11 error
    (an app writing a bad header, too little body) or any other exception keeps its record (session 38's review)."""
    import logging

    import h11

    from meld8_app.web.app import _no_traceback_for_a_refused_request as keep

    def record(exc: Exception) -> logging.LogRecord:
        try:
            raise exc
        except Exception:
            return logging.LogRecord("uvicorn.error", logging.ERROR, "", 0, "Exception in ASGI application", (),
                                     sys.exc_info())  # fmt: skip

    late = "can't handle event type Response when role=SERVER and state=MUST_CLOSE"
    assert not keep(record(h11.LocalProtocolError(late)))
    for exc in (h11.LocalProtocolError("Too little data for declared Content-Length"),
                h11.LocalProtocolError("Illegal header value b'x\\n'"), ValueError(late)):  # fmt: skip
        assert keep(record(exc))
