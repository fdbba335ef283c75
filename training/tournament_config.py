"""What a duplicate tournament is: its settings, its seatings and its board seeds.

``TournamentConfig`` (agents, boards, seed, workers, out, backend, rules, ...), ``seatings(agents)``
(the distinct seatings as index tuples: 6 for three different agents, 3 rotations when two seats hold
copies of one agent) and ``board_seed(seed, board)`` (the game seed of each board). The log's header
(:meth:`TournamentConfig.header`) is what a resumed run must match.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from pathlib import Path

from meld8_env.engine.seeding import Stream
from meld8_env.rules import RuleConfig
from meld8_env.seat_process import PREFIX, BotOptions


class TournamentError(ValueError):
    """A tournament that cannot run as asked (bad agents, a log from another run, ...)."""


@dataclasses.dataclass
class TournamentConfig:
    agents: list[str]
    boards: int = 100
    seed: int = 0
    workers: int = 1
    out: str = "results/tournament"
    resume: bool = False
    backend: str = "local"  # or "ray": the same tasks on a Ray cluster (RAY_ADDRESS) or a local Ray instance
    rules: RuleConfig = dataclasses.field(default_factory=RuleConfig)
    boards_per_task: int | None = None
    """boards per task (in one process too, at most training.tournament.LOCAL_CHUNK; None there: batches of 8
    doubling up to it); with workers / Ray None means boards / (4 x workers), within 8..128 - larger tasks
    batch more games per engine step (an external bot answers a whole batch per round trip; measured in
    bench/protocol_throughput.py), smaller ones return sooner"""
    progress: bool = True
    chart: bool = True
    trust_checkpoints: bool = False  # let SB3 unpickle foreign checkpoint zips (runs code stored in them)
    bots: BotOptions | None = None  # how cmd: agents run (default: BotOptions() with logs in OUT/bots)

    def bot_options(self) -> BotOptions:
        opts = self.bots or BotOptions()
        if opts.log_dir is None:
            opts = dataclasses.replace(opts, log_dir=str(Path(self.out) / "bots"))
        return opts

    def has_bots(self) -> bool:
        return any(a.startswith(PREFIX) for a in self.agents)

    def header(self) -> dict:
        head = {"type": "header", "agents": self.agents, "seed": self.seed, "rules_hash": self.rules.rules_hash}
        if self.has_bots():  # the fallback plays faulted seats: a resumed run must use the same one
            head["fallback"] = self.bot_options().fallback
        return head

    def log_header(self) -> dict:
        """The log's first line: :meth:`header` (what a resumed run must match) plus the rules in full,
        so any game of the log can be re-created (``meld8 view games.jsonl --game K``)."""
        return {**self.header(), "rules": self.rules.to_dict()}


def seatings(agents: Sequence[str]) -> list[tuple[int, ...]]:
    """Distinct seatings as index tuples into ``agents`` (copies of one spec are interchangeable)."""
    canon = [agents.index(a) for a in agents]
    return sorted(set(itertools.permutations(canon)))


def board_seed(seed: int, board: int) -> int:
    return Stream(seed, board + 1).next() >> 2
