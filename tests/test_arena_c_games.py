"""The arena's whole-game C path (``meld8_env.rollout.play_games``) against its twin, the arena's lockstep loop.

A lineup of built-in bots (greedy, defensive, random) plays its games in C; every other lineup is stepped one
action at a time through the ``Table``. Both must give the same ``GameRecord`` of every game (actions, final
scores, placements, per-seat counts: issue 20's "identical results.json with either path") and hand the records
to ``on_game`` in the same order (a tournament's log lines), for 3 and 2 players, penalty mode and batches
smaller and larger than the games.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agents.defensive import DefensiveAgent, DefensiveLiteAgent
from agents.greedy import GreedyAgent, GreedyLiteAgent
from agents.registry import load_agent
from meld8_env.policies import SeatPolicy
from meld8_env.rollout import play_games
from meld8_env.rules import RuleConfig
from training import arena


def lineup(rules: RuleConfig, names=("greedy", "defensive", "random")) -> list:
    """Agents by spec name, or by class (the lite bots have no spec of their own)."""
    return [load_agent(n, rules, seed=i + 3) if isinstance(n, str) else n(rules, i + 3) for i, n in enumerate(names)]


def games(rules: RuleConfig, boards: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    P = rules.num_players
    perms = np.array(list(itertools.permutations(range(P))))
    seats = np.tile(perms, (boards, 1))
    seeds = np.repeat(np.arange(boards, dtype=np.int64) * 7919 + seed, len(perms))
    return seats, seeds


def both_paths(monkeypatch, rules, names, seats, seeds, batch, threads=1):
    got = {}
    for label in ("c", "lockstep"):
        order: list[int] = []
        with monkeypatch.context() as m:
            if label == "lockstep":
                m.setattr(arena, "c_lineup", lambda agents: None)
            recs = arena.play(lineup(rules, names), seats, seeds, rules, batch=batch, threads=threads,
                              on_game=lambda g, r, order=order: order.append(g))  # fmt: skip
        got[label] = ([r.to_json() for r in recs], order)
    return got


@pytest.mark.parametrize(
    ("rules", "names", "boards", "batch", "threads"),
    [
        (RuleConfig(), ("greedy", "defensive", "random"), 3, 5, 1),
        (RuleConfig(), ("random", "random", "greedy"), 16, 9, 2),
        (RuleConfig(), ("greedy", "defensive", "random"), 2, 64, 3),
        (RuleConfig(), (GreedyLiteAgent, DefensiveLiteAgent, "random"), 2, 7, 2),
        (RuleConfig(penalty_mode=True), ("defensive", "random", "greedy"), 2, 4, 1),
        (RuleConfig.two_player(), ("greedy", "random"), 4, 3, 2),
        (RuleConfig.two_player(penalty_mode=True), ("defensive", "greedy"), 3, 2, 1),
    ],
)
def test_c_games_equal_the_lockstep_arena(monkeypatch, rules, names, boards, batch, threads):
    seats, seeds = games(rules, boards, seed=41)
    assert arena.c_lineup(lineup(rules, names)) is not None  # this lineup takes the C path by default
    got = both_paths(monkeypatch, rules, names, seats, seeds, batch, threads)
    c_recs, c_order = got["c"]
    l_recs, l_order = got["lockstep"]
    for g, (a, b) in enumerate(zip(c_recs, l_recs, strict=True)):
        assert a == b, f"game {g} (seed {seeds[g]}, seats {seats[g].tolist()}): C {a} != lockstep {b}"
    assert c_order == l_order  # on_game in the same order: the same log
    assert sum(r["hands"] for r in c_recs) > len(c_recs)  # real games of several hands


def test_long_games_are_played_again_with_a_larger_buffer(monkeypatch):
    """A game longer than the first action buffer is replayed from its seed with 4x the buffer (here every game
    is: a first buffer of 8 actions), and the records still equal the lockstep arena's."""
    from meld8_env import rollout

    monkeypatch.setattr(rollout, "FIRST_ACTIONS", 8)
    rules = RuleConfig()
    seats, seeds = games(rules, 2, seed=43)
    got = both_paths(monkeypatch, rules, ("greedy", "defensive", "random"), seats, seeds, batch=5, threads=2)
    assert got["c"] == got["lockstep"]
    assert min(len(r["actions"]) for r in got["c"][0]) > 8 * 4 * 4 // 3  # base64 of more than 32 actions: replayed


def test_finish_order_follows_the_lockstep_slots():
    # two slots: games 0 (5 steps) and 1 (2) start together; 1 ends first, its slot starts 2 (2 steps: ends at 4),
    # then 3 starts there (1 step: ends at 5, same step as game 0, but in slot 1 after slot 0)
    assert list(arena.finish_order([5, 2, 2, 1], 2)) == [1, 2, 0, 3]
    assert list(arena.finish_order([3, 3, 3], 1)) == [0, 1, 2]
    assert list(arena.finish_order([], 4)) == []
    assert list(arena.finish_order([2, 1], 8)) == [1, 0]


def test_other_lineups_and_the_python_backend_take_the_lockstep_path(monkeypatch):
    rules = RuleConfig()

    class Tweaked(GreedyAgent):  # a subclass runs its own Python: never replaced by the C policy
        pass

    assert arena.c_lineup([Tweaked(rules), *lineup(rules)[1:]]) is None
    other = DefensiveAgent(rules)
    other.late_wall = 6  # thresholds the C twin does not know: its Python decides
    assert arena.c_lineup([other, *lineup(rules)[1:]]) is None
    assert arena.c_lineup([load_agent("ppo", rules), *lineup(rules)[1:]]) is None
    from meld8_env import hands

    monkeypatch.setattr(hands, "BACKEND", "python")
    assert arena.c_lineup(lineup(rules)) is None


def test_play_games_refuses_bad_input_in_one_line():
    rules = RuleConfig()
    seeds = np.arange(2, dtype=np.uint64)
    seats = np.array([[0, 1, 2], [2, 1, 0]])
    pols = [SeatPolicy("greedy"), SeatPolicy("defensive"), SeatPolicy("greedy")]
    with pytest.raises(ValueError, match="seats must index the 3 policies"):
        play_games(rules, seeds, pols, seats + 1)
    with pytest.raises(ValueError, match="seats"):
        play_games(rules, seeds, pols, seats[:, :2])
    with pytest.raises(ValueError, match="needs weights of shape"):
        play_games(rules, seeds, [SeatPolicy("random"), *pols[1:]], seats)
    with pytest.raises(ValueError, match="cannot play an arena seat"):
        play_games(rules, seeds, [SeatPolicy("oracle"), *pols[1:]], seats)
    with pytest.raises(ValueError, match="unknown policy"):
        play_games(rules, seeds, [SeatPolicy("clever"), *pols[1:]], seats)
    with pytest.raises(TypeError, match="SeatPolicy"):
        play_games(rules, seeds, ["greedy", "defensive", "greedy"], seats)
    with pytest.raises(RuntimeError, match="did not end within 5 actions"):
        play_games(rules, seeds, pols, seats, max_actions=5)
    res = play_games(rules, seeds, pols, seats, threads=2)
    one = play_games(rules, seeds, pols, seats, threads=1)
    assert res.actions == one.actions and np.array_equal(res.final_scores, one.final_scores)
    assert sorted(res.placements[0].tolist()) == [1, 2, 3]
