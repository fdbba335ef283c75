"""Twins agree: the belief sampler's C core (meld8_env/_belief.c) against its numpy twin (meld8_env/belief.py).

The core replays the caller's numpy PCG64 stream in the twin's order, so on the same information set and the
same generator state both must give the same hidden hands (R33 status draws included), the same wall order,
the same count of missed statuses, and leave the generator in the same state. A mismatch prints the
information set in R4 notation. Decision states come from real bot games, 3p and 2p, every seat's view.
"""

from __future__ import annotations

import numpy as np
import pytest

from meld8_env import belief, hands
from meld8_env.cards import mask_str
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from training.bot_states import play_bot_states

pytestmark = pytest.mark.skipif(belief._core is None, reason="the C core is not built")
RULES = {"3p": RuleConfig(), "2p": RuleConfig.two_player()}


def describe(info) -> str:
    """One information set in R4 notation (what the sampler reads)."""
    discards = " / ".join(" ".join(mask_str(1 << c) for c in d) or "-" for d in info.discards)
    melds = " / ".join(mask_str(m) or "-" for m in info.melds)
    return (
        f"seat {info.seat} hand {mask_str(info.hand)} melds {melds} discards {discards} "
        f"hidden {info.hidden} pool {mask_str(info.pool)} wall left {info.wall_left}"
    )


def infosets(rules: RuleConfig, games: int, seed: int, drawing: bool = False) -> list:
    """Every seat's view of bot-game states; ``drawing``: also the views where an opponent holds its drawn
    card (8 or 5 cards: two_level's waits do not exist there, so only ``uniform`` takes the core on them)."""
    recs = play_bot_states(rules, games=games, seed=seed)
    out = []
    for r in recs:
        for seat in range(rules.num_players):  # every seat's view, not only the acting one's
            info = infoset(r, seat, rules)
            if info.pool and (drawing or all(h in (0, 4, 7) for h in info.hidden)):
                out.append(info)
    return out


@pytest.mark.parametrize("name", list(RULES))
def test_core_equals_numpy_twin(name):
    rules = RULES[name]
    infos = infosets(rules, games=6 if name == "3p" else 14, seed=17, drawing=True)[::3]
    assert len(infos) >= 300
    assert any(h in (5, 8) for info in infos for h in info.hidden)  # a drawing opponent's view is among them
    compared = missed = 0
    for i, info in enumerate(infos):
        for method, n, tries in (("two_level", 16, 96), ("two_level", 5, 3), ("uniform", 16, 96), ("two_level", 1, 1)):
            if not belief.use_core(info, method, np.random.default_rng(0)):
                continue
            r1, r2 = np.random.default_rng([i, n]), np.random.default_rng([i, n])
            r1.random(i % 3)  # start the streams mid-way (a buffered half-word too, below)
            r2.random(i % 3)
            if i % 5 == 0:
                r1.integers(0, 7, dtype=np.uint32)
                r2.integers(0, 7, dtype=np.uint32)
            c = belief._sample_core(info, n, r1, method, tries)
            p = belief._sample_numpy(info, n, r2, method, tries, False, False)
            where = f"{method} n={n} tries={tries}: {describe(info)}"
            assert np.array_equal(c[0], p[0]), f"hands differ, {where}"
            assert np.array_equal(c[1], p[1]), f"walls differ, {where}"
            assert c[2] == p[2], f"missed {c[2]} vs {p[2]}, {where}"
            assert r1.bit_generator.state == r2.bit_generator.state, f"generator left apart, {where}"
            compared += 1
            missed += c[2]
    assert compared >= 1000 and missed > 0  # the tries=3 / 1 rows exercise the "no proposal matched" branch


def test_sample_worlds_records_are_the_same_with_or_without_the_core(monkeypatch):
    rules = RULES["3p"]
    infos = infosets(rules, games=2, seed=5)[::7][:60]

    def sample(k: int, info) -> np.ndarray:
        return belief.sample_worlds(info, 8, np.random.default_rng(k), rules=rules)[0]

    with_core = [sample(k, info) for k, info in enumerate(infos)]
    monkeypatch.setattr(belief, "_core", None)
    twin = [sample(k, info) for k, info in enumerate(infos)]
    for k, (a, b) in enumerate(zip(with_core, twin, strict=True)):
        for field in STATE_DTYPE.names:
            assert np.array_equal(a[field], b[field]), f"state {k} field {field}: {describe(infos[k])}"


def test_other_generators_flags_and_the_python_backend_use_the_twin():
    info = infosets(RULES["3p"], games=1, seed=3)[10]
    assert belief.use_core(info, "two_level", np.random.default_rng(1))
    before = hands.BACKEND
    hands.set_backend("python")  # switched at run time: the sampler must follow (it reads the backend per call)
    try:
        assert not belief.use_core(info, "two_level", np.random.default_rng(1))
    finally:
        hands.set_backend(before)
    assert not belief.use_core(info, "two_level", np.random.Generator(np.random.MT19937(1)))
    assert not belief.use_core(info, "two_level", np.random.default_rng(1), no_pass=True)
    assert not belief.use_core(info, "learned", np.random.default_rng(1))
    worlds, _ = belief.sample_worlds(info, 4, np.random.Generator(np.random.MT19937(1)))  # still samples
    assert len(worlds) == 4
    for bad in (0, -3, 5000, 2.5):  # the same one-line refusal on both paths, before either runs
        with pytest.raises(ValueError, match="tries must be an integer 1..4096"):
            belief.sample_worlds(info, 4, np.random.default_rng(1), tries=bad)


def test_core_refuses_inconsistent_arguments_in_one_line():
    words = np.zeros(6, np.uint64)
    pool = np.arange(10, dtype=np.int8)
    h, p = np.array([7], np.int32), np.array([0.5])
    f = m = np.zeros(1, np.uint64)
    with pytest.raises(ValueError, match="cannot hold"):
        belief._core.sample(words, pool, 2, 4, 0, np.array([7, 7], np.int32), np.full(2, 0.5), np.zeros(2, np.uint64),
                            np.zeros(2, np.uint64), np.zeros((2, 2), np.uint64), np.zeros((2, 0), np.int8))  # fmt: skip
    with pytest.raises(ValueError, match="inconsistent argument sizes"):
        belief._core.sample(words, pool, 2, 4, 0, h, p, f, m, np.zeros((3, 1), np.uint64), np.zeros((2, 3), np.int8))
    with pytest.raises(ValueError, match="hidden hand sizes must be 1..8"):
        belief._core.sample(words, pool, 2, 4, 0, np.array([9], np.int32), p, f, m, np.zeros((2, 1), np.uint64),
                            np.zeros((2, 1), np.int8))  # fmt: skip
    with pytest.raises(ValueError, match="pool entry 1 is 0, expected distinct card ids 0..52"):
        belief._core.sample(words, np.zeros(10, np.int8), 2, 4, 0, h, p, f, m, np.zeros((2, 1), np.uint64),
                            np.zeros((2, 3), np.int8))  # fmt: skip
    with pytest.raises(ValueError, match="n=0 must be 1..65536 and tries=4 1..4096"):
        belief._core.sample(words, pool, 0, 4, 0, h, p, f, m, np.zeros((0, 1), np.uint64), np.zeros((0, 3), np.int8))
    with pytest.raises(ValueError, match=r"words has items of 4 bytes, expected 8 \(uint64\)"):
        belief._core.sample(words.astype(np.uint32), pool, 2, 4, 0, h, p, f, m, np.zeros((2, 1), np.uint64),
                            np.zeros((2, 3), np.int8))  # fmt: skip
    # the right size but the wrong kind: a uint64 where the ready priors (float64) belong, a uint8 pool, and
    # float64 priors in the other byte order (read as they are, they would be garbage)
    with pytest.raises(ValueError, match="opp_p has items of format '[LQ]', expected native-order float64"):
        belief._core.sample(words, pool, 2, 4, 0, h, np.zeros(1, np.uint64), f, m, np.zeros((2, 1), np.uint64),
                            np.zeros((2, 3), np.int8))  # fmt: skip
    with pytest.raises(ValueError, match="pool has items of format 'B', expected native-order int8"):
        belief._core.sample(words, pool.view(np.uint8), 2, 4, 0, h, p, f, m, np.zeros((2, 1), np.uint64),
                            np.zeros((2, 3), np.int8))  # fmt: skip
    swapped = p.astype(p.dtype.newbyteorder())
    with pytest.raises(ValueError, match="opp_p has items of format '[<>]d', expected native-order float64"):
        belief._core.sample(words, pool, 2, 4, 0, h, swapped, f, m, np.zeros((2, 1), np.uint64),
                            np.zeros((2, 3), np.int8))  # fmt: skip
