"""Conformance kit shipped with the package: invariants any Meld8 engine state must satisfy,
and a random-legal-play driver. Bots and engines are tested against the same contract.
"""

from __future__ import annotations

import random

from meld8_env.cards import JOKER


def check_invariants(game) -> None:
    """Raise AssertionError naming the broken invariant (STYLE.md lesson 10)."""
    P = game.P
    seen: list[int] = []
    for p in range(P):
        seen += [c for c in range(53) if game.hands[p] >> c & 1]
        seen += [c for c in range(53) if game.melds[p] >> c & 1]
        seen += [card for card, called in game.discards[p] if not called]
        assert all(card != JOKER for card, _ in game.discards[p]), f"seat {p} discarded the Joker (R12)"
        assert game.calls_used[p] <= 1, f"seat {p} called more than once this deal (R17)"
        assert bin(game.melds[p]).count("1") in (0, 3), f"seat {p} has a malformed meld"
    seen += game.wall[game.wall_pos :]
    assert sorted(seen) == list(range(53)), "the 53 cards are not all accounted for exactly once"
    assert sum(game.scores) == P * game.rules.starting_score, "scores are not zero-sum"
    if game.over:
        assert game.final_scores is not None and sum(game.final_scores) == P * game.rules.starting_score
        assert game.legal_actions() == [], "a finished game offers actions"
    else:
        assert game.legal_actions(), f"acting seat {game.acting_seat} has no legal action"


def play_random(game, rng: random.Random, check: bool = True, max_steps: int = 1_000_000) -> int:
    """Play uniformly random legal actions to the end; returns the number of steps."""
    steps = 0
    while not game.over and steps < max_steps:
        game.step(rng.choice(game.legal_actions()))
        steps += 1
        if check:
            check_invariants(game)
    return steps
