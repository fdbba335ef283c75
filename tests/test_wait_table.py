"""The engine's wait table (issue 20 item 3): R33 waits per seat, kept beside the records (``_engine.c``).

What the table relies on and what it must never change:
- for every card c a seat does not hold, ``is_win_form(hand + c)`` exactly when c is in ``waits(hand)``
  (R26/R27/R33), on hands from real bot games, one card short of their wins, and random hands;
- ``FastBatch.waits()`` / ``records.waits_records`` equal ``waits_batch`` of each seat's hand (the drawer's
  without its drawn card; 0 for the seat holding 8 cards after a call, and for finished games);
- games stepped in every ``wait_mode`` (the checks reading the table or not) are byte-identical, in the
  batch and in rollouts, 3p and 2p, penalty mode included; a table left over from other games (a restore)
  changes nothing, because an entry is used only when its key is the seat's hand and meld now.
A mismatch prints the hand in R4 notation.
"""

from __future__ import annotations

import numpy as np
import pytest

from meld8_env.cards import format_cards, from_mask
from meld8_env.codes import Phase
from meld8_env.engine.fast import WAIT_MODES, FastBatch, wait_mode
from meld8_env.engine.records import concat_records, waits_records
from meld8_env.hands import is_win_form_batch, waits_batch
from meld8_env.rollout import rollout
from meld8_env.rules import RuleConfig
from training.bot_states import play_bot_states

RULES = {"3p": RuleConfig(), "2p": RuleConfig.two_player(), "penalty": RuleConfig(penalty_mode=True)}
ONE = np.uint64(1)


def raw(r: np.ndarray) -> bytes:
    """The fields' bytes (not the struct padding, which numpy copies leave as they find it)."""
    return b"".join(np.ascontiguousarray(r[f]).tobytes() for f in r.dtype.names)


def r4(mask: int) -> str:
    return format_cards(from_mask(int(mask)), sort=True)


@pytest.fixture
def mode():
    """Set a wait mode for one test; the process-wide mode is put back afterwards."""
    before = wait_mode()
    yield wait_mode
    wait_mode(before)


def random_states(rules: RuleConfig, games: int, steps: int, seed: int, penalty_rate: float = 0.0) -> np.ndarray:
    """Records after each of ``steps`` random plays of ``games`` games (some illegal actions when asked)."""
    b = FastBatch(games, rules, wait_table=False)
    b.reset(np.arange(games, dtype=np.uint64) + np.uint64(seed))
    out = []
    for t, act in enumerate(random_actions(b, steps, seed, penalty_rate)):
        b.step(act)
        out.append(b.snapshot(slice(None)))
        if b.over.any():
            i = np.flatnonzero(b.over)
            b.start(i, i.astype(np.uint64) + np.uint64(seed + 1000 * (t + 1)))
    return concat_records(out)


def random_actions(b: FastBatch, steps: int, seed: int, penalty_rate: float):
    rng_state = np.arange(b.B, dtype=np.uint64) * np.uint64(977) + np.uint64(seed)
    noise = np.random.default_rng(seed)
    act = np.zeros(b.B, np.int64)
    for _ in range(steps):
        b.random_legal(rng_state, act)
        if penalty_rate:
            wild = noise.random(b.B) < penalty_rate
            act[wild] = noise.integers(0, 64, int(wild.sum()))
        yield act.copy()


def wait_hands(rec: np.ndarray, P: int) -> np.ndarray:
    """(N, P) the hand each seat's waits are about (the Python twin of eng_wait_hand), 0 where none."""
    hands = rec["hands"][:, :P].copy()
    seats = np.arange(P)[None, :]
    cur = (rec["current"][:, None] == seats) & (rec["phase"][:, None] != int(Phase.CLAIM))
    drawer = cur & (rec["phase"][:, None] == int(Phase.DRAW)) & (rec["drawn"][:, None] >= 0)
    drawn = np.where(rec["drawn"] >= 0, rec["drawn"], 0).astype(np.uint64)[:, None]
    hands = np.where(drawer, hands & ~(ONE << drawn), hands)
    hands[cur & ~drawer] = 0
    hands[rec["phase"] == int(Phase.OVER)] = 0
    return hands


def expected_waits(rec: np.ndarray, P: int) -> np.ndarray:
    hands = wait_hands(rec, P)
    melds = rec["melds"][:, :P]
    want = np.zeros_like(hands)
    live = hands != 0
    want[live] = waits_batch(hands[live], melds[live])
    return want


def assert_waits_equal(got: np.ndarray, rec: np.ndarray, P: int) -> None:
    want = expected_waits(rec, P)
    bad = np.argwhere(got != want)
    if len(bad):
        i, p = bad[0]
        h, m = wait_hands(rec, P)[i, p], rec["melds"][i, p]
        raise AssertionError(
            f"{len(bad)} mismatches; record {i} seat {p}: hand {r4(h)} meld {r4(m) or '-'}: "
            f"table {r4(got[i, p])}, waits {r4(want[i, p])}"
        )


def assert_win_iff_wait(hands: np.ndarray, melds: np.ndarray) -> None:
    """For every card c not held: is_win_form(hand + c) == (c in waits(hand))."""
    w = waits_batch(hands, melds)
    for c in range(53):
        bit = ONE << np.uint64(c)
        free = ((hands | melds) & bit) == 0
        win = is_win_form_batch(hands[free] | bit, melds[free])
        bad = np.flatnonzero(win != ((w[free] & bit) != 0))
        if len(bad):
            h, m = hands[free][bad[0]], melds[free][bad[0]]
            raise AssertionError(
                f"hand {r4(h)} meld {r4(m) or '-'} + {r4(int(bit))}: is_win_form {bool(win[bad[0]])}, "
                f"waits {r4(w[free][bad[0]])}"
            )


def test_R33_win_form_exactly_on_a_wait_in_bot_and_random_hands():
    """The identity the table's checks stand on, on tenpai-heavy hands: every 7-card hand of bot games,
    every winning hand of those games minus each of its cards, and random hands with and without a meld."""
    rules = RULES["3p"]
    rec = play_bot_states(rules, games=8, seed=5)
    hands, melds = wait_hands(rec, 3).ravel(), rec["melds"][:, :3].ravel()
    keep = hands != 0
    parts_h, parts_m = [hands[keep]], [melds[keep]]
    won = rec[rec["win_hand"] != 0]
    for c in range(53):  # a winning hand one card short: a hand that waits on that card
        bit = ONE << np.uint64(c)
        has = (won["win_hand"] & bit) != 0
        parts_h.append(won["win_hand"][has] & ~bit)
        parts_m.append(won["win_meld"][has])
    rng = np.random.default_rng(1)
    perm = np.argsort(rng.random((20000, 53)), axis=1).astype(np.uint64)
    parts_h.append(np.bitwise_or.reduce(ONE << perm[:, :7], axis=1))
    parts_m.append(np.zeros(20000, np.uint64))
    h, m = np.concatenate(parts_h), np.concatenate(parts_m)
    h, m = np.unique(np.stack([h, m], 1), axis=0).T
    assert len(h) > 5000 and (won["win_hand"] != 0).any()
    assert_win_iff_wait(np.ascontiguousarray(h), np.ascontiguousarray(m))


@pytest.mark.parametrize("key", sorted(RULES))
def test_batch_waits_equal_waits_batch_of_the_hands(key, mode):
    """FastBatch.waits() after every step of random play (the table filled by the checks or by the query)."""
    rules = RULES[key]
    P = rules.num_players
    for m in ("off", "tenpai", "lazy"):
        mode(m)
        b = FastBatch(64, rules)
        b.reset(np.arange(64, dtype=np.uint64))
        for t, act in enumerate(random_actions(b, 150, seed=3, penalty_rate=0.02 * (key == "penalty"))):
            b.step(act)
            assert_waits_equal(b.waits(), b.snapshot(slice(None)), P)
            if b.over.any():
                i = np.flatnonzero(b.over)
                b.start(i, i.astype(np.uint64) + np.uint64(100 * (t + 1)))


def test_records_waits_on_bot_states():
    for rules in (RULES["3p"], RULES["2p"]):
        rec = play_bot_states(rules, games=6, seed=8)
        assert_waits_equal(waits_records(rules, rec), rec, rules.num_players)


@pytest.mark.parametrize("key", sorted(RULES))
def test_games_identical_in_every_wait_mode(key, mode):
    """The same seeds and actions give byte-identical records and masks whether the checks read the table."""
    rules = RULES[key]
    runs, ended = {}, {}
    for m in WAIT_MODES:
        mode(m)
        b = FastBatch(128, rules)
        b.reset(np.arange(128, dtype=np.uint64) + np.uint64(7))
        trace, ends = [], 0
        for t, act in enumerate(random_actions(b, 300, seed=11, penalty_rate=0.03 * (key == "penalty"))):
            b.step(act)
            trace.append(raw(b.snapshot(slice(None))))
            ends += int((b.state["result"] != 0).sum())
            if b.over.any():
                i = np.flatnonzero(b.over)
                b.start(i, i.astype(np.uint64) + np.uint64(t))
        runs[m] = trace
        ended[m] = ends
    assert ended["off"] > 50, "the trace must end hands (Ron, Tsumo, draws) to test the checks"
    for m in WAIT_MODES:
        first = next((t for t, (x, y) in enumerate(zip(runs[m], runs["off"], strict=True)) if x != y), None)
        assert first is None, f"mode {m} differs from off at step {first}"


@pytest.mark.parametrize("key", ["3p", "2p"])
def test_bot_rollouts_identical_in_every_wait_mode(key, mode):
    """Rollouts (each with its own table) with greedy, defensive and random seats, to the end of the game."""
    rules = RULES[key]
    start = random_states(rules, 8, 12, seed=2)[-8:]
    pol = np.array([["greedy", "defensive", "random"][: rules.num_players]] * len(start))
    results = {}
    for m in WAIT_MODES:
        mode(m)
        rec = start.copy()
        r = rollout(rules, rec, pol, np.arange(len(rec), dtype=np.uint64), until="game", threads=1)
        results[m] = (raw(rec), r.steps.tobytes())
    assert all(results[m] == results["off"] for m in WAIT_MODES)


def test_a_table_from_other_games_changes_nothing(mode):
    """Restore records of other games into a batch whose table was filled by its own games: it plays them
    exactly as a fresh batch does (stale entries never match the new hands and melds)."""
    rules = RULES["3p"]
    mode("lazy")
    other = random_states(rules, 32, 40, seed=50)[-32:]
    used = FastBatch(32, rules)
    used.reset(np.arange(32, dtype=np.uint64))
    for act in random_actions(used, 60, seed=1, penalty_rate=0.0):
        used.step(act)
    used.restore(slice(None), other)
    fresh = FastBatch(32, rules)
    fresh.restore(slice(None), other)
    for act in random_actions(fresh, 200, seed=9, penalty_rate=0.0):
        used.step(act)
        fresh.step(act)
        assert raw(used.snapshot(slice(None))) == raw(fresh.snapshot(slice(None)))
        np.testing.assert_array_equal(used.waits(), fresh.waits())


def test_wait_mode_refuses_an_unknown_mode(mode):
    with pytest.raises(ValueError, match="wait mode must be one of off, lazy, eager, tenpai, got 'fast'"):
        mode("fast")
    assert mode() in WAIT_MODES


def test_bad_table_and_records_are_refused_in_one_line():
    from meld8_env.engine import _fast
    from meld8_env.engine.records import packed, start_records

    rules = RULES["3p"]
    rec = start_records(rules, np.arange(4, dtype=np.uint64))
    acts, ill = np.full(4, -1, np.int64), np.zeros(4, np.uint8)
    with pytest.raises(ValueError, match=r"table: buffer of 64 bytes does not hold 4 items of 72 bytes"):
        _fast.step(rec, packed(rules), acts, ill, np.zeros(8, np.uint64))
    with pytest.raises(ValueError, match=r"out: buffer of 8 bytes does not hold 4 items of 24 bytes"):
        _fast.waits(rec, packed(rules), np.zeros(1, np.uint64))
    with pytest.raises(TypeError, match="waits_records takes a 1-d array of engine records"):
        waits_records(rules, np.zeros(4, np.uint64))
    bad = rec.copy()
    bad["phase"][1] = 9
    with pytest.raises(ValueError, match="engine record 1: field 'phase' out of range"):
        waits_records(rules, bad)
