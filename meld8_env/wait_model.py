"""The per-card wait model: P(card c is in opponent j's waits | j is ready, public facts), for the belief.

``wait_features(info, j) -> (52, F) float64`` reads one seat's information set (``meld8_env.infoset.InfoSet``)
and nothing else: for every playing card c (ids 0..51, R5) the public facts about (j, c) that tell a bot's
ready hand from a random one. Bots keep connected cards, discard away from their waits, may not Ron a wait
in their own discards (furiten, R33) and (``no_pass``'s assumption) would have Ron'd a card they let pass; a
call shows a meld; a seen card cannot be in a wait shape. The columns are named in :data:`FEATURES`.

``wait_probs(info, j) -> (52,) float64``: the fitted model's ``q(c) = P(c in waits_j | j ready)`` (a logistic
regression on the standardized features plus a few products, numpy only), from
``meld8_env/data/wait_model.json`` (fitted by ``training/fit_waits.py`` on ``greedy``/``defensive`` self-play
with oracle labels: the true waits of the opponents that are ready in the true record). The file's sha256
is verified on load; a mismatch or a malformed file raises one line naming the file and the fix.
``meld8_env.belief.sample_worlds(..., method="learned")`` uses it to pick, among the ready proposals, hands
whose waits follow ``q``; ``ready_prior(info, j) * q`` is the model's own answer to "can j Ron c now".
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources

import numpy as np

from meld8_env.discard_history import passed_cards
from meld8_env.infoset import InfoSet

__all__ = ["FEATURES", "MODEL_FILE", "model_checksum", "wait_features", "wait_probs"]

MODEL_FILE = "wait_model.json"
FEATURES = (
    "bias",
    "in_my_hand",  # c is in the observing seat's hand (else in the pool)
    "edge_rank",  # A or K: one sequence shape only
    "near_edge_rank",  # 2 or Q
    "crown_rank",  # A J Q K (R3: yaku with crowns)
    "seq_live",  # sequence shapes (c+1 c+2, c-1 c+1, c-2 c-1) with both partners unseen by the observer
    "seq_live_not_suji",  # of those, two-sided ones whose other wait (c+-3) is not in j's discards, and the middle
    "seq_half_joker",  # shapes with one partner unseen, while the Joker is unseen (it fills the other)
    "rank_unseen",  # other cards of c's rank unseen (0..3): pair and triplet waits
    "rank_in_disc_j",  # cards of c's rank in j's discards (a triplet wait on the rank would be furiten)
    "suji_in_disc_j",  # c-3 / c+3 (same suit) in j's discards: the two-sided waits through c are furiten
    "adj_in_disc_j",  # c+-1, c+-2 (same suit) in j's discards
    "rank_passed_j",  # cards of c's rank j let pass without Ron
    "suji_passed_j",
    "adj_passed_j",
    "last_near",  # j's last discard is c's rank, or its suit within two ranks
    "last3_near",  # how many of j's last three discards are near c (as above)
    "early3_near",  # how many of j's first three discards are near c
    "suit_share_j",  # share of j's discards in c's suit
    "meld_near_j",  # j's meld holds c's rank or its suit within two ranks
    "called_j",
    "wall_left",  # / 32
    "discards_j",  # / 10
    "joker_unseen",
    "pair_live_clean",  # a card of c's rank unseen and none of the rank in j's discards
)
F = len(FEATURES)
_RANKS = np.arange(13)
_EDGE = np.broadcast_to(np.isin(_RANKS, (0, 12)), (4, 13))
_NEAR_EDGE = np.broadcast_to(np.isin(_RANKS, (1, 11)), (4, 13))
_CROWN = np.broadcast_to(np.isin(_RANKS, (0, 10, 11, 12)), (4, 13))
_VALID = np.ones((4, 13), bool)
_ZERO = np.zeros((4, 13))


def _plane(mask: int) -> np.ndarray:
    """(4, 13) bool: which of the 52 playing cards are in ``mask``."""
    return ((mask >> np.arange(52)) & 1).astype(bool).reshape(4, 13)


def _shift(p: np.ndarray, d: int) -> np.ndarray:
    """(4, 13): out[s, r] = p[s, r + d] (False past the ends: no wrap-around, R23)."""
    out = np.zeros_like(p)
    if d > 0:
        out[:, :-d] = p[:, d:]
    elif d < 0:
        out[:, -d:] = p[:, :d]
    else:
        out[:] = p
    return out


_UP_OK, _DOWN_OK = _shift(_VALID, 2), _shift(_VALID, -2)  # c+2 / c-2 exist
_MID_OK = _shift(_VALID, 1) & _shift(_VALID, -1)


def _near(card: int) -> np.ndarray:
    """(4, 13) bool: the cards of ``card``'s rank and those within two ranks in its suit."""
    s, r = divmod(card, 13)
    out = np.zeros((4, 13), bool)
    out[:, r] = True
    out[s, max(r - 2, 0) : r + 3] = True
    return out


def wait_features(info: InfoSet, j: int) -> np.ndarray:
    """(52, F) float64: the :data:`FEATURES` of (``j``, c) for every playing card c, from ``info`` only."""
    unseen = _plane(info.pool)
    mine = _plane(info.hand)
    disc_all = 0
    for c in info.discards[j]:
        disc_all |= 1 << c
    dj = _plane(disc_all)
    pj = _plane(passed_cards(info, j))
    joker_unseen = float(info.pool >> 52 & 1)
    up_ok, down_ok, mid_ok = _UP_OK, _DOWN_OK, _MID_OK
    u1, u2, d1, d2 = _shift(unseen, 1), _shift(unseen, 2), _shift(unseen, -1), _shift(unseen, -2)
    up, down, mid = u1 & u2, d1 & d2, d1 & u1
    half = (up_ok & (u1 ^ u2)).astype(int) + (down_ok & (d1 ^ d2)) + (mid_ok & (d1 ^ u1))
    rank_count = lambda p: np.broadcast_to(p.sum(axis=0, keepdims=True), (4, 13)) - p  # noqa: E731 others of c's rank
    suji = lambda p: _shift(p, 3).astype(int) + _shift(p, -3)  # noqa: E731
    adj = lambda p: sum(_shift(p, d).astype(int) for d in (-2, -1, 1, 2))  # noqa: E731
    rank_unseen = rank_count(unseen)
    rank_dj = rank_count(dj) + dj
    ds = info.discards[j]
    near_count = lambda cards: sum(_near(c).astype(int) for c in cards) if cards else _ZERO  # noqa: E731
    suit_share = np.zeros((4, 13))
    if ds:
        per_suit = np.bincount(np.asarray(ds) // 13, minlength=4) / len(ds)
        suit_share = np.broadcast_to(per_suit[:, None], (4, 13))
    meld = _plane(info.melds[j])
    meld_near = np.zeros((4, 13), bool)
    for c in np.flatnonzero(meld.ravel()).tolist():
        meld_near |= _near(c)
    cols = [
        np.ones((4, 13)),
        mine,
        _EDGE,
        _NEAR_EDGE,
        _CROWN,
        up.astype(int) + down + mid,
        (up & ~_shift(dj, 3)).astype(int) + (down & ~_shift(dj, -3)) + mid,
        half * joker_unseen,
        rank_unseen,
        rank_dj,
        suji(dj),
        adj(dj),
        rank_count(pj),
        suji(pj),
        adj(pj),
        _near(ds[-1]) if ds else _ZERO,
        near_count(ds[-3:]),
        near_count(ds[:3]),
        suit_share,
        meld_near,
        np.full((4, 13), float(info.melds[j] != 0)),
        np.full((4, 13), info.wall_left / 32),
        np.full((4, 13), len(ds) / 10),
        np.full((4, 13), joker_unseen),
        (rank_unseen > 0) & (rank_dj == 0),
    ]
    return np.stack([np.asarray(c, np.float64).reshape(52) for c in cols], axis=1)


def model_checksum(model: dict) -> str:
    """sha256 of the canonical JSON of the fitted parameters (what the data file's ``sha256`` must equal)."""
    return hashlib.sha256(json.dumps(model, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def load_model(text: str, name: str = MODEL_FILE) -> dict[str, dict[str, np.ndarray]]:
    """Parse and check a wait-model file's text: {"3p"/"2p": {"mean", "scale", "w"}} as arrays."""
    try:
        data = json.loads(text)
        model = data["model"]
        ok = model_checksum(model) == data["sha256"]
    except (ValueError, KeyError, TypeError) as e:
        raise RuntimeError(
            f"meld8_env/data/{name}: not a wait-model file ({e!r}); refit with training/fit_waits.py"
        ) from None
    if not ok:
        raise RuntimeError(f"meld8_env/data/{name}: checksum mismatch (refit with training/fit_waits.py)")
    if tuple(data.get("features", ())) != FEATURES:
        raise RuntimeError(f"meld8_env/data/{name}: fitted on other features than wait_model.FEATURES (refit)")
    out = {}
    for key, m in model.items():
        arr = {k: np.asarray(v, np.float64) for k, v in m.items()}
        if arr["mean"].shape != (F,) or arr["scale"].shape != (F,) or arr["w"].shape != (F + len(PAIRS),):
            raise RuntimeError(f"meld8_env/data/{name}: table {key} has the wrong shapes (refit)")
        out[key] = arr
    return out


#: products of standardized features the model also weighs (index pairs into FEATURES)
PAIRS = tuple(
    (FEATURES.index(a), FEATURES.index(b))
    for a, b in (
        ("seq_live_not_suji", "wall_left"),
        ("pair_live_clean", "wall_left"),
        ("in_my_hand", "seq_live_not_suji"),
        ("in_my_hand", "pair_live_clean"),
        ("seq_live_not_suji", "last3_near"),
        ("called_j", "meld_near_j"),
    )
)


def design(x: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """(N, F) raw features -> (N, F + len(PAIRS)) model inputs: standardized (bias kept 1) and the products."""
    z = (x - mean) / scale
    z[:, 0] = 1.0
    return np.concatenate([z, np.stack([z[:, a] * z[:, b] for a, b in PAIRS], axis=1)], axis=1)


@functools.cache
def _model() -> dict[str, dict[str, np.ndarray]]:
    return load_model(resources.files("meld8_env").joinpath("data", MODEL_FILE).read_text())


def wait_probs(info: InfoSet, j: int) -> np.ndarray:
    """(52,) float64: the fitted ``P(c in waits_j | j ready)`` for every playing card c (module docstring)."""
    m = _model()[f"{info.num_players}p"]
    z = design(wait_features(info, info.opponent(j)), m["mean"], m["scale"]) @ m["w"]
    return 1.0 / (1.0 + np.exp(-z))
