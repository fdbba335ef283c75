"""The search agent (agents/search.py): spec parsing, determinism, no leak of hidden cards, strength."""

from __future__ import annotations

import numpy as np
import pytest

from agents import search_backend as sb
from agents.greedy import GreedyAgent
from agents.registry import AgentLoadError, load_agent
from agents.search import stage_chunks
from meld8_env.actions import PASS, RON, TSUMO
from meld8_env.agent_spec import shipped_model
from meld8_env.codes import Phase
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.engine.records import refresh, start_records, step_records
from meld8_env.rules import RuleConfig

RULES = RuleConfig()
SMALL = "search:worlds=6,cands=3,stages=2,extend=0"  # the machinery, cheaply: no extension


def bot_states(n_games: int, seed: int, every: int = 3) -> np.ndarray:
    """Records where some seat is to act (draw, discard after a call, claim), from games of the bots."""
    from meld8_env.engine.records import observe_records

    bots = [load_agent("greedy", RULES), load_agent("defensive", RULES)]
    recs = start_records(RULES, np.arange(seed, seed + n_games, dtype=np.uint64))
    out, step = [], 0
    while (recs["phase"] != Phase.OVER).any():
        live = recs["phase"] != Phase.OVER
        obs, masks = observe_records(RULES, recs)
        acts = np.full(len(recs), -1, np.int64)
        for k, bot in enumerate(bots):
            rows = np.flatnonzero(live & (recs["acting"] % 2 == k))
            if rows.size:
                acts[rows] = bot.act_batch(obs[rows], masks[rows])
        if step % every == 0:
            pick = np.flatnonzero(live & (masks.sum(axis=1) > 1))
            out.append(recs[pick].copy())
        step_records(RULES, recs, acts)
        step += 1
    return sb.cat_records(out) if out else recs[:0]


def decide(agent, recs: np.ndarray) -> tuple[np.ndarray, list]:
    from meld8_env.engine.records import observe_records

    obs, masks = observe_records(RULES, recs)
    infos = [sb.infoset_of(r, int(r["acting"]), RULES) for r in recs]
    acts = agent.act_batch(obs, masks, infosets=infos)
    return acts, agent.last_values


def test_spec_options_and_bad_options_are_one_line():
    a = load_agent("search:worlds=8,leaf=points,opp=greedy", RULES)
    assert a.opts["worlds"] == 8 and a.opts["leaf"] == "points" and a.wants_infoset
    default = load_agent("search", RULES).opts
    assert default["worlds"] == 48 and default["me"] == "greedy"
    assert default["extend"] == 336 and default["extend_z"] == 10  # the default since session 21
    # the extension works on plain rollout worlds: off by default with screening or ron=model
    assert load_agent("search:screen=64", RULES).opts["extend"] == 0
    assert load_agent("search:ron=model", RULES).opts["extend"] == 0
    assert load_agent("search:screen=64,extend=0", RULES).opts["extend"] == 0
    assert load_agent("search:screen=32", RULES).opts["extend"] == 336  # screen <= worlds screens nothing
    for bad in ("search:screen=64,extend_z=20", "search:ron=model,extend_set=alive"):
        with pytest.raises(AgentLoadError, match="work with the extension, which is off"):
            load_agent(bad, RULES)
    assert load_agent("search:worlds=8+cands=2", RULES).opts["cands"] == 2  # for comma-separated agent lists
    assert load_agent("search:belief=no_pass", RULES).opts["belief"] == "no_pass"
    for bad, why in [("search:wrlds=3", "key one of"), ("search:worlds=x", "integer"),
                     ("search:worlds=0", "1..4096"), ("search:threads=9", "threads=9: must be 1..8"),
                     ("search:leaf=gold", "placement, points"),
                     ("search:belief=psychic", "two_level, uniform, learned, no_pass, last_discard")]:  # fmt: skip
        with pytest.raises(AgentLoadError, match=why):
            load_agent(bad, RULES)


def test_decisions_are_deterministic_under_the_seed_and_legal():
    recs = bot_states(2, 40, every=7)[:16]
    a1, v1 = decide(load_agent(SMALL, RULES, seed=5), recs)
    a2, v2 = decide(load_agent(SMALL, RULES, seed=5), recs)
    assert a1.tolist() == a2.tolist() and v1 == v2
    masks = np.array([[int(r["mask"]) >> b & 1 for b in range(64)] for r in recs], bool)
    assert masks[np.arange(len(recs)), a1].all()
    # one batch or one decision at a time: the same choices (each decision has its own random stream)
    agent = load_agent(SMALL, RULES, seed=5)
    single = [int(decide(agent, recs[i : i + 1])[0][0]) for i in range(len(recs))]
    assert single == a1.tolist()


def _permute_hidden(rec: np.ndarray, seat: int, rng: np.random.Generator) -> np.ndarray:
    """A record that differs only by where the seat's hidden cards lie (other hands, wall) and the seed."""
    out = rec.copy()
    r = out[0]
    P = RULES.num_players
    others = [p for p in range(P) if p != seat]
    pos, length = int(r["wall_pos"]), int(r["wall_len"])
    cards = [c for p in others for c in range(53) if int(r["hands"][p]) >> c & 1] + r["wall"][pos:length].tolist()
    sizes = [int(r["hands"][p]).bit_count() for p in others]
    perm = rng.permutation(cards)
    at = 0
    for p, k in zip(others, sizes, strict=True):
        r["hands"][p] = sum(1 << int(c) for c in perm[at : at + k])
        at += k
    r["wall"][pos:length] = perm[at:]
    r["seed"] = int(rng.integers(0, 2**62))
    refresh(out, RULES)
    return out


def _hidden_twins(recs: np.ndarray, rng: np.random.Generator) -> tuple[list[np.ndarray], list[int]]:
    """For each record, its twin with the hidden cards and seed permuted, kept only where it stays the same
    seat's decision with the same mask (a permuted claim window can ask other seats, or none)."""
    twins, kept = [], []
    for i in range(len(recs)):
        seat = int(recs[i]["acting"])
        t = _permute_hidden(recs[i : i + 1], seat, rng)
        if int(t[0]["acting"]) == seat and int(t[0]["mask"]) == int(recs[i]["mask"]):
            twins.append(t)
            kept.append(i)
    return twins, kept


def test_no_leak_decisions_ignore_hidden_cards_and_seed():
    """Records that differ only in the hidden cards and the seed give the same decisions and values."""
    rng = np.random.default_rng(2)
    recs = bot_states(2, 70, every=5)[:24]
    twins, kept = _hidden_twins(recs, rng)
    assert len(kept) >= 12
    a = load_agent(SMALL, RULES, seed=9)
    acts1, vals1 = decide(a, recs[kept])
    acts2, vals2 = decide(a, sb.cat_records(twins))
    assert acts1.tolist() == acts2.tolist()
    assert vals1 == vals2


def test_the_shipped_default_is_deterministic_and_leak_free_one_at_a_time_or_batched():
    """The default spec itself (48 worlds and the extension where the verdict is in doubt): records that differ
    only in the hidden cards and the seed give the same decisions and values, and a batch decides as the same
    decisions one at a time (each decision's worlds, extension chunks included, come from its own streams)."""
    rng = np.random.default_rng(12)
    recs = bot_states(2, 77, every=6)[:12]
    twins, kept = _hidden_twins(recs, rng)
    assert len(kept) >= 6
    agent = load_agent("search", RULES, seed=9)
    acts1, vals1 = decide(agent, recs[kept])
    acts2, vals2 = decide(load_agent("search", RULES, seed=9), sb.cat_records(twins))
    assert acts1.tolist() == acts2.tolist() and vals1 == vals2
    single = [decide(agent, recs[kept][i : i + 1]) for i in range(len(kept))]
    assert [int(a[0]) for a, _ in single] == acts1.tolist() and [v[0] for _, v in single] == vals1
    plain = load_agent("search:extend=0", RULES, seed=9)
    decide(plain, recs[kept])
    # the extension fired: more worlds than the stages alone, counted twice (the batch, then one at a time)
    assert agent.rollouts > 2 * plain.rollouts > 0


def test_without_infosets_it_plays_as_defensive_and_counts_it():
    recs = bot_states(1, 5, every=9)[:6]
    from meld8_env.engine.records import observe_records

    obs, masks = observe_records(RULES, recs)
    a = load_agent(SMALL, RULES)
    got = a.act_batch(obs, masks)
    assert got.tolist() == load_agent("defensive", RULES).act_batch(obs, masks).tolist()
    assert a.fallback_decisions == len(recs)


def test_review_shows_the_search_values_as_the_hint():
    import base64

    from meld8_app.web.review import format_review, review
    from training.arena import play

    bots = [load_agent("greedy", RULES), load_agent("defensive", RULES)]
    rec = play(bots, np.array([[0, 1, 0]]), [17], RULES)[0]
    actions = list(base64.b64decode(rec.actions))[:40]
    doc = review(RULES, 17, actions, 0, "search:worlds=4,cands=2,stages=1")
    searched = [d for d in doc["decisions"] if any("value" in o for o in d["options"])]
    assert searched, "no decision of seat 0 was searched in 40 actions"
    for d in searched:
        vals = [o["value"] for o in d["options"]]
        assert vals == sorted(vals, reverse=True) and all(-3.0 <= v <= -1.0 for v in vals)
        # the choice is a searched candidate: the best, or the bot's own choice kept within the noise margin
        assert d["reference"]["id"] in [o["id"] for o in d["options"]]
    assert "search" in format_review(doc)


def test_a_small_search_beats_greedy_in_a_short_tournament():
    """The search machinery end to end (worlds, candidates applied, C rollouts, placement leaf, halving) on
    duplicate boards against two greedy bots. The diagnostic cheat=1 worlds keep the true hands, so a small
    budget shows a clear edge (1.45 vs defensive + greedy in 60 games, bench in docs/search_log.md); the honest
    agent's edge is measured by the tournaments in the README, not here."""
    from training.search_eval import agent_placements, play_duplicate

    res = play_duplicate(["search:worlds=4+cands=2+stages=1+cheat=1", "greedy", "greedy"], 8, 4242, RULES)
    pl = agent_placements(res, 0)
    assert len(pl) == 24
    assert pl.mean() < 1.75, pl.tolist()


def test_the_honest_search_places_better_than_greedy_on_fixed_boards():
    """The honest agent (worlds from the information set, no cheat) in one seat against two ``greedy``: 16
    duplicate boards, every seating (48 games, about half a minute). Greedy's own placement in that seat is
    2.0 by symmetry; the search placed 1.81 (standard error 0.12) here when this test was written, so this
    is a regression guard on fixed seeds, not a strength claim: the README's 5,004-game tournaments are. (The
    continuation is pinned to the one it was written with, ``me=defensive``, the default until session 13.)"""
    from training.search_eval import agent_placements, play_duplicate

    spec = "search:worlds=8+cands=2+stages=1+me=defensive+extend=0"
    pl = agent_placements(play_duplicate([spec, "greedy", "greedy"], 16, 4242, RULES), 0)
    assert len(pl) == 48
    assert pl.mean() < 1.9, pl.tolist()


SCREENED = "search:worlds=6,cands=3,stages=2,screen=24"


def test_screening_is_deterministic_legal_and_leak_free():
    """``screen``: decisions stay a pure function of the seed and the information set (batch = one at a time,
    hidden cards and seed permuted = the same choices and values), and every choice is legal."""
    rng = np.random.default_rng(4)
    recs = bot_states(2, 71, every=5)[:16]
    a1, v1 = decide(load_agent(SCREENED, RULES, seed=3), recs)
    agent = load_agent(SCREENED, RULES, seed=3)
    assert [int(decide(agent, recs[i : i + 1])[0][0]) for i in range(len(recs))] == a1.tolist()
    masks = np.array([[int(r["mask"]) >> b & 1 for b in range(64)] for r in recs], bool)
    assert masks[np.arange(len(recs)), a1].all()
    twins, kept = _hidden_twins(recs, rng)
    assert len(kept) >= 8
    a2, v2 = decide(load_agent(SCREENED, RULES, seed=3), sb.cat_records(twins))
    assert a2.tolist() == a1[kept].tolist() and v2 == [v1[i] for i in kept]


def test_screened_value_is_the_stratified_mean():
    """p * (mean over all M worlds that end at once) + (1 - p) * (mean over the other rollout worlds)."""
    from agents.search import SearchAgent

    M, K = 8, 4
    w = np.array([1, 1, 2, 1, 1, 1, 1, 2], float)
    end = np.zeros(M, bool)
    end[[1, 5, 7]] = True
    end_v = np.full(M, np.nan)
    end_v[[1, 5, 7]] = [-3.0, -2.0, -2.5]
    v = np.array([-1.0, -3.0, -1.5, -1.25])  # rollout worlds 0..3 (world 1 ended at once)
    p = (1 + 1 + 2) / w.sum()
    v_end = (-3.0 - 2.0 - 2 * 2.5) / 4
    v_rest = (-1.0 * 1 - 1.5 * 2 - 1.25 * 1) / 4
    assert SearchAgent._value(w, v, end, end_v, True) == pytest.approx(p * v_end + (1 - p) * v_rest)
    assert SearchAgent._value(w, v, end, end_v, False) == pytest.approx(float(np.dot(w[:K], v) / w[:K].sum()))
    assert SearchAgent._value(w, v, np.zeros(M, bool), end_v, True) == pytest.approx(float(np.dot(w[:K], v) / 5))


def test_screening_prices_a_certain_deal_in_at_its_exact_value():
    """With the true hands (the cheat diagnostic), a discard that an opponent can Ron deals in in every world:
    screening finds it in all M worlds, and its value is the leaf of that Ron (R21: the hand ends at once)."""
    from meld8_env.codes import Result
    from meld8_env.engine.records import observe_records
    from meld8_env.placement import shipped_table

    recs = bot_states(6, 90, every=1)
    table = shipped_table(RULES)
    agent = load_agent("search:worlds=4,stages=1,cands=20,screen=12,cheat=1", RULES, seed=1)  # every discard
    found = 0
    for i in range(len(recs)):
        r = recs[i : i + 1]
        if found >= 3 or int(r[0]["phase"]) not in (int(Phase.DRAW), int(Phase.CALL_DISCARD)):
            continue
        seat = int(r[0]["acting"])
        for c in (b for b in range(52) if int(r[0]["mask"]) >> b & 1):
            t = r.copy()
            step_records(RULES, t, np.array([c]))
            if int(t[0]["phase"]) != int(Phase.CLAIM) or int(t[0]["mask"]) >> 53 & 1 == 0:
                continue  # the first seat asked cannot Ron this discard
            step_records(RULES, t, np.array([53]))  # the bots always Ron (greedy, defensive)
            if int(t[0]["result"]) == int(Result.NONE):
                continue
            obs, masks = observe_records(RULES, r)
            agent.act_batch(obs, masks, infosets=[sb.infoset_of(r[0], seat, RULES)], records=r)
            value, weight = agent.last_values[0][c]
            rnd, chiicha = t["round"].astype(np.int64), t["chiicha"].astype(np.int64)
            want = -table.expected(t["scores"][:, :3].astype(np.int64), rnd, chiicha)[0, seat]
            assert value == pytest.approx(float(want)) and weight == 4.0
            found += 1
            break
    assert found >= 3


def test_stratify_matches_each_opponents_ready_share_to_its_prior():
    """``search_backend.stratify``: after re-weighting, each opponent that is ready in some worlds and not in
    others is ready in the share of the weight that ``belief.ready_prior`` gives it (to the fitting's
    tolerance), weights stay positive with mean 1, and an opponent with one status in every world is left as
    it was; the status read from each world is its waits (R33) outside its own discards."""
    from meld8_env import belief
    from meld8_env.hands import waits_batch

    recs = bot_states(3, 90, every=4)
    recs = recs[np.isin(recs["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])][:40]
    rng = np.random.default_rng(8)
    checked = 0
    for r in recs:
        info = sb.infoset_of(r, int(r["acting"]), RULES)
        worlds, w0 = sb.sample_worlds(info, 32, rng, RULES)
        w = sb.stratify(info, worlds, w0, sweeps=30)
        assert (w > 0).all() and abs(w.mean() - 1) < 1e-9
        for j in info.opponents:
            ready = sb.ready_in_worlds(info, worlds, j)
            assert ready.tolist() == [
                bool(x) and not (x & info.uncalled_discards(j))
                for x in waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy()).tolist()
            ]
            if 0 < ready.sum() < len(ready):
                assert w[ready].sum() / w.sum() == pytest.approx(belief.ready_prior(info, j), abs=0.02)
                checked += 1
    assert checked >= 10


@pytest.mark.parametrize(
    "spec",
    [
        "search:worlds=8,cands=3,stages=2,strat=1",
        "search:worlds=8,width=1",
        "search:worlds=8,cands=3,belief=learned",
        "search:worlds=8,me=oracle",
        "search:worlds=6,me=distilled,extend=0",
        "search:worlds=6,prior=distilled",
        "search:worlds=6,safe=model",
        "search:worlds=8,ron=model",
        "search:worlds=8,lite=1",
        "search:worlds=12,stages=3,split=double",
        "search:worlds=8,extend=16,extend_z=30",
        "search:worlds=12,stages=3,final=pair",
        "search:worlds=8,menu=defensive",
        f"search:worlds=6,prior=ppo:{shipped_model('distilled')},keep=prior",
    ],
)
def test_stratified_and_learned_searches_are_deterministic_and_leak_free(spec):
    """``strat=1`` (re-weighted worlds), ``belief=learned`` (the wait model's worlds), ``me=oracle`` (a
    continuation that reads the hands of each sampled world), ``prior=distilled`` (the network ranks the
    candidate discards), ``me=distilled`` (the network as the seat's own continuation, through the rollout's
    external seats), ``safe=model`` (the safest candidate by the wait model's risk), ``ron=model`` (the
    chance of a Ron on each discard from the wait model, the rest from the worlds) and ``lite=1`` (the rollouts'
    bots break far ties by pool size), ``split=double`` (stages whose worlds double), ``extend`` (more worlds
    for the bot's choice and its challenger where the verdict is close): decisions stay a
    pure function of the seed and the information set (hidden cards and seed permuted = the same choices and
    values)."""
    rng = np.random.default_rng(6)
    recs = bot_states(2, 72, every=5)[:16]
    a1, v1 = decide(load_agent(spec, RULES, seed=4), recs)
    twins, kept = _hidden_twins(recs, rng)
    assert len(kept) >= 8
    a2, v2 = decide(load_agent(spec, RULES, seed=4), sb.cat_records(twins))
    assert a2.tolist() == a1[kept].tolist() and v2 == [v1[i] for i in kept]
    # and the option is not ignored: without it, some decision's candidate values differ
    tested = ("strat=", "width=", "belief=", "me=", "prior=", "keep=", "safe=", "ron=", "lite=", "split=", "extend")
    tested += ("menu=",)
    base = ",".join(p for p in spec.split(",") if not p.startswith((*tested, "final=")))
    if "ron=" in spec or "extend" in spec:  # the extension is off with ron=model, and is the option under test
        base += ",extend=0"
    _, v0 = decide(load_agent(base, RULES, seed=4), recs)
    assert v0 != v1, f"{spec} searched exactly like {base}"
    for bad in ("strat=2", "lite=7", "lite=-1", "width=2"):
        with pytest.raises(AgentLoadError, match=f"{bad}: must be 0 or 1"):
            load_agent(f"search:{bad}", RULES)
    with pytest.raises(AgentLoadError, match="must be one of worlds, model"):
        load_agent("search:ron=psychic", RULES)
    with pytest.raises(AgentLoadError, match="ron_cost=400: must be 0..300"):
        load_agent("search:ron=model,ron_cost=400", RULES)
    masks = np.array([[int(r["mask"]) >> b & 1 for b in range(64)] for r in recs], bool)
    assert masks[np.arange(len(recs)), a1].all()


@pytest.mark.parametrize("cheat", [2, 3])
def test_status_cheat_worlds_carry_the_true_ready_statuses(cheat):
    """``cheat=2`` / ``cheat=3`` (CHEATING diagnostics): the worlds are honest samples, kept where every
    opponent's ready status (3: its level, ready / within two cards of winning / further) equals the true
    one, so nearly all K worlds carry the true statuses while the hands still differ from the true ones."""
    status = sb.ready_in_worlds if cheat == 2 else sb.level_in_worlds
    recs = bot_states(3, 91, every=4)
    recs = recs[np.isin(recs["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])][:12]
    agent = load_agent(f"search:cheat={cheat},worlds=16", RULES, seed=2)
    assert agent.name == "search-CHEAT"
    match = same_hands = total = 0
    levels = set()
    for r in recs:
        info = sb.infoset_of(r, int(r["acting"]), RULES)
        worlds, w = agent._worlds(info, r, np.random.default_rng(1), 16)
        assert len(worlds) == 16 and (w == 1).all()
        ok = np.ones(16, bool)
        for j in info.opponents:
            truth = status(info, r.reshape(1), j)[0]
            levels.add(int(truth))
            ok &= status(info, worlds, j) == truth
            same_hands += int((worlds["hands"][:, j] == r["hands"][j]).sum())
        match += int(ok.sum())
        total += 16
    assert match >= 0.9 * total and len(levels) >= 2
    assert same_hands < 0.1 * total


def test_blurred_cheat_worlds_differ_from_the_truth_by_exactly_noise_cards_per_opponent():
    """``cheat=4,noise=m`` (CHEATING diagnostic): each world is the true record with m concealed cards of every
    opponent swapped for undrawn wall cards, so each opponent's hand differs from the truth in exactly 2m cards
    (m out, m in; fewer only where the hand or the undrawn wall holds fewer than m), the seat's own hand and every
    public card stay, the records pass the conservation check, and the same stream gives the same worlds."""
    from meld8_env.engine.records import check_conservation

    recs = bot_states(3, 93, every=3)[:40]
    for m in (1, 3):
        agent = load_agent(f"search:cheat=4,noise={m},worlds=8", RULES, seed=3)
        again = load_agent(f"search:cheat=4,noise={m},worlds=8", RULES, seed=3)
        assert agent.name == "search-CHEAT"
        for r in recs:
            info = sb.infoset_of(r, int(r["acting"]), RULES)
            worlds, w = agent._worlds(info, r, np.random.default_rng(5), 8)
            check_conservation(worlds, RULES)
            assert (w == 1).all() and (worlds["hands"][:, info.seat] == r["hands"][info.seat]).all()
            assert (worlds["melds"] == r["melds"]).all() and (worlds["discards"] == r["discards"]).all()
            wall = int(r["wall_len"]) - int(r["wall_pos"])
            for j in info.opponents:
                held = bin(int(r["hands"][j])).count("1")
                diff = [bin(int(h) ^ int(r["hands"][j])).count("1") for h in worlds["hands"][:, j]]
                assert diff == [2 * min(m, held, wall)] * 8
            same, _ = again._worlds(info, r, np.random.default_rng(5), 8)
            assert all((same[f] == worlds[f]).all() for f in STATE_DTYPE.names)
    refused = {
        "noise=2": "noise blurs the true hands of cheat=4: use it with cheat=4",
        "cheat=1,noise=2": "use it with cheat=4",
        "cheat=4,noise=14": "noise=14: must be 0..13",
        "cheat=4,width=1": r"cheat=1\|4 samples none",
        "cheat=5": "cheat=5: must be 0, 1, 2, 3 or 4",
    }
    for options, message in refused.items():
        with pytest.raises(AgentLoadError, match=message):
            load_agent(f"search:{options}", RULES)


def test_ron_truth_risk_is_the_true_ron_offer_of_each_discard():
    """``ron=truth`` (CHEATING diagnostic): the risk of each discard candidate is 1 exactly where the true record
    offers another seat Ron on it (the engine's own claim window) and 0 elsewhere; the agent is named as cheating,
    asks for the true records and refuses to decide without them."""
    from agents.oracle import ron_discards
    from agents.wary import RON_SCALE, deal_in_risk
    from meld8_env.engine.records import observe_records

    recs = bot_states(4, 95, every=2)
    recs = recs[np.isin(recs["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])]
    unsafe = ron_discards(RULES, recs)
    agent = load_agent("search:ron=truth,worlds=8", RULES, seed=1)
    assert agent.name == "search-CHEAT" and agent.wants_records
    hits = 0
    for r, u in zip(recs, unsafe.tolist(), strict=True):
        cards = [c for c in range(52) if int(r["mask"]) >> c & 1]
        risk = agent._risks(sb.infoset_of(r, int(r["acting"]), RULES), cards, r)
        assert risk == {c: float(u >> c & 1) for c in cards}
        hits += int(any(risk.values()))
    assert hits >= 3  # states with a Ron-able discard were checked, not only safe ones
    obs, masks = observe_records(RULES, recs[:12])
    infos = [sb.infoset_of(r, int(r["acting"]), RULES) for r in recs[:12]]
    assert len(agent.act_batch(obs, masks, infosets=infos, records=recs[:12])) == 12
    searched = [k for k in range(12) if agent.last_risks[k]]
    assert len(searched) >= 6  # each searched decision records the risk of its discard candidates
    for k in searched:
        assert agent.last_risks[k] == agent._risks(infos[k], list(agent.last_risks[k]), recs[k])
    with pytest.raises(ValueError, match=r"ron=truth\|status need the true records"):
        agent.act_batch(obs, masks, infosets=infos)
    # ron_signal: the calibrated model's risk moved by a noisy signal of the truth, d' = ron_signal / 10; a strong
    # one separates the Ron-able discards from the rest, a weak one stays near the model, and both repeat exactly
    strong = load_agent("search:ron=truth,ron_signal=100,worlds=8", RULES, seed=1)
    weak = load_agent("search:ron=truth,ron_signal=1,worlds=8", RULES, seed=1)
    far = near = 0
    for r, u in zip(recs, unsafe.tolist(), strict=True):
        info = sb.infoset_of(r, int(r["acting"]), RULES)
        cards = [c for c in range(52) if int(r["mask"]) >> c & 1]
        hi, lo = strong._risks(info, cards, r), weak._risks(info, cards, r)
        assert hi == strong._risks(info, cards, r)
        prior = deal_in_risk(info, np.array(cards, np.int64), RON_SCALE)
        for k, c in enumerate(cards):
            far += (hi[c] > 0.5) == bool(u >> c & 1)
            near += abs(lo[c] - prior[k]) < 0.25
    n_cards = sum(bin(int(r["mask"]) & ((1 << 52) - 1)).count("1") for r in recs)
    assert far >= 0.99 * n_cards and near >= 0.9 * n_cards
    # the signal has its own stream: the worlds, rollout seeds and policies are ron=model's, only the risk differs
    model = load_agent("search:ron=model,worlds=8", RULES, seed=1)
    for r, info in zip(recs[:12], infos, strict=True):
        a = strong._prepare(info, r, strong._rng(info), 8)
        b = model._prepare(info, r, model._rng(info), 8)
        assert all((a[0][f] == b[0][f]).all() for f in STATE_DTYPE.names)
        assert all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:], strict=True))
    # ron=status: the model's risk with the true ready statuses for the prior: 0 wherever no opponent is ready
    status = load_agent("search:ron=status,worlds=8", RULES, seed=1)
    assert status.name == "search-CHEAT" and status.wants_records
    for r, info in zip(recs[:12], infos, strict=True):
        cards = [c for c in range(52) if int(r["mask"]) >> c & 1]
        risk = status._risks(info, cards, r)
        ready = {j: float(sb.ready_in_worlds(info, r.reshape(1), j)[0]) for j in info.opponents}
        expect = deal_in_risk(info, np.array(cards, np.int64), RON_SCALE, ready=ready)
        assert np.allclose([risk[c] for c in cards], expect)
        if not any(ready.values()):
            assert not any(risk.values())
    for options, message in {
        "ron_signal=20": "use it with ron=truth",
        "ron=model,ron_signal=20": "use it with ron=truth",
        "ron=truth,ron_signal=101": "must be 0..100",
    }.items():
        with pytest.raises(AgentLoadError, match=message):
            load_agent(f"search:{options}", RULES)


def test_decisions_do_not_depend_on_the_rollout_threads(monkeypatch):
    """A batch of decisions and a single decision split their rollouts over threads (a stage of at least
    ``ROLLOUT_SPLIT_MIN`` rollouts) and decide and value exactly as ``threads=1`` does; a stage below it stays on
    one thread."""
    from agents.search import ROLLOUT_SPLIT_MIN

    used: list[tuple[int, int]] = []
    real = sb.rollout_hand

    def counting(rules, records, *args, threads: int = 2, **kw):  # the real rollout; size and threads noted
        used.append((len(records), threads))
        return real(rules, records, *args, threads=threads, **kw)

    monkeypatch.setattr(sb, "rollout_hand", counting)
    recs = bot_states(2, 73, every=4)[:12]
    a1, v1 = decide(load_agent("search:worlds=16,threads=1", RULES, seed=9), recs)
    used.clear()
    a2, v2 = decide(load_agent("search:worlds=16,threads=2", RULES, seed=9), recs)
    assert any(t == 2 for _, t in used)  # the batch did split
    assert a1.tolist() == a2.tolist() and v1 == v2
    one1, w1 = decide(load_agent("search:threads=1", RULES, seed=9), recs[:1])
    used.clear()
    one2, w2 = decide(load_agent("search:threads=2", RULES, seed=9), recs[:1])
    assert used and all(t == (2 if n >= ROLLOUT_SPLIT_MIN else 1) for n, t in used)
    assert any(t == 2 for _, t in used)  # one decision's few dozen rollouts split too
    assert one1.tolist() == one2.tolist() and w1 == w2


def test_rollout_plays_each_record_once_whatever_the_threads():
    """``meld8_env.rollout``'s C threads take the records two at a time from one shared counter: every record is
    played exactly once (the same steps, point changes and end states as on one thread) for batch sizes around
    the thread and block counts, and a thread count outside 1..8 is refused in one line, by the Python entry and
    by the C one (nothing moved)."""
    from meld8_env import rollout as ro
    from meld8_env.engine.bots import rollout_raw
    from meld8_env.engine.records import packed

    recs = bot_states(2, 75, every=3)
    pol = np.array([1, 2, 1], np.int8)
    for n in (1, 2, 3, 4, 5, 7, 8, 9, 33):
        one = recs[:n].copy()
        base = ro.rollout(RULES, one, pol, np.arange(n, dtype=np.uint64), threads=1)
        for threads in (2, 3, 8):
            many = recs[:n].copy()
            got = ro.rollout(RULES, many, pol, np.arange(n, dtype=np.uint64), threads=threads)
            assert np.array_equal(got.steps, base.steps) and np.array_equal(got.deltas, base.deltas), (n, threads)
            # field by field: the struct's trailing padding is whatever the compiler's wide stores leave there
            bad = [f for f in STATE_DTYPE.names if not np.array_equal(many[f], one[f])]
            assert not bad, (n, threads, bad)
    for bad in (0, 9, True, 2.0):
        with pytest.raises(ValueError, match="threads must be an integer 1..8"):
            ro.rollout(RULES, recs[:4].copy(), pol, np.arange(4, dtype=np.uint64), threads=bad)
    n, P = 4, RULES.num_players
    kept = recs[:n].copy()
    for bad in (0, 9, -1):
        with pytest.raises(ValueError, match=r"threads: 1\.\.8, got"):
            rollout_raw(kept, packed(RULES), np.tile(pol, (n, 1)), np.zeros(n, np.uint64), 0, 100,
                        np.zeros(n, np.int32), np.zeros((n, P), np.int32), bad)  # fmt: skip
    assert all(np.array_equal(kept[f], recs[:n][f]) for f in STATE_DTYPE.names)


def test_ron_model_value_mixes_the_model_risk_with_the_worlds():
    """``ron=model`` (agents.search._value_with_risk): r * V_ron + (1 - r) * V_rest, V_rest over the rollout
    worlds without a Ron on the discard, V_ron over this candidate's Ron worlds, else every candidate's, else
    V_rest - cost."""
    from agents.search import _value_with_risk

    w = np.ones(6)
    v = np.array([1.0, 2.0, 3.0, np.nan])  # K = 4 rollout worlds of 6; the last not rolled out
    hit = np.array([True, False, False, False, True, False])  # worlds 0 and 4 offer a Ron on discard 7
    end = np.array([-5.0, 0, 0, 0, -7.0, 0])
    rons = {7: hit, 9: np.zeros(6, bool)}
    end_vals = {7: end, 9: np.zeros(6)}
    # V_rest = mean(2, 3) = 2.5 (world 0 had the Ron), V_ron = mean(-5, -7) = -6
    assert _value_with_risk(w, v, rons, end_vals, 7, 0.2, 0.3) == pytest.approx(0.2 * -6 + 0.8 * 2.5)
    # discard 9 saw no Ron: its V_ron is the decision's pooled one (-6), V_rest over all its rollout worlds
    assert _value_with_risk(w, v, rons, end_vals, 9, 0.5, 0.3) == pytest.approx(0.5 * -6 + 0.5 * 2.0)
    # no Ron in any world: V_ron = V_rest - cost
    none = {7: np.zeros(6, bool), 9: np.zeros(6, bool)}
    assert _value_with_risk(w, v, none, end_vals, 9, 0.5, 0.3) == pytest.approx(2.0 - 0.5 * 0.3)
    assert _value_with_risk(w, v, none, end_vals, 9, 0.0, 0.3) == pytest.approx(2.0)  # no risk: the plain mean


def test_width_weights_favour_worlds_whose_ready_hands_wait_wider():
    """``width=1`` (``search_backend.width_weights``): a world's weight is multiplied, per opponent, by
    ``WIDTH_RATIO`` of the number of cards its hand waits on (1 for a hand that waits on none), then renormalised
    to sum to the number of worlds: among worlds alike in everything else, one whose ready opponent waits on
    five cards outweighs one whose opponent waits on three by 1.87 / 0.66."""
    from meld8_env.hands import waits_batch

    recs = bot_states(3, 91, every=4)
    recs = recs[np.isin(recs["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])][:8]
    seen = set()
    for r in recs:
        info = sb.infoset_of(r, int(r["acting"]), RULES)
        worlds, w0 = sb.sample_worlds(info, 32, np.random.default_rng(3), RULES)
        w = sb.width_weights(info, worlds, w0)
        assert w.shape == (32,) and (w > 0).all() and w.sum() == pytest.approx(32)
        factor = np.ones(32)
        for j in info.opponents:
            n = np.bitwise_count(waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy()))
            factor *= sb.WIDTH_RATIO[np.minimum(n, 9)]
            seen |= set(n.tolist())
        np.testing.assert_allclose(w / w[0], factor / factor[0])
    assert {0, 3}.issubset(seen) and max(seen) >= 5
    assert sb.WIDTH_RATIO[5] / sb.WIDTH_RATIO[3] == pytest.approx(1.87 / 0.66)


def test_ron_scale_scales_each_opponents_model_risk_before_combining():
    """``ron_scale`` (percent): each opponent's ``P(ready) * q_j(c)`` is scaled before the opponents are combined,
    so a scale s < 1 gives a risk between s times and once the unscaled one (the chance that two opponents both
    wait on c shrinks by s squared); a search with it values the discards otherwise than at 100, and the option
    is range-checked."""
    from agents.wary import RON_SCALE, deal_in_risk
    from meld8_env.belief import ready_prior
    from meld8_env.wait_model import wait_probs

    recs = bot_states(3, 91, every=4)
    recs = recs[np.isin(recs["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])][:6]
    both = 0
    for r in recs:
        info = sb.infoset_of(r, int(r["acting"]), RULES)
        cards = np.array([c for c in range(52) if info.legal >> c & 1], np.int64)
        full, half = deal_in_risk(info, cards), deal_in_risk(info, cards, RON_SCALE)
        assert (full > 0).any() and (half < full)[full > 0].all() and (half >= RON_SCALE * full - 1e-12).all()
        # scaled per opponent, then combined: where two opponents both carry risk, strictly above the scaled
        # combination (scaling the combined risk instead would give exactly RON_SCALE * full)
        two = np.ones(len(cards), bool)
        for j in info.opponents:
            two &= ready_prior(info, j) * wait_probs(info, j)[cards] > 1e-6
        assert (half[two] > RON_SCALE * full[two] + 1e-9).all()
        both += int(two.sum())
        # a risk above 1 after scaling is capped, never a negative chance of safety
        assert ((deal_in_risk(info, cards, 50.0) >= 0) & (deal_in_risk(info, cards, 50.0) <= 1)).all()
    assert both > 0
    _, v100 = decide(load_agent("search:worlds=8,ron=model", RULES, seed=4), recs)
    _, v45 = decide(load_agent("search:worlds=8,ron=model,ron_scale=45", RULES, seed=4), recs)
    assert v45 != v100
    refused = {
        "ron=model,ron_scale=0": "ron_scale=0: must be 1..200",
        "ron=model,ron_scale=201": "ron_scale=201: must be 1..200",
        "ron_scale=45": "ron_scale scales the wait model's risk: use it with ron=model",
        "width=1,cheat=1": "cheat=1\\|4 samples none",
    }
    for options, message in refused.items():
        with pytest.raises(AgentLoadError, match=message):
            load_agent(f"search:{options}", RULES)


def test_stage_chunks_split_the_worlds_in_order_equal_or_doubling():
    """``split=equal`` is numpy's even split; ``double`` gives each stage about twice the worlds of the one before
    (9 / 18 / 37 of 64), every stage at least one world, and together the worlds 0..K-1 in order."""
    assert [len(c) for c in stage_chunks(48, 2)] == [24, 24]
    assert [len(c) for c in stage_chunks(64, 3, "double")] == [9, 18, 37]
    assert [len(c) for c in stage_chunks(64, 2, "double")] == [21, 43]
    for K in range(1, 80):
        for S in range(1, min(K, 6) + 1):
            for split in ("equal", "double"):
                chunks = stage_chunks(K, S, split)
                assert len(chunks) == S and all(len(c) >= 1 for c in chunks), (K, S, split)
                assert np.concatenate(chunks).tolist() == list(range(K)), (K, S, split)
    for K, S in ((1100, 1050), (4096, 4096), (4096, 12)):  # exact integers: 2.0**S overflows a float at S >= 1024
        chunks = stage_chunks(K, S, "double")
        assert len(chunks) == S and min(map(len, chunks)) >= 1 and np.concatenate(chunks).tolist() == list(range(K))
    with pytest.raises(AgentLoadError, match="must be one of equal, double"):
        load_agent("search:split=halves", RULES)


def test_extend_adds_worlds_only_to_the_pair_in_doubt_and_keeps_the_first_worlds():
    """``extend=N``: after the stages, the bot's choice and its challenger (``extend_set=alive``: every candidate
    still alive) get up to N more worlds (chunks of a stage's size, from the decision's second random stream)
    while the verdict is in doubt (``extend_z``/10 standard errors). Every other value is the plain search's,
    unchanged; an extended set saw more world weight than its first worlds'; a huge ``extend_z`` extends every
    set, a small one fewer."""
    recs = bot_states(2, 73, every=4)[:24]
    base_agent = load_agent("search:worlds=8,extend=0", RULES, seed=2)
    base_acts, base = decide(base_agent, recs)
    # the default extension is extend=336,extend_z=10, decision for decision and value for value
    spelled_acts, spelled = decide(load_agent("search:worlds=8,extend=336,extend_z=10", RULES, seed=2), recs)
    default_acts, default = decide(load_agent("search:worlds=8", RULES, seed=2), recs)
    assert np.array_equal(spelled_acts, default_acts) and spelled == default and default != base
    wide_agent = load_agent("search:worlds=8,extend=12,extend_z=100", RULES, seed=2)
    wide_acts, wide = decide(wide_agent, recs)
    _, some = decide(load_agent("search:worlds=8,extend=12,extend_z=10", RULES, seed=2), recs)
    from meld8_env.engine.records import observe_records

    obs, masks = observe_records(RULES, recs)
    bot = GreedyAgent(RULES).act_batch(obs, masks)  # the continuation bot's own choice (me=greedy)
    grown_wide = grown_some = 0
    for i, (b, x, y) in enumerate(zip(base, wide, some, strict=True)):
        assert set(b) == set(x) == set(y)
        for vals, count in ((x, "wide"), (y, "some")):
            grown = [a for a in b if vals[a][1] > b[a][1] + 1e-9]
            assert len(grown) in (0, 2)  # only the pair, both on the same new worlds
            for a in set(b) - set(grown):
                assert vals[a] == b[a]
            if grown:
                assert int(bot[i]) in grown  # the pair is the bot's choice and its challenger
            if grown and count == "wide":
                grown_wide += 1
                # the extended verdict decides: the action is one of the pair, and leaves the bot's choice
                # only for a higher value over every world the pair saw
                act = int(wide_acts[i])
                assert act in grown
                assert act == int(bot[i]) or x[act][0] > x[int(bot[i])][0]
            elif grown:
                grown_some += 1
    searched = sum(len(b) >= 2 for b in base)
    assert searched >= 10 and grown_wide == searched  # extend_z=100: every pair is in doubt
    assert 0 < grown_some < grown_wide
    # the rollouts counter sees the extension: at extend_z=100 every pair stays in doubt to the cap, so each
    # searched decision steps its two candidates in 12 more worlds (three chunks of worlds // stages = 4)
    assert wide_agent.rollouts - base_agent.rollouts == 2 * 12 * searched
    # extend_set=alive: every candidate still alive after the stages grows together, the halved ones do not
    _, every = decide(load_agent("search:worlds=8,extend=12,extend_z=100,extend_set=alive", RULES, seed=2), recs)
    for b, x in zip(base, every, strict=True):
        most = max((w for _, w in b.values()), default=0.0)
        top = {a for a in b if b[a][1] == most}
        first, second = (sorted((b[a][0] for a in top), reverse=True) + [0.0, 0.0])[:2]
        if len(top) >= 2 and first != second:  # the best two equal in every world (standard error 0): no doubt
            assert {a for a in b if x[a][1] > b[a][1] + 1e-9} == top
            assert all(x[a] == b[a] for a in b if b[a][1] < most)
    for bad, msg in (
        ("extend=-1", "extend=-1: must be 0..4096"),
        ("extend_z=0", "extend_z=0: must be 1..100"),
        ("extend=8,screen=64", "extend works with plain rollout worlds"),
        ("extend=8,ron=model", "extend works with plain rollout worlds"),
        ("extend_set=all", "must be one of pair, alive"),
    ):
        with pytest.raises(AgentLoadError, match=msg):
            load_agent(f"search:{bad}", RULES)


def test_final_pair_rolls_the_last_stage_out_for_the_bots_choice_and_its_best_challenger_only(monkeypatch):
    """``final=pair``: after the first stage only the bot's choice and the best other candidate go on, so the
    margin rule's own comparison gets the last stage's worlds; the other candidates keep their first-stage
    values, which equal the plain search's wherever it halved them away too. The rollouts counter counts exactly
    every candidate on the first chunk and two on the second. With one stage there is no halving: the option
    changes nothing."""
    recs = bot_states(2, 75, every=4)[:24]
    from agents.search import SearchAgent
    from meld8_env.engine.records import observe_records

    obs, masks = observe_records(RULES, recs)
    bot = GreedyAgent(RULES).act_batch(obs, masks)
    plain_agent = load_agent("search:worlds=8,extend=0", RULES, seed=5)
    plain_acts, plain = decide(plain_agent, recs)
    # the first stage's values of every candidate (the challenger's is overwritten by the last stage): a spy on _play
    first: list = []
    play = SearchAgent._play

    def spy(self, prep, alive, idx, vals, ends, end_vals, rons=None):
        play(self, prep, alive, idx, vals, ends, end_vals, rons)
        if vals is not None and not first:
            first.extend((p[1], {a: v.copy() for a, v in d.items()}) for p, d in zip(prep, vals, strict=True))

    monkeypatch.setattr(SearchAgent, "_play", spy)
    pair_agent = load_agent("search:worlds=8,final=pair,extend=0", RULES, seed=5)
    pair_acts, pair = decide(pair_agent, recs)
    monkeypatch.undo()
    searched = [i for i, q in enumerate(pair) if q]
    assert len(first) == len(searched)
    chunks = [len(c) for c in stage_chunks(8, 2)]
    wider = 0
    for i, (p, q) in enumerate(zip(plain, pair, strict=True)):
        assert set(p) == set(q)
        if not q:
            continue
        full = max(w for _, w in q.values())
        finalists = {a for a in q if q[a][1] == full}
        if len(q) >= 3:
            wider += 1
            assert len(finalists) == 2 and int(bot[i]) in finalists
            challenger = next(iter(finalists - {int(bot[i])}))
            # the best other candidate by its first-stage mean (prior order on ties), not merely some other one
            w, v = first[searched.index(i)]
            seen = {a: ~np.isnan(x) for a, x in v.items()}  # the first chunk's worlds (the rest not rolled out yet)
            assert all(k.sum() == chunks[0] for k in seen.values())
            mean = {
                a: float(np.dot(w[: len(x)][seen[a]], x[seen[a]]) / w[: len(x)][seen[a]].sum()) for a, x in v.items()
            }
            assert challenger == max((a for a in v if a != int(bot[i])), key=lambda a: mean[a])
            # the halved ones saw the first chunk only; where the plain search halved one away too, it is equal
            for a in set(q) - finalists:
                assert q[a][1] < full
                if p[a][1] < max(w for _, w in p.values()):
                    assert q[a] == p[a]
            assert int(pair_acts[i]) in finalists
            assert int(pair_acts[i]) == int(bot[i]) or q[challenger][0] > q[int(bot[i])][0]
        else:
            assert q == p and pair_acts[i] == plain_acts[i]  # two candidates or fewer: nothing to halve
    assert wider >= 8
    assert pair_agent.rollouts == sum(len(q) * chunks[0] + min(len(q), 2) * chunks[1] for q in pair)
    assert pair_agent.rollouts < plain_agent.rollouts
    with pytest.raises(AgentLoadError, match="final shapes the stages of a halving, and stages=1 has none"):
        load_agent("search:worlds=8,stages=1,final=pair,extend=0", RULES)  # it would change nothing
    with pytest.raises(AgentLoadError, match="must be one of all, pair"):
        load_agent("search:final=three", RULES)


def test_options_that_would_change_nothing_are_refused_in_one_line():
    """An option that has no effect in its combination is refused naming it, not ignored (review, session 42): the
    world-shaping options beside a CHEATING diagnostic that builds its worlds from the true records, the extension's
    knobs with extend=0, ron_cost without ron=model, a halving's knobs with one stage, more stages than worlds, and
    one world where the margin rule needs a standard error."""
    for spec, says in (
        ("cheat=2,belief=uniform", "belief shapes the sampled worlds, which cheat=2 builds from the true records"),
        ("cheat=1,strat=1", "strat shapes the sampled worlds"),
        ("cheat=3,width=1", "width shapes the sampled worlds"),
        ("extend=0,extend_z=20", "extend_z tunes the extension, which extend=0 turns off"),
        ("extend=0,extend_set=alive", "extend_set tunes the extension, which extend=0 turns off"),
        ("ron_cost=50", "ron_cost prices a deal-in under ron=model"),
        ("stages=1,split=double", "split shapes the stages of a halving, and stages=1 has none"),
        ("worlds=4,stages=5", "stages=5: each stage rolls out at least one world, so at most worlds=4"),
        ("worlds=1", "worlds=1: the margin rule needs a standard error over at least 2 worlds"),
    ):
        with pytest.raises(AgentLoadError, match=says) as err:
            load_agent(f"search:{spec}", RULES)
        assert "\n" not in str(err.value)
    # the same options where they act are accepted
    for spec in ("cheat=2", "belief=uniform,strat=1", "extend_z=20", "ron=model,ron_cost=50", "stages=3,split=double",
                 "worlds=1,margin=0,stages=1"):  # fmt: skip
        load_agent(f"search:{spec}", RULES)


def test_a_lone_candidate_is_searched_against_the_bots_own_choice():
    """The continuation bot's own choice is always a candidate (docs/search.md step 2): with ``cands=1`` the one
    discard kept (the ranking breaks greedy's ties by danger, greedy by card id) can be another card than
    greedy's, and the search then compares the two instead of playing the lone one unsearched (review, session
    42); where they are the same card nothing is searched."""
    from meld8_env.engine.records import observe_records

    recs = bot_states(2, 77, every=2)[:80]
    obs, masks = observe_records(RULES, recs)
    bot = GreedyAgent(RULES).act_batch(obs, masks)
    acts, values = decide(load_agent("search:worlds=4,cands=1,extend=0", RULES, seed=2), recs)
    differs = 0
    for i in range(len(recs)):
        if masks[i].sum() == 1 or masks[i, PASS]:
            continue
        if values[i]:
            assert int(bot[i]) in values[i] and int(acts[i]) in values[i]
            differs += len(values[i]) >= 2
        else:  # not searched: the lone candidate was the bot's own choice (or a win taken at once)
            assert int(acts[i]) == int(bot[i]) or masks[i, TSUMO] or masks[i, RON]
    assert differs >= 1


def test_the_rollouts_counter_is_the_candidate_world_pairs_stepped():
    """``SearchAgent.rollouts`` counts (candidate, world) pairs stepped (bench/search_speed.py reports it per
    decision: the budget, which no machine load moves). With one stage every candidate sees every world."""
    recs = bot_states(2, 74, every=4)[:12]
    agent = load_agent("search:worlds=6,stages=1,extend=0", RULES, seed=3)
    _, values = decide(agent, recs)
    assert agent.rollouts == 6 * sum(len(v) for v in values) > 0
    halved = load_agent("search:worlds=6,stages=2,extend=0", RULES, seed=3)
    decide(halved, recs)
    assert 0 < halved.rollouts <= agent.rollouts


def test_keep_prior_keeps_the_networks_choice_unless_the_rollouts_clearly_disagree():
    """``keep=prior`` (expert iteration's teacher): the margin rule protects the prior network's own choice, not
    the continuation bot's. With a huge margin the search plays exactly the network wherever it searched; the
    network's choice is always a candidate. A ``ppo:PATH.zip`` prior loads like a shipped one; keep=prior
    without a network, or a missing file, is refused in one line naming the option."""
    from meld8_env.engine.records import observe_records

    recs = bot_states(2, 75, every=4)[:20]
    obs, masks = observe_records(RULES, recs)
    net = load_agent("distilled", RULES).act_batch(obs, masks)
    greedy = GreedyAgent(RULES).act_batch(obs, masks)
    acts, values = decide(load_agent("search:worlds=8,prior=distilled,keep=prior,margin=100", RULES, seed=1), recs)
    searched = [i for i, v in enumerate(values) if len(v) >= 2]
    assert len(searched) >= 8 and any(net[i] != greedy[i] for i in searched)  # the two defaults differ somewhere
    for i in searched:
        assert int(net[i]) in values[i] and acts[i] == net[i]
    path = f"ppo:{shipped_model('distilled')}"
    same = decide(load_agent(f"search:worlds=8,prior={path},keep=prior,margin=100", RULES, seed=1), recs)
    assert same[0].tolist() == acts.tolist() and same[1] == values
    for bad, says in (
        ("keep=prior", "keep=prior keeps a network's choice"),
        ("keep=both", "must be one of bot, prior"),
        ("prior=ppo:no/such.zip", "search option prior=ppo:no/such.zip: checkpoint not found"),
    ):
        with pytest.raises(AgentLoadError, match=says):
            load_agent(f"search:{bad}", RULES)


def test_one_forward_pass_gives_the_networks_ranking_and_its_move():
    """``PolicyAgent.decide`` (what a search with a network ``prior`` asks once per decision, for the ranking and,
    with ``keep=prior``, the move): its actions are ``act_batch``'s and its probabilities ``probabilities``'s on
    states of every phase (draw, discard after a call, claim), the probabilities a distribution over the legal
    actions. A sampling policy has no one move to give: refused in one line."""
    from agents.policy import PolicyAgent
    from meld8_env.engine.records import observe_records

    recs = bot_states(3, 76, every=2)[:60]
    obs, masks = observe_records(RULES, recs)
    masks = masks.astype(bool)
    net = load_agent("distilled", RULES)
    acts, probs = net.decide(obs, masks)
    assert acts.dtype == np.int64 and probs.shape == masks.shape
    assert acts.tolist() == net.act_batch(obs, masks).tolist()
    assert np.array_equal(probs, net.probabilities(obs, masks))
    assert masks[np.arange(len(acts)), acts].all() and not probs[~masks].any()
    assert np.allclose(probs.sum(axis=1), 1, atol=1e-5)
    assert masks[:, PASS].any() and (masks.sum(axis=1) > 1).all()  # claims among them, and every state a choice
    sampling = PolicyAgent(shipped_model("distilled"), RULES, deterministic=False)
    with pytest.raises(ValueError, match="deterministic=True"):
        sampling.decide(obs, masks)


def test_the_searchs_networks_run_on_one_torch_thread_and_the_callers_setting_comes_back():
    """The search asks its networks (``prior``, ``keep=prior``, ``me``) about a few rows at a time between rollouts
    that keep every core busy: they run on one torch thread (``agents.torch_threads``), torch's setting is the
    caller's again afterwards, and the decisions are those of a caller that runs the same search on two torch
    threads (the network's numbers do not depend on the thread count)."""
    import torch

    from meld8_env.engine.records import observe_records

    recs = bot_states(2, 75, every=4)[:10]
    specs = ("search:worlds=4,prior=distilled,keep=prior,extend=0", "search:worlds=4,me=distilled,extend=0")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for spec in specs:
            agent, seen = load_agent(spec, RULES, seed=1), []
            for net in (agent._net, agent._me_net):
                for name in ("act_batch", "probabilities"):
                    real = getattr(net, name, None)  # a spy: the network still decides, the test notes the threads

                    def spy(*args, real=real, seen=seen):
                        seen.append(torch.get_num_threads())
                        return real(*args)

                    if real is not None:
                        setattr(net, name, spy)
            acts, values = decide(agent, recs)
            assert torch.get_num_threads() == 2
            assert seen and set(seen) == {1}, spec
            twin = load_agent(spec, RULES, seed=1)  # the same search with torch left at two threads throughout
            obs, masks = observe_records(RULES, recs)
            infos = [sb.infoset_of(r, int(r["acting"]), RULES) for r in recs]
            assert twin._act_batch(obs, masks, infos, None).tolist() == acts.tolist()
            assert twin.last_values == values
    finally:
        torch.set_num_threads(before)


def test_network_continuation_keeps_the_networks_choice_and_decides_in_the_rollouts():
    """``me=distilled``: the seat's own continuation in the rollouts is the shipped network (the rollout pauses at
    the seat's decisions and the network decides them, ``meld8_env.rollout``'s external seats), and its own choice
    is the one the margin rule keeps: with a margin no gain can pass, the search plays the network's moves.
    ``me=ppo:PATH.zip`` loads a checkpoint file the same way."""
    from meld8_env.engine.records import observe_records

    recs = bot_states(2, 74, every=4)[:16]
    agent = load_agent("search:worlds=6,me=distilled,margin=100,extend=0", RULES, seed=3)
    rows = []
    real = agent._me_net.act_batch  # a spy: the network still decides, the test counts what it was asked

    def spy(obs, masks):
        rows.append(len(obs))
        return real(obs, masks)

    agent._me_net.act_batch = spy
    acts, vals = decide(agent, recs)
    obs, masks = observe_records(RULES, recs)
    want = load_agent("distilled", RULES).act_batch(obs, masks)
    searched = [i for i, v in enumerate(vals) if len(v) >= 2]
    assert len(searched) >= 8
    for i in searched:
        assert int(want[i]) in vals[i] and int(acts[i]) == int(want[i])
    # the root choice is asked once per decision; the rest are the rollouts' own decisions, many per world
    assert sum(rows) > 10 * len(recs)
    # a checkpoint path continues exactly as the shipped name of the same file (how a result recorded with an
    # earlier shipped network is replayed: me=ppo:agents/models/distilled_s7.zip)
    path = f"ppo:{shipped_model('distilled')}"
    same = decide(load_agent(f"search:worlds=6,me={path},margin=100,extend=0", RULES, seed=3), recs)
    assert same[0].tolist() == acts.tolist() and same[1] == vals
    with pytest.raises(AgentLoadError, match="must be one of greedy, defensive, oracle, ppo, distilled or ppo:PATH"):
        load_agent("search:me=alphago", RULES)
    with pytest.raises(AgentLoadError, match="search option me=ppo:no/such.zip: checkpoint not found"):
        load_agent("search:me=ppo:no/such.zip", RULES)


def test_menu_values_each_action_by_its_better_continuation_on_the_same_worlds():
    """``menu=defensive``: every candidate but Tsumo / Ron is also rolled out with the seat continuing as
    ``defensive`` on the same worlds (the rollout with several base policies: an action's value is its better
    continuation's). With one stage and no extension every action's value is exactly the larger of the plain
    search's (``me=greedy``) and the ``me=defensive`` search's on the same worlds, and with no margin the search
    plays an action of the best value. Bad combinations are refused in one line."""
    recs = bot_states(2, 77, every=4)[:20]
    opts = "worlds=6,stages=1,extend=0,margin=0"
    agent = load_agent(f"search:{opts},menu=defensive", RULES, seed=7)
    acts, menu = decide(agent, recs)
    _, plain = decide(load_agent(f"search:{opts}", RULES, seed=7), recs)
    _, defensive = decide(load_agent(f"search:{opts},me=defensive", RULES, seed=7), recs)
    compared = raised = 0
    for i, (m, p, d) in enumerate(zip(menu, plain, defensive, strict=True)):
        if len(m) < 2:
            continue
        assert set(p) <= set(m)
        for a in p:
            if a in d:  # both searches rolled a out (me=defensive adds defensive's own choice, not greedy's)
                assert m[a][0] == max(p[a][0], d[a][0])
                compared += 1
                raised += d[a][0] > p[a][0]
        assert m[int(acts[i])][0] == max(v for v, _ in m.values())
    assert compared >= 30 and raised >= 5  # the second continuation is better somewhere, so it is not ignored
    # the budget: each action but Tsumo / Ron twice, every world
    assert agent.rollouts == 6 * sum(2 * len(v) - sum(a in (52, 53) for a in v) for v in menu if len(v) >= 2)
    # final=pair: the last stage goes to the bot's action and one other action, each under both continuations
    from agents.search import SearchAgent
    from meld8_env.engine.records import observe_records

    stages: list = []
    play = SearchAgent._play

    def spy(self, prep, alive, idx, vals, ends, end_vals, rons=None):
        stages.append([list(a) for a in alive])
        play(self, prep, alive, idx, vals, ends, end_vals, rons)

    obs, masks = observe_records(RULES, recs)
    bot = GreedyAgent(RULES).act_batch(obs, masks).tolist()
    SearchAgent._play = spy
    try:
        pair_acts, _ = decide(load_agent("search:worlds=8,final=pair,extend=0,menu=defensive", RULES, seed=7), recs)
    finally:
        SearchAgent._play = play
    first, last = stages
    searched = [i for i, v in enumerate(menu) if len(v) >= 2]
    narrowed = 0
    for j, i in enumerate(searched):
        actions = {a % 64 for a in first[j]}
        if len(actions) > 2 and len(first[j]) > 2:
            narrowed += 1
            kept = {a % 64 for a in last[j]}
            assert bot[i] in kept and len(kept) == 2 and int(pair_acts[i]) in kept
            assert set(last[j]) == {a for a in first[j] if a % 64 in kept}  # both continuations of each
    assert narrowed >= 5
    for bad, says in (
        ("menu=greedy", "menu=greedy is a second bot continuation beside me=greedy: use menu=defensive with"),
        ("me=distilled,menu=defensive", "beside me=distilled: use menu=defensive with me=greedy, or menu=greedy"),
        ("menu=defensive,screen=64", "menu works with plain rollout worlds"),
        ("menu=oracle", "must be one of none, greedy, defensive"),
    ):
        with pytest.raises(AgentLoadError, match=says):
            load_agent(f"search:{bad}", RULES)


def test_menu_halving_extension_and_margin_compare_actions_not_continuations():
    """With ``menu`` the halving never leaves the bot's action alone (its two continuations ranking first), the
    extension grows both continuations of the bot's action and of one other action and nothing else, its
    ``extend_set=alive`` doubt is between the best two actions (``top_two_actions``), and a margin no gain
    clears keeps the bot's action."""
    from agents.search import MENU, SearchAgent, per_action_values, top_two_actions
    from meld8_env.engine.records import observe_records

    assert top_two_actions([5, 69, 7], {5: -1.0, 69: -1.01, 7: -1.2}) == (5, 7)
    assert top_two_actions([69, 5, 7], {5: -1.0, 69: -0.9, 7: -1.2}) == (69, 7)
    assert top_two_actions([5, 69], {5: -1.0, 69: -0.9}) == (69, None)
    assert top_two_actions([5, 7], {5: -1.0, 7: -1.0}) == (5, 7)  # no menu: the best two candidates
    # an action's reported value is that of its continuation the verdict read (the most world weight), not of one
    # halved away on fewer worlds; on equal weight the better one
    folded = per_action_values({14: (-2.09, 48.0), 78: (-2.04, 24.0), 7: (-2.2, 48.0)})
    assert folded == {14: (-2.09, 48.0), 7: (-2.2, 48.0)}
    assert per_action_values({14: (-2.09, 48.0), 78: (-2.04, 48.0)}) == {14: (-2.04, 48.0)}
    recs = bot_states(2, 77, every=4)[:24]
    obs, masks = observe_records(RULES, recs)
    bot = GreedyAgent(RULES).act_batch(obs, masks).tolist()
    calls: list = []
    play = SearchAgent._play

    def spy(self, prep, alive, idx, vals, ends, end_vals, rons=None):
        calls.append([list(a) for a in alive])
        play(self, prep, alive, idx, vals, ends, end_vals, rons)

    SearchAgent._play = spy
    try:
        acts, values = decide(load_agent("search:worlds=8,extend=12,extend_z=100,menu=defensive", RULES, seed=3), recs)
    finally:
        SearchAgent._play = play
    searched = [i for i, v in enumerate(values) if len(v) >= 2]
    first, second, extension = calls[0], calls[1], calls[2:]
    assert len(first) == len(second) == len(searched) and extension  # extend_z=100: every verdict stays in doubt
    for j, i in enumerate(searched):
        before = {a % MENU for a in first[j]}
        if len(before) >= 2:
            assert len({a % MENU for a in second[j]}) >= 2 and bot[i] in {a % MENU for a in second[j]}
    grown = extension[0]  # the first chunk of the extension: every searched decision with another action
    for cands in grown:
        actions = {a % MENU for a in cands}
        assert len(actions) == 2
        j = next(j for j in range(len(second)) if set(cands) <= set(second[j]))
        assert bot[searched[j]] in actions and set(cands) == {a for a in second[j] if a % MENU in actions}
    # a margin no gain clears: the bot's action everywhere, whichever continuation valued it
    kept, _ = decide(load_agent("search:worlds=8,margin=100,menu=defensive", RULES, seed=3), recs)
    assert [int(kept[i]) for i in searched] == [bot[i] for i in searched]
    assert any(int(acts[i]) != bot[i] for i in searched)  # without it the search leaves greedy somewhere


def test_menu_with_lite_rolls_both_continuations_out_as_lite_bots(monkeypatch):
    """``lite=1,menu=defensive``: every rollout seat, the second continuation included, is a lite bot."""
    from meld8_env.policies import POLICY

    seen: set = set()
    real = sb.rollout_hand

    def spy(rules, recs, pols, *args, **kwargs):
        seen.update(np.unique(pols).tolist())
        return real(rules, recs, pols, *args, **kwargs)

    monkeypatch.setattr(sb, "rollout_hand", spy)
    decide(load_agent("search:worlds=6,extend=0,lite=1,menu=defensive", RULES, seed=2), bot_states(2, 77, every=4)[:12])
    assert seen == {POLICY["greedy_lite"], POLICY["defensive_lite"]}
