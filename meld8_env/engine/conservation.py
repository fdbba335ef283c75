"""The readable Python twin of the C card-conservation check (``_state.c``, ``records.check_conservation``).

``card_problem(record, rules) -> str | None`` walks one engine record the way ``eng_check_cards`` does,
after its range checks and before its cache checks, and returns the same one-line reason (cards in R4
notation) or None. ``tests/test_state_records.py`` compares the two on many mutated records from bot games.
The cache part of the C check (claim window and mask equal what the engine computes from the hands) has no
separate twin: it is the engine's own computation, and its test is the refresh test.
"""

from __future__ import annotations

import numpy as np

from meld8_env.cards import card_str
from meld8_env.codes import HAND_SIZE, MAX_PLAYERS, N_CARDS, Phase
from meld8_env.rules import RuleConfig

PLACE = ("hand", "meld", "discards", "wall")


def _name(c: int) -> str:
    return card_str(c) if 0 <= c < N_CARDS else f"#{c}"


def card_problem(record: np.void, rules: RuleConfig) -> str | None:
    """Why ``record`` breaks card conservation or the per-seat counts (None: it does not)."""
    P = rules.num_players
    phase = int(record["phase"])
    if phase == Phase.OVER:
        return None
    where: dict[int, tuple[int, int]] = {}  # card -> (place, seat)

    def put(c: int, k: int, s: int) -> str | None:
        if c in where:
            k0, s0 = where[c]
            if k0 == 3 and k == 3:
                return f"card {_name(c)} is twice in the wall"
            if k0 == 3:
                return f"card {_name(c)} is in seat {s}'s {PLACE[k]} and in the wall"
            if k == 3:
                return f"card {_name(c)} is in seat {s0}'s {PLACE[k0]} and in the wall"
            return f"card {_name(c)} is in seat {s0}'s {PLACE[k0]} and in seat {s}'s {PLACE[k]}"
        where[c] = (k, s)
        return None

    hands = [int(x) for x in record["hands"]]
    melds = [int(x) for x in record["melds"]]
    ndisc = [int(x) for x in record["ndisc"]]
    for p in range(MAX_PLAYERS):
        if p >= P:
            if hands[p] or melds[p] or ndisc[p]:
                return f"seat {p} holds cards but the rules seat {P} players"
            continue
        if (hands[p] | melds[p]) >> N_CARDS:
            return f"seat {p}'s hand or meld has bits above card 52"
        for k, m in ((0, hands[p]), (1, melds[p])):
            for c in range(N_CARDS):
                if m >> c & 1 and (why := put(c, k, p)):
                    return why
    for p in range(P):
        for i in range(ndisc[p]):
            c = int(record["discards"][p][i])
            if not 0 <= c < N_CARDS:
                return f"seat {p}'s discard {i} is not a card ({c})"
            if c == N_CARDS - 1:
                return f"the Joker (JK) is in seat {p}'s discards (R12)"
            if int(record["called"][p]) >> i & 1:
                if c not in where or where[c][0] != 1 or where[c][1] == p:
                    return f"seat {p}'s discard {_name(c)} is marked called but is in no other seat's meld"
                continue
            if why := put(c, 2, p):
                return why
    pos, end, length = int(record["wall_pos"]), int(record["wall_end"]), int(record["wall_len"])
    if pos > end or end > length or length > N_CARDS:
        return f"wall positions out of order (pos {pos}, end {end}, len {length})"
    for i in range(pos, length):
        c = int(record["wall"][i])
        if not 0 <= c < N_CARDS:
            return f"wall slot {i} is not a card ({c})"
        if why := put(c, 3, -1):
            return why
    ncalled = sum((int(record["called"][p]) & ((1 << ndisc[p]) - 1)).bit_count() for p in range(P))
    nmelds = sum(m != 0 for m in melds[:P])
    if ncalled != nmelds:
        return f"{ncalled} discards are marked called but {nmelds} seats have a meld"
    for c in range(N_CARDS):
        if c not in where:
            return f"card {_name(c)} is nowhere (not in a hand, meld, discard or the wall)"
    cur = int(record["current"])
    if not 0 <= cur < P:
        return f"no current seat in a live game (current {cur})"
    holding = phase in (Phase.DRAW, Phase.CALL_DISCARD)
    for p in range(P):
        nm = melds[p].bit_count()
        n = hands[p].bit_count() + nm
        want = HAND_SIZE + (holding and p == cur)
        if nm not in (0, 3):
            return f"seat {p}'s meld has {nm} cards (R19: 3)"
        if nm and not int(record["calls_used"][p]):
            return f"seat {p} has a meld but no call recorded"
        if n != want:
            return f"seat {p} holds {n} cards, the {Phase(phase).label} phase needs {want}"
    drawn = int(record["drawn"])
    if phase == Phase.DRAW and drawn >= 0 and not hands[cur] >> drawn & 1:
        return f"the drawn card {_name(drawn)} is not in seat {cur}'s hand"
    return None
