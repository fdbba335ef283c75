"""R15-R22 and R33/R35 through the engine: Pon, Chii, one call per deal, no calls on the dealer's
first discard, swap-calling, priority Ron > Pon > Chii, head bump, private claims, furiten, dora."""

import numpy as np

from meld8_env.actions import CHII_HIGH, CHII_LOW, PASS, RON, TSUMO, pon_action
from meld8_env.cards import parse_card
from meld8_env.codes import Result
from meld8_env.engine.reference import PHASE_CALL_DISCARD, PHASE_CLAIM, PHASE_DRAW
from meld8_env.observation import encode
from meld8_env.testing import scenario


def c(tok: str) -> int:
    return parse_card(tok)


# Dealer 0. Its first discard is 'Kc' (nobody can use it); then seat 1 draws from the wall.
BASE = {0: "Kc 2c 5d 8d Qh 3c 7c", 1: "9h 9d 4d 6d Tc Jc As", 2: "6s 6h 2d 3d 9c Ts Ad"}


def after_dealer_first(hands=BASE, wall="Ks 5s 4s 7s"):
    g = scenario(hands, wall)
    g.step(c("Kc"))  # dealer's first discard (dora indicator), drawn card Ks kept
    assert g.phase == PHASE_DRAW and g.acting_seat == 1
    return g


def test_R15_pon_by_any_player_and_R19_caller_discards_then_shimocha_draws():
    g = after_dealer_first()
    g.step(c("4d"))  # seat 1 discards 4d: seat 2 (its shimocha) may Chii with 2d 3d
    assert g.phase == PHASE_CLAIM and g.acting_seat == 2
    g.step(PASS)
    assert g.acting_seat == 2 and g.phase == PHASE_DRAW  # seat 2 drew 4s
    g.step(c("9c"))  # seat 1 (not seat 2's shimocha) may still Pon with 9h 9d
    assert g.phase == PHASE_CLAIM and g.acting_seat == 1
    pon = pon_action(1, 2)  # hearts + diamonds
    assert pon in g.legal_actions() and CHII_LOW not in g.legal_actions()
    g.step(pon)
    assert g.phase == PHASE_CALL_DISCARD and g.acting_seat == 1
    assert g.melds[1] == (1 << c("9h")) | (1 << c("9d")) | (1 << c("9c"))
    assert g.discards[2][-1] == [c("9c"), True]  # marked called
    g.step(c("Tc"))
    assert g.phase == PHASE_DRAW and g.acting_seat == 2  # the caller's shimocha draws next (R19)


def test_R16_chii_only_by_shimocha():
    # seat 2 holds 2d 3d; seat 1 discards 4d: seat 2 is seat 1's shimocha -> Chii (4d high)
    g = after_dealer_first()
    g.step(c("4d"))
    assert g.phase == PHASE_CLAIM and g.acting_seat == 2 and CHII_HIGH in g.legal_actions()
    # seat 0 also holds ... nothing: and even with 2d 3d, seat 0 (not shimocha) would get no Chii
    hands = dict(BASE)
    hands[0] = "Kc 2c 5d 8d Qh 2h 3h"
    g = after_dealer_first(hands, wall="Ks 4h 4s 7s")
    g.step(c("4h"))  # seat 1 discards the 4h it drew; seat 0 holds 2h 3h but is not seat 1's shimocha
    assert not (g.phase == PHASE_CLAIM and g.acting_seat == 0)


def test_R17_one_call_per_deal():
    g = after_dealer_first()
    g.step(c("4d"))
    g.step(CHII_HIGH)  # seat 2 calls 2d 3d 4d
    g.step(c("9c"))  # ... and discards 9c: seat 1 can Pon it; seat 2 has used its call
    assert g.acting_seat == 1 and pon_action(1, 2) in g.legal_actions()
    g.calls_used[1] = 1
    assert g._claim_options(1, c("9c"), 2, False, False) == []


def test_R18_no_pon_or_chii_on_dealers_first_discard_but_ron():
    hands = {0: "9c 2c 5d 8d Qh 3c 7c", 1: "9h 9d 4d 6d Tc Jc As", 2: "2s 3s 4s 6h 7h Ad Ac"}
    g = scenario(hands, "Ks")
    g.step(c("9c"))  # seat 1 holds 9h 9d but this is the dealer's first discard
    assert not (g.phase == PHASE_CLAIM and g.acting_seat == 1)
    g = scenario(hands, "8h")
    g.step(c("8h"))  # seat 2 waits on 5h/8h: Ron is allowed on the dealer's first discard
    assert g.phase == PHASE_CLAIM and g.acting_seat == 2 and RON in g.legal_actions()
    g.step(RON)
    assert g.results[-1].kind == Result.RON and g.results[-1].score().bonuses.get("dora") is None
    assert g.results[-1].discarder == 0


def test_R20_kuikae_after_pon_and_chii():
    g = after_dealer_first()
    g.step(c("4d"))
    g.step(CHII_HIGH)  # seat 2: 2d 3d + 4d (discard high): may not discard the A of diamonds (other end)
    assert c("Ad") not in g.legal_actions() and c("9c") in g.legal_actions()
    rules_off = g.rules.replace(kuikae="off")
    g2 = after_dealer_first()
    g2.rules = rules_off
    g2.step(c("4d"))
    g2.step(CHII_HIGH)
    assert c("Ad") in g2.legal_actions()


def test_R21_priority_and_R22_private_choices():
    # dealer 0 has discarded; seat 2 discards 8h: seat 0 can Pon (8s 8c) and seat 1 can Ron (waits 5h 8h).
    hands = {0: "Kc 8s 8c 5d Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "2c 8h 4d 6d Tc Jc As"}
    g = scenario(hands, "Ad Qs Qd")
    g.step(c("Kc"))  # dealer's first discard; seat 1 draws Qs
    g.step(c("Qs"))  # seat 1 discards; seat 2 draws Qd
    assert g.acting_seat == 2 and g.phase == PHASE_DRAW
    g.step(c("8h"))
    assert g.phase == PHASE_CLAIM and g.claim.asked == [0, 1]  # turn order from the discarder
    obs_before = encode(g, 1)
    g.step(pon_action(0, 3))  # seat 0 answers first: Pon
    assert np.array_equal(encode(g, 1), obs_before)  # seat 1 cannot see seat 0's choice (R22)
    assert g.legal_actions() == [RON, PASS]
    g.step(RON)  # Ron beats the earlier seat's Pon (R21)
    assert g.results[-1].kind == Result.RON and g.results[-1].winner == 1 and g.results[-1].discarder == 2


def test_R21_pon_beats_chii():
    # seat 2 discards 5c: seat 0 (shimocha) can Chii with 3c 4c; seat 1 can Pon with 5s 5h
    hands = {0: "Kc 3c 4c 8d Qh 9s Jd", 1: "5s 5h 4d 6d Tc Jc As", 2: "2c 5c 7d 8s Td Ts Ad"}
    g = scenario(hands, "Ad Qs Qd".replace("Ad", "Ah"))
    g.step(c("Kc"))
    g.step(c("Qs"))
    g.step(c("5c"))
    assert g.phase == PHASE_CLAIM and g.claim.asked == [0, 1]
    assert CHII_HIGH in g.legal_actions()
    g.step(CHII_HIGH)
    g.step(pon_action(0, 1))
    assert g.phase == PHASE_CALL_DISCARD and g.acting_seat == 1  # the Pon won


def test_R21_double_ron_head_bump():
    # seat 0 waits on 8s/8h/8d (single 8c), seat 1 on 5h/8h; seat 2 discards 8h: only seat 0,
    # the nearer in turn order from the discarder, wins.
    hands = {0: "2d 3d 4d 5s 6s 7s 8c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "8h 2c 4h 6d Tc Jc As"}
    g = scenario(hands, "Kd Qs Qd")
    g.step(c("Kd"))
    g.step(c("Qs"))
    g.step(c("8h"))
    assert g.phase == PHASE_CLAIM and g.claim.asked == [0, 1]
    g.step(RON)
    assert g.legal_actions() == [RON, PASS]
    g.step(RON)
    res = g.results[-1]
    assert res.kind == Result.RON and res.winner == 0 and res.discarder == 2
    assert g.scores[1] == 30_000  # the bumped Ron scores nothing


def test_R33_furiten_blocks_ron_in_engine():
    # seat 1 waits on 5h/8h; it draws 5h and throws it away: later 8h from seat 2 offers no Ron
    hands = {0: "Kc 5c Td 8d Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "2c 8h 4d 6d Tc Jc As"}
    g = scenario(hands, "Ks 5h Qd")
    g.step(c("Kc"))
    assert g.acting_seat == 1 and TSUMO in g.legal_actions() and c("5h") in g.legal_actions()
    g.step(c("5h"))  # a legal discard of a winning draw: furiten on 5h (and so on every wait)
    assert g.phase == PHASE_DRAW and g.acting_seat == 2
    g.step(c("8h"))
    assert g.phase == PHASE_DRAW and g.acting_seat == 0  # no claim window: seat 1 is furiten
    assert g.furiten_mask(1) == 1 << c("5h")


def test_R35_dora_indicator_is_dealers_first_discard():
    g = after_dealer_first()
    assert g.dora_indicator == c("Kc") and g._dora() == c("Ac")
