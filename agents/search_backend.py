"""What the search agent needs from the engine, behind one thin adapter.

Four calls, named as in the lanes' agreed interfaces (docs: ``/work/briefs/interfaces.md`` and
``docs/search.md``):

- ``infoset_of(record, seat, rules)``: the seat's information set (``meld8_env.infoset.infoset``);
- ``sample_worlds(info, n, rng, method)`` -> (records (n,) STATE_DTYPE, weights (n,)) consistent with it
  (``meld8_env.belief.sample_worlds``);
- ``step_copies(rules, records, actions)``: step caller-owned records in place (``step_records``);
- ``rollout_hand(rules, records, seat_policies (N, P) int8, seeds (N,) uint64)``: play every record to the
  end of its hand with the C bots (``meld8_env.rollout.rollout(..., until="hand")``), records advanced in
  place; returns the records' ``over`` flags and the rollout's per-seat point ``deltas``.

TEMPORARY fallbacks (used only while those modules are not in the tree; each is named ``_fallback_*``
and goes away when the real piece lands): a "shim" information set that keeps the seat's record with
every hidden card removed (opponents' concealed hands, the whole wall, the seed), a uniform sampler that
deals the hidden pool back at random, stepping on a scratch ``FastBatch`` and rollouts stepped one
action at a time with the Python bots. The shim cannot re-ask a claim window (the other seats' cached
claim options depend on their hidden hands), so with the fallback the search does not search claims.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from meld8_env.codes import Phase
from meld8_env.engine.fast import STATE_DTYPE, FastBatch
from meld8_env.rules import RuleConfig

POLICY = {"random": 0, "greedy": 1, "defensive": 2}

try:  # the real pieces (lanes state and cbots)
    from meld8_env.belief import sample_worlds as _real_sample_worlds
except ImportError:  # pragma: no cover - depends on what has landed
    _real_sample_worlds = None
try:
    from meld8_env.infoset import infoset as _real_infoset
except ImportError:  # pragma: no cover
    _real_infoset = None
try:
    from meld8_env.engine.fast import step_records as _real_step_records
except ImportError:  # pragma: no cover
    _real_step_records = None
try:
    from meld8_env.rollout import rollout as _real_rollout
except ImportError:  # pragma: no cover
    _real_rollout = None


def backend_names() -> dict[str, str]:
    """Which implementation each call uses (bench output and the agent's description say it)."""
    return {
        "infoset": "meld8_env.infoset" if _real_infoset else "fallback shim",
        "belief": "meld8_env.belief" if _real_sample_worlds else "fallback uniform",
        "step": "step_records" if _real_step_records else "fallback FastBatch",
        "rollout": "meld8_env.rollout (C bots)" if _real_rollout else "fallback Python bots",
    }


def can_search_claims() -> bool:
    """Whether sampled worlds re-ask a claim window (only the real belief sampler does)."""
    return _real_sample_worlds is not None and _real_infoset is not None


# -- information sets and worlds ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class ShimInfoSet:
    """TEMPORARY stand-in for ``meld8_env.infoset.InfoSet``: the seat's record with the hidden cards
    removed (opponents' concealed hands, the wall, the seed) and what is known about them."""

    seat: int
    public: bytes  # one STATE_DTYPE record, hidden fields zeroed
    pool: int  # 53-bit mask of the cards the seat has not seen
    sizes: tuple[int, ...]  # concealed cards of each seat (the seat's own included)
    wall_left: int  # cards still to draw, and in the undrawable tail (R14 / wall_limit)

    def to_bytes(self) -> bytes:
        return self.seat.to_bytes(1, "little") + self.public + self.pool.to_bytes(8, "little") + bytes(self.sizes)


def _popcount(x: int) -> int:
    return int(x).bit_count()


def _fallback_infoset(record: np.void, seat: int, rules: RuleConfig) -> ShimInfoSet:
    P = rules.num_players
    rec = np.array(record, dtype=STATE_DTYPE).reshape(1).copy()
    r = rec[0]
    pool = 0
    sizes = []
    for p in range(P):
        h = int(r["hands"][p])
        sizes.append(_popcount(h))
        if p != seat:
            pool |= h
            r["hands"][p] = 0
    pos, length = int(r["wall_pos"]), int(r["wall_len"])
    for c in r["wall"][pos:length].tolist():
        pool |= 1 << int(c)
    r["wall"][:] = 0
    r["seed"] = 0
    r["claim_opts"][:] = 0  # other seats' options depend on their hands: the fallback does not search claims
    r["claim_resp"][:] = 0
    return ShimInfoSet(seat, rec.tobytes(), pool, tuple(sizes), length - pos)


def infoset_of(record: np.void, seat: int, rules: RuleConfig):
    """The seat's information set of ``record`` (never the record itself)."""
    if _real_infoset is not None:
        return _real_infoset(record, seat, rules)
    return _fallback_infoset(record, seat, rules)


def _fallback_sample(info: ShimInfoSet, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniform worlds: the hidden pool dealt at random into the opponents' hands and the wall."""
    base = np.frombuffer(info.public, dtype=STATE_DTYPE)
    out = np.repeat(base, n).copy()
    pool = np.array([c for c in range(53) if info.pool >> c & 1], np.int8)
    P = len(info.sizes)
    pos = int(base[0]["wall_pos"])
    for k in range(n):
        cards = rng.permutation(pool)
        at = 0
        for p in range(P):
            if p == info.seat:
                continue
            m = 0
            for c in cards[at : at + info.sizes[p]].tolist():
                m |= 1 << c
            out[k]["hands"][p] = m
            at += info.sizes[p]
        out[k]["wall"][pos : pos + info.wall_left] = cards[at:]
        out[k]["seed"] = int(rng.integers(0, 2**63))
    return out, np.ones(n)


def sample_worlds(info, n: int, rng: np.random.Generator, method: str = "two_level") -> tuple[np.ndarray, np.ndarray]:
    """n records consistent with ``info`` and their weights (the real sampler when it is in the tree)."""
    if isinstance(info, ShimInfoSet):
        return _fallback_sample(info, n, rng)
    return _real_sample_worlds(info, n, rng, method=method)


def info_digest(info) -> bytes:
    """16 bytes that identify an information set (the per-decision random stream is derived from them)."""
    return hashlib.blake2b(info.to_bytes(), digest_size=16).digest()


# -- stepping and rollouts --------------------------------------------------------------------------
_SCRATCH: dict[tuple[str, int], FastBatch] = {}


def _scratch(rules: RuleConfig, n: int) -> FastBatch:
    size = 1 << max(4, (n - 1).bit_length())
    key = (rules.rules_hash, size)
    if key not in _SCRATCH:
        _SCRATCH[key] = FastBatch(size, rules)
    return _SCRATCH[key]


def step_copies(rules: RuleConfig, records: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Step caller-owned ``records`` in place by ``actions`` (int64, -1 holds); returns where refused."""
    if _real_step_records is not None:
        return _real_step_records(rules, records, actions)
    n = len(records)
    fb = _scratch(rules, n)
    fb.restore(slice(0, n), records)
    acts = np.full(fb.B, -1, np.int64)
    acts[:n] = actions
    illegal = fb.step(acts)[:n].copy()
    records[:] = fb.snapshot(slice(0, n))
    return illegal


def rollout_hand(
    rules: RuleConfig, records: np.ndarray, seat_policies: np.ndarray, seeds: np.ndarray, threads: int = 2
) -> np.ndarray:
    """Play ``records`` (advanced in place) to the end of the current hand; returns deltas (N, P) int64."""
    if _real_rollout is not None:
        res = _real_rollout(rules, records, seat_policies, seeds, until="hand", threads=threads)
        return np.asarray(res.deltas, np.int64)
    return _fallback_rollout(rules, records, seat_policies, seeds)


_BOTS: dict[tuple[str, int], object] = {}


def _bot(rules: RuleConfig, code: int):
    key = (rules.rules_hash, code)
    if key not in _BOTS:
        from agents.defensive import DefensiveAgent
        from agents.greedy import GreedyAgent
        from agents.random_agent import RandomAgent

        cls = {0: RandomAgent, 1: GreedyAgent, 2: DefensiveAgent}[code]
        _BOTS[key] = cls(rules=rules, seed=0)
    return _BOTS[key]


def _fallback_rollout(rules: RuleConfig, records: np.ndarray, seat_policies: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """TEMPORARY: step one action at a time with the Python bots (about 100x slower than the C rollout)."""
    n, P = len(records), rules.num_players
    fb = _scratch(rules, n)
    fb.restore(slice(0, n), records)
    deltas = np.zeros((n, P), np.int64)
    live = fb.phase[:n] != int(Phase.OVER)
    rows = np.arange(n)
    while live.any():
        obs, masks = fb.observe()
        acting = fb.acting[:n].astype(np.int64)
        acts = np.full(fb.B, -1, np.int64)
        codes = seat_policies[rows, np.clip(acting, 0, P - 1)]
        for code in np.unique(codes[live]).tolist():
            idx = np.flatnonzero(live & (codes == code))
            acts[idx] = _bot(rules, int(code)).act_batch(obs[idx], masks[idx])
        fb.step(acts)
        st = fb.state[:n]
        ended = live & (st["result"] != 0)
        deltas[ended] = st["deltas"][ended, :P]
        live &= ~ended
    records[:] = fb.snapshot(slice(0, n))
    return deltas
