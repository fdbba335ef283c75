"""Per-seat observation: one fixed-shape ``uint8`` vector, seats relative to the observer.

Relative seat 0 is the observer, 1 its shimocha (next in turn), 2 the one after, and so on.
Binary planes hold 0/1; the few count fields are small integers. Layout (P players, R rounds,
``MAX_DISCARDS`` = 24 slots per seat):

| field | size | content |
|---|---|---|
| hand | 53 | own concealed cards |
| drawn | 53 | the card just drawn (one-hot; zero after a call or during a claim) |
| melds | P*53 | exposed meld cards of each relative seat |
| discarded | P*53 | cards each relative seat has discarded |
| called | P*53 | of those, the ones another player called |
| discard_order | P*24 | card id + 1 of each discard in order (0 = empty) |
| dora_indicator | 53 | the dealer's first discard (R35) |
| claim_card | 53 | the card under claim (claim phase) |
| discarder | P | relative seat of the discarder under claim |
| phase | 4 | one-hot: draw, call_discard, claim, over |
| dealer | P | relative seat of the dealer |
| round | R | one-hot round index |
| calls_used | P | 1 if that relative seat has called this deal (R17) |
| scores | P | score // 1000 + 128, clipped to 0..255 |
| replays | 1 | replays of this round so far (clipped 255) |
| wall_left | 1 | cards left to draw |
| min_han | 1 | the round's minimum standard-yaku han (R30) |
| oracle (opt-in) | P*53 + 53 | every seat's concealed cards, then the wall order (card id + 1) |

It never contains another seat's concealed cards, the wall or a pending claim choice unless the
``oracle`` view is asked for (research only).
"""

from __future__ import annotations

import numpy as np

from meld8_env.cardmask import masks_of_planes
from meld8_env.codes import MAX_DISCARDS, Phase
from meld8_env.rules import RuleConfig

OBS_LAYOUT_VERSION = 1
"""Bumped whenever the layout below changes; checkpoints record the version they were trained on."""


def layout(rules: RuleConfig, oracle: bool = False) -> dict[str, tuple[int, int]]:
    """Field name -> (offset, size)."""
    P, R = rules.num_players, rules.rounds
    sizes = [
        ("hand", 53),
        ("drawn", 53),
        ("melds", P * 53),
        ("discarded", P * 53),
        ("called", P * 53),
        ("discard_order", P * MAX_DISCARDS),
        ("dora_indicator", 53),
        ("claim_card", 53),
        ("discarder", P),
        ("phase", 4),
        ("dealer", P),
        ("round", R),
        ("calls_used", P),
        ("scores", P),
        ("replays", 1),
        ("wall_left", 1),
        ("min_han", 1),
    ]
    if oracle:
        sizes += [("oracle_hands", P * 53), ("oracle_wall", 53)]
    out, off = {}, 0
    for name, size in sizes:
        out[name] = (off, size)
        off += size
    return out


def obs_size(rules: RuleConfig, oracle: bool = False) -> int:
    lay = layout(rules, oracle)
    off, size = lay["oracle_wall" if oracle else "min_han"]
    return off + size


def _plane(out: np.ndarray, off: int, mask: int) -> None:
    for c in range(53):
        if mask >> c & 1:
            out[off + c] = 1


def encode(game, seat: int, oracle: bool = False) -> np.ndarray:
    """Observation of ``seat`` in a reference ``Game`` (the fast engine writes the same bytes)."""
    rules = game.rules
    P = game.P
    lay = layout(rules, oracle)
    out = np.zeros(obs_size(rules, oracle), np.uint8)

    def off(name: str) -> int:
        return lay[name][0]

    _plane(out, off("hand"), game.hands[seat])
    if game.drawn >= 0 and game.acting_seat == seat and game.phase == Phase.DRAW:
        out[off("drawn") + game.drawn] = 1
    for k in range(P):
        p = (seat + k) % P
        _plane(out, off("melds") + 53 * k, game.melds[p])
        for i, (card, called) in enumerate(game.discards[p]):
            out[off("discarded") + 53 * k + card] = 1
            if called:
                out[off("called") + 53 * k + card] = 1
            out[off("discard_order") + MAX_DISCARDS * k + i] = card + 1
        out[off("calls_used") + k] = game.calls_used[p]
        out[off("scores") + k] = min(255, max(0, game.scores[p] // 1000 + 128))
    if game.dora_indicator >= 0:
        out[off("dora_indicator") + game.dora_indicator] = 1
    if game.claim is not None:
        out[off("claim_card") + game.claim.card] = 1
        out[off("discarder") + (game.claim.discarder - seat) % P] = 1
    out[off("phase") + game.phase] = 1
    if not game.over:
        out[off("dealer") + (game.dealer - seat) % P] = 1
        out[off("round") + game.round] = 1
        out[off("min_han")] = rules.min_yaku_han[game.round]
    out[off("replays")] = min(255, game.replays)
    out[off("wall_left")] = max(0, game.wall_left)
    if oracle:
        for k in range(P):
            _plane(out, off("oracle_hands") + 53 * k, game.hands[(seat + k) % P])
        for i, card in enumerate(game.wall[game.wall_pos : game.wall_end]):
            out[off("oracle_wall") + i] = card + 1
    return out


_to_masks = masks_of_planes


def decode(obs: np.ndarray, rules: RuleConfig) -> dict[str, np.ndarray]:
    """What a bot needs from a batch of observations (B, D), vectorized; seats relative (0 = self).

    Returns ``hand`` (B,) and ``melds``, ``discarded``, ``called`` (B, P) uint64 masks; ``calls_used``
    (B, P); ``claim_card`` and ``dora_indicator`` (B,) (-1 when none); ``phase``, ``wall_left`` (B,);
    ``unseen`` (B,) uint64: every card the observer has not seen anywhere (the Joker included).
    """
    obs = np.atleast_2d(obs)
    P = rules.num_players
    lay = layout(rules)
    off, size = lay["min_han"]  # the last field: obs_size(rules), without a second layout
    # checked, not cast: floats were decoded silently, another player count's observations gave garbage and a
    # short one numpy's broadcast error (red team, session 37); the oracle layout starts with the same fields
    if obs.dtype != np.uint8 or obs.ndim != 2 or (obs.shape[1] != off + size and obs.shape[1] != obs_size(rules, True)):
        raise ValueError(
            f"decode expects uint8 observations of shape (N, {off + size}) for {P}-player rules, got shape {obs.shape} "
            f"and dtype {obs.dtype}"
        )

    def field(name: str) -> np.ndarray:
        off, size = lay[name]
        return obs[:, off : off + size]

    melds = _to_masks(field("melds").reshape(-1, P, 53))
    discarded = _to_masks(field("discarded").reshape(-1, P, 53))
    hand = _to_masks(field("hand"))

    def one_hot_index(name: str) -> np.ndarray:
        f = field(name)
        return np.where(f.any(axis=1), f.argmax(axis=1), -1)

    visible = hand | np.bitwise_or.reduce(melds, axis=1) | np.bitwise_or.reduce(discarded, axis=1)
    return {
        "hand": hand,
        "melds": melds,
        "discarded": discarded,
        "called": _to_masks(field("called").reshape(-1, P, 53)),
        "calls_used": field("calls_used").astype(np.int8),
        "claim_card": one_hot_index("claim_card"),
        "dora_indicator": one_hot_index("dora_indicator"),
        "phase": field("phase").argmax(axis=1),
        "wall_left": field("wall_left")[:, 0].astype(np.int16),
        "unseen": np.uint64((1 << 53) - 1) & ~visible,
    }
