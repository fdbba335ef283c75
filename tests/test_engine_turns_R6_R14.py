"""R6-R14: seats, deal, draw/discard turn, the Joker, the last card and draws (replays)."""

import random

import pytest

from meld8_env.actions import PASS, RON, TSUMO
from meld8_env.cards import JOKER, parse_card
from meld8_env.codes import Result
from meld8_env.engine.reference import PHASE_CLAIM, PHASE_DRAW, Game, IllegalActionError
from meld8_env.rules import RuleConfig
from meld8_env.testing import check_invariants, play_random, scenario


def c(tok: str) -> int:
    return parse_card(tok)


def test_R7_starting_dealer_draw_is_seeded_and_fixed_option():
    assert Game(seed=5).chiicha == Game(seed=5).chiicha
    assert {Game(seed=s).chiicha for s in range(40)} == {0, 1, 2}
    assert Game(RuleConfig(starting_dealer=2), seed=5).chiicha == 2


def test_R10_deal_sizes_three_and_two_players():
    g = Game(seed=1)
    assert [bin(h).count("1") for h in g.hands].count(8) == 1  # the dealer has drawn (R11)
    assert bin(g.hands[g.dealer]).count("1") == 8 and len(g.wall) == 32
    g2 = Game(RuleConfig.two_player(), seed=1)
    assert len(g2.wall) == 39 and g2.wall_end == 32  # R44 wall limit 7


def test_R11_R12_joker_never_discardable():
    g = scenario({0: "JK 2s 5h 9d Kc Qh 3c", 1: "4s 4h 7d 8d Tc Jc As", 2: "6s 6h 2d 3d 9c 9h Ad"}, "7s")
    assert JOKER not in g.legal_actions() and c("7s") in g.legal_actions()
    with pytest.raises(IllegalActionError, match=r"illegal action 52 \(tsumo\).*legal: .*discard 2s"):
        g.step(TSUMO)


def test_R43_illegal_action_leaves_state_unchanged():
    g = Game(seed=3)
    before = (list(g.hands), g.phase, g.acting_seat, g.wall_pos)
    with pytest.raises(IllegalActionError, match="legal:"):
        g.step(PASS)
    with pytest.raises(IllegalActionError, match="out of range"):
        g.step(99)
    assert (list(g.hands), g.phase, g.acting_seat, g.wall_pos) == before


def test_R13_discards_kept_in_order():
    g = Game(seed=4)
    first = g.legal_actions()[0]
    g.step(first)
    assert g.discards[g.dealer][0] == [first, False]


def test_R14_final_discard_ron_only_then_draw_replays_round():
    rules = RuleConfig(starting_dealer=0, wall_limit=31)  # a one-card wall: the dealer's draw is the last
    # seat 1 could Pon the 9s (holds 9h 9d) and Ron nothing: on the final discard no Pon is offered
    g = scenario({0: "2s 5h 8d Kc Qh 3c 7c", 1: "9h 9d 4d 6d Tc Jc As", 2: "6s 6h 2d 3d 9c Ts Ad"}, "9s", rules=rules)
    assert g.last_card
    g.step(c("9s"))
    assert g.phase == PHASE_DRAW and g.round == 0 and g.replays == 1  # draw: same round, same dealer (R8)
    assert g.dealer == 0 and g.results[-1].kind == Result.DRAW and g.scores == [30000] * 3


def test_R8_replay_cap_option():
    rules = RuleConfig(starting_dealer=0, wall_limit=31, max_replays=0)
    g = scenario({0: "2s 5h 8d Kc Qh 3c 7c", 1: "9h 9d 4d 6d Tc Jc As", 2: "6s 6h 2d 3d 9c Ts Ad"}, "4s", rules=rules)
    g.step(c("4s"))
    assert g.round == 1 and g.replays == 0 and g.dealer == 1


def test_R8_R29_tsumo_ends_deal_and_dealer_moves():
    g = scenario({0: "2s 3s 4s 6h 7h 9d 9c", 1: "9h 9s 4d 6d Tc Jc As", 2: "6s 5s 2d 3d Kc Ts Ad"}, "8h")
    assert TSUMO in g.legal_actions()
    g.step(TSUMO)
    res = g.results[-1]
    assert res.kind == Result.TSUMO and res.winner == 0
    # Tenhou 4 + closed tsumo 1 + tanyao 1 + pinfu 2 + sequences 2 + dealer 1 = 11 han: counted yakuman
    assert res.score().yakuman == 1 and g.scores == [50000, 20000, 20000]
    assert g.round == 1 and g.dealer == 1


def test_invariants_over_random_games():
    rules = RuleConfig(rounds=2, min_yaku_han=(1, 2), max_replays=2)
    for seed in range(12):
        g = Game(rules, seed=seed)
        play_random(g, random.Random(seed), check=True)
        check_invariants(g)
        assert sum(g.final_scores) == 90_000


def test_same_seed_same_game():
    a, b = Game(seed=9), Game(seed=9)
    ra, rb = random.Random(1), random.Random(1)
    for _ in range(500):
        if a.over:
            break
        assert a.legal_actions() == b.legal_actions()
        act = ra.choice(a.legal_actions())
        assert act == rb.choice(b.legal_actions())
        a.step(act)
        b.step(act)
    assert a.hands == b.hands and a.scores == b.scores


def test_claim_phase_entered_for_ron():
    # seat 1 waits on 5h/8h; the dealer discards 8h: Ron is offered (dealer's first discard: Ron only)
    g = scenario({0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}, "8h")
    g.step(c("8h"))
    assert g.phase == PHASE_CLAIM and g.acting_seat == 1 and g.legal_actions() == [RON, PASS]
