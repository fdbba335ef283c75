/* Meld8 hand evaluator: win check, readings, waits, exact distance to win. See _eval.h. */
#include "_eval.h"

u64 RANKM[13];
u64 NOT_K, NOT_QK;
static u64 SUITM[4];
static u64 CROWN_RED[4], CROWN_BLACK[4]; /* pair masks of A J Q K in red / black */

void eval_init(void) {
    for (int r = 0; r < 13; r++) {
        RANKM[r] = 0;
        for (int s = 0; s < 4; s++) RANKM[r] |= 1ULL << (s * 13 + r);
    }
    NOT_K = NOT_QK = 0;
    for (int s = 0; s < 4; s++) {
        SUITM[s] = ROW << (13 * s);
        NOT_K |= 0x0FFFULL << (13 * s);
        NOT_QK |= 0x07FFULL << (13 * s);
    }
    static const int crowns[4] = {0, 10, 11, 12};
    for (int i = 0; i < 4; i++) {
        int r = crowns[i];
        CROWN_RED[i] = (1ULL << (13 + r)) | (1ULL << (26 + r));
        CROWN_BLACK[i] = (1ULL << r) | (1ULL << (39 + r));
    }
}

/* ---------------------------------------------------------------- standard form: existence */
/* m: real cards still to place; jk: Joker still to place; held: every real card of the final
 * hand and the exposed meld (a Joker stand-in must avoid them, R27). */
static int std_exists(u64 m, int jk, int melds, int pair, u64 held) {
    if (!m) return !jk && !melds && !pair;
    int c = ctz64(m);
    u64 rest = m & (m - 1);
    int r = c % 13, base = c - r;
    u64 mates = rest & RANKM[r];
    if (pair) {
        for (u64 t = mates; t; t &= t - 1)
            if (std_exists(rest ^ (t & -t), jk, melds, 0, held)) return 1;
    }
    if (!melds) return 0;
    for (u64 t = mates; t; t &= t - 1) {
        u64 b = t & -t;
        for (u64 t2 = t & (t - 1); t2; t2 &= t2 - 1)
            if (std_exists(rest ^ b ^ (t2 & -t2), jk, melds - 1, pair, held)) return 1;
        if (jk && (RANKM[r] & ~held) && std_exists(rest ^ b, 0, melds - 1, pair, held)) return 1;
    }
    for (int st = r - 2; st <= r; st++) {
        if (st < 0 || st > 10) continue;
        int use = 0, ok = 1;
        u64 take = 0;
        for (int p = st; p < st + 3 && ok; p++) {
            if (p == r) continue;
            u64 b = 1ULL << (base + p);
            if (p > r && (rest & b)) take |= b;
            else if (jk && !use && !(held & b)) use = 1;
            else ok = 0;
        }
        if (ok && std_exists(rest ^ take, jk - use, melds - 1, pair, held)) return 1;
    }
    return 0;
}

int eval_std_exists(u64 m, int jk, int melds, int pair, u64 held) { return std_exists(m, jk, melds, pair, held); }

/* ---------------------------------------------------------------- special forms (R26.2-5) */
static inline u64 row_of(u64 h, int s) { return (h >> (13 * s)) & ROW; }

static int special_exists(u64 h) {
    u64 real = h & REAL;
    int jk = (h & JK_BIT) != 0;
    u64 r0 = row_of(real, 0), r1 = row_of(real, 1), r2 = row_of(real, 2), r3 = row_of(real, 3);
    u64 all4 = r0 & r1 & r2 & r3, col = r0 | r1 | r2 | r3;
    if (!jk && !(r0 ^ r1 ^ r2 ^ r3) && !all4) return 1; /* four pairs (crown pairs are four pairs) */
    if (pc64(col) == 2 && all4 && (jk ? pc64(all4) == 1 : pc64(all4) == 2)) return 1; /* two quads */
    for (int s = 0; s < 4; s++) {
        if (real & ~SUITM[s]) continue;
        u64 row = row_of(real, s);
        if (!jk && row == 0x1FC1ULL) return 1; /* royal: A 7 8 9 T J Q K */
        for (int st = 0; st <= 5; st++) {
            u64 run = 0xFFULL << st;
            if (!(row & ~run) && pc64(run & ~row) == jk) return 1;
        }
        return 0;
    }
    return 0;
}

/* The royal straight is the one form where a card (its A) may have no neighbour. */
static inline int is_royal(u64 hand) {
    for (int s = 0; s < 4; s++)
        if (hand == 0x1FC1ULL << (13 * s)) return 1;
    return 0;
}

int eval_is_win(u64 hand, u64 meld) {
    u64 real = hand & REAL;
    int jk = (hand & JK_BIT) != 0;
    if ((real & ~neighbours(real)) != 0) return !meld && is_royal(hand); /* a lone card is in no group */
    if (meld) return std_exists(real, jk, 1, 1, real | meld);
    return std_exists(real, jk, 2, 1, real) || special_exists(hand);
}

/* ---------------------------------------------------------------- readings (R28) */
typedef struct {
    reading_t *out;
    int n, cap;
    u64 held;
    u64 stack[4];
    int depth;
} lister_t;

static void emit(lister_t *L, int form, int joker_as, const u64 *groups, int ng) {
    if (L->n >= L->cap) return;
    reading_t *rd = &L->out[L->n++];
    rd->form = form;
    rd->joker_as = joker_as;
    rd->ngroups = ng;
    for (int i = 0; i < ng; i++) rd->groups[i] = groups[i];
}

static void std_list(lister_t *L, u64 m, int jk, int melds, int pair, int joker_as) {
    if (!m) {
        if (!jk && !melds && !pair) emit(L, F_STANDARD, joker_as, L->stack, L->depth);
        return;
    }
    int c = ctz64(m);
    u64 cb = 1ULL << c, rest = m & (m - 1);
    int r = c % 13, base = c - r;
    u64 mates = rest & RANKM[r];
    u64 held = L->held;
#define PUSH(g, call)                  \
    do {                               \
        L->stack[L->depth++] = (g);    \
        call;                          \
        L->depth--;                    \
    } while (0)
    if (pair)
        for (u64 t = mates; t; t &= t - 1) PUSH(cb | (t & -t), std_list(L, rest ^ (t & -t), jk, melds, 0, joker_as));
    if (!melds) return;
    for (u64 t = mates; t; t &= t - 1) {
        u64 b = t & -t;
        for (u64 t2 = t & (t - 1); t2; t2 &= t2 - 1)
            PUSH(cb | b | (t2 & -t2), std_list(L, rest ^ b ^ (t2 & -t2), jk, melds - 1, pair, joker_as));
        if (jk)
            for (u64 f = RANKM[r] & ~held; f; f &= f - 1)
                PUSH(cb | b | JK_BIT, std_list(L, rest ^ b, 0, melds - 1, pair, ctz64(f)));
    }
    for (int st = r - 2; st <= r; st++) {
        if (st < 0 || st > 10) continue;
        int use = -1, ok = 1;
        u64 take = 0;
        for (int p = st; p < st + 3 && ok; p++) {
            if (p == r) continue;
            u64 b = 1ULL << (base + p);
            if (p > r && (rest & b)) take |= b;
            else if (jk && use < 0 && !(held & b)) use = base + p;
            else ok = 0;
        }
        if (ok)
            PUSH(cb | take | (use >= 0 ? JK_BIT : 0),
                 std_list(L, rest ^ take, use >= 0 ? 0 : jk, melds - 1, pair, use >= 0 ? use : joker_as));
    }
#undef PUSH
}

static void special_list(lister_t *L, u64 h) {
    u64 real = h & REAL;
    int jk = (h & JK_BIT) != 0;
    u64 r0 = row_of(real, 0), r1 = row_of(real, 1), r2 = row_of(real, 2), r3 = row_of(real, 3);
    u64 all4 = r0 & r1 & r2 & r3, col = r0 | r1 | r2 | r3;
    u64 g[4];
    if (!jk && !(r0 ^ r1 ^ r2 ^ r3) && !all4) {
        int n = 0;
        for (u64 t = col; t; t &= t - 1) g[n++] = real & RANKM[ctz64(t)];
        emit(L, F_FOUR_PAIRS, -1, g, 4);
        int red = 0, black = 0;
        for (int i = 0; i < 4; i++) {
            if ((real & (CROWN_RED[i] | CROWN_BLACK[i])) == CROWN_RED[i]) red++;
            else if ((real & (CROWN_RED[i] | CROWN_BLACK[i])) == CROWN_BLACK[i]) black++;
        }
        if (red + black == 4) emit(L, F_CROWN, -1, g, 4);
    }
    if (pc64(col) == 2 && all4 && (jk ? pc64(all4) == 1 : pc64(all4) == 2)) {
        int ra = ctz64(col), rb = ctz64(col & (col - 1)), standin = -1;
        g[0] = real & RANKM[ra];
        g[1] = real & RANKM[rb];
        for (int i = 0; i < 2; i++)
            if (pc64(g[i]) == 3) {
                standin = ctz64(RANKM[i ? rb : ra] & ~g[i]);
                g[i] |= JK_BIT;
            }
        if (g[0] > g[1]) { u64 x = g[0]; g[0] = g[1]; g[1] = x; }
        emit(L, F_TWO_QUADS, standin, g, 2);
    }
    for (int s = 0; s < 4; s++) {
        if (real & ~SUITM[s]) continue;
        u64 row = row_of(real, s);
        g[0] = h;
        if (!jk && row == 0x1FC1ULL) emit(L, F_ROYAL, -1, g, 1);
        for (int st = 0; st <= 5; st++) {
            u64 run = 0xFFULL << st;
            if (!(row & ~run) && pc64(run & ~row) == jk)
                emit(L, F_PURE_STRAIGHT, jk ? 13 * s + ctz64(run & ~row) : -1, g, 1);
        }
        break;
    }
}

int eval_readings(u64 hand, u64 meld, reading_t *out, int cap) {
    lister_t L = {out, 0, cap, (hand | meld) & REAL, {0}, 0};
    u64 real = hand & REAL;
    int jk = (hand & JK_BIT) != 0;
    if ((real & ~neighbours(real)) != 0) {
        if (!meld && is_royal(hand)) special_list(&L, hand);
        return L.n;
    }
    if (meld) {
        std_list(&L, real, jk, 1, 1, -1);
    } else {
        std_list(&L, real, jk, 2, 1, -1);
        special_list(&L, hand);
    }
    return L.n;
}

/* ---------------------------------------------------------------- waits (R33) */
/* The standard-form search again, with one "hole": a card not held that the draw supplies. Each path
 * carries the set of cards the hole may be and the set of stand-ins the Joker may take; a leaf adds
 * every hole that leaves the Joker a different stand-in (R27). */
typedef struct {
    u64 held, out;
    int jk_can_be_hole; /* the Joker is not held, so the drawn card may be the Joker */
} waits_t;

static void std_waits(waits_t *W, u64 m, int jk, int melds, int pair, u64 hole, u64 jkset) {
    if (!m) {
        if (jk || melds || pair || !hole) return;
        W->out |= (jkset && pc64(jkset) < 2) ? hole & ~jkset : hole;
        return;
    }
    int c = ctz64(m);
    u64 rest = m & (m - 1);
    int r = c % 13, base = c - r;
    u64 mates = rest & RANKM[r], free_mates = RANKM[r] & ~W->held;
    int hole_open = !hole;
    /* a Joker in a group is the held one (jk) or, when none is held, the drawn card itself */
    int joker_ok = jk || (W->jk_can_be_hole && hole_open);
    u64 jk_hole = jk ? hole : JK_BIT;
    if (pair) {
        for (u64 t = mates; t; t &= t - 1) std_waits(W, rest ^ (t & -t), jk, melds, 0, hole, jkset);
        if (hole_open && free_mates) std_waits(W, rest, jk, melds, 0, free_mates, jkset);
    }
    if (!melds) return;
    for (u64 t = mates; t; t &= t - 1) {
        u64 b = t & -t;
        for (u64 t2 = t & (t - 1); t2; t2 &= t2 - 1) std_waits(W, rest ^ b ^ (t2 & -t2), jk, melds - 1, pair, hole, jkset);
        if (joker_ok && free_mates) std_waits(W, rest ^ b, 0, melds - 1, pair, jk_hole, free_mates);
        if (hole_open && free_mates) std_waits(W, rest ^ b, jk, melds - 1, pair, free_mates, jkset);
    }
    if (jk && hole_open && pc64(free_mates) >= 2) std_waits(W, rest, 0, melds - 1, pair, free_mates, free_mates);
    for (int st = r - 2; st <= r; st++) {
        if (st < 0 || st > 10) continue;
        u64 take = 0, open[2];
        int nopen = 0, ok = 1;
        for (int p = st; p < st + 3 && ok; p++) {
            if (p == r) continue;
            u64 b = 1ULL << (base + p);
            if (p > r && (rest & b)) take |= b;
            else if (!(W->held & b)) open[nopen++] = b;
            else ok = 0;
        }
        if (!ok) continue;
        u64 rm = rest ^ take;
        if (nopen == 0) std_waits(W, rm, jk, melds - 1, pair, hole, jkset);
        else if (nopen == 1) {
            if (joker_ok) std_waits(W, rm, 0, melds - 1, pair, jk_hole, open[0]);
            if (hole_open) std_waits(W, rm, jk, melds - 1, pair, open[0], jkset);
        } else if (jk && hole_open) {
            std_waits(W, rm, 0, melds - 1, pair, open[0], open[1]);
            std_waits(W, rm, 0, melds - 1, pair, open[1], open[0]);
        }
    }
}

u64 eval_waits(u64 hand, u64 meld) {
    u64 real = hand & REAL, held = real | (meld & REAL);
    int jk = (hand & JK_BIT) != 0;
    waits_t W = {held, 0, !jk};
    /* every card of a winning hand has a partner, and one new card can rescue one lone card */
    if (pc64(real & ~neighbours(real)) <= 1) std_waits(&W, real, jk, meld ? 1 : 2, 1, 0, 0);
    if (!meld) {
        u64 r0 = row_of(real, 0), r1 = row_of(real, 1), r2 = row_of(real, 2), r3 = row_of(real, 3);
        u64 col = r0 | r1 | r2 | r3, odd = r0 ^ r1 ^ r2 ^ r3;
        /* four pairs (and crown pairs): three pairs and a single wait on the single's rank */
        if (!jk && pc64(col) == 4 && pc64(odd) == 1) W.out |= RANKM[ctz64(odd)] & ~held;
        /* two quads and straights: few cards can complete them; check those directly */
        u64 cand = 0;
        for (int s = 0; s < 4; s++)
            if (!(real & ~SUITM[s])) cand |= SUITM[s];
        if (pc64(col) <= 2)
            for (u64 t = col; t; t &= t - 1) cand |= RANKM[ctz64(t)];
        for (u64 t = cand & ~held & ~W.out; t; t &= t - 1)
            if (eval_is_win(hand | (t & -t), 0)) W.out |= t & -t;
    }
    if (!jk && !meld && !(W.out & JK_BIT) && special_exists(hand | JK_BIT)) W.out |= JK_BIT;
    return W.out;
}

/* ---------------------------------------------------------------- distance to win */
/* Exact branch and bound (HAND_EVAL_NOTES.md): maximise |W & H| over winning concealed W whose other
 * cards are unseen. Each held card, lowest first, is dropped or covered by a group containing it;
 * draws for pairs/triplets are counted per rank (suits are interchangeable there) and checked for
 * supply at the leaves, sequence draws are concrete cards. Slots left open at a leaf are filled
 * with groups made only of drawn cards. */
typedef struct {
    u64 H, av, E;
    int jk_held, jk_unseen, best;
    u64 wm;      /* real cards of W so far */
    u64 blocked; /* stand-in of a Joker in a sequence: not in W */
    int dem[13]; /* drawn cards per rank for pairs / triplets */
    int jk_rank; /* rank of the triplet holding the Joker, or -1 */
    int jk_used;
    int ncomp;
    u64 comp[8]; /* components of the held cards (see cover_bound) */
    int goal;    /* stop searching once best reaches this overlap (a yes/no question) */
    int collect; /* 1: visit every W of overlap >= best and OR its drawn cards into acc (acceptance) */
    u64 acc, leafacc;
} dist_t;

static inline int supply(const dist_t *d, int r) { return pc64(d->av & RANKM[r] & ~d->wm & ~d->blocked); }

static int leaf_ok(const dist_t *d) {
    if (d->jk_held && !d->jk_used) return 0;
    for (int r = 0; r < 13; r++)
        if (d->dem[r] && supply(d, r) < d->dem[r]) return 0;
    if (d->jk_rank >= 0 && pc64((d->wm | d->E) & RANKM[d->jk_rank]) + d->dem[d->jk_rank] > 3) return 0;
    return 1;
}

/* Fill open slots with groups of drawn cards only (exact, tiny search). */
static u64 drawn_cards(const dist_t *d) {
    u64 m = d->wm & ~d->H;
    for (int r = 0; r < 13; r++)
        if (d->dem[r]) m |= d->av & RANKM[r] & ~d->wm & ~d->blocked; /* any spare card of the rank may be drawn */
    if (d->jk_used && !d->jk_held) m |= JK_BIT;
    return m;
}

static int fill(dist_t *d, int melds, int pair) {
    if (!melds && !pair) {
        if (!leaf_ok(d)) return 0;
        if (d->collect) d->leafacc |= drawn_cards(d);
        return 1;
    }
    int any = 0;
    if (pair) {
        for (int r = 0; r < 13; r++) {
            if (supply(d, r) - d->dem[r] < 2) continue;
            d->dem[r] += 2;
            int ok = fill(d, melds, 0);
            d->dem[r] -= 2;
            if (ok) { any = 1; if (!d->collect) return 1; }
        }
        return any;
    }
    int jkok = !d->jk_used && (d->jk_held || d->jk_unseen);
    for (int r = 0; r < 13; r++) {
        int spare = supply(d, r) - d->dem[r];
        for (int k = 3; k >= 2; k--) {
            if (spare < k || (k == 2 && !jkok)) continue;
            d->dem[r] += k;
            if (k == 2) { d->jk_used = 1; d->jk_rank = r; }
            int ok = fill(d, melds - 1, 0);
            if (k == 2) { d->jk_used = 0; d->jk_rank = -1; }
            d->dem[r] -= k;
            if (ok) { any = 1; if (!d->collect) return 1; }
        }
    }
    u64 free = d->av & ~d->wm & ~d->blocked;
    for (int s = 0; s < 4; s++)
        for (int st = 0; st <= 10; st++) {
            u64 run = 7ULL << (13 * s + st);
            u64 have = run & free;
            int n = pc64(have);
            if (n == 3 || (n == 2 && jkok)) {
                u64 miss = run & ~have;
                if (n == 2 && (miss & (d->wm | d->E))) continue;
                u64 wm0 = d->wm, bl0 = d->blocked;
                d->wm |= have;
                if (n == 2) { d->blocked = miss; d->jk_used = 1; }
                int ok = fill(d, melds - 1, 0);
                if (n == 2) d->jk_used = 0;
                d->wm = wm0;
                d->blocked = bl0;
                if (ok) { any = 1; if (!d->collect) return 1; }
            }
        }
    return any;
}

static void dfs(dist_t *d, u64 rem, int melds, int pair, int ov);

/* Place a sequence containing lowest card c (rank r) starting at st; pos = chosen option per slot. */
static void seq_variants(dist_t *d, u64 rest, int c, int st, int melds, int pair, int ov) {
    int r = c % 13, base = c - r;
    int slots[2], ns = 0;
    for (int p = st; p < st + 3; p++)
        if (p != r) slots[ns++] = base + p;
    int jkok = !d->jk_used && (d->jk_held || d->jk_unseen);
    /* option codes per slot: 0 real held, 1 draw, 2 joker */
    for (int o0 = 0; o0 < 3; o0++)
        for (int o1 = 0; o1 < 3; o1++) {
            int opts[2] = {o0, o1};
            if (o0 == 2 && o1 == 2) continue;
            int usejk = (o0 == 2 || o1 == 2);
            if (usejk && !jkok) continue;
            u64 reals = 0, draws = 0, forced_drop = 0, standin = 0;
            int ok = 1;
            for (int i = 0; i < 2 && ok; i++) {
                u64 b = 1ULL << slots[i];
                int rk = slots[i] % 13;
                switch (opts[i]) {
                case 0:
                    if (rest & b) reals |= b; else ok = 0;
                    break;
                case 1:
                    if (!(d->av & b & ~d->wm & ~d->blocked) || supply(d, rk) - 1 < d->dem[rk]) ok = 0;
                    else draws |= b;
                    break;
                default:
                    if ((d->wm | d->E) & b) ok = 0;
                    else {
                        standin = b;
                        if (rest & b) forced_drop = b; /* a held card the Joker replaces leaves W */
                    }
                }
            }
            if (!ok) continue;
            u64 wm0 = d->wm, bl0 = d->blocked;
            d->wm |= (1ULL << c) | reals | draws;
            if (usejk) { d->blocked = standin; d->jk_used = 1; }
            dfs(d, rest & ~reals & ~forced_drop, melds - 1, pair, ov + 1 + pc64(reals));
            if (usejk) d->jk_used = 0;
            d->wm = wm0;
            d->blocked = bl0;
        }
}

/* Upper bound on held cards still coverable: a group's held cards lie in one component of the
 * "rank-mate or same suit within two" graph of the hand, and a slot covers at most 3 of them. */
static void find_components(dist_t *d, u64 h) {
    d->ncomp = 0;
    while (h && d->ncomp < 8) {
        u64 comp = h & -h, prev = 0;
        while (comp != prev) {
            prev = comp;
            comp |= neighbours(comp) & h;
        }
        d->comp[d->ncomp++] = comp;
        h &= ~comp;
    }
}

static int cover_bound(const dist_t *d, u64 rem, int slots) {
    int sizes[8], total = 0;
    for (int i = 0; i < d->ncomp; i++) sizes[i] = pc64(rem & d->comp[i]);
    for (int k = 0; k < slots; k++) {
        int bi = 0;
        for (int i = 1; i < d->ncomp; i++)
            if (sizes[i] > sizes[bi]) bi = i;
        if (d->ncomp == 0 || sizes[bi] <= 0) break;
        int t = sizes[bi] < 3 ? sizes[bi] : 3;
        total += t;
        sizes[bi] -= t;
    }
    return total;
}

static void dfs(dist_t *d, u64 rem, int melds, int pair, int ov) {
    if (d->best >= d->goal) return;
    int jk_pending = d->jk_held && !d->jk_used;
    if (jk_pending && !melds) return;
    int cap = 3 * melds + 2 * pair - jk_pending;
    int n = pc64(rem);
    int floor = d->best - d->collect; /* collecting, ties with best must be visited too */
    if (ov + (n < cap ? n : cap) <= floor) return;
    if (rem && ov + cover_bound(d, rem, melds + pair) <= floor) return;
    if (!rem || (!melds && !pair)) {
        if (!d->collect) {
            if (fill(d, melds, pair)) d->best = ov;
        } else if (ov >= d->best) {
            d->leafacc = 0;
            if (fill(d, melds, pair)) {
                d->acc = ov > d->best ? d->leafacc : d->acc | d->leafacc;
                d->best = ov;
            }
        }
        return;
    }
    int c = ctz64(rem);
    u64 cb = 1ULL << c, rest = rem & (rem - 1);
    int r = c % 13;
    u64 mates = rest & RANKM[r];
    int jkok = !d->jk_used && (d->jk_held || d->jk_unseen);
    if (melds) {
        for (u64 t = mates; t; t &= t - 1) {
            u64 b = t & -t;
            for (u64 t2 = t & (t - 1); t2; t2 &= t2 - 1) {
                u64 b2 = t2 & -t2;
                d->wm |= cb | b | b2;
                dfs(d, rest ^ b ^ b2, melds - 1, pair, ov + 3);
                d->wm &= ~(cb | b | b2);
            }
        }
        for (int st = r - 2; st <= r; st++)
            if (st >= 0 && st <= 10) seq_variants(d, rest, c, st, melds, pair, ov);
        for (u64 t = mates; t; t &= t - 1) {
            u64 b = t & -t;
            d->wm |= cb | b;
            if (supply(d, r) > d->dem[r]) {
                d->dem[r]++;
                dfs(d, rest ^ b, melds - 1, pair, ov + 2);
                d->dem[r]--;
            }
            if (jkok) {
                d->jk_used = 1; d->jk_rank = r;
                dfs(d, rest ^ b, melds - 1, pair, ov + 2);
                d->jk_used = 0; d->jk_rank = -1;
            }
            d->wm &= ~(cb | b);
        }
        d->wm |= cb;
        int spare = supply(d, r) - d->dem[r];
        if (spare >= 2) {
            d->dem[r] += 2;
            dfs(d, rest, melds - 1, pair, ov + 1);
            d->dem[r] -= 2;
        }
        if (jkok && spare >= 1) {
            d->dem[r]++;
            d->jk_used = 1; d->jk_rank = r;
            dfs(d, rest, melds - 1, pair, ov + 1);
            d->jk_used = 0; d->jk_rank = -1;
            d->dem[r]--;
        }
        d->wm &= ~cb;
    }
    if (pair) {
        for (u64 t = mates; t; t &= t - 1) {
            u64 b = t & -t;
            d->wm |= cb | b;
            dfs(d, rest ^ b, melds, 0, ov + 2);
            d->wm &= ~(cb | b);
        }
        if (supply(d, r) > d->dem[r]) {
            d->wm |= cb;
            d->dem[r]++;
            dfs(d, rest, melds, 0, ov + 1);
            d->dem[r]--;
            d->wm &= ~cb;
        }
    }
    dfs(d, rest, melds, pair, ov); /* c is not in W */
}

/* Special forms in closed form (concealed hands only). Returns the best overlap or -1. */
/* parts: 1 the forms that depend only on counts per rank (four pairs, two quads), 2 the card-specific
 * ones (crown pairs, royal and pure straights), 3 all */
static int special_overlap_parts(const dist_t *d, int parts) {
    u64 H = d->H, av = d->av;
    int jkh = d->jk_held, jku = d->jk_unseen;
    int best = -1;
    int held[13], can[13];
    for (int r = 0; r < 13; r++) {
        held[r] = pc64(H & RANKM[r]);
        can[r] = held[r] + pc64(av & RANKM[r]);
    }
    if (!jkh) {
        /* four pairs: the four best ranks that can still make a pair */
        int g[13], n = 0;
        if (parts & 1)
        for (int r = 0; r < 13; r++)
            if (can[r] >= 2) g[n++] = held[r] < 2 ? held[r] : 2;
        if ((parts & 1) && n >= 4) {
            for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < n; j++)
                    if (g[j] > g[i]) { int x = g[i]; g[i] = g[j]; g[j] = x; }
            int s = g[0] + g[1] + g[2] + g[3];
            if (s > best) best = s;
        }
        /* crown pairs and royal straights: fixed card sets */
        for (int k = 0; k < 16 && (parts & 2); k++) {
            u64 w = 0;
            for (int i = 0; i < 4; i++) w |= (k >> i & 1) ? CROWN_RED[i] : CROWN_BLACK[i];
            if (!(w & ~H & ~av) && pc64(w & H) > best) best = pc64(w & H);
        }
        for (int s = 0; s < 4 && (parts & 2); s++) {
            u64 w = 0x1FC1ULL << (13 * s);
            if (!(w & ~H & ~av) && pc64(w & H) > best) best = pc64(w & H);
        }
    }
    /* two quads: ranks a < b; with a Joker one of them may be 3 real cards */
    for (int a = 0; a < 13 && (parts & 1); a++)
        for (int b = a + 1; b < 13; b++) {
            int full_a = can[a] == 4, full_b = can[b] == 4;
            if (!jkh && full_a && full_b && held[a] + held[b] > best) best = held[a] + held[b];
            if (jkh || jku) {
                for (int k = 0; k < 2; k++) {
                    int q = k ? b : a, t = k ? a : b; /* q full quad, t three real + Joker */
                    if (can[q] != 4 || can[t] < 3) continue;
                    int ov = held[q] + (held[t] < 3 ? held[t] : 3) + jkh;
                    if (ov > best) best = ov;
                }
            }
        }
    /* pure straights */
    for (int s = 0; s < 4 && (parts & 2); s++)
        for (int st = 0; st <= 5; st++) {
            u64 run = 0xFFULL << (13 * s + st);
            u64 missing_unavail = run & ~H & ~av;
            int h = pc64(run & H);
            if (!jkh && !missing_unavail && h > best) best = h;
            if ((jkh || jku) && pc64(missing_unavail) <= 1) {
                int ov = (h == 8 ? 7 : h) + jkh;
                if (ov > best) best = ov;
            }
        }
    return best;
}

static int special_overlap(const dist_t *d) { return special_overlap_parts(d, 3); }

/* The search behind eval_distance: best overlap found above floor (floor when none), stopping
 * early once it reaches goal. */
/* The search state of a hand: what is held, what may still be drawn, where the Joker is. */
static void dist_init(dist_t *d, u64 hand, u64 meld, u64 unseen, int floor, int goal) {
    memset(d, 0, sizeof *d);
    u64 held = hand | meld;
    d->H = hand & REAL;
    d->E = meld & REAL;
    d->av = unseen & REAL & ~held;
    d->jk_held = (hand & JK_BIT) != 0;
    d->jk_unseen = !d->jk_held && (unseen & JK_BIT) && !(meld & JK_BIT);
    d->jk_rank = -1;
    d->best = floor;
    d->goal = goal;
    find_components(d, d->H);
}

static int distance_search(u64 hand, u64 meld, u64 unseen, int floor, int goal) {
    dist_t d;
    dist_init(&d, hand, meld, unseen, floor, goal);
    if (!meld) {
        int sp = special_overlap(&d);
        if (sp > d.best) d.best = sp;
    }
    dfs(&d, d.H, meld ? 1 : 2, 1, d.jk_held);
    return d.best;
}

int eval_distance(u64 hand, u64 meld, u64 unseen) {
    int size = meld ? 5 : 8;
    int best = distance_search(hand, meld, unseen, -1, 99);
    return best < 0 ? UNREACHABLE : size - best;
}

int eval_distance_at_most(u64 hand, u64 meld, u64 unseen, int r) {
    int size = meld ? 5 : 8;
    if (r < 0) return 0;
    if (r >= size) r = size; /* any reachable hand */
    return distance_search(hand, meld, unseen, size - r - 1, size - r) >= size - r;
}

int eval_acceptance(u64 hand, u64 meld, u64 unseen, u64 pool, int dist) {
    int n = 0;
    for (u64 t = pool & ~(hand | meld); t; t &= t - 1) {
        u64 x = t & -t;
        n += eval_distance_at_most(hand | x, meld, unseen & ~x, dist - 1);
    }
    return n;
}

/* Acceptance in one search (issue 20): x raises the overlap by one exactly when some W of best overlap
 * draws x, so the acceptance set is the union of the drawn cards over every best W (rank demands stand
 * for any spare card of their rank). Tenpai hands read their waits; special forms are evaluated per
 * card in closed form; hands holding the Joker and pool cards that are not unseen are asked card by card
 * (eval_acceptance). */
int eval_acceptance_fast(u64 hand, u64 meld, u64 unseen, u64 pool, int dist) {
    u64 held = hand | meld;
    pool &= ~held;
    int size = meld ? 5 : 8;
    if (dist <= 0 || dist > size) return eval_acceptance(hand, meld, unseen, pool, dist);
    u64 odd = pool & ~(unseen & ~held);
    int n = odd ? eval_acceptance(hand, meld, unseen, odd, dist) : 0;
    pool &= ~odd;
    if (!pool) return n;
    if (dist == 1) return n + pc64(eval_waits(hand, meld) & pool);
    /* a held Joker: the union misses a few best completions (7 of 1.4M hands in the slow differential
     * test, all holding the Joker), so those hands are asked card by card until that is understood */
    if (hand & JK_BIT) return n + eval_acceptance(hand, meld, unseen, pool, dist);
    dist_t d;
    dist_init(&d, hand, meld, unseen, size - dist, 99);
    d.collect = 1;
    u64 sp_acc = 0;
    if (!meld && special_overlap(&d) >= d.best) {
        /* a special form of best overlap: x counts when the form with x held reaches best + 1 */
        dist_t e = d;
        int by_rank[13]; /* the per-rank forms see only counts: every x of a rank gives the same value */
        for (int r = 0; r < 13; r++) by_rank[r] = -2;
        for (u64 t = pool; t; t &= t - 1) {
            u64 x = t & -t;
            e.H = d.H | (x & REAL);
            e.av = d.av & ~x;
            e.jk_held = d.jk_held || x == JK_BIT;
            e.jk_unseen = d.jk_unseen && x != JK_BIT;
            if (x == JK_BIT) {
                if (special_overlap(&e) > d.best) sp_acc |= x;
                continue;
            }
            int r = ctz64(x) % 13;
            if (by_rank[r] == -2) by_rank[r] = special_overlap_parts(&e, 1);
            if (by_rank[r] > d.best || special_overlap_parts(&e, 2) > d.best) sp_acc |= x;
        }
    }
    dfs(&d, d.H, meld ? 1 : 2, 1, d.jk_held);
    return n + pc64((d.acc | sp_acc) & pool);
}
