"""The seat protocol's event stream (issue 10 groundwork): each seat's stream is derived from the
engine, leaks nothing hidden, and its requests and answers re-create the game exactly."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from meld8_env.engine.reference import Game
from meld8_env.protocol import PROTOCOL_VERSION, GameStreams
from meld8_env.rules import RuleConfig


def _play(g: GameStreams, policy) -> None:
    while (p := g.pending()) is not None:
        seat, req = p
        g.step(policy(seat, req))


def _random_policy(seed: int):
    rng = random.Random(seed)
    return lambda seat, req: rng.choice([a["id"] for a in req["actions"]])


@pytest.mark.parametrize("rules", [RuleConfig(), RuleConfig.two_player()], ids=["3p", "2p"])
def test_streams_follow_the_engine_and_recreate_the_game(rules):
    for seed in range(4):
        g = GameStreams(rules, seed=seed, game_id=f"g{seed}")
        _play(g, _random_policy(seed))
        # the answers re-create the game on the readable reference engine, to the same end
        ref = Game(rules, seed=seed)
        for a in g.answers:
            ref.step(a)
        ends = [e for e in g.streams[0] if e["type"] == "game_end"]
        assert ref.over and ends[0]["final_scores"] == ref.final_scores and ends[0]["placements"] == ref.placements
        # every stream is JSON, carries the game id, and settles every hand zero-sum
        for stream in g.streams:
            assert stream[0]["type"] == "game_start" and stream[0]["protocol"] == PROTOCOL_VERSION
            json.dumps(stream)
            assert all(e["game"] == f"g{seed}" for e in stream)
            settlements = [e for e in stream if e["type"] == "settlement"]
            assert len(settlements) == ref.deals and all(sum(e["payments"]) == 0 for e in settlements)
        # a seat's requests are exactly the decisions it was asked for
        asked = [sum(e["type"] == "request" for e in s) for s in g.streams]
        assert sum(asked) == len(g.answers)


def test_answers_by_name_and_illegal_answers():
    g = GameStreams(seed=3)
    seat, req = g.pending()
    first = req["actions"][0]
    g.step(first["name"])
    assert g.answers == [first["id"]]
    seat, req = g.pending()
    legal = {a["id"] for a in req["actions"]}
    with pytest.raises(ValueError, match="legal:"):
        g.step(next(a for a in range(64) if a not in legal))
    with pytest.raises(ValueError, match="unknown action name"):
        g.step("discard the joker")
    e_acute = "\u00e9"
    with pytest.raises(ValueError) as err:  # the bot's own name, quoted back cut short (red team, session 46)
        g.step(e_acute * 2020)
    assert f"unknown action name '{e_acute * 40}' (cut; 2,020 characters)" in str(err.value)


def test_a_line_cut_at_the_readers_bound_is_said_to_be_longer_not_of_its_cut_length():
    from meld8_env.protocol import MAX_LINE, ProtocolError, check_line

    with pytest.raises(ProtocolError, match=f"line of more than {MAX_LINE:,} bytes; the limit is {MAX_LINE}"):
        check_line(b"x" * (MAX_LINE + 1))
    with pytest.raises(ProtocolError, match=f"line of {MAX_LINE + 2:,} bytes"):
        check_line(b"x" * (MAX_LINE + 2))


def _visible_to(rec, observer: int, cards: set[int]) -> bool:
    """Whether a card of ``cards`` is legitimately visible to ``observer`` in this engine record:
    discarded or melded by anyone, in the observer's own hand, or in a hand shown by a win."""
    seen = int(rec["hands"][observer]) | int(np.bitwise_or.reduce(rec["melds"]))
    for p in range(len(rec["ndisc"])):
        seen |= sum(1 << int(c) for c in rec["discards"][p][: int(rec["ndisc"][p])])
    if int(rec["result"]) in (1, 2):  # Ron / Tsumo: the winning hand is shown
        seen |= int(rec["win_hand"])
    return any(seen >> c & 1 for c in cards)


def _play_blind(g: GameStreams, observer: int, cards: set[int]) -> int:
    """Seats other than ``observer`` play blind (their choices never depend on their hidden cards);
    the observer plays the lowest legal id. Returns the observer's stream length before the first
    step after which a card of ``cards`` is legitimately visible to it (judged on the engine)."""
    while (p := g.pending()) is not None:
        seat, req = p
        ids = [a["id"] for a in req["actions"]]
        before = len(g.streams[observer])
        if seat == observer:
            action = ids[-1] if 63 in ids else ids[0]
        else:
            drawn = next((e.get("card") for e in reversed(g.streams[seat]) if e["type"] == "draw"), None)
            names = {a["name"]: a["id"] for a in req["actions"]}
            action = 63 if 63 in ids else names.get(f"discard {drawn}", ids[0])
        g.step(action)
        # a discard is public even when it ends the hand (the record then already shows the next deal)
        if (req["phase"] != "claim" and action in cards) or _visible_to(g.engine.record(0), observer, cards):
            return before
    return len(g.streams[observer])


@pytest.mark.parametrize("seed", range(6))
def test_swapping_hidden_cards_changes_nothing_a_seat_sees_until_it_is_visible(seed):
    """Swap a card in another seat's hand with a card still in the wall: the observer's stream is
    identical until the engine shows one of the two cards to it (drawn, discarded, called, or won)."""
    # blind play rarely wins: cap replays so every game ends
    rules = RuleConfig(starting_dealer=0, rounds=2, min_yaku_han=(1, 1), max_replays=1)
    observer, other = 0, 2
    base = GameStreams(rules, seed=seed)
    start = base.engine.snapshot(slice(0, 1))
    rec = start[0]
    hand = [c for c in range(53) if int(rec["hands"][other]) >> c & 1 and c != 52]
    wall = [int(c) for c in rec["wall"][int(rec["wall_pos"]) : int(rec["wall_end"])]]
    x, y = hand[seed % len(hand)], wall[-1 - seed % 5]
    swapped = start.copy()
    swapped["hands"][0][other] = (int(rec["hands"][other]) & ~(1 << x)) | (1 << y)
    w = swapped["wall"][0]
    w[list(w).index(y)] = x
    a = GameStreams(rules, seed=seed, game_id=0, start=start)
    b = GameStreams(rules, seed=seed, game_id=0, start=swapped)
    cut = min(_play_blind(a, observer, {x, y}), _play_blind(b, observer, {x, y}))
    assert cut > 20, "the test needs a stretch of play before the cards show"
    assert a.streams[observer][:cut] == b.streams[observer][:cut]
