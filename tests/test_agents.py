"""Bots: never a masked action, take wins, discard by distance, call sensibly, defend; the loader."""

import itertools
import re

import numpy as np
import pytest

from meld8_env.actions import PASS, RON, TSUMO, pon_action
from meld8_env.agent_spec import AgentLoadError, load_agent
from meld8_env.cards import parse_card
from meld8_env.features import danger
from meld8_env.hands import distance_batch
from meld8_env.observation import decode, encode
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
    # an illegal action raises: Meld8Vector on a masked action, or play_games on a refused one (bot lineups run in C)
    recs = play(agents, seats, list(range(n)), rules)
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


def _danger_to(game, seat: int, opponent_rel: int, card: int) -> int:
    d = decode(encode(game, seat)[None, :], game.rules)
    return int(danger(np.array([card]), d["unseen"], d["discarded"][:, opponent_rel])[0])


def test_danger_counts_live_shapes_and_furiten():
    # seat 2's view after seat 1 called K and discarded 9d: 9h's pair shapes are dead (furiten on 9d)
    g = _caller_scenario()
    assert _danger_to(g, 2, 2, c("9h")) < _danger_to(g, 2, 2, c("6h"))


def _caller_scenario():
    hands = {0: "Kc 2c 5d 8d Qh 3c 7c", 1: "Ks Kh 2s 3s 4s 9d Jc", 2: "9h 9c 6h 2d 3d Ts Ad"}
    g = scenario(hands, "Jd 5s")
    g.dealer_discarded = True
    g.step(c("Kc"))
    g.step(pon_action(0, 1))  # seat 1 calls: a threat
    g.step(c("9d"))
    assert g.acting_seat == 2 and g.phase == 2  # seat 2 could Pon 9d with 9h 9c; it passes
    g.step(PASS)
    assert g.acting_seat == 2 and g.phase == 0 and g.calls_used[1] == 1
    return g


def test_defensive_folds_against_a_caller_when_far_from_winning():
    g = _caller_scenario()
    obs, mask = obs_mask(g)
    legal = [a for a in range(52) if mask[a]]
    defensive = load_agent("defensive")
    assert defensive.act(obs, mask) == load_agent("greedy").act(obs, mask) == c("5s")  # 2 from a win: no fold
    defensive.fold_distance = 2  # now this hand counts as far from winning
    pick, greedy_pick = defensive.act(obs, mask), load_agent("greedy").act(obs, mask)
    dangers = {a: _danger_to(g, 2, 2, a) for a in legal}  # relative seat 2 of seat 2 is seat 1
    assert dangers[pick] == min(dangers.values()) < dangers[greedy_pick]


def test_defensive_keeps_greedy_offense_without_threat():
    from meld8_env.features import best_discards

    g = scenario({0: "2s 3s 4s 6h 7h 9d Tc", 1: "9h 9s 4d 6d Td Jc As", 2: "6s 5s 2d 3d Ts Ad 5c"}, "Kc")
    obs, mask = obs_mask(g)
    d = decode(obs[None, :], g.rules)
    allowed = (mask[:52].astype(np.uint64) * (np.uint64(1) << np.arange(52, dtype=np.uint64))).sum(dtype=np.uint64)
    _, dist, acc = best_discards(d["hand"], d["melds"][:, 0], d["unseen"], np.array([allowed]))
    pick = load_agent("defensive").act(obs, mask)
    after = d["hand"] & ~(np.uint64(1) << np.uint64(pick))
    assert distance_batch(after, d["melds"][:, 0], d["unseen"])[0] == dist[0]  # same distance as greedy
    greedy_pick = load_agent("greedy").act(obs, mask)
    total = lambda a: sum(_danger_to(g, 0, k, a) for k in (1, 2))  # noqa: E731
    assert total(pick) <= total(greedy_pick)


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
        ("ppo:runs/none/best.zip", "checkpoint not found: runs/none/best.zip"),
        ("missing_model.zip", "checkpoint not found: missing_model.zip"),
    ],
)
def test_loader_errors(spec, message):
    with pytest.raises(AgentLoadError, match=message):
        load_agent(spec)


@pytest.mark.parametrize("spec", ["search:worlds=٣", "search:worlds=3_2"])
def test_search_options_read_ascii_digits_only(spec):
    # red team, session 32: int() read another script's digits and "3_2" (as 32)
    from meld8_env.agent_spec import AgentLoadError, load_agent

    with pytest.raises(AgentLoadError, match="give an integer"):
        load_agent(spec)


@pytest.mark.parametrize(
    "spec, says",
    [
        ("search:worlds=4+worlds=8", "search option worlds given twice ('4' and '8'): give it once"),
        ("search:worlds=4,cands=2,worlds=4", "worlds given twice"),
        ("wary:lam=5+lam=7", "wary option lam given twice ('5' and '7')"),
        ("wary:lam=1_0", "give a finite number"),
        ("wary:lam=١٠", "give a finite number"),
        ("wary:lam=nan", "give a finite number"),
        ("wary:lam=1e309", "give a finite number"),
    ],
)
def test_agent_options_are_read_once_and_strictly(spec, says):
    # red team, session 33: a repeated key was taken last-wins (and a distillation part stored the spec that named
    # the other value); wary read "1_0" and Arabic-Indic digits as 10 through float()
    from meld8_env.agent_spec import AgentLoadError, load_agent

    with pytest.raises(AgentLoadError, match=re.escape(says)):
        load_agent(spec)
    assert load_agent("wary:lam=2.5").lam == 2.5 and load_agent("wary:lam=.5e1").lam == 5.0


def test_a_huge_agent_spec_is_not_echoed_whole():
    from meld8_env.agent_spec import AgentLoadError, load_agent

    with pytest.raises(AgentLoadError) as err:
        load_agent("x" * 100_000)  # the error line echoed all 100,000 characters
    assert len(str(err.value)) < 1000
