"""Distance to win (HAND_EVAL_NOTES.md definition), on both backends."""

import numpy as np
import pytest

from meld8_env.cards import CardError, parse_cards, to_mask
from meld8_env.hands import UNREACHABLE, distance_batch, distance_to_win, waits


@pytest.fixture(autouse=True)
def _both(backend):
    return backend


def test_zero_for_a_winning_hand():
    assert distance_to_win("2s 3s 4s 6h 7h 8h 9d 9c") == 0


def test_one_iff_tenpai():
    assert distance_to_win("2s 3s 4s 6h 7h 9d 9c") == 1
    assert waits("2s 3s 4s 6h 7h 9d 9c")
    assert distance_to_win("2s 3s 4s 6h 8h Td 9c") == 2


def test_unseen_cards_limit_what_can_be_drawn():
    hand = "2s 3s 4s 6h 7h 9d 9c"  # waits 5h 8h JK
    seen = {"5h", "8h", "JK"}
    unseen = [c for c in range(53) if c not in parse_cards(hand) and c not in parse_cards(" ".join(seen))]
    assert distance_to_win(hand, unseen=unseen) == 2


def test_held_joker_must_stay():
    # JK cannot be discarded: 2s3s4s 6h7h8h 9d + JK still needs the pair, JK in a meld
    assert distance_to_win("2s 3s 4s 6h 7h 8h 9d JK") >= 1


def test_with_meld():
    assert distance_to_win("2s 3s 9d 9c", meld="Kc Kd Kh") == 1
    assert distance_to_win("2s 3s 4s 9d 9c", meld="Kc Kd Kh") == 0


def test_unreachable_when_nothing_can_be_drawn():
    assert distance_to_win("2s 5h 9d Kc Qh 3c 7s", unseen=[]) == UNREACHABLE


def test_batch_equals_single():
    hands = ["2s 3s 4s 6h 7h 9d 9c", "2s 5h 9d Kc Qh 3c 7s", "As Ac JK 5h 6h 7h 9d"]
    masks = np.array([to_mask(parse_cards(h)) for h in hands], np.uint64)
    assert distance_batch(masks).tolist() == [distance_to_win(h) for h in hands]


def test_size_checked():
    with pytest.raises(CardError, match="7 or 8 concealed cards"):
        distance_to_win("2s 3s")
