"""Impossible declarations that ``meld8 score``, ``meld8 distance`` and the rule config accepted (red team):

- a dora indicator held, drawn, called or among a non-dealer's discards (R35: it is the dealer's first discard and
  no one can call it, R18; every card exists once, R1) - only a non-dealer's Ron on that very card holds it;
- a first-draw win on the last wall card where the drawable wall is longer than the draws up to that first draw
  (R11, R14; the Chiihou + Haitei of a 32-card wall), and a Tsumo no order of draws and calls reaches on a wall of a
  few cards (a non-dealer's where only the dealer draws);
- a ``min_yaku_han`` no standard hand reaches (R30, section 7): ``simulate`` then replayed drawn rounds forever;
- the Joker in ``distance --seen`` (it is never discarded or called, R12, nor the indicator, R35).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from cli_kit import one_line_error

from meld8_app.cli import main
from meld8_env.cards import CardError
from meld8_env.hands import native_module
from meld8_env.rules import RuleConfig, RuleConfigError, max_standard_yaku_han
from meld8_env.scoring import FLAG_DEALER, FLAG_FIRST_DRAW, FLAG_LAST_CARD, FLAG_TSUMO, score_batch, score_hand

HAND = "2s 3s 4s 6h 7h 8h 9d 9c"  # waits 5h 8h (and 9d 9c) before its winning card; Tanyao, two sequences
ROOT = Path(__file__).resolve().parents[1]


def score_cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(["score", *argv])
    return code, capsys.readouterr().out


# -- R35 / R18 / R1: the dora indicator is the dealer's first discard -----------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        # each was accepted; the first added a Dora han for a card the winner holds (6000 -> 8000 points)
        ([HAND, "--win", "9c", "--dora-indicator", "2s"], r"2s is in the hand, .*\(R18, R35\)"),
        ([HAND, "--win", "9c", "--tsumo", "--dora-indicator", "9c"], r"9c is the Tsumo card, .*\(R18, R35\)"),
        (
            ["2s 3s 4s 9d 9c", "--win", "9c", "--meld", "5d 5h 5s", "--dora-indicator", "5d"],
            r"5d is in the called meld.*R18",
        ),
        (
            [HAND, "--win", "9c", "--dora-indicator", "3d", "--discards", "3d"],
            r"3d is among the winner's discards.*R35",
        ),
    ],
)
def test_R35_an_indicator_the_winner_holds_draws_calls_or_discarded_is_refused(capsys, argv, says):
    err = one_line_error(["score", *argv], capsys)
    assert err.startswith("meld8 score: error: dora_indicator: ") and re.search(says, err), err


def test_R35_a_non_dealer_may_ron_on_the_indicator_and_it_still_makes_dora():
    r = score_hand(HAND, "3s", tsumo=False, dora_indicator="3s")  # the dora is 4s (R35: counts even for this Ron)
    assert r.win and r.bonuses["dora"] == 1
    assert "dora" not in score_hand(HAND, "3s", tsumo=False).bonuses


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"dealer": True}, r"3s is the winning card, but .* no one Rons on their own discard \(R29, R35\)"),
        ({"meld": "6h 7h 8h"}, r"a Ron on 3s, .* before the winner's first turn \(R11, R35\), .* a called meld"),
        ({"discards": "Kd"}, r"a Ron on 3s, .* does not go with discards \(Kd\)"),
        (
            {"last_card": True},
            r"last_card: a Ron on 3s, .* only when the wall has 1 draw, and it has 32 .*\(R14, R35\)",
        ),
    ],
)
def test_R35_a_ron_on_the_indicator_is_before_the_winners_first_turn(kwargs, says):
    cards = "2s 3s 4s 9d 9c" if "meld" in kwargs else HAND
    with pytest.raises(CardError, match=says):
        score_hand(cards, "3s", tsumo=False, dora_indicator="3s", **kwargs)


def test_R35_R33_the_indicator_stays_in_the_dealers_discards():
    # the dealer's own discard may be listed, and is furiten for a dealer's Ron even when not listed (R18: never called)
    assert score_hand(HAND, "9c", tsumo=False, dealer=True, dora_indicator="3d", discards="3d").win
    assert score_hand(HAND, "8h", tsumo=False, dealer=True).win
    assert score_hand(HAND, "8h", tsumo=False, dealer=True, dora_indicator="5h").reason == "furiten"
    assert score_hand(HAND, "8h", tsumo=False, dora_indicator="5h").win  # a non-dealer did not discard it
    assert score_hand(HAND, "8h", tsumo=True, dealer=True, dora_indicator="5h").win  # Tsumo is never furiten


def test_R35_R14_a_ron_on_the_indicator_is_on_the_final_discard_when_the_wall_has_one_draw():
    one_draw = RuleConfig(wall_limit=31)
    assert score_hand(HAND, "3s", tsumo=False, dora_indicator="3s", last_card=True, rules=one_draw).win
    with pytest.raises(CardError, match=r"last_card: .* exactly when the wall has 1 draw"):
        score_hand(HAND, "3s", tsumo=False, dora_indicator="3s", rules=one_draw)


# -- R11 / R14: a first draw is the last wall card only where the wall is that short --------------------------------


@pytest.mark.parametrize("dealer", [[], ["--dealer"]])
def test_R14_a_first_draw_is_never_the_last_card_with_the_default_wall(capsys, dealer):
    # was accepted: Chiihou (or Tenhou) and Haitei together, 9 han
    err = one_line_error(["score", HAND, "--win", "9c", "--tsumo", "--first-draw", "--last-card", *dealer], capsys)
    who = "the dealer's first draw is draw 1" if dealer else "a non-dealer's first draw is draw 2 or 3"
    assert (
        f"last_card: a first draw is never the last card under these rules: {who} and the last card is draw 32" in err
    )
    assert "(32 wall cards less wall_limit 0, R10, R14)" in err


@pytest.mark.parametrize(
    "rules, dealer, last_card, says",
    [
        (RuleConfig(wall_limit=31), True, True, None),  # one draw: the dealer's first draw is the last card
        (RuleConfig(wall_limit=31), True, False, "a first draw is always the last card"),
        (RuleConfig(wall_limit=31), False, True, "only the dealer draws under these rules"),
        (RuleConfig(wall_limit=30), False, True, None),  # two draws: the dealer's shimocha draws the last card
        (RuleConfig(wall_limit=30), False, False, "a first draw is always the last card"),
        (RuleConfig(wall_limit=30), True, True, "a first draw is never the last card"),
        (RuleConfig(wall_limit=29), False, True, None),  # three draws: the third seat's first draw is the last
        (RuleConfig(wall_limit=29), False, False, None),  # ... the second seat's is not
        (RuleConfig.two_player(wall_limit=37), False, True, None),
        (RuleConfig.two_player(wall_limit=36), False, True, "a first draw is never the last card"),
    ],
)
def test_R14_first_draw_and_last_card_follow_the_rule_config(rules, dealer, last_card, says):
    def declare():
        return score_hand(HAND, "9c", tsumo=True, dealer=dealer, first_draw=True, last_card=last_card, rules=rules)

    if says is None:
        assert declare().yaku_han == 1 + 1 + 4 + rules.haitei_han * last_card  # Closed Tsumo, Tanyao, Tenhou/Chiihou
    else:
        with pytest.raises(CardError, match=says):
            declare()


# -- R6 / R11 / R14-R19: who draws at all where the drawable wall is a few cards --------------------------------------


def _draw_situations(rules: RuleConfig, games: int, seed: int) -> dict[tuple[bool, bool, bool, bool], int]:
    """(dealer, first_draw, last_card, called) -> the most discards that seat had made, over every draw of
    reference-engine games whose seats never win (each draw a Tsumo they could declare there) and call nearly
    whenever they may (every other game) or seldom (the others: many draws of their own)."""
    import random

    from meld8_env.actions import PASS, RON, TSUMO
    from meld8_env.engine.reference import PHASE_CLAIM, PHASE_DRAW, Game

    rng, seen = random.Random(seed), {}
    for game in range(games):
        g, calling = Game(rules, seed=game), (0.95, 0.2)[game % 2]
        while not g.over and len(g.results) < 6:
            if g.phase == PHASE_DRAW and g.drawn >= 0:
                s = g.current
                key = (s == g.dealer, g.first_draw, g.last_card, g.melds[s] != 0)
                seen[key] = max(seen.get(key, 0), len(g.discards[s]))  # called-away discards stay in this list
            legal = g.legal_actions()
            if g.phase == PHASE_CLAIM:
                calls = [a for a in legal if a not in (PASS, RON)]
                g.step(rng.choice(calls) if calls and rng.random() < calling else PASS)
            else:
                g.step(rng.choice([a for a in legal if a != TSUMO]))
    return seen


@pytest.mark.parametrize("rules", [RuleConfig(wall_limit=n) for n in range(26, 32)] +
                         [RuleConfig.two_player(wall_limit=n) for n in range(34, 39)], ids=lambda r: f"{r.num_players}p"
                         f"-{r.wall_draws}draws")  # fmt: skip
def test_tsumo_situations_are_the_draws_the_reference_engine_makes(rules):
    """Twin of scoring.tsumo_situations (the turn structure alone): the reference engine reaches exactly its
    situations, each with as many discards as it says at most."""
    from meld8_env.scoring import tsumo_situations

    games = 6000 if rules.num_players == 3 and rules.wall_draws in (3, 4, 6) else 600  # chained calls are rare
    model = tsumo_situations(rules.num_players, rules.wall_draws)
    assert _draw_situations(rules, games, seed=rules.wall_draws) == model


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig.two_player()], ids=["3p", "2p"])
def test_the_built_in_walls_refuse_no_tsumo_without_first_draw(rules):
    """Every (dealer, last card, called) is reached without a first draw, with a dozen discards or more before it."""
    from meld8_env.scoring import tsumo_situations

    found = tsumo_situations(rules.num_players, rules.wall_draws)
    for dealer, last, called in itertools.product((False, True), repeat=3):
        assert found[(dealer, False, last, called)] >= 10


MELD_HAND, MELD = "6h 7h 8h 9d 9h", "2h 3h 4h"  # all red (R32: 1 han open), won on 9d
FAR = [f"{r}{u}" for u in "shd" for r in "AKQJT"]  # 15 cards neither hand holds


@pytest.mark.parametrize(
    "limit, dealer, last_card, meld, discards, says",
    [
        (31, False, True, False, "", "by a non-dealer with last_card"),  # was accepted: only the dealer draws
        (30, True, True, False, "Ks", "by the dealer with last_card"),  # the dealer's one draw is draw 1
        (30, False, False, False, "", "by a non-dealer without first_draw or last_card"),
        (29, False, False, True, "Ks", "by a non-dealer with a called meld:"),  # a call comes after draw 2 at best
        (29, False, True, True, "Ks", None),  # seat 2 calls seat 1's discard, seat 1 calls back
        (29, False, True, True, "Ks Qs", None),  # ... seat 1 that way: its draw's discard and its call's
        (29, False, True, True, "Ks Qs Jd", "discards: 3 given, but a non-dealer's Tsumo here comes after at most 2"),
        (29, True, True, False, "Ks", None),  # the dealer's second draw is the last
        (
            29,
            True,
            True,
            False,
            "Ks Qs",
            "discards: 2 given, but the dealer's Tsumo here comes after at most 1 discard",
        ),
        (0, False, False, True, "Ks", None),  # the built-in wall: anything but a first draw
        (0, True, False, False, "", None),  # no discards given says nothing
        (0, True, False, False, " ".join(FAR[:11]), None),  # the dealer draws at most 11 times of 32
        (
            0,
            True,
            False,
            False,
            " ".join(FAR[:12]),
            "discards: 12 given, but the dealer's Tsumo here comes after at most 11",
        ),
    ],
)
def test_R14_a_tsumo_the_wall_never_gives_a_draw_for_is_refused(limit, dealer, last_card, meld, discards, says):
    rules = RuleConfig(wall_limit=limit)

    def declare():
        hand, win, kw = (MELD_HAND, "9d", {"meld": MELD}) if meld else (HAND, "9c", {})
        return score_hand(hand, win, tsumo=True, dealer=dealer, last_card=last_card, discards=discards, rules=rules,
                          **kw)  # fmt: skip

    if says is None:
        assert declare().win
    else:
        with pytest.raises(CardError, match=re.escape(says)):
            declare()
        assert f"the drawable wall is {32 - limit} cards (32 wall cards less wall_limit {limit}, R10, R14)" in str(
            pytest.raises(CardError, declare).value
        )


def test_R14_the_command_takes_a_rule_file_where_the_first_draw_is_the_last_card(tmp_path, capsys):
    rules = tmp_path / "short_wall.yaml"
    rules.write_text("wall_limit: 31\n")
    code, out = score_cli(capsys, HAND, "--win", "9c", "--tsumo", "--dealer", "--first-draw", "--last-card",
                          "--rules", str(rules))  # fmt: skip
    assert code == 0 and "Tenhou" in out and "Haitei" in out, out


# -- R30 / section 7: a round minimum some hand can reach ---------------------------------------------------------


def test_R30_a_minimum_no_hand_reaches_is_refused(tmp_path, capsys):
    with pytest.raises(RuleConfigError, match=r"'min_yaku_han': \[127, .*\(allowed: integers 1\.\.14, .*\(R30\)\)$"):
        RuleConfig(min_yaku_han=[127] * 6)
    with pytest.raises(RuleConfigError, match=r"allowed: integers 1\.\.14"):
        RuleConfig(min_yaku_han=[1, 1, 1, 2, 2, 15])
    assert RuleConfig(min_yaku_han=[14] * 6).min_yaku_han == (14,) * 6
    path = tmp_path / "r.yaml"
    path.write_text("min_yaku_han: [127, 127, 127, 127, 127, 127]\n")
    err = one_line_error(["simulate", "--games", "1", "--rules", str(path)], capsys)  # it never finished
    assert str(path) in err and "integers 1..14" in err


@pytest.mark.parametrize(
    "changes, top",
    [
        ({}, 1 + 4 + 6 + 3),  # Closed Tsumo, Tenhou, Two Quads, Jun Chanta
        ({"value_triplet_han": 5}, 1 + 4 + 2 * 5 + 2 + 3),  # ... two crown triplets: Value Triplet x2, Toitoi
        ({"haitei_han": 9}, 1 + 9 + 6 + 3),  # Haitei instead of Tenhou: a first draw is never the last card
        ({"wall_limit": 31}, 1 + 4 + 1 + 6 + 3),  # here it is: Tenhou and Haitei together
        ({"num_players": 2, "rounds": 4, "min_yaku_han": [1] * 4, "placement_points": [0, 0]}, 14),
    ],
)
def test_R30_the_bound_follows_the_options(changes, top):
    assert max_standard_yaku_han(RuleConfig(**changes)) == top


def test_R30_every_built_in_rule_config_stays_valid():
    files = sorted((ROOT / "meld8_env" / "configs" / "rules").glob("*.yaml")) + sorted(
        (ROOT / "configs" / "rules").glob("*.yaml")
    )
    assert len(files) >= 4
    for f in files:
        r = RuleConfig.from_yaml(f)
        assert max(r.min_yaku_han) <= max_standard_yaku_han(r)


@pytest.mark.parametrize(
    "rules, cards, win, flags",
    [
        (RuleConfig(), "As Ah Ad Ac Ks Kh Kd Kc", "Kc", {"first_draw": True}),
        (RuleConfig(value_triplet_han=5), "As Ah Ad Ks Kh Kd Js Jh", "Jh", {"first_draw": True}),
        (RuleConfig(haitei_han=9), "As Ah Ad Ac Ks Kh Kd Kc", "Kc", {"last_card": True}),
        (RuleConfig(wall_limit=31), "As Ah Ad Ac Ks Kh Kd Kc", "Kc", {"first_draw": True, "last_card": True}),
    ],
)
def test_R30_the_bound_is_reached(rules, cards, win, flags):
    """The bound is exact: a minimum at it is accepted, and a (non-yakuman) hand meets it."""
    top = max_standard_yaku_han(rules)
    at_top = rules.replace(min_yaku_han=[top] * rules.rounds)
    r = score_hand(cards, win, tsumo=True, dealer=True, rules=at_top, **flags)
    assert r.win and r.yaku_han == top and not any(y in ("royal_straight", "four_crown_pairs") for y, _ in r.yaku)


def _bits(masks: np.ndarray) -> np.ndarray:
    """(N, k) card ids of N masks of k cards each."""
    b = np.unpackbits(masks.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    return np.nonzero(b)[1].reshape(len(masks), -1)


def _joker_free_winning_hands() -> tuple[np.ndarray, np.ndarray]:
    """(hands, win cards): every concealed Joker-free hand of two groups and a pair with each of its 8 cards as the
    winning card (the wait decides Pinfu, R31), and every four-pairs, two-quads and straight hand (R26) once."""
    card = np.arange(52, dtype=np.uint64).reshape(4, 13)  # [suit, rank - 1]
    one = np.uint64(1)
    seqs = [
        (one << card[s, r]) | (one << card[s, r + 1]) | (one << card[s, r + 2]) for s in range(4) for r in range(11)
    ]
    quads = [np.bitwise_or.reduce(one << card[:, r]) for r in range(13)]
    trips = [q & ~(one << card[s, r]) for r, q in enumerate(quads) for s in range(4)]
    pairs = np.array([(one << card[a, r]) | (one << card[b, r]) for r in range(13)
                      for a, b in itertools.combinations(range(4), 2)], np.uint64)  # fmt: skip
    groups = np.array(seqs + trips, np.uint64)
    i, j = np.triu_indices(len(groups), k=1)
    two = groups[i] | groups[j]
    two = two[(groups[i] & groups[j]) == 0]
    std = (two[:, None] | pairs[None, :])[(two[:, None] & pairs[None, :]) == 0]
    std = np.unique(std)
    by_rank = pairs.reshape(13, 6)
    fours = []
    for ranks in itertools.combinations(range(13), 4):
        p = np.meshgrid(*(by_rank[r] for r in ranks), indexing="ij")
        fours.append((p[0] | p[1] | p[2] | p[3]).ravel())
    straights = [np.bitwise_or.reduce(one << card[s, a : a + 8]) for s in range(4) for a in range(6)]
    two_quads = [quads[a] | quads[b] for a, b in itertools.combinations(range(13), 2)]
    special = np.concatenate([*fours, np.array(straights + two_quads, np.uint64)])
    hands = np.concatenate([np.repeat(std, 8), special])
    wins = np.concatenate([_bits(std).ravel(), _bits(special)[:, 0]]).astype(np.int8)
    return hands, wins


def _beats(hands, melds, wins, flags: int, top: int, rules: RuleConfig) -> np.ndarray:
    """Rows some non-yakuman reading of which reaches ``top + 1`` standard-yaku han (a true yakuman reports 0)."""
    n = len(hands)
    out = score_batch(hands, melds, wins, np.full(n, flags, np.uint8), np.full(n, top + 1, np.int8),
                      np.full(n, -1, np.int8), None, rules)  # fmt: skip
    return (out["reason"] == 0) & (out["yaku_han"] > 0)


def _best_flags(rules: RuleConfig) -> list[int]:
    """The win timings whose yaku (Closed Tsumo, Tenhou, Haitei) can add up to the most han under ``rules``."""
    if rules.wall_draws in rules.first_draws(True) or rules.wall_draws in rules.first_draws(False):
        return [FLAG_TSUMO | FLAG_DEALER | FLAG_FIRST_DRAW | FLAG_LAST_CARD]
    return [FLAG_TSUMO | FLAG_DEALER | FLAG_FIRST_DRAW, FLAG_TSUMO | FLAG_LAST_CARD]


def _needs_c_scorer() -> None:
    try:
        native_module()
    except RuntimeError:
        pytest.skip("needs the C scorer (score_batch)")


BOUND_RULES = [RuleConfig(), RuleConfig(value_triplet_han=3, haitei_han=5, wall_limit=30)]


@pytest.mark.parametrize("rules", BOUND_RULES)
def test_R30_no_concealed_hand_beats_the_bound(rules):
    """Every concealed Joker-free winning hand, scored by the engine's scorer at the timings that add most: none
    reaches one han over the bound, and some reach it (a call or the Joker only removes or lowers yaku, R32; the
    slow test below scores those too)."""
    _needs_c_scorer()
    hands, wins = _joker_free_winning_hands()
    assert len(hands) == 254_286 * 8 + 926_640 + 24 + 78  # two groups and a pair; four pairs; straights; two quads
    top = max_standard_yaku_han(rules)
    flag_sets = _best_flags(rules)
    assert not any(_beats(hands, None, wins, flags, top, rules).any() for flags in flag_sets)
    assert any(_beats(hands, None, wins, flags, top - 1, rules).any() for flags in flag_sets)


@pytest.mark.slow
@pytest.mark.parametrize("rules", [*BOUND_RULES, RuleConfig(wall_limit=31), RuleConfig.two_player(haitei_han=6)])
def test_R30_no_hand_beats_the_bound_joker_and_calls_included(rules):
    """Every winning concealed hand (Joker stand-ins included) with each of its cards as the winning card, and every
    called hand (an exposed Pon or Chii beside 5 concealed cards), at the timings that add most."""
    from meld8_env.hands import _reference

    _needs_c_scorer()
    top = max_standard_yaku_han(rules)
    hands = _reference.winning_hands()
    wins = _bits(hands).ravel().astype(np.int8)
    hands = np.repeat(hands, 8)
    for flags in _best_flags(rules):
        assert not _beats(hands, None, wins, flags, top, rules).any(), flags
    parts, standins = _reference.winning_parts()
    seqs = [sum(1 << (s * 13 + r + k) for k in range(3)) for s in range(4) for r in range(11)]
    trips = [sum(1 << (s * 13 + r) for s in range(4) if s != out) for r in range(13) for out in range(4)]
    for meld in map(np.uint64, seqs + trips):
        ok = parts[((parts & meld) == 0) & ((standins & meld) == 0)]
        wins = _bits(ok).ravel().astype(np.int8)
        called = np.repeat(ok, 5)
        for flags in _best_flags(rules):
            assert not _beats(called, np.full(len(called), meld), wins, flags, top, rules).any(), (int(meld), flags)


# -- R12 / R35: the Joker is never seen elsewhere ---------------------------------------------------------------------


def test_R12_R35_distance_refuses_the_joker_among_the_seen_cards(capsys):
    # was accepted and turned the answer into "unreachable"
    err = one_line_error(["distance", "7h 9c Td As Ts Jc 6c", "--seen", "5h 8h JK"], capsys)
    assert err.startswith("meld8 distance: error: --seen: JK can never be seen elsewhere")
    assert "(R12)" in err and "(R35)" in err
    assert main(["distance", "2s 3s 4s 6h 7h 9d JK", "--seen", "9s 9h 9c"]) == 0  # the Joker held, its nines seen
    assert capsys.readouterr().out.strip() == "2"
