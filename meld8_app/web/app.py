"""The browser table's ASGI app (Starlette; served by uvicorn): one local user, games in memory.

Routes (all JSON but the page and its static files):

- ``GET /`` - the page (``static/index.html``, plain ES modules, no CDN: it works offline);
  ``GET /api/config`` - what the page is for: ``{"mode": "play" | "view" | "review", ...}``.
- ``WS /ws/play`` - the live table. The server sends ``{"type": "state", "state": ...}`` after every
  change (and on connect: closing the tab and reopening resumes the game) or ``{"type": "error",
  "message": ...}``; the page sends ``{"action": ID, "seq": N}`` or ``{"new_game": true}``.
- ``GET /api/replay`` - the viewer's frames (``meld8_app.web.session.replay_frames``) and seat names.
- ``GET /api/review`` - the review document (``meld8_app.web.review``) with the replay's frames.

Bad requests get a JSON error the page shows; no route answers with a traceback.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from meld8_app.web.session import LiveGame, PlayError

STATIC = Path(__file__).parent / "static"


def create_app(
    mode: str,
    new_game: Callable[[], LiveGame] | None = None,
    replay: dict[str, Any] | None = None,
    review: dict[str, Any] | None = None,
) -> Starlette:
    """``mode`` "play" (``new_game`` makes a LiveGame), "view" (``replay``: frames and names) or
    "review" (``review``: the review document, ``replay`` its frames)."""
    if mode not in ("play", "view", "review"):
        raise ValueError(f"mode must be play, view or review, got {mode!r}")
    holder: dict[str, LiveGame] = {}
    lock = asyncio.Lock()

    def game() -> LiveGame:
        if "game" not in holder:
            holder["game"] = new_game()
        return holder["game"]

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

        async def send_state() -> None:
            await ws.send_json({"type": "state", "state": game().state()})

        async with lock:
            await asyncio.to_thread(game)  # the agents may think (or start a bot process)
        await send_state()
        try:
            while True:
                text = await ws.receive_text()
                try:
                    msg = json.loads(text)
                    if not isinstance(msg, dict):
                        raise PlayError('send {"action": ID, "seq": N} or {"new_game": true}')
                    async with lock:
                        if msg.get("new_game"):
                            old = holder.pop("game", None)
                            if old is not None:
                                old.close()
                            await asyncio.to_thread(game)
                        elif "action" in msg:
                            seq = msg.get("seq")
                            if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
                                raise PlayError(f"seq must be the state's integer seq, got {seq!r}")
                            await asyncio.to_thread(game().play, msg["action"], seq)
                        else:
                            raise PlayError('send {"action": ID, "seq": N} or {"new_game": true}')
                except json.JSONDecodeError:
                    await ws.send_json({"type": "error", "message": "not JSON"})
                    continue
                except PlayError as exc:
                    await ws.send_json({"type": "error", "message": str(exc)})
                await send_state()
        except WebSocketDisconnect:
            return  # the game stays: reopening the page resumes it

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
    return app


def serve(app: Starlette, host: str = "127.0.0.1", port: int = 8008, open_browser: bool = True) -> None:
    """Run the app with uvicorn until Ctrl-C; open the page in the default browser unless told not to."""
    import threading
    import webbrowser

    import uvicorn

    url = f"http://{host}:{port}/"
    print(f"meld8: the table is at {url} (Ctrl-C stops the server)", flush=True)
    if open_browser:
        threading.Timer(1.0, webbrowser.open, (url,)).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
