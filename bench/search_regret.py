"""Decision quality against an oracle: how much each agent's choice is worth by a CHEATING reference search.

Usage: ``python bench/search_regret.py [--states N] [--ref-worlds R] [--seed 11] [--agent-seeds 1] [--cache F] SPEC...``

A tournament needs thousands of games to tell two search settings apart (one changed decision changes the
rest of the game, so pairing removes little of the deal luck). This bench scores single decisions instead.
States: decisions with more than one legal action from games of ``greedy`` vs ``defensive``
(``bench/search_speed.states``). Reference: ``search:cheat=1`` (the true hidden hands, only the wall order
resampled; ``--ref-worlds`` worlds, one stage, every discard a candidate, no margin), whose per-candidate
values estimate each action's worth in placement units (minus the expected final placement) when the
players go on as the bots. Each SPEC (an agent spec: ``search:worlds=64``, ``defensive``, ...) decides every
state honestly (information sets only; a ``cheat=1`` spec, as a calibration row, gets the true records and
its own seed); its score is the reference value of its choice.

Rows (markdown): per spec, the mean over states of (reference value of the spec's choice - that of
``defensive``'s choice) with a 95 % interval over states (positive = better than ``defensive``, in placement
per decision), the same against the first SPEC (paired, so its interval is narrower), the mean regret to the
reference's best candidate, the share of decisions where it leaves ``defensive``'s choice, and the median
CPU ms per decision (with several ``--agent-seeds``: the values are the per-state means over the seeds, the
share their mean, the CPU the median of the seeds' medians, the choices not in the reference summed over the
seeds). The reference values are noisy (sampled wall orders); that noise is the same for every
spec, so differences between specs are fair. A choice the reference did not evaluate (should not happen) is
counted and scored as the worst candidate.

``--split`` adds a second table: each spec's mean regret (and its sum) in four kinds of decision, told by the
TRUE state (an oracle label; the specs still decide honestly): a claim (Pon / Chii / pass, a Ron searched late);
a discard where some legal card would be Ron'd (``agents.oracle.ron_discards``); a discard where none would but
some opponent is ready (R33); a discard with no opponent ready. It says where a setting loses to another.

``--agent-seeds 1,2,3`` decides every state with each seed (each its own worlds) and scores a spec by the mean over
them, per state. One seed's rows move between seeds by about twice their paired interval's half-width now and then
(the 64-world row: +0.0041 over the 48-world default with seed 1, -0.0005 with seed 2); a setting picked as the
best of many single-seed rows is partly the luckiest, so compare candidates over several seeds.

The reference values are cached in ``--cache`` (keyed by states, seed and reference worlds) so that
several runs compare specs on the same reference; a cache file of other states or worlds (or one that is not a cache)
is refused in one line, never overwritten.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import zipfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from search_speed import states as decision_states  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.oracle import ron_discards  # noqa: E402
from agents.registry import load_agent  # noqa: E402
from meld8_env.actions import PASS  # noqa: E402
from meld8_env.agent import Agent, wants_records  # noqa: E402
from meld8_env.engine.records import observe_records  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402
from training.fit_waits import auc, within_group_counts  # noqa: E402


def reference_values(rules: RuleConfig, recs: np.ndarray, worlds: int, batch: int = 8) -> list[dict[int, float]]:
    """Per state, {action: value} of the CHEATING reference (every candidate evaluated on the same worlds)."""
    # me / opp / extend pinned: the reference every regret table was measured against, whatever the search's defaults
    spec = f"search:cheat=1,worlds={worlds},stages=1,margin=0,cands=8,me=defensive,opp=mix,extend=0"
    ref = load_agent(spec, rules, seed=987_654_321)
    obs, masks = observe_records(rules, recs)
    infos = [sb.infoset_of(r, int(r["acting"]), rules) for r in recs]
    out: list[dict[int, float]] = []
    for a in range(0, len(recs), batch):
        sl = slice(a, a + batch)
        ref.act_batch(obs[sl], masks[sl], infosets=infos[sl], records=recs[sl])
        out.extend({int(k): float(v[0]) for k, v in vals.items()} for vals in ref.last_values)
        print(f"\rreference: {min(a + batch, len(recs))}/{len(recs)} states", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def choices(spec: str, rules: RuleConfig, recs: np.ndarray, seed: int = 1) -> tuple[np.ndarray, float]:
    """The spec's action in every state (one decision at a time, honest) and its median CPU ms per decision."""
    acts, ms, _, _ = choices_and_values(spec, rules, recs, seed)
    return acts, ms


def choices_and_values(
    spec: str | Agent, rules: RuleConfig, recs: np.ndarray, seed: int = 1
) -> tuple[np.ndarray, float, list[dict[int, float]], list[dict[int, float]]]:
    """:func:`choices` and, per state, a search's mean leaf value of each candidate it rolled out ({} for a
    decision it did not search, and for agents without values) and, with ``ron=model|truth``, its deal-in risk of
    each discard candidate ({} elsewhere). ``spec`` may be an agent already built (its own seed; ``seed`` is then
    unused)."""
    agent = load_agent(spec, rules, seed=seed) if isinstance(spec, str) else spec
    obs, masks = observe_records(rules, recs)
    infos = [sb.infoset_of(r, int(r["acting"]), rules) for r in recs]
    acts, cpu, values, risks = np.empty(len(recs), np.int64), [], [], []
    for i in range(len(recs)):
        c0 = time.process_time()
        kw = {"infosets": infos[i : i + 1]} if getattr(agent, "wants_infoset", False) else {}
        if wants_records(agent):  # the CHEATING diagnostics need the truth (a cheat=1 search's seed is not the ref's)
            kw["records"] = recs[i : i + 1]
        acts[i] = agent.act_batch(obs[i : i + 1], masks[i : i + 1], **kw)[0]
        cpu.append(time.process_time() - c0)
        last = getattr(agent, "last_values", None)
        values.append({int(k): float(v[0]) for k, v in last[0].items()} if last else {})
        risks.append(dict(agent.last_risks[0]) if getattr(agent, "last_risks", None) else {})
    return acts, 1000 * float(np.median(cpu)), values, risks


def parse_agent_seeds(text: str) -> list[int]:
    """``--agent-seeds 1,2,3`` -> [1, 2, 3]; ValueError in one line unless distinct integers in 0..2**64-1."""
    try:
        seeds = [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--agent-seeds {text!r}: give integers separated by commas, e.g. 1,2,3") from None
    if len(set(seeds)) != len(seeds) or not all(0 <= s < 2**64 for s in seeds):
        raise ValueError(f"--agent-seeds {text!r}: give distinct seeds in 0..2**64-1, e.g. 1,2,3")
    return seeds


def score(acts: np.ndarray, ref: list[dict[int, float]]) -> tuple[np.ndarray, int]:
    """Reference value of each chosen action (the worst candidate's when the reference lacks it) and misses."""
    out, missing = np.empty(len(acts)), 0
    for i, (a, vals) in enumerate(zip(acts.tolist(), ref, strict=True)):
        if a in vals:
            out[i] = vals[a]
        else:
            missing += 1
            out[i] = min(vals.values())
    return out, missing


class CacheError(ValueError):
    """A ``--cache`` file that :func:`states_and_reference` refuses (other states or worlds, unreadable, malformed)."""


def states_and_reference(
    rules: RuleConfig, n_states: int, seed: int, ref_worlds: int, cache: str | None
) -> tuple[np.ndarray, list[dict[int, float]]]:
    """The bench's decision states that the reference really chooses between, and its values there ({action:
    value} per state), read from ``cache`` when it holds them for these states and worlds, computed and stored there
    when the file does not exist yet; :class:`CacheError` (one line) when it exists but holds other states or worlds,
    or is no such cache (it is never overwritten)."""
    recs = decision_states(rules, n_states, seed)
    # only the decisions the reference really chooses between (forced moves and immediate wins score 0 for all)
    # the key hashes the named fields only: the record dtype has unnamed gaps, whose bytes are whatever memory held
    # (a key over recs.tobytes() changed with the specs loaded before, and the cache was recomputed for nothing)
    clean = np.zeros(len(recs), recs.dtype)
    for name in recs.dtype.names:
        clean[name] = recs[name]
    key = hashlib.sha256(clean.tobytes() + f"{ref_worlds}".encode()).hexdigest()[:16]
    ref = None
    if cache and os.path.exists(cache):
        # another run's cache (other states or worlds) or a file that is no cache took minutes to make or is not ours:
        # refused, never overwritten
        try:
            z = dict(np.load(cache, allow_pickle=False))
            stored = str(z["key"])
        except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as e:
            what = type(e).__name__
            raise CacheError(f"--cache {cache}: unreadable ({what}); give another path or remove it") from None
        if stored != key:
            raise CacheError(
                f"--cache {cache}: holds the reference of other states or worlds (key {stored}, these need {key}); give"
                " another path, or the --states/--seed/--ref-worlds it was built with"
            )
        try:
            ref = [dict(zip(k.tolist(), v.tolist(), strict=True)) for k, v in zip(z["acts"], z["vals"], strict=True)]
        except (KeyError, ValueError, TypeError) as e:
            what = type(e).__name__
            raise CacheError(f"--cache {cache}: malformed ({what}); give another path or remove it") from None
        if len(ref) != len(recs):
            raise CacheError(f"--cache {cache}: malformed ({len(ref)} rows for {len(recs)} states); give another path")
        ref = [{int(x): float(y) for x, y in d.items() if x >= 0} for d in ref]
    if ref is None:
        ref = reference_values(rules, recs, ref_worlds)
        if cache:
            width = max(1, max(len(d) for d in ref))
            acts = np.full((len(ref), width), -1, np.int64)
            vals = np.zeros((len(ref), width))
            for i, d in enumerate(ref):
                acts[i, : len(d)] = list(d)
                vals[i, : len(d)] = list(d.values())
            tmp = f"{cache}.{os.getpid()}.part.npz"  # per process: two runs at once never write one temporary
            np.savez(tmp, key=key, acts=acts, vals=vals)
            os.replace(tmp, cache)
    keep = np.array([len(d) > 1 for d in ref])
    recs, ref = recs[keep], [d for d, k in zip(ref, keep, strict=True) if k]
    return recs, ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", help="agent specs to score (defensive is always scored)")
    ap.add_argument("--states", type=int, default=400)
    ap.add_argument("--ref-worlds", type=int, default=256)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument(
        "--cache", default=None, help="npz of the reference values (made if absent; reused if it matches; else refused)"
    )
    ap.add_argument(
        "--agent-seeds",
        default="1",
        help="the specs' own seeds (their worlds), comma-separated: each row is the mean over them (module doc)",
    )
    ap.add_argument("--split", action="store_true", help="also the regret by kind of decision (true state)")
    a = ap.parse_args()
    try:
        seeds = parse_agent_seeds(a.agent_seeds)
    except ValueError as e:
        sys.exit(f"search_regret: {e}")
    rules = RuleConfig()
    for spec in a.specs:  # a bad spec fails in one line now, not after minutes of reference search
        try:
            load_agent(spec, rules, seed=1)
        except ValueError as e:
            sys.exit(f"search_regret: {e}")
    try:
        recs, ref = states_and_reference(rules, a.states, a.seed, a.ref_worlds, a.cache)
    except CacheError as e:
        sys.exit(f"search_regret: {e}")
    best = np.array([max(d.values()) for d in ref])
    spread = np.array([max(d.values()) - min(d.values()) for d in ref])
    print(f"{len(recs)} decision states with a choice (seed {a.seed}), reference search:cheat=1 at "
          f"{a.ref_worlds} worlds; median spread best - worst candidate {np.median(spread):.3f} placement")  # fmt: skip
    base, _ = choices("defensive", rules, recs)
    base_v, _ = score(base, ref)
    head = f"| spec | value - defensive's (per decision, 95 %) | value - {a.specs[0]}'s | regret to the ref's best"
    print(f"\n{head} | leaves defensive | CPU ms / decision | not in reference |\n|---|---|---|---|---|---|---|")
    first_v = None
    regrets = {"defensive": best - base_v}
    risk_rows = {}
    for spec in ["defensive", *a.specs]:
        full = [] if spec == "defensive" else [choices_and_values(spec, rules, recs, s) for s in seeds]
        runs = [(base, 0.0)] if spec == "defensive" else [(acts, ms) for acts, ms, _, _ in full]
        if any(r for _, _, _, risks in full for r in risks):
            risk_rows[spec] = [risks for _, _, _, risks in full]
        scored = [score(acts, ref) for acts, _ in runs]
        v = np.mean([sv for sv, _ in scored], axis=0)  # per state, the mean over the agent seeds
        missing = sum(m for _, m in scored)
        leaves = float(np.mean([(acts != base).mean() for acts, _ in runs]))
        ms = float(np.median([m for _, m in runs]))
        if spec == a.specs[0] and first_v is None:
            first_v = v
        rel = "-" if first_v is None else interval(v - first_v)
        regrets[spec] = best - v
        print(f"| {spec} | {interval(v - base_v)} | {rel} | {(best - v).mean():.4f} | {leaves:.3f} | "
              f"{ms:.1f} | {missing} |", flush=True)  # fmt: skip
    if risk_rows:
        print_risk_auc(rules, recs, risk_rows)
    if a.split:
        print_split(rules, recs, regrets)


#: bootstrap resamples of the states behind print_risk_auc's intervals
BOOTSTRAP = 2000


def print_risk_auc(rules: RuleConfig, recs: np.ndarray, risk_rows: dict[str, list]) -> None:
    """Per spec with ``ron=model|truth|status``: the AUC of its deal-in risk for "this discard would be Ron'd" (TRUE
    labels, ``agents.oracle.ron_discards``) over every (state, discard candidate) it scored (once per agent seed),
    the same over the pairs of candidates of one state only (what a decision can use: a risk that only tells states
    apart, e.g. by who is ready, ranks no discard above another) with a 95 % bootstrap interval over the states (each
    state with all its agent seeds' scores), its difference to the first row's on the same resampled states (paired),
    and the mean risk beside the base rate."""
    unsafe = ron_discards(rules, recs)
    print("\n| spec | risk AUC over its scored candidates | within one state (95 %) | within - first row's "
          "| candidates scored | mean risk | base rate |\n|---|---|---|---|---|---|---|")  # fmt: skip
    n = len(recs)
    # the states resampled (every agent seed's copy of a state goes with it), the same draws for every row: paired
    boot = np.random.default_rng(0).integers(0, n, (BOOTSTRAP, n))
    first = None
    for spec, per_seed in risk_rows.items():
        p, y, g = [], [], []
        for k, risks in enumerate(per_seed):  # a group: one state as one agent seed scored it
            for i, (u, r) in enumerate(zip(unsafe.tolist(), risks, strict=True)):
                p += list(r.values())
                y += [bool(u >> c & 1) for c in r]
                g += [k * n + i] * len(r)
        p, y, g = np.array(p, np.float64), np.array(y, bool), np.array(g, np.int64)
        a = f"{auc(p, y):.4f}" if 0 < y.sum() < len(y) else "- (one class only)"
        ids, conc, pairs = within_group_counts(p, y, g)
        c_state, p_state = np.zeros(n), np.zeros(n)  # per state, summed over the agent seeds
        np.add.at(c_state, ids % n, conc)
        np.add.at(p_state, ids % n, pairs)
        n_pairs = p_state[boot].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample without pairs has no AUC: NaN, left out
            draws = np.where(n_pairs > 0, c_state[boot].sum(axis=1) / n_pairs, np.nan)
        within = c_state.sum() / p_state.sum() if p_state.sum() else float("nan")
        w = "-" if within != within else f"{within:.4f} [{_q(draws, 0.025):.4f}, {_q(draws, 0.975):.4f}]"
        rel = "-"
        if first is None:
            first = (draws, within)
        elif within == within and first[1] == first[1]:
            d = draws - first[0]
            rel = f"{within - first[1]:+.4f} [{_q(d, 0.025):+.4f}, {_q(d, 0.975):+.4f}]"
        print(f"| {spec} | {a} | {w} | {rel} | {len(p)} | {p.mean():.4f} | {y.mean():.4f} |")


def _q(x: np.ndarray, q: float) -> float:
    """Quantile of the finite values (NaN when none)."""
    x = x[np.isfinite(x)]
    return float(np.quantile(x, q)) if x.size else float("nan")


def decision_kinds(rules: RuleConfig, recs: np.ndarray) -> dict[str, np.ndarray]:
    """(n,) bool masks of the four kinds of decision of ``--split``, by the TRUE state (oracle labels)."""
    claim = np.array([int(m) >> PASS & 1 for m in recs["mask"]], bool)
    ronable = ron_discards(rules, recs) != 0
    ready = np.zeros(len(recs), bool)
    for i, rec in enumerate(recs):
        info = sb.infoset_of(rec, int(rec["acting"]), rules)
        ready[i] = any(bool(sb.ready_in_worlds(info, recs[i : i + 1], j)[0]) for j in info.opponents)
    return {
        "claim": claim,
        "discard, a legal card would be Ron'd": ~claim & ronable,
        "discard, none would, an opponent ready": ~claim & ~ronable & ready,
        "discard, no opponent ready": ~claim & ~ready,
    }


def print_split(rules: RuleConfig, recs: np.ndarray, regrets: dict[str, np.ndarray]) -> None:
    print("\n| kind of decision (true state) | states | " + " | ".join(regrets) + " |")
    print("|---|---:|" + "---:|" * len(regrets))
    for name, m in decision_kinds(rules, recs).items():
        cells = " | ".join(f"{r[m].mean():.4f} (sum {r[m].sum():.1f})" if m.any() else "-" for r in regrets.values())
        print(f"| {name} | {int(m.sum())} | {cells} |")
    print("(mean regret to the reference's best per decision, and its sum over the states of that kind)")


def interval(d: np.ndarray) -> str:
    """Mean and 95 % interval over states."""
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
    return f"{d.mean():+.4f} [{d.mean() - half:+.4f}, {d.mean() + half:+.4f}]"


if __name__ == "__main__":
    main()
