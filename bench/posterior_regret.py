"""What the history posterior is worth in decisions: the search with opponents' hands drawn from it (regret bench).

Usage: python bench/posterior_regret.py --cache REF.npz [--states 1600] [--seed 12] [--ref-worlds 256]
       [--bank BANK.npz] [--workers 2] [--chains 64] [--steps 300] [--gibbs 0] [--limit N]

``bench/history_posterior.py`` samples each opponent's hidden history (its hand now and when each card entered it)
by Metropolis-Hastings with ``greedy``'s discard rule as the likelihood, and scores only AUCs. This bench asks
what that is worth to the search's choices. For each decision state of ``bench/search_regret.py`` (the same
states, reference and cache: a CHEATING search's per-candidate values) and each opponent with a history the
model covers, the chains' hands over their second half are the *bank* of that (state, opponent) (built once,
``--workers`` processes, about 1.2 s per opponent view; stored in ``--bank`` and reused when its key matches).
Honest throughout: the chains start from two-level worlds and read only the information set.

Rows (paired with the default ``search`` on the same states, agent seed 1 for all, so the two-level worlds and the
rollout seeds are the same and only the opponents' hands differ):
- ``posterior``: every world of the default search (``_worlds``) gets, for each opponent with a bank, a hand drawn
  from its bank (the two opponents' hands disjoint: up to 32 joint draws, else the world stays two-level), the
  rest of the unseen cards dealt to the wall in random order, claim windows refreshed;
- ``posterior, clean``: the same from the chain states that break no factor only (where a view has some);
- ``posterior + strat``: ``posterior`` with the worlds' weights post-stratified to the fitted ready prior
  (``search_backend.stratify``; the posterior's status is known to be low, docs/search_log.md "Session 27").
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
from concurrent.futures import ProcessPoolExecutor

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from history_posterior import model_of, run_chains  # noqa: E402
from search_regret import choices_and_values, interval, print_split, score, states_and_reference  # noqa: E402

from agents import search_backend as sb  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
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


class PosteriorSearch(SearchAgent):
    """The default search whose worlds take the opponents' hands from the bank (module doc)."""

    def __init__(self, rules: RuleConfig, banks: dict, kind: str, strat: bool, seed: int = 1) -> None:
        super().__init__(rules, seed)
        self.banks, self.kind, self.do_strat = banks, kind, strat
        self.unchanged = self.blended = 0
        self.calls: dict[bytes, int] = {}  # _worlds calls per decision (its information set's digest)

    def _worlds(self, info, record, rng: np.random.Generator, K: int):
        worlds, weights = super()._worlds(info, record, rng, K)
        bank = self.banks.get(sb.info_digest(info), {})
        views = {j: bank[(j, self.kind)] for j in info.opponents if (j, self.kind) in bank}
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
    tmp = path + ".part.npz"
    np.savez(
        tmp,
        key=key,
        rows=np.array(rows, np.int64).reshape(-1, 4),
        hands=np.concatenate(hands) if hands else np.zeros(0, np.uint64),
        probs=np.concatenate(probs) if probs else np.zeros(0),
        overlaps=np.array(overlaps, np.float64).reshape(-1, 2),
    )
    os.replace(tmp, path)


def load_banks(path: str, key: str) -> tuple[dict, list] | None:
    try:
        z = dict(np.load(path, allow_pickle=False))
    except (OSError, ValueError, EOFError) as e:
        print(f"--bank {path}: unreadable ({type(e).__name__}); building it again", file=sys.stderr)
        return None
    if str(z.get("key")) != key:
        return None
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
    ap.add_argument("--bank", default=None, help="npz for the posterior banks (reused when its key matches)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chains", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--gibbs", type=float, default=0.0, help="history_posterior --gibbs (its session-27 rows: 0)")
    ap.add_argument("--limit", type=int, default=0, help="only N states, spread evenly (a smoke run)")
    opts = ap.parse_args()
    limits = {
        "--states": (opts.states >= 1, "at least 1"),
        "--workers": (1 <= opts.workers <= 64, "1..64"),
        "--chains": (opts.chains >= 1, "at least 1"),
        "--steps": (opts.steps >= 2, "at least 2 (the second half is sampled)"),
        "--gibbs": (0 <= opts.gibbs <= 1, "a chance, 0..1"),
        "--limit": (opts.limit >= 0, "0 (all states) or more"),
    }
    for flag, (ok, want) in limits.items():
        if not ok:
            ap.error(f"{flag}: must be {want}")
    opts.eps, opts.pen, opts.hot = 1e-4, 1.0, 0.5  # history_posterior's defaults (its session-27 rows)
    rules = RuleConfig()
    recs, ref = states_and_reference(rules, opts.states, opts.seed, opts.ref_worlds, opts.cache)
    if opts.limit and opts.limit < len(recs):  # spread over the bench's states, which run from deal to late hand
        pick = np.linspace(0, len(recs) - 1, opts.limit).astype(int)
        recs, ref = recs[pick], [ref[i] for i in pick]
    key = bank_key(recs, opts)
    loaded = load_banks(opts.bank, key) if opts.bank and os.path.exists(opts.bank) else None
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
    for name, kind, strat in (("posterior", "all", False), ("posterior, clean", "clean", False),
                              ("posterior + strat", "all", True)):  # fmt: skip
        agent = PosteriorSearch(rules, by_digest, kind, strat)
        acts, ms, _, _ = choices_and_values(agent, rules, recs)
        v, _ = score(acts, ref)
        regrets[name] = best - v
        left = f"{agent.unchanged}/{agent.blended}"
        print(f"| {name} | {interval(v - base_v)} | {(best - v).mean():.4f} | {(acts != base_acts).mean():.3f} | "
              f"{ms:.1f} | {left} |", flush=True)  # fmt: skip
    print_split(rules, recs, regrets)


if __name__ == "__main__":
    main()
