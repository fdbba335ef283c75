"""Does an opponent's whole discard history, read through greedy's rule, sharpen the two-level worlds?

Usage: python bench/history_likelihood.py [--states 1500] [--worlds 64] [--eps 0.05] [--pen 0.1] [--seed 7]

A negative result kept so that it can be rerun (docs/search_log.md, session 26). Each two-level world's hand of
opponent j is weighted by an estimate of the likelihood of j's public history given that hand: going back from
the hand held now, each discard d must be what ``greedy`` (``meld8_env.features.best_discards``) throws from the
hand then plus d (probability 1 - eps, else eps / 7), a win form after a draw (it would have called Tsumo) and a
Ron it let pass (form waits, not furiten) each cost a factor ``pen``; which card was drawn at each turn is
chosen backwards among the hand's cards with a one-step look-ahead proposal (one path per world; a call's two
hand cards go back into the hand). Every deal is equally likely a priori, so this weight is the posterior's
ratio to the sampler's. Rows: status AUC (ready or not, against the true status) and per-card AUC (the
opponent waits on c and is not furiten, for each legal discard c of the acting seat), weighted and unweighted,
the median effective sample size of the weights, and ms per opponent. States: discard decisions of
``greedy``/``defensive``/``greedy`` games (seed 10,007, as ``bench/belief_quality.py --seed 7``).
"""

import argparse
import time

import numpy as np

from meld8_env.belief import ready_prior, sample_worlds
from meld8_env.cardmask import ALL, JK
from meld8_env.codes import N_CARDS, Phase
from meld8_env.features import best_discards
from meld8_env.hands import is_win_form_batch, waits_batch
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from training.bot_states import play_bot_states
from training.fit_belief import true_ready
from training.fit_waits import auc

U1 = np.uint64(1)


def bits(m):
    return [c for c in range(N_CARDS) if m >> c & 1]


def timeline(info, j):
    """j's turns, in order: dict(d: its discard, call: the turn followed a call, vis: cards public before it, meld:
    its meld then, ron: others' discards it saw since its previous turn, furi: its own discards before); then the
    discards it saw since its last turn, its discards, its meld."""
    P = info.num_players
    called_by = {c: p for p in range(P) for c in range(N_CARDS) if info.melds[p] >> c & 1}
    seat, pos = info.dealer, [0] * P
    vis, pend, furi, meld, turns, prev_call = 0, 0, 0, 0, [], False
    while pos[seat] < len(info.discards[seat]):
        i = pos[seat]
        d = info.discards[seat][i]
        pos[seat] += 1
        caller = called_by.get(d) if info.called[seat] >> i & 1 else None
        if seat == j:
            turns.append(dict(d=d, call=prev_call, vis=vis, meld=meld, ron=pend, furi=furi))
            pend = 0
            furi |= 1 << d
            prev_call = False
        else:
            pend |= 1 << d
        vis |= 1 << d
        if caller is not None:
            vis |= info.melds[caller]
            if caller == j:
                meld = info.melds[j]
                prev_call = True
        seat = caller if caller is not None else (seat + 1) % P
    return turns, pend, furi, meld


def lik_discard(X, meld, vis, d):
    """P(d | X) (W,) under greedy's rule, softened by eps."""
    X = np.asarray(X, np.uint64)
    card, _, _ = best_discards(X, np.full(len(X), meld, np.uint64), ALL & ~X & ~np.uint64(vis), X & ~JK)
    return np.where(card == d, 1 - OPT.eps, OPT.eps / 7)


def ron_factor(G, meld, seen, furi):
    if not seen:
        return np.ones(len(G))
    wt = waits_batch(np.asarray(G, np.uint64), np.full(len(G), meld, np.uint64))
    can = ((wt & np.uint64(seen)) != 0) & ((wt & np.uint64(furi)) == 0)
    return np.where(can, OPT.pen, 1.0)


def tsumo_factor(X, meld):
    win = is_win_form_batch(np.asarray(X, np.uint64), np.full(len(X), meld, np.uint64))
    return np.where(win, OPT.pen, 1.0)


def history_logw(info, j, G, rng):
    """log-likelihood estimate (W,) of each current hand G (W,) of opponent j."""
    turns, after, furi_now, meld_now = timeline(info, j)
    W = len(G)
    logw = np.log(ron_factor(G, meld_now, after, furi_now))
    if not turns:
        return logw
    mh = 0  # the meld's two hand cards: the meld less the called card, the one found in someone's discards
    if any(t["call"] for t in turns):
        for p in range(info.num_players):
            for c in info.discards[p]:
                if info.melds[j] >> c & 1:
                    mh = info.melds[j] & ~(1 << c)
    n = len(turns)
    t = turns[-1]
    X = G | np.uint64(1 << t["d"])
    f = lik_discard(X, t["meld"], t["vis"], t["d"])
    if not t["call"]:
        f = f * tsumo_factor(X, t["meld"])
    logw += np.log(f)
    for k in range(n - 1, -1, -1):
        t = turns[k]
        X = G | np.uint64(1 << t["d"])
        prev = turns[k - 1] if k > 0 else None
        if t["call"]:
            Gp = X | np.uint64(mh)
            f = ron_factor(Gp, 0, t["ron"], t["furi"])
            if prev is not None:
                Xp = Gp | np.uint64(1 << prev["d"])
                f = f * lik_discard(Xp, prev["meld"], prev["vis"], prev["d"])
                if not prev["call"]:
                    f = f * tsumo_factor(Xp, prev["meld"])
            logw += np.log(f)
            G = Gp
            continue
        # choose the drawn card c in X (every card of X that is concealed)
        xs = np.array([bits(int(x)) for x in X], np.int64)  # (W, h)
        h = xs.shape[1]
        Gc = (X[:, None] & ~np.left_shift(U1, xs.astype(np.uint64))).ravel()  # (W*h,)
        f = ron_factor(Gc, t["meld"], t["ron"], t["furi"])
        if prev is not None:
            Xp = Gc | np.uint64(1 << prev["d"])
            f = f * lik_discard(Xp, prev["meld"], prev["vis"], prev["d"])
            if not prev["call"]:
                f = f * tsumo_factor(Xp, prev["meld"])
        f = f.reshape(W, h)
        tot = f.sum(axis=1)
        logw += np.log(tot / h)
        u = rng.random(W) * tot
        pick = np.minimum((np.cumsum(f, axis=1) < u[:, None]).sum(axis=1), h - 1)
        G = Gc.reshape(W, h)[np.arange(W), pick]
    return logw


OPT = argparse.Namespace(eps=0.05, pen=0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=1500)
    ap.add_argument("--worlds", type=int, default=64)
    ap.add_argument("--eps", type=float, default=0.05, help="chance that the opponent throws another card")
    ap.add_argument("--pen", type=float, default=0.1, help="factor for a Tsumo / Ron the history let pass")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--lineup",
        default="greedy,defensive,greedy",
        help="the bots of the games the states come from; greedy,greedy,greedy makes greedy's rule the true model",
    )
    a = ap.parse_args()
    if bad := [b for b in a.lineup.split(",") if b not in ("greedy", "defensive", "random")]:
        ap.error(f"--lineup: bots among greedy, defensive, random (got {', '.join(bad)})")
    OPT.eps, OPT.pen = a.eps, a.pen
    n_states, K = a.states, a.worlds
    rules = RuleConfig()
    states = play_bot_states(rules, max(8, n_states // 25), seed=10_000 + a.seed, lineup=a.lineup.split(","))
    states = states[np.isin(states["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])]
    rng = np.random.default_rng(a.seed)
    states = states[np.sort(rng.permutation(len(states))[:n_states])]
    ys, pw, pu, pp, ych, cw, cu, ess = [], [], [], [], [], [], [], []
    t_h = 0.0
    for r in states:
        seat = int(r["acting"])
        info = infoset(r, seat, rules)
        tw, _ = sample_worlds(info, K, rng, "two_level", rules)
        for j in info.opponents:
            if info.hidden[j] + int(info.melds[j]).bit_count() != 7:
                continue
            truth = bool(true_ready(r.reshape(1), np.array([j]), 3)[0])
            G = tw["hands"][:, j].copy()
            meld = int(info.melds[j])
            t0 = time.perf_counter()
            lw = history_logw(info, j, G, rng)
            t_h += time.perf_counter() - t0
            w = np.exp(lw - lw.max())
            w /= w.sum()
            ess.append(1 / (w**2).sum())
            _, _, furi, _ = timeline(info, j)
            wt = waits_batch(G, np.full(K, meld, np.uint64))
            rdy = (wt != 0) & ((wt & np.uint64(furi)) == 0)
            ys.append(truth)
            pw.append(float((w * rdy).sum()))
            pu.append(rdy.mean())
            pp.append(ready_prior(info, j))
            truew = int(waits_batch(r["hands"][j : j + 1].copy(), r["melds"][j : j + 1].copy())[0])
            for c in bits(info.legal & ((1 << 52) - 1)):
                cb = np.uint64(1 << c)
                ych.append(truth and bool(truew >> c & 1))
                cw.append(float((w * (rdy & ((wt & cb) != 0))).sum()))
                cu.append(float((rdy & ((wt & cb) != 0)).mean()))
    ys, ych = np.array(ys), np.array(ych)
    print(
        f"states {len(states)} opp-views {len(ys)} ready rate {ys.mean():.3f} hist ms/opp "
        f"{1e3 * t_h / len(ys):.1f} median ESS {np.median(ess):.1f} of {K}"
    )
    print(
        f"status AUC: weighted {auc(np.array(pw), ys):.4f}  two_level {auc(np.array(pu), ys):.4f}  "
        f"table {auc(np.array(pp), ys):.4f}"
    )
    print(
        f"card AUC: weighted {auc(np.array(cw), ych):.4f}  two_level {auc(np.array(cu), ych):.4f}  "
        f"base {ych.mean():.4f}"
    )


if __name__ == "__main__":
    main()
