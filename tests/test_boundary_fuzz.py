"""The Python <-> C boundary (hardening): every public batched function and the engine refuse input
outside their contract with a clear error - the C extension and the Python twin alike - and a seeded
fuzz harness drives them with valid and invalid input. ``tools/sanitize.sh`` runs this file on an
AddressSanitizer + UBSan build (CI), where any memory error or undefined behaviour aborts the run."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from meld8_env import hands
from meld8_env.actions import IllegalActionError
from meld8_env.engine.fast import FastBatch
from meld8_env.hands import _native, _reference
from meld8_env.hands.contract import SIZES
from meld8_env.rules import RuleConfig
from meld8_env.scoring import score_batch
from meld8_env.vector import Meld8Vector

FUZZ_CASES = int(os.environ.get("MELD8_FUZZ_CASES", "3000"))
U = np.uint64
ones = np.ones(1, np.uint8)


# -- the cases the fuzzing pass found --------------------------------------------------------------
def test_oversized_mask_is_not_scored_as_a_win():
    with pytest.raises(ValueError, match="score: row 0: 20 cards counting the meld"):
        score_batch(np.array([0x3FFFC000F], np.uint64), None, np.zeros(1, np.int8), ones, ones, np.full(1, -1, np.int8))


def test_empty_hand_is_refused_everywhere():
    with pytest.raises(ValueError, match="readings: 0 cards"):
        _native.readings(0, 0)
    with pytest.raises(ValueError, match="readings: 0 cards"):
        _reference.readings(0, 0)
    with pytest.raises(ValueError, match="win_cards: row 0 is 0|0 cards"):
        score_batch(np.array([0], np.uint64), None, np.zeros(1, np.int8), ones, ones, np.full(1, -1, np.int8))
    for backend in ("c", "python"):
        hands.set_backend(backend)
        try:
            with pytest.raises(ValueError, match="is_win_form: row 0: 0 cards"):
                hands.is_win_form_batch(np.array([0], np.uint64))
        finally:
            hands.set_backend("c")


def test_sixteen_card_eight_pairs_and_twenty_card_distance_are_refused():
    eight_pairs = sum(1 << (13 * s + r) for r in range(8) for s in (0, 1))
    with pytest.raises(ValueError, match="16 cards"):
        hands.is_win_form_batch(np.array([eight_pairs], np.uint64))
    with pytest.raises(ValueError, match="20 cards .*takes 7 or 8"):
        hands.distance_batch(np.array([(1 << 20) - 1], np.uint64))


def test_silent_casts_are_refused():
    hand7 = np.array([0b1111111], np.uint64)
    with pytest.raises(TypeError, match="must be integers, got dtype float64"):
        hands.is_win_form_batch(np.array([np.nan]))
    with pytest.raises(ValueError, match="distances: row 0 is 300, allowed 0..127"):
        hands.acceptance_batch(hand7, None, hand7 ^ U((1 << 53) - 1), hand7 ^ U((1 << 53) - 1), np.array([300]))
    with pytest.raises(ValueError, match="a negative mask"):
        hands.waits_batch(np.array([-1]))
    with pytest.raises(ValueError, match="outside 0..2\\*\\*64-1"):
        hands.waits_batch(np.array([2**64], dtype=object))
    with pytest.raises(ValueError, match="card id outside 0..52"):
        hands.distance_batch(hand7, None, np.array([1 << 60], np.uint64))


# -- the C extension and the Python twin refuse the same inputs ------------------------------------
def _random_bad_hand(rng: np.random.Generator) -> tuple[int, int]:
    kind = rng.integers(6)
    cards = rng.permutation(53)
    hand = sum(1 << int(c) for c in cards[: rng.integers(0, 14)])
    meld = 0
    if kind == 1:
        hand |= 1 << int(rng.integers(53, 64))  # a bit beyond the Joker
    elif kind == 2:
        meld = sum(1 << int(c) for c in cards[20 : 20 + rng.choice([1, 2, 4])])  # a meld of the wrong size
    elif kind == 3:
        meld = sum(1 << int(c) for c in cards[:3])  # overlapping the hand
        hand |= meld
    elif kind == 4:
        meld = (1 << 52) | (1 << int(cards[30])) | (1 << int(cards[31]))  # the Joker in a meld
    elif kind == 5:  # three cards apart from the hand: almost never a Pon or a Chii
        meld = sum(1 << int(c) for c in cards[20:23] if c != 52) or 0b111
        hand &= ~meld
    return hand, meld


@pytest.mark.parametrize("impl", ["c", "python"])
def test_a_called_meld_must_be_a_pon_or_a_chii(impl):
    # docs review, session 32: any three cards were taken as a called meld (meld8 score scored "2h 7d Kc")
    from meld8_env.cards import parse_cards, to_mask

    fn = (_native if impl == "c" else _reference).waits
    hand = to_mask(parse_cards("2s 3s 9d 9c"))
    for ok in ("Jh Jc Js", "Jh Qh Kh", "Ac 2c 3c", "5d 6d 7d"):
        fn(hand, to_mask(parse_cards(ok)))
    for bad in ("2h 7d Kc", "Qh Kh Ah", "Jh Qh Kc", "5d 6d 8d", "Jh Jc Qc"):
        with pytest.raises(ValueError, match="neither a Pon .* nor a Chii"):
            fn(hand, to_mask(parse_cards(bad)))


@pytest.mark.parametrize("fn", ["is_win_form", "readings", "waits", "distance"])
def test_c_and_python_twin_agree_on_invalid_input(fn):
    rng = np.random.default_rng(7)
    lo, hi = SIZES[fn]
    refused = 0
    for _ in range(400):
        hand, meld = _random_bad_hand(rng)
        args = (hand, meld) if fn != "distance" else (hand, meld, ((1 << 53) - 1) & ~(hand | meld))
        outcomes = []
        for impl in (_native, _reference):
            try:
                outcomes.append(("ok", getattr(impl, fn)(*args)))
            except ValueError as exc:
                outcomes.append(("refused", str(exc)))
        (c_kind, c_val), (p_kind, p_val) = outcomes
        assert c_kind == p_kind, f"{fn}({hand:#x}, {meld:#x}): C {c_kind}, Python {p_kind}"
        if c_kind == "refused":
            refused += 1
            assert p_val.startswith(c_val), (c_val, p_val)  # same words; Python adds the hand in R4 notation
        elif fn == "readings":
            assert sorted(c_val) == sorted(p_val)
        else:
            assert c_val == p_val
    assert refused > 300


# -- seeded fuzzing of every public batched function and the engine --------------------------------
def _fuzz_masks(rng: np.random.Generator, n: int) -> np.ndarray:
    """Mostly valid-sized hands, some with junk bits, some of the wrong size."""
    out = np.zeros(n, np.uint64)
    for i in range(n):
        k = int(rng.choice([4, 5, 7, 8, 8, 0, 3, 12, 20]))
        m = sum(1 << int(c) for c in rng.choice(53, size=k, replace=False))
        if rng.random() < 0.1:
            m |= 1 << int(rng.integers(53, 64))
        out[i] = m
    return out


def test_fuzz_public_batched_functions():
    rng = np.random.default_rng(2024)
    done = refused = 0
    while done < FUZZ_CASES:
        n = int(rng.integers(1, 40))
        h = _fuzz_masks(rng, n)
        melds = None if rng.random() < 0.5 else _fuzz_masks(rng, n) & U((1 << 52) - 1)
        unseen = (~h) & U((1 << 53) - 1)
        calls = [
            (hands.is_win_form_batch, (h, melds)),
            (hands.waits_batch, (h, melds)),
            (hands.distance_batch, (h, melds, unseen, int(rng.integers(1, 3)))),
            (hands.acceptance_batch, (h, melds, unseen, unseen, rng.integers(0, 5, n))),
            (score_batch, (h, melds, rng.integers(-2, 60, n), rng.integers(0, 20, n).astype(np.uint8),
                           rng.integers(0, 3, n), rng.integers(-2, 55, n))),
        ]  # fmt: skip
        for fn, args in calls:
            try:
                fn(*args)
            except (ValueError, TypeError):
                refused += 1
            done += n
    assert refused > 0


def test_fuzz_engine_steps_observations_and_restores():
    rng = np.random.default_rng(99)
    for rules in (RuleConfig(), RuleConfig.two_player(), RuleConfig(penalty_mode=True, rounds=1, min_yaku_han=(1,))):
        fb = FastBatch(16, rules)
        fb.reset(rng.integers(0, 2**62, 16).astype(np.uint64))
        for _ in range(FUZZ_CASES // 10):
            acts = rng.integers(-3, 70, 16)
            try:
                fb.step(acts)
            except IllegalActionError:
                legal = np.array([(fb.legal_actions(i) or [0])[0] for i in range(16)])
                fb.step(legal)
            fb.observe(rng.integers(-1, rules.num_players, 16).astype(np.int8))
            if rng.random() < 0.05:
                snap = fb.snapshot(slice(None))
                field = rng.choice(["ndisc", "wall_pos", "acting", "claim_n", "drawn", "phase"])
                snap[field] = rng.integers(-128, 127, snap[field].shape)
                try:
                    fb.restore(slice(None), snap)
                    fb.step(np.array([(fb.legal_actions(i) or [0])[0] for i in range(16)]))
                except (ValueError, IllegalActionError):
                    pass
            if fb.over.all():
                fb.reset(rng.integers(0, 2**62, 16).astype(np.uint64))


def test_vector_refuses_non_actions_before_any_game_moves():
    v = Meld8Vector(3, seed=4)
    v.reset()
    before = v.state.copy()
    for bad in (np.array([2**64 - 1, 0, 0], np.uint64), np.array([0.0, 1.0, 2.0]), np.array([64, 0, 0])):
        with pytest.raises(IllegalActionError):
            v.step(bad)
    assert all(np.array_equal(v.state[f], before[f]) for f in before.dtype.names)


@pytest.mark.slow
def test_fuzz_long(monkeypatch):
    """The same harness, 30 times longer (``make test-slow``; ``tools/sanitize.sh -m slow`` under ASan)."""
    monkeypatch.setattr(sys.modules[__name__], "FUZZ_CASES", FUZZ_CASES * 30)
    test_fuzz_public_batched_functions()
    test_fuzz_engine_steps_observations_and_restores()


def test_fuzz_c_bots_and_rollout_entry_points():
    """Issue 20 entry points (policy_act, act_obs, rollout): garbage observations, masks and edited records
    either decide legal-looking actions or are refused with a ValueError, never a crash (sanitizer job)."""
    from meld8_env.policies import POLICY, act_obs, policy_act
    from meld8_env.rollout import rollout

    rng = np.random.default_rng(2020)
    for rules in (RuleConfig(), RuleConfig.two_player(penalty_mode=True)):
        P = rules.num_players
        fb = FastBatch(8, rules)
        fb.reset(rng.integers(0, 2**62, 8).astype(np.uint64))
        for _ in range(max(10, FUZZ_CASES // 100)):
            obs, masks = fb.observe()
            garbage = obs.copy()
            hit = rng.random(garbage.shape) < 0.02
            garbage[hit] = rng.integers(0, 256, hit.sum())
            bad_masks = masks | (rng.random(masks.shape) < 0.05)
            for name in POLICY:
                w = rng.integers(1, 2**63, obs.shape[1], dtype=np.uint64)
                try:
                    out = act_obs(rules, name, garbage, bad_masks, w, 7)
                    assert ((out >= -1) & (out < 64)).all()
                except ValueError as exc:  # the CHEATING oracle reads records only: refused, whatever the rows
                    assert ("oracle policy reads the other seats' hands" if name == "oracle" else "obs row") in str(exc)
            recs = fb.snapshot(slice(None))
            if rng.random() < 0.5:
                field = rng.choice(["hands", "melds", "ndisc", "wall_pos", "acting", "claim_n", "claim_card", "phase"])
                recs[field] = rng.integers(0, 2**62 if field in ("hands", "melds") else 127, recs[field].shape)
            codes = rng.integers(0, len(POLICY), 8).astype(np.int8)
            try:
                acts = policy_act(rules, recs, codes, np.zeros(8, np.uint64))
                assert ((acts >= -1) & (acts < 64)).all()
                rollout(
                    rules, recs, rng.integers(0, len(POLICY), (8, P)).astype(np.int8), np.arange(8, dtype=np.uint64)
                )
            except (ValueError, RuntimeError):
                pass
            legal = np.array([(fb.legal_actions(i) or [0])[0] for i in range(8)])
            fb.step(np.where(fb.over, -1, legal))
            if fb.over.all():
                fb.reset(rng.integers(0, 2**62, 8).astype(np.uint64))
