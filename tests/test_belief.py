"""The belief sampler (issue 21 §1): worlds consistent with the infoset, ready to step, blind to the truth.

R33 (furiten: a ready opponent's waits are not in its own discards), R22 (claim windows re-asked).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from meld8_env.belief import sample_worlds, status_key
from meld8_env.codes import Phase
from meld8_env.engine import _fast
from meld8_env.engine.records import packed, step_records
from meld8_env.hands import waits_batch
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from tests.test_infoset_leak import permute_hidden
from training.bot_states import play_bot_states

RULES = {"3p": RuleConfig(), "2p": RuleConfig.two_player()}


@pytest.fixture(scope="module", params=list(RULES))
def states(request):
    rules = RULES[request.param]
    s = play_bot_states(rules, games=12, seed=41)
    return rules, np.ascontiguousarray(s[:: max(1, len(s) // 150)])


@pytest.mark.parametrize("method", ["uniform", "two_level", "learned"])
def test_worlds_are_consistent_and_playable(states, method):
    rules, recs = states
    rng = np.random.default_rng(2)
    for r in recs:
        info = infoset(r, int(r["acting"]), rules)
        worlds, weights = sample_worlds(info, 8, rng, method, rules)
        assert worlds.shape == (8,) and weights.shape == (8,) and (weights > 0).all()
        assert len(set(worlds["seed"].tolist())) == 8  # fresh future deals
        for w in worlds:
            got = infoset(w, info.seat, rules)
            if info.phase == Phase.CLAIM:  # the window is asked again from its first eligible seat
                assert {k: v for k, v in vars(got).items() if k not in ("my_turn", "legal")} == {
                    k: v for k, v in vars(info).items() if k not in ("my_turn", "legal")
                }
            else:
                assert got.to_bytes() == info.to_bytes()
        # ready to step: every world takes a legal action (checked first by step_records)
        rs = np.arange(8, dtype=np.uint64) + 1
        acts = np.zeros(8, np.int64)
        _fast.random_legal(worlds, rs, acts)
        assert not step_records(rules, worlds, acts).any()


def test_two_level_ready_opponents_are_not_furiten_and_more_often_ready(states):
    rules, recs = states
    rng = np.random.default_rng(3)
    ready = {"uniform": 0, "two_level": 0}
    total = 0
    for r in recs:
        info = infoset(r, int(r["acting"]), rules)
        for method in ready:
            worlds, _ = sample_worlds(info, 16, rng, method, rules)
            for j in info.opponents:
                w = waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy())
                ok = (w != 0) & ((w & np.uint64(info.uncalled_discards(j))) == 0)
                ready[method] += int(ok.sum())
                total += 16 if method == "uniform" else 0
    assert ready["two_level"] > 5 * ready["uniform"], (ready, total)
    assert ready["two_level"] > 0.3 * total


def test_no_pass_worlds_rarely_wait_on_cards_the_opponent_let_pass(states):
    from meld8_env.belief import passed_cards

    rules, recs = states
    rng = np.random.default_rng(8)
    bad = {False: 0, True: 0}
    for r in recs:
        info = infoset(r, int(r["acting"]), rules)
        for no_pass in bad:
            worlds, _ = sample_worlds(info, 16, rng, "two_level", rules, no_pass=no_pass)
            for j in info.opponents:
                w = waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy())
                ok = (w != 0) & ((w & np.uint64(info.uncalled_discards(j))) == 0)
                bad[no_pass] += int((ok & ((w & np.uint64(passed_cards(info, j))) != 0)).sum())
    assert bad[True] * 3 <= bad[False], bad
    # 3p: between an opponent's discard and our decision the third seat discarded (2p: only we did, so far)
    assert bad[False] > 0 or rules.num_players == 2, bad


def _greedy_would_discard_last(info, worlds: np.ndarray, j: int) -> np.ndarray:
    """(n,) bool: greedy's discard rule picks j's last discard d from each world's hand of j plus d."""
    from meld8_env.cardmask import ALL, JK
    from meld8_env.features import best_discards

    d = info.discards[j][-1]
    seen = 0
    for p in range(info.num_players):
        seen |= info.melds[p] | info.uncalled_discards(p)
    held = worlds["hands"][:, j] | np.uint64(1 << d)
    melds = np.full(len(worlds), info.melds[j], np.uint64)
    return best_discards(held, melds, ALL & ~held & ~np.uint64(seen), held & ~JK)[0] == d


def test_last_discard_worlds_are_ones_greedy_would_have_discarded_from(states):
    """``last_discard``: an opponent's hand is drawn, where a proposal allows, so that greedy's rule would
    have thrown the card it last threw (a modelling assumption: opponents play like the bots)."""
    rules, recs = states
    rng = np.random.default_rng(9)
    hits = {False: 0, True: 0}
    total = 0
    for r in recs[::2]:
        info = infoset(r, int(r["acting"]), rules)
        opps = [j for j in info.opponents if info.discards[j] and info.hidden[j] + int(info.melds[j]).bit_count() == 7]
        for flag in hits:
            worlds, _ = sample_worlds(info, 8, rng, "two_level", rules, last_discard=flag)
            for j in opps:
                hits[flag] += int(_greedy_would_discard_last(info, worlds, j).sum())
                total += 8 if flag else 0
    assert total > 200
    assert hits[True] > 0.55 * total and hits[True] > 1.4 * hits[False], (hits, total)


def _assert_same_worlds_whatever_the_hidden_truth(rules, recs, rng, n: int, pick) -> None:
    """For each record and its twin with the hidden cards and seed permuted, the same rng gives the same worlds
    and weights; ``pick(i)`` -> (method, options) of state i."""
    for i, r in enumerate(recs):
        seat = int(r["acting"])
        twin = recs[i : i + 1].copy()
        permute_hidden(twin, seat, rules.num_players, rng)
        method, opts = pick(i)
        a, wa = sample_worlds(infoset(r, seat, rules), n, np.random.default_rng(i), method, rules, **opts)
        b, wb = sample_worlds(infoset(twin[0], seat, rules), n, np.random.default_rng(i), method, rules, **opts)
        for f in a.dtype.names:
            assert np.array_equal(a[f], b[f]), f"state {i}: field {f} depends on the hidden truth"
        assert np.array_equal(wa, wb)
        if method == "learned":
            assert (wa == 1).all()


@pytest.mark.parametrize("name", list(RULES))
def test_same_rng_same_worlds_whatever_the_hidden_truth(name):
    """Leak test: records that differ only by hidden cards and seed give the same samples for the same rng,
    on 1,000 bot-game decision states per rule set."""
    rules = RULES[name]
    recs = play_bot_states(rules, games=16, seed=77)
    recs = np.ascontiguousarray(recs[np.linspace(0, len(recs) - 1, 1000).astype(np.int64)])

    def pick(i: int):
        return ("two_level", "uniform", "two_level")[i % 3], ({"last_discard": True} if i % 3 == 2 else {})

    _assert_same_worlds_whatever_the_hidden_truth(rules, recs, np.random.default_rng(4), 4, pick)


@pytest.mark.parametrize("name", list(RULES))
def test_learned_same_rng_same_worlds_whatever_the_hidden_truth(name):
    """Leak test for ``learned`` (with and without ``no_pass``): records that differ only by hidden cards and
    seed give the same samples for the same rng, on 600 bot-game decision states per rule set."""
    rules = RULES[name]
    recs = play_bot_states(rules, games=12, seed=78)
    recs = np.ascontiguousarray(recs[np.linspace(0, len(recs) - 1, 600).astype(np.int64)])
    _assert_same_worlds_whatever_the_hidden_truth(
        rules, recs, np.random.default_rng(6), 6, lambda i: ("learned", {"no_pass": bool(i % 2)})
    )


def test_learned_is_deterministic_under_its_rng_and_varies_with_it(states):
    rules, recs = states
    r = recs[len(recs) // 2]
    info = infoset(r, int(r["acting"]), rules)
    a, _ = sample_worlds(info, 16, np.random.default_rng(11), "learned", rules)
    b, _ = sample_worlds(info, 16, np.random.default_rng(11), "learned", rules)
    c, _ = sample_worlds(info, 16, np.random.default_rng(12), "learned", rules)
    assert a.tobytes() == b.tobytes()
    assert not np.array_equal(a["hands"], c["hands"])


def _ready_wait_freq(info, worlds, j) -> np.ndarray | None:
    """(52,) how often each card is in j's waits among the worlds where j is ready (None if none is)."""
    w = waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy())
    ready = (w != 0) & ((w & np.uint64(info.uncalled_discards(j))) == 0)
    if not ready.any():
        return None
    return ((w[ready, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1)).mean(axis=0)


def test_learned_worlds_wait_where_the_model_says(states):
    """``learned``: among the worlds where an opponent is ready, how often each card it cannot be holding is
    in its waits follows the wait model's q(c) more closely than ``two_level``'s uniform ready hands do
    (correlation over (state, opponent, card), 64 worlds per state)."""
    from meld8_env.wait_model import wait_probs

    rules, recs = states
    rng = np.random.default_rng(13)
    got = {"two_level": ([], []), "learned": ([], [])}
    for r in recs[::3]:
        info = infoset(r, int(r["acting"]), rules)
        cards = np.flatnonzero((((info.hand | info.pool) >> np.arange(52)) & 1).astype(bool))
        for method, (freq, model) in got.items():
            worlds, _ = sample_worlds(info, 64, rng, method, rules)
            for j in info.opponents:
                f = _ready_wait_freq(info, worlds, j)
                if f is not None:
                    freq.extend(f[cards])
                    model.extend(wait_probs(info, j)[cards])
    corr = {m: np.corrcoef(f, q)[0, 1] for m, (f, q) in got.items()}
    assert len(got["learned"][0]) > 1000
    assert corr["learned"] > corr["two_level"] + 0.05, corr


def test_tilt_meets_the_marginals_the_proposals_can_reach(monkeypatch):
    """The max-entropy tilt: targets = the marginals of a known tilt of the proposals; the fitted weights
    give each card its target (within 0.04: the L2 term, TILT_L2, pulls theta toward 0; within 0.005 without
    it), where the untilted proposals miss by more than 0.1."""
    from meld8_env import belief
    from meld8_env.belief import _tilt

    rng = np.random.default_rng(0)
    x = (rng.random((400, 6)) < 0.3).astype(np.float64)
    theta = np.array([1.5, -1.0, 0.0, 0.8, -2.0, 0.3])
    w = np.exp(x @ theta)
    target = (w / w.sum()) @ x
    allowed = np.ones((20, 400), bool)
    p = _tilt(x, allowed, target)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert np.abs((p @ x).mean(axis=0) - target).max() < 0.04
    assert np.abs(x.mean(axis=0) - target).max() > 0.1
    monkeypatch.setattr(belief, "TILT_L2", 1e-4)
    assert np.abs((_tilt(x, allowed, target) @ x).mean(axis=0) - target).max() < 0.005
    allowed[:, ::2] = False  # worlds may take only some proposals: those are the only ones with weight
    p = _tilt(x, allowed, target)
    assert (p[~allowed] == 0).all()


@pytest.mark.parametrize("method", ["two_level", "learned"])
def test_sampled_locations_do_not_depend_on_the_truth(method):
    """chi-squared: for one decision state, 6 different truths (permutations of the hidden cards); where the
    sampler puts each hidden card (which opponent, or the wall) is independent of the truth (six cards,
    p > 1e-4 each)."""
    rules = RULES["3p"]
    recs = play_bot_states(rules, games=4, seed=9, max_states=120)
    r = recs[-1:]
    seat = int(r["acting"][0])
    rng = np.random.default_rng(5)
    info0 = infoset(r[0], seat, rules)
    cards = [c for c in range(53) if info0.pool >> c & 1][:6]
    places = ["wall", *[str(j) for j in info0.opponents]]
    table = np.zeros((6, len(cards), len(places)), np.int64)
    truth_place = []
    for t in range(6):
        twin = r.copy()
        permute_hidden(twin, seat, rules.num_players, rng)
        truth_place.append([next((str(j) for j in info0.opponents if int(twin["hands"][0, j]) >> c & 1), "wall")
                            for c in cards])  # fmt: skip
        info = infoset(twin[0], seat, rules)
        assert info.to_bytes() == info0.to_bytes()
        worlds, _ = sample_worlds(info, 400, np.random.default_rng(100 + t), method)
        for k, c in enumerate(cards):
            for j in info0.opponents:
                table[t, k, places.index(str(j))] += int(((worlds["hands"][:, j] >> np.uint64(c)) & 1).sum())
            table[t, k, 0] += 400 - table[t, k, 1:].sum()
    assert len({tuple(p) for p in truth_place}) > 1  # the truths differ
    # one test per card, Bonferroni over the six: family-wise false alarm 6e-4 (the cards share worlds, so
    # their statistics are dependent and cannot be summed into one chi-squared)
    for k in range(len(cards)):
        sub = table[:, k, :]
        sub = sub[:, sub.sum(axis=0) > 0]
        if sub.shape[1] > 1:
            assert chi2_contingency(sub).pvalue > 1e-4, (cards[k], sub)


def test_discard_order_is_the_order_play_made_them():
    """R11/R19: the global discard order rebuilt from the per-seat lists equals the order of the actions."""
    from meld8_env.belief import discard_order, passed_cards
    from meld8_env.engine.records import start_records

    for rules in RULES.values():
        recs = start_records(rules, np.arange(6, dtype=np.uint64) + 17)
        rs = np.arange(6, dtype=np.uint64) + 3
        acts = np.zeros(6, np.int64)
        made: list[list[tuple[int, int]]] = [[] for _ in range(6)]
        checked = 0
        for _ in range(600):
            live = recs["phase"] != Phase.OVER
            if not live.any():
                break
            _fast.random_legal(recs, rs, acts)
            a = np.where(live, acts, -1)
            before = recs.copy()
            step_records(rules, recs, a)
            for g in np.flatnonzero(live).tolist():
                if before["phase"][g] != Phase.CLAIM and a[g] < 52:
                    made[g].append((int(before["acting"][g]), int(a[g])))
                if recs["deals"][g] != before["deals"][g]:
                    made[g] = []
                elif recs["phase"][g] != Phase.OVER:
                    info = infoset(recs[g], 0, rules)
                    assert discard_order(info) == made[g]
                    checked += 1
                    j = info.opponents[0]
                    last = max((k for k, (p, _) in enumerate(made[g]) if p == j), default=-1)
                    assert passed_cards(info, j) == sum(1 << c for p, c in made[g][last + 1 :] if p != j)
        assert checked > 500


def test_bad_input_one_line():
    rules = RULES["3p"]
    recs = play_bot_states(rules, games=1, seed=1, max_states=3)
    info = infoset(recs[0], int(recs[0]["acting"]), rules)
    with pytest.raises(ValueError, match="method must be one of uniform, two_level"):
        sample_worlds(info, 4, np.random.default_rng(0), "magic")
    with pytest.raises(TypeError, match="takes an InfoSet"):
        sample_worlds(recs[0], 4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rules seat 2 players"):
        sample_worlds(info, 4, np.random.default_rng(0), rules=RULES["2p"])
    with pytest.raises(ValueError, match="method must be one of uniform, two_level, learned, got 'Learned'"):
        sample_worlds(info, 4, np.random.default_rng(0), "Learned")
    with pytest.raises(ValueError, match="use it with method two_level, not learned"):
        sample_worlds(info, 4, np.random.default_rng(0), "learned", last_discard=True)
    for n in (0, 2.5, "3", True):  # red team, session 32: 2.5 and "3" failed from deep inside
        with pytest.raises(ValueError, match="n must be an integer >= 1"):
            sample_worlds(info, n, np.random.default_rng(0), "learned")
    for rng in (None, 42, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
            sample_worlds(info, 4, rng)
    assert status_key(info, info.opponents[0])[1] in (0, 1)
    assert packed(rules)
