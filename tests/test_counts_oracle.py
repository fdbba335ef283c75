"""Exhaustive counts over every concealed hand, against HAND_EVAL_NOTES.md (C enumeration, ~20 s)."""

from meld8_env.hands import _native, _reference


def test_every_8_card_hand():
    c = _native.count_all(8)  # all C(53, 8) = 886,322,710 hands
    assert c["hands"] == 1_865_828
    assert c["with_joker"] == 688_696
    assert c["multi_form"] == 4_096
    assert c["max_readings"] == 7


def test_every_7_card_hand_tenpai():
    c = _native.count_all(7)
    assert c["hands"] == 4_229_648
    assert c["with_joker"] == 977_084
    assert c["max_waits"] == 26
    assert round(c["total_waits"] / c["hands"], 2) == 3.53


def test_reference_table_matches_counts():
    assert len(_reference.winning_hands()) == 1_865_828
    parts, _ = _reference.winning_parts()
    assert len(set(parts.tolist())) == 16_056
