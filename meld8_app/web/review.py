"""Decision review: each decision of one seat in a replay, next to what a reference agent would do.

For every decision of seat ``seat``: the action played; the reference agent's choice and, for a
policy (``ppo``, ``ppo:PATH``), its probability of each legal action; for the search agent (``search``), its
mean leaf value of each candidate (minus the expected final placement; the deviation is the value the
played action loses, unplayed candidates outside the search count as 1); for discards the look-ahead
numbers of every candidate (distance to win after it, acceptance count, danger to each opponent, as
the bots compute them, ``meld8_env.features``). A decision is flagged when the reference
gives the played action ``threshold`` less probability than its own choice, or, for a search's values, when the
played action loses more than ``threshold`` placements (for a bot without either: when they differ). The two are
on other scales, so without a ``threshold`` each has its own default (:data:`THRESHOLDS`: a search flagged nothing
at 0.5 placements, helper walkthrough of session 46). ``summary``: agreement (share of decisions where the played action
is the reference's choice), flagged count, the biggest deviations. Each action (``played``,
``reference``, ``options``) has ``id``, ``name`` (engine words, ``pon (s,d)``) and ``label`` (a
player's words with the claimed card, ``Pon A♥ with A♠ A♦``, ``meld8_env.display``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from meld8_env.actions import PASS, action_name
from meld8_env.agent import wants_infoset
from meld8_env.agent_spec import load_agent
from meld8_env.cardmask import discard_masks
from meld8_env.cards import card_str
from meld8_env.codes import Phase
from meld8_env.display import action_words
from meld8_env.engine.fast import FastBatch
from meld8_env.features import danger, discard_table
from meld8_env.infoset import infoset
from meld8_env.observation import decode
from meld8_env.one_game import ResimulationError, observe_seat, resimulate
from meld8_env.rules import RuleConfig

THRESHOLDS = {"probability": 0.5, "value": 0.05}
"""Default flag thresholds: probability lost (a policy), expected placements lost (a search's values)."""


def _lookahead(obs: np.ndarray, mask: np.ndarray, rules: RuleConfig) -> list[dict[str, Any]]:
    """Distance, acceptance and per-opponent danger of every legal discard (one decision), as the bots
    compute them (``meld8_env.features.discard_table``, ``meld8_env.features.danger``)."""
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
    threshold: float | None = None,
    trust: bool = False,
    agent_seed: int = 0,
) -> dict[str, Any]:
    """The review document of ``seat``'s decisions (JSON-able); ``agent_seed`` seeds the reference agent (the seed
    the seat's own agent played with, when the reference is that agent, so its own moves are not flagged)."""
    if not 0 <= seat < rules.num_players:
        raise ValueError(f"seat must be 0..{rules.num_players - 1}, got {seat}")
    if threshold is not None and not 0 <= threshold <= 1:  # also refuses nan
        raise ValueError(f"threshold must be 0..1 (probability, or placements for a search), got {threshold}")
    ref = load_agent(agent, rules, agent_seed, trust)
    ref.setup(rules)
    try:
        game = resimulate(rules, seed, actions)
    except ResimulationError as exc:
        raise ValueError(f"{exc}: the replay does not fit these rules and seed") from None
    eng = FastBatch(1, rules)  # observes the re-simulated records
    decisions = []
    for i, a in enumerate(game.actions):
        rec = game.records[i]
        if int(rec["acting"]) == seat and int(rec["phase"]) != Phase.OVER:
            ob, mask = observe_seat(eng, seat, record=rec)
            obs, masks = ob[None], mask[None]
            legal = np.flatnonzero(masks[0])
            claim = card_str(int(rec["claim_card"])) if int(rec["phase"]) == Phase.CLAIM else None

            def said(x: int, claim: str | None = claim) -> dict[str, Any]:
                return {"id": x, "name": action_name(x), "label": action_words(x, claim)}

            values = None
            if wants_infoset(ref):  # it decides from the seat's information set (search, wary)
                info = [infoset(rec, seat, rules)]
                choice = int(ref.act_batch(obs.copy(), masks.astype(bool), infosets=info)[0])
                kept = getattr(ref, "last_values", None)  # the search's per-candidate values; wary keeps none
                values = kept[0] if kept else None
            else:
                choice = int(ref.act_batch(obs.copy(), masks.copy())[0])
            probs = ref.probabilities(obs, masks)[0] if hasattr(ref, "probabilities") else None
            if values:  # values in placement units (minus expected final placement): deviation = value lost
                best = values[choice][0]
                deviation = float(best - values[int(a)][0]) if int(a) in values else 0.0 if choice == int(a) else 1.0
                limit = THRESHOLDS["value"] if threshold is None else threshold
                listed = sorted(((v, int(x)) for x, (v, _) in values.items()), reverse=True)
                options = [{**said(x), "p": None, "value": v} for v, x in listed]
            elif probs is not None:
                deviation = float(probs[choice] - probs[int(a)])
                limit = THRESHOLDS["probability"] if threshold is None else threshold
                listed = sorted(((float(probs[x]), int(x)) for x in legal), reverse=True)
                options = [{**said(x), "p": p} for p, x in listed]
            else:
                deviation = 0.0 if choice == int(a) else 1.0
                limit = THRESHOLDS["probability"] if threshold is None else threshold
                options = [{**said(int(x)), "p": None} for x in legal]
            decisions.append({
                "index": i, "hand": int(rec["deals"]), "phase": Phase(int(rec["phase"])).label,
                "played": said(int(a)), "reference": said(choice),
                "agree": choice == int(a), "deviation": deviation, "flagged": deviation > limit,
                "options": options,
                "discards": _lookahead(obs[0], masks[0], rules) if not masks[0, PASS] else [],
            })  # fmt: skip
    n = len(decisions)
    worst = sorted(decisions, key=lambda d: -d["deviation"])[:5]
    return {
        "seat": seat,
        "agent": agent,
        "threshold": threshold,  # None: THRESHOLDS by the reference's kind of number
        "thresholds": dict(THRESHOLDS) if threshold is None else {k: threshold for k in THRESHOLDS},
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
        f"{s['flagged']} flagged (deviation > {_threshold_words(doc)})"
    ]
    for d in doc["decisions"]:
        if not d["flagged"]:
            continue
        # the reference's top three, by probability (a network) or value (a search); a bot ranks nothing, and its
        # options are the legal moves in id order: listing three of them read as its top choices
        ranked = [o for o in d["options"] if o["p"] is not None or o.get("value") is not None]
        top = ", ".join(
            f"{o['name']} {o['p']:.0%}" if o["p"] is not None else f"{o['name']} {o['value']:+.2f}" for o in ranked[:3]
        )
        lines.append(f"  action {d['index']} (hand {d['hand']}, {d['phase']}): played {d['played']['name']}, "
                     f"{doc['agent']} would {d['reference']['name']}" + (f" [{top}]" if top else ""))  # fmt: skip
    return "\n".join(lines)


def _threshold_words(doc: dict[str, Any]) -> str:
    """The flag threshold as the text review says it: one number when given, else each default by its scale."""
    if doc["threshold"] is not None:
        return f"{doc['threshold']:g}"
    t = doc["thresholds"]
    return f"{t['probability']:g} probability, or {t['value']:g} placements of a search's values"
