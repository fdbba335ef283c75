"""R23-R27: groups, winning forms and the Joker, on both backends."""

import pytest

from meld8_env.cards import CardError, parse_card
from meld8_env.hands import decompositions, is_win_form


def forms(cards, meld=None):
    return sorted({r.form for r in decompositions(cards, meld)})


@pytest.mark.parametrize(
    "cards, win",
    [
        ("As 2s 3s 5h 6h 7h 9d 9c", True),  # R23: A-2-3 is valid
        ("Js Qs Ks 5h 6h 7h 9d 9c", True),  # R23: J-Q-K is valid
        ("Qs Ks As 5h 6h 7h 9d 9c", False),  # R23: Q-K-A wraps, invalid
        ("As 2h 3s 5h 6h 7h 9d 9c", False),  # R23: one suit only
        ("7s 7h 7d 5h 6h 4h 9d 9c", True),  # R24: triplet, any suits
        ("7s 7h 7d 7c 5h 6h 4h 9d", False),  # R24: a quad is not a standard meld
        ("2s 3s 4s 5h 6h 7h 9d 9s", True),  # R25: pair of any suits
    ],
)
def test_R23_R24_R25_groups(backend, cards, win):
    assert is_win_form(cards) is win


def test_R25_pair_never_contains_the_joker(backend):
    assert not is_win_form("2s 3s 4s 5h 6h 7h 9d JK")


def test_R26_1_standard_with_called_meld(backend):
    assert forms("2s 3s 4s 9d 9c", meld="Kc Kd Kh") == ["standard"]
    assert not is_win_form("2s 3s 5s 9d 9c", meld="Kc Kd Kh")


def test_R26_2_four_pairs(backend):
    assert forms("2s 2h 5s 5d 9c 9h Kd Ks") == ["four_pairs"]
    assert not is_win_form("2s 2h 2d 2c 5s 5d 9c 9h")  # four different ranks needed
    assert not is_win_form("2s 2h 5s 5d 9c 9h Kd JK")  # no Joker in four pairs


def test_R26_3_two_quads_with_and_without_joker(backend):
    assert forms("7s 7h 7d 7c 9s 9h 9d 9c") == ["two_quads"]
    rs = decompositions("7s 7h 7d 7c 9s 9h 9d JK")
    quads = [r for r in rs if r.form == "two_quads"]
    assert len(quads) == 1 and quads[0].joker_as == parse_card("9c")
    # the same cards also read as 7-7-7, 9-9 and 7x JK(=8x) 9x (R28 picks the best)
    assert {r.form for r in rs} == {"two_quads", "standard"}
    assert all(r.joker_as in {parse_card(c) for c in ("8s", "8h", "8d")} for r in rs if r.form == "standard")


def test_R26_4_pure_straight(backend):
    assert forms("As 2s 3s 4s 5s 6s 7s 8s") == ["pure_straight"]
    assert forms("6h 7h 8h 9h Th Jh Qh Kh") == ["pure_straight"]
    assert not is_win_form("8s 9s Ts Js Qs Ks As 2s")  # no wrap-around
    stand_ins = sorted(r.joker_as for r in decompositions("2s 3s 4s 5s 6s 7s 8s JK"))
    assert stand_ins == [parse_card("As"), parse_card("9s")]


def test_R26_4_royal_straight(backend):
    assert forms("7s 8s 9s Ts Js Qs Ks As") == ["royal_straight"]
    assert not is_win_form("JK 8s 9s Ts Js Qs Ks As")  # royal never takes the Joker


def test_R26_5_four_crown_pairs(backend):
    assert forms("Ah Ad Js Jc Qh Qd Ks Kc") == ["four_crown_pairs", "four_pairs"]
    assert forms("Ah As Js Jc Qh Qd Ks Kc") == ["four_pairs"]  # A pair mixes colours


def test_R27_joker_stands_for_an_unheld_card(backend):
    # A-A-JK triplet (JK = Ah or Ad, never the held As/Ac) or pair A-A with 9-9-JK (JK = 9s or 9h)
    stand_ins = sorted(r.joker_as for r in decompositions("As Ac JK 5h 6h 7h 9d 9c"))
    assert stand_ins == sorted(parse_card(c) for c in ("Ah", "Ad", "9s", "9h"))


def test_R27_joker_cannot_stand_for_a_held_card(backend):
    assert not is_win_form("2s 2h 2d 2c JK 5h 6h 7h")


def test_R27_joker_stand_in_avoids_the_exposed_meld(backend):
    (r,) = decompositions("5s 6s JK 2d 2c", meld="7s 8s 9s")
    assert r.joker_as == parse_card("4s")
    assert sorted(x.joker_as for x in decompositions("5s 6s JK 2d 2c", meld="7h 8h 9h")) == [
        parse_card("4s"),
        parse_card("7s"),
    ]


def test_R27_holding_the_joker_requires_a_form_that_uses_it(backend):
    assert not is_win_form("2s 3s 4s 6h 7h 8h 9d 9c JK".replace(" 9c", ""))  # JK would be in the pair


def test_R28_seven_readings_example(backend):
    rs = decompositions("2s 3s 2h 3h 2d 3d 2c JK")
    assert len(rs) == 7
    assert sorted({r.form for r in rs}) == ["standard", "two_quads"]


def test_sizes_are_checked():
    with pytest.raises(CardError, match="needs 8 concealed cards"):
        is_win_form("2s 3s 4s")
    with pytest.raises(CardError, match="needs 5 concealed cards beside a called meld"):
        is_win_form("2s 3s 4s 6h 7h 8h 9d 9c", meld="Kc Kd Kh")
    with pytest.raises(CardError, match="Joker can never be in a called meld"):
        is_win_form("2s 3s 4s 9d 9c", meld="Kc Kd JK")
    with pytest.raises(CardError, match="duplicate card 2s"):
        is_win_form("2s 3s 4s 9d 9c", meld="2s Kd Kh")
