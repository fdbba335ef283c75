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
