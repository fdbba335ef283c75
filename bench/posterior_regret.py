"""What the history posterior is worth in decisions: the search with opponents' hands drawn from it (regret bench).

Usage: python bench/posterior_regret.py --cache REF.npz [--states 1600] [--seed 12] [--ref-worlds 256]
       [--bank BANK.npz] [--workers 2] [--chains 64] [--steps 300] [--gibbs 0] [--limit N] [--risk N [--only-risk]]

``bench/history_posterior.py`` samples each opponent's hidden history (its hand now and when each card entered it)
by Metropolis-Hastings with ``greedy``'s discard rule as the likelihood, and scores only AUCs. This bench asks
what that is worth to the search's choices. For each decision state of ``bench/search_regret.py`` (the same
states, reference and cache: a CHEATING search's per-candidate values) and each opponent with a history the
model covers, the chains' hands over their second half are the *bank* of that (state, opponent) (built once,
``--workers`` processes, about 1.2 s per opponent view; stored in ``--bank`` and reused when its key matches; a bank
file of other states or chain settings is refused, never overwritten). Honest throughout: the chains start from
two-level worlds and read only the information set.

Rows (paired with the default ``search`` on the same states, agent seed 1 for all, so the two-level worlds and the
rollout seeds are the same and only the opponents' hands differ):
- ``posterior``: every world of the default search (``_worlds``) gets, for each opponent with a bank, a hand drawn
  from its bank (the two opponents' hands disjoint: up to 32 joint draws, else the world stays two-level), the
  rest of the unseen cards dealt to the wall in random order, claim windows refreshed;
- ``posterior, clean``: the same from the chain states that break no factor only (where a view has some);
- ``posterior + strat``: ``posterior`` with the worlds' weights post-stratified to the fitted ready prior
  (``search_backend.stratify``; the posterior's status is known to be low, docs/search_log.md "Session 27").
With ``--risk N``, three more rows put a danger estimate into the ``search:ron=model`` formula (agents/search.py 4c:
a discard's value r * V_ron + (1 - r) * V_rest) and print its AUC for "this discard would be Ron'd" (TRUE labels),
over all candidates and within one state, as ``bench/search_regret.py`` does for the ``ron`` options:
- ``ron=model``: the wait model's risk (the search's own option, for the scale);
- ``risk from two-level worlds``: r = the weighted share of N two-level worlds (the decision's own stream 3) in
  which the discard is offered a Ron (``agents.oracle.ron_discards`` on each world);
- ``risk from posterior worlds``: the same N worlds with the opponents' hands drawn from their banks (``blend``);
  its last column counts the opponent hands of those worlds left two-level (an opponent without a bank, or no
  disjoint draw) out of all.
The rollout worlds stay the default's in all three: only the source of r differs. Session 28 measured (CHEATING
``ron=truth,ron_signal``) that this formula gains nothing from a risk ranking one state's candidates at AUC 0.85
and 0.065 placement at 0.97: these rows say where the history posterior's danger stands on that scale.
Also printed (CHEATING, a measurement only): the mean share of each opponent's true concealed cards that a
two-level world's hand and a posterior hand hold, the scale of ``search:cheat=4,noise=m`` ((n - m) / n for n
concealed cards, 7 without a meld).

The worlds are edited by a subclass of ``agents.search.SearchAgent`` that overrides its world sampler: a bench
experiment, not an agent option (the posterior costs about 2 s of CPU per decision in Python).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from history_posterior import model_of, run_chains  # noqa: E402
from search_regret import (  # noqa: E402
    CacheError,
    choices_and_values,
    interval,
    print_risk_auc,
    print_split,
    score,
    states_and_reference,
)

from agents import search_backend as sb  # noqa: E402
from agents.oracle import ron_discards  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from meld8_env.actions import DISCARD_MAX  # noqa: E402
from meld8_env.belief import sample_worlds  # noqa: E402
from meld8_env.engine.records import refresh  # noqa: E402
from meld8_env.rules import RuleConfig  # noqa: E402

KINDS = ("all", "clean")


def bank_of_state(args: tuple) -> tuple[int, dict, list[tuple[float, float]]]:
    """One state's bank: {(opponent, kind): (hands uint64, probabilities)} and, per covered opponent, the mean
    share of its true concealed cards held by the two-level start hands and by the posterior hands (CHEATING,
    measured only)."""
    i, rec, opts, seed = args
    rules = RuleConfig()
    rng = np.random.default_rng([seed, i])
    info = sb.infoset_of(rec, int(rec["acting"]), rules)
    worlds, _ = sample_worlds(info, opts.chains, rng, "two_level", rules)
    out, overlap = {}, []
    for j in info.opponents:
        model = model_of(info, j, opts)
        if model is None:
            continue
        start = worlds["hands"][:, j].copy()
        kept, kept_clean, _, _ = run_chains(model, start, opts, rng)
        for kind, parts in zip(KINDS, (kept, kept_clean), strict=True):
            hands = np.concatenate(parts)
            if len(hands):
                u, n = np.unique(hands, return_counts=True)
                out[(j, kind)] = (u, n / n.sum())
        true = int(rec["hands"][j])
        overlap.append((held_share(start, true), held_share(np.concatenate(kept), true)))
    return i, out, overlap


def held_share(hands: np.ndarray, true: int) -> float:
    """Mean share of the true concealed cards ``true`` that the hands (uint64 masks) hold."""
    return float(np.mean([bin(int(x) & true).count("1") for x in hands]) / bin(true).count("1"))


def blend(info, worlds: np.ndarray, views: dict, rng: np.random.Generator) -> int:
    """In place: each world's covered opponents get hands drawn from their banks (disjoint), the other unseen cards
    go to the wall in random order; returns how many worlds stayed as they were (no disjoint draw in 32 tries)."""
    kept = 0
    for w in worlds:
        pos, end = int(w["wall_pos"]), int(w["wall_len"])
        free = 0
        for j in views:
            free |= int(w["hands"][j])
        for c in w["wall"][pos:end]:
            free |= 1 << int(c)
        for _ in range(32):
            picks = {j: int(u[rng.choice(len(u), p=p)]) for j, (u, p) in views.items()}
            union = 0
            ok = True
            for x in picks.values():
                ok &= not (union & x) and (x & ~free) == 0
                union |= x
            if ok:
                break
        else:
            kept += 1
            continue
        for j, x in picks.items():
            w["hands"][j] = np.uint64(x)
        rest = [c for c in range(53) if (free & ~union) >> c & 1]
        assert len(rest) == end - pos, "the blended world lost or gained a card"
        w["wall"][pos:end] = rng.permutation(np.array(rest, np.int8))
    return kept


def views_of(banks: dict, info, kind: str) -> dict:
    """{opponent: (hands, probabilities)} of the decision's banks of that kind (the opponents the model covers)."""
    bank = banks.get(sb.info_digest(info), {})
    return {j: bank[(j, kind)] for j in info.opponents if (j, kind) in bank}


class PosteriorSearch(SearchAgent):
    """The default search whose worlds take the opponents' hands from the bank (module doc)."""

    def __init__(self, rules: RuleConfig, banks: dict, kind: str, strat: bool, seed: int = 1) -> None:
        super().__init__(rules, seed)
        self.banks, self.kind, self.do_strat = banks, kind, strat
        self.unchanged = self.blended = 0
        self.calls: dict[bytes, int] = {}  # _worlds calls per decision (its information set's digest)

    def _worlds(self, info, record, rng: np.random.Generator, K: int):
        worlds, weights = super()._worlds(info, record, rng, K)
        views = views_of(self.banks, info, self.kind)
        if views:
            # its own stream, so that the rollout seeds drawn from ``rng`` next are the default search's; a count of
            # the calls per decision, so that the extension's rounds get fresh hands, not the first round's again
            digest = sb.info_digest(info)
            call = self.calls.get(digest, 0)
            self.calls[digest] = call + 1
            own = np.random.default_rng([*digest[:8], K, call])
            self.unchanged += blend(info, worlds, views, own)
            self.blended += len(worlds)
            refresh(worlds, self.rules)
        if self.do_strat:
            weights = sb.stratify(info, worlds, weights)
        return worlds, weights


class WorldRiskSearch(SearchAgent):
    """``search:ron=model`` whose risk of each discard candidate is the weighted share of ``n`` worlds (two-level, or
    with the opponents' hands from the banks when ``banks`` is given) in which the discard is offered a Ron."""

    def __init__(self, rules: RuleConfig, n: int, banks: dict | None = None, kind: str = "all", seed: int = 1) -> None:
        super().__init__(rules, seed, ron="model")
        self.n, self.banks, self.kind = n, banks, kind
        # opponent hands of the risk worlds left two-level (no bank for that opponent, or no disjoint draw) / all
        self.unchanged = self.blended = 0

    def _risks(self, info, cands: list[int], record=None) -> dict[int, float]:
        cards = [a for a in cands if 0 <= a <= DISCARD_MAX]
        if not cards:
            return {}
        rng = self._rng(info, 3)  # its own stream: the rollout worlds stay the default search's
        worlds, weights = sb.sample_worlds(info, self.n, rng, self.rules, method="two_level")
        if self.banks is not None:
            views = views_of(self.banks, info, self.kind)
            opponents = len(info.opponents)
            self.blended += opponents * len(worlds)
            self.unchanged += (opponents - len(views)) * len(worlds)
            if views:
                self.unchanged += len(views) * blend(info, worlds, views, rng)
                refresh(worlds, self.rules)
        unsafe = ron_discards(self.rules, worlds).astype(np.int64)  # bits 0..51 only: int64 holds them
        w = np.asarray(weights, np.float64)
        return {c: float(w[(unsafe >> c & 1) == 1].sum() / w.sum()) for c in cards}


def bank_key(recs: np.ndarray, opts: argparse.Namespace) -> str:
    clean = np.zeros(len(recs), recs.dtype)
    for name in recs.dtype.names:
        clean[name] = recs[name]
    params = f"{opts.chains},{opts.steps},{opts.gibbs},{opts.eps},{opts.pen},{opts.hot},{opts.seed}"
    return hashlib.sha256(clean.tobytes() + params.encode()).hexdigest()[:16]


def build_banks(recs: np.ndarray, opts: argparse.Namespace) -> tuple[dict, list]:
    """{state index: {(j, kind): (hands, probabilities)}} and the overlap measurements, in --workers processes."""
    jobs = [(i, recs[i], opts, opts.seed) for i in range(len(recs))]
    banks, overlaps, t0 = {}, [], time.perf_counter()
    with ProcessPoolExecutor(opts.workers) as pool:
        for n, (i, out, ov) in enumerate(pool.map(bank_of_state, jobs, chunksize=4)):
            banks[i] = out
            overlaps += ov
            if (n + 1) % 25 == 0 or n + 1 == len(jobs):
                print(f"\rbank: {n + 1}/{len(jobs)} states, {time.perf_counter() - t0:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    return banks, overlaps


def save_banks(path: str, key: str, banks: dict, overlaps: list) -> None:
    rows, hands, probs = [], [], []
    for i, out in banks.items():
        for (j, kind), (u, p) in out.items():
            rows.append((i, j, KINDS.index(kind), len(u)))
            hands.append(u)
            probs.append(p)
    tmp = f"{path}.{os.getpid()}.part.npz"  # per process: two runs at once never write one temporary
    np.savez(
        tmp,
        key=key,
        rows=np.array(rows, np.int64).reshape(-1, 4),
        hands=np.concatenate(hands) if hands else np.zeros(0, np.uint64),
        probs=np.concatenate(probs) if probs else np.zeros(0),
        overlaps=np.array(overlaps, np.float64).reshape(-1, 2),
    )
    os.replace(tmp, path)


def load_banks(path: str, key: str) -> tuple[dict, list]:
    """The banks stored in ``path`` for ``key``; ValueError in one line when the file is unreadable or holds the
    banks of other states or chain settings (it is never overwritten: they took minutes to build)."""
    try:
        z = dict(np.load(path, allow_pickle=False))
    except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile) as e:
        raise ValueError(f"--bank {path}: unreadable ({type(e).__name__}); give a new path or remove it") from None
    if str(z.get("key")) != key:
        raise ValueError(
            f"--bank {path}: holds the banks of other states or chain settings (key {z.get('key')}, these need {key});"
            " give another path, or the flags it was built with"
        )
    banks: dict = {}
    at = 0
    for i, j, kind, n in z["rows"].tolist():
        banks.setdefault(i, {})[(j, KINDS[kind])] = (z["hands"][at : at + n], z["probs"][at : at + n])
        at += n
    return banks, z["overlaps"].tolist()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", required=True, help="the reference values' npz of bench/search_regret.py")
    ap.add_argument("--states", type=int, default=1600)
    ap.add_argument("--seed", type=int, default=12, help="the regret bench's state seed (and the chains' seed)")
    ap.add_argument("--ref-worlds", type=int, default=256)
    ap.add_argument(
        "--bank", default=None, help="npz of the posterior banks (reused when its key matches; another key: refused)"
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chains", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--gibbs", type=float, default=0.0, help="history_posterior --gibbs (its session-27 rows: 0)")
    ap.add_argument("--limit", type=int, default=0, help="only N states, spread evenly (a smoke run)")
    ap.add_argument("--risk", type=int, default=0, help="N > 0: the ron-formula rows with risk from N worlds (doc)")
    ap.add_argument("--only-risk", action="store_true", help="skip the posterior-worlds rows (with --risk)")
    opts = ap.parse_args()
    limits = {
        "--states": (opts.states >= 1, "at least 1"),
        "--workers": (1 <= opts.workers <= 64, "1..64"),
        "--chains": (opts.chains >= 1, "at least 1"),
        "--steps": (opts.steps >= 2, "at least 2 (the second half is sampled)"),
        "--gibbs": (0 <= opts.gibbs <= 1, "a chance, 0..1"),
        "--limit": (opts.limit >= 0, "0 (all states) or more"),
        "--risk": (0 <= opts.risk <= 4096, "0 (off) or a number of worlds up to 4096"),
        "--only-risk": (opts.risk > 0 or not opts.only_risk, "given with --risk N"),
    }
    for flag, (ok, want) in limits.items():
        if not ok:
            ap.error(f"{flag}: must be {want}")
    opts.eps, opts.pen, opts.hot = 1e-4, 1.0, 0.5  # history_posterior's defaults (its session-27 rows)
    rules = RuleConfig()
    try:
        recs, ref = states_and_reference(rules, opts.states, opts.seed, opts.ref_worlds, opts.cache)
    except CacheError as e:
        sys.exit(f"posterior_regret: {e}")
    if opts.limit and opts.limit < len(recs):  # spread over the bench's states, which run from deal to late hand
        pick = np.linspace(0, len(recs) - 1, opts.limit).astype(int)
        recs, ref = recs[pick], [ref[i] for i in pick]
    key = bank_key(recs, opts)
    try:
        loaded = load_banks(opts.bank, key) if opts.bank and os.path.exists(opts.bank) else None
    except ValueError as e:
        sys.exit(f"posterior_regret: {e}")
    banks, overlaps = loaded if loaded else build_banks(recs, opts)
    if opts.bank and not loaded:
        save_banks(opts.bank, key, banks, overlaps)
    by_digest = {
        sb.info_digest(sb.infoset_of(recs[i], int(recs[i]["acting"]), rules)): banks.get(i, {})
        for i in range(len(recs))
    }
    ov = np.array(overlaps).reshape(-1, 2) if overlaps else np.full((1, 2), np.nan)
    covered = sum(1 for out in banks.values() for (_, kind) in out if kind == "all")
    print(
        f"{len(recs)} decision states with a choice (seed {opts.seed}); posterior banks for {covered} opponent views "
        f"({opts.chains} chains x {opts.steps} steps); share of the true concealed cards held (CHEATING, measured): "
        f"two-level {ov[:, 0].mean():.3f}, posterior {ov[:, 1].mean():.3f}"
    )
    base_acts, base_ms, _, _ = choices_and_values("search", rules, recs, 1)
    base_v, _ = score(base_acts, ref)
    best = np.array([max(d.values()) for d in ref])
    print("\n| worlds | value - search's (per decision, 95 %) | regret to the ref's best | leaves search | "
          "CPU ms / decision | worlds left two-level |\n|---|---|---|---|---|---|")  # fmt: skip
    print(f"| search (two-level) | +0.0000 | {(best - base_v).mean():.4f} | 0.000 | {base_ms:.1f} | - |")
    regrets = {"search": best - base_v}
    rows = () if opts.only_risk else (("posterior", "all", False), ("posterior, clean", "clean", False),
                                      ("posterior + strat", "all", True))  # fmt: skip
    for name, kind, strat in rows:
        agent = PosteriorSearch(rules, by_digest, kind, strat)
        acts, ms, _, _ = choices_and_values(agent, rules, recs)
        v, _ = score(acts, ref)
        regrets[name] = best - v
        left = f"{agent.unchanged}/{agent.blended}"
        print(f"| {name} | {interval(v - base_v)} | {(best - v).mean():.4f} | {(acts != base_acts).mean():.3f} | "
              f"{ms:.1f} | {left} |", flush=True)  # fmt: skip
    if opts.risk:
        risk_rows = {}
        for name, agent in (
            ("ron=model", SearchAgent(rules, 1, ron="model")),
            ("risk from two-level worlds", WorldRiskSearch(rules, opts.risk)),
            ("risk from posterior worlds", WorldRiskSearch(rules, opts.risk, by_digest)),
        ):
            acts, ms, _, risks = choices_and_values(agent, rules, recs)
            v, _ = score(acts, ref)
            regrets[name] = best - v
            risk_rows[name] = [risks]
            left = f"{agent.unchanged}/{agent.blended}" if getattr(agent, "banks", None) is not None else "-"
            print(f"| {name} | {interval(v - base_v)} | {(best - v).mean():.4f} | {(acts != base_acts).mean():.3f} | "
                  f"{ms:.1f} | {left} |", flush=True)  # fmt: skip
        print_risk_auc(rules, recs, risk_rows)
    print_split(rules, recs, regrets)


if __name__ == "__main__":
    main()
