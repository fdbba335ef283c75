"""Belief: playable worlds sampled from one seat's information set (issue 21 §1).

``sample_worlds(info, n, rng, method="two_level", rules=None, tries=96, no_pass=False, last_discard=False)
-> (records (n,) STATE_DTYPE, weights (n,) f8)``; ``method`` is one of :data:`METHODS`.

Each world is a full engine record consistent with everything ``info`` holds (own hand, melds, discards,
scores, phase, hand sizes): the pool of hidden cards is dealt to the other seats (their known sizes) and
the undrawn wall (random order), the seed is fresh from ``rng`` (so future deals are new), and the claim
window and legal mask are rebuilt (``records.refresh``). The records pass ``check_conservation`` and are
ready for ``step_records`` or rollouts. Only ``info`` is read, never a true record, so the samples cannot
depend on the truth (``tests/test_belief.py`` checks it).

Methods:

- ``"uniform"``: the hidden cards in uniformly random places. The baseline; badly wrong in bot games,
  where an opponent is one card from winning in ~40 % of decision states and a random hand in ~3 %.
- ``"two_level"`` (default): first each opponent's status, *ready* (its waits, R33, are not empty and none
  is in its own discards, so it can Ron) or not, drawn from the fitted table ``P(ready | cards left in
  the live wall, has called, discards made)`` (``belief_table.json``, fitted on engine self-play between
  the bots with oracle labels by ``training/fit_belief.py``; its checksum is verified on load); then, per
  opponent in seat order, a hand of the right size with that status, by rejection among 8 and then, for
  the worlds still without one, ``tries`` uniform proposals from the cards still in the pool (waits by
  the C evaluator ``meld8_env.hands.waits_batch``).
  If no proposal has the status, the first proposal is kept (the world then misses its drawn status;
  :data:`LAST_STATS` counts these). Weights are 1: the sequential rejection draws each later opponent
  from what earlier ones left, a small bias we accept rather than estimate. An opponent holding a drawn card
  (8 cards with its meld: it drew, or it just called; another seat's infoset, never the acting seat's) gets
  the status on the other 7 and one more uniform card from the pool (in ``"learned"`` too).

- ``"learned"``: the two-level status part as in ``"two_level"`` (the same table and kind of draw), then, for the
  worlds where an opponent j is ready, hands whose *wait sets* follow the per-card wait model
  ``meld8_env.wait_model.wait_probs(info, j)`` = ``q(c) = P(c in j's waits | j ready, public facts)`` (a
  logistic regression on public features of (j, c): discards and their order, suji and rank-mates in j's
  discards, cards j let pass, live shapes among the unseen cards, calls, wall left; fitted by
  ``training/fit_waits.py`` on bot self-play with oracle labels, checksum verified on load). Ready
  proposals are gathered as in ``"two_level"`` (rounds of ``tries`` uniform hands per ready world until the
  worlds hold 64 together, at most 4 rounds) and shared between the worlds where their cards
  are free; a maximum-entropy tilt ``exp(theta . waits(hand))`` is fitted (Newton, L2 0.01) so that the
  chance of each card the seat cannot place (its hand and the pool) being waited on, averaged over the
  worlds, matches ``q``; each world then draws one proposal with those probabilities, the draws stratified
  across worlds (``u_i = (perm(i) + v) / k``, proposals ordered by their waits on the seat's own cards), so
  the wait sets follow the weights with little Monte-Carlo noise. Each world's draw is exact given the
  shared proposals; the worlds are not independent (stratified), and weights are 1. For a later opponent a
  world takes only the proposals whose cards are free in it, those made in other worlds included: a
  small bias toward hands the other worlds could also hold, accepted like two_level's sequential one.
  Compatible with ``no_pass`` (rejection as below), not with ``last_discard`` (a ``ValueError``). It costs
  ~5x ``"two_level"`` (``bench/belief_quality.py`` prints the time per call).

A claim window in a sampled world is rebuilt from scratch: every seat eligible in that world is asked
again, in turn order (R22 hides what earlier seats answered, so the world cannot keep it); the acting
seat of a world may therefore be a seat asked before ``info.seat``.

Option ``no_pass=True`` (a modelling assumption about the opponents, off by default): an opponent never
lets pass a discard it could Ron. The discards made after its last one (``passed_cards``, the order rebuilt
by ``discard_order``) were all seen with its present hand, so a ready proposal whose waits contain one is
rejected (form waits, yaku ignored: a hand without a yaku could not have Ron'd, so this over-rejects a
little). It is applied as rejection, so weights stay 1. Not done: the same for Tsumo (the hand before the
last discard is not known).

Option ``last_discard=True`` (also a modelling assumption, off by default): an opponent plays like the bots,
so its last discard d is the card ``greedy``'s rule (smallest distance, then acceptance, then lowest id)
throws from its present hand plus d. Among the proposals with the drawn status, the first (of up to 8 per
world, one batched ``best_discards`` call per round) for which that holds is kept; a world with none keeps
the first proposal with the status. Not applied to an opponent holding a drawn card. It costs ~9x the
two-level sampler in numpy and moves the danger AUC little (``bench/belief_quality.py``, docs/belief.md).

Speed: ``"uniform"`` and ``"two_level"`` without flags run in a C core (``meld8_env/_belief.c``) that
consumes the caller's numpy PCG64 stream exactly as the numpy code below does, so the worlds are
bit-identical either way (``tests/test_belief_core.py``); the numpy code is its readable twin, used for the
flags and ``"learned"``, when the core is not built, and under ``MELD8_BACKEND=python``. A call costs a quarter to
a third of the twin's time (``bench/belief_speed.py``: the record template, ``refresh`` and the conservation
check stay in Python).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from importlib import resources

import numpy as np

from meld8_env import hands as _hands
from meld8_env.cardmask import ALL, BITS, JK
from meld8_env.codes import HAND_SIZE, N_CARDS, Phase
from meld8_env.config_io import check_flag, env_flag
from meld8_env.discard_history import discard_order, passed_cards
from meld8_env.engine.fast import STATE_DTYPE
from meld8_env.engine.records import check_conservation, refresh
from meld8_env.features import best_discards
from meld8_env.hands import waits_batch
from meld8_env.infoset import InfoSet
from meld8_env.rules import RuleConfig
from meld8_env.wait_model import wait_probs

__all__ = [
    "LAST_STATS",
    "MAX_WORLDS",
    "METHODS",
    "discard_order",
    "passed_cards",
    "ready_prior",
    "sample_worlds",
    "status_key",
    "table_checksum",
    "use_core",
]

try:  # the C core (meld8_env/_belief.c); absent in a build without compiler, then the numpy twin serves
    from meld8_env import _belief as _core
except ImportError as e:  # pragma: no cover - depends on the build
    if env_flag("MELD8_REQUIRE_NATIVE") or os.environ.get("MELD8_BACKEND") == "c":  # as meld8_env.hands
        raise ImportError(
            f"MELD8_REQUIRE_NATIVE=1 or MELD8_BACKEND=c, but meld8_env._belief did not import: {e}"
        ) from e
    _core = None

METHODS = ("uniform", "two_level", "learned")
WALL_BUCKETS, DISCARD_BUCKETS = 8, 4
TABLE_FILE = "belief_table.json"
LAST_STATS: dict[str, int] = {"worlds": 0, "status_missed": 0}
MAX_WORLDS = 65536
"""The most worlds one call samples (the C core's own limit, which keeps its buffers far from overflow)."""


def status_key(info: InfoSet, j: int) -> tuple[int, int, int]:
    """The public features of opponent ``j`` the table is indexed by: (wall bucket, has called, discards bucket)."""
    return (
        min(info.wall_left // 4, WALL_BUCKETS - 1),
        int(info.melds[j] != 0),
        min(len(info.discards[j]) // 3, DISCARD_BUCKETS - 1),
    )


def table_checksum(tables: dict) -> str:
    """sha256 of the canonical JSON of the count tables (what the data file's ``sha256`` must equal)."""
    return hashlib.sha256(json.dumps(tables, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@functools.cache
def _tables() -> dict[str, np.ndarray]:
    text = resources.files("meld8_env").joinpath("data", TABLE_FILE).read_text()
    data = json.loads(text)
    if table_checksum(data["tables"]) != data.get("sha256"):
        raise RuntimeError(f"meld8_env/data/{TABLE_FILE}: checksum mismatch (refit with training/fit_belief.py)")
    out = {}
    for key, counts in data["tables"].items():
        c = np.asarray(counts, np.float64)  # (WALL, CALLED, DISCARDS, 2): ready, total
        out[key] = (c[..., 0] + 1.0) / (c[..., 1] + 2.0)  # Laplace: a bucket never seen is a coin flip
    return out


def ready_prior(info: InfoSet, j: int) -> float:
    """P(opponent ``j`` is ready | its public features), from the fitted table."""
    return float(_tables()[f"{info.num_players}p"][status_key(info, info.opponent(j))])


def _prefer_greedy_discard(info: InfoSet, j: int, masks: np.ndarray, match: np.ndarray, rounds: int = 8) -> np.ndarray:
    """``match`` (m, k) narrowed, per world, to its first matching proposal from which ``greedy``'s rule
    (``meld8_env.features.best_discards``: smallest distance, then acceptance, then lowest id) discards
    ``j``'s last discard d: the hand it held then was the proposal plus d (its melds unchanged: a call is
    followed by the caller's discard). Proposals are tried in order, ``rounds`` per world, one batched call
    per round; a world with none keeps ``match`` as it was. Skipped (``match`` returned) when ``j`` has not
    discarded or is holding a drawn card (its hand then is not the one it discarded from)."""
    if not info.discards[j] or info.hidden[j] + int(info.melds[j]).bit_count() != HAND_SIZE:
        return match
    d = np.uint64(1 << info.discards[j][-1])
    seen = 0
    for p in range(info.num_players):
        seen |= info.melds[p] | info.uncalled_discards(p)
    out = np.zeros_like(match)
    order = np.argsort(~match, axis=1, kind="stable")  # each world's matching proposals first, in order
    n_match = match.sum(axis=1)
    todo = np.flatnonzero(n_match > 0)
    for r in range(min(rounds, match.shape[1])):
        todo = todo[n_match[todo] > r]
        if todo.size == 0:
            break
        kk = order[todo, r]
        held = masks[todo, kk] | d
        card, _, _ = best_discards(held, np.full(todo.size, info.melds[j], np.uint64),
                                   ALL & ~held & ~np.uint64(seen), held & ~JK)  # fmt: skip
        ok = card == int(info.discards[j][-1])
        out[todo[ok], kk[ok]] = True
        todo = todo[~ok]
    none = ~out.any(axis=1)
    out[none] = match[none]
    return out


def _default_rules(P: int) -> RuleConfig:
    return RuleConfig() if P == 3 else RuleConfig.two_player()


def _cards(mask: int) -> np.ndarray:
    return np.array([c for c in range(N_CARDS) if mask >> c & 1], np.int8)


def _template(info: InfoSet, rules: RuleConfig) -> np.ndarray:
    """One record with every public field of ``info`` set; hands of others and the wall left to fill."""
    P = info.num_players
    r = np.zeros(1, STATE_DTYPE)
    r["hands"][0, info.seat] = info.hand
    r["melds"][0, :P] = info.melds
    r["calls_used"][0, :P] = info.calls_used
    r["discards"] = -1
    for p in range(P):
        r["discards"][0, p, : len(info.discards[p])] = info.discards[p]
        r["ndisc"][0, p] = len(info.discards[p])
    r["called"][0, :P] = info.called
    r["dead"][0, :P] = info.dead
    r["draws_taken"][0, :P] = info.draws_taken
    r["scores"][0, :P] = info.scores
    r["deltas"][0, :P] = info.deltas
    wall_len = N_CARDS - rules.hand_size * P
    wall_end = wall_len - info.dead_wall
    for f, v in {
        "round": info.round, "replays": info.replays, "deals": info.deals, "chiicha": info.chiicha,
        "phase": info.phase, "current": info.current, "drawn": info.drawn, "dora_ind": info.dora_ind,
        "kuikae": info.kuikae, "any_call": info.any_call, "first_draw": info.first_draw,
        "last_card": info.last_card, "claim_card": info.claim_card, "claim_discarder": info.claim_discarder,
        "claim_final": info.claim_final, "result": info.result, "win_seat": info.win_seat,
        "lose_seat": info.lose_seat, "caller": -1, "hand_round": info.round, "wall_len": wall_len,
        "wall_end": wall_end, "wall_pos": wall_end - info.wall_left, "win_card": -1, "acting": -1,
        "dealer_discarded": int(len(info.discards[info.dealer]) > 0),
    }.items():  # fmt: skip
        r[f] = v
    return r


def _choose(rng: np.random.Generator, pool: np.ndarray, n: int, tries: int, h: int) -> np.ndarray:
    """Indices (n, tries, h) of h distinct cards among the U columns of ``pool`` (n, U), uniformly: the first h
    steps of a Fisher-Yates shuffle, vectorized over the n * tries proposals (h <= 8, so h numpy passes)."""
    U, m = pool.shape[1], n * tries
    idx = np.broadcast_to(np.arange(U, dtype=np.int64), (m, U)).copy()
    rows = np.arange(m)
    for t in range(h):
        j = t + (rng.random(m) * (U - t)).astype(np.int64)
        a = idx[:, t].copy()
        idx[:, t] = idx[rows, j]
        idx[rows, j] = a
    return idx[:, :h].reshape(n, tries, h)


#: ``learned``: at most LEARNED_ROUNDS rounds of proposals per ready world (``tries`` in the first, then as
#: many as the ready rate seen so far asks, up to 3 * ``tries``), until the worlds share LEARNED_MIN_POOL
LEARNED_MIN_POOL, LEARNED_ROUNDS = 64, 4
#: ``learned``: Newton steps of the tilt fit, its L2 weight, the bound on a card's log-weight, the targets' range
TILT_ITERS, TILT_L2, TILT_CLIP, TARGET_RANGE = 3, 0.01, 6.0, (1e-3, 0.9)


def _propose(rng: np.random.Generator, pool: np.ndarray, k: int, h: int, meld: int) -> tuple[np.ndarray, ...]:
    """``k`` uniform hands of ``h`` cards per row of ``pool`` (m, U): indices (m, k, h), masks and waits (m, k)."""
    m = len(pool)
    cand = _choose(rng, pool, m, k, h)
    cards = np.take_along_axis(pool[:, None, :], cand.reshape(m, -1)[:, None, :], axis=2)
    masks = np.bitwise_or.reduce(BITS[cards.reshape(m, k, h).astype(np.int64)], axis=2)
    waits = waits_batch(masks.ravel(), np.full(masks.size, meld, np.uint64)).reshape(masks.shape)
    return cand, masks, waits


def _tilt(x: np.ndarray, allowed: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(m, M) selection probabilities: world i picks proposal k (x (M, C): which of C cards it waits on;
    ``allowed`` (m, M): k fits in world i) with probability proportional to ``exp(x_k theta)``, theta chosen
    so that each card c, averaged over the worlds, is waited on with probability ``target[c]``, as nearly as
    the proposals allow: theta minimizes the convex ``mean_i log sum_{k allowed in i} exp(x_k theta) -
    theta . target + TILT_L2 |theta|^2`` (maximum entropy under the marginals; the L2 term keeps theta finite
    when a target cannot be met), by ``TILT_ITERS`` Newton steps (C <= 53: the C x C Hessian is cheap)."""
    m, C = allowed.shape[0], x.shape[1]
    theta = np.zeros(C)
    for it in range(TILT_ITERS + 1):
        logits = np.where(allowed, (x @ theta)[None, :], -np.inf)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        if it == TILT_ITERS:
            return p
        mu = p @ x  # (m, C): each world's expected wait set
        grad = mu.mean(axis=0) - target + 2 * TILT_L2 * theta
        hess = ((x * p.sum(axis=0)[:, None]).T @ x - mu.T @ mu) / m + 2 * TILT_L2 * np.eye(C)
        theta = np.clip(theta - np.linalg.solve(hess, grad), -TILT_CLIP, TILT_CLIP)
    raise AssertionError("unreachable")


def _learned_ready(
    info: InfoSet,
    j: int,
    rng: np.random.Generator,
    pool: np.ndarray,
    h: int,
    furiten: np.uint64,
    passed: np.uint64,
    tries: int,
) -> tuple[np.ndarray, int]:
    """Indices (m, h) into ``pool`` (m, U) of one ready hand of ``j`` per world, and how many worlds had no
    ready proposal to choose from (they keep their first proposal).

    Ready proposals are gathered per world (up to ``LEARNED_ROUNDS`` rounds of uniform hands, until the
    worlds have ``LEARNED_MIN_POOL`` together) and shared: a world may
    take any proposal whose cards are all still in its pool (all of them for the first opponent, whose pool
    every world shares; for a later one, those disjoint from the cards this world gave earlier opponents).
    Each world then draws one with the probabilities of :func:`_tilt`, which make the worlds' wait sets
    follow ``wait_probs(info, j)`` on the cards the seat cannot place (its own hand and the pool)."""
    m = len(pool)
    count = np.zeros(m, np.int64)
    first = np.zeros((m, h), np.int64)
    got_masks, got_waits = [], []
    k = tries
    for r in range(LEARNED_ROUNDS):
        if count.sum() >= LEARNED_MIN_POOL:
            break
        if r == 1:  # the next rounds sized by the ready rate seen so far (at most 3 * tries per world)
            rate = max(count.sum(), 1) / (m * tries)
            k = int(np.clip((LEARNED_MIN_POOL - count.sum()) / (rate * m), tries // 2, 3 * tries))
        cand, masks, waits = _propose(rng, pool, k, h, info.melds[j])
        if r == 0:
            first[:] = cand[:, 0]
        ok = (waits != 0) & ((waits & furiten) == 0) & ((waits & passed) == 0)
        got_masks.append(masks[ok])
        got_waits.append(waits[ok])
        count += ok.sum(axis=1)
    masks, waits = np.concatenate(got_masks), np.concatenate(got_waits)
    # proposals ordered by their waits among the seat's own cards, then by all their waits: the stratified
    # draws below then take each kind of wait set (above all: which of our discards it Rons) in proportion
    # to its weight, instead of by luck
    by_waits = np.lexsort((waits, waits & np.uint64(info.hand)))
    masks, waits = masks[by_waits], waits[by_waits]
    if masks.size == 0:
        return first, m
    # each world's pool as a mask: a proposal fits where all its cards are in it
    in_pool = np.bitwise_or.reduce(BITS[pool.astype(np.int64)], axis=1)
    allowed = (masks[None, :] & ~in_pool[:, None]) == 0
    cards = np.flatnonzero((((info.hand | info.pool) >> np.arange(52)) & 1).astype(bool))
    x = ((waits[:, None] >> cards[None, :].astype(np.uint64)) & np.uint64(1)).astype(np.float64)
    target = np.clip(wait_probs(info, j)[cards], *TARGET_RANGE)
    have = allowed.any(axis=1)
    out = first.copy()
    if have.any():
        p = _tilt(x, allowed[have], target)
        # stratified draws: world i inverts its own cumulative probabilities at u_i = (pi(i) + v) / k, with
        # pi a random permutation and v one uniform, so each u_i is uniform (each world's draw is exact)
        # while together they sweep (0, 1) evenly: where the worlds share their proposals (the first
        # opponent) this is systematic resampling, and the wait sets across worlds follow the weighted
        # proposals with far less Monte-Carlo noise than independent draws
        k = p.shape[0]
        u = (rng.permutation(k) + rng.random()) / k
        pick = (p.cumsum(axis=1) < u[:, None]).sum(axis=1).clip(max=p.shape[1] - 1)
        # the chosen hand as indices into this world's pool row (its cards are all there: ``allowed``)
        chosen = masks[pick]
        rows = np.flatnonzero(have)
        held = ((chosen[:, None] >> pool[rows].astype(np.uint64)) & np.uint64(1)).astype(bool)  # (k, U)
        out[rows] = np.argsort(~held, axis=1, kind="stable")[:, :h]
    return out, int((~have).sum())


def sample_worlds(
    info: InfoSet,
    n: int,
    rng: np.random.Generator,
    method: str = "two_level",
    rules: RuleConfig | None = None,
    tries: int = 96,
    no_pass: bool = False,
    last_discard: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (1..:data:`MAX_WORLDS`) engine records consistent with ``info`` and their weights (module docstring);
    a hand-built or edited ``info`` is checked first (``InfoSet.check``), and it must be of ``rules``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if not isinstance(info, InfoSet):
        raise TypeError(f"sample_worlds takes an InfoSet (meld8_env.infoset.infoset), got {type(info).__name__}")
    info.check()  # a hand-built or edited one failed deep inside (IndexError, OverflowError): red team, session 37
    no_pass = check_flag(no_pass, "no_pass")  # the string 'false' switched it on
    last_discard = check_flag(last_discard, "last_discard")
    if info.phase == Phase.OVER:
        raise ValueError("the game is over: there is no hidden card left to sample")
    # 2.5, '3': from deep inside before; above MAX_WORLDS the C core refused in its own words while its numpy twin
    # (another generator, a flag, learned) went on until memory ran out (red team, session 48)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_WORLDS:
        raise ValueError(f"n must be an integer >= 1 and at most {MAX_WORLDS} (worlds), got {str(n)[:40]!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    if isinstance(tries, bool) or not isinstance(tries, (int, np.integer)) or not 1 <= tries <= 4096:
        raise ValueError(f"tries must be an integer 1..4096 (proposals per world), got {tries!r}")
    if last_discard and method == "learned":
        raise ValueError("last_discard picks its own proposal; use it with method two_level, not learned")
    rules = _default_rules(info.num_players) if rules is None else RuleConfig.load(rules)
    if rules.num_players != info.num_players:
        raise ValueError(f"rules seat {rules.num_players} players, the infoset {info.num_players}")
    # an infoset of other rules with as many seats gave worlds that play by neither (red team, session 48)
    if info.dead_wall != rules.wall_limit:
        raise ValueError(
            f"the infoset is not of these rules: its dead wall holds {info.dead_wall} cards, the rules' wall_limit "
            f"keeps {rules.wall_limit}"
        )
    if info.round >= rules.rounds:
        raise ValueError(
            f"the infoset is not of these rules: it is in round {info.round}, the rules play rounds "
            f"0..{rules.rounds - 1}"
        )
    P = info.num_players
    opps = [j for j in range(P) if j != info.seat]
    if use_core(info, method, rng, no_pass, last_discard):
        hands, wall, missed = _sample_core(info, n, rng, method, tries)
    else:
        hands, wall, missed = _sample_numpy(info, n, rng, method, tries, no_pass, last_discard)
    records = np.repeat(_template(info, rules), n)
    records["hands"][:, opps] = hands[:, opps]
    lo = int(records["wall_pos"][0])
    records["wall"][:, lo : lo + wall.shape[1]] = wall
    records["seed"] = rng.integers(0, 2**63, n, dtype=np.uint64)
    if info.phase == Phase.DRAW and info.current != info.seat:  # the drawing opponent drew one of its cards
        h = hands[:, info.current]
        records["drawn"] = [int(m & -m).bit_length() - 1 if m else -1 for m in h.tolist()]
    refresh(records, rules)
    check_conservation(records, rules)
    LAST_STATS["worlds"] += n
    LAST_STATS["status_missed"] += missed
    return records, np.ones(n, np.float64)


def use_core(
    info: InfoSet, method: str, rng: np.random.Generator, no_pass: bool = False, last_discard: bool = False
) -> bool:
    """Whether :func:`sample_worlds` runs the C core: built, the C backend, a PCG64 generator (numpy's default,
    the stream the core replays), ``uniform`` or ``two_level`` with no flag, and (two_level) every hidden hand
    of a size whose waits exist (7, or 4 beside a meld; a drawing opponent's 8 cards go to the numpy twin)."""
    if _core is None or _hands.BACKEND != "c" or no_pass or last_discard or method not in ("uniform", "two_level"):
        return False  # the backend is read now: hands.set_backend("python") sends the sampler to its twin too
    if type(rng.bit_generator) is not np.random.PCG64:
        return False
    return method == "uniform" or all(info.hidden[j] in (0, HAND_SIZE, 4) for j in range(info.num_players))


def _sample_core(info: InfoSet, n: int, rng: np.random.Generator, method: str, tries: int) -> tuple:
    """(hands (n, P) uint64, wall (n, W) int8, missed) from the C core, advancing ``rng`` as the twin does."""
    P = info.num_players
    opps = [j for j in range(P) if j != info.seat and info.hidden[j] > 0]
    pool = _cards(info.pool)
    st = rng.bit_generator.state
    s, inc = st["state"]["state"], st["state"]["inc"]
    words = np.array([s >> 64, s & M64, inc >> 64, inc & M64, st["has_uint32"], st["uinteger"]], np.uint64)
    two = method == "two_level"
    hs = np.array([info.hidden[j] for j in opps], np.int32)
    ps = np.array([ready_prior(info, j) if two else 0.0 for j in opps], np.float64)
    fur = np.array([info.uncalled_discards(j) for j in opps], np.uint64)
    meld = np.array([info.melds[j] for j in opps], np.uint64)
    got = np.zeros((n, len(opps)), np.uint64)
    wall = np.zeros((n, len(pool) - int(hs.sum())), np.int8)
    missed = _core.sample(words, pool, n, tries, int(not two), hs, ps, fur, meld, got, wall)
    w = [int(x) for x in words]
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": w[0] << 64 | w[1], "inc": w[2] << 64 | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }
    hands = np.zeros((n, P), np.uint64)
    hands[:, opps] = got
    return hands, wall, int(missed)


M64 = (1 << 64) - 1


def _deal(pool: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cards at ``idx`` (n, h) of each row of ``pool`` (n, U) as masks (n,), and the pool without them."""
    chosen = np.take_along_axis(pool, idx, axis=1)
    keep = np.ones(pool.shape, bool)
    np.put_along_axis(keep, idx, False, axis=1)
    return np.bitwise_or.reduce(BITS[chosen.astype(np.int64)], axis=1), pool[keep].reshape(len(pool), -1)


def _sample_numpy(
    info: InfoSet, n: int, rng: np.random.Generator, method: str, tries: int, no_pass: bool, last_discard: bool
) -> tuple:
    """The readable twin of the C core (and the only code for ``learned`` and the flags): the hidden hands,
    the wall order and the count of worlds that missed their drawn status."""
    P = info.num_players
    opps = [j for j in range(P) if j != info.seat]
    pool = np.tile(_cards(info.pool), (n, 1))  # (n, U): what is left to place, per world
    hands = np.zeros((n, P), np.uint64)
    missed = 0
    for j in opps:
        h = info.hidden[j]
        if h == 0:
            continue
        # an opponent holding a drawn card (it drew, or it just called: 8 cards with its meld) failed in the waits'
        # size check (red team, session 48): its status is its hand's before that card, one more uniform card
        extra = int(method != "uniform" and h + int(info.melds[j]).bit_count() == HAND_SIZE + 1)
        h -= extra
        if method == "uniform":
            idx = _choose(rng, pool, n, 1, h)[:, 0, :]
        else:
            want = rng.random(n) < ready_prior(info, j)
            furiten = np.uint64(info.uncalled_discards(j))
            passed = np.uint64(passed_cards(info, j)) if no_pass else np.uint64(0)
            idx = np.zeros((n, h), np.int64)
            todo = np.arange(n)
            if method == "learned" and want.any():  # ready worlds: hands whose waits follow the wait model
                rows = np.flatnonzero(want)
                idx[rows], m = _learned_ready(info, j, rng, pool[rows], h, furiten, passed, tries)
                missed += m
                todo = np.flatnonzero(~want)
            # a few proposals first (most "not ready" worlds match at once), then ``tries`` for the rest
            for stage, k in enumerate((min(8, tries), tries)):
                if todo.size == 0:
                    break
                cand = _choose(rng, pool[todo], todo.size, k, h)  # (m, k, h)
                cards = np.take_along_axis(pool[todo][:, None, :], cand.reshape(todo.size, -1)[:, None, :], axis=2)
                masks = np.bitwise_or.reduce(BITS[cards.reshape(todo.size, k, h).astype(np.int64)], axis=2)
                waits = waits_batch(masks.ravel(), np.full(masks.size, info.melds[j], np.uint64)).reshape(masks.shape)
                ready = (waits != 0) & ((waits & furiten) == 0)
                match = ready == want[todo, None]
                if no_pass:  # a ready hand that could have Ron'd a card it let pass is one this opponent lacks
                    match &= ~(ready & ((waits & passed) != 0))
                if last_discard:
                    match = _prefer_greedy_discard(info, j, masks, match)
                got = match.any(axis=1)
                first = match.argmax(axis=1)
                idx[todo[got]] = cand[got, first[got]]
                if stage == 1:  # nothing had the status: keep the first proposal
                    idx[todo[~got]] = cand[~got, 0]
                    missed += int((~got).sum())
                todo = todo[~got]
        hands[:, j], pool = _deal(pool, idx)
        if extra:
            got, pool = _deal(pool, _choose(rng, pool, n, 1, 1)[:, 0, :])
            hands[:, j] |= got
    wall = rng.permuted(pool, axis=1)  # the rest, in a random draw order
    return hands, wall, missed
