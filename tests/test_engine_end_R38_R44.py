"""R38-R44 through the engine: payments, placement, penalties, the two-player variant, rewards."""

import random

from meld8_env.actions import PASS, RON, TSUMO
from meld8_env.cards import parse_card
from meld8_env.codes import Result
from meld8_env.engine.reference import Game
from meld8_env.rules import RuleConfig
from meld8_env.testing import check_invariants, play_random, scenario


def c(tok: str) -> int:
    return parse_card(tok)


def test_R38_ron_discarder_pays_all():
    hands = {0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}
    g = scenario(hands, "8h")
    g.step(c("8h"))
    g.step(RON)
    pts = g.results[-1].score().points
    assert g.scores == [30_000 - pts, 30_000 + pts, 30_000]


def test_R40_placement_points_and_tie_order():
    g = Game(RuleConfig(starting_dealer=1, rounds=1, min_yaku_han=(1,)), seed=0)
    g.scores = [40_000, 25_000, 25_000]
    g._finish()
    # seats 1 and 2 tie: seat 1 is the chiicha, so it places higher
    assert g.placements == [1, 2, 3] and g.final_scores == [60_000, 25_000, 5_000]
    g = Game(RuleConfig(starting_dealer=2, rounds=1, min_yaku_han=(1,)), seed=0)
    g.scores = [40_000, 25_000, 25_000]
    g._finish()
    assert g.placements == [1, 3, 2]


def test_R40_share_option():
    g = Game(RuleConfig(rounds=1, min_yaku_han=(1,), placement_tie="share"), seed=0)
    g.scores = [40_000, 25_000, 25_000]
    g._finish()
    assert g.final_scores == [60_000, 15_000, 15_000] and sum(g.final_scores) == 90_000


def test_R9_scores_may_go_negative():
    g = scenario({0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}, "8h",
                 scores=[1_000, 59_000, 30_000])  # fmt: skip
    g.step(c("8h"))
    g.step(RON)
    assert g.scores[0] < 0 and not g.over


def test_R41_chombo_in_penalty_mode():
    rules = RuleConfig(starting_dealer=0, penalty_mode=True)
    g = scenario({0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}, "8h", rules=rules)
    g.step(TSUMO)  # the dealer has no win: false declaration
    assert g.results[-1].kind == Result.CHOMBO and g.scores == [20_000, 35_000, 35_000]
    assert g.round == 1  # the deal is void; the next round starts with normal rotation


def test_R42_dead_hand_substitutes_and_forbids_wins():
    rules = RuleConfig(starting_dealer=0, penalty_mode=True)
    g = scenario(
        {0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}, "Js 8h", rules=rules
    )
    g.step(c("As"))  # seat 0 does not hold As: an impossible discard -> dead hand
    assert g.dead[0] and g.discards[0][-1][0] == c("Js")  # the drawn card was substituted
    # seat 1 now draws 8h, a winning draw: Tsumo is offered, but not once its hand is dead
    assert g.acting_seat == 1 and TSUMO in g.legal_actions()
    g.dead[1] = True
    assert TSUMO not in g.legal_actions()


def test_R43_default_mode_rejects_instead():
    g = Game(seed=2)
    try:
        g.step(TSUMO if TSUMO not in g.legal_actions() else PASS)
    except ValueError as e:
        assert "legal:" in str(e)
    else:
        raise AssertionError("an illegal action was accepted")
    assert not any(g.dead)


def test_R44_two_player_games_run_to_the_end():
    rules = RuleConfig.two_player()
    for seed in range(3):
        g = Game(rules, seed=seed)
        play_random(g, random.Random(seed), check=True)
        assert g.over and sum(g.final_scores) == 60_000 and sorted(g.placements) == [1, 2]


def test_rewards_sum_to_final_score_change():
    rules = RuleConfig(rounds=2, min_yaku_han=(1, 1), max_replays=3)
    for seed in range(6):
        g = Game(rules, seed=seed)
        total = [0.0] * 3
        rng = random.Random(seed)
        while not g.over:
            g.step(rng.choice(g.legal_actions()))
            total = [t + r for t, r in zip(total, g.rewards, strict=True)]
        assert [round(t, 6) for t in total] == [(f - 30_000) / 10_000 for f in g.final_scores]
        assert abs(sum(total)) < 1e-9


def test_rank_rewards():
    g = Game(RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0), seed=1, reward="rank")
    rng = random.Random(1)
    total = [0.0] * 3
    while not g.over:
        g.step(rng.choice(g.legal_actions()))
        total = [t + r for t, r in zip(total, g.rewards, strict=True)]
    assert sorted(total) == [-1.0, 0.0, 1.0]
    assert total[g.placements.index(1)] == 1.0
    check_invariants(g)
