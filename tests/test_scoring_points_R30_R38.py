"""R30 minimums, R33 furiten, R34-R38 bonuses, points and payments, and failure reasons."""

import pytest

from meld8_env.cards import CardError, parse_card
from meld8_env.rules import RuleConfig
from meld8_env.scoring import dora_of, score_hand


@pytest.fixture(autouse=True)
def _both(backend):
    return backend


def test_R34_sequence_bonus_counts_chii_and_not_joker_sequences():
    assert score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False).bonuses["sequence"] == 2
    assert score_hand("2s 3s 4s 9d 9c", "4s", meld="6h 7h 8h", tsumo=False).bonuses["sequence"] == 2
    r = score_hand("2s 3s 4s 6h 7h JK 9d 9c", "9c", tsumo=True)
    assert r.bonuses["sequence"] == 1


def test_R34_sequence_bonus_cap_is_an_option():
    r = score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False, rules=RuleConfig(sequence_bonus_max=1))
    assert r.bonuses["sequence"] == 1


def test_R35_dora():
    assert dora_of(parse_card("4h")) == parse_card("5h")
    assert dora_of(parse_card("Ks")) == parse_card("As")  # K wraps to A
    r = score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False, dora_indicator="8d")
    assert r.bonuses["dora"] == 1
    r = score_hand("2s 3s 4s JK 7h 8h 9d 9c", "9c", tsumo=True, dora_indicator="5h")
    assert r.joker_as == 18 and "dora" not in r.bonuses  # the Joker standing for 6h is never dora
    r = score_hand("2s 3s 4s 9d 9c", "4s", meld="6h 7h 8h", tsumo=False, dora_indicator="5h")
    assert r.bonuses["dora"] == 1  # exposed cards count


def test_R36_dealer_bonus():
    r = score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False, dealer=True)
    assert r.bonuses["dealer"] == 1 and r.han == 6


def test_R37_R38_points_and_payments():
    r = score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False)
    assert (r.han, r.points, r.payments) == (5, 10_000, {"discarder": 10_000})
    r = score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=True)
    assert (r.han, r.points, r.payments) == (6, 12_000, {"each": 6_000})


def test_R30_minimum_by_round():
    # tanyao only (1 han) + bonuses: enough in rounds 1-3, not in 4-6
    cards, win = "2s 3s 4s 7h 8h 9h 9d 9c", "9c"
    r = score_hand(cards, win, tsumo=False, round=3)
    assert r.win and r.yaku == (("tanyao", 1),)
    r = score_hand(cards, win, tsumo=False, round=4, dealer=True, dora_indicator="8d")
    assert not r.win and r.reason == "below_minimum"  # dora and dealer bonus never count (R30)


def test_no_yaku_even_with_bonuses():
    r = score_hand("As 2s 3s 6h 7h 8h 9d 9c", "9c", tsumo=False, dealer=True, dora_indicator="8d")
    assert not r.win and r.reason == "no_yaku"


def test_no_form_and_illegal_joker():
    assert score_hand("2s 3s 5s 6h 7h 8h 9d 9c", "9c", tsumo=True).reason == "no_form"
    assert score_hand("2s 2h 5s 5h 7h 7d 9d JK", "JK", tsumo=True).reason == "illegal_joker"  # four pairs
    assert score_hand("2s 2h 2d 2c JK 5h 6h 7h", "JK", tsumo=True).reason == "illegal_joker"  # held card


def test_R33_furiten_blocks_ron_only():
    cards, win = "2s 3s 4s 6h 7h 8h 9d 9c", "8h"
    r = score_hand(cards, win, tsumo=False, discards="5h Kc")  # 5h is a current wait
    assert not r.win and r.reason == "furiten"
    assert score_hand(cards, win, tsumo=True, discards="5h Kc").win
    assert score_hand(cards, win, tsumo=False, discards="Kc 2d").win


def test_bad_input_errors():
    with pytest.raises(CardError, match="expected 8 concealed cards"):
        score_hand("2s 3s 4s", "2s", tsumo=True)
    with pytest.raises(CardError, match="winning card 8h is not among"):
        score_hand("2s 3s 4s 6h 7h 9h 9d 9c", "8h", tsumo=True)
    with pytest.raises(CardError, match="Joker can never be discarded"):
        score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False, discards="JK")
    with pytest.raises(CardError, match="cannot be the dora indicator"):
        score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False, dora_indicator="JK")
