"""The browser table in a real headless Chromium (Debian's ``chromium``, driven by Playwright): a whole
game played by clicking, the viewer stepping through a tournament game, a review. The tests write
the screenshots shown in the README (docs/img/table.png, ledger.png, review.png).

``.ci/run`` installs chromium and sets MELD8_REQUIRE_BROWSER=1, so there a missing browser fails
instead of skipping."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra)")

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    if os.environ.get("MELD8_REQUIRE_BROWSER"):
        raise RuntimeError("MELD8_REQUIRE_BROWSER is set but chromium is not on PATH (apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)


class Server:
    """uvicorn serving one app on a free local port, in a thread."""

    def __init__(self, app) -> None:
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        end = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < end, "the server did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    yield pg
    ctx.close()
    assert errors == [], errors  # no script error, no request that went nowhere (nothing off the machine)


def _tournament_log(tmp_path: Path) -> Path:
    from training.tournament import TournamentConfig, run

    run(TournamentConfig(agents=["greedy", "defensive", "random"], boards=1, out=str(tmp_path / "t"), progress=False,
                         chart=False))  # fmt: skip
    return tmp_path / "t" / "games.jsonl"


def test_play_a_whole_game_by_clicking(page, tmp_path):
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    server = Server(create_app("play", new_game=lambda: LiveGame(["greedy", "random"], seat=0, seed=11,
                                                                  replay_dir=tmp_path)))  # fmt: skip
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-seq]")
        clicks = 0
        shot_table = shot_ledger = False
        reloaded = False
        while not page.query_selector("#gameend"):
            seq = page.get_attribute("body", "data-seq")
            req_buttons = page.query_selector_all("#controls button[data-name]")
            names = [b.get_attribute("data-name") for b in req_buttons]
            enabled = page.query_selector_all("#hand button.card:enabled")
            if names or enabled:
                # the page offers exactly the legal moves: never a dead button
                if any(n in ("tsumo", "ron") for n in names):
                    page.click("#controls button.win")
                elif "pass" in names:
                    assert enabled == [], "no discard is legal during a claim"
                    page.click('#controls button[data-name="pass"]')
                else:
                    if not shot_table and clicks > 12:
                        page.screenshot(path=str(IMG / "table.png"))
                        shot_table = True
                    enabled[-1].click()
                clicks += 1
                page.wait_for_function(f"document.body.dataset.seq !== '{seq}'", timeout=20_000)
            else:
                page.wait_for_timeout(50)
            if not reloaded and clicks == 5:  # closing the tab and reopening resumes the game
                seq = page.get_attribute("body", "data-seq")
                page.reload()
                page.wait_for_selector(f"body[data-seq='{seq}']")
                reloaded = True
            if not shot_ledger and page.query_selector("#ledger"):
                page.locator("#result").screenshot(path=str(IMG / "ledger.png"))
                shot_ledger = True
            assert page.is_hidden("#error"), page.inner_text("#error")
            assert clicks < 400
        assert clicks > 10 and reloaded and shot_table and shot_ledger
        rows = page.query_selector_all("#gameend tr")
        assert len(rows) == 4  # header + three seats with placements
        assert "saved:" in page.inner_text("#controls")  # the game was written as a replay
        assert list(tmp_path.glob("play-*.json"))
        # keyboard: a new game with n
        seq = page.get_attribute("body", "data-seq")
        page.keyboard.press("n")
        page.wait_for_function("!document.querySelector('#gameend')")
    finally:
        server.stop()


def test_viewer_steps_through_a_tournament_game(page, tmp_path):
    from meld8_app.cli.view import viewer_data
    from meld8_app.web.app import create_app

    _, data = viewer_data(str(_tournament_log(tmp_path)), 2)
    server = Server(create_app("view", replay=data))
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-frame='0']")
        assert page.inner_text("#frame") == f"action 0 / {len(data['frames']) - 1}"
        for _ in range(5):
            page.click("#next")
        page.wait_for_selector("body[data-frame='5']")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("body[data-frame='4']")
        # the seat names are the tournament's agents; every hand is shown, then hidden by the toggle
        assert "greedy" in page.inner_text("#table") and "random" in page.inner_text("#table")
        assert len(page.query_selector_all(".seat .row.hand")) == 3
        page.uncheck("#show-all")
        assert len(page.query_selector_all(".seat .row.hand")) == 0
        page.check("#show-all")
        # jump to the last hand, then to the end: the ledger and the final table are there
        page.click("#next-hand")
        assert int(page.get_attribute("body", "data-frame")) > 5
        page.keyboard.press("End")
        last = len(data["frames"]) - 1
        page.evaluate("document.querySelector('#jump').value = document.querySelector('#jump').options["
                      "document.querySelector('#jump').options.length - 1].value")  # fmt: skip
        page.dispatch_event("#jump", "change")
        for _ in range(last):
            if page.get_attribute("body", "data-frame") == str(last):
                break
            page.keyboard.press("ArrowRight")
        page.wait_for_selector(f"body[data-frame='{last}']")
        assert page.query_selector("#gameend") and page.query_selector("#ledger")
    finally:
        server.stop()


def test_review_page(page, tmp_path):
    from meld8_app.cli.view import viewer_data
    from meld8_app.web.app import create_app
    from meld8_app.web.review import review
    from meld8_env.rules import RuleConfig

    doc, data = viewer_data(str(_tournament_log(tmp_path)), 0)
    rev = review(RuleConfig.from_dict(doc["rules"]), doc["seed"], doc["actions"], seat=2, agent="ppo")
    server = Server(create_app("review", replay=data, review=rev))
    try:
        page.goto(server.url)
        page.wait_for_selector("#agreement")
        assert f"agreement {round(100 * rev['summary']['agreement'])}%" in page.inner_text("#agreement")
        flagged = page.query_selector_all("#flagged .decision")
        assert len(flagged) == rev["summary"]["flagged"] > 0
        flagged[0].click()
        first = next(d for d in rev["decisions"] if d["flagged"])
        page.wait_for_selector(f"body[data-frame='{first['index']}']")
        text = page.inner_text("#decision")
        assert first["played"]["name"] in text and first["reference"]["name"] in text
        page.screenshot(path=str(IMG / "review.png"))
    finally:
        server.stop()
