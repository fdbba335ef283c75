"""Text rendering of the table as one player sees it; discards wrap every 6 cards (R13)."""

from __future__ import annotations

from meld8_env.cards import card_str
from meld8_env.codes import PHASE_NAMES

ROW = 6


def _cards(mask: int) -> str:
    return " ".join(card_str(c) for c in range(53) if mask >> c & 1) or "-"


def render_table(game, seat: int) -> str:
    """The table from ``seat``'s point of view: own hand, every meld and discard row, dora, scores."""
    lines = []
    if game.over:
        lines.append(f"game over - final scores {game.final_scores}, placements {game.placements}")
        return "\n".join(lines)
    lines.append(
        f"round {game.round + 1}/{game.rules.rounds}  replay {game.replays}  dealer seat {game.dealer}  "
        f"wall {game.wall_left}  dora indicator {card_str(game.dora_indicator) if game.dora_indicator >= 0 else '-'}"
    )
    for k in range(game.P):
        p = (seat + k) % game.P
        tag = "you" if p == seat else f"seat {p}"
        lines.append(f"[{tag}] score {game.scores[p]}  meld {_cards(game.melds[p]) if game.melds[p] else '-'}")
        disc = [card_str(c) + ("*" if called else "") for c, called in game.discards[p]]
        for i in range(0, max(len(disc), 1), ROW):
            lines.append("    discards " + (" ".join(disc[i : i + ROW]) or "-"))
    lines.append(f"your hand: {_cards(game.hands[seat])}")
    actor = game.acting_seat
    what = PHASE_NAMES[game.phase]
    if game.claim is not None:
        what += f" on {card_str(game.claim.card)} from seat {game.claim.discarder}"
    lines.append(f"to act: seat {actor} ({what})   (* = called)")
    return "\n".join(lines)
