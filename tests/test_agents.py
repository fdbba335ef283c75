"""Bots: never a masked action, take wins, discard by distance, call sensibly, defend; the loader."""

import itertools

import numpy as np
import pytest

from agents.registry import AgentLoadError, load_agent
from meld8_env.actions import PASS, RON, TSUMO, pon_action
from meld8_env.cards import parse_card
from meld8_env.observation import encode
from meld8_env.rules import RuleConfig
from meld8_env.testing import scenario
from training.arena import play

PERMS = np.array(list(itertools.permutations(range(3))))


def obs_mask(game, seat=None):
    seat = game.acting_seat if seat is None else seat
    mask = np.zeros(64, bool)
    mask[game.legal_actions()] = True
    return encode(game, seat), mask


def c(tok):
    return parse_card(tok)


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig.two_player()])
def test_bots_never_choose_masked_actions(rules):
    names = ["random", "greedy", "defensive"]
    agents = [load_agent(n, rules, i) for i, n in enumerate(names)]
    n = 12
    if rules.num_players == 3:
        seats = np.tile(PERMS, (n // 6, 1))
    else:
        seats = np.array([[1, 2], [2, 0]] * (n // 2))
    recs = play(agents, seats, list(range(n)), rules)  # Meld8Vector raises on any masked action
    assert all(sum(r.final_scores) == rules.num_players * 30_000 for r in recs)


def test_greedy_takes_tsumo_and_ron():
    g = scenario({0: "2s 3s 4s 6h 7h 9d 9c", 1: "9h 9s 4d 6d Tc Jc As", 2: "6s 5s 2d 3d Kc Ts Ad"}, "8h")
    greedy = load_agent("greedy")
    assert greedy.act(*obs_mask(g)) == TSUMO
    g = scenario({0: "2c 5d 8d Kc Qh 3c 7c", 1: "2s 3s 4s 6h 7h 9d 9c", 2: "6s 5s 2d 3d Kd Ts Ad"}, "8h")
    g.step(c("8h"))
    assert greedy.act(*obs_mask(g)) == RON


def test_greedy_discards_to_keep_distance_low():
    g = scenario({0: "2s 3s 4s 6h 7h 9d 9c", 1: "9h 9s 4d 6d Tc Jc As", 2: "6s 5s 2d 3d Ts Ad 5c"}, "Kc")
    assert load_agent("greedy").act(*obs_mask(g)) == c("Kc")  # keeps the tenpai hand


def _claim_on(discard_hand_0: str, hand_1: str, card: str):
    """Seat 0 (dealer, past its first discard) discards ``card``; seat 1 is asked first."""
    g = scenario({0: discard_hand_0, 1: hand_1, 2: "6s 6h 2d 3d Ts Tc Ad"}, "Jd")
    g.dealer_discarded = True
    g.step(c(card))
    assert g.acting_seat == 1 and g.phase == 2
    return g


def test_greedy_calls_when_it_lowers_distance_and_keeps_a_yaku():
    # 2s3s4s + KsKh + 7d Jc is 2 from a win; after Pon K and discarding Jc: 2s3s4s 7d + [K K K] is 1
    # from a win, and the crown-rank triplet is a yaku
    g = _claim_on("Kc 2c 5d 8d Qh 3c 7c", "Ks Kh 2s 3s 4s 7d Jc", "Kc")
    assert pon_action(0, 1) in g.legal_actions()
    assert load_agent("greedy").act(*obs_mask(g)) == pon_action(0, 1)


def test_greedy_passes_a_call_without_a_yaku():
    # 2s3s4s 5s5h 9d Kc is 2 from a win, 1 after Pon 5 - but then no yaku is reachable (no crown
    # triplet, mixed colours, no pair left for Toitoi, no crown in the meld): pass
    g = _claim_on("5d 2c 9c 8d Qh 3c 7c", "5s 5h 2s 3s 4s 9d Kc", "5d")
    assert pon_action(0, 1) in g.legal_actions() and RON not in g.legal_actions()
    assert load_agent("greedy").act(*obs_mask(g)) == PASS


def test_defensive_prefers_furiten_safe_cards_against_a_caller():
    # seat 1 calls Pon of K and discards 9d; seat 2 (not tenpai) then holds 9h: same rank as a
    # discard of the caller, so a pair/triplet wait on 9 would be furiten (R33)
    hands = {0: "Kc 2c 5d 8d Qh 3c 7c", 1: "Ks Kh 2s 3s 4s 9d Jc", 2: "9h 9c 6h 2d 3d Ts Ad"}
    g = scenario(hands, "Jd 5s")
    g.dealer_discarded = True
    g.step(c("Kc"))
    g.step(pon_action(0, 1))
    g.step(c("9d"))
    assert g.acting_seat == 2 and g.phase == 2  # seat 2 could Pon 9d with 9h 9c; it passes
    g.step(PASS)
    assert g.acting_seat == 2 and g.phase == 0 and g.calls_used[1] == 1
    obs, mask = obs_mask(g)
    greedy_pick, defend_pick = load_agent("greedy").act(obs, mask), load_agent("defensive").act(obs, mask)
    assert greedy_pick not in (c("9h"), c("9c")) and defend_pick in (c("9h"), c("9c"))


def test_defensive_equals_greedy_without_threat():
    g = scenario(
        {0: "2s 3s 4s 6h 7h 9d Tc", 1: "9h 9s 4d 6d Tc Jc As".replace("Tc", "Td"), 2: "6s 5s 2d 3d Ts Ad 5c"}, "Kc"
    )
    obs, mask = obs_mask(g)
    assert load_agent("defensive").act(obs, mask) == load_agent("greedy").act(obs, mask)


def test_act_equals_act_batch_row():
    g = scenario({0: "2s 3s 4s 6h 7h 9d 9c", 1: "9h 9s 4d 6d Tc Jc As", 2: "6s 5s 2d 3d Ts Ad 5c"}, "Kc")
    obs, mask = obs_mask(g)
    for name in ("greedy", "defensive"):
        a = load_agent(name)
        assert a.act(obs, mask) == int(a.act_batch(np.stack([obs, obs]), np.stack([mask, mask]))[1])


def test_greedy_beats_random_in_duplicate_play():
    rules = RuleConfig()
    agents = [load_agent(n, rules, i) for i, n in enumerate(["greedy", "random", "random"])]
    seeds = np.repeat(np.arange(20), 6)
    recs = play(agents, np.tile(PERMS, (20, 1)), seeds, rules)
    places = [r.placements[r.seats.index(0)] for r in recs]
    assert np.mean(places) <= 1.4


@pytest.mark.parametrize(
    "spec, message",
    [
        ("grandmaster", "unknown agent 'grandmaster'"),
        ("no_such_module:Bot", "cannot import module 'no_such_module'"),
        ("agents.greedy:Nope", "has no 'Nope'"),
        ("collections:OrderedDict", "lacks name / act / act_batch"),
    ],
)
def test_loader_errors(spec, message):
    with pytest.raises(AgentLoadError, match=message):
        load_agent(spec)
