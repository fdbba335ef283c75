"""Rollouts at engine speed: caller-owned records played to the end of the hand or game by C bots.

``rollout(rules, records, seat_policies, seeds, until="hand", threads=2)`` advances ``records``
((N,) ``STATE_DTYPE``, C-contiguous, writable; pass copies to keep the originals) in place. Seat ``p``
of record ``i`` plays ``seat_policies[i, p]`` (names or codes of ``meld8_env.policies.POLICY``; a (P,)
row applies to every record). ``seeds`` (N,) uint64 start each record's splitmix64 stream for the
``random`` policy (greedy, defensive and oracle draw nothing), so a rollout is a function of its inputs: the
same records, policies and seeds give the same result whatever ``threads`` is.

A seat whose policy is ``"external"`` (:data:`meld8_env.policies.EXTERNAL`) is played by the caller's
``external(obs, masks) -> actions`` (e.g. a network: the search's ``me=distilled``): the C rollout stops every record
where such a seat is to act, the function decides all of them in one batch from the acting seat's observation, the
actions are stepped and the C rollout goes on. Its twin test plays the C bots' Python twins as external seats and
gets the C bots' records exactly (``tests/test_rollout_external.py``).

``threads`` threads of the C extension (the calling one included, GIL released) take the records two at a time
from a shared counter: a rollout's length varies with the deal, so fixed slices leave one thread waiting on the
other (the search's batches are a few dozen to a few hundred records, one record is ~0.1 ms). The Python twin
is stepping the records one action at a time with the agents in ``agents/``
(``tests/test_cbots.py`` does exactly that; ``agents.oracle`` for ``oracle``, which reads the other seats'
hands in each record: in the search's worlds those are the sampled hands).

``play_games(rules, seeds, policies, seats, threads=1)`` plays whole games from their seeds with a
``meld8_env.policies.SeatPolicy`` per agent and returns what the arena logs of each game (its actions, final
scores, placements and per-seat counts, :class:`GamesResult`): the arena's path when every seat of a lineup is a
built-in C bot. Its twin is the arena's own lockstep loop over the same games (``tests/test_arena_c_games.py``).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from meld8_env.codes import Phase, Result
from meld8_env.engine.bots import play_games_raw, rollout_raw
from meld8_env.engine.records import (
    observe_records,
    put_records,
    start_records,
    step_records,
    take_records,
)
from meld8_env.engine.seeding import MASK64
from meld8_env.observation import obs_size
from meld8_env.policies import EXTERNAL_CODE, SeatPolicy, check_record_array, packed, policy_codes
from meld8_env.rules import RuleConfig

UNTIL = {"hand": 0, "game": 1}
ExternalPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``external(obs (B, D) uint8, masks (B, 64) bool) -> actions (B,)``: the decisions of a rollout's external seats."""
MAX_STEPS = 1 << 20
"""A safety stop per record (a game of 16 rounds takes a few thousand steps)."""
CHUNKS_PER_THREAD = 4
"""Slices per thread of :func:`play_games` (each slice has its own action buffers, so it is not split per game)."""
FIRST_ACTIONS = 4096
""":func:`play_games`' first buffer per game (a game between the bots takes ~150 actions under the default rules)."""
MAX_THREADS = 8
_pool: list[ThreadPoolExecutor] = []
_pool_lock = threading.Lock()


@dataclasses.dataclass(frozen=True)
class RolloutResult:
    """Per record, P = the rules' players: ``deltas`` (N, P) int32 score change over the rollout,
    ``scores`` (N, P) int32 scores after it, ``final_scores`` (N, P) int32 and ``placements`` (N, P)
    uint8 where the game is over (0 elsewhere), ``over`` (N,) bool, ``steps`` (N,) int32 actions taken."""

    deltas: np.ndarray
    scores: np.ndarray
    final_scores: np.ndarray
    placements: np.ndarray
    over: np.ndarray
    steps: np.ndarray


def rollout(
    rules: RuleConfig,
    records: np.ndarray,
    seat_policies: object,
    seeds: np.ndarray,
    until: str = "hand",
    threads: int = 2,
    external: ExternalPolicy | None = None,
) -> RolloutResult:
    """Play every record to the end of its current hand (``until="hand"``) or game (``"game"``).

    ``external``: the decisions of the seats whose policy is ``"external"`` (:data:`EXTERNAL`), e.g. a network.
    The C rollout stops each record where such a seat is to act; ``external(obs (B, D) uint8, masks (B, 64)
    bool) -> actions (B,)`` decides for all of them at once, from the acting seat's observation, the actions are
    stepped (``step_records``: a refused one is an error naming the record and action) and the C rollout goes on,
    until no record waits. So the result is what stepping the records one action at a time with those agents
    gives (``tests/test_rollout_external.py``); ``external`` must be a function of its inputs for that."""
    if until not in UNTIL:
        raise ValueError(f"until must be 'hand' or 'game', got {until!r}")
    _check_threads(threads)
    records = check_record_array(records, writable=True)
    n, P = len(records), rules.num_players
    pol = policy_codes(seat_policies, (n, P), external_ok=True)
    has_external = bool((pol == EXTERNAL_CODE).any())
    if has_external and external is None:
        raise ValueError("seat_policies name 'external' seats: pass external=f, f(obs, masks) -> actions")
    if external is not None and not callable(external):
        raise TypeError(f"external must be a function f(obs, masks) -> actions, got {type(external).__name__}")
    seeds = np.asarray(seeds)
    if seeds.shape != (n,) or seeds.dtype.kind not in "iu":
        raise ValueError(f"seeds must be {n} unsigned integers (one per record), got shape {seeds.shape}")
    rng = seeds.astype(np.uint64)  # a copy: the caller's seeds stay as given
    steps = np.zeros(n, np.int32)
    deltas = np.zeros((n, P), np.int32)
    rules_bytes = packed(rules)

    start = records["scores"][:, :P].astype(np.int32)
    # external's answers are checked only once it has seen the first pauses: play a copy, so that a refused answer
    # (or an error inside external) leaves the caller's records as they were
    work = records.copy() if has_external else records
    _run_c(rules_bytes, work, pol, rng, until, threads, steps, deltas)
    if has_external:
        _external_turns(rules, work, pol, rng, until, threads, external, steps)
        records[...] = work
        deltas = records["scores"][:, :P].astype(np.int32) - start
    over = records["phase"] == int(Phase.OVER)
    return RolloutResult(
        deltas=deltas,
        scores=records["scores"][:, :P].copy(),
        final_scores=np.where(over[:, None], records["final_scores"][:, :P], 0).astype(np.int32),
        placements=np.where(over[:, None], records["placements"][:, :P], 0).astype(np.uint8),
        over=over,
        steps=steps,
    )


def _run_c(
    rules_bytes: bytes,
    records: np.ndarray,
    pol: np.ndarray,
    rng: np.ndarray,
    until: str,
    threads: int,
    steps: np.ndarray,
    deltas: np.ndarray,
) -> None:
    """One C rollout call (records, rng, steps and deltas written in place); a record that cannot reach its stop
    (nor a pause for an external seat) is an error."""
    stuck = rollout_raw(records, rules_bytes, pol, rng, UNTIL[until], MAX_STEPS, steps, deltas, threads)
    if stuck:
        raise RuntimeError(f"rollout: {stuck} records did not finish (a record that is not a live game state?)")


def _live(records: np.ndarray, until: str, steps: np.ndarray) -> np.ndarray:
    """Where a record has not reached its stop (the game's end, or with ``until="hand"`` the hand's). Every step
    clears ``result`` first, so a record this rollout stepped (``steps`` > 0) with a result has ended its hand
    here; one it has not stepped may still carry the result of the hand before its live deal, which the C
    rollout plays through, so that is no stop."""
    live = (records["phase"] != int(Phase.OVER)) & (records["acting"] >= 0)
    if until == "hand":
        live &= (records["result"] == int(Result.NONE)) | (steps == 0)
    return live


def _waiting(records: np.ndarray, pol: np.ndarray, until: str, steps: np.ndarray) -> np.ndarray:
    """Indices of the records a rollout left where an external seat is to act (live, before their stop)."""
    idx = np.flatnonzero(_live(records, until, steps))
    return idx[pol[idx, records["acting"][idx].astype(np.int64)] == EXTERNAL_CODE]


def _external_turns(
    rules: RuleConfig,
    records: np.ndarray,
    pol: np.ndarray,
    rng: np.ndarray,
    until: str,
    threads: int,
    external: ExternalPolicy,
    steps: np.ndarray,
) -> None:
    """The external seats' turns of :func:`rollout`: decide every waiting record at once, step, roll on."""
    P = rules.num_players
    while (idx := _waiting(records, pol, until, steps)).size:
        sub = take_records(records, idx)
        obs, masks = observe_records(rules, sub)
        acts = np.asarray(external(obs, masks))
        if acts.shape != (len(idx),) or acts.dtype.kind not in "iu":
            raise ValueError(f"external returned {acts.dtype} of shape {acts.shape}: give {len(idx)} integer actions")
        out = acts > 63 if acts.dtype.kind == "u" else (acts < 0) | (acts > 63)  # before any cast can wrap a value
        if out.any():
            k = int(np.flatnonzero(out)[0])
            raise ValueError(f"external: action {acts[k]} for record {int(idx[k])} is not an action id 0..63")
        refused = step_records(rules, sub, acts.astype(np.int64))
        if refused.any():
            k = int(np.flatnonzero(refused)[0])
            raise ValueError(f"external: action {int(acts[k])} is not legal in record {int(idx[k])}")
        steps[idx] += 1
        put_records(records, idx, sub)
        if stuck := int((steps[idx] >= MAX_STEPS).sum()):  # each C call counts from 0: the safety stop is kept here
            raise RuntimeError(f"rollout: {stuck} records did not finish in {MAX_STEPS} steps")
        go = idx[_live(records[idx], until, steps[idx])]  # the decision may have ended the hand: those stop here
        if go.size:
            sub, sub_rng, more = take_records(records, go), rng[go], np.zeros(len(go), np.int32)
            pol_go = np.ascontiguousarray(pol[go])
            _run_c(packed(rules), sub, pol_go, sub_rng, until, threads, more, np.zeros((len(go), P), np.int32))
            put_records(records, go, sub)
            rng[go] = sub_rng
            steps[go] += more


def _split(part, n: int, threads: int) -> int:
    """``part(a, b)`` over [0, n): one call on one thread, else ``CHUNKS_PER_THREAD`` slices per thread taken by
    ``threads`` threads (this one included) as they finish; returns the sum of the parts' results. Returns (or
    raises the first error) only once no helper is still writing: helpers not started yet are cancelled (the
    slices are all taken), running ones waited for."""
    if threads == 1 or n < 2:
        return part(0, n)
    bounds = np.linspace(0, n, min(threads * CHUNKS_PER_THREAD, n) + 1).astype(int).tolist()
    chunks = list(zip(bounds[:-1], bounds[1:], strict=True))
    taken = itertools.count()  # next() on a count is atomic under the GIL: each slice is taken once

    def worker() -> int:
        got = 0
        while (k := next(taken)) < len(chunks):
            got += part(*chunks[k])
        return got

    with _pool_lock:
        if not _pool:
            _pool.append(ThreadPoolExecutor(MAX_THREADS - 1, thread_name_prefix="meld8-rollout"))
    helpers = [_pool[0].submit(worker) for _ in range(threads - 1)]
    try:
        got = worker()  # this thread works too: one hand-off fewer
    finally:
        for f in helpers:
            f.cancel()
        wait(helpers)
    return got + sum(f.result() for f in helpers if not f.cancelled())


def _check_threads(threads: object) -> None:
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads must be an integer 1..{MAX_THREADS}, got {threads!r}")


@dataclasses.dataclass(frozen=True)
class GamesResult:
    """Per game (N games, P players): every ``actions`` (one bytes object per game, the arena's action log),
    ``final_scores`` (N, P) int32 with placement points and ``placements`` (N, P) uint8 (1-based), and the
    arena's per-seat counts (N, P) int32: ``wins``, ``tsumo``, ``deal_ins``, ``calls``, ``win_han``; ``hands``
    and ``drawn_hands`` (N,) int32."""

    actions: list[bytes]
    final_scores: np.ndarray
    placements: np.ndarray
    wins: np.ndarray
    tsumo: np.ndarray
    deal_ins: np.ndarray
    calls: np.ndarray
    win_han: np.ndarray
    hands: np.ndarray
    drawn_hands: np.ndarray


def play_games(
    rules: RuleConfig,
    seeds: np.ndarray,
    policies: Sequence[SeatPolicy],
    seats: np.ndarray,
    threads: int = 1,
    max_actions: int = MAX_STEPS,
) -> GamesResult:
    """Whole games from their seeds, every seat a C bot: game i is dealt from ``seeds[i]`` (as
    ``Meld8Vector.start_games`` deals it) and seat s plays ``policies[seats[i, s]]`` (``SeatPolicy``: greedy and
    defensive decide from the record, random by its observation hash, exactly as the agents' ``act_obs``
    path does). The arena's fast path for lineups of built-in bots (``training.arena.play``); the readable
    twin is that arena stepping the same games one action at a time (``tests/test_arena_c_games.py``).
    Games get a buffer of ``FIRST_ACTIONS`` actions each; the few longer ones (long rule sets, endless replays)
    are played again from their seeds with 4x the buffer, up to ``max_actions``. RuntimeError (one line) when a
    game does not end within ``max_actions``, or an action is refused."""
    _check_threads(threads)
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    n, P = len(seeds), rules.num_players
    seats = np.asarray(seats)
    if seeds.ndim != 1 or seats.shape != (n, P) or seats.dtype.kind not in "iu":
        raise ValueError(f"seeds must be (N,) and seats ({n}, {P}) integers, got {seeds.shape} and {seats.shape}")
    if not policies or not all(isinstance(p, SeatPolicy) for p in policies):
        raise TypeError("policies must be a non-empty sequence of meld8_env.policies.SeatPolicy")
    if len(policies) > 127:
        raise ValueError(f"at most 127 policies (agents) per call, got {len(policies)}")
    if seats.size and (seats.min() < 0 or seats.max() >= len(policies)):
        raise ValueError(f"seats must index the {len(policies)} policies, got {int(seats.min())}..{int(seats.max())}")
    D = obs_size(rules)
    codes = policy_codes([p.name for p in policies], (len(policies),))
    agent_seeds = np.array([p.seed & MASK64 for p in policies], np.uint64)
    weights = np.zeros((len(policies), D), np.uint64)
    for k, p in enumerate(policies):
        if p.name == "random":
            if p.weights is None or np.shape(p.weights) != (D,):
                raise ValueError(f"policy {k} (random) needs weights of shape ({D},) for these rules")
            weights[k] = p.weights
        elif p.name == "oracle":  # policy_codes refused unknown names; oracle reads hidden hands, not a seat's view
            raise ValueError(f"policy {k}: {p.name!r} cannot play an arena seat (use greedy, defensive or random)")
    seats8 = np.ascontiguousarray(seats, dtype=np.int8)
    rules_bytes = packed(rules)
    records = start_records(rules, seeds)
    stats = np.zeros((n, 6, P), np.int32)
    actions: list[bytes] = [b""] * n
    todo, cap = np.arange(n), min(FIRST_ACTIONS, max_actions)
    while todo.size:
        rec, act = records[todo].copy(), np.zeros((todo.size, cap), np.uint8)
        na, st, se = np.zeros(todo.size, np.int32), np.zeros((todo.size, 6, P), np.int32), seats8[todo]

        def part(a: int, b: int, rec=rec, act=act, na=na, st=st, se=se) -> int:
            return play_games_raw(rec[a:b], rules_bytes, codes, agent_seeds, weights, se[a:b], act[a:b], na[a:b],
                                  st[a:b])  # fmt: skip

        _split(part, todo.size, threads)
        over = rec["phase"] == int(Phase.OVER)
        if (~over & (na < cap)).any():
            raise RuntimeError(f"play_games: game {int(todo[~over & (na < cap)][0])} stopped on a refused action")
        done = todo[over]
        records[done], stats[done] = rec[over], st[over]
        for i, k in zip(done.tolist(), np.flatnonzero(over).tolist(), strict=True):
            actions[i] = act[k, : na[k]].tobytes()
        todo = todo[~over]
        if todo.size and cap >= max_actions:
            raise RuntimeError(f"play_games: {todo.size} games did not end within {max_actions} actions")
        cap = min(4 * cap, max_actions)  # the long ones again from their start records (untouched), a larger buffer
    return GamesResult(
        actions=actions,
        final_scores=records["final_scores"][:, :P].astype(np.int32),
        placements=records["placements"][:, :P].astype(np.uint8),
        wins=stats[:, 0].copy(),
        tsumo=stats[:, 1].copy(),
        deal_ins=stats[:, 2].copy(),
        calls=stats[:, 3].copy(),
        win_han=stats[:, 4].copy(),
        hands=stats[:, 5, 0].copy(),
        drawn_hands=stats[:, 5, 1].copy(),
    )
