"""What the search agent needs from the engine, behind one thin adapter.

Four calls, named as in the lanes' agreed interfaces (docs: ``/work/briefs/interfaces.md`` and
``docs/search.md``):

- ``infoset_of(record, seat, rules)``: the seat's information set (``meld8_env.infoset.infoset``);
- ``sample_worlds(info, n, rng, method)`` -> (records (n,) STATE_DTYPE, weights (n,)) consistent with it
  (``meld8_env.belief.sample_worlds``); ``stratify(info, worlds, weights)`` re-weights them so that each
  opponent is ready in the share of the weight its fitted prior says (post-stratification);
- ``step_copies(rules, records, actions)``: step caller-owned records in place (``step_records``);
- ``rollout_hand(rules, records, seat_policies (N, P) int8, seeds (N,) uint64)``: play every record to the
  end of its hand with the C bots (``meld8_env.rollout.rollout(..., until="hand")``), records advanced in
  place; returns the rollout's per-seat point ``deltas``.

Claim windows: a sampled world re-asks every seat eligible in it, in turn order, so the seats asked before
this one answer first by their rollout policy (:func:`advance_to_seat`) and every world has this seat to act.
"""

from __future__ import annotations

import hashlib

import numpy as np

from meld8_env import belief
from meld8_env.cardmask import ALL
from meld8_env.codes import Phase
from meld8_env.engine.records import concat_records, put_records, step_records, take_records
from meld8_env.hands import distance_batch, waits_batch
from meld8_env.infoset import infoset
from meld8_env.policies import policy_act
from meld8_env.rollout import ExternalPolicy, rollout
from meld8_env.rules import RuleConfig


# -- information sets and worlds ---------------------------------------------------------------------
def infoset_of(record: np.void, seat: int, rules: RuleConfig):
    """The seat's information set of ``record`` (``meld8_env.infoset.infoset``; never the record itself)."""
    return infoset(record, seat, rules)


def sample_worlds(
    info, n: int, rng: np.random.Generator, rules: RuleConfig, method: str = "two_level", **options: bool
) -> tuple[np.ndarray, np.ndarray]:
    """n records consistent with ``info`` and their weights (``meld8_env.belief.sample_worlds``; ``options``:
    its modelling flags, ``no_pass`` / ``last_discard``)."""
    return belief.sample_worlds(info, n, rng, method=method, rules=rules, **options)


def swap_into_wall(records: np.ndarray, info, m: int, rng: np.random.Generator) -> None:
    """In place, each record (a CHEATING copy of the true one): ``m`` concealed cards of every opponent of
    ``info.seat`` (all of them when it holds fewer, or as many as the undrawn wall has) swapped with as many
    random cards of the undrawn wall, so that the hands are the truth blurred by ``m`` cards each. The opponents
    are blurred one after the other, so the second may draw cards the first gave to the wall. No opponent holds a
    just-drawn card here (the engine clears ``drawn`` at every discard; a seat that drew is the one acting). Cards
    stay conserved; the caller refreshes the claim windows (``records.refresh``)."""
    for r in records:
        pos, end = int(r["wall_pos"]), int(r["wall_len"])
        for j in info.opponents:
            h = int(r["hands"][j])
            cards = [c for c in range(53) if h >> c & 1]
            k = min(m, len(cards), end - pos)
            if k == 0:
                continue
            out = rng.choice(cards, k, replace=False)
            slots = pos + rng.choice(end - pos, k, replace=False)
            for c, s in zip(out, slots, strict=True):
                incoming = int(r["wall"][s])
                h = (h & ~(1 << int(c))) | (1 << incoming)
                r["wall"][s] = int(c)
            r["hands"][j] = np.uint64(h)


def ready_in_worlds(info, worlds: np.ndarray, j: int) -> np.ndarray:
    """(n,) bool: opponent ``j`` is ready in each world (its waits, R33, non-empty and none in its own
    discards, which are public and so the same in every world)."""
    waits = waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy())
    return (waits != 0) & ((waits & np.uint64(info.uncalled_discards(j))) == 0)


def level_in_worlds(info, worlds: np.ndarray, j: int) -> np.ndarray:
    """(n,) int: opponent ``j``'s level in each world: 0 ready (as :func:`ready_in_worlds`), 1 not ready but at
    most two cards from winning, 2 further (distance to win, R26, over the cards ``j`` has not seen: everything
    but its own cards and the public melds and discards)."""
    public = 0
    for p in range(info.num_players):
        public |= int(info.melds[p]) | info.uncalled_discards(p)
    hands, meld = worlds["hands"][:, j].copy(), np.full(len(worlds), info.melds[j], np.uint64)
    unseen = np.uint64(int(ALL) & ~public & ~int(info.melds[j])) & ~hands
    dist = distance_batch(hands, meld, unseen).astype(np.int64)
    return np.where(ready_in_worlds(info, worlds, j), 0, np.where(dist <= 2, 1, 2))


def stratify(info, worlds: np.ndarray, weights: np.ndarray, sweeps: int = 3) -> np.ndarray:
    """Weights under which each opponent's weighted share of ready worlds is its fitted prior
    (``belief.ready_prior``): post-stratification, so that K worlds do not carry the binomial noise of how many
    of them drew each status (the value of a discard swings most with whether someone is ready). The shares of
    the opponents are matched in turn, ``sweeps`` times (iterative proportional fitting); an opponent ready in
    every world or in none keeps its weights (no stratum to scale). Only ``info`` and the sampled worlds are
    read."""
    w = np.asarray(weights, np.float64).copy()
    ready = {j: ready_in_worlds(info, worlds, j) for j in info.opponents}
    prior = {j: belief.ready_prior(info, j) for j in info.opponents}
    for _ in range(sweeps):
        for j, r in ready.items():
            total, on = w.sum(), w[r].sum()
            if total <= 0 or on <= 0 or on >= total:
                continue
            f, p = on / total, prior[j]
            w[r] *= p / f
            w[~r] *= (1 - p) / (1 - f)
    return w * (len(w) / w.sum())


#: ``width=1``: P(a hand that waits on some card waits on n) in bot games over the same in the two-level worlds,
#: index n = 2..8, then 9 or more. Index 0 (no wait) keeps its weight, and n = 1 (0.02 % of the hands) is too rare
#: to fit: 1.0. Real ready hands wait wider (mean 4.2 waits against 3.5; five or more in 40 % against 21 %): the bots
#: keep the discard that leaves the most acceptance, which a uniform draw within a status does not. Fitted on 8,000
#: states of a development seed, docs/search_runs/width_fit_s27.txt.
WIDTH_RATIO = np.array([1.0, 1.0, 1.27, 0.66, 1.45, 1.87, 1.78, 1.28, 2.09, 4.03])


def width_weights(info, worlds: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``weights`` times, for each opponent whose hand in the world waits on some card, ``WIDTH_RATIO`` of its
    number of waits, renormalised to sum to the number of worlds. Only ``info`` and the sampled worlds are read."""
    w = np.asarray(weights, np.float64).copy()
    for j in info.opponents:
        waits = waits_batch(worlds["hands"][:, j].copy(), worlds["melds"][:, j].copy())
        n = np.bitwise_count(waits).astype(np.int64)
        w *= WIDTH_RATIO[np.minimum(n, len(WIDTH_RATIO) - 1)]
    return w * (len(w) / w.sum())


def cat_records(parts: list[np.ndarray]) -> np.ndarray:
    """Concatenate engine records keeping STATE_DTYPE (np.concatenate would repack its padding)."""
    return concat_records(parts)


def info_digest(info) -> bytes:
    """16 bytes that identify an information set (the per-decision random stream is derived from them)."""
    return hashlib.blake2b(info.to_bytes(), digest_size=16).digest()


# -- stepping and rollouts --------------------------------------------------------------------------
def step_copies(rules: RuleConfig, records: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Step caller-owned ``records`` in place by ``actions`` (int64, -1 holds); returns where refused."""
    return step_records(rules, records, actions)


def rollout_hand(
    rules: RuleConfig,
    records: np.ndarray,
    seat_policies: np.ndarray,
    seeds: np.ndarray,
    threads: int = 2,
    external: ExternalPolicy | None = None,
) -> np.ndarray:
    """Play ``records`` (advanced in place) to the end of the current hand with the C bots (and ``external``
    for the seats whose policy is ``"external"``, ``meld8_env.rollout``); returns the hand's point change of
    every seat (N, P) int64."""
    res = rollout(rules, records, seat_policies, seeds, until="hand", threads=threads, external=external)
    return np.asarray(res.deltas, np.int64)


def advance_to_seat(rules: RuleConfig, records: np.ndarray, seat: int, seat_policies: np.ndarray) -> None:
    """In sampled claim windows, let the seats asked before ``seat`` answer (by their rollout policy), so
    every record has ``seat`` to act; records are stepped in place."""
    for _ in range(rules.num_players):
        wait = (records["phase"] == int(Phase.CLAIM)) & (records["acting"] != seat)
        if not wait.any():
            return
        idx = np.flatnonzero(wait)
        sub = take_records(records, idx)
        codes = seat_policies[idx, sub["acting"].astype(np.int64)].astype(np.int8)
        acts = policy_act(rules, sub, codes, np.zeros(len(sub), np.uint64))
        step_records(rules, sub, acts)
        put_records(records, idx, sub)
