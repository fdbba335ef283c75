/* Meld8 built-in bots in C: agents/greedy.py, agents/defensive.py and agents/random_agent.py decision for
 * decision. See _bots.h. Comments name the Python lines each block mirrors. */
#include "_bots.h"
#include "_splitmix.h"

#include <string.h>

#define ALL53 ((1ULL << 53) - 1)
#define CROWN_M (RANKM[0] | RANKM[10] | RANKM[11] | RANKM[12])
#define TERMINAL_SIDE_M (CROWN_M | RANKM[1] | RANKM[2] | RANKM[8] | RANKM[9])
#define RED_M (0x1FFFULL << 13 | 0x1FFFULL << 26)
#define BLACK_M (0x1FFFULL | 0x1FFFULL << 39)
#define LATE_WALL 8      /* defensive.late_wall: from here on every opponent is a threat */
#define FOLD_DISTANCE 3  /* defensive.fold_distance */

/* ---------------------------------------------------------------- views */
void bot_view_record(const game_t *g, const rules_t *R, bot_view_t *v) {
    int P = R->P, s = g->acting;
    memset(v, 0, sizeof *v);
    v->P = P;
    v->claim_card = -1;
    if (s < 0 || s >= P || g->phase == PH_OVER) return;
    v->mask = g->mask;
    v->hand = g->hands[s];
    v->meld = g->melds[s];
    u64 visible = v->hand;
    for (int k = 0; k < P; k++) {
        int p = (s + k) % P;
        u64 d = 0;
        int nd = g->ndisc[p] < MAXD ? g->ndisc[p] : MAXD;
        for (int i = 0; i < nd; i++)
            if (g->discards[p][i] >= 0 && g->discards[p][i] < N_CARDS) d |= 1ULL << g->discards[p][i];
        v->discarded[k] = d;
        v->calls_used[k] = g->calls_used[p] != 0;
        visible |= d | g->melds[p];
    }
    v->unseen = ALL53 & ~visible;
    if (g->phase == PH_CLAIM) v->claim_card = g->claim_card;
    int left = g->wall_end - g->wall_pos;
    v->wall_left = left > 0 ? left : 0;
}

static u64 plane_mask(const uint8_t *p, int n) {
    u64 m = 0;
    for (int c = 0; c < n; c++)
        if (p[c]) m |= 1ULL << c;
    return m;
}

void bot_view_obs(const uint8_t *obs, const uint8_t *mask64, const rules_t *R, bot_view_t *v) {
    const obs_layout_t *L = &R->obs[0];
    int P = R->P;
    memset(v, 0, sizeof *v);
    v->P = P;
    v->mask = plane_mask(mask64, 64);
    v->hand = plane_mask(obs + L->off[OBS_HAND], N_CARDS);
    u64 visible = v->hand;
    for (int k = 0; k < P; k++) {
        u64 m = plane_mask(obs + L->off[OBS_MELDS] + N_CARDS * k, N_CARDS);
        u64 d = plane_mask(obs + L->off[OBS_DISCARDED] + N_CARDS * k, N_CARDS);
        if (k == 0) v->meld = m;
        v->discarded[k] = d;
        v->calls_used[k] = obs[L->off[OBS_CALLS_USED] + k] != 0;
        visible |= m | d;
    }
    v->unseen = ALL53 & ~visible;
    v->claim_card = -1;
    for (int c = 0; c < N_CARDS; c++)
        if (obs[L->off[OBS_CLAIM_CARD] + c]) { v->claim_card = c; break; }
    v->wall_left = obs[L->off[OBS_WALL_LEFT]];
}

/* ---------------------------------------------------------------- greedy discards (greedy.discard_table) */
typedef struct {
    int n, best, tied;
    int sp; /* the hand's special-form overlap (before its discard): a bound for every hand - x (see SP_UNKNOWN) */
    int card[N_CARDS], dist[N_CARDS], acc[N_CARDS];
    /* discard_best's yes/no searches: the best W of hand that showed each discard leaves T->best (tie_break
     * reads their drawn cards as accepted; see there) */
    eval_witness_t wit;
    /* collected: discard_best visited every best W of hand at once (T->best at most its collect_max), and acc_set[c]
     * holds the drawn cards of those that leave card c out (tie_break counts from them without a search) */
    int collected;
    u64 acc_set[64];
} table_t;

/* The distance up to which discard_best visits every best W of the hand in one collecting search (eval_discard_anchored's
 * collect path) instead of asking one question per discard, and the tie-break's counts come with it. Measured on
 * bench/rollout_instructions.py's 1,000 rollouts (session 30, docs/speed_log.md): collecting up to distance 2 / 3 /
 * 4, 243k / 236k / 246k instructions per rollout (215.7k at 3 once the collecting became the levels of the hand's
 * own search); further away a hand has many best W, and the questions and the counts one at a time (which the
 * tie-break stops early) cost less. */
#define COLLECT_MAX 3

/* Every allowed discard: distance after it (acceptance counts 0 until table_acceptance). */
static void discard_distances(u64 hand, u64 meld, u64 unseen, u64 allowed, table_t *T) {
    allowed &= REAL;
    T->collected = 0;
    T->n = 0;
    T->best = 127;
    for (u64 t = allowed; t; t &= t - 1) {
        int c = ctz64(t), i = T->n++;
        T->card[i] = c;
        T->dist[i] = eval_distance(hand & ~(1ULL << c), meld, unseen);
        T->acc[i] = 0;
        if (T->dist[i] < T->best) T->best = T->dist[i];
    }
    T->tied = 0;
    for (int i = 0; i < T->n; i++) T->tied += T->dist[i] == T->best;
}

#define DIST_ABOVE 126 /* in a table of discard_best: a discard known to leave more than T->best */

/* The smallest distance after an allowed discard and the discards that leave it (T->dist: best there, DIST_ABOVE
 * elsewhere), as discard_distances finds them: eval_discard_anchored's questions (T->wit: the best W of hand they
 * found, tie_break reads their drawn cards as accepted), or up to distance collect_max its collecting search over
 * every best W (T->collected, T->acc_set). When no allowed discard leaves the hand's own distance d (each best W holds
 * every allowed card), every distance is computed. */
static void discard_best(u64 hand, u64 meld, u64 unseen, u64 allowed, table_t *T, int collect_max) {
    allowed &= REAL;
    u64 leaves;
    int collected;
    int d = eval_discard_anchored(hand, meld, unseen, allowed, &T->sp, &T->wit, &leaves, collect_max, T->acc_set,
                                  &collected);
    T->collected = collected && leaves;
    T->n = T->tied = 0;
    T->best = 127;
    if (!leaves) {
        T->wit.n = 0; /* the distances are not d: those W are not best */
        discard_distances(hand, meld, unseen, allowed, T);
        return;
    }
    for (u64 t = allowed; t; t &= t - 1) {
        int c = ctz64(t), i = T->n++;
        T->card[i] = c;
        T->acc[i] = 0;
        T->dist[i] = leaves >> c & 1 ? d : DIST_ABOVE;
        T->tied += T->dist[i] == d;
    }
    T->best = d;
}

/* The cards known accepted by hand - x (x one of the discards tied at the table's best): a W that is best for hand
 * (|W & hand| = its best overlap, the overlap of hand - x too) and avoids x is a best W of hand - x, so each card it
 * draws is accepted there (as in eval_acceptance_fast's union). Every witness was such a W when it was found:
 * discard_best's ones are best W of hand, and one found for hand - y + z (acceptance_per_card) holds z and
 * |W & (hand - y)| cards of hand, the same count. */
static u64 known_accepted(const eval_witness_t *wl, u64 x) {
    u64 k = 0;
    for (int w = 0; w < wl->n; w++)
        if (!(wl->held[w] & x)) k |= wl->drawn[w];
    return k;
}

/* With equal counts, whether discard i of T comes before discard b: the smaller total (totals NULL: all 0),
 * then the lower card (the rest of the Python twins' lexsort keys). */
static inline int wins_ties(const table_t *T, int i, int b, const int *totals) {
    int ti = totals ? totals[i] : 0, tb = totals ? totals[b] : 0;
    return ti < tb || (ti == tb && T->card[i] < T->card[b]);
}

/* The tie-break among the discards idx[0..k) of T (k >= 2, all of one distance): the most acceptance, then
 * wins_ties; the counts are stored in T->acc (exact for the winner, possibly lower elsewhere). A collected table
 * (discard_best's collecting search) counts each from its acc_set (eval_collected_acceptance). Otherwise each count is only
 * asked whether it beats the best so far (eval_acceptance_beat), so the candidates are tried in the order of their
 * pool's size, largest first (an upper bound of the count: a high best early lets the others stop sooner); the
 * winner is the same in any order.
 * lite (the _LITE policies): where the distance is 2 or more, the pool's size stands in for the count. */
static int tie_break(u64 hand, u64 meld, u64 unseen, table_t *T, const int *idx, int k, const int *totals, int lite) {
    int order[N_CARDS], size[N_CARDS], cheap = lite && T->dist[idx[0]] >= 2;
    int direct = cheap || T->collected; /* every count known without a search: no order needed */
    u64 pool[N_CARDS];
    for (int j = 0; j < k; j++) {
        u64 after = hand & ~(1ULL << T->card[idx[j]]);
        pool[j] = (neighbours(after) | JK_BIT) & unseen & ~(after | meld);
        size[j] = pc64(pool[j]);
        if (direct) continue;
        int p = j; /* insertion by size, descending; equal sizes keep the card order */
        while (p > 0 && size[order[p - 1]] < size[j]) { order[p] = order[p - 1]; p--; }
        order[p] = j;
    }
    int bj = -1;
    if (direct) { /* the pool's size (lite), or the count from discard_best's collecting search */
        for (int j = 0; j < k; j++) {
            int i = idx[j];
            T->acc[i] = cheap ? size[j]
                              : eval_collected_acceptance(hand, meld, unseen, 1ULL << T->card[i], T->dist[i],
                                                          T->acc_set[T->card[i]], pool[j], T->sp);
            if (bj < 0 || T->acc[i] > T->acc[idx[bj]] || (T->acc[i] == T->acc[idx[bj]] && wins_ties(T, i, idx[bj], totals)))
                bj = j;
        }
        return idx[bj];
    }
    for (int q = 0; q < k; q++) {
        int j = order[q], i = idx[j];
        u64 after = hand & ~(1ULL << T->card[i]);
        u64 known = known_accepted(&T->wit, 1ULL << T->card[i]);
        if (bj < 0) {
            T->acc[i] = eval_acceptance_known(after, meld, unseen, pool[j], T->dist[i], -1, known, &T->wit, T->sp);
            bj = j;
            continue;
        }
        int b = idx[bj], wins = wins_ties(T, i, b, totals);
        T->acc[i] = eval_acceptance_known(after, meld, unseen, pool[j], T->dist[i], wins ? T->acc[b] - 1 : T->acc[b],
                                          known, &T->wit, T->sp);
        if (T->acc[i] > T->acc[b] || (T->acc[i] == T->acc[b] && wins)) bj = j;
    }
    return idx[bj];
}

/* lexsort((cards, -accept, dist)) of greedy.discard_table: the smallest distance, then the most acceptance
 * (counted only when at least two discards tie for the smallest distance, as in Python), then the lowest id. */
int bot_best_discard(u64 hand, u64 meld, u64 unseen, u64 allowed, int *dist_out, int lite) {
    table_t T;
    discard_best(hand, meld, unseen, allowed, &T, lite ? 1 : COLLECT_MAX);
    int idx[N_CARDS], k = 0;
    for (int i = 0; i < T.n; i++)
        if (T.dist[i] == T.best) idx[k++] = i;
    int bi = k == 0 ? -1 : k == 1 ? idx[0] : tie_break(hand, meld, unseen, &T, idx, k, NULL, lite);
    if (dist_out) *dist_out = bi < 0 ? 127 : T.dist[bi];
    return bi < 0 ? -1 : T.card[bi];
}

/* ---------------------------------------------------------------- greedy claims (greedy.call_table) */
static int yaku_possible(u64 hand, u64 meld, int action) {
    u64 allc = (hand | meld) & REAL;
    int pon = action < CHII_LOW_A;
    if (pon && (meld & CROWN_M) == meld) return 1;                          /* crown Pon */
    if (!(allc & RED_M) || !(allc & BLACK_M)) return 1;                     /* one colour */
    if (pon)                                                                 /* Toitoi */
        for (int r = 0; r < 13; r++)
            if (pc64(hand & RANKM[r]) >= 2) return 1;
    if ((meld & CROWN_M) && !(hand & REAL & ~TERMINAL_SIDE_M)) return 1;    /* Chanta */
    return 0;
}

/* The smallest distance after an allowed discard of a hand that just called (discard_best's T->best) when it is below
 * `below`, else `below`. No discard leaves less than the hand's own distance d, and one leaves d exactly when some
 * best W avoids it: one search (cut at `below`), then yes/no questions, a best W's held cards settling most. */
static int call_distance(u64 after, u64 meld, u64 unseen, u64 allowed, int below) {
    if (!allowed) return below;
    eval_witness_t w;
    int d = eval_distance_below(after, meld, unseen, below, &w);
    if (d >= below) return below;
    if (w.n && (allowed & ~w.held[0])) return d;
    for (u64 t = allowed; t; t &= t - 1)
        if (eval_distance_at_most(after & ~(t & -t), meld, unseen, d)) return d;
    int m = below; /* every best W holds every allowed discard: their own distances */
    for (u64 t = allowed; t; t &= t - 1) m = eval_distance_below(after & ~(t & -t), meld, unseen, m, NULL);
    return m;
}

/* greedy.call_table: the call whose best discard leaves the smallest distance, if below now and a yaku is still
 * possible; the lowest action id among equals (actions ascend, so a later call must leave strictly less). */
static int greedy_claim(const bot_view_t *v, const rules_t *R) {
    int card = v->claim_card, now = -1, best_a = PASS_A, best_d = 0;
    if (card < 0 || card >= 52) return PASS_A;
    for (int a = PON_A; a < PASS_A; a++) {
        if (!(v->mask >> a & 1)) continue;
        u64 pair = eng_call_cards(a, card);
        u64 meld = pair | (1ULL << card);
        u64 after = v->hand & ~pair;
        if (!yaku_possible(after, meld, a)) continue;
        if (now < 0) now = eval_distance(v->hand, v->meld, v->unseen);
        int below = best_a == PASS_A ? now : best_d;
        int dist = call_distance(after, meld, v->unseen, after & ~eng_kuikae_after(R, a, card) & REAL, below);
        if (dist < below) {
            best_a = a;
            best_d = dist;
        }
    }
    return best_a;
}

static int bot_greedy(const bot_view_t *v, const rules_t *R, int lite) {
    if (v->mask >> RON_A & 1) return RON_A;
    if (v->mask >> TSUMO_A & 1) return TSUMO_A;
    if (v->mask >> PASS_A & 1) return greedy_claim(v, R);
    return bot_best_discard(v->hand, v->meld, v->unseen, v->mask & REAL, NULL, lite);
}

/* ---------------------------------------------------------------- defensive (defensive.py) */
static inline u64 card_bit(int r, int s) { return (r >= 0 && r <= 12) ? 1ULL << (13 * s + r) : 0; }
static inline int live(u64 m, u64 unseen) { return m && (unseen & m) == m; }

/* live, non-furiten wait shapes on card c for one opponent (defensive.danger) */
static int danger(int c, u64 unseen, u64 theirs) {
    int r = c % 13, s = c / 13;
    u64 me = 1ULL << c;
    u64 p1 = card_bit(r + 1, s), p2 = card_bit(r + 2, s), p3 = card_bit(r + 3, s);
    u64 m1 = card_bit(r - 1, s), m2 = card_bit(r - 2, s), m3 = card_bit(r - 3, s);
    int pair = (unseen & RANKM[r] & ~me) && !(theirs & RANKM[r]);
    int up = live(p1 | p2, unseen) && p1 && p2 && !(theirs & p3);
    int down = live(m1 | m2, unseen) && m1 && m2 && !(theirs & m3);
    int mid = live(m1 | p1, unseen) && m1 && p1;
    return pair + up + down + mid;
}

static int defensive_discard(const bot_view_t *v, int lite) {
    table_t T;
    int P = v->P, threat[MAXP] = {0}, any = 0;
    for (int k = 1; k < P; k++) {
        threat[k] = v->calls_used[k] || v->wall_left <= LATE_WALL;
        any |= threat[k];
    }
    /* folding (FOLD_DISTANCE and up, under a threat) ranks by danger first: the counts there are seldom read */
    discard_best(v->hand, v->meld, v->unseen, v->mask & REAL, &T, lite ? 1 : any ? FOLD_DISTANCE - 1 : COLLECT_MAX);
    int fold = any && T.best >= FOLD_DISTANCE;
    /* keys: the danger to the threats, only when folding; totals (all opponents) are read only for the discards
     * left at the end (idx), so they are counted there */
    int keys[N_CARDS] = {0}, totals[N_CARDS];
    if (fold)
        for (int i = 0; i < T.n; i++)
            for (int k = 1; k < P; k++)
                if (threat[k]) keys[i] += danger(T.card[i], v->unseen, v->discarded[k]);
    /* lexsort((cards, total, -accept, dist, key_fold)): the acceptance counts (the table's, 0 unless at least two
     * discards tie for the global smallest distance, as in Python) decide only among the discards of the
     * smallest key and, within them, the smallest distance; those compare by (-accept, total, card) */
    int kmin = 1 << 30, dmin = 1 << 30;
    for (int i = 0; i < T.n; i++)
        if (keys[i] < kmin) kmin = keys[i];
    int at_best = 0;
    for (int i = 0; i < T.n; i++) at_best |= keys[i] == kmin && T.dist[i] == T.best;
    if (!at_best) /* the smallest key holds no discard of the smallest distance: its distances decide */
        for (int i = 0; i < T.n; i++)
            if (keys[i] == kmin && T.dist[i] == DIST_ABOVE)
                T.dist[i] = eval_distance(v->hand & ~(1ULL << T.card[i]), v->meld, v->unseen);
    for (int i = 0; i < T.n; i++)
        if (keys[i] == kmin && T.dist[i] < dmin) dmin = T.dist[i];
    int idx[N_CARDS], k = 0, bi = -1;
    for (int i = 0; i < T.n; i++)
        if (keys[i] == kmin && T.dist[i] == dmin) idx[k++] = i;
    for (int j = 0; j < k; j++) {
        totals[idx[j]] = 0;
        for (int o = 1; o < P; o++) totals[idx[j]] += danger(T.card[idx[j]], v->unseen, v->discarded[o]);
    }
    if (k >= 2 && T.tied >= 2 && dmin == T.best) bi = tie_break(v->hand, v->meld, v->unseen, &T, idx, k, totals, lite);
    else /* no counts (all 0, as in Python): the smallest total, then the lowest card */
        for (int j = 0; j < k; j++)
            if (bi < 0 || totals[idx[j]] < totals[bi]) bi = idx[j];
    return bi < 0 ? -1 : T.card[bi];
}

static int bot_defensive(const bot_view_t *v, const rules_t *R, int lite) {
    if (v->mask >> RON_A & 1) return RON_A;
    if (v->mask >> TSUMO_A & 1) return TSUMO_A;
    if (v->mask >> PASS_A & 1) return greedy_claim(v, R);
    return defensive_discard(v, lite);
}

int bot_view_act(const bot_view_t *v, const rules_t *R, int code) {
    int lite = code == BOT_GREEDY_LITE || code == BOT_DEFENSIVE_LITE;
    return code == BOT_DEFENSIVE || code == BOT_DEFENSIVE_LITE ? bot_defensive(v, R, lite) : bot_greedy(v, R, lite);
}

/* ---------------------------------------------------------------- random */
static int nth_bit(u64 m, int k) {
    while (k--) m &= m - 1;
    return ctz64(m);
}

int bot_random_rng(u64 mask, u64 *rng) {
    int k = pc64(mask);
    if (!k) return 0;
    return nth_bit(mask, (int)(splitmix_next(rng) % (u64)k));
}

int bot_random_obs(const uint8_t *obs, int D, u64 mask, const u64 *weights, u64 seed) {
    /* the same sum as over every byte, without the zero bytes' terms: an observation is sparse (about 34 of 786
     * bytes are nonzero in bot games), and the full dot product was 14 % of a bots-only tournament's instructions
     * (greedy, defensive, random under callgrind, session 31). A 64-bit mask of the nonzero bytes of each 64-byte
     * block, built without branches, leaves one loop exit per block to mispredict instead of one test per word. */
    u64 h = 0;
    int i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 64 <= D; i += 64) {
        u64 nz = 0; /* bit b: byte i + b is nonzero */
        for (int k = 0; k < 8; k++) {
            u64 word;
            memcpy(&word, obs + i + 8 * k, sizeof word);
            nz |= nonzero_bytes(word) << (8 * k);
        }
        for (; nz; nz &= nz - 1) {
            int j = i + ctz64(nz);
            h += (u64)obs[j] * weights[j];
        }
    }
#endif
    for (; i < D; i++) h += (u64)obs[i] * weights[i];
    h = mix64(h + GOLDEN * (seed + 1));
    int k = pc64(mask);
    if (!k) return 0;
    return nth_bit(mask, (int)(h % (u64)k));
}

int bot_act_record(const game_t *g, const rules_t *R, int code, u64 *rng) {
    if (g->phase == PH_OVER || g->acting < 0) return -1;
    if (code == BOT_RANDOM) return bot_random_rng(g->mask, rng);
    bot_view_t v;
    bot_view_record(g, R, &v);
    if (code == BOT_ORACLE) return bot_oracle(g, R, &v);
    return bot_view_act(&v, R, code);
}

/* ---------------------------------------------------------------- oracle (agents/oracle.py), CHEATING */
/* the legal discards some other seat would be offered Ron on: only its waits can be (R33), and for those the
 * engine's own check decides (yaku, minimum, furiten, a dead seat) */
static u64 ron_discards(const game_t *g, const rules_t *R, u64 legal) {
    u64 unsafe = 0;
    for (int k = 1; k < R->P; k++) {
        int o = (g->acting + k) % R->P;
        for (u64 m = legal & ~unsafe & eng_seat_waits(g, o, NULL); m; m &= m - 1) {
            int c = ctz64(m);
            if (eng_ron_offered(g, R, o, c)) unsafe |= 1ULL << c;
        }
    }
    return unsafe;
}

int bot_oracle(const game_t *g, const rules_t *R, const bot_view_t *v) {
    if (v->mask >> RON_A & 1) return RON_A;
    if (v->mask >> TSUMO_A & 1) return TSUMO_A;
    if (v->mask >> PASS_A & 1) return greedy_claim(v, R);
    u64 legal = v->mask & REAL, safe = legal & ~ron_discards(g, R, legal);
    return bot_best_discard(v->hand, v->meld, v->unseen, safe ? safe : legal, NULL, 0);
}
