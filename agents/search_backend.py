"""What the search agent needs from the engine, behind one thin adapter.

Four calls, named as in the lanes' agreed interfaces (docs: ``/work/briefs/interfaces.md`` and
``docs/search.md``):

- ``infoset_of(record, seat, rules)``: the seat's information set (``meld8_env.infoset.infoset``);
- ``sample_worlds(info, n, rng, method)`` -> (records (n,) STATE_DTYPE, weights (n,)) consistent with it
  (``meld8_env.belief.sample_worlds``);
- ``step_copies(rules, records, actions)``: step caller-owned records in place (``step_records``);
- ``rollout_hand(rules, records, seat_policies (N, P) int8, seeds (N,) uint64)``: play every record to the
  end of its hand with the C bots (``meld8_env.rollout.rollout(..., until="hand")``), records advanced in
  place; returns the rollout's per-seat point ``deltas``.

TEMPORARY fallback (used only while ``meld8_env.belief`` is not in the tree; named ``_fallback_*``, it goes
away when the real sampler lands): a uniform sampler that rebuilds a record from the information set's
public fields and deals the hidden pool back at random (``refresh`` then re-asks any claim window).
Claim windows: the seats asked before this one answer first by their rollout policy
(:func:`advance_to_seat`), so every world has this seat to act.
"""

from __future__ import annotations

import hashlib

import numpy as np

from meld8_env.codes import Phase
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.engine.records import step_records
from meld8_env.infoset import infoset as _real_infoset
from meld8_env.policies import policy_act
from meld8_env.rollout import rollout
from meld8_env.rules import RuleConfig

try:  # the real pieces (lanes state and cbots)
    from meld8_env.belief import sample_worlds as _real_sample_worlds
except ImportError:  # pragma: no cover - depends on what has landed
    _real_sample_worlds = None


def backend_names() -> dict[str, str]:
    """Which implementation each call uses (bench output and the agent's description say it)."""
    return {
        "belief": "meld8_env.belief" if _real_sample_worlds else "fallback uniform",
        "rollout": "meld8_env.rollout (C bots)",
    }


# -- information sets and worlds ---------------------------------------------------------------------
def infoset_of(record: np.void, seat: int, rules: RuleConfig):
    """The seat's information set of ``record`` (``meld8_env.infoset.infoset``; never the record itself)."""
    return _real_infoset(record, seat, rules)


def _fallback_base(info, rules: RuleConfig) -> np.ndarray:
    """TEMPORARY: one record holding everything public of ``info`` (hidden hands empty, wall unset)."""
    P = info.num_players
    rec = np.zeros(1, STATE_DTYPE)
    r = rec[0]
    wall_len = 53 - 7 * P  # R10 / R44: what the deal leaves after 7 cards each
    wall_pos = wall_len - info.dead_wall - info.wall_left
    r["wall_len"], r["wall_pos"], r["wall_end"] = wall_len, wall_pos, wall_pos + info.wall_left
    for p in range(P):
        r["melds"][p] = info.melds[p]
        r["calls_used"][p] = info.calls_used[p]
        r["dead"][p] = info.dead[p]
        r["draws_taken"][p] = info.draws_taken[p]
        r["scores"][p] = info.scores[p]
        r["ndisc"][p] = len(info.discards[p])
        r["discards"][p][:] = -1
        r["discards"][p][: len(info.discards[p])] = info.discards[p]
        r["called"][p] = info.called[p]
    r["hands"][info.seat] = info.hand
    r["round"], r["replays"], r["deals"], r["chiicha"] = info.round, info.replays, info.deals, info.chiicha
    r["phase"], r["current"], r["drawn"], r["dora_ind"] = info.phase, info.current, info.drawn, info.dora_ind
    r["kuikae"], r["any_call"] = info.kuikae, int(info.any_call)
    r["dealer_discarded"] = int(info.dora_ind >= 0)
    r["first_draw"], r["last_card"] = int(info.first_draw), int(info.last_card)
    r["claim_card"], r["claim_discarder"], r["claim_final"] = info.claim_card, info.claim_discarder, info.claim_final
    r["result"], r["win_seat"], r["lose_seat"], r["caller"] = 0, -1, -1, -1
    r["win_card"], r["hand_round"] = -1, info.round
    return rec


def _fallback_sample(info, n: int, rng: np.random.Generator, rules: RuleConfig) -> tuple[np.ndarray, np.ndarray]:
    """TEMPORARY uniform worlds: the hidden pool dealt at random into the hidden hands and the wall."""
    from meld8_env.engine.records import refresh

    base = _fallback_base(info, rules)
    out = np.repeat(base, n).copy()
    pool = np.array([c for c in range(53) if info.pool >> c & 1], np.int8)
    pos = int(base[0]["wall_pos"])
    for k in range(n):
        cards = rng.permutation(pool)
        at = 0
        for p, size in enumerate(info.hidden):
            if p == info.seat or size == 0:
                continue
            out[k]["hands"][p] = int(
                np.bitwise_or.reduce(np.left_shift(np.uint64(1), cards[at : at + size].astype(np.uint64)))
            )
            at += size
        out[k]["wall"][pos : pos + len(cards) - at] = cards[at:]
        out[k]["seed"] = int(rng.integers(0, 2**63))
    refresh(out, rules)
    return out, np.ones(n)


def sample_worlds(
    info, n: int, rng: np.random.Generator, rules: RuleConfig, method: str = "two_level"
) -> tuple[np.ndarray, np.ndarray]:
    """n records consistent with ``info`` and their weights (the real sampler when it is in the tree)."""
    if _real_sample_worlds is None:
        return _fallback_sample(info, n, rng, rules)
    return _real_sample_worlds(info, n, rng, method=method)


def cat_records(parts: list[np.ndarray]) -> np.ndarray:
    """Concatenate engine records keeping STATE_DTYPE (np.concatenate would repack its padding)."""
    out = np.empty(sum(len(p) for p in parts), STATE_DTYPE)
    at = 0
    for p in parts:
        out[at : at + len(p)] = p
        at += len(p)
    return out


def info_digest(info) -> bytes:
    """16 bytes that identify an information set (the per-decision random stream is derived from them)."""
    return hashlib.blake2b(info.to_bytes(), digest_size=16).digest()


# -- stepping and rollouts --------------------------------------------------------------------------
def step_copies(rules: RuleConfig, records: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Step caller-owned ``records`` in place by ``actions`` (int64, -1 holds); returns where refused."""
    return step_records(rules, records, actions)


def rollout_hand(
    rules: RuleConfig, records: np.ndarray, seat_policies: np.ndarray, seeds: np.ndarray, threads: int = 2
) -> np.ndarray:
    """Play ``records`` (advanced in place) to the end of the current hand with the C bots; returns the
    hand's point change of every seat (N, P) int64."""
    res = rollout(rules, records, seat_policies, seeds, until="hand", threads=threads)
    return np.asarray(res.deltas, np.int64)


def advance_to_seat(rules: RuleConfig, records: np.ndarray, seat: int, seat_policies: np.ndarray) -> None:
    """In sampled claim windows, let the seats asked before ``seat`` answer (by their rollout policy), so
    every record has ``seat`` to act; records are stepped in place."""
    for _ in range(rules.num_players):
        wait = (records["phase"] == int(Phase.CLAIM)) & (records["acting"] != seat)
        if not wait.any():
            return
        idx = np.flatnonzero(wait)
        sub = records[idx]
        codes = seat_policies[idx, sub["acting"].astype(np.int64)].astype(np.int8)
        acts = policy_act(rules, sub, codes, np.zeros(len(sub), np.uint64))
        step_records(rules, sub, acts)
        records[idx] = sub
