"""Information sets never carry the truth (issue 19 item 3; R22: a seat sees only its own claim options).

Two records that differ only by a permutation of the hidden cards (the other seats' concealed cards and the
undrawn wall, sizes kept), by the seed and by what other seats answered in a claim window give byte-identical
infosets for the seat, in every phase, on thousands of states from bot games, 3p and 2p. The observation the
engine encodes for that seat is identical too. And the test can fail: the permuted opponents' own infosets do
change.
"""

from __future__ import annotations

import numpy as np
import pytest

from meld8_env.codes import Phase
from meld8_env.engine.records import check_conservation, observe_records, refresh
from meld8_env.infoset import InfoSet, infoset
from meld8_env.rules import RuleConfig
from meld8_env.table import Table
from meld8_env.vector import Meld8Vector
from training.bot_states import play_bot_states

RULES = {"3p": RuleConfig(), "2p": RuleConfig.two_player()}


def permute_hidden(rec: np.ndarray, seat: int, P: int, rng: np.random.Generator) -> None:
    """Shuffle the cards ``seat`` cannot see among the other hands and the undrawn wall, in place; new seed."""
    r = rec[0]
    others = [p for p in range(P) if p != seat]
    lo, hi = int(r["wall_pos"]), int(r["wall_len"])
    pool = [c for p in others for c in range(53) if int(r["hands"][p]) >> c & 1] + [int(c) for c in r["wall"][lo:hi]]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    k = 0
    for p in others:
        n = int(r["hands"][p]).bit_count()
        cards = pool[k : k + n]
        k += n
        rec["hands"][0, p] = sum(1 << c for c in cards)
        if int(r["current"]) == p and int(r["phase"]) == Phase.DRAW and int(r["drawn"]) >= 0:
            rec["drawn"][0] = cards[0]  # the card it drew is one of its (unknown) cards
    rec["wall"][0, lo:hi] = pool[k:]
    rec["seed"][0] = int(rng.integers(0, 2**63))
    if int(r["phase"]) == Phase.CLAIM:  # other seats' answers and options: what R22 hides
        for i in range(int(r["claim_n"])):
            if int(r["claim_asked"][i]) != seat:
                rec["claim_resp"][0, i] = int(rng.choice([63, 53, 54]))
                rec["claim_opts"][0, i] = int(rng.integers(0, 2**63)) | (1 << 63)


@pytest.fixture(scope="module", params=list(RULES))
def states(request):
    rules = RULES[request.param]
    return rules, play_bot_states(rules, games=48 if rules.num_players == 2 else 32, seed=23)


def test_infosets_do_not_depend_on_hidden_cards_seed_or_others_answers(states):
    rules, recs = states
    P = rules.num_players
    rng = np.random.default_rng(1)
    assert len(recs) >= 3000, len(recs)
    recs = np.ascontiguousarray(recs[np.sort(rng.permutation(len(recs))[:3000])])
    seats = np.where(rng.random(len(recs)) < 0.6, recs["acting"], rng.integers(0, P, len(recs))).astype(np.int8)
    twins = recs.copy()
    for i in range(len(recs)):
        permute_hidden(twins[i : i + 1], int(seats[i]), P, rng)
    live = np.flatnonzero(twins["phase"] != Phase.CLAIM)
    sub = np.ascontiguousarray(twins[live])
    refresh(sub, rules)  # e.g. the drawing opponent's Tsumo option follows its new hand
    check_conservation(sub, rules)  # every twin is a state the engine accepts
    twins[live] = sub
    obs, masks = observe_records(rules, recs, seats)
    obs2, masks2 = observe_records(rules, twins, seats)
    assert (obs == obs2).all() and (masks == masks2).all(), "the observation leaks hidden cards"
    phases = set()
    changed_other = 0
    for i in range(len(recs)):
        seat = int(seats[i])
        mine = infoset(recs[i], seat, rules)
        assert infoset(twins[i], seat, rules).to_bytes() == mine.to_bytes(), f"state {i}, seat {seat}"
        phases.add((int(recs["phase"][i]), bool(mine.my_turn)))
        other = (seat + 1) % P
        changed_other += infoset(twins[i], other, rules).hand != infoset(recs[i], other, rules).hand
    assert {(int(Phase.DRAW), True), (int(Phase.CLAIM), True), (int(Phase.CALL_DISCARD), True)} <= phases
    assert (int(Phase.CLAIM), False) in phases and (int(Phase.DRAW), False) in phases
    assert changed_other > len(recs) // 2  # the permutation really moved cards the other seats can see


def test_infoset_contents(states):
    rules, recs = states
    P = rules.num_players
    for i in range(0, len(recs), 17):
        r = recs[i]
        seat = int(r["acting"])
        info = infoset(r, seat, rules)
        assert info.my_turn and info.legal == int(r["mask"]) and info.hand == int(r["hands"][seat])
        assert "seed" not in InfoSet.__dataclass_fields__
        assert info.pool.bit_count() == sum(info.hidden) + info.wall_left + info.dead_wall
        assert info.pool & info.hand == 0
        for p in range(P):
            assert info.pool & info.melds[p] == 0 and info.pool & info.uncalled_discards(p) == 0
        if info.phase == Phase.CLAIM:
            assert info.claim_card >= 0 and info.claim_discarder != seat


def test_table_hands_infosets_only_to_agents_that_ask():
    rules = RULES["3p"]

    class Asker:
        name = "asker"
        wants_infoset = True

        def __init__(self):
            self.seen: list[InfoSet] = []

        def act_batch(self, obs, masks, infosets=None):
            assert infosets is not None and len(infosets) == len(obs)
            self.seen += infosets
            out = np.zeros(len(obs), np.int64)
            for k, info in enumerate(infosets):
                assert info.my_turn and info.legal == sum(1 << int(a) for a in np.flatnonzero(masks[k]))
                out[k] = int(np.flatnonzero(masks[k])[-1])
            return out

    class Plain:
        name = "plain"

        def act_batch(self, obs, masks):
            return np.array([int(np.flatnonzero(m)[0]) for m in masks], np.int64)

    asker, plain = Asker(), Plain()
    v = Meld8Vector(4, rules=rules, seed=3, autoreset=False)
    v.reset(seed=3)
    t = Table(v)
    t.seat(np.arange(4), [[asker, plain, plain]] * 4)
    for _ in range(60):
        acts = np.zeros(4, np.int64)
        t.act(acts)
        t.step(acts)
    assert asker.seen and all(info.seat == 0 for info in asker.seen)
