"""The browser table's ASGI app (Starlette; served by uvicorn): one local user, games in memory.

Routes (all JSON but the page and its static files):

- ``GET /`` - the page (``static/index.html``, plain ES modules, no CDN: it works offline);
  ``GET /api/config`` - what the page is for: ``{"mode": "play" | "view" | "review", ...}``.
- ``WS /ws/play`` - the live table. The server sends ``{"type": "state", "state": ...}`` after every
  change (and on connect: closing the tab and reopening resumes the game) or ``{"type": "error",
  "message": ...}`` (with ``"notice": true`` when an agent failed and the fallback took its seat,
  ``"fatal": true`` when the game cannot start); the page sends ``{"action": ID, "seq": N, "game_id": G}`` (``G``
  the state's ``game_id``: a move of another game is refused, as seq restarts at 0 each game) or ``{"new_game":
  true}``, refused while the game on the table is not over (an unfinished game cannot be saved as a replay, so
  dropping it would lose it) unless that game failed. A key a message may not hold is refused, the allowed named.
- ``GET /api/replay`` - the viewer's frames (``meld8_app.web.session.replay_frames``, each hand's result sent once:
  ``pack_frames``) and seat names.
- ``GET /api/review`` - the review document (``meld8_app.web.review``) with the replay's frames.

Who may talk to it (:class:`Guard`, on every HTTP route and the websocket): a request whose ``Host``
is not one the server is served as (DNS rebinding), or whose ``Origin`` is not the page's own
(another site's page, cross-site websocket hijacking), is refused with one line; with a per-launch
``token`` (``serve`` prints the link that carries it) a request must carry it, in the query
(``?token=``) or in the cookie the first such request sets (HttpOnly, SameSite=Strict).

Messages from the page are hostile input: at most :data:`MAX_MESSAGE` bytes, JSON bounded in depth
and digits (``meld8_env.protocol.loads_bounded``), text frames only; anything else is an error
message and the connection stays. Bad requests get a JSON error the page shows; no route answers
with a traceback. Agents think, and games close, in worker threads: the event loop never blocks.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketClose, WebSocketDisconnect

from meld8_app.web.session import LiveGame, PlayError
from meld8_env.protocol import ProtocolError, loads_bounded

STATIC = Path(__file__).parent / "static"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""Host names the server answers to by default (``serve`` adds the address it listens on)."""
MAX_MESSAGE = 4096
"""Longest websocket message (bytes) the page may send; its messages are ~40 bytes."""
HELP = 'send {"action": ID, "seq": N, "game_id": G} or {"new_game": true}'
MOVE_KEYS = ("action", "seq", "game_id")
"""The keys a move may hold (``seq`` and ``game_id`` are optional for scripts, left out, not null; the page sends
both)."""
MAX_BACKLOG = 32
"""Messages a page may leave unread (its states are ~10 KB): past it the page is dropped from the table's broadcast
and its socket closed, so a tab or client that stops reading never holds up the others (red team, session 34: one
socket that never read froze every tab after about 450 moves, the broadcast waiting on its full buffer)."""


LIMIT_CONCURRENCY = 64
"""Connections the server holds at once (uvicorn's ``limit_concurrency``; ``meld8 play / view / review
--limit-concurrency``): a request that arrives while this many connections are open, its own counted (or this many
requests are running), is answered 503 at once instead of being served, so a flood of connections from a local process
does not pile up work in the server (red team, session 44: there was no cap). uvicorn applies the cap per HTTP request:
a connection is still accepted (and holds a file descriptor until it closes), and a websocket handshake is not refused
by it (each needs the launch token), but an open websocket counts. A page holds a few (the browser's keep-alive
connections and its websocket): 64 leaves room for many tabs."""
MIN_LIMIT_CONCURRENCY = 8
"""The smallest cap :func:`check_limit_concurrency` takes: a request's own connection counts, so a cap of 1 answered
every request 503 (review, session 44), and one page holds its websocket and up to six HTTP connections."""
MAX_LIMIT_CONCURRENCY = 65_535
"""The largest cap :func:`check_limit_concurrency` takes (more would be no cap: a process has fewer descriptors)."""


SHUTDOWN_GRACE = 3.0
"""Seconds Ctrl-C waits for open connections before it cancels them: a client that never reads held the server
open for good, its buffers full (red team, session 34), and uvicorn says why it waits only at its info level."""


class _Page:
    """One play page's socket with its own outbox: the broadcast only queues (never awaits a send), and a writer
    task sends in order; a page that leaves :data:`MAX_BACKLOG` messages unread is dropped, which also ends its
    handler's wait for a frame (:meth:`receive`), so the handler closes it and its tab reconnects once it reads."""

    def __init__(self, ws: WebSocket, pages: set[_Page]) -> None:
        self.ws, self.pages = ws, pages
        self.outbox: asyncio.Queue[dict | None] = asyncio.Queue()
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()  # set when dropped
        self.backlogged = False
        self.writer = asyncio.create_task(self._write())

    async def _write(self) -> None:
        try:
            while (msg := await self.outbox.get()) is not None:
                await self.ws.send_json(msg)
        except (WebSocketDisconnect, OSError):  # the tab went away: its handler ends with it
            self.drop()
        except Exception as exc:  # anything else is a fault of the table's own: said where it was started
            print(f"meld8 play: a page's state could not be sent: {type(exc).__name__}: {exc}", file=sys.stderr)
            self.drop()

    def post(self, msg: dict) -> None:
        if self.gone.done():
            return
        if self.outbox.qsize() >= MAX_BACKLOG:  # not reading: let go (finish closes it)
            self.backlogged = True
            self.drop()
            return
        self.outbox.put_nowait(msg)

    def drop(self) -> None:
        self.pages.discard(self)
        if not self.gone.done():
            self.gone.set_result(None)

    async def receive(self) -> Message | None:
        """The page's next frame, or None once it was dropped (a page that stopped reading may send nothing)."""
        frame = asyncio.ensure_future(self.ws.receive())
        await asyncio.wait({frame, self.gone}, return_when=asyncio.FIRST_COMPLETED)
        if self.gone.done():
            frame.cancel()
            return None
        return frame.result()

    async def finish(self) -> None:
        """The handler is done: the outbox's last messages go out (briefly), or a page dropped for its backlog is
        closed (1008) if its buffer takes the close within a second."""
        self.drop()
        if self.backlogged:
            self.writer.cancel()
            try:
                await asyncio.wait_for(self.ws.close(code=1008, reason="not reading its states"), 1.0)
            except Exception:  # its buffer is full too: the server ends the connection when the handler returns
                pass
            return
        if not self.writer.done():
            self.outbox.put_nowait(None)
            done, _ = await asyncio.wait({self.writer}, timeout=1.0)  # never raises the writer's end
            if not done:
                self.writer.cancel()


def _message(text: str) -> dict:
    """A message from the page as a dict, within the bounds (:data:`MAX_MESSAGE`, and the seat
    protocol's depth and digit bounds); PlayError saying what was wrong otherwise."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_MESSAGE:
        raise PlayError(f"a message of {len(raw)} bytes; the limit is {MAX_MESSAGE}: {HELP}")
    try:
        msg = loads_bounded(raw, MAX_MESSAGE)
    except ProtocolError as exc:
        raise PlayError(str(exc) if str(exc) == "not JSON" else f"{exc}: {HELP}") from None
    if not isinstance(msg, dict):
        raise PlayError(HELP)
    return msg


def _check_keys(msg: dict) -> None:
    """PlayError naming the allowed keys when a move or a new game holds another key (it was ignored: a move naming
    another game, or a seat, was played as if it did not)."""
    allowed = ("new_game",) if "new_game" in msg else MOVE_KEYS if "action" in msg else None
    if allowed is None:
        raise PlayError(HELP)
    extra = [k for k in msg if k not in allowed]
    if extra:
        what = "a new game" if "new_game" in msg else "a move"
        names = ", ".join(repr(k) for k in extra)
        raise PlayError(f"{what} holds only the keys {', '.join(allowed)}; not {names}"[:200])


def _same_token(given: str, token: str) -> bool:
    """Constant-time comparison of a token from a request (any text: compare_digest refuses non-ASCII str)."""
    return secrets.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode("utf-8"))


def _host_name(host: str) -> str:
    """The name part of a Host header value (``[::1]:8008`` -> ``::1``)."""
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :] if end > 0 else "x"
        # "[::1]evil.example:8008" is no address: only a port may follow the bracket
        return host[1:end] if rest == "" or (rest[:1] == ":" and rest[1:].isdigit()) else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _cookie(header: str, name: str) -> str:
    """The value of cookie ``name`` in a Cookie header ("" when absent), split on ``;`` and ``=``: linear in the
    header. http.cookies.SimpleCookie parsed a 16 KB header in 0.56 s (quadratic, CVE-2024-7592 on Python <
    3.11.10), on the event loop, before the request was refused (red team, session 33). No length cap: each launch
    sets its own cookie, so a browser's header grows with launches (a 4 KB cap hid the token after ~90)."""
    for part in header.split(";"):
        key, eq, value = part.strip().partition("=")
        if eq and key == name:
            return value
    return ""


class Guard:
    """ASGI middleware: only requests for a served host, from the page's own origin, carrying the
    launch token (when there is one) reach the app; others get 403 (HTTP) or a close with code 1008
    (websocket) and one line saying why."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str], port: int | None, token: str | None) -> None:
        self.app, self.hosts, self.port, self.token = app, {h.lower() for h in hosts}, port, token
        self.cookie = f"meld8_{hashlib.sha256(token.encode()).hexdigest()[:12]}" if token else ""

    def refusal(self, scope: Scope) -> tuple[str | None, bool]:
        """(why the request is refused or None, whether its query carried the token)."""
        pairs = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        headers = dict(pairs)
        for key in ("host", "origin"):  # two of them: which one would another layer read? neither
            if sum(k == key for k, _ in pairs) > 1:
                return f"refused: more than one {key.title()} header", False
        host = headers.get("host", "")
        name = _host_name(host).lower()
        if name not in self.hosts:
            return f"refused: Host {host!r} is not this server (open the address meld8 printed)", False
        if self.port is not None and host.lower() != name and not host.endswith(f":{self.port}"):
            return f"refused: Host {host!r} is not this server's port {self.port}", False
        origin = headers.get("origin")
        if origin is not None:
            o = urlsplit(origin)
            if o.scheme not in ("http", "https") or o.netloc.lower() != host.lower():
                return f"refused: a page from {origin!r} may not use this server", False
        if self.token is None:
            return None, False
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if _same_token(query.get("token", [""])[0], self.token):
            return None, True
        if _same_token(_cookie(headers.get("cookie", ""), self.cookie), self.token):
            return None, False
        return "refused: this address needs the launch token: open the link meld8 printed (?token=...)", False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        why, carried = self.refusal(scope)
        if why is not None:
            if scope["type"] == "websocket":
                await WebSocketClose(code=1008, reason=why[:120])(scope, receive, send)
            else:
                await JSONResponse({"error": why}, status_code=403)(scope, receive, send)
            return
        if not carried or scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def create_app(
    mode: str,
    new_game: Callable[[], LiveGame] | None = None,
    replay: dict[str, Any] | None = None,
    review: dict[str, Any] | None = None,
    token: str | None = None,
    hosts: Sequence[str] = LOOPBACK,
    port: int | None = None,
) -> Starlette:
    """``mode`` "play" (``new_game`` makes a LiveGame), "view" (``replay``: frames and names) or
    "review" (``review``: the review document, ``replay`` its frames). Requests must name one of
    ``hosts`` (and ``port``, when given) and carry ``token`` when one is given (:class:`Guard`)."""
    if mode not in ("play", "view", "review"):
        raise ValueError(f"mode must be play, view or review, got {mode!r}")
    holder: dict[str, LiveGame] = {}  # "game": the game on the table; "failed": that game, once the table failed
    lock = asyncio.Lock()
    pages: set[_Page] = set()  # every open play page: a move made in one tab is shown in the others

    async def page(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def config(request: Request) -> JSONResponse:
        return JSONResponse({"mode": mode})

    async def api_replay(request: Request) -> JSONResponse:
        if replay is None:
            return JSONResponse({"error": "no replay is open (start with meld8 view FILE)"}, status_code=404)
        return JSONResponse(replay)

    async def api_review(request: Request) -> JSONResponse:
        if review is None:
            return JSONResponse({"error": "no review is open (start with meld8 review FILE --seat N)"}, status_code=404)
        return JSONResponse({"review": review, **(replay or {})})

    async def play_socket(ws: WebSocket) -> None:
        await ws.accept()
        if new_game is None:
            await ws.send_json({"type": "error", "message": "this server shows a replay; start meld8 play to play"})
            await ws.close()
            return
        me = _Page(ws, pages)

        def send_state(everyone: bool = False) -> None:
            """The game's state to this page, or (``everyone``: after a change) to every open page."""
            g = holder.get("game")
            if g is None:
                return
            state = {"type": "state", "state": g.state()}
            notes = g.take_notices()
            for page in list(pages) if everyone else [me]:
                page.post(state)
                for note in notes:  # an agent failed: the fallback plays its seat (the state lists them too)
                    page.post({"type": "error", "message": note, "notice": True})
            for note in notes:  # and on the terminal that started the server: the page's box clears at the next
                # move, so the swap must not rest on a message that is gone once the game goes on
                print(f"meld8 play: {note}", file=sys.stderr, flush=True)

        async def start() -> bool:
            """Make the game if there is none (agents may think, bots start: in a thread); a game that
            cannot start is said to the page, which keeps its connection (no endless reconnecting)."""
            if "game" in holder:
                return True
            try:
                holder["game"] = await asyncio.to_thread(new_game)
            except Exception as exc:  # an agent that cannot load, a bot that does not start: one line
                msg = f"the game cannot start: {exc or type(exc).__name__}; fix it and press new game"
                me.post({"type": "error", "message": msg, "fatal": True})
                return False
            return True

        async with lock:  # the game is read under the lock: a move in another tab runs in a worker thread
            await start()
            send_state()
            pages.add(me)
        try:
            while True:
                frame = await me.receive()
                if frame is None:  # dropped for not reading its states: it plays no more on this socket
                    return
                if frame["type"] == "websocket.disconnect":
                    return  # the game stays: reopening the page resumes it
                text = frame.get("text")
                if text is None:
                    me.post({"type": "error", "message": f"binary frames are not read: {HELP} as text"})
                    continue
                try:
                    msg = _message(text)
                except PlayError as exc:  # not a message at all: said, and nothing changed
                    me.post({"type": "error", "message": str(exc)})
                    continue
                try:
                    async with lock:
                        _check_keys(msg)
                        if "new_game" in msg:
                            if msg["new_game"] is not True:  # "no" or 1 must not drop the game being played
                                raise PlayError(f"new_game must be true, got {msg['new_game']!r}"[:200])
                            old = holder.get("game")
                            if old is not None and not old.over and holder.get("failed") is not old:
                                # nothing could keep it: a replay is a finished game (meld8_env.replay)
                                raise PlayError("the game is not over: a new game starts once it is (an unfinished "
                                                "game cannot be saved, and would be lost)")  # fmt: skip
                            holder.pop("game", None)
                            holder.pop("failed", None)
                            if old is not None:
                                await asyncio.to_thread(old.close)  # bots get bye and a moment: not on the loop
                            await start()
                        else:  # a move: _check_keys admitted nothing else
                            if not await start():
                                continue
                            for key in ("seq", "game_id"):  # null was taken as absent, skipping the check it
                                # asks for (red team, session 44); a move may leave them out
                                if key in msg and msg[key] is None:
                                    raise PlayError(f"{key} must be the state's {key}, got null: give the state's "
                                                    f"{key}, or leave {key} out of the move")  # fmt: skip
                            seq = msg.get("seq")
                            if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
                                raise PlayError(f"seq must be the state's integer seq, got {seq!r}"[:200])
                            await asyncio.to_thread(holder["game"].play, msg["action"], seq, msg.get("game_id"))
                        send_state(everyone=True)
                except PlayError as exc:  # nothing changed: this page alone is told and redrawn
                    me.post({"type": "error", "message": str(exc)})
                    async with lock:
                        send_state()
                except Exception as exc:  # a failure inside the game: said, and the connection stays
                    if "game" in holder:  # it may not go on: new game may replace it
                        holder["failed"] = holder["game"]
                    me.post({"type": "error", "message": f"the table failed: {type(exc).__name__}: {exc}"})
                    async with lock:
                        send_state(everyone=True)
        except WebSocketDisconnect:
            return  # the game stays: reopening the page resumes it
        finally:
            await me.finish()

    async def not_found(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=500)

    app = Starlette(
        routes=[
            Route("/", page),
            Route("/api/config", config),
            Route("/api/replay", api_replay),
            Route("/api/review", api_review),
            WebSocketRoute("/ws/play", play_socket),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={HTTPException: not_found, Exception: server_error},
    )
    app.state.holder = holder
    app.add_middleware(Guard, hosts=hosts, port=port, token=token)
    return app


def check_limit_concurrency(value: Any, name: str = "limit_concurrency") -> int:
    """``value`` as a connection cap (:data:`LIMIT_CONCURRENCY`): an integer :data:`MIN_LIMIT_CONCURRENCY`..
    :data:`MAX_LIMIT_CONCURRENCY`, else
    ValueError in one line naming ``name`` (0 or a negative cap would refuse every request; None would be no cap)."""
    bad = isinstance(value, bool) or not isinstance(value, int)
    if bad or not MIN_LIMIT_CONCURRENCY <= value <= MAX_LIMIT_CONCURRENCY:
        raise ValueError(f"{name} must be an integer {MIN_LIMIT_CONCURRENCY}..{MAX_LIMIT_CONCURRENCY:,} (open "
                         "connections, a request's own counted, past which a request is answered 503; default "
                         f"{LIMIT_CONCURRENCY}), got {value!r}"[:300])  # fmt: skip
    return value


def server_config(app: ASGIApp, host: str, port: int, limit_concurrency: int = LIMIT_CONCURRENCY) -> Any:
    """The ``uvicorn.Config`` :func:`serve` runs ``app`` with: at most ``limit_concurrency`` connections
    (:data:`LIMIT_CONCURRENCY`, checked here), 1 MiB websocket messages, :data:`SHUTDOWN_GRACE` at Ctrl-C."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level="warning", ws_max_size=1 << 20,
                          timeout_graceful_shutdown=SHUTDOWN_GRACE,
                          limit_concurrency=check_limit_concurrency(limit_concurrency))  # fmt: skip


def serve(app_for: Callable[..., Starlette], host: str = "127.0.0.1", port: int = 8008,
          open_browser: bool = True, limit_concurrency: int = LIMIT_CONCURRENCY) -> None:  # fmt: skip
    """Run the app ``app_for(token=, hosts=, port=)`` makes with uvicorn until Ctrl-C: a fresh launch
    token, the loopback names and ``host``; print the link (it carries the token) and open it in the
    default browser unless told not to. At most ``limit_concurrency`` connections at once (:data:`LIMIT_CONCURRENCY`;
    a bad value is refused before anything is printed or opened)."""
    import threading
    import webbrowser

    import uvicorn

    token = secrets.token_urlsafe(18)
    app = app_for(token=token, hosts=(*LOOPBACK, host), port=port)
    config = server_config(app, host, port, limit_concurrency)  # checks the cap, before anything is printed
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/?token={token}"
    print(f"meld8: the table is at {url} (Ctrl-C stops the server)", flush=True)
    if open_browser:
        threading.Timer(1.0, webbrowser.open, (url,)).start()
    logging.getLogger("uvicorn.error").addFilter(_said_at_shutdown)
    logging.getLogger("uvicorn.error").addFilter(_no_traceback_for_a_refused_request)
    server = uvicorn.Server(config)
    try:  # what uvicorn.run does with its Config: Ctrl-C ends the server, and a server that never started exits 3
        server.run()
    except KeyboardInterrupt:
        pass
    if not server.started:  # uvicorn said why (e.g. the port was taken after check_port_free looked)
        sys.exit(3)


def _said_at_shutdown(record: logging.LogRecord) -> bool:
    """uvicorn's "Cancel N running task(s), timeout graceful shutdown exceeded" (an ERROR line about no error of the
    user's) becomes one meld8 line."""
    if str(record.msg).startswith("Cancel %s running task"):
        print(f"meld8: closed the connections still open after {SHUTDOWN_GRACE:g} s", file=sys.stderr, flush=True)
        return False
    return True


def _no_traceback_for_a_refused_request(record: logging.LogRecord) -> bool:
    """A request h11 cannot parse (a bad chunked body) is answered 400 by uvicorn, which logs "Invalid HTTP request
    received." and then, when the app's own answer meets the closed connection, a 50-line traceback of h11's
    LocalProtocolError: any local process could flood the terminal with them (red team, session 38). The one line
    stays; that record goes - only that one: h11 refusing a response on a connection it has already closed (any other
    h11 error, an app's own fault, keeps its traceback)."""
    exc = record.exc_info[1] if record.exc_info else None
    late = "can't handle event type Response when role=SERVER and state="
    return not (
        type(exc).__name__ == "LocalProtocolError"
        and type(exc).__module__.startswith("h11")
        and str(exc).startswith(late)
        and str(exc).removeprefix(late) in ("MUST_CLOSE", "ERROR", "CLOSED")
    )
