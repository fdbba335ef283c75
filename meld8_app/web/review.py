"""Decision review: each decision of one seat in a replay, next to what a reference agent would do.

For every decision of seat ``seat``: the action played; the reference agent's choice and, for a
policy (``ppo``, ``ppo:PATH``), its probability of each legal action; for the search agent (``search``), its
mean leaf value of each candidate (minus the expected final placement; the deviation is the value the
played action loses, unplayed candidates outside the search count as 1); for discards the look-ahead
numbers of every candidate (distance to win after it, acceptance count, danger to each opponent, as
``agents.greedy`` / ``agents.defensive`` compute them). A decision is flagged when the reference
gives the played action ``threshold`` less probability than its own choice (for a bot without
probabilities: when they differ). ``summary``: agreement (share of decisions where the played action
is the reference's choice), flagged count, the biggest deviations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from meld8_env.actions import NUM_ACTIONS, PASS, action_name
from meld8_env.cardmask import discard_masks
from meld8_env.cards import card_str
from meld8_env.codes import Phase
from meld8_env.engine.fast import FastBatch
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig


def _lookahead(obs: np.ndarray, mask: np.ndarray, rules: RuleConfig) -> list[dict[str, Any]]:
    """Distance, acceptance and per-opponent danger of every legal discard (one decision), as the bots
    compute them (``agents.greedy.discard_table``, ``agents.defensive.danger``)."""
    from agents.defensive import danger
    from agents.greedy import discard_table
    from meld8_env.observation import decode

    d = decode(obs[None], rules)
    allowed = discard_masks(mask[None].astype(bool))
    rows, cards, dist, accept, _ = discard_table(d["hand"], d["melds"][:, 0], d["unseen"], allowed, all_acceptance=True)
    unseen = d["unseen"][rows]
    dangers = [danger(cards, unseen, d["discarded"][rows, k]) for k in range(1, rules.num_players)]
    return [
        {"card": card_str(int(c)), "id": int(c), "distance": int(dist[i]), "acceptance": int(accept[i]),
         "danger": [int(x[i]) for x in dangers]}
        for i, c in enumerate(cards.tolist())
    ]  # fmt: skip


def review(
    rules: RuleConfig,
    seed: int,
    actions: Sequence[int],
    seat: int,
    agent: str = "ppo",
    threshold: float = 0.5,
    trust: bool = False,
) -> dict[str, Any]:
    """The review document of ``seat``'s decisions (JSON-able)."""
    from agents.registry import load_agent

    if not 0 <= seat < rules.num_players:
        raise ValueError(f"seat must be 0..{rules.num_players - 1}, got {seat}")
    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be a probability 0..1, got {threshold}")
    ref = load_agent(agent, rules, 0, trust)
    if hasattr(ref, "setup"):
        ref.setup(rules)
    eng = FastBatch(1, rules)
    eng.reset(np.array([seed], np.uint64))
    obs = np.zeros((1, eng.obs_size), np.uint8)
    masks = np.zeros((1, NUM_ACTIONS), np.uint8)
    decisions = []
    for i, a in enumerate(actions):
        rec = eng.record(0)
        if int(rec["acting"]) == seat and int(rec["phase"]) != Phase.OVER:
            eng.observe_index(np.array([0]), np.array([seat], np.int8), obs, masks)
            legal = np.flatnonzero(masks[0])
            values = None
            if getattr(ref, "wants_infoset", False) is True:  # the search agent: its per-candidate values
                info = [infoset(eng.snapshot(np.array([0]))[0], seat, rules)]
                choice = int(ref.act_batch(obs.copy(), masks.astype(bool), infosets=info)[0])
                values = ref.last_values[0]
            else:
                choice = int(ref.act_batch(obs.copy(), masks.astype(bool))[0])
            probs = ref.probabilities(obs, masks.astype(bool))[0] if hasattr(ref, "probabilities") else None
            if values:  # values in placement units (minus expected final placement): deviation = value lost
                best = values[choice][0]
                deviation = float(best - values[int(a)][0]) if int(a) in values else 0.0 if choice == int(a) else 1.0
                listed = sorted(((v, int(x)) for x, (v, _) in values.items()), reverse=True)
                options = [{"id": x, "name": action_name(x), "p": None, "value": v} for v, x in listed]
            elif probs is not None:
                deviation = float(probs[choice] - probs[int(a)])
                listed = sorted(((float(probs[x]), int(x)) for x in legal), reverse=True)
                options = [{"id": x, "name": action_name(x), "p": p} for p, x in listed]
            else:
                deviation = 0.0 if choice == int(a) else 1.0
                options = [{"id": int(x), "name": action_name(int(x)), "p": None} for x in legal]
            decisions.append({
                "index": i, "hand": int(rec["deals"]), "phase": Phase(int(rec["phase"])).label,
                "played": {"id": int(a), "name": action_name(int(a))},
                "reference": {"id": choice, "name": action_name(choice)},
                "agree": choice == int(a), "deviation": deviation, "flagged": deviation > threshold,
                "options": options,
                "discards": _lookahead(obs[0], masks[0], rules) if not masks[0, PASS] else [],
            })  # fmt: skip
        if eng.step(np.array([int(a)], np.int64))[0]:
            raise ValueError(f"action {i} ({a}) is illegal here: the replay does not fit these rules and seed")
    n = len(decisions)
    worst = sorted(decisions, key=lambda d: -d["deviation"])[:5]
    return {
        "seat": seat,
        "agent": agent,
        "threshold": threshold,
        "decisions": decisions,
        "summary": {
            "decisions": n,
            "agreement": sum(d["agree"] for d in decisions) / n if n else 0.0,
            "flagged": sum(d["flagged"] for d in decisions),
            "biggest": [
                {
                    "index": d["index"],
                    "hand": d["hand"],
                    "played": d["played"]["name"],
                    "reference": d["reference"]["name"],
                    "deviation": d["deviation"],
                }
                for d in worst
            ],  # fmt: skip
        },
    }


def format_review(doc: dict[str, Any]) -> str:
    """The review as text: the summary, then each flagged decision."""
    s = doc["summary"]
    lines = [
        f"seat {doc['seat']} against {doc['agent']}: {s['decisions']} decisions, agreement {s['agreement']:.0%}, "
        f"{s['flagged']} flagged (deviation > {doc['threshold']:g})"
    ]
    for d in doc["decisions"]:
        if not d["flagged"]:
            continue
        top = ", ".join(
            f"{o['name']} {o['p']:.0%}" if o["p"] is not None
            else f"{o['name']} {o['value']:+.2f}" if "value" in o else o["name"]
            for o in d["options"][:3]
        )  # fmt: skip
        lines.append(f"  action {d['index']} (hand {d['hand']}, {d['phase']}): played {d['played']['name']}, "
                     f"{doc['agent']} would {d['reference']['name']} [{top}]")  # fmt: skip
    return "\n".join(lines)
