"""The calculator and its Python API refuse impossible or misread inputs in one clear line (red team, session
33): cards that are floats or bools, a dora indicator outside the cards, a round that is not an integer, a
discard that is also held, a first-draw win by Ron or after a discard, a --seen card that is held; the mask-level
API names a negative mask instead of a raw OverflowError, and refuses a winning card outside the hand as
score_batch does."""

from __future__ import annotations

import re

import numpy as np
import pytest

from meld8_app.cli import main
from meld8_env.cards import CardError, parse_cards
from meld8_env.hands import is_win_form_mask, readings_of_masks, set_backend, waits_of_masks
from meld8_env.rules import RuleConfigError
from meld8_env.scoring import score_hand, score_masks

HAND = "2s 3s 4s 6h 7h 8h 9d 9c"  # wins on 9c with Tanyao; waits 5h 8h (R33) before 8h or 9c is drawn


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- score_hand ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("indicator", [999, -40, 53, True, 7.0])
def test_dora_indicator_must_be_a_card(indicator):
    # 999 and -40 were accepted and ignored
    with pytest.raises(CardError, match="dora_indicator: unknown card"):
        score_hand(HAND, "9c", tsumo=True, dora_indicator=indicator)


def test_dora_indicator_may_be_a_numpy_integer():
    assert score_hand(HAND, "9c", tsumo=True, dora_indicator=np.int64(33)).bonuses["dora"] == 1  # 8d: 9d is dora


@pytest.mark.parametrize("cards", [[1.9, 2.9, 3.9, 18, 19, 20, 34, 47], [True, 2, 3, 18, 19, 20, 34, 47]])
def test_cards_given_as_floats_or_bools_are_refused(cards):
    # int() read 1.9 as card 1 (2s): the hand scored as 2s 3s 4s ...
    with pytest.raises(CardError, match="unknown card (1.9|True) at position 1: give an R4 token"):
        score_hand(cards, 47, tsumo=True)


@pytest.mark.parametrize("win", [True, 47.0, None])
def test_win_card_must_be_a_card(win):
    # True was read as card 1
    with pytest.raises(CardError, match="win_card: unknown card"):
        score_hand([1, 2, 3, 18, 19, 20, 34, 47], win, tsumo=True)


def test_numpy_integers_are_cards():
    # np.int64(47) failed inside str.strip (AttributeError)
    ids = np.array([1, 2, 3, 18, 19, 20, 34, 47])
    assert score_hand(list(ids), np.int64(47), tsumo=True) == score_hand(ids.tolist(), 47, tsumo=True)
    assert parse_cards(np.array([0, 52], np.uint8)) == [0, 52]


@pytest.mark.parametrize("rnd", ["1", 1.5, True, None])
def test_round_must_be_an_integer(rnd):
    # '1' and 1.5 gave a TypeError from a comparison inside rules.py
    with pytest.raises(RuleConfigError, match=r"round must be 1..6 \(an integer\), got"):
        score_hand(HAND, "9c", tsumo=True, round=rnd)
    assert score_hand(HAND, "9c", tsumo=True, round=np.int64(6)).win


@pytest.mark.parametrize("flag", ["tsumo", "dealer", "first_draw", "last_card"])
def test_switches_must_be_bools(flag):
    kwargs = {"tsumo": True, flag: "no"}
    with pytest.raises(ValueError, match=f"{flag} must be True or False, got 'no'"):
        score_hand(HAND, "9c", **kwargs)


def test_rules_must_be_a_rule_config():
    with pytest.raises(TypeError, match="rules must be a RuleConfig"):
        score_hand(HAND, "9c", tsumo=True, rules="two_player")


@pytest.mark.parametrize("disc, where", [("9c", "hand"), ("Kh 2s", "hand"), ("7d", "meld")])
def test_a_discard_that_is_also_held_is_refused(disc, where):
    # "--discards 9c" (the winning card itself) said "no win: furiten"; a held card was accepted (R1: one of each)
    hand, meld = (HAND, None) if where == "hand" else ("2s 3s 4s 9d 9c", "6d 7d 8d")
    with pytest.raises(CardError, match=f"discards: .. is in the {where}, and a card is never both held and disc"):
        score_hand(hand, "9c", meld=meld, tsumo=False, discards=disc)


def test_first_draw_is_tsumo_before_any_call_or_discard():
    # Tenhou / Chiihou (rules.md section 7): a first-draw flag with Ron was ignored, and after a discard scored
    with pytest.raises(CardError, match="first_draw: Tenhou and Chiihou .* does not go with a Ron"):
        score_hand(HAND, "9c", tsumo=False, first_draw=True)
    with pytest.raises(CardError, match=r"first_draw: .* does not go with discards \(Kh\)"):
        score_hand(HAND, "9c", tsumo=True, dealer=True, first_draw=True, discards="Kh")
    with pytest.raises(CardError, match="first_draw: .* does not go with a called meld"):
        score_hand("2h 3h 4h 9d 9c", "9c", meld="6d 7d 8d", tsumo=True, first_draw=True)
    assert ("tenhou", 4) in score_hand(HAND, "9c", tsumo=True, dealer=True, first_draw=True).yaku
    assert ("chiihou", 4) in score_hand(HAND, "9c", tsumo=True, first_draw=True).yaku


def test_no_dora_indicator_when_the_dealer_wins_on_the_first_draw():
    with pytest.raises(CardError, match=r"dora_indicator: there is none when the dealer wins on the first draw \(R35"):
        score_hand(HAND, "9c", tsumo=True, dealer=True, first_draw=True, dora_indicator="7h")
    assert score_hand(HAND, "9c", tsumo=True, first_draw=True, dora_indicator="8d").win  # a non-dealer's Chiihou


@pytest.mark.parametrize("meld", ["2h", "2h 2d", "2h 2d 2c 2s"])
def test_a_meld_is_three_cards(meld):
    # "expected 3 cards, got 1" did not say what a meld is
    with pytest.raises(CardError, match=r"meld: a called meld is 3 cards \(a Pon or a Chii, R15, R16\), got"):
        score_hand("3s 4s 5s 9d 9c", "9c", meld=meld, tsumo=True)


# -- the mask-level API ----------------------------------------------------------------------------------


def test_score_masks_refuses_a_winning_card_outside_the_hand():
    # score_masks(0b11111111, 0, 40, ...) scored a win although card 40 is not held (score_batch refuses it)
    with pytest.raises(ValueError, match="win_card: the winning card 2c is not in the hand"):
        score_masks(0b11111111, 0, 40, tsumo=True, min_han=1)


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"dora": 999}, r"dora must be -1..52 \(an integer\), got 999"),
        ({"min_han": 1.5}, r"min_han must be 0..127 \(an integer\), got 1.5"),
        ({"discards": -1}, r"discards: a card id outside 0..52"),
        ({"tsumo": "no"}, "tsumo must be True or False"),
    ],
)
def test_score_masks_checks_its_numbers(kwargs, says):
    with pytest.raises(ValueError, match=says):
        score_masks(0b11111111, 0, 1, **{"tsumo": True, "min_han": 1, **kwargs})


@pytest.mark.parametrize("backend", ["c", "python"])
def test_negative_or_float_masks_are_refused_at_the_contract_whichever_backend(backend):
    # -1 was a raw OverflowError of the C backend; a float meld was int()ed by the Python twin. The check sits in the
    # shared contract (meld8_env.hands.contract) before either backend is called, under either setting
    set_backend(backend)
    try:
        with pytest.raises(ValueError, match="score: a card id outside 0..52 in the hand"):
            score_masks(-1, 0, 1, tsumo=True, min_han=1)
        with pytest.raises(ValueError, match="waits: a card id outside 0..52 in the hand"):
            waits_of_masks(-1)
        with pytest.raises(ValueError, match="waits: a card id outside 0..52 in the hand"):
            waits_of_masks(2**64)
        with pytest.raises(ValueError, match="readings: a card id outside 0..52 in the hand"):
            readings_of_masks(-1)
        with pytest.raises(ValueError, match="is_win_form: a card id outside 0..52 in the hand"):
            is_win_form_mask(-1)
        with pytest.raises(TypeError, match="waits: meld must be an integer card mask, got float 2.5"):
            waits_of_masks(0b1111111, 2.5)
        assert waits_of_masks(np.uint64(0b1111111)) == waits_of_masks(0b1111111)
    finally:
        set_backend("c")


# -- the calculator CLI ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--seen", "2s"], "--seen: 2s is in your hand; give only cards seen elsewhere (R1)"),
        (["--seen", "5h 3s"], "--seen: 3s is in your hand"),
        (["--meld", "6d 7d 8d", "--seen", "7d"], "--seen: 7d is in your --meld"),
    ],
)
def test_distance_refuses_a_seen_card_that_is_held(capsys, argv, says):
    # "--seen 2s" with 2s held gave 2, as if a card held were also seen elsewhere
    hand = "2s 3s 4s 6h" if "--meld" in argv else "2s 3s 4s 6h 7h 9d Kc"
    code, out, err = cli(capsys, "distance", hand, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"meld8 distance: error: {says}"), err


def test_distance_still_takes_cards_seen_elsewhere(capsys):
    assert cli(capsys, "distance", "2s 3s 4s 6h 7h 9d JK", "--seen", "9s 9h 9c")[1].strip() == "2"


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--win", "9c", "--discards", "9c"], "discards: 9c is in the hand"),
        (["--win", "9c", "--discards", "Kh 2s"], "discards: 2s is in the hand"),
        (["--win", "9c", "--first-draw"], "first_draw: Tenhou and Chiihou are won by Tsumo"),
        (["--win", "9c", "--first-draw", "--dealer", "--tsumo", "--discards", "Kh"], r"does not go with discards"),
        (["--win", "9c", "--meld", "2h"], r"meld: a called meld is 3 cards \(a Pon or a Chii, R15, R16\), got 1"),
        (["--win", "9c", "--rules", ""], "--rules is an empty path"),
        (["--win", "9c", "--dora-indicator", "ZZ"], "dora_indicator: unknown card 'ZZ'"),
    ],
)
def test_score_refuses_impossible_declarations(capsys, argv, says):
    # "--discards 9c" said "no win: furiten"; --first-draw with Ron was ignored; --first-draw after a discard
    # scored Tenhou; --rules "" meant the default rules
    code, out, err = cli(capsys, "score", HAND, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("meld8 score: error: ") and re.search(says, err), err
