"""The browser table in a real headless Chromium (Debian's ``chromium``, driven by Playwright): a whole
game played by clicking with every hand's result view, a result that ends before the human's next
decision, the layout at 1280 and 1920 px and on a narrow window, the viewer's result frames, a review.
The tests write the screenshots shown in the README (docs/img/table.png, result.png, review.png).

``.ci/run`` installs chromium and sets MELD8_REQUIRE_BROWSER=1, so there a missing browser fails
instead of skipping."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra (pip install 'meld8[web]')")
playwright = pytest.importorskip("playwright.sync_api", reason="playwright (the dev extra)")

from browser_kit import Server, chromium_or_skip  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"
CHROMIUM = chromium_or_skip()

TENHOU_SEED = 6  # SHORT rules, greedy opponents: hand 1 ends in seat 1's Tenhou before you are asked anything
JOKER_SEED = 0  # default rules, greedy and defensive: you hold the Joker at your first decision
TIE_SEED = 1  # SHORT rules, greedy and defensive, played as _move does: greedy and defensive end on 32,000


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _page(browser, width: int = 1280, height: int = 860):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    pg.on("response", lambda r: r.status >= 400 and errors.append(f"{r.status}: {r.url}"))
    return ctx, pg, errors


@pytest.fixture
def page(browser):
    ctx, pg, errors = _page(browser)
    yield pg
    ctx.close()
    assert errors == [], errors  # no script error, no request that went nowhere (nothing off the machine)


def _short():
    from meld8_env.rules import RuleConfig

    return RuleConfig(rounds=2, min_yaku_han=(1, 1), max_replays=1)


def _live(seed: int, rules=None, agents=("greedy", "defensive"), replay_dir=None):
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    return Server(create_app("play", new_game=lambda: LiveGame(list(agents), seat=0, rules=rules, seed=seed,
                                                               replay_dir=replay_dir)))  # fmt: skip


def _tournament_log(tmp_path: Path) -> Path:
    from training.tournament import TournamentConfig, run

    run(TournamentConfig(agents=["greedy", "defensive", "random"], boards=1, out=str(tmp_path / "t"), progress=False,
                         chart=False))  # fmt: skip
    return tmp_path / "t" / "games.jsonl"


def _body(page, key: str) -> str | None:
    return page.get_attribute("body", f"data-{key}")


def _move(page) -> None:
    """One decision the way the tests' human plays: win when offered, pass claims, else the last card."""
    seq = _body(page, "seq")
    win = page.query_selector("#controls button.win")
    if win:
        win.click()
    elif page.query_selector('#controls button[data-name="pass"]'):
        assert page.query_selector_all("#hand button.card:enabled") == [], "no discard is legal during a claim"
        page.click('#controls button[data-name="pass"]')
    else:
        page.query_selector_all("#hand button.card:enabled")[-1].click()
    page.wait_for_function(f"document.body.dataset.seq !== '{seq}' || document.body.dataset.view !== 'table'",
                           timeout=20_000)  # fmt: skip


def _play_on(page, until=lambda: False, at_result=None) -> None:
    """Play on as _move does, closing each hand's result with Continue (``at_result`` looks at it first), until
    ``until()`` holds or the game is over (at most 400 steps)."""
    for _ in range(400):
        if _body(page, "view") == "game-end" or until():
            return
        if _body(page, "view") == "result":
            if at_result is not None:
                at_result()
            seen = _body(page, "seen")
            page.click("#result-continue")
            page.wait_for_function(f"document.body.dataset.seen !== '{seen}'")
        else:
            _move(page)


def _no_overflow(page) -> None:
    """Nothing wider than the window, every card inside it."""
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    outside = page.evaluate(
        "[...document.querySelectorAll('.card')].map(c => c.getBoundingClientRect())"
        ".filter(r => r.width > 0 && (r.left < 0 || r.right > window.innerWidth + 0.5)).length"
    )
    assert outside == 0, f"{outside} cards outside the {width} px window"


# -- play -----------------------------------------------------------------------------------------------
def test_play_a_whole_game_by_clicking_through_every_result(page, tmp_path):
    server = _live(11, replay_dir=tmp_path)
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-seq]")
        decisions = results_shown = dora_held = dora_won = since_told = 0
        shown_hands: list[int] = []
        shot_table = shot_result = reloaded = False
        while _body(page, "view") != "game-end":
            assert page.is_hidden("#error"), page.inner_text("#error")
            if _body(page, "view") == "result":
                view = page.locator("#result-view")
                shown_hands.append(int(view.get_attribute("data-hand")))
                # the log stops at this hand's end: no line of the next deal under its result
                assert f"hand {shown_hands[-1] + 1}: " not in page.inner_text("#log")
                text = view.inner_text()
                assert "Settlement" in text and "this hand" in text
                if page.query_selector("#yaku"):  # a win: display names, never ids like closed_tsumo
                    assert "_" not in page.inner_text("#yaku")
                    assert " han · " in page.inner_text("#total") and "points" in page.inner_text("#total")
                    assert page.query_selector(".seat.winner .card.wincard"), "the winning card in the winner's hand"
                    dora_won += _result_dora_marked(page)
                    if not shot_result:
                        page.screenshot(path=str(IMG / "result.png"))
                        shot_result = True
                assert page.query_selector("#hand button.card:enabled") is None  # no move under a result
                seen = _body(page, "seen")
                page.click("#result-continue") if results_shown % 2 else page.keyboard.press("Enter")
                page.wait_for_function(f"document.body.dataset.seen !== '{seen}'")
                results_shown += 1
                continue
            with_meld = page.query_selector(".meld") is not None  # the README's table shows a call if it can
            if (
                not shot_table
                and (decisions > 8 and with_meld or decisions > 30)
                and not page.query_selector('#controls button[data-name="pass"]')
            ):
                page.screenshot(path=str(IMG / "table.png"))
                shot_table = True
            dora_held += _dora_named_and_marked(page)
            # the header names what a win needs this round (R30); the newest discard is marked; the centre says
            # what happened since your last move, your own discard first
            assert re.search(r"· min [12] han$", page.inner_text("#info-hand")), page.inner_text("#info-hand")
            assert len(page.query_selector_all("#table .card.latest")) <= 1
            since = page.query_selector("#since")  # not in a claim: the claimed card is the centre then
            since_told += decisions > 0 and since is not None and since.inner_text().startswith("you discard ")
            _move(page)
            decisions += 1
            if not reloaded and decisions >= 5 and _body(page, "view") == "table":
                seq = _body(page, "seq")  # closing the tab and reopening resumes the game
                page.reload()
                page.wait_for_selector(f"body[data-seq='{seq}']")
                reloaded = True
            assert decisions < 400
        assert decisions > 10 and reloaded and shot_table and shot_result and since_told > 0
        assert dora_held > 0, "the game's decisions include some with the dora in your hand, marked"
        assert dora_won > 0, "some winning hand of the game holds the dora, marked in its result"
        total = int(_body(page, "results"))
        assert results_shown == total and shown_hands == list(range(1, total + 1))  # each hand once, in order
        assert len(page.query_selector_all("#history li")) == total
        rows = page.query_selector_all("#gameend tr")
        assert len(rows) == 4  # header + three seats with placements
        last = page.evaluate("document.querySelector('#history li:last-child').textContent")
        if "Tsumo" in last or "Ron" in last:  # the table under the game-over panel shows the last hand's ending
            assert page.query_selector(".seat.winner .card.wincard")
        mine = [r.inner_text().split("\t")[0] for r in rows[1:] if r.inner_text().split("\t")[1] == "you"]
        assert page.inner_text("#gameend-box h2").endswith(
            f"you finished {mine[0]}{['st', 'nd', 'rd'][int(mine[0]) - 1]}"
        )
        assert "placement points" in page.inner_text("#gameend") and "R40" in page.inner_text("#gameend")
        assert "saved:" in page.inner_text("#controls")  # the game was written as a replay
        saved = list(tmp_path.glob("play-*.json"))[0]
        lines = page.inner_text("#gameend-box").splitlines()  # what to paste to watch or review it
        assert f"watch it: meld8 view {saved}" in lines
        assert f"review your decisions: meld8 review {saved} --seat 0" in lines
        assert list(tmp_path.glob("play-*.json"))
        page.click("#history li >> nth=0")  # a past result opens again from the history
        page.wait_for_selector("#result-view[data-hand='1']")
        assert page.inner_text("#prompt").startswith("An earlier hand's result")
        after = {
            r.inner_text().split("\t")[0]: r.inner_text().split("\t")[3]
            for r in page.query_selector_all("#ledger tr")[1:4]
        }
        plates = {
            p.query_selector(".name").inner_text(): p.query_selector(".score").inner_text()
            for p in page.query_selector_all(".seat .plate")
        }
        assert plates == {name: f"{points} points" for name, points in after.items()}  # the seats' points then
        page.keyboard.press("Escape")
        page.wait_for_selector("body[data-view='game-end']")
        page.keyboard.press("n")  # a new game with n
        page.wait_for_function("document.body.dataset.view !== 'game-end'")
    finally:
        server.stop()


def test_a_hand_that_ends_before_your_next_decision_is_still_shown(page):
    """TENHOU_SEED: hand 1 ends (seat 1's Tenhou, R29) before you are asked anything. The page opens on
    that result, not on hand 2's table; keys go to the result, not to the game, until it is closed."""
    server = _live(TENHOU_SEED, _short(), agents=("greedy", "greedy"))
    try:
        page.goto(server.url)
        page.wait_for_selector("#result-view[data-hand='1']")
        assert _body(page, "view") == "result" and _body(page, "results") == "1"
        title = page.inner_text("#win")
        assert "greedy (seat 1) wins by Tsumo" in title
        assert "Tenhou" in page.inner_text("#yaku") and "tenhou" not in page.inner_text("#yaku")
        assert page.query_selector_all(".seat.winner .card.wincard")
        assert "Hand 1" in page.inner_text("#history")
        seq = _body(page, "seq")
        page.keyboard.press("1")  # would discard the first card on the table: here it only closes the result
        page.wait_for_selector("body[data-view='table']")
        assert _body(page, "seq") == seq
        assert page.query_selector_all("#hand button.card:enabled")  # now it is your turn in hand 2
        page.reload()  # a result once seen stays seen in this tab
        page.wait_for_selector("body[data-view='table']")
    finally:
        server.stop()


def _dora_of_indicator(page) -> str | None:
    """The dora card code the header's indicator names (R35: the next rank in its suit, K to A), None before it."""
    ranks = "A23456789TJQK"
    ind = page.get_attribute("#dora-card .card", "data-card")
    return None if ind == "empty" else ranks[(ranks.index(ind[0]) + 1) % 13] + ind[1]


def _result_dora_marked(page) -> int:
    """A win's result marks the dora among the winning hand's cards (groups and called meld), and nothing else;
    returns how many it holds (0 or 1)."""
    dora = _dora_of_indicator(page)
    held = 0
    for card in page.query_selector_all("#result-view .groups .card"):
        is_dora = dora is not None and card.get_attribute("data-card") == dora
        assert ("isdora" in card.get_attribute("class").split()) == is_dora
        held += is_dora
    return held


def _dora_named_and_marked(page) -> int:
    """The header names the dora (the indicator's next rank in its suit, K to A, R35) and your hand marks it;
    returns how many dora your hand holds (0 or 1)."""
    ranks = "A23456789TJQK"
    ind = page.get_attribute("#dora-card .card", "data-card")
    if ind == "empty":
        assert page.inner_text("#dora-is") == "" and not page.query_selector(".card.isdora")
        return 0
    dora = ranks[(ranks.index(ind[0]) + 1) % 13] + ind[1]
    shown = ("10" if dora[0] == "T" else dora[0]) + {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}[dora[1]]
    assert page.inner_text("#dora-is") == f"dora {shown}"
    held = 0
    for card in page.query_selector_all("#hand .card"):
        is_dora = card.get_attribute("data-card") == dora
        assert ("isdora" in card.get_attribute("class").split()) == is_dora
        assert ("dora (+1 han" in card.get_attribute("title")) == is_dora
        held += is_dora
    return held


def test_words_for_players_and_the_joker_tooltip(page):
    server = _live(JOKER_SEED)
    try:
        page.goto(server.url)
        page.wait_for_selector("#hand button.card")
        page.focus("#hand button.card:enabled >> nth=0")  # keyboard play: Enter on a focused card discards it
        seq = _body(page, "seq")
        page.keyboard.press("Enter")
        page.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
        page.wait_for_selector("#hand button.card:enabled")
        # focus stays at the table (it went back to the top of the page after every move)
        assert page.evaluate("!!document.activeElement.closest('#hand, #controls, #center')")
        joker = page.locator('#hand button.card[data-card="JK"]')
        assert joker.is_disabled() and "R12" in joker.get_attribute("title")
        seq = _body(page, "seq")
        joker.click(force=True)  # a tap on it says why it stays (no hover on a phone), and plays nothing
        assert "cannot be discarded (R12)" in page.inner_text("#last") and _body(page, "seq") == seq
        page.evaluate("document.getElementById('last').textContent = ''")
        page.keyboard.press(
            str(1 + [c.get_attribute("data-card") for c in page.query_selector_all("#hand .card")].index("JK"))
        )
        assert "cannot be discarded (R12)" in page.inner_text("#last") and _body(page, "seq") == seq  # its key too
        assert page.inner_text("#prompt").startswith("Your turn")
        assert page.inner_text("#info-hand").startswith("Round 1 of 6 · hand 1")  # how long the game is
        assert not page.is_visible("#glossary dl")  # the words at the table, explained on demand
        page.click("#glossary summary")
        words = page.inner_text("#glossary dl")
        assert all(w in words for w in ("Tsumo", "Ron", "Pon", "Chii", "yaku, han", "dora", "R29", "R35"))
        _dora_named_and_marked(page)
        log = page.inner_text("#log")
        assert "you draw " in log and "seat 0" not in log and "draws" in log
        for _ in range(60):  # play on until a claim is offered: its buttons are sentences with glyphs
            if page.query_selector('#controls button[data-name="pass"]') or _body(page, "view") == "game-end":
                break
            if _body(page, "view") == "result":
                page.click("#result-continue")
                continue
            _move(page)
        _dora_named_and_marked(page)
        if page.query_selector('#controls button[data-name="pass"]'):
            labels = [b.inner_text() for b in page.query_selector_all("#controls button[data-name]")]
            assert "Pass" in labels and all("(" not in x for x in labels), labels
            assert page.query_selector(".pond .card.claim")  # the claimable discard is marked on the table
    finally:
        server.stop()


def test_a_move_in_one_tab_shows_in_the_other(browser):
    """Two tabs on one table: a discard in the second redraws the first (it kept "Your turn" and the card already
    thrown, and its click got "stale move")."""
    server = _live(JOKER_SEED)
    ctx, first, errors = _page(browser)
    try:
        first.goto(server.url)
        first.wait_for_selector("#hand button.card:enabled")
        second = ctx.new_page()
        second.goto(server.url)
        second.wait_for_selector("#hand button.card:enabled")
        seq = _body(first, "seq")
        assert _body(second, "seq") == seq
        _move(second)
        first.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
        assert _body(first, "seq") == _body(second, "seq")
        assert first.inner_text("#log") == second.inner_text("#log")
        for _ in range(200):  # on to a finished hand, dismissed in the first tab
            if _body(first, "view") == "result":
                break
            _move(first)
        assert _body(first, "view") == "result"
        first.click("#result-continue")
        first.wait_for_function("document.body.dataset.view !== 'result'")
        third = ctx.new_page()  # a tab opened later does not show that result again
        third.goto(server.url)
        third.wait_for_selector("body[data-seq]")
        assert _body(third, "view") != "result" and _body(third, "seen") == _body(first, "seen")
    finally:
        server.stop()
        ctx.close()
    assert errors == [], errors


PON_CHOICES_SEED = 13  # default rules, greedy and defensive: playing as _move does, a claim offers three Pons of 8♥


def test_a_key_with_several_answers_asks_which_instead_of_taking_the_first(page):
    """`p` with three ways to Pon plays none and says to click one (it silently took the first)."""
    server = _live(PON_CHOICES_SEED)
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-seq]")
        _play_on(page, until=lambda: len(page.query_selector_all('#controls button[data-name^="pon"]')) >= 2)
        pons = page.query_selector_all('#controls button[data-name^="pon"]')
        assert len(pons) >= 2, "the seed's claim with several Pons"
        # focus was at the table (the last card clicked): it goes to Pass, so a second Enter does not call
        assert page.evaluate("document.activeElement.dataset.name") == "pass"
        seq = _body(page, "seq")
        page.keyboard.press("p")
        assert (
            page.inner_text("#last") == f"{len(pons)} ways to Pon: click the one you want" and _body(page, "seq") == seq
        )
        pons[-1].click()  # the one wanted
        page.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
        assert page.query_selector(".seat.pos-me .meld")
    finally:
        server.stop()


TSUMO_SEED = 2  # default rules, greedy and defensive: playing as _move does, Tsumo is offered at your 12th decision


def _plain_turn(page) -> bool:
    """Your turn to discard, with no Pass and no win to declare."""
    return (
        _body(page, "view") == "table"
        and page.query_selector("#hand button.card:enabled") is not None
        and not page.query_selector("#controls button[data-name], #controls button.win")
    )


def _focused(page) -> str:
    return page.evaluate("(e => e.id || e.dataset.name || e.dataset.card || e.tagName)(document.activeElement)")


def _hand(page) -> list[str]:
    return [c.get_attribute("data-card") for c in page.query_selector_all("#hand .card")]


def test_space_or_enter_on_a_turn_without_pass_discards_nothing(page):
    """After a redraw the page focused the first card, and space (pass, not offered) or Enter clicked it: a
    discard nobody chose. Now an action key that is not offered does nothing and focus never rests on a card."""
    server = _live(JOKER_SEED)
    try:
        page.goto(server.url)
        page.wait_for_selector("#hand button.card:enabled")
        for _ in range(60):  # a click first (focus at the table), then a plain turn
            _move(page) if _body(page, "view") == "table" else page.click("#result-continue")
            if _plain_turn(page):
                break
        assert _plain_turn(page)
        assert _focused(page) == "hand"  # the row, not a card
        seq, hand = _body(page, "seq"), _hand(page)
        for key in (" ", "Enter", "x", "t", "r", " "):
            page.keyboard.press(key)
        page.keyboard.press("Tab")  # the keyboard player's way on: Tab reaches the cards, Enter discards
        assert page.evaluate("document.activeElement.matches('#hand button.card')")
        page.keyboard.press(" ")  # not offered (no Pass), on a card Tab reached: still nothing
        chosen = page.evaluate("document.activeElement.dataset.card")
        page.keyboard.press("Enter")
        page.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
        # the socket keeps order: had a key before Enter sent a move, it would have been played first, and Enter's
        # move refused as stale; the one move played is the card Enter was on
        assert int(_body(page, "seq")) == int(seq) + 1 and page.is_hidden("#error")
        assert chosen in hand and chosen not in _hand(page)
    finally:
        server.stop()


def test_space_keeps_its_meaning_away_from_the_cards_and_actions(page):
    """Space is "pass" only where a pass is offered or focus is on a card or action: on the words' summary it still
    opens it (session 38's review: the key fix had taken space from every control)."""
    server = _live(JOKER_SEED)
    try:
        page.goto(server.url)
        page.wait_for_selector("#hand button.card:enabled")
        page.focus("details > summary")
        page.keyboard.press(" ")
        page.wait_for_function("document.querySelector('details').open")
    finally:
        server.stop()


def _play_to_the_tsumo(page) -> None:
    """Play TSUMO_SEED as _move does, closing each result, up to the decision where Tsumo is offered."""
    page.wait_for_selector("body[data-seq]")
    for _ in range(60):
        if _body(page, "view") == "result":
            seen = _body(page, "seen")
            page.click("#result-continue")
            page.wait_for_function(f"document.body.dataset.seen !== '{seen}'")
        elif page.query_selector('#controls button[data-action-id="52"]'):
            return
        else:
            _move(page)


def test_with_tsumo_offered_focus_is_on_tsumo_and_space_does_not_discard(page):
    """Tsumo offered: Enter threw the winning hand away (focus on the first card); it now declares the win."""
    server = _live(TSUMO_SEED)
    try:
        page.goto(server.url)
        _play_to_the_tsumo(page)
        assert page.query_selector('#controls button[data-action-id="52"]'), "the seed's Tsumo"
        assert _focused(page) == "tsumo"
        seq, hand = _body(page, "seq"), _hand(page)
        page.keyboard.press(" ")  # pass: not offered
        page.wait_for_timeout(600)
        assert (_body(page, "seq"), _hand(page)) == (seq, hand)
        page.keyboard.press("Enter")
        page.wait_for_selector("#result-view")
        assert "you win by Tsumo" in page.inner_text("#win")
    finally:
        server.stop()


def test_a_tsumo_on_offer_is_said_at_the_table_and_a_discard_declining_it_asks_twice(page):
    """One tap on a card threw a winning hand away, and only the side panel's button said a win was on offer (a
    player's walkthrough, session 47): the centre now offers the Tsumo beside the hand, and a discard that declines
    it waits for the same card chosen again."""
    server = _live(TSUMO_SEED)
    try:
        page.goto(server.url)
        _play_to_the_tsumo(page)
        assert "your hand wins" in page.inner_text("#tsumo-offer")
        seq, hand = _body(page, "seq"), _hand(page)
        card = page.locator("#hand button.card:enabled >> nth=0")
        name = card.get_attribute("data-card")
        card.click()
        page.wait_for_function("document.querySelector('#last').textContent.startsWith('Your hand wins')")
        assert (_body(page, "seq"), _hand(page)) == (seq, hand)  # nothing was sent: the same turn, the same hand
        asked = page.inner_text("#last")
        page.keyboard.press("2")  # another card by its key: asked again (about that card), still nothing sent
        page.wait_for_function("t => document.querySelector('#last').textContent !== t", arg=asked)
        assert (_body(page, "seq"), _hand(page)) == (seq, hand)
        page.locator(f'#hand button.card[data-card="{name}"]').click()  # the first card again: asked again
        page.locator(f'#hand button.card[data-card="{name}"]').click()  # and now it goes
        page.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
        assert name not in _hand(page)
    finally:
        server.stop()


RON_SEED = 8  # default rules, greedy and defensive: discarding the first card you may, greedy's 4♦ wins your hand


def test_a_ron_on_offer_is_said_at_the_table_with_focus_on_ron_and_enter_takes_it(page):
    """An opponent's discard that completes your hand: the claim box says it wins your hand, focus is on Ron (before
    Tsumo and Pass: Enter once passed a Ron, session 47) and Enter declares the win."""
    server = _live(RON_SEED)
    try:
        page.goto(server.url)
        page.wait_for_selector("#hand button.card:enabled")
        for _ in range(10):  # discard the first card you may (pass any other claim) until the Ron is offered
            if page.query_selector('#controls button[data-action-id="53"]'):
                break
            assert _body(page, "view") == "table" and not page.query_selector("#controls button.win")
            seq = _body(page, "seq")
            if page.query_selector('#controls button[data-name="pass"]'):
                page.click('#controls button[data-name="pass"]')
            else:
                page.locator("#hand button.card:enabled >> nth=0").click()
            page.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
        assert page.query_selector('#controls button[data-action-id="53"]'), "the seed's Ron offer"
        offer = page.query_selector("#center .claim-box.win-offer")  # said at the table, not only by the button
        assert offer and re.fullmatch(
            r"greedy discards\s*4\s*♦\s*— it wins your hand: Ron \(r\) or pass \(x\)\?", offer.inner_text()
        )
        assert page.query_selector('.pond .card.claim[data-card="4d"]')  # the winning discard marked on the table
        assert _focused(page) == "ron"  # the Ron button, not Pass
        page.keyboard.press("Enter")
        page.wait_for_selector("#result-view")
        assert page.inner_text("#win").endswith("you win by Ron on greedy's 4♦")
        assert page.query_selector(".seat.winner .card.wincard")
        assert _body(page, "results") == "1" and "you Ron on greedy" in page.inner_text("#history")
    finally:
        server.stop()


def test_a_log_line_keeps_its_number(page):
    """The log shows the last 40 lines; they were numbered from 1 each time, so a line's number changed."""
    server = _live(JOKER_SEED)
    numbered = "(ol => [...ol.children].map((li, i) => [ol.start + i, li.textContent]))(document.querySelector('#log'))"
    try:
        page.goto(server.url)
        page.wait_for_selector("#hand button.card:enabled")
        lines: dict[int, str] = {}
        for _ in range(30):
            if _body(page, "view") == "result":
                page.click("#result-continue")
                continue
            now = dict(page.evaluate(numbered))
            assert all(lines[n] == text for n, text in now.items() if n in lines), "a number changed its line"
            lines.update(now)
            _move(page)
        assert max(lines) > 60 and min(now) > 1  # past the 40 lines the page keeps
    finally:
        server.stop()


def test_a_click_anywhere_closes_a_result(page):
    """ "click or press any key": a click beside the result panel did nothing."""
    server = _live(TENHOU_SEED, _short(), agents=("greedy", "greedy"))
    try:
        page.goto(server.url)
        page.wait_for_selector("#result-view[data-hand='1']")
        page.click("#history li >> nth=0")  # the history opens a result: that click closes nothing
        page.wait_for_selector("#result-view[data-hand='1']")
        assert page.inner_text("#prompt").startswith("An earlier hand's result")
        page.click("header")
        page.wait_for_function("document.querySelector('#prompt').innerText.startsWith('The hand is over')")
        page.click("#log-box h3")  # outside the panel, in the side panel
        page.wait_for_selector("body[data-view='table'][data-seen='1']")
    finally:
        server.stop()


def test_at_1280x800_your_hand_stays_in_the_window_at_the_game_end(browser, tmp_path):
    """Two rows of discards and the game-end panel (long paths to paste) pushed your hand below the window: the panel
    scrolls inside instead."""
    ctx, page, errors = _page(browser, 1280, 800)
    folder = tmp_path / "a-rather-long-folder-name-for-the-saved-games" / "of-this-player"
    server = _live(6, _short(), replay_dir=folder)  # greedy and defensive: the last hand's ponds hold 9 cards
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-seq]")
        _play_on(page)
        assert _body(page, "view") == "game-end"
        assert max(len(p.query_selector_all(".card")) for p in page.query_selector_all(".pond")) > 6  # two rows
        hand = page.locator(".seat.pos-me .hand-row").bounding_box()
        assert page.evaluate("scrollY") == 0 and hand["y"] + hand["height"] <= 800, hand
        assert "review your decisions" in page.inner_text("#gameend-box")  # all of it still there, scrolled to
        page.set_viewport_size({"width": 1280, "height": 1000})  # a taller window: the whole panel again
        page.wait_for_function(  # nothing in it scrolls (the panel, its notes)
            "[...document.querySelectorAll('#gameend-box, .gameend-notes')]"
            ".every(n => n.scrollHeight <= n.clientHeight)"
        )
    finally:
        server.stop()
        ctx.close()
    assert errors == [], errors


THREE_WAY_TIE_SEED = 110  # SHORT rules, greedy and defensive, played as _move does: all three end on 30,000


def _shown(page, selector: str) -> bool:
    """Every element the selector finds lies inside the window and inside the visible part of each box around it
    that scrolls (a button scrolled away inside its panel is not shown, whatever its place on the page)."""
    return page.evaluate(
        """(sel => [...document.querySelectorAll(sel)].every(t => {
          const r = t.getBoundingClientRect();
          let top = 0, bottom = window.innerHeight, left = 0, right = window.innerWidth;
          for (let n = t.parentElement; n && n !== document.body; n = n.parentElement) {
            const st = getComputedStyle(n);
            if (st.overflowX === "visible" && st.overflowY === "visible") continue;
            const c = n.getBoundingClientRect();
            top = Math.max(top, c.top); bottom = Math.min(bottom, c.bottom);
            left = Math.max(left, c.left); right = Math.min(right, c.right);
          }
          return r.height > 0 && r.top >= top - 0.5 && r.bottom <= bottom + 0.5 && r.left >= left - 0.5
            && r.right <= right + 0.5;
        }))"""
        + f"({json.dumps(selector)})"
    )


def test_at_1280x800_a_tied_game_end_keeps_its_scores_and_buttons_in_view(browser, tmp_path):
    """The longest game-end panel (a three-way tie said in words, the saved game's long paths) at 1280x800: the whole
    score table and every button stay in view while the rest scrolls inside the panel, read to its end."""
    ctx, page, errors = _page(browser, 1280, 800)
    folder = tmp_path / "a-rather-long-folder-name-for-the-saved-games" / "of-this-player"
    server = _live(THREE_WAY_TIE_SEED, _short(), replay_dir=folder)
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-seq]")
        _play_on(page)
        assert _body(page, "view") == "game-end"
        tie = (
            "defensive and you and greedy tied on 30,000 points: defensive ahead of you ahead of greedy (seat order "
            "from the first dealer, defensive; R40)."
        )
        assert page.inner_text("#gameend-box p.tie") == tie
        assert len(page.query_selector_all("#gameend-box button")) >= 1
        assert page.evaluate("scrollY") == 0
        assert _shown(page, "#gameend") and _shown(page, "#gameend-box button") and _shown(page, "#gameend-box p.tie")
        # read the panel to its end (the commands to paste): the scores and the buttons stay where they are
        page.evaluate("[...document.querySelectorAll('#gameend-box, #gameend-box *')].forEach(n => n.scrollTop = 1e6)")
        assert _shown(page, "#gameend-box p.saved:last-of-type")
        assert _shown(page, "#gameend") and _shown(page, "#gameend-box button")
        hand = page.locator(".seat.pos-me .hand-row").bounding_box()
        assert page.evaluate("scrollY") == 0 and hand["y"] + hand["height"] <= 800, hand
        seq = _body(page, "seq")
        page.click("#new-game-center")  # the panel's own button starts the next game
        page.wait_for_function(f"document.body.dataset.view !== 'game-end' || document.body.dataset.seq !== '{seq}'")
    finally:
        server.stop()
        ctx.close()
    assert errors == [], errors


@pytest.mark.parametrize("width", [1280, 1920, 390])
def test_layout_fits_the_window(browser, width):
    """Seats around the table, you at the bottom, opponents' hands as backs; no horizontal overflow; cards
    grow with the window; the header keeps its height when the dora indicator appears."""
    ctx, page, errors = _page(browser, width, 900)
    server = _live(JOKER_SEED)
    try:
        page.goto(server.url)
        page.wait_for_selector("#hand button.card")
        _no_overflow(page)
        me = page.locator(".seat.pos-me").bounding_box()
        for pos in ("left", "right"):
            box = page.locator(f".seat.pos-{pos}").bounding_box()
            assert box["y"] + box["height"] <= me["y"] + 1, f"{pos} seat below yours"
            assert int(page.locator(f".seat.pos-{pos} .backs").get_attribute("data-backs")) == 7  # R10
        if width >= 1280:
            left, right = page.locator(".seat.pos-left").bounding_box(), page.locator(".seat.pos-right").bounding_box()
            assert left["x"] < right["x"]  # your shimocha (the next seat) on the right
        card = page.locator("#hand button.card >> nth=0").bounding_box()
        expected = {1280: (34, 40), 1920: (52, 58), 390: (30, 31)}[width]  # clamp(30px, 2.8vw, 58px)
        assert expected[0] <= card["width"] <= expected[1], card
        header = page.locator("header").bounding_box()["height"]
        assert page.query_selector("#dora-card .card:not(.empty)")  # the dealer's first discard turned it
        page.evaluate("document.querySelector('#dora-card').replaceChildren()")  # without it
        assert page.locator("header").bounding_box()["height"] == header
        for _ in range(8):  # a few moves on: ponds fill, still nothing outside the window
            if _body(page, "view") == "result":
                _no_overflow(page)
                page.click("#result-continue")
            elif _body(page, "view") == "table":
                _move(page)
        _no_overflow(page)
    finally:
        server.stop()
    server = _live(TENHOU_SEED, _short(), agents=("greedy", "greedy"))  # a result view with its ledger
    try:
        page.goto(server.url)
        page.wait_for_selector("#result-view #ledger")
        _no_overflow(page)
        box = page.locator("#result-view").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
    finally:
        server.stop()
        ctx.close()
    assert errors == [], errors


def test_a_phone_plays_a_short_game_to_its_end_with_every_score_in_view(browser):
    """At 390 px the last hand's six-column settlement and the game-end table fit their panels: no sideways
    scrolling inside them (a player saw the final scores cut off, the panel scrolling without a scrollbar)."""
    ctx, page, errors = _page(browser, 390, 844)
    server = _live(TIE_SEED, _short())
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-seq]")
        _play_on(page, at_result=lambda: _fits(page, "#result-view"))
        assert _body(page, "view") == "game-end"
        _fits(page, "#gameend-box")
        _no_overflow(page)
        assert "you finished" in page.inner_text("#gameend-box h2")
        # this seed ends with greedy and defensive on 32,000: the page says why defensive is placed first
        tie = (
            "defensive and greedy tied on 32,000 points: defensive ahead of greedy (seat order from the first "
            "dealer, defensive; R40)."
        )
        assert page.inner_text("#gameend-box p.tie") == tie
    finally:
        server.stop()
        ctx.close()
    assert errors == [], errors


def _fits(page, selector: str) -> None:
    """The panel shows all of its content across: nothing to scroll sideways inside it."""
    over = page.evaluate(
        f"(() => {{ const b = document.querySelector('{selector}'); return b.scrollWidth - b.clientWidth; }})()"
    )
    assert over <= 0, f"{selector} hides {over} px to its right"


def test_a_new_game_with_the_same_first_result_shows_it_again(page):
    """What the page remembers having shown is keyed by the game's random id: a table restarted on the same address
    with the same seed (the same first result, byte for byte) shows that result again, not skipped as seen."""
    from meld8_app.web.app import create_app
    from meld8_app.web.session import LiveGame

    def table(port=None):
        game = lambda: LiveGame(["greedy", "greedy"], seat=0, rules=_short(), seed=TENHOU_SEED)  # noqa: E731
        return Server(create_app("play", new_game=game), port=port)

    first = table()
    second = None
    try:
        page.goto(first.url)
        page.wait_for_selector("#result-view[data-hand='1']")
        page.click("#result-continue")
        page.wait_for_selector("body[data-view='table'][data-seen='1']")
        first.stop()
        second = table(first.port)
        page.reload()
        page.wait_for_selector("#result-view[data-hand='1']")
    finally:
        (second or first).stop()


@pytest.mark.parametrize("stored", ['{"n":null,"fp":"[]"}', '{"n":-1,"fp":"[]"}', '{"n":"","fp":"[]"}', "not json"])
def test_garbage_in_the_pages_storage_shows_every_result_again(page, stored):
    """What the page remembers having shown (localStorage) is read strictly: a crafted or stale value shows the
    results again instead of hiding every result (n null) or swallowing clicks (n -1 or "")."""
    server = _live(TENHOU_SEED, _short(), agents=("greedy", "greedy"))
    try:
        page.goto(server.url)
        page.wait_for_selector("#result-view[data-hand='1']")
        page.evaluate(f"localStorage.setItem('meld8-seen', {json.dumps(stored)})")
        page.reload()
        page.wait_for_selector("#result-view[data-hand='1']")  # hand 1's result, not yet closed, shown again
        assert _body(page, "seen") == "0"
        page.click("#result-continue")
        page.wait_for_selector("#hand button.card:enabled")
        seq = _body(page, "seq")
        page.locator("#hand button.card:enabled >> nth=0").click()  # and a click plays
        page.wait_for_function(f"document.body.dataset.seq !== '{seq}'")
    finally:
        server.stop()


def test_the_page_forwards_its_query_string(page):
    """The page's own query (e.g. a token the server asks for) goes with every request it makes."""
    server = _live(JOKER_SEED)
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    page.on("websocket", lambda ws: seen.append(ws.url))
    try:
        page.goto(server.url + "?token=abc123")
        page.wait_for_selector("#hand button.card")
        api = [u for u in seen if "/api/" in u or "/ws/" in u]
        assert any("/api/config" in u for u in api) and any("/ws/play" in u for u in api)
        assert all(u.endswith("?token=abc123") for u in api), api
    finally:
        server.stop()


# -- view and review --------------------------------------------------------------------------------------
def test_viewer_steps_through_a_tournament_game_and_stops_on_each_result(page, tmp_path):
    from meld8_app.cli.view import viewer_data
    from meld8_app.web.app import create_app

    _, data = viewer_data(str(_tournament_log(tmp_path)), 2)
    frames = data["frames"]
    server = Server(create_app("view", replay=data))
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-frame='0']")
        assert page.inner_text("#frame") == f"action 0 / {frames[-1]['index']}"
        header = page.locator("header").bounding_box()["height"]
        for _ in range(5):
            page.click("#next")
        page.wait_for_selector("body[data-frame='5']")
        assert page.locator("header").bounding_box()["height"] == header  # the dora card did not move it
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("body[data-frame='4']")
        # the seat names are the tournament's agents; every hand is shown, then hidden by the toggle
        text = page.inner_text("#table")
        assert "greedy" in text and "random" in text and "defensive" in text
        assert len(page.query_selector_all(".seat .cards.hand")) == 3
        page.uncheck("#show-all")
        assert len(page.query_selector_all(".seat .cards.hand")) == 0
        assert len(page.query_selector_all(".seat .cards.backs")) == 3
        page.check("#show-all")
        # every hand's ending has its own frame: step to each with "result »"
        marks = [i for i, f in enumerate(frames) if f.get("result")]
        assert marks
        page.keyboard.press("Home")
        page.wait_for_selector("body[data-frame='0']")
        for i in marks:
            page.click("#next-result")
            page.wait_for_selector(f"body[data-frame='{i}']")
            assert _body(page, "view") == "result" and page.query_selector("#result-view #ledger")
            res = data["results"][frames[i]["results_count"] - 1]  # sent once, not in every frame
            assert page.get_attribute("#result-view", "data-hand") == str(res["hand"])
            if res["win"]:
                assert page.query_selector(".seat.winner .card.wincard")
        assert "placement points" in page.inner_text("#ledger")  # the last hand's ledger ends the game (R40)
        page.keyboard.press("End")
        page.wait_for_selector(f"body[data-frame='{len(frames) - 1}']")
        assert page.query_selector("#gameend") and "placement points" in page.inner_text("#gameend")
        assert len(page.query_selector_all("#history li")) == len(marks)
    finally:
        server.stop()


def test_viewer_step_buttons_on_a_phone_are_in_view_without_scrolling(browser, tmp_path):
    """At 390x844 the viewer's step buttons sat below the table (a long scroll after each step): they stay in the
    window, on top of nothing they hide for good (the page's end scrolls clear of them), and a tap steps."""
    from meld8_app.cli.view import viewer_data
    from meld8_app.web.app import create_app

    _, data = viewer_data(str(_tournament_log(tmp_path)), 2)
    last = len(data["frames"]) - 1
    server = Server(create_app("view", replay=data))
    ctx, page, errors = _page(browser, 390, 844)
    nav = ["#prev-hand", "#prev", "#next", "#next-hand", "#next-result"]

    def in_view() -> None:
        assert page.evaluate("scrollY") == 0
        for sel in nav:
            box = page.locator(sel).bounding_box()
            assert (
                0 <= box["x"] and box["x"] + box["width"] <= 390 and 0 <= box["y"] and box["y"] + box["height"] <= 844
            )
            on_top = f"(b => document.elementFromPoint({box['x'] + box['width'] / 2}, {box['y'] + box['height'] / 2})"
            assert page.evaluate(on_top + f".closest('button') === b)(document.querySelector('{sel}'))"), sel

    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-frame='0']")
        in_view()
        page.click("#next-result")  # a result frame: the tallest table (the result panel in its middle)
        page.wait_for_function("document.body.dataset.view === 'result'")
        frame = int(_body(page, "frame"))
        in_view()
        page.click("#next")
        page.wait_for_selector(f"body[data-frame='{frame + 1}']")
        page.click("#prev")
        page.wait_for_selector(f"body[data-frame='{frame}']")
        assert page.evaluate("scrollY") == 0  # the taps stepped without the page scrolling to the buttons
        page.keyboard.press("End")
        page.wait_for_selector(f"body[data-frame='{last}']")
        in_view()
        # the page's end (the keys' line) scrolls clear of the buttons
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        keys = page.locator("#keys").bounding_box()
        assert keys["y"] + keys["height"] <= min(page.locator(s).bounding_box()["y"] for s in nav) + 0.5
        page.click("#prev")
        page.wait_for_selector(f"body[data-frame='{last - 1}']")
    finally:
        server.stop()
        ctx.close()
    assert errors == [], errors


def _review_server(tmp_path: Path, agent: str):
    """The review document of seat 2 of a small tournament's first game against ``agent``, the viewer's data of that
    game and a server showing both."""
    from meld8_app.cli.view import viewer_data
    from meld8_app.web.app import create_app
    from meld8_app.web.review import review
    from meld8_env.rules import RuleConfig

    doc, data = viewer_data(str(_tournament_log(tmp_path)), 0)
    rev = review(RuleConfig.from_dict(doc["rules"]), doc["seed"], doc["actions"], seat=2, agent=agent)
    return rev, data, Server(create_app("review", replay=data, review=rev))


def test_review_page(page, tmp_path):
    rev, data, server = _review_server(tmp_path, "ppo")
    try:
        page.goto(server.url)
        page.wait_for_selector("#agreement")
        assert f"agreement {round(100 * rev['summary']['agreement'])}%" in page.inner_text("#agreement")
        explain = page.inner_text("#explain")
        assert "distance" in explain and "acceptance" in explain and "danger" in explain
        # the review's own words too: the reference, its numbers, what "flagged" means (session 47)
        assert "ppo\nthe reference agent" in explain and "more than 0.5 probability" in explain
        flagged = page.query_selector_all("#flagged .decision")
        assert len(flagged) == rev["summary"]["flagged"] > 0
        hands = [f"hand {d['hand']} ({d['phase']}), action {d['index']}:" for d in rev["decisions"] if d["flagged"]]
        assert [x.inner_text().split(" played")[0] for x in flagged] == hands  # placed in the game, not by index alone
        # "next decision of this seat" walks the seat's decisions in order
        index = [d["index"] for d in rev["decisions"] if d["index"] > 0]  # the page opens on action 0
        for want in index[:3]:
            page.click("#next-decision")
            page.wait_for_function(f"document.querySelector('#decision').innerText.includes('action {want}:')")
        page.click("#prev-decision")
        page.wait_for_function(f"document.querySelector('#decision').innerText.includes('action {index[1]}:')")
        first = next(d for d in rev["decisions"] if d["flagged"] and d["discards"])
        page.locator("#flagged .decision", has_text=f"action {first['index']}:").click()
        page.wait_for_function(f"document.querySelector('#decision').innerText.includes('action {first['index']}:')")
        text = page.inner_text("#decision")
        assert first["played"]["label"] in text and first["reference"]["label"] in text
        assert page.query_selector("#lookahead") and "danger:" in page.inner_text("#lookahead")
        _no_overflow(page)
        review_box = page.locator("#review").bounding_box()
        assert review_box["x"] + review_box["width"] <= 1280  # the review fits a 1280 px window
        page.evaluate("document.querySelector('aside').scrollTop = 0")  # the decision at the top of the panel
        page.screenshot(path=str(IMG / "review.png"))
        # a claim has no look-ahead table: the panel says where to look instead (it showed nothing: session 47)
        claim = next(d for d in rev["decisions"] if any(o["name"] == "pass" for o in d["options"]))
        page.keyboard.press("Home")
        for _ in rev["decisions"]:
            if f"action {claim['index']}:" in page.inner_text("#decision"):
                break
            page.click("#next-decision")
        assert f"action {claim['index']}:" in page.inner_text("#decision")
        assert "A claim: the look-ahead table is for discards" in page.inner_text("#claim-note")
        assert page.query_selector("#lookahead") is None
    finally:
        server.stop()


def test_review_with_the_search_shows_its_values_and_marks_its_choice(page, tmp_path):
    """A search reference gives values, not probabilities (review.py): the column says so, every row has its signed
    value, and the search's own choice is marked even where the margin rule kept it below the top value."""
    rev, data, server = _review_server(tmp_path, "search")
    try:
        page.goto(server.url)
        page.wait_for_selector("#agreement")
        valued = [d for d in rev["decisions"] if any(o.get("value") is not None for o in d["options"])]
        below = [d for d in valued if d["options"][0]["id"] != d["reference"]["id"]]
        for d in valued[:2] + below[:1]:
            page.keyboard.press("Home")
            for _ in range(len(rev["decisions"])):  # "next decision" walks the seat's decisions from the start
                if f"action {d['index']}:" in page.inner_text("#decision"):
                    break
                page.click("#next-decision")
            head = page.inner_text("#decision table.options tr >> nth=0")
            assert "search value" in head and "probability" not in head
            rows = page.query_selector_all("#decision table.options tr")[1:]
            assert len(rows) == min(len(d["options"]), 8)
            for row, o in zip(rows, d["options"], strict=False):
                want = ("−" if o["value"] < 0 else "+") + f"{abs(o['value']):.2f}"
                assert row.inner_text().split("\t")[-1].strip() == want
            marked = page.query_selector_all("#decision tr.ref")
            assert len(marked) == 1 and "← search" in marked[0].inner_text()
            assert d["reference"]["label"] in marked[0].inner_text()
            note = page.query_selector("#decision p.note")
            assert (note is not None) == (d in below)
        assert below, "some decision's choice sits below the top value (the margin rule), so the note was shown"
    finally:
        server.stop()


def test_the_viewer_writes_one_minus_sign_and_numbers_the_log_lines_as_said(page):
    """The game-end table's score columns wrote "-17,000" beside the placement points' "−20,000"; the log's lines
    were numbered from 1 whatever came before them."""
    import random
    import re

    from meld8_app.web.app import create_app
    from meld8_app.web.session import pack_frames, replay_frames
    from meld8_env.protocol import GameStreams
    from meld8_env.rules import RuleConfig

    rules, rng = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=1), random.Random(5)
    g = GameStreams(rules, seed=5)
    while (p := g.pending()) is not None:
        g.step(rng.choice([a["id"] for a in p[1]["actions"]]))
    frames, results = pack_frames(replay_frames(rules, 5, g.answers))
    end = frames[-1]["game_end"]
    end["raw_scores"][end["placements"].index(3)] = -7_000  # the last place below zero (R40 allows it)
    end["final_scores"][end["placements"].index(3)] = -17_000
    server = Server(create_app("view", replay={"frames": frames, "results": results, "names": ["a", "b", "c"]}))
    try:
        page.goto(server.url)
        page.wait_for_selector("body[data-frame='0']")
        page.keyboard.press("End")
        page.wait_for_selector("#gameend")
        text = page.inner_text("#gameend")
        assert "−7,000" in text and "−17,000" in text and not re.search(r"-\d", text), text
        log = frames[-1]["log"]
        assert page.evaluate("document.querySelector('#log').start") == frames[-1]["said"] - len(log) + 1 > 1
        assert page.inner_text("#log li >> nth=-1") == log[-1]
    finally:
        server.stop()


def _reachable(page, selector: str) -> bool:
    """The element can be brought into the window by scrolling a box that scrolls (the page itself hides sideways
    overflow: a box with overflow hidden may be scrolled by a script, never by a reader)."""
    return page.evaluate(
        """(sel => {
          const t = document.querySelector(sel);
          for (let n = t.parentElement; n && n !== document.body; n = n.parentElement) {
            if (["auto", "scroll"].includes(getComputedStyle(n).overflowX)) n.scrollLeft = n.scrollWidth;
          }
          const r = t.getBoundingClientRect();
          return r.left >= 0 && r.right <= window.innerWidth + 0.5;
        })"""
        + f"({json.dumps(selector)})"
    )


def _in_panel(page, selector: str) -> bool:
    """The element's top is in view in the side panel and the window."""
    return page.evaluate(
        """(sel => {
          const r = document.querySelector(sel).getBoundingClientRect();
          const a = document.querySelector("aside").getBoundingClientRect();
          return r.top >= Math.max(a.top, 0) - 0.5 && r.top + 20 <= Math.min(a.bottom, window.innerHeight) + 0.5;
        })"""
        + f"({json.dumps(selector)})"
    )


def test_review_on_a_phone_and_jumps_in_a_scrolled_side_panel(browser, tmp_path):
    """At 390 px the look-ahead's last column ("danger: defensive") was cut off and could not be scrolled to; at
    1280x800 a flagged decision clicked (or End) left the side panel scrolled past the buttons and the decision."""
    rev, data, server = _review_server(tmp_path, "ppo")
    flagged = [d for d in rev["decisions"] if d["flagged"] and d["discards"]]
    try:
        ctx, page, errors = _page(browser, 390, 844)
        page.goto(server.url)
        page.wait_for_selector("#agreement")
        page.locator("#flagged .decision", has_text=f"action {flagged[0]['index']}:").click()
        page.wait_for_selector("#lookahead")
        assert _in_panel(page, "#next-decision") and _in_panel(page, "#decision")  # the click brought them up
        last = "#lookahead tr:first-of-type th:last-child"
        assert page.inner_text(last).startswith("danger: ")
        assert _reachable(page, last)
        _no_overflow(page)
        ctx.close()
        assert errors == [], errors
        ctx, page, errors = _page(browser, 1280, 800)
        page.goto(server.url)
        page.wait_for_selector("#agreement")
        bottom = "(a => { a.scrollTop = a.scrollHeight; return a.scrollTop; })(document.querySelector('aside'))"
        assert page.evaluate(bottom) > 0  # the panel scrolls on its own, and is scrolled to the flagged list
        want = flagged[-1]["index"]
        page.locator("#flagged .decision", has_text=f"action {want}:").click()
        page.wait_for_function(f"document.querySelector('#decision').innerText.includes('action {want}:')")
        assert _in_panel(page, "#controls .nav") and _in_panel(page, "#next-decision") and _in_panel(page, "#decision")
        page.evaluate(bottom)
        page.keyboard.press("End")
        page.wait_for_selector(f"body[data-frame='{len(data['frames']) - 1}']")
        assert _in_panel(page, "#controls .nav") and _in_panel(page, "#decision")
        ctx.close()
        assert errors == [], errors
    finally:
        server.stop()
