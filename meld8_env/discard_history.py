"""The deal's public discard history, rebuilt from one seat's information set.

``discard_order(info) -> [(seat, card), ...]``: every discard of the deal in the order it was made;
``passed_cards(info, j) -> int``: the mask of the cards other seats discarded after ``j``'s last discard (``j``
saw each of them holding the hand it holds now, and did not Ron it). Both read ``meld8_env.infoset.InfoSet``
only. The belief sampler (``no_pass``) and the wait model's features use them.
"""

from __future__ import annotations

from meld8_env.codes import N_CARDS
from meld8_env.infoset import InfoSet

__all__ = ["discard_order", "passed_cards"]


def discard_order(info: InfoSet) -> list[tuple[int, int]]:
    """The deal's discards in the order they were made, as (seat, card): rebuilt from the per-seat lists,
    since the turn order is fixed by the calls (R11: the next seat draws; R19: a caller discards at once and
    its shimocha draws next). A called discard is found in the caller's meld."""
    P = info.num_players
    left = [list(d) for d in info.discards]
    called_by = {c: p for p in range(P) for c in range(N_CARDS) if info.melds[p] >> c & 1}
    order: list[tuple[int, int]] = []
    seat, pos = info.dealer, [0] * P
    while pos[seat] < len(left[seat]):
        i = pos[seat]
        card = left[seat][i]
        pos[seat] += 1
        order.append((seat, card))
        caller = called_by.get(card) if info.called[seat] >> i & 1 else None
        seat = caller if caller is not None else (seat + 1) % P
    return order


def passed_cards(info: InfoSet, j: int) -> int:
    """Mask of the cards other seats discarded after ``j``'s last discard: ``j`` saw each of them holding the
    hand it holds now and did not Ron it (a called one included: Ron beats a call, R21)."""
    j = info.opponent(j)  # None, 3 and 1.5 gave the same mask as any seat that never discarded
    order = discard_order(info)
    last = max((k for k, (p, _) in enumerate(order) if p == j), default=-1)
    m = 0
    for p, c in order[last + 1 :]:
        if p != j:
            m |= 1 << c
    return m
