"""The built-in bots as C policies over engine records and observations (issue 20).

``POLICY`` names the codes: ``random`` 0, ``greedy`` 1, ``defensive`` 2, ``oracle`` 3, ``greedy_lite`` 4,
``defensive_lite`` 5 (greedy / defensive with a cheap tie-break where the tied discards leave two or more cards
to win: the size of the acceptance pool instead of the exact count; a cheaper rollout model, ``search:lite=1``).
The C decisions live in ``meld8_env/engine/_bots.c``; the readable reference twins are the agents in ``agents/``
(greedy.py with ``GreedyLiteAgent``, defensive.py with ``DefensiveLiteAgent``, random_agent.py), which call
:func:`act_obs` unless ``MELD8_BACKEND=python`` (the hand evaluator's switch, :data:`meld8_env.hands.BACKEND`)
selects them.

- :func:`policy_act` (records (N,) ``STATE_DTYPE``, codes (N,) int8, rng (N,) uint64) -> actions (N,)
  int64 for each record's acting seat. ``random`` draws from the record's splitmix64 state (advanced in
  place, as :func:`random_rng_action`); greedy and defensive are deterministic.
- :func:`act_obs` (observations (B, D) uint8, masks (B, 64)) -> actions (B,) int64: the agents' path,
  deciding from exactly what the observation shows (random hashes the observation like RandomAgent).
- :class:`SeatPolicy`: what an in-process agent answers to ``c_policy()`` when it decides exactly like a C
  policy (the built-in agents, unless ``MELD8_BACKEND=python`` or a subclass), so that a lineup of them can
  play whole games in C (``meld8_env.rollout.play_games``, the arena's fast path).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from meld8_env.engine.seeding import GOLDEN, MASK64, mix64
from meld8_env.rules import RuleConfig

try:  # without the C build the agents still import and run their Python code
    from meld8_env.engine.bots import act_obs_raw, policy_act_raw
    from meld8_env.engine.fast import STATE_DTYPE, pack_rules

    HAVE_C = True
except ImportError:  # pragma: no cover - exercised only without a C compiler
    HAVE_C = False

POLICY: dict[str, int] = {"random": 0, "greedy": 1, "defensive": 2, "oracle": 3, "greedy_lite": 4, "defensive_lite": 5}
"""Policy name -> the code the C side knows. ``oracle`` (twin: ``agents.oracle``) is CHEATING: it reads the other
seats' hands in the record, so it runs in :func:`policy_act` and rollouts (where the search's worlds are
sampled, so its own continuation there knows only its world) and never from an observation."""


EXTERNAL = "external"
"""Not a C policy: in :func:`meld8_env.rollout.rollout`'s ``seat_policies``, a seat whose decisions the caller makes
(``external=``), e.g. a network as the search's own continuation. Every other entry point refuses it."""
EXTERNAL_CODE = 6
"""The C side's code of :data:`EXTERNAL` (``BOT_EXTERNAL`` in ``_bots.h``)."""


@dataclasses.dataclass(frozen=True, eq=False)  # weights is an array: identity, not value, equality
class SeatPolicy:
    """An agent's decisions as a C policy: ``name`` (a key of :data:`POLICY`); for ``random``, the ``seed`` and
    ``weights`` (D,) uint64 of RandomAgent's observation hash (``act_obs``), D the rules' observation size."""

    name: str
    seed: int = 0
    weights: np.ndarray | None = None


def c_bots_enabled() -> bool:
    """True when the built-in agents decide in C (the default); ``MELD8_BACKEND=python`` turns it off."""
    from meld8_env import hands

    return hands.BACKEND == "c" and HAVE_C


@functools.cache
def packed(rules: RuleConfig) -> bytes:
    """The rules as the C engine reads them (cached per rule set)."""
    return pack_rules(rules)


def policy_codes(policies: object, shape: tuple[int, ...], external_ok: bool = False) -> np.ndarray:
    """Policy names or codes as a C-contiguous int8 array broadcast to ``shape``; one line naming the bad
    value otherwise. ``external_ok``: :data:`EXTERNAL` (code :data:`EXTERNAL_CODE`) is allowed too (rollouts)."""
    known = POLICY | ({EXTERNAL: EXTERNAL_CODE} if external_ok else {})
    also = f" or {EXTERNAL_CODE} ({EXTERNAL})" if external_ok else ""
    arr = np.asarray(policies)
    if arr.dtype.kind in "US":
        bad = [str(x) for x in np.unique(arr) if str(x) not in known]
        if bad:
            names = ", ".join(known)
            raise ValueError(f"unknown policy {bad[0]!r}: use one of {names} (or codes 0..{len(POLICY) - 1}{also})")
        arr = np.vectorize(known.__getitem__, otypes=[np.int8])(arr)
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"policies must be names ({', '.join(known)}) or integer codes, got dtype {arr.dtype}")
    ok = (arr >= 0) & (arr < len(POLICY))
    if external_ok:
        ok |= arr == EXTERNAL_CODE
    if arr.size and not ok.all():
        raise ValueError(f"policy codes must be 0..{len(POLICY) - 1}{also}, got {int(arr[~ok].flat[0])}")
    try:
        return np.ascontiguousarray(np.broadcast_to(arr.astype(np.int8), shape))
    except ValueError:
        raise ValueError(f"policies of shape {arr.shape} do not fit {shape}") from None


def check_record_array(records: np.ndarray, writable: bool = False) -> np.ndarray:
    """``records`` as the C side takes them: a C-contiguous (N,) array of ``STATE_DTYPE``."""
    if not isinstance(records, np.ndarray) or records.dtype != STATE_DTYPE or records.ndim != 1:
        raise TypeError("records must be a (N,) numpy array of meld8_env.engine.fast.STATE_DTYPE")
    if not records.flags.c_contiguous or (writable and not records.flags.writeable):
        raise ValueError("records must be C-contiguous" + (" and writable (they advance in place)" if writable else ""))
    return records


def policy_act(rules: RuleConfig, records: np.ndarray, policy_codes_: object, rng_states: np.ndarray) -> np.ndarray:
    """One decision per record for its acting seat (-1 where the game is over); ``rng_states`` (N,) uint64
    are advanced in place where a random policy drew."""
    records = check_record_array(records)
    n = len(records)
    codes = policy_codes(policy_codes_, (n,))
    if not isinstance(rng_states, np.ndarray) or rng_states.dtype != np.uint64 or rng_states.shape != (n,):
        raise ValueError(f"rng_states must be a uint64 array of shape ({n},)")
    out = np.empty(n, np.int64)
    policy_act_raw(records, packed(rules), codes, rng_states, out)
    return out


def act_obs(
    rules: RuleConfig, policy: str, obs: np.ndarray, masks: np.ndarray, weights: np.ndarray | None = None, seed: int = 0
) -> np.ndarray:
    """Decisions of ``policy`` from observations (B, D) and legal masks (B, 64); ``random`` needs
    RandomAgent's ``weights`` (D,) uint64 and ``seed``."""
    obs = np.atleast_2d(np.asarray(obs))
    # a float, bool or out-of-range array would be cast to bytes silently (0.5 -> 0, 300 -> 44): refuse it
    if obs.dtype != np.uint8 and (obs.dtype.kind not in "ui" or (obs.size and (obs.min() < 0 or obs.max() > 255))):
        raise ValueError(f"obs: observations are bytes 0..255 (uint8, as the env gives them), got {obs.dtype} values")
    obs = np.ascontiguousarray(obs, dtype=np.uint8)
    masks = np.ascontiguousarray(np.atleast_2d(masks)).astype(np.uint8, copy=False)
    if masks.shape != (obs.shape[0], 64):
        raise ValueError(f"masks must have shape ({obs.shape[0]}, 64), got {masks.shape}")
    if weights is not None:
        weights = np.asarray(weights)
        if weights.dtype.kind not in "ui" or (weights.dtype.kind == "i" and weights.size and weights.min() < 0):
            raise ValueError(f"weights: RandomAgent's hash weights are uint64, got {weights.dtype} values")
        weights = np.ascontiguousarray(weights, dtype=np.uint64)
    out = np.empty(obs.shape[0], np.int64)
    act_obs_raw(packed(rules), POLICY[policy], obs, masks, weights, int(seed) & MASK64, out)
    return out


def random_rng_action(mask: int, state: int) -> tuple[int, int]:
    """The ``random`` policy's draw in Python (the C twin is ``bot_random_rng``): a legal action of the
    64-bit ``mask`` picked by splitmix64 ``state``; returns (action, next state). 0 when nothing is legal."""
    legal = [a for a in range(64) if mask >> a & 1]
    if not legal:
        return 0, state
    state = (state + GOLDEN) & MASK64
    return legal[mix64(state) % len(legal)], state
