"""How sharp can an opponent's whole history make the worlds when its policy is known? An MCMC posterior.

Usage: python bench/history_posterior.py [--states 100] [--chains 64] [--steps 300] [--gibbs 0.3] [--eps 1e-4]
       [--pen 1] [--lineup greedy,greedy,greedy] [--seed 7]

The session-26 bench (``bench/history_likelihood.py``) weighted two-level worlds by a one-path estimate of the
history's likelihood under ``greedy``'s rule and found the danger estimates worse, with 6-12 effective worlds of
64. This one asks the question without that estimator's variance: opponent j's hidden history is sampled by
Metropolis-Hastings, every chain starting from a two-level world (``meld8_env.belief.sample_worlds``), so that
it decides honestly from the seat's information set. A chain's state is j's concealed hand now and, for every
card j ever held, the turn it entered the hand (the deal, or the draw of one of j's turns; a card enters no later
than it leaves). Every such history is equally likely under a uniform deal, so the target is the likelihood alone:
at each of j's turns the discard is the one ``greedy``'s rule (``meld8_env.features.best_discards``, j's own view
of the unseen cards then) throws from the hand then (factor 1 - eps, else eps / 7); optionally (``--pen`` below
1) a win form after a draw and a wait on another seat's discard since j's previous turn (not in its own
discards) each cost a factor ``pen``. Off by default, and wrong as a model: the bots always win when they may,
but a win needs a yaku at the round's minimum (R29-R30) that a form or a wait alone does not have, so these
factors (which ``bench/history_likelihood.py`` applies) also punish hands that could not have won. Moves: with
chance ``--gibbs`` one hand card of every chain is redrawn from its exact conditional (every hidden card it
could be), then a Metropolis step replaces one hand card by a hidden card or swaps the entry turns of two
cards; eps is annealed from ``--hot`` (0.5) and pen from 1 to their targets over the first half of the steps. A
call's two hand cards are public (its meld), its called card enters no slot; an opponent with two calls is
skipped. Opponents are sampled one at a time (the other opponent's hand is not excluded: a per-opponent
estimate).

With ``--lineup greedy,greedy,greedy`` the rule is j's true policy (up to the soft factors), so the rows measure
what exact history inference could buy if the opponents' policy were known; with the default lineup of the
tournaments, a ``defensive`` seat is modelled wrongly. Rows: status AUC (ready, not furiten) and per-card AUC
(j waits on c and is not furiten, for each legal discard c of the acting seat), two-level worlds against the
posterior (every chain's state over the last half of the steps), with 95 % bootstrap intervals over the states
and the paired differences to the two-level worlds;
the acceptance rate and the share of posterior states that break no factor in force; a third row reads only those
states (a view with none falls back to its two-level worlds).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from meld8_env.belief import sample_worlds
from meld8_env.cardmask import ALL, JK
from meld8_env.codes import N_CARDS, Phase
from meld8_env.features import best_discards
from meld8_env.hands import is_win_form_batch, waits_batch
from meld8_env.infoset import infoset
from meld8_env.rules import RuleConfig
from training.bot_states import play_bot_states
from training.fit_belief import true_ready
from training.fit_waits import auc, within_group_auc

U1 = np.uint64(1)
BIG = 10_000  # the exit turn of a card still held


def history(info, j: int) -> dict | None:
    """j's public history: per turn its discard, whether the turn followed a call (and the two hand cards that
    went into that meld), the cards public before it, the meld before the discard, the other seats' discards seen
    since j's previous turn, j's own discards before it; then the same after the last turn. None when j has
    no turn yet."""
    P = info.num_players
    called_by = {c: p for p in range(P) for c in range(N_CARDS) if info.melds[p] >> c & 1}
    seat, pos = info.dealer, [0] * P
    vis, pend, furi, pending_call = 0, 0, 0, None
    melds = [0] * P  # each seat's meld so far
    turns = []
    while pos[seat] < len(info.discards[seat]):
        i = pos[seat]
        d = info.discards[seat][i]
        pos[seat] += 1
        caller = called_by.get(d) if info.called[seat] >> i & 1 else None
        if seat == j:
            turns.append(dict(d=d, call=pending_call, vis=vis, meld=melds[j], ron=pend, furi=furi))
            pend, pending_call = 0, None
            if caller is None:  # a discard another seat called leaves j's history (R33)
                furi |= 1 << d
        else:
            pend |= 1 << d
        vis |= 1 << d
        if caller is not None:  # the caller's meld grew by the called card d and two hand cards, now public
            grown = _meld_after(info, caller, melds[caller], d)
            if caller == j:
                pending_call = grown & ~(1 << d) & ~melds[j]
            melds[caller] = grown
            vis |= grown
        seat = caller if caller is not None else (seat + 1) % P
    if not turns:
        return None
    return dict(turns=turns, after=pend, furi=furi, meld=melds[j])


def _meld_after(info, p: int, meld: int, called: int) -> int:
    """Seat p's meld mask once the call on ``called`` joined it: the meld of three cards that holds ``called``."""
    rest = info.melds[p] & ~meld & ~(1 << called)
    cards = [c for c in range(N_CARDS) if rest >> c & 1]
    if len(cards) == 2:  # the last call: the rest of the meld is exactly its two hand cards
        return meld | (1 << called) | (1 << cards[0]) | (1 << cards[1])
    raise ValueError("two calls: which hand cards joined which meld is not worked out here")


class Model:
    """The chains of one (state, opponent) pair: arrays over (chains, cards), cards in a fixed order:
    j's discards (turn order), the calls' hand cards, then the concealed hand (the sampled part)."""

    def __init__(self, info, j: int, h: dict, opts: argparse.Namespace) -> None:
        self.h = h
        self.t = h["turns"]
        self.K = len(self.t)
        self.opts = opts
        fixed, exits = [], []
        for k, t in enumerate(self.t):
            fixed.append(t["d"])
            exits.append(k)
        for k, t in enumerate(self.t):
            if t["call"]:
                for c in range(N_CARDS):
                    if t["call"] >> c & 1:
                        fixed.append(c)
                        exits.append(k)  # in the hand until the call of turn k (no draw at a call turn)
        self.n_fixed = len(fixed)
        self.held_n = info.hidden[j]
        self.fixed = np.array(fixed, np.int64)
        self.exit = np.array(exits + [BIG] * self.held_n, np.int64)
        self.M = self.n_fixed + self.held_n
        self.draw_turn = np.array([not t["call"] for t in self.t])
        n_slots = 7 + int(self.draw_turn.sum())
        if n_slots != self.M:
            raise ValueError(f"card count {self.M} != slots {n_slots}")
        self.pool = int(info.pool)
        self.call_cards = np.array([t["call"] or 0 for t in self.t], np.uint64)
        self.meld_before = np.array([t["meld"] for t in self.t], np.uint64)
        self.vis = np.array([t["vis"] for t in self.t], np.uint64)
        self.d = np.array([t["d"] for t in self.t], np.int64)
        self.ron = np.array([t["ron"] for t in self.t] + [h["after"]], np.uint64)
        self.furi = np.array([t["furi"] for t in self.t] + [h["furi"]], np.uint64)
        # the meld j had while waiting for each Ron window (k = 0..K): before turn k, the meld of turn k-1's discard
        # (after the last turn that is j's meld now: a call is always followed by a turn)
        self.meld_wait = np.array([0] + [t["meld"] for t in self.t], np.uint64)

    def init(self, hands: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """cards (C, M) and entry slots (C, M) from sampled concealed hands (C,): slots by exit order."""
        C = len(hands)
        cards = np.zeros((C, self.M), np.int64)
        cards[:, : self.n_fixed] = self.fixed
        for r, hmask in enumerate(hands):
            hc = [c for c in range(N_CARDS) if int(hmask) >> c & 1]
            cards[r, self.n_fixed :] = hc
        slots = np.zeros((C, self.M), np.int64)
        draw_slots = [k + 1 for k in range(self.K) if self.draw_turn[k]]  # slot k+1: drawn at turn k
        order = np.argsort(self.exit, kind="stable")
        for r in range(C):
            free = [0] * 7 + draw_slots
            for i in order:
                ok = [s for s in free if _fits(s, self.exit[i])]
                s = ok[rng.integers(len(ok))]
                free.remove(s)
                slots[r, i] = s
        return cards, slots

    def breaks(self, cards: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """(C, 2): per chain, the turns whose discard is not greedy's, and the Tsumo / Ron chances let pass."""
        C, K = len(cards), self.K
        bits = np.left_shift(U1, cards.astype(np.uint64))  # (C, M)
        # the hand before turn k (k = 0..K): entered at a slot <= k (slot s + 1 = drawn at turn s), not yet gone
        ks = np.arange(K + 1)
        inside = (slots[:, :, None] <= ks[None, None, :]) & (self.exit[None, :, None] >= ks[None, None, :])
        G = np.bitwise_or.reduce(np.where(inside, bits[:, :, None], U1 * 0), axis=1)  # (C, K+1)
        drawn = np.zeros((C, K), np.uint64)
        for k in range(K):
            drawn[:, k] = np.bitwise_or.reduce(np.where(slots == k + 1, bits, U1 * 0), axis=1)
        # the concealed cards at turn k's discard: the hand before it and its draw, less a call's hand cards
        X = (G[:, :K] | drawn) & ~self.call_cards[None, :]
        Xf = X.ravel()
        mf = np.tile(self.meld_before, C)
        card, _, _ = best_discards(Xf, mf, ALL & ~Xf & ~np.tile(self.vis, C), Xf & ~JK)
        out = np.zeros((C, 2), np.int64)
        out[:, 0] = (card.reshape(C, K) != self.d[None, :]).sum(axis=1)
        out[:, 1] = (is_win_form_batch(Xf, mf).reshape(C, K) & self.draw_turn[None, :]).sum(axis=1)
        ks_r = np.flatnonzero(self.ron != 0)
        if len(ks_r):  # Ron windows: the hand j held while the other seats' discards since its last turn came
            wt = waits_batch(G[:, ks_r].ravel(), np.tile(self.meld_wait[ks_r], C)).reshape(C, len(ks_r))
            can = ((wt & self.ron[ks_r][None, :]) != 0) & ((wt & self.furi[ks_r][None, :]) == 0)
            out[:, 1] += can.sum(axis=1)
        return out

    def loglik(self, br: np.ndarray, eps: float, pen: float) -> np.ndarray:
        """log-likelihood (C,) of the break counts at these soft factors."""
        return (self.K - br[:, 0]) * np.log1p(-eps) + br[:, 0] * np.log(eps / 7) + br[:, 1] * np.log(pen)

    def propose(self, cards: np.ndarray, slots: np.ndarray, rng: np.random.Generator):
        C = len(cards)
        nc, ns = cards.copy(), slots.copy()
        replace = rng.random(C) < 0.5
        for r in range(C):
            if replace[r] and self.held_n:
                i = self.n_fixed + rng.integers(self.held_n)
                used = 0
                for c in nc[r, self.n_fixed :]:
                    used |= 1 << int(c)
                free = self.pool & ~used
                opts = [c for c in range(N_CARDS) if free >> c & 1]
                nc[r, i] = opts[rng.integers(len(opts))]
            else:
                a, b = rng.choice(self.M, 2, replace=False)
                sa, sb = ns[r, a], ns[r, b]
                if _fits(sb, self.exit[a]) and _fits(sa, self.exit[b]):
                    ns[r, a], ns[r, b] = sb, sa
        return nc, ns

    def gibbs_card(self, cards, slots, br, eps, pen, rng):
        """Resample one concealed card of every chain from its exact conditional (every hidden card it could be)."""
        C = len(cards)
        if not self.held_n:
            return cards, br
        i = self.n_fixed + rng.integers(self.held_n, size=C)
        rows, cands = [], []
        for r in range(C):
            used = 0
            for c in cards[r, self.n_fixed :]:
                used |= 1 << int(c)
            free = (self.pool & ~used) | (1 << int(cards[r, i[r]]))
            opts = [c for c in range(N_CARDS) if free >> c & 1]
            rows += [r] * len(opts)
            cands += opts
        rows, cands = np.array(rows), np.array(cands)
        nc = cards[rows].copy()
        nc[np.arange(len(rows)), i[rows]] = cands
        nbr = self.breaks(nc, slots[rows])
        ll = self.loglik(nbr, eps, pen)
        # sample one candidate per chain with probability proportional to exp(ll) (Gumbel-max)
        key = ll + rng.gumbel(size=len(ll))
        order = np.lexsort((-key, rows))
        first = order[np.r_[True, rows[order][1:] != rows[order][:-1]]]
        cards, br = cards.copy(), br.copy()
        cards[rows[first]] = nc[first]
        br[rows[first]] = nbr[first]
        return cards, br

    def clean(self, br: np.ndarray) -> np.ndarray:
        """(C,) bool: the chain's history breaks no factor in force (the win factors only when ``pen`` < 1)."""
        return (br[:, 0] == 0) & ((br[:, 1] == 0) | (self.opts.pen >= 1))

    def hands(self, cards: np.ndarray) -> np.ndarray:
        out = np.zeros(len(cards), np.uint64)
        for i in range(self.n_fixed, self.M):
            out |= np.left_shift(U1, cards[:, i].astype(np.uint64))
        return out


def model_of(info, j: int, opts: argparse.Namespace) -> Model | None:
    """The chains' model of opponent j's history, or None where it does not cover j: no turn yet, a hand
    mid-turn, or two calls (``history`` / ``Model`` refuse those)."""
    try:
        h = history(info, j)
        if h is None or info.hidden[j] + int(info.melds[j]).bit_count() != 7:
            return None
        return Model(info, j, h, opts)
    except ValueError:
        return None


def run_chains(model: Model, start: np.ndarray, opts: argparse.Namespace, rng: np.random.Generator) -> tuple:
    """The chains of one opponent view, started from the concealed hands ``start`` (C,) (two-level worlds):
    ``opts.steps`` steps, the factors annealed over the first half. Returns the hands of every chain at every step
    of the second half (a list of (C,) arrays), the same restricted to states that break no factor, the
    acceptance rate, and per kept step the share of clean chains."""
    cards, slots = model.init(start, rng)
    br = model.breaks(cards, slots)
    kept: list[np.ndarray] = []
    kept_clean: list[np.ndarray] = []
    shares: list[float] = []
    n_acc = 0
    burn = opts.steps // 2
    for step in range(opts.steps):
        # anneal from loose factors (eps at --hot, pen at 1: no factor) to the targets over the burn-in, then
        # sample at the targets
        f = min(1.0, step / max(1, burn - 1))
        eps, pen = opts.hot ** (1 - f) * opts.eps**f, opts.pen**f
        if rng.random() < opts.gibbs:
            cards, br = model.gibbs_card(cards, slots, br, eps, pen, rng)
        nc, ns = model.propose(cards, slots, rng)
        nbr = model.breaks(nc, ns)
        take = np.log(rng.random(len(cards))) < model.loglik(nbr, eps, pen) - model.loglik(br, eps, pen)
        n_acc += int(take.sum())
        cards[take], slots[take], br[take] = nc[take], ns[take], nbr[take]
        if step >= burn:
            kept.append(model.hands(cards))
            ok = model.clean(br)
            kept_clean.append(model.hands(cards)[ok])
            shares.append(float(ok.mean()))
    return kept, kept_clean, n_acc / (opts.steps * len(start)), shares


def _fits(slot: int, exit_turn: int) -> bool:
    """A card leaving at turn ``exit_turn`` may enter at the deal or at a draw of a turn <= exit_turn."""
    return slot == 0 or slot - 1 <= exit_turn


def bootstrap_auc(p: np.ndarray, y: np.ndarray, sid: np.ndarray, rng: np.random.Generator, n: int = 200, base=None):
    """95 % interval of the AUC of scores ``p`` over bootstrap resamples of the states (``sid``); with ``base``
    (other scores of the same rows), of the paired difference AUC(p) - AUC(base) on the same resamples."""
    states = np.unique(sid)
    idx = [np.flatnonzero(sid == s) for s in states]
    out = []
    for _ in range(n):
        pick = np.concatenate([idx[i] for i in rng.integers(len(states), size=len(states))])
        if y[pick].any() and not y[pick].all():
            a = auc(p[pick], y[pick])
            out.append(a if base is None else a - auc(base[pick], y[pick]))
    return np.percentile(out, [2.5, 97.5])


def truth_check(model: Model, true_hand: int, rng: np.random.Generator, steps: int = 200) -> tuple[bool, float]:
    """CHEATING diagnostic of the model, not of a sampler: 16 chains start from j's TRUE hand and move entry turns
    only, keeping a move unless it breaks more factors. Returns whether some chain found a history of the true hand
    that breaks none, and then the share of one-card replacements of the true hand (every hand card, every hidden
    card) whose history, with the same entry turns, still breaks none (how much one history constrains a hand)."""
    cards, slots = model.init(np.full(16, true_hand, np.uint64), rng)
    br = model.breaks(cards, slots)
    for _ in range(steps):
        _, ns = model.propose(cards, slots, rng)
        swap = (ns != slots).any(axis=1)  # a slot move (a replacement proposal is dropped: the hand stays true)
        nbr = model.breaks(cards, ns)
        take = swap & (nbr.sum(axis=1) <= br.sum(axis=1))
        slots[take], br[take] = ns[take], nbr[take]
    ok = np.flatnonzero(model.clean(br))
    if not ok.size:
        return False, float("nan")
    c0, s0 = cards[ok[0]], slots[ok[0]]
    free = [c for c in range(N_CARDS) if (model.pool & ~true_hand) >> c & 1]
    rows = []
    for i in range(model.n_fixed, model.M):
        for u in free:
            x = c0.copy()
            x[i] = u
            rows.append(x)
    if not rows:
        return True, float("nan")
    rows = np.array(rows)
    return True, float(model.clean(model.breaks(rows, np.repeat(s0[None], len(rows), axis=0))).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=100)
    ap.add_argument("--chains", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--eps", type=float, default=1e-4, help="chance that the opponent throws another card")
    ap.add_argument("--pen", type=float, default=1.0, help="factor for a win form / wait the history let pass")
    ap.add_argument("--lineup", default="greedy,greedy,greedy", help="the bots of the games the states come from")
    ap.add_argument("--gibbs", type=float, default=0.3, help="chance per step of a Gibbs update of one hand card")
    ap.add_argument(
        "--truth-check",
        action="store_true",
        help="CHEATING model check instead of the rows: does the true hand admit a clean history (truth_check)",
    )
    ap.add_argument("--hot", type=float, default=0.5, help="the factors' start of the annealing (= --eps: none)")
    ap.add_argument("--seed", type=int, default=7)
    opts = ap.parse_args()
    bad = [b for b in opts.lineup.split(",") if b not in ("greedy", "defensive", "random")]
    limits = {
        "--lineup": (not bad, f"bots among greedy, defensive, random (got {', '.join(bad)})"),
        "--states": (opts.states >= 1, "at least 1"),
        "--chains": (opts.chains >= 1, "at least 1"),
        "--steps": (opts.steps >= 2, "at least 2 (the second half is sampled)"),
        "--eps": (0 < opts.eps < 1, "between 0 and 1, both excluded"),
        "--pen": (0 < opts.pen <= 1, "in (0, 1]; 1 = no win factors"),
        "--hot": (opts.eps <= opts.hot < 1, "at least --eps and below 1"),
        "--gibbs": (0 <= opts.gibbs <= 1, "a chance, 0..1"),
    }
    for flag, (ok, want) in limits.items():
        if not ok:
            ap.error(f"{flag}: {want}")
    rules = RuleConfig()
    states = play_bot_states(rules, max(8, opts.states // 25), seed=10_000 + opts.seed, lineup=opts.lineup.split(","))
    states = states[np.isin(states["phase"], [int(Phase.DRAW), int(Phase.CALL_DISCARD)])]
    rng = np.random.default_rng(opts.seed)
    states = states[np.sort(rng.permutation(len(states))[: opts.states])]
    # (status scores, card scores); "clean": the posterior states that break no factor only (the two-level worlds
    # where a view has none)
    rows = {"two_level": ([], []), "posterior": ([], []), "posterior, clean states": ([], [])}
    ys, ych, sid_s, sid_c, vid_c = [], [], [], [], []  # vid_c: the opponent view of each card row
    acc, clean, skipped, checks = [], [], 0, []
    t0 = time.perf_counter()
    for n, r in enumerate(states):
        seat = int(r["acting"])
        info = infoset(r, seat, rules)
        worlds, _ = sample_worlds(info, opts.chains, rng, "two_level", rules)
        for j in info.opponents:
            model = model_of(info, j, opts)
            if model is None:
                skipped += 1
                continue
            h = model.h
            if opts.truth_check:
                found, share = truth_check(model, int(r["hands"][j]), rng)
                checks.append((model.K, found, share))
                continue
            kept, kept_clean, rate, shares = run_chains(model, worlds["hands"][:, j].copy(), opts, rng)
            acc.append(rate)
            clean += shares
            meld = np.uint64(int(info.melds[j]))
            furi = np.uint64(h["furi"])
            truth = bool(true_ready(r.reshape(1), np.array([j]), 3)[0])
            truew = int(waits_batch(r["hands"][j : j + 1].copy(), r["melds"][j : j + 1].copy())[0])
            legal = [c for c in range(52) if info.legal >> c & 1]
            ys.append(truth)
            sid_s.append(n)
            for c in legal:
                ych.append(truth and bool(truew >> c & 1))
                sid_c.append(n)
                vid_c.append(len(ys) - 1)
            good = np.concatenate(kept_clean)
            for name, G in (
                ("two_level", worlds["hands"][:, j]),
                ("posterior", np.concatenate(kept)),
                ("posterior, clean states", good if len(good) else worlds["hands"][:, j]),
            ):
                wt = waits_batch(G.copy(), np.full(len(G), meld, np.uint64))
                rdy = (wt != 0) & ((wt & furi) == 0)
                rows[name][0].append(rdy.mean())
                for c in legal:
                    rows[name][1].append((rdy & ((wt & np.uint64(1 << c)) != 0)).mean())
        if (n + 1) % 50 == 0:
            print(f"  {n + 1} states, {time.perf_counter() - t0:.0f} s", flush=True)
    if opts.truth_check:
        found = np.array([f for _, f, _ in checks])
        shares = np.array([sh for _, f, sh in checks if f and sh == sh])
        Ks = np.array([k for k, f, sh in checks if f and sh == sh])
        print(
            f"CHEATING model check, lineup {opts.lineup}: {len(checks)} opponent views ({skipped} skipped); the true "
            f"hand admits a history that breaks no factor in {found.mean():.3f}; one-card replacements of the true "
            f"hand that keep that history clean: {shares.mean():.3f} on average"
        )
        for k in sorted(set(Ks.tolist())):
            print(f"  {k} turns: {int((Ks == k).sum())} views, {shares[Ks == k].mean():.3f} of replacements stay clean")
        return
    ys, ych, sid_s, sid_c, vid_c = map(np.array, (ys, ych, sid_s, sid_c, vid_c))
    brng = np.random.default_rng(opts.seed + 1)
    print(
        f"lineup {opts.lineup}: {len(states)} states, {len(ys)} opponent views ({skipped} skipped), ready rate "
        f"{ys.mean():.3f}, card base rate {ych.mean():.4f}; {opts.chains} chains x {opts.steps} steps, eps "
        f"{opts.eps}, pen {opts.pen}; acceptance {np.mean(acc):.3f}, posterior states breaking no factor "
        f"{np.mean(clean):.3f}; {time.perf_counter() - t0:.0f} s"
    )
    for name, (ps, _) in rows.items():
        print(f"mean P(ready) of the {name} worlds: {np.mean(ps):.3f} (true rate {ys.mean():.3f})")
    print("\n| worlds | status AUC | 95% CI | per-card AUC | 95% CI |\n|---|---:|---|---:|---|")
    for name, (ps, pc) in rows.items():
        ps, pc = np.array(ps), np.array(pc)
        lo_s, hi_s = bootstrap_auc(ps, ys, sid_s, brng)
        lo_c, hi_c = bootstrap_auc(pc, ych, sid_c, brng)
        print(
            f"| {name} | {auc(ps, ys):.4f} | [{lo_s:.4f}, {hi_s:.4f}] | {auc(pc, ych):.4f} | [{lo_c:.4f}, {hi_c:.4f}] |"
        )
    # what a choice among the seat's discards can use: the ranking of one opponent view's cards (session 28)
    print("\n| worlds | per-card AUC within one opponent view |\n|---|---:|")
    for name, (_, pc) in rows.items():
        print(f"| {name} | {within_group_auc(np.array(pc), ych, vid_c):.4f} |")
    print("\n| paired difference to two_level (same resamples) | status AUC | 95% CI | per-card AUC | 95% CI |")
    print("|---|---:|---|---:|---|")
    bs, bc = np.array(rows["two_level"][0]), np.array(rows["two_level"][1])
    for name, (ps, pc) in rows.items():
        if name == "two_level":
            continue
        ps, pc = np.array(ps), np.array(pc)
        lo_s, hi_s = bootstrap_auc(ps, ys, sid_s, np.random.default_rng(opts.seed + 2), base=bs)
        lo_c, hi_c = bootstrap_auc(pc, ych, sid_c, np.random.default_rng(opts.seed + 3), base=bc)
        ds, dc = auc(ps, ys) - auc(bs, ys), auc(pc, ych) - auc(bc, ych)
        print(f"| {name} | {ds:+.4f} | [{lo_s:+.4f}, {hi_s:+.4f}] | {dc:+.4f} | [{lo_c:+.4f}, {hi_c:+.4f}] |")


if __name__ == "__main__":
    main()
