"""R1-R5: card ids and the R4 text notation."""

import pytest

from meld8_env.cards import (
    JOKER,
    CardError,
    card_id,
    card_str,
    format_cards,
    from_mask,
    parse_card,
    parse_cards,
    to_mask,
)


def test_R1_53_cards_unique_ids():
    names = {card_str(c) for c in range(53)}
    assert len(names) == 53 and "JK" in names


def test_R5_ids():
    assert parse_card("As") == 0 and parse_card("Ks") == 12
    assert parse_card("Ah") == 13 and parse_card("Kc") == 51 and parse_card("JK") == JOKER == 52
    assert card_id(10, 2) == 2 * 13 + 9


def test_R4_round_trip_every_card():
    text = format_cards(range(53))
    assert parse_cards(text) == list(range(53))
    assert format_cards(parse_cards("As Th Jd Kc JK")) == "As Th Jd Kc JK"


def test_R4_aliases_accepted_on_input():
    assert parse_card("10h") == parse_card("Th") == parse_card("T♥") == parse_card("10♥")
    assert parse_card("A♦") == parse_card("Ad") and parse_card("K♣") == parse_card("Kc")
    assert parse_card("jk") == JOKER


@pytest.mark.parametrize(
    "text, message",
    [
        ("As Xz 3h", "unknown card 'Xz' at position 2"),
        ("As 1s", "unknown card '1s' at position 2"),
        ("As Ay", "unknown card 'Ay' at position 2"),
        ("7h 7h", "duplicate card 7h"),
        ("Th 10h", "duplicate card Th"),
    ],
)
def test_R4_bad_input_names_the_token(text, message):
    with pytest.raises(CardError, match=message):
        parse_cards(text)


def test_R4_wrong_count_is_an_error():
    with pytest.raises(CardError, match="expected 3 cards, got 2"):
        parse_cards("As 2s", count=3)


def test_masks_round_trip():
    cards = parse_cards("As Th Jd Kc JK")
    assert from_mask(to_mask(cards)) == sorted(cards)
    with pytest.raises(CardError, match="duplicate"):
        to_mask([3, 3])


def test_card_id_out_of_range():
    with pytest.raises(CardError, match="ids are 0..52"):
        parse_cards([53])
