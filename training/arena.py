"""Play many games at once with a given agent in each seat (the engine of tournaments and evaluation).

``play(agents, seats, seeds, rules)``: game g is seeded ``seeds[g]`` and seat s is played by
``agents[seats[g, s]]``. All games run in one ``Meld8Vector``; at every step each agent gets the rows
where it must act in one ``act_batch`` call (one forward pass for a policy) through the shared
``meld8_env.table.Table`` (which also feeds seat-protocol bots their event streams). Returns one
:class:`GameRecord` per game with final scores, placements and per-seat hand statistics (a hand is one deal of cards).
``stop`` (a callable) is polled before every step: when it returns True, ``StopRequested``
(``training.stop_request``) is raised and no record is returned (a trainer's evaluation cut short by Ctrl-C).

When every agent is a built-in C bot (``c_policy()`` gives a ``meld8_env.policies.SeatPolicy``: greedy,
defensive and random unless ``MELD8_BACKEND=python``), whole games are played in C instead
(``meld8_env.rollout.play_games``, in slices of ``batch`` games, at most 1,024, ``stop`` polled between them)
and the records are the same, handed to ``on_game`` in the same order as the lockstep loop finishes them
(:func:`finish_order`); ``tests/test_arena_c_games.py`` holds the two paths to each other.
"""

from __future__ import annotations

import base64
import dataclasses
import heapq
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from meld8_env.agent import as_agent
from meld8_env.codes import Result
from meld8_env.rollout import play_games
from meld8_env.rules import RuleConfig
from meld8_env.table import Table
from meld8_env.vector import Meld8Vector
from training.stop_request import check_stop


@dataclasses.dataclass
class GameRecord:
    seed: int
    seats: list[int]  # agent index in each seat
    final_scores: list[int] = dataclasses.field(default_factory=list)
    placements: list[int] = dataclasses.field(default_factory=list)
    hands: int = 0  # deals of cards in this game (rounds and replays)
    drawn_hands: int = 0  # hands that ended in a draw (R39)
    wins: list[int] = dataclasses.field(default_factory=list)  # per seat
    tsumo: list[int] = dataclasses.field(default_factory=list)
    deal_ins: list[int] = dataclasses.field(default_factory=list)
    calls: list[int] = dataclasses.field(default_factory=list)
    win_han: list[int] = dataclasses.field(default_factory=list)  # summed over wins
    faults: list[dict] = dataclasses.field(default_factory=list)  # external bots' faults (meld8_env.seat_process)
    actions: str = ""  # every action of the game, one byte each, base64: the game re-creates from its seed

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        if not self.actions:
            del out["actions"]
        if not self.faults:  # logs of fault-free games look as they always did
            del out["faults"]
        return out


def play(
    agents: Sequence,
    seats: np.ndarray,
    seeds: Sequence[int],
    rules: RuleConfig | None = None,
    batch: int = 256,
    on_game=None,
    stop: Callable[[], bool] | None = None,
    threads: int = 1,
) -> list[GameRecord]:
    """Play every (seed, seating) game; ``on_game(index, record)`` is called as each one finishes. ``threads``:
    how many threads the whole-game C path may use (module docstring; the lockstep loop ignores it)."""
    rules = rules or RuleConfig()
    P = rules.num_players
    seats = np.asarray(seats, dtype=np.int64)
    n = len(seeds)
    if seats.shape != (n, P):
        raise ValueError(f"seats must have shape ({n}, {P}), got {seats.shape}")
    agents = [as_agent(a) for a in agents]  # the whole contract (setup / close), once
    for a in agents:
        a.setup(rules)
    policies = c_lineup(agents)
    if policies is not None and n:
        return _play_c(policies, seats, seeds, rules, batch, on_game, stop, threads)
    records: list[GameRecord | None] = [None] * n
    # which copy of its deal each game is (a duplicate board plays one deal under every seating): an outside bot
    # plays each copy in another process, so no process sees one deal twice (leak audit, session 36: one process
    # played two seatings of a board at once, its draws in one the future draws of the other)
    seen: dict[int, int] = {}
    copy = []
    for sd in seeds:
        copy.append(seen.get(int(sd), 0))
        seen[int(sd)] = copy[-1] + 1
    queue = deque(range(n))
    width = min(batch, n)
    v = Meld8Vector(width, rules=rules, seed=0, autoreset=False)
    table = Table(v)
    slot_game = np.full(width, -1, np.int64)
    history = np.zeros((width, 256), np.uint8)  # actions of each slot's game so far (grows as needed)
    played = np.zeros(width, np.int64)

    def start(slots: np.ndarray) -> None:
        chosen = []
        for s in slots:
            if queue:
                g = queue.popleft()
                slot_game[s] = g
                played[s] = 0
                records[g] = GameRecord(int(seeds[g]), seats[g].tolist(), wins=[0] * P, tsumo=[0] * P,
                                        deal_ins=[0] * P, calls=[0] * P, win_han=[0] * P)  # fmt: skip
                chosen.append(s)
            else:
                slot_game[s] = -1
        if chosen:
            idx = np.asarray(chosen, np.int64)
            games = [int(slot_game[s]) for s in chosen]
            v.start_games(idx, np.asarray([seeds[g] for g in games], np.uint64))
            table.seat(idx, [[agents[a] for a in seats[g]] for g in games], [{"deal_copy": copy[g]} for g in games])

    v.reset(seed=0)
    start(np.arange(width))
    try:
        while (slot_game >= 0).any():
            check_stop(stop, "playing games")
            acts = np.zeros(width, np.int64)
            table.act(acts)
            live = slot_game >= 0
            rows = np.flatnonzero(live)
            if played.max() >= history.shape[1]:
                history = np.concatenate([history, np.zeros_like(history)], axis=1)
            history[rows, played[rows]] = acts[rows]
            played[rows] += 1
            table.step(acts)
            for s in np.flatnonzero(live & (v.caller >= 0)):
                records[slot_game[s]].calls[int(v.caller[s])] += 1
            for h in v.hand_outcomes():
                if slot_game[h.game] < 0:
                    continue
                rec = records[slot_game[h.game]]
                rec.hands += 1
                if h.kind == Result.DRAW:
                    rec.drawn_hands += 1
                elif h.is_win:
                    rec.wins[h.winner] += 1
                    rec.win_han[h.winner] += h.han
                    if h.kind == Result.TSUMO:
                        rec.tsumo[h.winner] += 1
                    else:
                        rec.deal_ins[h.discarder] += 1
            for o in v.game_outcomes():
                g = int(slot_game[o.game])
                if g < 0:  # pragma: no cover - a finished slot reports no outcome
                    continue
                rec = records[g]
                rec.final_scores = list(o.final_scores)
                rec.placements = list(o.placements)
                rec.faults = table.ended_faults.get(o.game, [])
                rec.actions = base64.b64encode(history[o.game, : played[o.game]].tobytes()).decode()
                if on_game is not None:
                    on_game(g, rec)
                start(np.array([o.game]))
    finally:
        table.close()
    return records  # type: ignore[return-value]


def c_lineup(agents: Sequence) -> list | None:
    """Each agent's ``SeatPolicy`` when every one of them decides as a built-in C bot, else None."""
    policies = [getattr(a, "c_policy", lambda: None)() for a in agents]
    return policies if all(p is not None for p in policies) else None


def finish_order(steps: Sequence[int], width: int):
    """Yield game indices in the order :func:`play`'s lockstep loop finishes them: ``width`` slots start games
    0..width-1 together, every live slot takes one action per step (game g needs ``steps[g]``), and a slot whose
    game ends starts the next queued game after that step; games ending on the same step go in slot order.
    ``steps`` may be an iterator that is read only as far as the games started so far need."""
    steps = iter(steps)
    heap: list[tuple[int, int, int]] = []  # (step it ends on, slot, game)
    nxt = 0
    for slot in range(width):
        k = next(steps, None)
        if k is None:
            break
        heapq.heappush(heap, (k, slot, nxt))
        nxt += 1
    while heap:
        t, slot, g = heapq.heappop(heap)
        yield g
        k = next(steps, None)
        if k is not None:
            heapq.heappush(heap, (t + k, slot, nxt))
            nxt += 1


def _play_c(policies: list, seats: np.ndarray, seeds: Sequence[int], rules: RuleConfig, batch: int, on_game,
            stop, threads: int) -> list[GameRecord]:  # fmt: skip
    """:func:`play` for a lineup of C bots: games in slices of ``batch`` (at most 1,024) through ``play_games``."""
    n, P = seats.shape
    records: list[GameRecord | None] = [None] * n

    def played():  # steps of each game, playing the next slice when the order needs a game not played yet
        step = min(batch, 1024)  # a slice's action buffers are 4 KiB per game: memory does not grow with batch
        for a in range(0, n, step):
            check_stop(stop, "playing games")
            b = min(n, a + step)
            res = play_games(rules, np.asarray(seeds[a:b], np.uint64), policies, seats[a:b], threads=threads)
            for i in range(b - a):
                records[a + i] = GameRecord(
                    int(seeds[a + i]), seats[a + i].tolist(),
                    final_scores=res.final_scores[i].tolist(), placements=res.placements[i].tolist(),
                    hands=int(res.hands[i]), drawn_hands=int(res.drawn_hands[i]), wins=res.wins[i].tolist(),
                    tsumo=res.tsumo[i].tolist(), deal_ins=res.deal_ins[i].tolist(), calls=res.calls[i].tolist(),
                    win_han=res.win_han[i].tolist(), actions=base64.b64encode(res.actions[i]).decode(),
                )  # fmt: skip
                yield len(res.actions[i])

    for g in finish_order(played(), min(batch, n)):
        if on_game is not None:
            on_game(g, records[g])
    return records  # type: ignore[return-value]
