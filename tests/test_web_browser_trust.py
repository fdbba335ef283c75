"""The browser table against hostile pages, in a real headless Chromium (issue 22 §1): a page on
another site cannot open the table's websocket or read its API; a rebound host name (DNS rebinding,
simulated with Chromium's host-resolver rules) is refused; the printed link's token lets the real
page in, and only it. TestClient covers the rest (tests/test_web_trust.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra)")

from browser_kit import Server, chromium_or_skip  # noqa: E402

CHROMIUM = chromium_or_skip()

TOKEN = "launch-token-for-the-test"


@pytest.fixture(scope="module")
def server():
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    srv = Server(
        lambda port: create_app(
            "play",
            new_game=lambda: LiveGame(["greedy", "random"], seat=0, seed=3),
            replay={"frames": [], "names": ["secret"]},
            token=TOKEN,
            port=port,
        )
    )
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser(server):
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP attacker.test 127.0.0.1"],
        )
        yield b
        b.close()


ATTACK = """<!doctype html><script>
window.result = new Promise((done) => {
  const log = {messages: [], opened: false};
  const ws = new WebSocket("ws://127.0.0.1:%d/ws/play");
  ws.onopen = () => { log.opened = true; ws.send(JSON.stringify({new_game: true})); };
  ws.onmessage = (m) => log.messages.push(m.data);
  ws.onclose = (e) => { log.code = e.code; done(log); };
  setTimeout(() => done(log), 5000);
});
window.api = fetch("http://127.0.0.1:%d/api/replay?token=%s", {credentials: "include"})
  .then((r) => r.text()).then((t) => "read: " + t, (e) => "blocked: " + e);
</script>"""


def test_a_page_on_another_site_cannot_use_the_table(server, browser):
    ctx = browser.new_context()
    try:
        # the user opened the table (the link with its token: the browser now holds the cookie) ...
        mine = ctx.new_page()
        mine.goto(server.url + f"?token={TOKEN}")
        mine.wait_for_function("document.body.dataset.seq !== undefined", timeout=30_000)
        # ... and then another site, in the same browser
        evil = ctx.new_page()
        for host in ("attacker.test", "localhost"):  # another site; the same machine, another origin
            url = f"http://{host}:{server.port + 1 if host == 'localhost' else 80}/"
            evil.route(
                url, lambda r: r.fulfill(body=ATTACK % (server.port, server.port, TOKEN), content_type="text/html")
            )
            evil.goto(url)
            log = evil.evaluate("window.result")
            assert log["messages"] == [] and not log["opened"], (host, log)  # no hand, no moves, no new games
            assert evil.evaluate("window.api").startswith("blocked"), host  # and no replay read
    finally:
        ctx.close()


def test_a_rebound_host_name_is_refused(server, browser):
    ctx = browser.new_context()
    try:
        pg = ctx.new_page()
        for path in ("", "api/replay", f"api/replay?token={TOKEN}", "api/config", "static/app.js"):
            r = pg.goto(f"http://rebind.test:{server.port}/{path}")  # resolves to 127.0.0.1, as after a rebinding
            assert r.status == 403 and "refused: Host" in pg.content(), path
    finally:
        ctx.close()


def test_only_the_printed_link_opens_the_table(server, browser):
    ctx = browser.new_context()
    try:
        pg = ctx.new_page()
        r = pg.goto(server.url)
        assert r.status == 403 and "launch token" in pg.content()
        pg.goto(server.url + f"?token={TOKEN}")
        pg.wait_for_function("document.body.dataset.seq !== undefined", timeout=30_000)  # the socket answered
        assert pg.locator("#error").is_hidden()
    finally:
        ctx.close()


def test_a_restarted_table_tells_the_open_page_to_use_the_new_link(browser):
    """meld8 restarted (a new launch token): the open page stops retrying and says to open the new link, instead of
    "reconnecting" for ever against a 403 every second; a click meanwhile sends nothing and says so."""
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    def table(token: str, port: int | None = None) -> Server:
        return Server(
            lambda p: create_app(
                "play", new_game=lambda: LiveGame(["greedy", "random"], seat=0, seed=3), token=token, port=p
            ),
            port=port,
        )

    first = table("first-launch")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    second = None
    try:
        page.goto(first.url + "?token=first-launch")
        page.wait_for_selector("body[data-connection='open'] #hand button.card:enabled")
        first.stop()
        page.wait_for_selector("body[data-connection='lost']")
        page.locator("#hand button.card:enabled >> nth=0").click()  # a move while the table is away
        assert "not connected: nothing was sent" in page.inner_text("#error")
        second = table("second-launch", port=first.port)
        page.wait_for_selector("body[data-connection='refused']", timeout=20_000)
        assert "Open the new link meld8 printed" in page.inner_text("#error")
        page.locator("#hand button.card:enabled >> nth=0").click()  # a click after that keeps the advice
        assert "Open the new link meld8 printed" in page.inner_text("#error")
    finally:
        page.close()
        if second is not None:
            second.stop()
    assert errors == [], errors  # no "WebSocket is already in CLOSING or CLOSED state"
