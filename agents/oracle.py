"""``oracle``: CHEATING greedy that never deals in, the readable twin of the C policy ``oracle``.

It decides from an engine record, not an observation, because it reads the other seats' hands:

- Tsumo / Ron whenever the mask offers it; a claim window (Pon / Chii / pass): exactly ``greedy``'s call.
- A discard: ``greedy``'s choice (smallest distance to win, then most acceptance, then the lowest card) among
  the legal discards on which no other seat would be offered Ron (R29-R33 as the engine decides it: the win
  form, a yaku reaching the round minimum, furiten, a dead seat never); when every legal discard would be
  Ron'd, ``greedy``'s choice among all of them.

What it is for: the search agent's own continuation in its sampled worlds (``search:me=oracle``), where the
"other seats' hands" are the world's sampled hands, so it knows nothing the seat does not (the search's
decision still reads only its information set); and, on true records, the "perfect defense" diagnostic
that the search is measured against. The C twin (``meld8_env/engine/_bots.c``, ``bot_oracle``) must decide
exactly like :func:`oracle_actions` (``tests/test_cbots.py``). What the twin is independent of: the C policy's
own logic (its wait prefilter, ``eng_ron_offered``, the greedy fallback); what it shares: the engine's claim
window, which it reads by stepping each discard, so the engine's Ron test (itself checked against the Python
reference engine in ``tests/test_fast_engine.py``) is the definition of "would be offered Ron"; and
``tests/test_oracle.py`` checks :func:`ron_discards` itself against the reference engine's claim window
(``meld8_env/engine/reference.py``, stepped on a copy) at every discard of whole games.

``oracle_actions(rules, records (N,) STATE_DTYPE) -> (N,) int64`` (-1 where the game is over);
``ron_discards(rules, records) -> (N,) uint64`` the legal discards some other seat would Ron (0 outside a
discard). :class:`OracleAgent` (spec ``agents.oracle:OracleAgent``, name ``oracle-CHEAT``) seats it at a table
that hands it the true records: only ``training.search_eval`` does; ``meld8 tournament`` never does, and the
agent then refuses in one line.
"""

from __future__ import annotations

import numpy as np

from agents.greedy import GreedyAgent
from meld8_env.actions import PASS, RON
from meld8_env.agent import Agent
from meld8_env.codes import Phase
from meld8_env.engine.records import observe_records, step_records
from meld8_env.policies import POLICY, c_bots_enabled, policy_act
from meld8_env.rules import RuleConfig


def ron_discards(rules: RuleConfig, records: np.ndarray) -> np.ndarray:
    """For each record whose acting seat must discard: the legal discards after which the engine opens a claim
    window offering Ron to another seat (found by stepping a copy of the record with each discard)."""
    out = np.zeros(len(records), np.uint64)
    for i, rec in enumerate(records):
        mask = int(rec["mask"])
        if rec["phase"] == int(Phase.OVER) or mask >> PASS & 1:
            continue
        for card in (c for c in range(52) if mask >> c & 1):
            after = records[i : i + 1].copy()
            if step_records(rules, after, np.array([card]))[0]:  # a legal discard the engine refuses: a bug, say so
                raise RuntimeError(f"record {i}: the engine refused the legal discard {card}")
            n = int(after["claim_n"][0])
            if after["phase"][0] == int(Phase.CLAIM) and any(int(o) >> RON & 1 for o in after["claim_opts"][0, :n]):
                out[i] |= np.uint64(1 << card)
    return out


def oracle_actions(rules: RuleConfig, records: np.ndarray) -> np.ndarray:
    """The oracle's decision for each record's acting seat (the reference the C policy must equal)."""
    obs, masks = observe_records(rules, records)
    masks = masks.astype(bool)
    unsafe = ron_discards(rules, records)
    for i in np.flatnonzero(unsafe):
        bits = np.array([int(unsafe[i]) >> c & 1 for c in range(64)], bool)
        if (masks[i, :52] & ~bits[:52]).any():  # some legal discard is safe: only those stay legal
            masks[i] &= ~bits
    out = np.full(len(records), -1, np.int64)
    live = np.flatnonzero(records["phase"] != int(Phase.OVER))
    if live.size:
        out[live] = GreedyAgent(rules).act_batch_python(obs[live], masks[live])
    return out


class OracleAgent(Agent):
    """The CHEATING ``oracle`` at a table: decides from the true records (C by default, the twin above under
    ``MELD8_BACKEND=python``). A diagnostic, "perfect defense", never a result."""

    name = "oracle-CHEAT"
    wants_records = True  # meld8_env.agent.Agent.wants_records

    def act_batch(
        self, obs: np.ndarray, masks: np.ndarray, infosets: list | None = None, records: np.ndarray | None = None
    ) -> np.ndarray:
        if records is None or len(records) != len(masks):
            raise ValueError(
                "oracle-CHEAT reads the other seats' hands: it needs the true records (act_batch(..., records=...)), "
                "which only python -m training.search_eval and bench/search_regret.py pass"
            )
        if c_bots_enabled():
            zeros = np.zeros(len(records), np.uint64)
            return policy_act(self.rules, records, np.full(len(records), POLICY["oracle"], np.int8), zeros)
        return oracle_actions(self.rules, records)
