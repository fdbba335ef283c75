"""Meld8Vector: shapes, illegal actions, autoreset, seeds, rewards."""

import numpy as np
import pytest

from meld8_env.engine.reference import IllegalActionError
from meld8_env.rules import RuleConfig
from meld8_env.vector import Meld8Vector

SHORT = RuleConfig(rounds=1, min_yaku_han=(1,), max_replays=0)


def test_shapes_after_reset():
    v = Meld8Vector(8, seed=1)
    v.reset()
    assert v.observation.shape == (8, v.obs_size) and v.observation.dtype == np.uint8
    assert v.action_mask.shape == (8, 64) and v.action_mask.dtype == bool
    assert v.current_seat.shape == (8,) and v.rewards.shape == (8, 3)
    assert v.action_mask.any(axis=1).all()


def test_illegal_action_raises_and_no_game_moves():
    v = Meld8Vector(4, seed=2)
    v.reset()
    before = v.engine.state.copy()
    acts = v.sample_actions()
    acts[2] = 52 if not v.action_mask[2, 52] else 63
    with pytest.raises(IllegalActionError, match=r"game 2: illegal action .* legal: "):
        v.step(acts)
    assert all(np.array_equal(v.engine.state[f], before[f]) for f in before.dtype.names)


def test_autoreset_same_step_and_final_scores():
    v = Meld8Vector(16, rules=SHORT, seed=3)
    v.reset()
    seen = 0
    for _ in range(2000):
        v.step(v.sample_actions())
        for i in np.flatnonzero(v.terminated):
            seen += 1
            assert v.final_scores[i].sum() == 90_000
            assert v.action_mask[i].any()  # already the next game's first observation
        if seen >= 10:
            break
    assert seen >= 10
    assert len(set(v.seeds.tolist())) == 16 and v.seeds.max() >= 16 + 3


def test_no_autoreset_keeps_game_over():
    v = Meld8Vector(2, rules=SHORT, seed=4, autoreset=False)
    v.reset()
    for _ in range(5000):
        if v.engine.over.all():
            break
        v.step(v.sample_actions())  # a finished game's action (0) is ignored
    assert v.engine.over.all() and not v.action_mask.any()
    v.step(np.zeros(2, np.int64))  # still fine: nothing moves
    v.reset()
    assert v.action_mask.any(axis=1).all()


def test_returns_sum_to_score_change():
    v = Meld8Vector(32, rules=SHORT, seed=5)
    v.reset()
    total = np.zeros((32, 3))
    done = np.zeros(32, bool)
    finals = np.zeros((32, 3))
    for _ in range(5000):
        v.step(v.sample_actions())
        total[~done] += v.rewards[~done]
        newly = v.terminated & ~done
        finals[newly] = v.final_scores[newly]
        done |= v.terminated
        if done.all():
            break
    assert done.all()
    assert np.allclose(total, (finals - 30_000) / 10_000, atol=1e-4)
    assert np.allclose(total.sum(axis=1), 0, atol=1e-4)


def test_same_seed_same_run():
    runs = []
    for _ in range(2):
        v = Meld8Vector(8, seed=9)
        v.reset()
        obs = []
        for _ in range(50):
            v.step(v.sample_actions())
            obs.append(v.observation.copy())
        runs.append(np.stack(obs))
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("players", [3, 2])
def test_shaping_is_potential_based_it_sums_to_the_first_hands_distance(players):
    """shaping=c adds each seat's change of -c * distance to win; an ended game has potential 0, so over
    a game a seat's shaped return minus its plain return is c * the distance of its first hand, whatever
    was played (autoreset on: the games that replace ended ones are not counted)."""
    from meld8_env.hands import distance_batch

    rules = SHORT if players == 3 else RuleConfig.from_dict({**RuleConfig.two_player().to_dict(), "max_replays": 0})
    c, n = 0.05, 24
    plain, shaped = Meld8Vector(n, rules=rules, seed=11), Meld8Vector(n, rules=rules, seed=11, shaping=c)
    plain.reset()
    shaped.reset()
    st = shaped.engine.state
    hands, melds = st["hands"][:, :players].reshape(-1), st["melds"][:, :players].reshape(-1)
    first = distance_batch(hands, melds).reshape(n, players).astype(float)
    assert (first > 0).all()
    diff, done = np.zeros((n, players)), np.zeros(n, bool)
    rng = np.random.default_rng(0)
    steps_with_shaping = 0
    for _ in range(20000):
        acts = plain.sample_actions(rng)
        plain.step(acts)
        shaped.step(acts)  # same seeds, same actions: the same games
        assert np.array_equal(plain.observation, shaped.observation)
        d = shaped.rewards - plain.rewards
        steps_with_shaping += int(np.abs(d[~done]).sum() > 1e-6)
        diff[~done] += d[~done]
        done |= plain.terminated
        if done.all():
            break
    assert done.all() and steps_with_shaping > 20  # shaping paid along the way, not only at the end
    assert np.allclose(diff, c * first, atol=1e-4), f"shaping sums {diff[:3]} != c * first distances {first[:3]}"


def test_shaping_options_are_checked():
    for bad in (-0.1, 1.5, "a lot"):
        with pytest.raises(ValueError, match="shaping must be a number"):
            Meld8Vector(2, shaping=bad)


@pytest.mark.parametrize(
    "index, seeds, says",
    [
        ([-1], [5], r"index must hold game positions 0\.\.2, got -1"),  # started the last game
        ([0, 0], [5, 6], "index names a game twice"),
        (np.array([0.9]), [5], "index must be a 1-D array of game positions"),  # started game 0
        ([0], [-1], r"seeds must be integers 0\.\.2\*\*63, got -1"),  # became 2**64 - 1
        ([0], np.array([1.7]), "seeds must be integers .* got dtype float64"),  # became 1
        ([0], [2**64], r"seeds must be integers 0\.\.2\*\*63"),
        ([0, 1], [5], "give one seed per game"),
    ],
)
def test_start_games_refuses_positions_and_seeds_it_used_to_cast(index, seeds, says):
    # red team, session 32: each of these was cast silently (a negative seed wrapped, a float index truncated)
    v = Meld8Vector(3, seed=1)
    v.reset()
    before = v.seeds.copy()
    with pytest.raises(ValueError, match=says):
        v.start_games(index, seeds)
    assert (v.seeds == before).all()  # nothing started
    v.start_games([], [])  # no games: numpy reads [] as float64, which is still nothing to refuse


def test_sampled_games_are_the_same_in_any_batch_and_after_a_reset_with_the_same_seed():
    """Seeds audit, session 35: sample_actions drew from one stream per slot, never restarted, so the game seeded
    S + i played differently in a batch of 4 and a batch of 1, a reset(seed=S) replayed other games, and `meld8
    simulate --batch` changed its statistics. Each game now samples from a stream started at its seed."""
    from meld8_env.vector import Meld8Vector

    def play(vec: Meld8Vector, seed: int) -> dict[int, tuple[int, list[int]]]:
        vec.reset(seed=seed)
        steps, out = np.zeros(vec.num_envs, int), {}
        while len(out) < vec.num_envs:
            steps[[i for i in range(vec.num_envs) if int(vec.seeds[i]) not in out]] += 1
            vec.step(vec.sample_actions())
            for g in vec.game_outcomes():
                out.setdefault(int(g.seed), (int(steps[g.game]), list(g.final_scores)))
        return out

    batch = play(Meld8Vector(4, seed=100, autoreset=False), 100)
    one = Meld8Vector(1, seed=100, autoreset=False)
    for s in range(100, 104):
        assert play(Meld8Vector(1, seed=s, autoreset=False), s)[s] == batch[s]
    assert play(one, 100) == play(one, 100)  # the same vector, reset with the same seed: the same game


def test_a_batch_seeded_near_the_top_plays_only_seeds_a_single_game_accepts():
    """Seeds audit, session 35: a batch seeded within B of 2**63 played seeds above 2**63, which no single game
    (and no ``start_games``) accepts; the seeds now wrap to 0, and each game is still the single game of its seed."""
    top = 2**63
    v = Meld8Vector(3, seed=top - 1)
    v.reset()
    assert v.seeds.tolist() == [top - 1, top, 0]
    for i, s in enumerate(v.seeds.tolist()):
        one = Meld8Vector(1, seed=s)
        one.reset()
        assert np.array_equal(v.observation[i], one.observation[0]), f"game {i} (seed {s}) differs from its single game"
    # later games go on from the wrapped seed
    rng = np.random.default_rng(0)
    for _ in range(50_000):
        v.step(v.sample_actions(rng))
        if v.ended_index.size:
            break
    assert v.ended_index.size, "no game ended in 50,000 steps"
    assert set(v.seeds.tolist()) <= {top - 1, top, 0, 1, 2, 3}
