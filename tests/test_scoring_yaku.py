"""§7 yaku with positive and negative cases, R32 reductions and R28 reading choice (both backends)."""

import pytest

from meld8_env.cards import CardError
from meld8_env.scoring import score_hand


def yaku(cards, win, **kw):
    kw.setdefault("tsumo", False)
    r = score_hand(cards, win, **kw)
    assert r.win, r.reason
    return dict(r.yaku)


@pytest.fixture(autouse=True)
def _both(backend):
    return backend


def test_closed_tsumo():
    assert yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=True)["closed_tsumo"] == 1
    assert "closed_tsumo" not in yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h")
    assert "closed_tsumo" not in yaku("2s 3s 4s 9d 9c", "4s", meld="6h 7h 8h", tsumo=True)  # not with a call


def test_value_triplet():
    assert yaku("As Ac Ah 5h 6h 7h 9d 9c", "9c")["value_triplet"] == 1
    assert yaku("2s 3s 4s 9d 9c", "4s", meld="Ks Kh Kd")["value_triplet"] == 1  # a Pon counts, unreduced
    assert yaku("As Ac Ah Ks Kh Kd 9d 9c", "9c")["value_triplet"] == 2  # one each


def test_value_triplet_not_with_joker():
    r = score_hand("As Ac JK 5h 6h 7h 9d 9c", "5h", tsumo=False)
    assert not r.win and r.reason == "no_yaku"


def test_tanyao():
    assert yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h")["tanyao"] == 1
    assert "tanyao" not in yaku("As 2s 3s 6h 7h 8h 9d 9c", "8h", tsumo=True)
    assert "tanyao" not in yaku("2s 3s 4s 9d 9c", "4s", meld="6h 7h 8h")  # not with a call
    # judged by the Joker's stand-in: JK = 4s gives Tanyao, JK = As would not; the better reading wins
    r = score_hand("2s 3s JK 6h 7h 8h 9d 9c", "9c", tsumo=True)
    assert dict(r.yaku)["tanyao"] == 1 and r.joker_as == 3


def test_four_pairs():
    assert yaku("2s 2h 5s 5d 9c 9h Kd Ks", "Ks")["four_pairs"] == 1
    assert "four_pairs" not in yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h")


def test_haitei():
    assert yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h", last_card=True)["haitei"] == 1
    assert "haitei" not in yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h")


def test_all_red_all_black():
    assert yaku("2h 3h 4h 6d 7d 8d 9d 9h", "8d")["all_red"] == 2
    assert yaku("2s 3s 4s 6c 7c 8c 9s 9c", "8c")["all_black"] == 2
    assert not {"all_red", "all_black"} & set(yaku("2h 3h 4h 6d 7d 8d 9d 9c", "8d"))
    assert yaku("2h 3h 4h 9d 9h", "4h", meld="6d 7d 8d")["all_red"] == 1  # R32 with a call
    assert "all_black" not in yaku("As 2s 3s 4s 5s 6s 7s 8s", "8s")  # replaced by Pure Straight


def test_toitoi():
    assert yaku("5s 5h 5d 8c 8h 8d 2s 2c", "2c")["toitoi"] == 2
    assert "toitoi" not in yaku("5s 5h 5d 6c 7c 8c 2s 2c", "2c")
    assert yaku("5s 5h 5d 2s 2c", "2c", meld="8c 8h 8d")["toitoi"] == 1


def test_chanta_and_jun_chanta():
    y = yaku("As 2s 3s Jh Qh Kh Ad Ac", "Ac")
    assert y["chanta"] == 2 and "jun_chanta" not in y
    assert "chanta" not in yaku("As 2s 3s Jh Qh Kh 9d 9c", "9c", tsumo=True)
    y = yaku("Js Qs Ks Jh Qh Kh Ad Ac", "Ac")
    assert y["jun_chanta"] == 3 and "chanta" not in y  # Jun Chanta replaces Chanta
    assert yaku("Js Qs Ks Ad Ac", "Ac", meld="Jh Qh Kh")["jun_chanta"] == 2


def test_chanta_combines_with_four_pairs():
    y = yaku("As Ad Js Jh 9s 9d Kh Kc", "Kc")
    assert y["four_pairs"] == 1 and "chanta" not in y
    y = yaku("As Ad Js Jh Qs Qd Kh Kc", "Kc")
    assert y["jun_chanta"] == 3 and y["four_pairs"] == 1


def test_identical_sequences():
    assert yaku("2s 3s 4s 2h 3h 4h 9d 9c", "9c")["identical_sequences"] == 2
    assert "identical_sequences" not in yaku("2s 3s 4s 3h 4h 5h 9d 9c", "9c")


def test_R31_pinfu_wait_shapes():
    assert yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h")["pinfu"] == 2  # 6-7 waits 5 or 8
    assert yaku("2s 3s 4s 6h 7h 8h Ad Ac", "8h")["pinfu"] == 2  # a value pair is allowed
    assert yaku("As 2s 3s 6h 7h 8h 9d 9c", "As", tsumo=True)["pinfu"] == 2  # 2-3 waiting A is two-sided
    assert "pinfu" not in yaku("As 2s 3s 6h 7h 8h 9d 9c", "3s", tsumo=True)  # A-2 edge
    assert "pinfu" not in yaku("Js Qs Ks 6h 7h 8h 9d 9c", "Js", tsumo=True)  # Q-K edge
    assert "pinfu" not in yaku("2s 3s 4s 6h 7h 8h 9d 9c", "7h")  # middle wait
    assert "pinfu" not in yaku("2s 3s 4s 6h 7h 8h 9d 9c", "9c")  # pair wait
    assert "pinfu" not in yaku("5s 5h 5d 6c 7c 8c 2s 2c", "8c", tsumo=True)  # needs 2 sequences


def test_R31_pinfu_with_joker_as_winning_card():
    y = yaku("2s 3s 4s 6h 7h JK 9d 9c", "JK", tsumo=True)
    assert y["pinfu"] == 1  # stand-in 5h or 8h: two-sided; reduced for the Joker (R32)


def test_tenhou_chiihou():
    assert yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=True, first_draw=True, dealer=True)["tenhou"] == 4
    assert yaku("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=True, first_draw=True)["chiihou"] == 4
    y = yaku("2s 3s 4s 6h 7h JK 9d 9c", "JK", tsumo=True, first_draw=True)
    assert y["chiihou"] == 4  # never reduced
    with pytest.raises(CardError, match="first_draw: .* does not go with a Ron"):  # Ron is never a first-draw win
        score_hand("2s 3s 4s 6h 7h 8h 9d 9c", "8h", tsumo=False, first_draw=True)


def test_two_quads():
    y = yaku("7s 7h 7d 7c 9s 9h 9d 9c", "9c")
    assert y["two_quads"] == 6 and y["tanyao"] == 1
    y = yaku("7s 7h 7d 7c 9s 9h 9d JK", "JK", tsumo=True)
    assert y["two_quads"] == 5  # R32 with the Joker; R28 prefers it over the standard reading


def test_pure_straight():
    y = yaku("As 2s 3s 4s 5s 6s 7s 8s", "8s")
    assert y == {"pure_straight": 6}
    y = yaku("2h 3h 4h 5h 6h 7h 8h 9h", "9h")
    assert y == {"pure_straight": 6, "tanyao": 1}
    assert yaku("As 2s 3s 4s 5s 6s 7s JK", "JK", tsumo=True)["pure_straight"] == 5


def test_R34_no_sequence_bonus_with_straight():
    r = score_hand("As 2s 3s 4s 5s 6s 7s 8s", "8s", tsumo=False)
    assert "sequence" not in r.bonuses


@pytest.mark.parametrize(
    "cards, ident, mult",
    [
        ("7h 8h 9h Th Jh Qh Kh Ah", "royal_straight", 1),
        ("7s 8s 9s Ts Js Qs Ks As", "royal_straight", 2),
        ("Ah Ad Js Jc Qh Qd Ks Kc", "four_crown_pairs", 1),
        ("Ah Ad Jh Jd Qh Qd Kh Kd", "four_crown_pairs", 2),
    ],
)
def test_R37_yakuman(cards, ident, mult):
    r = score_hand(cards, cards.split()[-1], tsumo=True, dealer=True, dora_indicator="Qc")  # Kc dora, Qc not held
    assert r.yakuman == mult and [y for y, _ in r.yaku] == [ident]
    assert r.points == 20_000 * mult and r.bonuses == {}  # no dealer bonus or dora with a yakuman
    assert r.payments == {"each": 10_000 * mult}


def test_R37_counted_yakuman():
    r = score_hand("Js Qs Ks Jh Qh Kh Ad Ac", "Ac", tsumo=True, dealer=True, last_card=True)
    assert r.han == 10 and r.yakuman == 1 and r.points == 20_000
    assert ("counted_yakuman", 0) in r.yaku
    r = score_hand("Js Qs Ks Jh Qh Kh Ad Ac", "Ac", tsumo=True, dealer=True)
    assert r.han == 9 and r.yakuman == 0 and r.points == 18_000


def test_R32_call_and_joker_do_not_stack():
    r = score_hand("2h 3h JK 9d 9h", "9h", meld="6d 7d 8d", tsumo=False)
    assert dict(r.yaku)["all_red"] == 1 and "all_red" in r.reductions


def test_R32_reduction_never_below_one():
    r = score_hand("2s 3s 4s 2h 3h 4h 9d 9c", "9c", tsumo=False)
    assert dict(r.yaku)["identical_sequences"] == 2
    r = score_hand("2s 3s 4s 9d 9c", "9c", meld="2h 3h 4h", tsumo=False)
    assert dict(r.yaku)["identical_sequences"] == 1


def test_R28_best_reading_wins_and_is_deterministic():
    # identical sequences + pair (standard) beat four pairs on the same cards
    r = score_hand("2s 3s 4s 2h 3h 4h 9d 9c", "9c", tsumo=False)
    assert r.form == "standard"
    assert score_hand("2s 3s 4s 2h 3h 4h 9d 9c", "9c", tsumo=False) == r
