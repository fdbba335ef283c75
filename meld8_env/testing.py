"""Conformance kit shipped with the package: invariants any Meld8 engine state must satisfy,
and a random-legal-play driver. Bots and engines are tested against the same contract.
"""

from __future__ import annotations

import random

from meld8_env.cardmask import card_masks
from meld8_env.cards import JOKER, parse_cards
from meld8_env.codes import HAND_SIZE, Phase
from meld8_env.engine.reference import Game
from meld8_env.rules import RuleConfig


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


def scenario(
    hands: dict[int, str],
    wall: str,
    *,
    dealer: int = 0,
    rules=None,
    scores: list[int] | None = None,
    round_index: int = 0,
):
    """A reference ``Game`` set up so a test reads like the rule (RiichiEnv-style builder).

    ``hands``: concealed cards per seat (R4 notation, 7 each); ``wall``: the draw order from the
    dealer's first draw on (the remaining cards follow in id order). The dealer has drawn.
    """
    rules = rules or RuleConfig(starting_dealer=dealer)
    game = Game(rules.replace(starting_dealer=(dealer - round_index) % rules.num_players), seed=0)
    game.round = round_index
    if scores is not None:
        game.scores = list(scores)
    held = [parse_cards(hands.get(p, ""), count=HAND_SIZE) for p in range(game.P)]
    order = parse_cards(wall)
    used = {c for h in held for c in h} | set(order)
    if len(used) != HAND_SIZE * game.P + len(order):
        raise ValueError("scenario: a card appears twice among hands and wall")
    order += [c for c in range(53) if c not in used]
    game.hands = [sum(1 << c for c in h) for h in held]
    game.wall = order
    game.wall_pos = 0
    game.wall_end = len(order) - rules.wall_limit
    game.draws_taken = [0] * game.P
    game._draw(game.dealer)
    return game


def check_batch_invariants(state, rules) -> None:
    """The invariants of ``check_invariants`` over a fast-engine state array (vectorized)."""
    import numpy as np

    P = rules.num_players
    full = (1 << 53) - 1
    counts = np.zeros(len(state), np.int64)
    union = np.zeros(len(state), np.uint64)
    live = state["phase"] != Phase.OVER
    for p in range(P):
        for key in ("hands", "melds"):
            m = state[key][:, p]
            counts += np.bitwise_count(m)
            union |= m
        nd = state["ndisc"][:, p].astype(np.int64)
        slots = np.arange(state["discards"].shape[2])[None, :]
        used = slots < nd[:, None]
        disc = state["discards"][:, p, :]
        called = (state["called"][:, p][:, None] >> slots.astype(np.uint32)) & 1
        uncalled = used & (called == 0)
        assert not (used & (disc == 52)).any(), "a Joker was discarded (R12)"
        counts += uncalled.sum(axis=1)
        union |= np.bitwise_or.reduce(card_masks(np.where(uncalled, disc, -1)), axis=1)
        assert (state["calls_used"][:, p] <= 1).all(), "a seat called twice in a deal (R17)"
        assert np.isin(np.bitwise_count(state["melds"][:, p]), (0, 3)).all(), "a malformed meld"
    wall_left = state["wall_len"].astype(np.int64) - state["wall_pos"]
    counts += wall_left
    for i in np.flatnonzero(live):
        row = state[i]
        for c in row["wall"][row["wall_pos"] : row["wall_len"]]:
            union[i] |= np.uint64(1) << np.uint64(c)
    assert (counts[live] == 53).all() and (union[live] == np.uint64(full)).all(), (
        "the 53 cards are not all accounted for"
    )
    assert (state["scores"][:, :P].sum(axis=1) == P * rules.starting_score).all(), "scores are not zero-sum"
    assert ((state["mask"] != 0) == live).all(), "a live game without legal actions, or a finished one with some"
