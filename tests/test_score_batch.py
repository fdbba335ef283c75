"""The C batched scorer against the Python scorer on random winning and non-winning hands."""

import numpy as np

from meld8_env.cards import mask_str
from meld8_env.hands import _reference
from meld8_env.hands.sampling import BITS, random_masks, random_melds
from meld8_env.rules import RuleConfig
from meld8_env.scoring import REASONS, score_batch, score_masks


def _cases(rng, n):
    win = _reference.winning_hands()
    hands = win[rng.integers(0, len(win), n)]
    hands[: n // 10] = random_masks(rng, n // 10, 8)
    melds = np.zeros(n, np.uint64)
    parts, standins = _reference.winning_parts()
    for i in range(n - n // 5, n):  # called hands
        m = random_melds(rng, 1)[0]
        ok = parts[((standins & m) == 0) & ((parts & m) == 0)]
        melds[i], hands[i] = m, ok[rng.integers(0, len(ok))]
    wins = np.empty(n, np.int8)
    for i, h in enumerate(hands):
        cards = [c for c in range(53) if int(h) >> c & 1]
        wins[i] = cards[rng.integers(0, len(cards))]
    flags = rng.integers(0, 16, n).astype(np.uint8)
    flags[rng.random(n) < 0.8] &= ~np.uint8(4)  # first draw is rare
    min_han = rng.choice([1, 2], n).astype(np.int8)
    dora = np.where(rng.random(n) < 0.7, rng.integers(0, 52, n), -1).astype(np.int8)
    furiten = np.where(rng.random(n) < 0.3, random_masks(rng, n, 6), np.uint64(0)) & ~(hands | melds)
    furiten &= ~BITS[52]
    return hands, melds, wins, flags, min_han, dora, furiten


def test_batch_scorer_matches_python_scorer():
    rng = np.random.default_rng(5)
    rules = RuleConfig()
    hands, melds, wins, flags, min_han, dora, furiten = _cases(rng, 6000)
    out = score_batch(hands, melds, wins, flags, min_han, dora, furiten, rules)
    bad = []
    for i in range(len(hands)):
        r = score_masks(
            int(hands[i]), int(melds[i]), int(wins[i]), tsumo=bool(flags[i] & 1), min_han=int(min_han[i]),
            dealer=bool(flags[i] & 2), dora=int(dora[i]), first_draw=bool(flags[i] & 4),
            last_card=bool(flags[i] & 8), discards=int(furiten[i]), rules=rules,
        )  # fmt: skip
        got = (REASONS[out["reason"][i]], int(out["han"][i]), int(out["yakuman"][i]), int(out["points"][i]))
        want = (r.reason, r.han, r.yakuman, r.points)
        if got != want:
            bad.append(f"{mask_str(int(hands[i]))} | meld {mask_str(int(melds[i]))} win {wins[i]}: C={got} py={want}")
    assert not bad, f"{len(bad)} mismatches:\n" + "\n".join(bad[:10])
    assert (out["reason"] == 0).sum() > 1000  # the sample really contains many wins


def test_batch_scorer_rule_options():
    rng = np.random.default_rng(6)
    rules = RuleConfig(value_triplet_han=2, points_per_han=1000, sequence_bonus_max=1)
    hands, melds, wins, flags, min_han, dora, furiten = _cases(rng, 1500)
    out = score_batch(hands, melds, wins, flags, min_han, dora, furiten, rules)
    for i in range(len(hands)):
        r = score_masks(int(hands[i]), int(melds[i]), int(wins[i]), tsumo=bool(flags[i] & 1), min_han=int(min_han[i]),
                        dealer=bool(flags[i] & 2), dora=int(dora[i]), discards=int(furiten[i]),
                        first_draw=bool(flags[i] & 4), last_card=bool(flags[i] & 8), rules=rules)  # fmt: skip
        assert (int(out["points"][i]), REASONS[out["reason"][i]]) == (r.points, r.reason), mask_str(int(hands[i]))
