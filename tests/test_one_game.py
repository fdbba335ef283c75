"""One game on the fast engine (meld8_env.one_game): the seat handle and the one re-simulation, with the
reference engine as the differential oracle (R6-R44 through whole games)."""

import numpy as np
import pytest

from agents.greedy import GreedyAgent
from meld8_env.cards import format_cards, from_mask
from meld8_env.engine.fast import FastBatch
from meld8_env.engine.reference import Game
from meld8_env.one_game import ResimulationError, observe_seat, resimulate
from meld8_env.rules import RuleConfig

RULES = {  # random play draws most hands: a replay cap keeps the games short
    "3p": RuleConfig(max_replays=1),
    "2p": RuleConfig.load("configs/rules/two_player.yaml").replace(max_replays=1),
    "penalty": RuleConfig(penalty_mode=True, max_replays=1),
}


def _random_game(rules: RuleConfig, seed: int) -> list[int]:
    """Actions of one game: greedy play with one move in five uniformly random (seeded), so hands are
    won by Ron and Tsumo, drawn, and called."""
    eng = FastBatch(1, rules)
    eng.reset(np.array([seed], np.uint64))
    greedy, rng = GreedyAgent(rules), np.random.default_rng(seed)
    acts = []
    while not eng.over[0]:
        obs, mask = observe_seat(eng, int(eng.state[0]["acting"]))
        a = int(rng.choice(np.flatnonzero(mask))) if rng.random() < 0.2 else greedy.act(obs, mask)
        acts.append(a)
        eng.step(np.array([a], np.int64))
    return acts


def _where(rules_name: str, seed: int, k: int, game: Game) -> str:
    hands = "; ".join(f"seat {p}: {format_cards(from_mask(game.hands[p]))}" for p in range(game.P))
    return f"rules {rules_name} seed {seed} before action {k}: acting {game.acting_seat}, {hands}"


@pytest.mark.parametrize("rules_name", list(RULES))
def test_resimulate_equals_the_reference_engine(rules_name):
    rules = RULES[rules_name]
    n_hands = n_wins = 0
    for seed in range(4):
        acts = _random_game(rules, seed)
        got = resimulate(rules, seed, acts)
        ref = Game(rules, seed=seed)
        for k, a in enumerate(acts):
            v = got.view(k)
            where = _where(rules_name, seed, k, ref)
            assert (v.acting_seat, v.hands, v.scores) == (ref.acting_seat, ref.hands, ref.scores), where
            ref.step(a)
        assert got.over and ref.over
        assert (got.final_scores, got.placements, got.deals) == (ref.final_scores, ref.placements, ref.deals)
        assert len(got.hands) == len(ref.results), f"rules {rules_name} seed {seed}"
        for (_, h), r in zip(got.hands, ref.results, strict=True):
            assert h == r, f"rules {rules_name} seed {seed}: {h} != {r}"  # every field of the outcome
        n_hands += len(got.hands)
        n_wins += sum(h.is_win for _, h in got.hands)
    assert n_hands >= 8 and n_wins >= 4  # the games really settled hands, wins among them


def test_records_and_hand_indices_line_up():
    rules = RULES["3p"]
    acts = _random_game(rules, 3)
    game = resimulate(rules, 3, acts)
    assert len(game.records) == len(acts) + 1 and game.actions == tuple(acts)
    for i, h in game.hands:  # the action at i ended hand h: its record after it says so
        after = game.records[i + 1]
        assert int(after["result"]) == int(h.kind)
    assert game.result() == {"final_scores": game.final_scores, "placements": game.placements, "deals": game.deals}


def test_observe_seat_is_the_engine_observation_of_that_seat():
    rules = RULES["3p"]
    eng = FastBatch(4, rules)
    eng.reset(np.arange(4, dtype=np.uint64) + 11)
    for _ in range(30):
        for g in range(4):
            for seat in range(3):
                obs, mask = observe_seat(eng, seat, index=g)
                want_obs = np.empty((1, eng.obs_size), np.uint8)
                want_mask = np.empty((1, 64), np.uint8)
                eng.observe_index(np.array([g]), np.array([seat], np.int8), want_obs, want_mask)
                assert obs.shape == (eng.obs_size,) and mask.dtype == bool
                assert np.array_equal(obs, want_obs[0]) and np.array_equal(mask, want_mask[0].astype(bool))
                o2, m2 = observe_seat(eng, seat, record=eng.state[g].copy())  # a record outside the batch
                assert np.array_equal(o2, obs) and np.array_equal(m2, mask)
        acts = np.empty(4, np.int64)
        eng.random_legal(np.arange(4, dtype=np.uint64) + 5, acts)
        eng.step(acts)


def test_actions_the_game_does_not_accept_are_one_line_errors():
    rules = RULES["3p"]
    acts = _random_game(rules, 1)
    bad = list(acts)
    eng = FastBatch(1, rules)
    eng.reset(np.array([1], np.uint64))
    legal = set(eng.legal_actions(0))
    with pytest.raises(ResimulationError, match=r"^action 0: .*legal") as exc:
        resimulate(rules, 1, [next(a for a in range(64) if a not in legal)])
    assert "\n" not in str(exc.value)
    with pytest.raises(ResimulationError, match=f"action {len(bad)}: the game is already over"):
        resimulate(rules, 1, bad + [0])
    assert not resimulate(rules, 1, acts[:10]).over  # a prefix: no outcome yet
