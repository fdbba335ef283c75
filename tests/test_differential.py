"""Fast path vs slow path: the C evaluator against the pure-Python twin on many random hands.

CI: >= 200k hands for win checks and waits (against the reference's table of all winning hands),
plus brute-force readings, distance and the meld cases on smaller samples. The ``slow`` variant runs
10M hands. Every mismatch prints the hand in R4 notation.
"""

from __future__ import annotations

import numpy as np
import pytest

from meld8_env.cards import mask_str
from meld8_env.hands import _native, _reference
from meld8_env.hands.sampling import BITS, drop_random_card, random_masks, random_melds

WIN = _reference.winning_hands()


def _report(kind: str, hands, got, want, melds=None) -> str:
    lines = [f"{kind}: {len(hands)} mismatches, first ones:"]
    for i in range(min(10, len(hands))):
        meld = f" | meld {mask_str(int(melds[i]))}" if melds is not None else ""
        lines.append(f"  {mask_str(int(hands[i]))}{meld}: C={got[i]} python={want[i]}")
    return "\n".join(lines)


def ref_is_win8(masks: np.ndarray) -> np.ndarray:
    pos = np.searchsorted(WIN, masks)
    pos[pos == len(WIN)] = 0
    return WIN[pos] == masks


def ref_waits7(masks: np.ndarray) -> np.ndarray:
    out = np.zeros(len(masks), np.uint64)
    for c in range(53):
        free = (masks & BITS[c]) == 0
        hit = free & ref_is_win8(masks | BITS[c])
        out |= np.where(hit, BITS[c], np.uint64(0))
    return out


def sample8(rng, n):
    """A third uniform, a third winning, a third winning-with-one-card-swapped, Joker-heavy."""
    a = random_masks(rng, n // 3, 8)
    b = WIN[rng.integers(0, len(WIN), n // 3)]
    c = drop_random_card(rng, WIN[rng.integers(0, len(WIN), n - 2 * (n // 3))])
    c = c | BITS[rng.integers(0, 53, len(c))]
    c = c[np.bitwise_count(c) == 8]
    return np.concatenate([a, b, c])


def sample7(rng, n):
    a = random_masks(rng, n // 2, 7)
    b = drop_random_card(rng, WIN[rng.integers(0, len(WIN), n - n // 2)])
    return np.concatenate([a, b])


def check_win_and_waits(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    h8 = sample8(rng, n)
    got = np.zeros(len(h8), np.uint8)
    _native.is_win_form_batch(h8, None, got)
    want = ref_is_win8(h8)
    bad = np.nonzero(got.astype(bool) != want)[0]
    assert bad.size == 0, _report("is_win_form", h8[bad], got[bad], want[bad])
    h7 = sample7(rng, n)
    gw = np.zeros(len(h7), np.uint64)
    _native.waits_batch(h7, None, gw)
    ww = ref_waits7(h7)
    bad = np.nonzero(gw != ww)[0]
    assert bad.size == 0, _report(
        "waits", h7[bad], [mask_str(int(x)) for x in gw[bad]], [mask_str(int(x)) for x in ww[bad]]
    )


def test_win_and_waits_200k():
    check_win_and_waits(200_000, seed=1)


@pytest.mark.slow
def test_win_and_waits_10M():
    for seed in range(10):
        check_win_and_waits(1_000_000, seed=100 + seed)


def _canon(rs):
    return sorted((f, tuple(sorted(g)), s) for f, g, s in rs)


def test_readings_brute_force_20k():
    rng = np.random.default_rng(2)
    hands = sample8(rng, 20_000)
    bad = [h for h in hands if _canon(_native.readings(int(h), 0)) != _canon(_reference.readings(int(h), 0))]
    assert not bad, _report("readings", bad, ["?"] * len(bad), ["?"] * len(bad))


def test_meld_cases_10k():
    rng = np.random.default_rng(3)
    n = 10_000
    melds = random_melds(rng, n)
    h5 = random_masks(rng, n, 5, exclude=melds)
    parts, standins = _reference.winning_parts()
    # half the hands: real winning parts that fit beside the meld
    for i in range(0, n, 2):
        ok = parts[((standins & melds[i]) == 0) & ((parts & melds[i]) == 0)]
        h5[i] = ok[rng.integers(0, len(ok))]
    h4 = drop_random_card(rng, h5)
    for h, h_4, m in zip(h5, h4, melds, strict=True):
        h, h_4, m = int(h), int(h_4), int(m)
        assert _canon(_native.readings(h, m)) == _canon(_reference.readings(h, m)), _report(
            "meld readings", [h], ["C"], ["py"], [m]
        )
        cw, pw = _native.waits(h_4, m), _reference.waits(h_4, m)
        assert cw == pw, _report("meld waits", [h_4], [mask_str(cw)], [mask_str(pw)], [m])


def test_distance_against_definition():
    """C branch-and-bound vs min |W \\ H| over the table of every winning hand."""
    rng = np.random.default_rng(4)
    cases = []
    for k in (7, 8):
        hands = np.concatenate([random_masks(rng, 250, k), sample7(rng, 100) if k == 7 else sample8(rng, 100)])
        for h in hands:
            cases.append((int(h), 0))
    melds = random_melds(rng, 200)
    for m in melds:
        h = random_masks(rng, 1, int(rng.integers(4, 6)), exclude=np.array([m], np.uint64))[0]
        cases.append((int(h), int(m)))
    full = (1 << 53) - 1
    bad = []
    for i, (h, m) in enumerate(cases):
        unseen = full & ~(h | m)
        if i % 3 == 0:  # many cards seen elsewhere (dead)
            unseen &= int(random_masks(rng, 1, 30)[0])
        c, p = _native.distance(h, m, unseen), _reference.distance(h, m, unseen)
        if c != p:
            bad.append((h, m, c, p))
    assert not bad, "\n".join(f"{mask_str(h)} | meld {mask_str(m)}: C={c} python={p}" for h, m, c, p in bad[:10])


def test_acceptance_and_threaded_distance_against_python():
    """acceptance_batch (C yes/no searches) = the Python twin's count by full distances, on 7-card
    hands (some beside a meld, some with many dead cards); distance_batch split over threads = one
    thread."""
    from meld8_env import hands as H

    rng = np.random.default_rng(11)
    n = 80
    hands = np.concatenate([random_masks(rng, n // 2, 7), sample7(rng, n // 2)])
    melds = np.zeros(n, np.uint64)
    for i, m in enumerate(random_melds(rng, n // 4)):
        melds[i] = m
        hands[i] = random_masks(rng, 1, 4, exclude=np.array([m], np.uint64))[0]
    full = np.uint64((1 << 53) - 1)
    unseen = full & ~(hands | melds)
    unseen[::3] &= random_masks(rng, len(unseen[::3]), 30)
    pool = unseen & random_masks(rng, n, 26)
    dist = H.distance_batch(hands, melds, unseen, threads=1)
    got = H.acceptance_batch(hands, melds, unseen, pool, dist)
    want = np.zeros(n, np.int64)
    for i in range(n):
        h, m, u = int(hands[i]), int(melds[i]), int(unseen[i])
        want[i] = sum(
            _reference.distance(h | 1 << c, m, u & ~(1 << c)) <= int(dist[i]) - 1
            for c in range(53)
            if int(pool[i]) >> c & 1 and not (h | m) >> c & 1
        )
    bad = np.flatnonzero(got != want)
    assert not bad.size, _report("acceptance", hands[bad], got[bad], want[bad], melds[bad])
    assert (want > 0).mean() > 0.5  # the sample exercises real acceptance sets
    H.set_backend("python")
    try:
        assert np.array_equal(H.acceptance_batch(hands[:8], melds[:8], unseen[:8], pool[:8], dist[:8]), got[:8])
    finally:
        H.set_backend("c")

    many = np.concatenate([random_masks(rng, 3000, 7), random_masks(rng, 3000, 8)])
    one = H.distance_batch(many, None, None, threads=1)
    for t in (2, 3):
        assert np.array_equal(H.distance_batch(many, None, None, threads=t), one)


def test_distance_anchor_completions_against_definition():
    """The yes/no search completes a meld that still needs cards only at its leaf (fill_anchors); its hard
    cases are the Joker's (R27: held it must stay in W, its stand-in in neither W nor the exposed meld) and
    dead cards that leave a rank or a run short. Near-ready hands, Joker held or not, beside an exposed meld
    or not, many cards seen elsewhere, against min |W \\ H| over the table of every winning hand."""
    rng = np.random.default_rng(20)
    jk = np.uint64(1 << 52)
    with_joker = WIN[(WIN & jk) != 0]
    hands = np.concatenate(
        [
            drop_random_card(rng, with_joker[rng.integers(0, len(with_joker), 50)]),  # 7 cards
            drop_random_card(rng, drop_random_card(rng, WIN[rng.integers(0, len(WIN), 50)])),  # 6 (+1 below)
            random_masks(rng, 25, 6, exclude=np.full(25, jk)) | jk,  # 7 cards with the Joker
            random_masks(rng, 25, 7, exclude=np.full(25, jk)) | jk,  # 8 cards with the Joker
        ]
    )
    cases = [(int(h), 0) for h in hands]
    parts, standins = _reference.winning_parts()
    for k, m in enumerate(random_melds(rng, 80)):  # 4-5 concealed cards beside a meld: part of a win, or random
        ok = parts[((standins & m) == 0) & ((parts & m) == 0)]
        ok = ok[(ok & jk) != 0] if k % 4 == 0 else ok
        h = drop_random_card(rng, ok[rng.integers(0, len(ok), 1)])
        if k % 2:
            h = random_masks(rng, 1, 4 + k % 4 // 2, exclude=np.array([m]))
        cases.append((int(h[0]), int(m)))
    full = (1 << 53) - 1
    bad = []
    for i, (h, m) in enumerate(cases):
        if h.bit_count() == 6:  # six of a winning hand plus a random card: one or two steps away
            h |= 1 << int(rng.choice([c for c in range(53) if not h >> c & 1]))
        unseen = full & ~(h | m)
        if i % 4:  # a quarter with nothing seen elsewhere
            unseen &= ~int(random_masks(rng, 1, int(rng.integers(5, 25)))[0])
        if i % 5 == 1:
            unseen &= ~(1 << 52)  # the Joker seen elsewhere (in another seat's meld)
        c, p = _native.distance(h, m, unseen), _reference.distance(h, m, unseen)
        if c != p:
            bad.append((h, m, unseen, c, p))
    assert not bad, "\n".join(
        f"{mask_str(h)} | meld {mask_str(m)} | unseen {mask_str(u)}: C={c} python={p}" for h, m, u, c, p in bad[:10]
    )
