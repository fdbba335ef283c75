"""R33 waits (the furiten set) and the wait shapes of R31, on both backends."""

import pytest

from meld8_env.cards import CardError, format_cards
from meld8_env.hands import waits


def w(cards, meld=None):
    return format_cards(waits(cards, meld))


def test_R33_two_sided_wait_includes_joker(backend):
    assert w("2s 3s 4s 6h 7h 9d 9c") == "5h 8h JK"


def test_R33_edge_and_middle_waits(backend):
    assert w("2s 3s 4s Qh Kh 9d 9c") == "Jh JK"  # Q-K waits J only
    assert w("2s 3s 4s 6h 8h 9d 9c") == "7h JK"  # middle wait


def test_R33_pair_wait_never_joker(backend):
    # two melds + a single: the pair cannot use the Joker (R25)
    assert w("2s 3s 4s 6h 7h 8h 9d") == "9s 9h 9c"


def test_R33_waits_ignore_yaku():
    # round minimums and yaku do not matter for the wait set
    assert "5h" in w("2s 3s 4s 6h 7h 9d 9c")


def test_R33_waits_with_called_meld(backend):
    assert w("2s 3s 9d 9c", meld="Kc Kd Kh") == "As 4s JK"


def test_R33_joker_in_hand_waits(backend):
    # 5h6h7h + 9d9c + (2s JK ?): A-2-3, 2-3-4 with the Joker, or a triplet of 2s
    assert w("5h 6h 7h 9d 9c 2s JK") == "As 3s 4s 2h 2d 2c"


def test_waits_size_checked():
    with pytest.raises(CardError, match="needs 7 concealed cards"):
        waits("2s 3s 4s")
