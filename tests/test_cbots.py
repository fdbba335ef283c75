"""C bots (meld8_env/engine/_bots.c) against their Python twins (agents/), and the rollout call.

Decision states come from real games: 3-player default rules and 2-player rules, both in penalty mode,
where a small share of steps play an illegal action on purpose so dead seats and chombos occur. Every
phase is covered (draw, call discard, claim). For each state the C decision from the observation
(``act_obs``, what the agents run) and from the engine record (``policy_act``, what rollouts run) must
equal the Python twin's ``act_batch_python``, ties included. A mismatch prints the state in R4 notation.
CI runs a few thousand states; ``-m slow`` runs >= 100k.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.defensive import DefensiveAgent, DefensiveLiteAgent
from agents.greedy import GreedyAgent, GreedyLiteAgent
from agents.oracle import oracle_actions, ron_discards
from agents.random_agent import RandomAgent
from meld8_env.actions import legal_ids
from meld8_env.cards import mask_str
from meld8_env.codes import Phase
from meld8_env.engine.fast import STATE_DTYPE, FastBatch
from meld8_env.observation import decode
from meld8_env.policies import POLICY, act_obs, policy_act, random_rng_action
from meld8_env.rollout import rollout
from meld8_env.rules import RuleConfig

RULES = {
    "3p": RuleConfig(penalty_mode=True),
    "2p": RuleConfig.two_player(penalty_mode=True),
}
BOTS = ("greedy", "defensive")
#: every view-reading C policy and its Python twin (the _lite ones: the rollouts' cheaper tie-break)
TWINS = (
    ("greedy", GreedyAgent),
    ("defensive", DefensiveAgent),
    ("greedy_lite", GreedyLiteAgent),
    ("defensive_lite", DefensiveLiteAgent),
)


def collect_states(rules: RuleConfig, n_states: int, seed: int, batch: int = 64, illegal_rate: float = 0.01):
    """(records, obs, masks) of decision states from games the C bots play (seats mixed), with a few
    deliberately illegal actions in penalty mode. Stops once ``n_states`` decisions are collected."""
    rng = np.random.default_rng(seed)
    fb = FastBatch(batch, rules)
    fb.reset(rng.integers(0, 2**62, batch, dtype=np.uint64))
    seat_pol = rng.integers(0, 3, (batch, rules.num_players)).astype(np.int8)
    bot_rng = rng.integers(0, 2**63, batch, dtype=np.uint64)
    recs, obs_l, mask_l, total = [], [], [], 0
    while total < n_states:
        obs, masks = fb.observe()
        recs.append(fb.snapshot(slice(None)))
        obs_l.append(obs.copy())
        mask_l.append(masks.copy())
        total += batch
        acting = fb.state["acting"].astype(np.int64)
        codes = seat_pol[np.arange(batch), np.maximum(acting, 0)]
        actions = policy_act(rules, fb.snapshot(slice(None)), codes, bot_rng)
        wild = rng.random(batch) < illegal_rate
        actions = np.where(wild, rng.integers(0, 64, batch), actions)
        fb.step(np.where(fb.over, -1, actions))
        done = np.flatnonzero(fb.over)
        if done.size:
            fb.start(done, rng.integers(0, 2**62, done.size, dtype=np.uint64))
    raw = np.dtype((np.void, STATE_DTYPE.itemsize))  # concatenate would repack the structured dtype
    recs_a = np.concatenate([r.view(raw) for r in recs]).view(STATE_DTYPE)
    obs_a, masks_a = np.concatenate(obs_l), np.concatenate(mask_l)
    live = recs_a["phase"] != int(Phase.OVER)
    return np.ascontiguousarray(recs_a[live]), obs_a[live], masks_a[live]


def describe(rules: RuleConfig, obs: np.ndarray, mask: np.ndarray) -> str:
    """One decision state in R4 notation (what the deciding seat sees)."""
    d = decode(obs[None, :], rules)
    P = rules.num_players
    parts = [
        f"phase {Phase(int(d['phase'][0])).label}",
        f"hand {mask_str(int(d['hand'][0]))}",
        f"meld {mask_str(int(d['melds'][0, 0])) or '-'}",
        f"claim card {d['claim_card'][0]}",
        f"wall left {d['wall_left'][0]}",
        f"legal {legal_ids(int(np.packbits(mask[::-1].astype(np.uint8)).view('>u8')[0]))}",
    ]
    for k in range(P):
        parts.append(f"seat+{k}: discards {mask_str(int(d['discarded'][0, k])) or '-'} calls {d['calls_used'][0, k]}")
    return "; ".join(parts)


def check_twins(rules: RuleConfig, n_states: int, seed: int) -> int:
    recs, obs, masks = collect_states(rules, n_states, seed)
    phases = np.bincount(recs["phase"], minlength=3)[:3]
    assert (phases > 0).all(), f"every phase must be covered, got counts {phases}"
    for name, cls in TWINS:
        want = cls(rules).act_batch_python(obs, masks)
        got_obs = act_obs(rules, name, obs, masks)
        rng = np.zeros(len(recs), np.uint64)
        got_rec = policy_act(rules, recs, np.full(len(recs), POLICY[name], np.int8), rng)
        for got, path in ((got_obs, "observation"), (got_rec, "record")):
            bad = np.flatnonzero(got != want)
            if bad.size:
                lines = [f"{name} C ({path}) differs from Python on {bad.size} of {len(want)} states, first ones:"]
                lines += [f"  C={got[i]} python={want[i]}: {describe(rules, obs[i], masks[i])}" for i in bad[:5]]
                pytest.fail("\n".join(lines))
    check_oracle(rules, recs, obs, masks)
    agent = RandomAgent(rules, seed=seed)
    want = agent.act_batch_python(obs, masks)
    got = agent.act_batch_python(obs, masks, c_twin=True)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"random C differs at {bad[:5]}: {describe(rules, obs[bad[0]], masks[bad[0]])}"
    return len(recs)


def check_oracle(rules: RuleConfig, recs: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> None:
    """The CHEATING ``oracle`` (records only) against ``agents.oracle``; the states must include discards it
    changes (some discard would be Ron'd), or the check would only repeat greedy's."""
    want = oracle_actions(rules, recs)
    got = policy_act(rules, recs, np.full(len(recs), POLICY["oracle"], np.int8), np.zeros(len(recs), np.uint64))
    bad = np.flatnonzero(got != want)
    if bad.size:
        lines = [f"oracle C differs from Python on {bad.size} of {len(want)} states, first ones:"]
        lines += [
            f"  C={got[i]} python={want[i]} Ron'd discards {mask_str(int(ron_discards(rules, recs[i : i + 1])[0]))}: "
            f"{describe(rules, obs[i], masks[i])}; other hands "
            + ", ".join(mask_str(int(h)) for h in recs["hands"][i][: rules.num_players])
            for i in bad[:5]
        ]
        pytest.fail("\n".join(lines))
    greedy = policy_act(rules, recs, np.full(len(recs), POLICY["greedy"], np.int8), np.zeros(len(recs), np.uint64))
    assert (got != greedy).sum() >= len(recs) // 200, "too few states where the oracle's defense decides"


def test_oracle_refuses_observations():
    rules = RULES["3p"]
    _, obs, masks = collect_states(rules, 64, seed=3)
    with pytest.raises(ValueError, match="oracle policy reads the other seats' hands"):
        act_obs(rules, "oracle", obs, masks)


@pytest.mark.parametrize("key", sorted(RULES))
def test_c_bots_equal_python_twins(key):
    assert check_twins(RULES[key], 3000, seed=11) >= 2000


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(RULES))
def test_c_bots_equal_python_twins_100k(key):
    assert check_twins(RULES[key], 110_000, seed=12) >= 100_000


def tie_states(rules: RuleConfig, n_states: int, seed: int):
    """The discard states of real games where at least two discards tie for the smallest distance and that
    distance is 2 or more: the states whose decision is the acceptance tie-break that the witnesses of best
    completions (passed between the tied discards in _bots.c) shorten."""
    recs, obs, masks = collect_states(rules, n_states, seed)
    pick = far_ties(rules, recs, obs, masks)
    return recs[pick], obs[pick], masks[pick]


def far_ties(
    rules: RuleConfig, recs: np.ndarray, obs: np.ndarray, masks: np.ndarray, unreachable: bool = False
) -> np.ndarray:
    """The states (a bool mask) that are discards (after a draw or a call) with at least two discards tied for
    the smallest distance, that distance 2 or more (tie_states); ties of unreachable hands only with
    ``unreachable``."""
    from meld8_env.cardmask import BITS, bits_of, discard_masks
    from meld8_env.hands import distance_batch

    asked = (recs["phase"] == int(Phase.DRAW)) | (recs["phase"] == int(Phase.CALL_DISCARD))
    disc = asked & (discard_masks(masks) != 0) & ~masks[:, 63].astype(bool)
    d = decode(obs[disc], rules)
    rows, cards = bits_of(discard_masks(masks[disc]))
    dist = distance_batch(d["hand"][rows] & ~BITS[cards], d["melds"][rows, 0], d["unseen"][rows]).astype(np.int64)
    best = np.full(int(disc.sum()), 1 << 30, np.int64)
    np.minimum.at(best, rows, dist)
    tied = np.bincount(rows, weights=dist == best[rows], minlength=len(best))
    out = np.zeros(len(recs), bool)
    out[np.flatnonzero(disc)[(tied >= 2) & (best >= 2) & ((best < 99) | unreachable)]] = True
    return out


@pytest.mark.parametrize("key", sorted(RULES))
def test_c_bots_equal_python_twins_on_tie_breaks(key):
    """Greedy and defensive decide the acceptance tie-break (distance >= 2, two or more tied discards) as the
    Python twins do, from the observation and from the record."""
    rules = RULES[key]
    recs, obs, masks = tie_states(rules, 6000, seed=13)
    assert len(recs) >= 400, f"too few tie-break states ({len(recs)})"
    for name, cls in TWINS:
        want = cls(rules).act_batch_python(obs, masks)
        got_rec = policy_act(rules, recs, np.full(len(recs), POLICY[name], np.int8), np.zeros(len(recs), np.uint64))
        for got, path in ((act_obs(rules, name, obs, masks), "observation"), (got_rec, "record")):
            bad = np.flatnonzero(got != want)
            lines = [f"  C={got[i]} python={want[i]}: {describe(rules, obs[i], masks[i])}" for i in bad[:5]]
            assert bad.size == 0, f"{name} C ({path}) differs on {bad.size} of {len(want)} tie-breaks:\n" + "\n".join(
                lines
            )


def test_agents_dispatch_to_c_unless_python_backend():
    """act_batch runs the C twin by default and the Python code under MELD8_BACKEND=python (set_backend)."""
    import meld8_env.hands as hands

    rules = RULES["3p"]
    recs, obs, masks = collect_states(rules, 64, seed=3)
    obs, masks = obs[:2], masks[:2]  # the Python evaluator is slow
    for cls in (GreedyAgent, DefensiveAgent, RandomAgent):
        a = cls(rules)
        c = a.act_batch(obs, masks)
        previous = hands.BACKEND
        hands.set_backend("python")
        try:
            assert not getattr(a, "runs_in_c", lambda: False)()
            py = a.act_batch(obs, masks)
        finally:
            hands.set_backend(previous)
        np.testing.assert_array_equal(c, py)


# ---------------------------------------------------------------------------------------------- rollout
def step_by_step(rules: RuleConfig, records: np.ndarray, policies: np.ndarray, seeds: np.ndarray, until: str):
    """The rollout's Python twin: every unfinished record steps one action at a time, greedy/defensive by
    the Python agents (batched over the records that use them), oracle by ``agents.oracle`` on the records,
    random by ``random_rng_action``.
    Returns each record as it was when it stopped, the score changes and the steps."""
    P, n = rules.num_players, len(records)
    fb = FastBatch(n, rules)
    fb.restore(slice(None), records)
    agents = {POLICY[name]: cls(rules) for name, cls in TWINS}
    start = fb.state["scores"][:, :P].copy()
    rng = [int(s) for s in seeds]
    steps = np.zeros(n, np.int32)
    final = fb.snapshot(slice(None))
    active = fb.state["phase"] != int(Phase.OVER)
    while active.any():
        obs, masks = fb.observe()
        code = policies[np.arange(n), np.maximum(fb.state["acting"], 0)]
        actions = np.full(n, -1, np.int64)
        for c, agent in agents.items():
            idx = np.flatnonzero(active & (code == c))
            if idx.size:
                actions[idx] = agent.act_batch_python(obs[idx], masks[idx])
        idx = np.flatnonzero(active & (code == POLICY["oracle"]))
        if idx.size:
            actions[idx] = oracle_actions(rules, fb.snapshot(idx))
        for i in np.flatnonzero(active & (code == POLICY["random"])):
            actions[i], rng[i] = random_rng_action(int(fb.state["mask"][i]), rng[i])
        assert not fb.step(actions)[active].any()
        steps += active
        stopped = (fb.state["phase"] == int(Phase.OVER)) | ((fb.state["result"] != 0) & (until == "hand"))
        newly = np.flatnonzero(active & stopped)
        final[newly] = fb.snapshot(newly)  # before a held step clears its outcome fields
        active &= ~stopped
    return final, fb.state["scores"][:, :P] - start, steps


@pytest.mark.parametrize("key", sorted(RULES))
@pytest.mark.parametrize("until", ["hand", "game"])
def test_rollout_equals_step_by_step_python(key, until):
    rules = RULES[key]
    recs, _, _ = collect_states(rules, 400, seed=21)
    rng = np.random.default_rng(5)
    pick = rng.choice(len(recs), 24 if until == "hand" else 4, replace=False)
    start = recs[pick].copy()
    pol = rng.integers(0, len(POLICY), (len(pick), rules.num_players)).astype(np.int8)
    seeds = rng.integers(0, 2**63, len(pick), dtype=np.uint64)
    mine = start.copy()
    res = rollout(rules, mine, pol, seeds, until=until)
    want_recs, want_deltas, want_steps = step_by_step(rules, start, pol, seeds, until)
    np.testing.assert_array_equal(res.steps, want_steps)
    np.testing.assert_array_equal(res.deltas, want_deltas)
    differ = [f for f in STATE_DTYPE.names if not np.array_equal(mine[f], want_recs[f])]
    assert not differ, f"the advanced records differ from step-by-step play in fields {differ}"
    if until == "game":
        assert res.over.all() and (res.placements > 0).all()
        np.testing.assert_array_equal(res.final_scores, mine["final_scores"][:, : rules.num_players])
    else:
        assert ((mine["result"] != 0) | res.over).all(), "a hand rollout stops where the hand ended"


def test_rollout_deterministic_and_thread_independent():
    rules = RULES["3p"]
    recs, _, _ = collect_states(rules, 64, seed=8)
    seeds = np.arange(len(recs), dtype=np.uint64)
    pol = np.array(["random", "greedy", "defensive"])
    a, b, c = recs.copy(), recs.copy(), recs.copy()
    ra = rollout(rules, a, pol, seeds, until="game", threads=1)
    rb = rollout(rules, b, pol, seeds, until="game", threads=2)
    rollout(rules, c, pol, seeds + np.uint64(1), until="game", threads=2)
    assert all(np.array_equal(a[f], b[f]) for f in STATE_DTYPE.names)
    np.testing.assert_array_equal(ra.final_scores, rb.final_scores)
    assert not np.array_equal(a["scores"], c["scores"]), "other seeds must change the random seats' play"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"until": "round"}, "until must be 'hand' or 'game'"),
        ({"threads": 0}, "threads must be an integer"),
        ({"seat_policies": ["greedy", "nope", "random"]}, "unknown policy 'nope'"),
        ({"seat_policies": [1, 2, 7]}, "policy codes must be 0..5"),
        ({"seeds": np.zeros(3, np.uint64)}, "seeds must be"),
    ],
)
def test_rollout_refuses_bad_input_in_one_line(kwargs, message):
    rules = RULES["3p"]
    recs, _, _ = collect_states(rules, 64, seed=1)
    args = {"seat_policies": ["greedy"] * 3, "seeds": np.zeros(len(recs), np.uint64)} | kwargs
    before = recs.tobytes()
    with pytest.raises(ValueError, match=message):
        rollout(rules, recs, **args)
    assert recs.tobytes() == before, "nothing is stepped before every check passed"


# ---------------------------------------------------------------------------------------------- acceptance
def acceptance_cases(n_states: int, seed: int):
    """(hands, melds, unseen, pool, dist) of every discard candidate in real decision states, plus random
    7-card hands with random unseen sets (the bots' pool and the full unseen pool)."""
    from meld8_env.cardmask import BITS, JK, bits_of, discard_masks
    from meld8_env.hands import distance_batch
    from meld8_env.hands.sampling import random_masks

    hands, melds, unseen = [], [], []
    for rules in RULES.values():
        recs, obs, masks = collect_states(rules, n_states, seed)
        disc = ~masks[:, 63]
        d = decode(obs[disc], rules)
        rows, cards = bits_of(discard_masks(masks[disc]))
        hands.append(d["hand"][rows] & ~BITS[cards])
        melds.append(d["melds"][rows, 0])
        unseen.append(d["unseen"][rows])
    rng = np.random.default_rng(seed)
    h = random_masks(rng, n_states, 7)
    hands.append(h)
    melds.append(np.zeros(n_states, np.uint64))
    drop = random_masks(rng, n_states, 20)
    unseen.append(np.uint64((1 << 53) - 1) & ~h & ~drop)
    h, m, u = np.concatenate(hands), np.concatenate(melds), np.concatenate(unseen)
    from meld8_env.features import neighbours

    dist = distance_batch(h, m, u)
    pools = [(neighbours(h) | JK) & u, u & ~(h | m)]
    return h, m, u, pools, dist


def check_acceptance(n_states: int, seed: int) -> int:
    from meld8_env.hands import _native

    h, m, u, pools, dist = acceptance_cases(n_states, seed)
    for pool in pools:
        want, got = np.zeros(len(h), np.int8), np.zeros(len(h), np.int8)
        _native.acceptance_batch(h, m, u, pool, dist, want)
        _native.acceptance_onepass_batch(h, m, u, pool, dist, got)
        bad = np.flatnonzero(got != want)
        lines = [f"  {mask_str(int(h[i]))} | meld {mask_str(int(m[i])) or '-'} | dist {dist[i]} | pool "
                 f"{mask_str(int(pool[i]))}: one search={got[i]} per card={want[i]}" for i in bad[:5]]  # fmt: skip
        assert bad.size == 0, f"acceptance differs on {bad.size} of {len(h)} hands:\n" + "\n".join(lines)
    return len(h)


def test_one_search_acceptance_equals_per_card_search():
    assert check_acceptance(1500, seed=31) >= 20_000


def check_tiebreak(n_states: int, seed: int) -> int:
    """eval_acceptance_beat (the bots' tie-break count) against the per-card count: exact where the count is
    above beat (always with beat -1), never above beat elsewhere. beat runs from -1 to past the pool's size."""
    from meld8_env.hands import _native

    h, m, u, pools, dist = acceptance_cases(n_states, seed)
    rng = np.random.default_rng(seed)
    for pool in pools:
        want = np.zeros(len(h), np.int8)
        _native.acceptance_batch(h, m, u, pool, dist, want)
        for beat in (np.full(len(h), -1, np.int8), rng.integers(-1, 27, len(h)).astype(np.int8), want - 1, want):
            got = np.zeros(len(h), np.int8)
            _native.acceptance_tiebreak_batch(h, m, u, pool, dist, beat, got)
            bad = np.flatnonzero(np.where(want > beat, got != want, got > beat))
            lines = [f"  {mask_str(int(h[i]))} | meld {mask_str(int(m[i])) or '-'} | dist {dist[i]} | pool "
                     f"{mask_str(int(pool[i]))} | beat {beat[i]}: tie-break={got[i]} per card={want[i]}"
                     for i in bad[:5]]  # fmt: skip
            assert bad.size == 0, f"tie-break count wrong on {bad.size} of {len(h)} hands:\n" + "\n".join(lines)
    return len(h)


def test_tiebreak_acceptance_is_exact_above_beat():
    assert check_tiebreak(600, seed=33) >= 8_000


def test_tiebreak_acceptance_places_the_drawn_card_first_exactly():
    """The tie-break's per-card count on a hand of exact distance searches only the W that hold the card x, placing
    x first (every group that can hold it, with held cards on either side) and never leaving it out. Far hands
    (distance 3 and 4, where x's group may hold no other held card) and near ones, with and without a held Joker
    and beside an exposed meld; beat -1 asks every card. Equal to the plain per-card count on every hand."""
    from meld8_env.cardmask import JK
    from meld8_env.features import neighbours
    from meld8_env.hands import _native, distance_batch
    from meld8_env.hands.sampling import random_masks, random_melds

    rng = np.random.default_rng(35)
    n, full = 12_000, np.uint64((1 << 53) - 1)
    no_jk = np.full(n, JK, np.uint64)
    hands = [random_masks(rng, n, 7), random_masks(rng, n, 6, exclude=no_jk) | JK]
    called = random_melds(rng, n)  # a Pon or a Chii (the evaluator's contract)
    hands.append(random_masks(rng, n, 4, exclude=called))
    melds = [np.zeros(n, np.uint64), np.zeros(n, np.uint64), called]
    h, m = np.concatenate(hands), np.concatenate(melds)
    drop = random_masks(rng, 3 * n, 20, exclude=h | m)  # cards seen elsewhere: half the rows, far hands
    u = full & ~h & ~m & np.where(rng.random(3 * n) < 0.5, ~drop, full)
    dist = distance_batch(h, m, u)
    pool = (neighbours(h) | JK) & u
    want, got = np.zeros(len(h), np.int8), np.zeros(len(h), np.int8)
    _native.acceptance_batch(h, m, u, pool, dist, want)
    _native.acceptance_tiebreak_batch(h, m, u, pool, dist, np.full(len(h), -1, np.int8), got)
    assert set(np.unique(dist)) >= {2, 3, 4}
    bad = np.flatnonzero(got != want)
    lines = [f"  {mask_str(int(h[i]))} | meld {mask_str(int(m[i])) or '-'} | dist {dist[i]} | pool "
             f"{mask_str(int(pool[i]))}: tie-break={got[i]} per card={want[i]}" for i in bad[:5]]  # fmt: skip
    assert bad.size == 0, f"tie-break count differs on {bad.size} of {len(h)} hands:\n" + "\n".join(lines)


@pytest.mark.slow
def test_one_search_acceptance_equals_per_card_search_1m():
    assert check_acceptance(100_000, seed=32) >= 1_000_000


@pytest.mark.slow
def test_tiebreak_acceptance_is_exact_above_beat_1m():
    assert check_tiebreak(100_000, seed=34) >= 1_000_000


# ---------------------------------------------------------------------------------------------- one pass
def discard_cases(n_states: int, seed: int):
    """(hands before the discard, melds, unseen, allowed) of real draw-phase states (3p and 2p rules), plus
    random 8-card hands (some with a Joker, some beside a meld) with random dead cards."""
    from meld8_env.cardmask import JK, discard_masks
    from meld8_env.hands.sampling import random_masks

    hands, melds, unseen, allowed = [], [], [], []
    for rules in RULES.values():
        recs, obs, masks = collect_states(rules, n_states, seed)
        disc = ~masks[:, 63] & masks[:, :52].any(axis=1)
        d = decode(obs[disc], rules)
        hands.append(d["hand"])
        melds.append(d["melds"][:, 0])
        unseen.append(d["unseen"])
        allowed.append(discard_masks(masks[disc]))
    rng = np.random.default_rng(seed)
    h = random_masks(rng, n_states, 8)
    drop = random_masks(rng, n_states, 20) & ~h
    hands.append(h)
    melds.append(np.zeros(n_states, np.uint64))
    unseen.append(np.uint64((1 << 53) - 1) & ~h & ~drop)
    allowed.append(h & ~JK)
    return np.concatenate(hands), np.concatenate(melds), np.concatenate(unseen), np.concatenate(allowed)


def near_win_cases(n: int, seed: int):
    """8-card hands near a winning hand (most one to three cards from it), where the one-pass table and the C bots
    collect every best completion at once (eval_discard_anchored's collect path). The winning hand is standard (two
    melds and a pair, or one meld and a pair beside an exposed meld) or special (R26-R27: four pairs, two quads, two
    quads with the Joker in a gap, four crown pairs, a pure or the royal straight); one to four of its concealed
    cards are swapped for other cards (the Joker among them), and up to 20 other cards are seen (dead)."""
    from meld8_env.cardmask import JK

    rng = np.random.default_rng(seed)
    full = (1 << 53) - 1
    hands, melds, unseen = np.zeros(n, np.uint64), np.zeros(n, np.uint64), np.zeros(n, np.uint64)

    def of_rank(r: int, k: int) -> int:
        return sum(1 << (13 * int(x) + r) for x in rng.choice(4, k, replace=False))

    def meld_of(used: int) -> int:
        while True:
            if rng.random() < 0.5:  # a triplet: three suits of one rank
                g = of_rank(int(rng.integers(13)), 3)
            else:  # a run of three in one suit
                g = 7 << (13 * int(rng.integers(4)) + int(rng.integers(11)))
            if not g & used:
                return g

    def pair_of(used: int) -> int:
        while True:
            g = of_rank(int(rng.integers(13)), 2)
            if not g & used:
                return g

    def special() -> int:
        kind, suit = rng.integers(6), int(rng.integers(4))
        ranks = [int(r) for r in rng.choice(13, 4, replace=False)]
        if kind == 0:  # four pairs
            return sum(of_rank(r, 2) for r in ranks)
        if kind == 1:  # two quads
            return sum(of_rank(r, 4) for r in ranks[:2])
        if kind == 2:  # two quads, the Joker filling a gap of the second
            return of_rank(ranks[0], 4) | of_rank(ranks[1], 3) | int(JK)
        if kind == 3:  # crown pairs: a red (hearts, diamonds) or black (spades, clubs) pair of each of A J Q K
            return sum(((1 << 13 | 1 << 26) if rng.random() < 0.5 else (1 | 1 << 39)) << r for r in (0, 10, 11, 12))
        if kind == 4:  # a pure straight: eight in a row of one suit
            return 0xFF << (13 * suit + int(rng.integers(6)))
        return 0x1FC1 << (13 * suit)  # a royal straight: A and 7 to K of one suit

    for i in range(n):
        kind = rng.random()
        meld = meld_of(0) if kind < 0.15 else 0
        if meld or kind < 0.6:
            used, hand = meld, 0
            for _ in range(1 if meld else 2):
                g = meld_of(used)
                used, hand = used | g, hand | g
            hand |= pair_of(used)
        else:
            hand = special()
        for _ in range(int(rng.choice([1, 2, 3, 4], p=[0.2, 0.25, 0.4, 0.15]))):
            cards = [c for c in range(53) if hand >> c & 1]
            others = [x for x in range(53) if not (hand | meld) >> x & 1]
            joker = rng.random() < 0.15 and not (hand | meld) >> 52 & 1
            hand = hand & ~(1 << int(rng.choice(cards))) | (1 << (52 if joker else int(rng.choice(others))))
        rest = [x for x in range(53) if not (hand | meld) >> x & 1]
        dead = sum(1 << int(x) for x in rng.choice(rest, int(rng.integers(0, 21)), replace=False))
        hands[i], melds[i], unseen[i] = hand, meld, full & ~hand & ~meld & ~dead
    return hands, melds, unseen, hands & ~JK


def check_discard_table(n_states: int, seed: int, cases=None) -> int:
    """eval_discard_table (one pass) = distance and acceptance one discard at a time, every allowed discard, in each
    acc_mode (0: the distances alone, by discard_levels' search; 1 and 2: with counts, by the collecting search)."""
    from meld8_env.cardmask import BITS, JK, bits_of
    from meld8_env.features import neighbours
    from meld8_env.hands import _native

    h, m, u, allowed = discard_cases(n_states, seed) if cases is None else cases
    rows, cards = bits_of(allowed)
    after = h[rows] & ~BITS[cards]
    want_d = np.zeros(len(rows), np.int8)
    _native.distance_batch(after, m[rows], u[rows], want_d)
    pool = (neighbours(after) | JK) & u[rows]
    for mode in (2, 1, 0):
        dist, acc = np.zeros((len(h), 53), np.int8), np.zeros((len(h), 53), np.int8)
        _native.discard_table_batch(h, m, u, allowed, mode, dist, acc)
        best = np.full(len(h), 127, np.int64)
        np.minimum.at(best, rows, want_d)
        tied = want_d == best[rows]
        n_tied = np.bincount(rows[tied], minlength=len(h))
        need = np.full(len(rows), mode == 2) if mode != 1 else tied & (n_tied[rows] > 1)  # mode 0: distances only
        idx = np.flatnonzero(need)
        want_a = np.zeros(len(idx), np.int8)
        _native.acceptance_onepass_batch(after[idx], m[rows[idx]], u[rows[idx]], pool[idx], want_d[idx], want_a)
        out = np.zeros(len(rows), np.int8)
        out[idx] = want_a
        bad = np.flatnonzero((dist[rows, cards] != want_d) | (acc[rows, cards] != out))
        r, c = rows[bad], cards[bad]
        lines = [f"  {mask_str(int(h[r[k]]))} | meld {mask_str(int(m[r[k]])) or '-'} | discard "
                 f"{mask_str(int(BITS[c[k]]))}: one pass dist {dist[r[k], c[k]]} acc {acc[r[k], c[k]]}, "
                 f"per discard dist {want_d[i]} acc {out[i]}" for k, i in enumerate(bad[:5])]  # fmt: skip
        assert bad.size == 0, f"acc_mode {mode}: one pass differs on {bad.size} of {len(rows)} discards:\n" + "\n".join(
            lines
        )
        rated = np.zeros((len(h), 53), bool)
        rated[rows, cards] = True
        assert (dist[~rated] == -1).all() and (acc[~rated] == -1).all(), "only allowed discards are rated"
    return len(rows)


def test_distance_after_every_discard_in_one_pass_equals_per_discard():
    assert check_discard_table(1500, seed=41) >= 20_000


@pytest.mark.slow
def test_distance_after_every_discard_in_one_pass_1m():
    assert check_discard_table(70_000, seed=42) >= 1_000_000


def test_one_pass_table_near_winning_equals_per_discard():
    """Hands one to three from winning (standard and special forms, the Joker held, unseen or dead, beside a meld):
    the table's collecting search over every best W gives each discard's distance and count as one search per
    discard does. Breaking the collect path's special-form leaves or its per-discard sets on purpose fails it."""
    from meld8_env.hands import distance_batch

    h, m, u, allowed = cases = near_win_cases(6000, seed=43)
    d = distance_batch(h, m, u)
    near = np.bincount(d[d <= 3].astype(np.int64), minlength=4)
    assert near[1:].min() >= 150, f"the cases reach every distance the collect path serves: {near[1:]} at 1, 2, 3"
    assert check_discard_table(0, 0, cases) >= 40_000


@pytest.mark.parametrize("cases", ["real and random", "near winning"])
def test_discard_table_one_pass_gives_the_per_discard_table(cases):
    """``features.discard_table(..., one_pass=True)`` (the search's candidates and the networks' features, session
    48) is the per-discard table exactly, arrays and dtypes, batched and row by row, with every count or only the
    tie-breaking ones. (Under ``MELD8_BACKEND=python`` the flag is not read: the per-discard path runs.)"""
    from meld8_env.features import discard_table

    args = discard_cases(150, seed=48) if cases == "real and random" else near_win_cases(600, seed=49)
    for every in (False, True):
        for sl in [slice(None)] + [slice(i, i + 1) for i in range(0, len(args[0]), 37)]:
            part = tuple(x[sl] for x in args)
            want = discard_table(*part, all_acceptance=every)
            got = discard_table(*part, all_acceptance=every, one_pass=True)
            for name, w, g in zip(("rows", "cards", "dist", "accept", "best"), want, got, strict=True):
                assert w.dtype == g.dtype and np.array_equal(w, g), (
                    f"{name} differs (all_acceptance={every}): {mask_str(int(part[0][0]))} ..."
                )


@pytest.mark.slow
def test_one_pass_table_near_winning_equals_per_discard_200k():
    assert check_discard_table(0, 0, near_win_cases(200_000, seed=44)) >= 1_000_000


def test_discard_table_refuses_bad_input_in_one_line():
    from meld8_env.hands import _native

    h = np.array([0b11111111], np.uint64)
    z = np.zeros(1, np.uint64)
    out = np.zeros((1, 53), np.int8)
    with pytest.raises(ValueError, match="acc_mode: 3 is not 0"):
        _native.discard_table_batch(h, z, ~h & np.uint64((1 << 53) - 1), h, 3, out, out.copy())
    with pytest.raises(ValueError, match="row 0: 7 cards counting the meld"):
        _native.discard_table_batch(h >> np.uint64(1), z, z, h, 1, out, out.copy())
    with pytest.raises(TypeError, match="unseen: an integer array is expected .* got format 'd'"):
        _native.discard_table_batch(h, z, np.zeros(1, np.float64), h, 1, out, out.copy())  # bits read as cards
    with pytest.raises(TypeError, match="dist_out: an integer array is expected .* got format '[?]'"):
        _native.discard_table_batch(h, z, ~h & np.uint64((1 << 53) - 1), h, 1, np.zeros((1, 53), bool), out.copy())
    with pytest.raises(ValueError, match="unseen: row 0 holds a card of the hand or meld"):
        _native.discard_table_batch(h, z, np.uint64((1 << 53) - 1) + z, h, 1, out, out.copy())


def test_special_form_bound_equals_the_unbounded_searches():
    """The C bots pass an 8-card hand's special-form overlap down as a bound (a hand minus one card has no special
    winning hand the full hand lacks, R27-R28): with it, the distance after each discard (``discard_best``'s yes/no
    search) and the tie-break count of each 7-card hand must equal the unbounded ``distance_batch`` and
    ``acceptance_tiebreak_batch``. Hands near the special forms (four pairs, two quads, long one-suit runs, each
    with one or two cards swapped), random hands, a held Joker, hands beside an exposed meld."""
    from meld8_env.cardmask import JK
    from meld8_env.features import neighbours
    from meld8_env.hands import _native, distance_batch
    from meld8_env.hands.sampling import random_masks, random_melds

    rng = np.random.default_rng(36)
    n, full = 2_000, np.uint64((1 << 53) - 1)

    def bits(cards) -> int:
        return sum(1 << int(c) for c in cards)

    near = []
    for _ in range(n):
        kind = rng.integers(3)
        if kind == 0:  # four pairs
            ranks = rng.choice(13, 4, replace=False)
            cards = [r + 13 * s for r in ranks for s in rng.choice(4, 2, replace=False)]
        elif kind == 1:  # two quads
            cards = [r + 13 * s for r in rng.choice(13, 2, replace=False) for s in range(4)]
        else:  # a run of 8 in one suit
            lo, s = rng.integers(6), rng.integers(4)
            cards = [13 * s + lo + k for k in range(8)]
        cards = list(cards)
        for k in rng.choice(8, rng.integers(0, 3), replace=False):  # swap one or two for other cards (or the Joker)
            free = [c for c in range(53) if c not in cards]
            cards[k] = int(rng.choice(free))
        near.append(bits(cards))
    no_jk = np.full(n, JK, np.uint64)
    called = random_melds(rng, n)  # a Pon or a Chii (the evaluator's contract)
    hands = [np.array(near, np.uint64), random_masks(rng, n, 8), random_masks(rng, n, 7, exclude=no_jk) | JK,
             random_masks(rng, n, 5, exclude=called)]  # fmt: skip
    melds = [np.zeros(n, np.uint64)] * 3 + [called]
    h, m = np.concatenate(hands), np.concatenate(melds)
    drop = random_masks(rng, len(h), 16, exclude=h | m)
    u = full & ~h & ~m & np.where(rng.random(len(h)) < 0.5, ~drop, full)
    pool = (neighbours(h) | JK) & u
    dist_b, acc_b = np.full((len(h), 53), -1, np.int8), np.full((len(h), 53), -1, np.int8)
    _native.special_bound_batch(h, m, u, pool, dist_b, acc_b)
    rows, cards = np.nonzero(dist_b >= 0)
    after = h[rows] & ~(np.uint64(1) << cards.astype(np.uint64))
    d8 = distance_batch(h, m, u)[rows]  # discard_best's rule: d after a discard is d8 or d8 + 1 (the yes/no search)
    want_d = np.where(distance_batch(after, m[rows], u[rows]) <= d8, d8, d8 + 1).astype(np.int8)
    got_d, got_a = dist_b[rows, cards], acc_b[rows, cards]
    # the count's contract is the 7-card hand's exact distance: compared where d8 / d8 + 1 is exact (not where a
    # complete hand loses its only, now dead, completing card: its distance jumps by two)
    ex = np.flatnonzero(distance_batch(after, m[rows], u[rows]) == got_d)
    acc_ex = np.zeros(len(ex), np.int8)
    _native.acceptance_tiebreak_batch(after[ex], m[rows][ex], u[rows][ex], pool[rows][ex], got_d[ex],
                                      np.full(len(ex), -1, np.int8), acc_ex)  # fmt: skip
    want_a = np.full(len(rows), -2, np.int8)
    want_a[ex] = acc_ex
    assert len(rows) >= 40_000 and len(ex) >= 0.95 * len(rows)
    bad = np.union1d(np.flatnonzero(got_d != want_d), ex[got_a[ex] != acc_ex])
    lines = [f"  {mask_str(int(h[rows[i]]))} - {mask_str(1 << int(cards[i]))} | meld "
             f"{mask_str(int(m[rows[i]])) or '-'}: bounded d={got_d[i]} acc={got_a[i]}, unbounded d={want_d[i]} "
             f"acc={want_a[i]}" for i in bad[:5]]  # fmt: skip
    assert bad.size == 0, f"the special-form bound changed {bad.size} of {len(rows)} answers:\n" + "\n".join(lines)


@pytest.mark.parametrize("key", sorted(RULES))
def test_lite_bots_change_only_the_far_tie_break(key):
    """greedy_lite / defensive_lite decide as greedy / defensive except where two or more discards tie for the
    smallest distance and it is 2 or more (their pool-size tie-break); there they differ on some states, or the
    lite path would be untested."""
    rules = RULES[key]
    recs, obs, masks = collect_states(rules, 6000, seed=17)
    far = far_ties(rules, recs, obs, masks, unreachable=True)
    assert far.sum() >= 400, f"too few far ties ({far.sum()})"
    zeros = np.zeros(len(recs), np.uint64)
    for full, lite in (("greedy", "greedy_lite"), ("defensive", "defensive_lite")):
        a = policy_act(rules, recs, np.full(len(recs), POLICY[full], np.int8), zeros)
        b = policy_act(rules, recs, np.full(len(recs), POLICY[lite], np.int8), zeros)
        outside = np.flatnonzero((a != b) & ~far)
        assert outside.size == 0, f"{lite} differs from {full} outside a far tie: " + describe(
            rules, obs[outside[0]], masks[outside[0]]
        )
        share = (a != b)[far].mean()
        assert share >= 0.05, f"{lite} decides like {full} on {1 - share:.1%} of the far ties"


@pytest.mark.parametrize("size", [786, 791, 792, 793])
def test_random_c_hash_equals_python_on_sparse_and_dense_observations(size):
    """The C random policy adds only the nonzero bytes' terms of its observation hash: the same decisions as the
    Python dot product over every byte, whatever the density and the tail after the last 8-byte word (2, 7, 0, 1
    bytes; act_obs takes observations of at least obs_size bytes)."""
    rng = np.random.default_rng(size)
    n = 3000
    density = rng.choice([0.0, 0.02, 0.3, 1.0], n)[:, None]
    obs = np.where(rng.random((n, size)) < density, rng.integers(1, 256, (n, size)), 0).astype(np.uint8)
    masks = rng.random((n, 64)) < rng.choice([0.02, 0.2, 0.9], n)[:, None]
    masks[np.arange(n), rng.integers(0, 64, n)] = True
    agent = RandomAgent(RuleConfig(), seed=size)
    want = agent.act_batch_python(obs, masks)
    got = agent.act_batch_python(obs, masks, c_twin=True)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"random C differs on {bad.size} of {n} observations, first {bad[:5]}"


def test_act_obs_refuses_observations_and_weights_that_are_not_bytes_in_one_line():
    """act_obs casts nothing silently: a float, bool or out-of-range observation (0.5 would read as 0, 300 as 44) and
    float or negative hash weights are refused with a one-line ValueError naming the argument."""
    rules = RuleConfig()
    agent = RandomAgent(rules, seed=3)
    obs = np.zeros((2, 786), np.uint8)
    masks = np.ones((2, 64), bool)
    w = agent.obs_weights(786)
    assert (
        act_obs(rules, "random", obs.astype(np.int64), masks, w, 3) == act_obs(rules, "random", obs, masks, w, 3)
    ).all()
    bad = [
        (obs.astype(np.float32), w, "obs: observations are bytes 0..255"),
        (obs.astype(bool), w, "obs: observations are bytes 0..255"),
        (obs.astype(np.int64) + 300, w, "obs: observations are bytes 0..255"),
        (obs.astype(np.int64) - 1, w, "obs: observations are bytes 0..255"),
        (obs, w.astype(np.float64), "weights: RandomAgent's hash weights are uint64"),
        (obs, -w.astype(np.int64), "weights: RandomAgent's hash weights are uint64"),
    ]
    for o, weights, words in bad:
        with pytest.raises(ValueError) as exc:
            act_obs(rules, "random", o, masks, weights, 3)
        assert words in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ValueError, match="obs: observations are bytes"):
        act_obs(rules, "greedy", obs.astype(np.float64), masks)
