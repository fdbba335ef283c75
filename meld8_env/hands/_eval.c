/* Meld8 hand evaluator: win check, readings, waits, exact distance to win. See _eval.h. */
#include "_eval.h"

#include <stddef.h>

u64 RANKM[13];
u64 NOT_K, NOT_QK;
static u64 SUITM[4];
#define RUN_START 0x3FF9FFCFFE7FFULL /* ranks A..J of every suit lane: where a run of three can start */
static u64 CROWN_RED[4], CROWN_BLACK[4]; /* pair masks of A J Q K in red / black */
static u64 CROWN_CARDS;                  /* every A, J, Q and K */

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
        CROWN_CARDS |= RANKM[r];
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
    /* a chosen hole already among the waits: every reading below adds a subset of it */
    if (hole && !(hole & ~W->out)) return;
    /* a card of m with no neighbour in m shares its group with no other held card, so the hole joins it (in a pair,
     * or in a meld beside the Joker): with the hole already placed, or with two such cards, the reading fails (the
     * bound below is looser than that and exact) */
    if (pc64(m & ~neighbours(m)) > !hole + jk) return;
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
 * cards are unseen. Each held card, lowest first (lone cards last), is dropped or covered by a group
 * containing it; draws for pairs/triplets are counted per rank (suits are interchangeable there) and
 * checked for supply at the leaves, sequence draws are concrete cards. Slots left open at a leaf are
 * filled with groups made only of drawn cards. eval_distance asks yes/no questions (is there a W of
 * overlap >= level?); the collecting search (acceptance) visits every W of the best overlap. Both place a
 * meld that still needs cards as an anchor (its held cards) and complete it at the leaf: the yes/no search
 * stops at the first completion, the collecting one ORs the drawn cards of every completion. */
typedef struct {
    u64 H, av, E;
    int jk_held, jk_unseen, best;
    u64 wm;      /* real cards of W so far */
    u64 blocked; /* stand-in of a Joker in a sequence: not in W */
    int8_t dem[16]; /* drawn cards per rank for pairs / triplets (16: read eight at a time by dem_ranks) */
    int jk_rank; /* rank of the triplet holding the Joker, or -1 */
    int jk_used;
    int ncomp;
    int goal;    /* stop searching once best reaches this overlap (a yes/no question) */
    int collect; /* 1: visit every W of overlap >= best and OR its drawn cards into acc (acceptance) */
    u64 acc, leafacc;
    u64 leafheld; /* yes/no: the held cards of the witness W (leafacc: its drawn cards) */
    eval_witness_t *wl; /* collecting (NULL: none): each leaf's held cards and the drawn cards of its completions */
    u64 want; /* collecting: only drawn cards of want count; skip subtrees that cannot add one (0: all count) */
    u64 fill_pair, fill_meld; /* cards that some pair / meld of drawn cards only can contain (a superset) */
    int fill_ready;           /* fill_pair / fill_meld computed (fill_sets, on first use) */
    u64 lone; /* held cards with no rank-mate or suit neighbour within two in H: searched last */
    int no_shapes; /* shapes H lacks (see shape_bound; 0: test every node) */
    /* yes/no search: a held card every W asked for must hold (0: none), placed first and never dropped. Exact where
     * no W of the other held cards reaches the goal (acceptance_per_card: x on a hand of exact distance) */
    u64 force;
    /* collecting over the discards of a hand (collect_discards): xacc[x] |= the drawn cards of every best W that
     * leaves out x, for each x of xset (xacc NULL: not kept) */
    u64 *xacc, xset, xavoid; /* xavoid: the cards of xset some best W left out */
    /* search_levels: with collect_levels, collect every W of each level from collect_from up instead of asking yes /
     * no; found: a collecting search reached its level */
    int collect_levels, collect_from, found;
    /* yes/no search: anchors, the held cards (one or two) of a meld whose other cards are chosen at the leaf */
    int nanch;
    /* discard_levels' search (lev 1 with want set; 0: off): need, the cards no W of the level searched found so far
     * leaves out (a subtree whose W holds all of them tells nothing and is cut; once none is left the search unwinds);
     * keep, the cards asked about: the hand's own search starts need at every held card (no cut may hide the
     * level's first W) and narrows it to keep at that first W */
    int lev;
    u64 need, keep;
    /* not cleared by dist_init_core (written before they are read) */
    u64 comp[8]; /* components of two cards or more of the held cards (see cover_bound) */
    u64 anch[2];
} dist_t;

/* a yes/no search found its answer: every caller unwinds at once (state restored first; collecting never stops) */
#define DONE(d) ((d)->best >= (d)->goal)

static inline int supply(const dist_t *d, int r) { return pc64(d->av & RANKM[r] & ~d->wm & ~d->blocked); }

/* a rank's demanded draws still have the cards; the Joker's triplet still leaves its stand-in a free suit */
static int rank_ok(const dist_t *d, int r) { return !d->dem[r] || supply(d, r) >= d->dem[r]; }

static int jk_rank_ok(const dist_t *d) {
    return d->jk_rank < 0 || pc64((d->wm | d->E) & RANKM[d->jk_rank]) + d->dem[d->jk_rank] <= 3;
}

/* The ranks with demanded draws (bit r: dem[r] != 0), from the 16 bytes of dem eight at a time (nonzero_bytes): a
 * leaf checks only those instead of all 13 (the collecting search's leaves, where this was about 7 % of a rollout's
 * instructions). */
static inline u64 dem_ranks(const dist_t *d) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    u64 lo, hi; /* byte r of the words is dem[r] */
    memcpy(&lo, d->dem, 8);
    memcpy(&hi, d->dem + 8, 8);
    return nonzero_bytes(lo) | nonzero_bytes(hi) << 8;
#else
    u64 m = 0;
    for (int r = 0; r < 13; r++) m |= (u64)(d->dem[r] != 0) << r;
    return m;
#endif
}

/* every card of the ranks of the 13-bit mask r */
static inline u64 rank_cards(u64 r) { return r | r << 13 | r << 26 | r << 39; }

static int leaf_ok(const dist_t *d) {
    if (d->jk_held && !d->jk_used) return 0;
    for (u64 t = dem_ranks(d); t; t &= t - 1)
        if (!rank_ok(d, ctz64(t))) return 0;
    return jk_rank_ok(d);
}

/* Fill open slots with groups of drawn cards only (exact, tiny search). */
static u64 drawn_cards(const dist_t *d) {
    u64 m = d->wm & ~d->H;
    m |= d->av & rank_cards(dem_ranks(d)) & ~d->wm & ~d->blocked; /* any spare card of a demanded rank may be drawn */
    if (d->jk_used && !d->jk_held) m |= JK_BIT;
    return m;
}

/* The last open slot of a collecting leaf (one meld, or the pair), every completion at once: the same leaves
 * and drawn cards as the recursive fill below, with each completion's checks reduced to the ranks it
 * touches (a completion only adds cards to W, so ranks it does not touch keep their state). */
static int fill_last_collect(dist_t *d, int melds) {
    u64 demr = dem_ranks(d);
    for (u64 t = demr; t; t &= t - 1)
        if (!rank_ok(d, ctz64(t))) return 0; /* completions only lower supply: a short rank stays short */
    if (!jk_rank_ok(d)) return 0;
    int pending = d->jk_held && !d->jk_used;
    int jkok = !d->jk_used && (d->jk_held || d->jk_unseen);
    u64 F = d->av & ~d->wm & ~d->blocked, dr = rank_cards(demr);
    u64 jbit = (d->jk_used && !d->jk_held) ? JK_BIT : 0;
    u64 base = (d->wm & ~d->H) | (F & dr) | jbit; /* drawn cards of every rank completion */
    u64 acc = 0;
    int any = 0;
    for (int r = 0; r < 13; r++) {
        int spare = supply(d, r) - d->dem[r];
        int held_rank = pc64((d->wm | d->E) & RANKM[r]);
        if (!melds) { /* the pair: two drawn cards of rank r */
            if (pending || spare < 2) continue;
            if (r == d->jk_rank && held_rank + d->dem[r] + 2 > 3) continue;
            any = 1;
            acc |= base | (F & RANKM[r]);
            continue;
        }
        if (!pending && spare >= 3 && !(r == d->jk_rank && held_rank + d->dem[r] + 3 > 3)) {
            any = 1;
            acc |= base | (F & RANKM[r]);
        }
        if (jkok && spare >= 2 && held_rank + d->dem[r] + 2 <= 3) { /* two drawn and the Joker */
            any = 1;
            acc |= base | (F & RANKM[r]) | (d->jk_held ? 0 : JK_BIT);
        }
    }
    if (melds) {
        for (int s = 0; s < 4; s++)
            for (int st = 0; st <= 10; st++) {
                u64 run = 7ULL << (13 * s + st);
                for (int v = -1; v < 3; v++) { /* as in fill: three drawn, or the Joker as one of them */
                    u64 miss = v < 0 ? 0 : 1ULL << (13 * s + st + v);
                    if (v < 0 ? pending : (!jkok || (miss & (d->wm | d->E)))) continue;
                    u64 have = run & ~miss;
                    if ((have & F) != have) continue;
                    u64 wm0 = d->wm, bl0 = d->blocked;
                    d->wm |= have;
                    if (miss) d->blocked = miss;
                    int ok = jk_rank_ok(d);
                    for (u64 t = run; t && ok; t &= t - 1) ok = rank_ok(d, ctz64(t) % 13);
                    if (ok) {
                        u64 F2 = d->av & ~d->wm & ~d->blocked;
                        any = 1;
                        acc |= (d->wm & ~d->H) | (F2 & dr) | (miss ? (d->jk_held ? 0 : JK_BIT) : jbit);
                    }
                    d->wm = wm0;
                    d->blocked = bl0;
                }
            }
    }
    d->leafacc |= acc;
    return any;
}

static int fill(dist_t *d, int melds, int pair) {
    if (d->collect && melds + pair == 1) return fill_last_collect(d, melds);
    if (!melds && !pair) {
        if (!leaf_ok(d)) return 0;
        /* collecting: OR in this W's drawn cards; yes/no: the witness's drawn cards (acceptance_per_card reads them) */
        if (d->collect) d->leafacc |= drawn_cards(d);
        else {
            d->leafacc = drawn_cards(d);
            d->leafheld = d->wm & d->H;
        }
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
            /* three drawn cards, or the Joker as one card of the run (not in W or E) and the other two drawn */
            for (int v = -1; v < 3; v++) {
                u64 miss = v < 0 ? 0 : 1ULL << (13 * s + st + v);
                if (v >= 0 && (!jkok || (miss & (d->wm | d->E)))) continue;
                u64 have = run & ~miss;
                if ((have & free) != have) continue;
                u64 wm0 = d->wm, bl0 = d->blocked;
                d->wm |= have;
                if (miss) { d->blocked = miss; d->jk_used = 1; }
                int ok = fill(d, melds - 1, 0);
                if (miss) d->jk_used = 0;
                d->wm = wm0;
                d->blocked = bl0;
                if (ok) { any = 1; if (!d->collect) return 1; }
            }
        }
    return any;
}

static void dfs_node(dist_t *d, u64 rem, int melds, int pair, int ov);
static void fill_sets(dist_t *d);

/* A leaf with anchors: complete anchor i and the ones after it as the search would have when it placed them, then
 * fill the open slots (yes/no: up to the first W; collecting: every W, fill ORs each one's drawn cards into
 * leafacc). A lone card takes a triplet with two drawn cards or a drawn card and the Joker,
 * or a run with two drawn cards or one and the Joker; two rank-mates a drawn mate or the Joker; two cards of a
 * suit the missing card of a run, drawn or the Joker. The Joker's stand-in is in neither W nor E. Every check
 * is on the final W (supply only falls as W grows), so deciding here gives the answers placing them would. */
static int fill_anchors(dist_t *d, int i, int melds, int pair) {
    if (i >= d->nanch || i >= 2) return fill(d, melds, pair); /* i >= 2 never holds (one anchor per meld): it tells gcc's -Warray-bounds so */
    u64 g = d->anch[i];
    int c = ctz64(g), r = c % 13, base = c - r;
    int jkok = !d->jk_used && (d->jk_held || d->jk_unseen), ok = 0, any = 0;
    u64 b = g & (g - 1); /* the second held card, if any */
    if (!b || (RANKM[r] & b)) {
        int spare = supply(d, r) - d->dem[r], need = b ? 1 : 2;
        if (spare >= need) {
            d->dem[r] += need;
            ok = fill_anchors(d, i + 1, melds, pair);
            d->dem[r] -= need;
            if (ok) { if (!d->collect) return 1; any = 1; }
        }
        if (jkok && spare >= need - 1) {
            d->dem[r] += need - 1;
            d->jk_used = 1; d->jk_rank = r;
            ok = fill_anchors(d, i + 1, melds, pair);
            d->jk_used = 0; d->jk_rank = -1;
            d->dem[r] -= need - 1;
            if (ok) { if (!d->collect) return 1; any = 1; }
        }
        if (b) return any;
    }
    int rb = b ? ctz64(b) - base : r;
    for (int st = rb - 2; st <= r; st++) {
        if (st < 0 || st > 10) continue;
        u64 slot[2];
        int ns = 0;
        for (int p = st; p < st + 3; p++)
            if (p != r && p != rb) slot[ns++] = 1ULL << (base + p);
        u64 free = d->av & ~d->wm & ~d->blocked, taken = d->wm | d->E;
        int opt[2] = {1, 1}; /* with a second held card one slot is left */
        for (int k = 0; k < ns; k++) {
            u64 x = slot[k];
            int rk = ctz64(x) % 13;
            opt[k] = ((free & x) && supply(d, rk) - 1 >= d->dem[rk]) | ((jkok && !(taken & x)) ? 2 : 0);
        }
        if (!opt[0] || !opt[1]) continue;
        for (int o0 = 1; o0 <= 2; o0++) {
            if (!(opt[0] & o0)) continue;
            for (int o1 = 1; o1 <= (ns == 2 ? 2 : 1); o1++) {
                if (!(opt[1] & o1) || (o0 == 2 && o1 == 2)) continue;
                u64 draws = (o0 == 1 ? slot[0] : 0) | (ns == 2 && o1 == 1 ? slot[1] : 0);
                u64 standin = (o0 == 2 ? slot[0] : 0) | (ns == 2 && o1 == 2 ? slot[1] : 0);
                u64 wm0 = d->wm, bl0 = d->blocked;
                d->wm |= draws;
                if (standin) { d->blocked = standin; d->jk_used = 1; }
                ok = fill_anchors(d, i + 1, melds, pair);
                if (standin) d->jk_used = 0;
                d->wm = wm0;
                d->blocked = bl0;
                if (ok) { if (!d->collect) return 1; any = 1; }
            }
        }
    }
    return any;
}

/* The search's entry at every node: the cheapest cut-offs inline at the call site, the node itself below. */
static inline void dfs(dist_t *d, u64 rem, int melds, int pair, int ov) {
    if (DONE(d)) return;
    int jk_pending = d->jk_held && !d->jk_used && !d->nanch; /* an anchor's meld may still take the Joker */
    if (jk_pending && !melds) return;
    int cap = 3 * melds + 2 * pair - jk_pending, n = pc64(rem);
    if (ov + (n < cap ? n : cap) <= d->best - d->collect) return;
    dfs_node(d, rem, melds, pair, ov);
}

/* Upper bound on held cards still coverable: a group's held cards lie in one component of the
 * "rank-mate or same suit within two" graph of the hand, and a slot covers at most 3 of them. comp holds
 * the components of two cards or more; the lone cards (d->lone) are the rest. */
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

/* Upper bound on held cards the open slots can still cover, by the shape of what is left: three held cards
 * in one meld form a complete meld (a triplet or a run of three) inside rem, two in the pair a rank pair;
 * a held Joker still to place takes one card of a meld. no_shapes: which of the two H itself lacks (bit 0
 * a complete meld, bit 1 a rank pair); a subset of H lacks them too, so the test is skipped. */
#define NO_MELD3 1
#define NO_PAIR2 2
static inline int shape_bound(u64 rem, int melds, int pair, int jk_pending, int no_shapes) {
    u64 a = rem & ROW, b = (rem >> 13) & ROW, c = (rem >> 26) & ROW, e = (rem >> 39) & ROW;
    int m3 = melds && !(no_shapes & NO_MELD3) &&
             (((a & b & (c | e)) | (c & e & (a | b))) || (rem & (rem >> 1) & (rem >> 2) & RUN_START));
    int pair_cap = pair ? (!(no_shapes & NO_PAIR2) && ((a & b) | (c & e) | ((a | b) & (c | e))) ? 2 : 1) : 0;
    return melds * (m3 ? 3 : 2) - (m3 && jk_pending) + pair_cap;
}

static int cover_bound(const dist_t *d, u64 rem, int slots) {
    /* lone cards are components of one card each, counted together */
    int sizes[8], total = 0, nlone = pc64(rem & d->lone);
    for (int i = 0; i < d->ncomp; i++) sizes[i] = pc64(rem & d->comp[i]);
    for (int k = 0; k < slots; k++) {
        int bi = 0;
        for (int i = 1; i < d->ncomp; i++)
            if (sizes[i] > sizes[bi]) bi = i;
        if (d->ncomp == 0 || sizes[bi] <= 0) {
            int t = slots - k < nlone ? slots - k : nlone;
            return total + t;
        }
        int t = sizes[bi] < 3 ? sizes[bi] : 3;
        total += t;
        sizes[bi] -= t;
    }
    return total;
}

/* A meld that still needs cards, placed by its held cards g as an anchor (fill_anchors completes it at the leaf);
 * always inlined: the hot search node, measured the same instructions as the code written out (423.3k per rollout). */
static inline __attribute__((always_inline)) void place_anchor(dist_t *d, u64 rest, u64 g, int melds, int pair, int ov) {
    d->wm |= g;
    d->anch[d->nanch++] = g;
    dfs(d, rest, melds - 1, pair, ov);
    d->nanch--;
    d->wm &= ~g;
}

/* A search node, lowest card c (yes/no and collecting alike): every group c can be in, with every meld that still
 * needs cards placed as an anchor (its held cards only; fill_anchors completes it at the leaf) instead of one
 * branch per completion, and c left out. Only a run of three held cards is placed whole; with the lone cards
 * last, a run through c that is complete in H starts at c. Until session 22 the collecting search branched on
 * every completion here (a card, the Joker, a drawn rank-mate) and searched the rest of the hand below each: the
 * same W (tests/test_distance.py and the C bots' twin tests hold them equal), more work on the bots'
 * acceptance questions (bots_throughput's one-search rows: 178.7M -> 154.8M instructions). */
static void lowest_card_node(dist_t *d, u64 rest, int c, int melds, int pair, int ov) {
    int r = c % 13;
    u64 cb = 1ULL << c, mates = rest & RANKM[r];
    if (pair) /* the pair with a held rank-mate first: a witness is met sooner on most hands */
        for (u64 t = mates; t; t &= t - 1) {
            u64 b = t & -t;
            d->wm |= cb | b;
            dfs(d, rest ^ b, melds, 0, ov + 2);
            d->wm &= ~(cb | b);
            if (DONE(d)) return;
        }
    if (melds) {
        for (u64 t = mates; t; t &= t - 1) /* triplets of held cards */
            for (u64 t2 = t & (t - 1); t2; t2 &= t2 - 1) {
                u64 g = cb | (t & -t) | (t2 & -t2);
                d->wm |= g;
                dfs(d, rest & ~g, melds - 1, pair, ov + 3);
                d->wm &= ~g;
                if (DONE(d)) return;
            }
        u64 run = cb | (cb << 1) | (cb << 2);
        if (r <= 10 && !(run & ~(rest | cb))) {
            d->wm |= run;
            dfs(d, rest & ~run, melds - 1, pair, ov + 3);
            d->wm &= ~run;
            if (DONE(d)) return;
        }
        /* c and one held card of a meld still short of one (a rank-mate, or the same suit within two ranks) */
        u64 two = mates | (rest & ((cb << 1) | (cb << 2)) & SUITM[c / 13]);
        for (u64 t = two; t; t &= t - 1) {
            u64 g = cb | (t & -t);
            place_anchor(d, rest & ~g, g, melds, pair, ov + 2);
            if (DONE(d)) return;
        }
        place_anchor(d, rest, cb, melds, pair, ov + 1); /* c alone in a meld */
        if (DONE(d)) return;
    }
    if (pair && supply(d, r) > d->dem[r]) { /* c in the pair with a drawn rank-mate */
        d->wm |= cb;
        d->dem[r]++;
        dfs(d, rest, melds, 0, ov + 1);
        d->dem[r]--;
        d->wm &= ~cb;
        if (DONE(d)) return;
    }
    dfs(d, rest, melds, pair, ov); /* c is not in W */
}

/* A yes/no node that places the forced card x first (d->force, see there): every group of W that can hold x, with
 * the held cards of rest on either side of it (x is not the lowest card, so the groups lowest_card_node leaves to lower
 * cards are tried here), and never the branch that leaves x out of W. After it the search goes on lowest card first
 * over what is left, which is complete for any set of held cards. */
static void forced_node(dist_t *d, u64 rest, int c, int melds, int pair, int ov) {
    int r = c % 13, base = c - r;
    u64 cb = 1ULL << c, mates = rest & RANKM[r];
    d->force = 0;
    if (pair)
        for (u64 t = mates; t && !DONE(d); t &= t - 1) {
            u64 b = t & -t;
            d->wm |= cb | b;
            dfs(d, rest ^ b, melds, 0, ov + 2);
            d->wm &= ~(cb | b);
        }
    if (melds) {
        for (u64 t = mates; t && !DONE(d); t &= t - 1) /* triplets of held cards */
            for (u64 t2 = t & (t - 1); t2 && !DONE(d); t2 &= t2 - 1) {
                u64 g = cb | (t & -t) | (t2 & -t2);
                d->wm |= g;
                dfs(d, rest & ~g, melds - 1, pair, ov + 3);
                d->wm &= ~g;
            }
        for (int st = r - 2; st <= r && !DONE(d); st++) { /* runs of three held cards through x */
            if (st < 0 || st > 10) continue;
            u64 run = 7ULL << (base + st);
            if (run & ~(rest | cb)) continue;
            d->wm |= run;
            dfs(d, rest & ~run, melds - 1, pair, ov + 3);
            d->wm &= ~run;
        }
        /* x and one held card of a meld still short of one: a rank-mate, or the same suit within two ranks */
        u64 near = ((cb << 1) | (cb << 2) | (cb >> 1) | (cb >> 2)) & SUITM[c / 13];
        for (u64 t = mates | (rest & near); t && !DONE(d); t &= t - 1) {
            u64 g = cb | (t & -t);
            place_anchor(d, rest & ~g, g, melds, pair, ov + 2);
        }
        if (!DONE(d)) place_anchor(d, rest, cb, melds, pair, ov + 1); /* x alone in a meld */
    }
    if (pair && !DONE(d) && supply(d, r) > d->dem[r]) { /* x in the pair with a drawn rank-mate */
        d->wm |= cb;
        d->dem[r]++;
        dfs(d, rest, melds, 0, ov + 1);
        d->dem[r]--;
        d->wm &= ~cb;
    }
    d->force = cb;
}

/* Collecting: can a W of overlap >= best still come out of the held cards rem placed in melds + pair slots
 * (over ov already covered)? An upper bound: each slot covers at most 3 held cards (2 the pair) of one
 * component. */
static int open_slot_ok(const dist_t *d, u64 rem, int melds, int pair, int ov) {
    int cap = 3 * melds + 2 * pair, n = pc64(rem);
    if (ov + (n < cap ? n : cap) < d->best) return 0;
    return ov + cover_bound(d, rem, melds + pair) >= d->best;
}

/* Collecting with want: can the subtree still add a wanted drawn card? (0: cut it) */
static inline int want_ok(dist_t *d, u64 rem, int melds, int pair, int ov) {
    /* the drawn cards a subtree can add: rank-mates and suit neighbours of the cards still to place,
     * spares of ranks already demanded (rank-mates of placed cards), the Joker, and what a slot left
     * open could be filled with */
    u64 placed = d->wm & d->H;
    u64 pot = (d->wm & ~d->H) | neighbours(rem) | rank_mates(placed) | JK_BIT;
    if (d->nanch) pot |= neighbours(d->anch[0] | (d->nanch > 1 ? d->anch[1] : 0)); /* an anchor's completions */
    /* a slot left to drawn cards only leaves the held cards of rem to the other slots: only when those can
     * still bring W to best may the subtree fill one (asked only when the rest of pot adds no card) */
    u64 need = d->want & ~d->acc;
    if (!(need & pot)) {
        if (!d->fill_ready) fill_sets(d);
        if (!(pair && (need & d->fill_pair) && open_slot_ok(d, rem, melds, 0, ov)) &&
            !(melds && (need & d->fill_meld) && open_slot_ok(d, rem, melds - 1, pair, ov)))
            return 0;
    }
    return 1;
}

static void dfs_node(dist_t *d, u64 rem, int melds, int pair, int ov) {
    if (d->want) { /* the two searches that cut subtrees by what their W can still tell (one test on the hot path) */
        if (d->lev) {
            if (!(d->need & ~d->wm)) return; /* every W below holds the cards still in question */
        } else if (!want_ok(d, rem, melds, pair, ov)) return;
    }
    int jk_pending = d->jk_held && !d->jk_used && !d->nanch;
    int floor = d->best - d->collect; /* collecting, ties with best must be visited too */
    if (rem && ov + shape_bound(rem, melds, pair, jk_pending, d->no_shapes) <= floor) return;
    if (rem && ov + cover_bound(d, rem, melds + pair) <= floor) return;
    if (!rem || (!melds && !pair)) {
        if (!d->collect) {
            if (fill_anchors(d, 0, melds, pair)) {
                if (!d->lev) d->best = ov;
                else {
                    if (!d->found) d->need &= d->keep; /* the level is reached: only the asked cards count now */
                    d->found = 1;
                    if (!(d->need &= d->wm)) d->best = d->goal; /* every discard answered: unwind */
                }
            }
        } else if (ov >= d->best) {
            d->leafacc = 0;
            if (fill_anchors(d, 0, melds, pair)) {
                d->acc = ov > d->best ? d->leafacc : d->acc | d->leafacc;
                d->best = ov;
                d->found = 1;
                if (d->wl && d->wl->n < EVAL_MAX_WITNESS) {
                    d->wl->held[d->wl->n] = d->wm & d->H;
                    d->wl->drawn[d->wl->n++] = d->leafacc;
                }
                if (d->xacc) {
                    d->xavoid |= d->xset & ~d->wm;
                    for (u64 t = d->xset & ~d->wm; t; t &= t - 1) d->xacc[ctz64(t)] |= d->leafacc;
                }
            }
        }
        return;
    }
    /* lone cards (no neighbour in H) last: each can only be a single with drawn cards, so deciding them at the
     * bottom keeps their interchangeable options from multiplying the search above. A lone card is nobody's
     * rank-mate or suit neighbour, so rest still holds no card that c could group with below it. */
    if (d->force & rem) {
        forced_node(d, rem & ~d->force, ctz64(d->force), melds, pair, ov);
        return;
    }
    u64 pick = rem & ~d->lone;
    int c = ctz64(pick ? pick : rem);
    u64 cb = 1ULL << c, rest = rem & ~cb;
    lowest_card_node(d, rest, c, melds, pair, ov);
}

/* Rank-count planes of a card set, 13-bit rank masks: ge[k] has bit r when rank r holds at least k + 1 cards. */
static inline void rank_planes(u64 s, u64 ge[4]) {
    u64 a = s & ROW, b = (s >> 13) & ROW, c = (s >> 26) & ROW, e = (s >> 39) & ROW;
    ge[0] = a | b | c | e;
    ge[1] = (a & b) | (c & e) | ((a | b) & (c | e));
    ge[2] = (a & b & (c | e)) | (c & e & (a | b));
    ge[3] = a & b & c & e;
}

/* The largest min(held, cap) over the ranks of the rank mask S (hg: planes of the held cards), -1 when S is
 * empty; *at: the ranks of S that reach it. */
static inline int top_rank_count(u64 S, const u64 hg[4], int cap, u64 *at) {
    *at = S;
    if (!S) return -1;
    for (int k = cap; k >= 1; k--)
        if (S & hg[k - 1]) {
            *at = S & hg[k - 1];
            return k;
        }
    return 0;
}

/* Special forms in closed form (concealed hands only). Returns the best overlap, or floor when no form exceeds it
 * (floor -1: the best overlap or -1); a form that cannot exceed the best so far is skipped, so a caller that only
 * asks "above floor?" passes it. */
/* parts: 1 the forms that depend only on counts per rank (four pairs, two quads), 2 the card-specific
 * ones (crown pairs, royal and pure straights), 3 all; PARTS_QUADS: the quad forms of 1 alone */
#define PARTS_QUADS 4
static int special_overlap_above(const dist_t *d, int parts, int floor) {
    u64 H = d->H, av = d->av, Hav = H | av;
    int jkh = d->jk_held, jku = d->jk_unseen;
    int best = floor;
    if (parts & (1 | PARTS_QUADS)) {
        u64 hg[4], cg[4], at, at2; /* planes of the held cards and of the cards W may hold */
        rank_planes(H, hg);
        rank_planes(Hav, cg);
        if (!(parts & PARTS_QUADS) && !jkh && pc64(cg[1]) >= 4) {
            /* four pairs: the four ranks that can still make a pair with the most held cards (at most 2 count) */
            int two = pc64(cg[1] & hg[1]), one = pc64(cg[1] & hg[0] & ~hg[1]);
            int t = two < 4 ? two : 4, left = 4 - t;
            t = 2 * t + (one < left ? one : left);
            if (t > best) best = t;
        }
        u64 full = cg[3], three = cg[2]; /* ranks whose four cards / three cards W may hold */
        int q0 = top_rank_count(full, hg, 4, &at);
        if (!jkh && pc64(full) >= 2) {
            /* two quads: the two full ranks with the most held cards */
            int q1 = pc64(at) >= 2 ? q0 : top_rank_count(full & ~at, hg, 4, &at2);
            if (q0 + q1 > best) best = q0 + q1;
        }
        if ((jkh || jku) && q0 >= 0) {
            /* one full rank and another rank of three with the Joker: the best of each unless both are the
             * same single rank, then the runner-up of either */
            int s0 = top_rank_count(three, hg, 3, &at2);
            int v = q0 + s0;
            if (at == at2 && pc64(at) == 1) {
                int s1 = top_rank_count(three & ~at, hg, 3, &at2), q1 = top_rank_count(full & ~at, hg, 4, &at2);
                v = s1 >= 0 ? q0 + s1 : -1; /* -1: no second rank at all */
                if (q1 >= 0 && q1 + s0 > v) v = q1 + s0;
            }
            if (v >= 0 && v + jkh > best) best = v + jkh;
        }
    }
    if (parts & 2) {
        /* each form below covers only held cards of one suit (straights) or of the crown ranks: skip those
         * that cannot beat best (the result is the same) */
        if (!jkh && pc64(H & CROWN_CARDS) > best) {
            /* crown pairs: per crown rank the better of its red and black pair that is still complete */
            int sum = 0;
            for (int i = 0; i < 4 && sum >= 0; i++) {
                int v = -1;
                if (!(CROWN_RED[i] & ~Hav)) v = pc64(CROWN_RED[i] & H);
                if (!(CROWN_BLACK[i] & ~Hav) && pc64(CROWN_BLACK[i] & H) > v) v = pc64(CROWN_BLACK[i] & H);
                sum = v < 0 ? -1 : sum + v;
            }
            if (sum > best) best = sum;
        }
        for (int s = 0; s < 4; s++) {
            if (pc64(H & SUITM[s]) + jkh <= best) continue;
            if (!jkh) {
                u64 w = 0x1FC1ULL << (13 * s);
                if (!(w & ~Hav) && pc64(w & H) > best) best = pc64(w & H);
            }
            for (int st = 0; st <= 5; st++) {
                u64 run = 0xFFULL << (13 * s + st);
                u64 missing_unavail = run & ~Hav;
                int h = pc64(run & H);
                if (!jkh && !missing_unavail && h > best) best = h;
                if ((jkh || jku) && pc64(missing_unavail) <= 1) {
                    int ov = (h == 8 ? 7 : h) + jkh;
                    if (ov > best) best = ov;
                }
            }
        }
    }
    return best;
}

/* The search behind eval_distance: best overlap found above floor (floor when none), stopping
 * early once it reaches goal. */
/* The search state of a hand: what is held, what may still be drawn, where the Joker is. */
/* The search state without the held cards' components (lone, comp: see dist_components). */
static void dist_init_core(dist_t *d, u64 hand, u64 meld, u64 unseen, int floor, int goal) {
    memset(d, 0, offsetof(dist_t, comp));
    u64 held = hand | meld;
    d->H = hand & REAL;
    d->E = meld & REAL;
    d->av = unseen & REAL & ~held;
    d->jk_held = (hand & JK_BIT) != 0;
    d->jk_unseen = !d->jk_held && (unseen & JK_BIT) && !(meld & JK_BIT);
    d->jk_rank = -1;
    d->best = floor;
    d->goal = goal;
}

static void dist_components(dist_t *d) {
    d->lone = d->H & ~neighbours(d->H);
    find_components(d, d->H & ~d->lone);
    d->no_shapes = (shape_bound(d->H, 1, 0, 0, 0) < 3 ? NO_MELD3 : 0) | (shape_bound(d->H, 0, 1, 0, 0) < 2 ? NO_PAIR2 : 0);
}

static void dist_init(dist_t *d, u64 hand, u64 meld, u64 unseen, int floor, int goal) {
    memset(d, 0, sizeof *d);
    dist_init_core(d, hand, meld, unseen, floor, goal);
    dist_components(d);
}

/* The standard-form levels of distance_search on a prepared state (d->best: the floor, special forms included;
 * d->goal: stop there). have_components: d->lone / comp / no_shapes already describe d->H. */
static int search_levels(dist_t *d, int melds, int have_components) {
    /* no standard W covers more than the root bound: stop as soon as one reaches it (the cheap bounds first:
     * most random hands end here, before the components are needed) */
    int n = pc64(d->H), cap = 3 * melds + 2 - d->jk_held;
    int ub = d->jk_held + (n < cap ? n : cap);
    int sb = d->jk_held + shape_bound(d->H, melds, 1, d->jk_held, 0);
    if (sb < ub) ub = sb;
    int known = d->best;
    if (ub <= known) return known;
    if (!have_components) dist_components(d);
    int cb = d->jk_held + cover_bound(d, d->H, melds + 1);
    if (cb < ub) ub = cb;
    if (ub < d->goal) d->goal = ub;
    /* one yes/no question per overlap level, highest first: with the floor just below the level asked,
     * the bounds cut every subtree that cannot reach it, and most hands reach the root bound */
    for (int level = d->goal; level > known; level--) {
        if (d->collect_levels && level >= d->collect_from) { /* every W of the level (none above it) */
            d->best = level;
            d->goal = 99;
            d->collect = 1;
            d->found = 0;
            dfs(d, d->H, melds, 1, d->jk_held);
            d->collect = 0;
            if (d->found) return level;
            continue;
        }
        if (d->lev && level < 3 * melds + 2) { /* discard_levels: every W of the level that leaves out a card of need */
            d->best = level - 1;
            d->goal = 99;
            d->need = d->H; /* a W below the hand's size leaves out a real card: no cut before the first W */
            d->found = 0;
            dfs(d, d->H, melds, 1, d->jk_held);
            if (d->found) return level;
            continue;
        }
        d->best = level - 1;
        d->goal = level;
        dfs(d, d->H, melds, 1, d->jk_held);
        if (d->best >= level) return d->best;
    }
    return known;
}

/* wit (may be NULL): the standard W that reached goal, when one did (n stays 0 when a special form answered).
 * sp: in, an upper bound on the hand's special-form overlap (SP_UNKNOWN: none known; the forms are evaluated unless
 * the bound is at most the floor, where they cannot change the answer); out (sp_out, may be NULL): the special-form
 * overlap evaluated (-1 with a meld, or when skipped: then it is at most the floor). */
static int distance_search_on(dist_t *d, int meld, eval_witness_t *wit, int sp_max, int *sp_out);

static int distance_search_w(u64 hand, u64 meld, u64 unseen, int floor, int goal, eval_witness_t *wit, int sp_max,
                             int *sp_out) {
    dist_t d;
    dist_init_core(&d, hand, meld, unseen, floor, goal);
    return distance_search_on(&d, meld != 0, wit, sp_max, sp_out);
}

/* distance_search_w on a state dist_init_core prepared (and a caller may have set collect_levels on) */
static int distance_search_on(dist_t *d, int meld, eval_witness_t *wit, int sp_max, int *sp_out) {
    int sp = -1;
    if (!meld && sp_max > d->best) {
        sp = special_overlap_above(d, 3, sp_out ? -1 : d->best); /* exact only where the caller reads it */
        if (sp > d->best) d->best = sp;
    }
    if (sp_out) *sp_out = sp;
    int known = d->best, best = search_levels(d, meld ? 1 : 2, 0);
    if (wit && best > known) { /* a standard W reached best (the last leaf that succeeded) */
        wit->n = 1;
        wit->held[0] = d->leafheld;
        wit->drawn[0] = d->leafacc;
    }
    return best;
}

static int distance_search(u64 hand, u64 meld, u64 unseen, int floor, int goal) {
    return distance_search_w(hand, meld, unseen, floor, goal, NULL, SP_UNKNOWN, NULL);
}

int eval_distance_sp(u64 hand, u64 meld, u64 unseen, eval_witness_t *wit, int *sp) {
    int size = meld ? 5 : 8;
    if (wit) wit->n = 0;
    int best = distance_search_w(hand, meld, unseen, -1, 99, wit, SP_UNKNOWN, sp);
    return best < 0 ? UNREACHABLE : size - best;
}

int eval_distance_w(u64 hand, u64 meld, u64 unseen, eval_witness_t *wit) {
    return eval_distance_sp(hand, meld, unseen, wit, NULL);
}

int eval_distance(u64 hand, u64 meld, u64 unseen) { return eval_distance_w(hand, meld, unseen, NULL); }

int eval_distance_below(u64 hand, u64 meld, u64 unseen, int below, eval_witness_t *wit) {
    int size = meld ? 5 : 8;
    if (wit) wit->n = 0;
    if (below > UNREACHABLE) below = UNREACHABLE; /* no distance is above it: an unreachable hand answers 99 */
    int floor = size - below < -1 ? -1 : size - below; /* an overlap above floor is a distance below `below` */
    int best = distance_search_w(hand, meld, unseen, floor, 99, wit, SP_UNKNOWN, NULL);
    return best > floor ? size - best : below;
}

int eval_distance_at_most_sp(u64 hand, u64 meld, u64 unseen, int r, eval_witness_t *wit, int sp_max) {
    int size = meld ? 5 : 8;
    if (wit) wit->n = 0;
    if (r < 0) return 0;
    if (r >= size) r = size; /* any reachable hand */
    return distance_search_w(hand, meld, unseen, size - r - 1, size - r, wit, sp_max, NULL) >= size - r;
}

int eval_distance_at_most_w(u64 hand, u64 meld, u64 unseen, int r, eval_witness_t *wit) {
    return eval_distance_at_most_sp(hand, meld, unseen, r, wit, SP_UNKNOWN);
}

int eval_distance_at_most(u64 hand, u64 meld, u64 unseen, int r) {
    return eval_distance_at_most_w(hand, meld, unseen, r, NULL);
}

static u64 special_acceptance(const dist_t *d, u64 pool);

/* The components of hand + y from those of hand (base: lone / comp / ncomp of base->H; y a real card not in it):
 * y joins every component it neighbours (the relation is symmetric), the others stay as they are. cover_bound
 * reads only the sizes, so the order of comp does not matter. */
static void components_plus(const dist_t *base, u64 y, dist_t *d) {
    u64 nb = neighbours(y) & base->H, merged = y | (base->lone & nb);
    d->ncomp = 0;
    for (int i = 0; i < base->ncomp; i++) {
        if (base->comp[i] & nb) merged |= base->comp[i];
        else d->comp[d->ncomp++] = base->comp[i];
    }
    if (merged != y) d->comp[d->ncomp++] = merged;
    d->lone = (base->lone & ~nb) | (merged == y ? y : 0);
    d->no_shapes = (shape_bound(d->H, 1, 0, 0, 0) < 3 ? NO_MELD3 : 0) | (shape_bound(d->H, 0, 1, 0, 0) < 2 ? NO_PAIR2 : 0);
}

/* Per card x: eval_distance_at_most(hand + x, meld, unseen - x, dist - 1), i.e. is some W of overlap >= L =
 * size - dist + 1 with hand + x? For an unseen real x the work shared by the cards is done once: the components
 * of hand (components_plus adds x), and the special forms, which one more card raises by at most one (a form
 * feasible for hand + x draws from unseen - x, so it was feasible for hand with x drawn): special_acceptance
 * decides every x's special forms in closed form (nothing when no form of hand reaches L - 1), and only the
 * standard form is searched per card. The Joker and cards that are not unseen take the plain question.
 * beat: stop early (returning a count <= beat) once the cards left cannot lift the count above beat; beat < 0
 * never stops. */
static int acceptance_per_card(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, int beat, u64 known,
                               eval_witness_t *wl, int exact, int sp_max) {
    u64 held = hand | meld;
    pool &= ~held;
    int size = meld ? 5 : 8, n = 0;
    if (pc64(pool) <= beat) return 0;
    u64 plain = pool, cert = known; /* cert: cards shown accepted (by the caller, or an earlier card's witness) */
    dist_t base;
    if (dist >= 1 && dist <= size) {
        plain = pool & ~(unseen & REAL);
        dist_init(&base, hand, meld, unseen, -1, 99);
    }
    u64 fast = pool & ~plain;
    if (fast) {
        int level = size - dist + 1, jkh = (hand & JK_BIT) != 0;
        /* the cards with which a special form reaches the level, in closed form; such a form holds level - 1 cards of
         * hand (x drawn), so none exists when the hand's special overlap is below that */
        if (!meld && sp_max >= level - 1) {
            base.best = level - 1;
            u64 sp = special_acceptance(&base, fast);
            n += pc64(sp);
            fast &= ~sp;
        }
        /* search_levels' shape bound first, for every card before any search (most cards that fail end here), so
         * the count of those left bounds the count from above and the beat test below stops sooner */
        u64 live = 0;
        for (u64 t = fast; t; t &= t - 1) {
            u64 x = t & -t;
            if ((cert & x) || jkh + shape_bound((hand | x) & REAL, meld ? 1 : 2, 1, jkh, 0) >= level) live |= x;
        }
        for (u64 t = live; t; t &= t - 1) {
            if (n + pc64(t) + pc64(plain) <= beat) return n;
            u64 x = t & -t;
            if (cert & x) { n++; continue; }
            dist_t e;
            dist_init_core(&e, hand | x, meld, unseen & ~x, level - 1, level);
            components_plus(&base, x, &e);
            /* dist exact: no W of hand alone reaches the level, so every W that does holds x (placed first) */
            if (exact) e.force = x;
            if (search_levels(&e, meld ? 1 : 2, 1) >= level) {
                n++;
                /* the witness W holds x and level - 1 cards of hand (no more: dist is exact), so for each drawn card
                 * z of W, W \ (hand + z) = the other drawn cards + x, all unseen: z is accepted too */
                cert |= e.leafacc;
                if (wl && wl->n < EVAL_MAX_WITNESS) { /* the same W, seen from hand: held cards and drawn ones */
                    wl->held[wl->n] = e.leafheld & ~x;
                    wl->drawn[wl->n++] = e.leafacc | x;
                }
            }
        }
    }
    for (u64 t = plain; t; t &= t - 1) {
        if (n + pc64(t) <= beat) return n;
        u64 x = t & -t;
        n += (cert & x) || eval_distance_at_most(hand | x, meld, unseen & ~x, dist - 1);
    }
    return n;
}

int eval_acceptance(u64 hand, u64 meld, u64 unseen, u64 pool, int dist) {
    return acceptance_per_card(hand, meld, unseen, pool, dist, -1, 0, NULL, 0, SP_UNKNOWN);
}

/* Superset of the cards a group of drawn cards only can hold (the pruning bound of a collecting search). */
static void fill_sets(dist_t *d) {
    int jk = d->jk_held || d->jk_unseen;
    d->fill_pair = d->fill_meld = 0;
    d->fill_ready = 1;
    for (int r = 0; r < 13; r++) {
        u64 a = d->av & RANKM[r];
        int n = pc64(a);
        if (n >= 2) d->fill_pair |= a;
        if (n >= 3 || (n >= 2 && jk)) d->fill_meld |= a;
    }
    for (int s = 0; s < 4; s++)
        for (int st = 0; st <= 10; st++) {
            u64 run = 7ULL << (13 * s + st), a = run & d->av;
            if (pc64(a) == 3 || (pc64(a) == 2 && jk)) d->fill_meld |= a;
        }
    if (!d->jk_held && d->jk_unseen) d->fill_meld |= JK_BIT;
}

/* Cards x of pool (not held, real or the Joker) with which a special form reaches d->best + 1: the special
 * part of the acceptance set (concealed hands only; d describes the hand, d->best its best overlap). */
static u64 special_acceptance(const dist_t *d, u64 pool) {
    /* one more card raises a form's overlap by at most one: forms below best cannot reach best + 1 */
    int below = d->best - 1;
    int by_counts = special_overlap_above(d, 1, below) >= d->best, by_cards = special_overlap_above(d, 2, below) >= d->best;
    if (!by_counts && !by_cards) return 0;
    dist_t e; /* hand + x, copied from d only for the cards whose forms are read from it */
    int have_e = 0;
    /* x moves from av to H, so the ranks W may fill (cg) stay and only x's rank's held count grows: the quad forms
     * read held counts only on ranks of three or more cards W may hold (cg[2]); elsewhere (or when they cannot
     * pass best at all) they stay at most best and only four pairs can change, in closed form (as
     * special_overlap_above counts it) */
    u64 hg[4], cg[4];
    rank_planes(d->H, hg);
    rank_planes(d->H | d->av, cg);
    int fp_ok = !d->jk_held && pc64(cg[1]) >= 4;
    /* one card raises the quad forms by at most one: below best on hand, they stay at most best on every x */
    int quads_may = by_counts && special_overlap_above(d, PARTS_QUADS, below) >= d->best;
    int two = pc64(cg[1] & hg[1]), one = pc64(cg[1] & hg[0] & ~hg[1]);
#define SET_E(x)                                  \
    do {                                          \
        if (!have_e) { e = *d; have_e = 1; }      \
        e.H = d->H | ((x) & REAL);                \
        e.av = d->av & ~(x);                      \
        e.jk_held = d->jk_held || (x) == JK_BIT;  \
        e.jk_unseen = d->jk_unseen && (x) != JK_BIT; \
    } while (0)
    /* the forms by counts give every card of a rank the same value, so they are decided per rank (13-bit masks) and
     * then given to the rank's pool cards at once; four pairs takes one of three values, by whether x's rank is held
     * twice or more, once (a pair more) or not at all (a single more) */
    u64 real = pool & REAL, pool_ranks = (real | real >> 13 | real >> 26 | real >> 39) & ROW, rank_acc = 0;
    if (by_counts) {
        u64 quad_ranks = quads_may ? cg[2] & pool_ranks : 0;
        for (u64 t = quad_ranks; t; t &= t - 1) {
            u64 x = real & rank_cards(t & -t);
            SET_E(x & -x);
            if (special_overlap_above(&e, 1, d->best) > d->best) rank_acc |= t & -t;
        }
        if (fp_ok) {
            u64 by_held[3] = {hg[1], hg[0] & ~hg[1], ~hg[0]}; /* held twice or more, once, not at all */
            for (int k = 0; k < 3; k++) {
                int up = k == 1, tw = two + up, on = one + (k == 2) - up;
                int t = tw < 4 ? tw : 4, left = 4 - t;
                if (2 * t + (on < left ? on : left) > d->best) rank_acc |= cg[1] & by_held[k] & pool_ranks & ~quad_ranks;
            }
        }
    }
    u64 sp_acc = real & rank_cards(rank_acc);
    if (pool & JK_BIT) {
        SET_E(JK_BIT);
        if (special_overlap_above(&e, by_counts | by_cards << 1, d->best) > d->best) sp_acc |= JK_BIT;
    }
    if (by_cards) {
        /* the card-specific forms of hand + x differ from hand's (at most best) only in x's suit (straights) and,
         * for a crown card, the crown pairs: only those that can pass best are read */
        u64 may = CROWN_CARDS;
        for (int s = 0; s < 4; s++)
            if (pc64(d->H & SUITM[s]) + d->jk_held + 1 > d->best) may |= SUITM[s];
        for (u64 t = real & ~sp_acc & may; t; t &= t - 1) {
            SET_E(t & -t);
            if (special_overlap_above(&e, 2, d->best) > d->best) sp_acc |= t & -t;
        }
    }
#undef SET_E
    return sp_acc;
}

/* Acceptance in one search (issue 20): x raises the overlap by one exactly when some W of best overlap
 * draws x, so the acceptance set is the union of the drawn cards over every best W (rank demands stand
 * for any spare card of their rank). Tenpai hands read their waits; special forms are evaluated per
 * card in closed form; pool cards that are not unseen are asked card by card (eval_acceptance). With a held
 * Joker the union is exact since fill lets the Joker stand for any card of a run of three drawn cards. */
static int acceptance_fast_known(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, u64 known, eval_witness_t *wl,
                                 int sp_max);

int eval_acceptance_fast(u64 hand, u64 meld, u64 unseen, u64 pool, int dist) {
    return acceptance_fast_known(hand, meld, unseen, pool, dist, 0, NULL, SP_UNKNOWN);
}

/* known: cards of pool already shown accepted (a subset of the answer; they seed the union); wl: the leaves'
 * witnesses are appended (every leaf is a best W of hand, dist being exact) */
static int acceptance_fast_known(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, u64 known, eval_witness_t *wl,
                                 int sp_max) {
    u64 held = hand | meld;
    pool &= ~held;
    int size = meld ? 5 : 8;
    if (dist <= 0 || dist > size) return eval_acceptance(hand, meld, unseen, pool, dist);
    u64 odd = pool & ~(unseen & ~held);
    int n = odd ? eval_acceptance(hand, meld, unseen, odd, dist) : 0;
    pool &= ~odd;
    if (!pool) return n;
    if (dist == 1) return n + pc64(eval_waits(hand, meld) & pool);
    dist_t d;
    dist_init(&d, hand, meld, unseen, size - dist, 99);
    d.collect = 1;
    u64 sp_acc = meld || sp_max < d.best ? 0 : special_acceptance(&d, pool); /* as in acceptance_per_card */
    d.acc = sp_acc | (known & pool); /* dist is exact, so no W beats d.best and acc only grows */
    d.want = pool;
    d.wl = wl;
    dfs(&d, d.H, meld ? 1 : 2, 1, d.jk_held);
    return n + pc64((d.acc | sp_acc) & pool); /* sp_acc again: a caller whose dist is not exact resets acc */
}

/* The faster exact search per distance, measured on the bots' tie-break queries: the wait set for dist 1; for dist 2
 * and 3 the one collecting search (acceptance_fast_known) unless at most CUT_SLACK (dist 2) / CUT_SLACK3 (dist 3) pool
 * cards exceed beat, where the per-card count, which stops early, wins; per card from dist 4. Session 22 (the
 * collecting search anchored): callgrind on the 35,164 tie-break queries of bench/rollout_instructions.py's
 * 1,000 rollouts replayed alone, in millions of instructions with the file parsing: CUT_SLACK 12 / per card at dist 3
 * (the thresholds before) 501.6, CUT_SLACK 8 / 10 with CUT_SLACK3 8: 482.3 / 478.6 (whole rollouts, 12 / 8: 362.2k per rollout against 358.7k), CUT_SLACK 10 with
 * CUT_SLACK3 6 / 8 / 10: 479.8 / 478.6 / 480.1, CUT_SLACK3 3: 505.3, collecting at every dist-3 query: 541.7; the whole
 * rollout bench 420.0M -> 358.7M instructions (1,000 rollouts; 345.2M with the later lazy sets and special floor). */
#define CUT_SLACK 10
#define CUT_SLACK3 8
int eval_acceptance_known(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, int beat, u64 known,
                          eval_witness_t *wl, int sp_max) {
    int np = pc64(pool & ~(hand | meld));
    if (np <= beat) return 0;
    if (dist == 1) return eval_acceptance_fast(hand, meld, unseen, pool, dist);
    if ((dist == 2 && np - beat > CUT_SLACK) || (dist == 3 && np - beat > CUT_SLACK3))
        return acceptance_fast_known(hand, meld, unseen, pool, dist, known, wl, sp_max);
    return acceptance_per_card(hand, meld, unseen, pool, dist, beat, known, wl, 1, sp_max);
}

int eval_acceptance_beat(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, int beat) {
    return eval_acceptance_known(hand, meld, unseen, pool, dist, beat, 0, NULL, SP_UNKNOWN);
}

/* Every best W of hand in one collecting search (hand at its exact distance dist, overlap m = size - dist): for each x
 * of xset, acc[x] |= the drawn cards of every best W that leaves x out; returns the cards of xset some best standard W
 * leaves out, or ~0 when a W of hand beats m (dist was not the hand's distance; acc is then meaningless). */
static u64 collect_discards(u64 hand, u64 meld, u64 unseen, u64 xset, int dist, u64 acc[64]) {
    int m = (meld ? 5 : 8) - dist;
    dist_t d;
    dist_init(&d, hand, meld, unseen, m, 99);
    d.collect = 1;
    d.xacc = acc;
    d.xset = xset;
    dfs(&d, d.H, meld ? 1 : 2, 1, d.jk_held);
    return d.best == m ? d.xavoid : ~0ULL;
}

int eval_collected_acceptance(u64 hand, u64 meld, u64 unseen, u64 x, int dist, u64 accx, u64 pool, int sp_max) {
    int m = (meld ? 5 : 8) - dist;
    u64 after = hand & ~x, held = after | meld;
    pool &= ~held;
    u64 odd = pool & ~(unseen & ~held); /* as in acceptance_fast_known */
    int n = odd ? eval_acceptance(after, meld, unseen, odd, dist) : 0;
    pool &= ~odd;
    if ((pool & ~accx) && !meld && sp_max >= m) { /* only the cards no standard W draws */
        dist_t e; /* special_acceptance reads no components */
        dist_init_core(&e, after, meld, unseen, m, 99);
        accx |= special_acceptance(&e, pool & ~accx);
    }
    return n + pc64(accx & pool);
}

/* ---------------------------------------------------------------- distance after every discard (issue 20) */
/* One hand before its discard, every allowed discard x: the distance of hand - x and its acceptance count, as
 * eval_distance and eval_acceptance_fast would give them one discard at a time (the twin the tests hold it to).
 *
 * Every W that hand - x can reach avoids x (x is seen once discarded), so hand - x has the whole hand's distance
 * d when some best W of hand avoids x, and more otherwise: with counts, eval_discard_anchored (the C bots'
 * discard_best's search too) tells which discards leave d; distances alone, discard_levels; for each other one, the
 * question at d + 1 (almost always yes) and, failing that, a full distance. Acceptance
 * (acc_mode) is eval_acceptance_known's exact count, the drawn cards of the best W of hand that avoid x counted
 * as known (they are best W of hand - x). Session 25 replaced a collecting search over every best W of hand
 * (that visited far more W than the questions need): distances 3.8x, with the bots' tie-break counts 1.5x
 * faster on the same hands (bench/bots_throughput.py). */
/* eval_distance_sp's search of the hand, whose levels from size - collect_max up collect every W (acc, *avoid: as
 * collect_discards) instead of asking yes / no: *collected when the distance is at most collect_max (the best
 * standard W collected on the way down, or, where a special form reaches the best overlap and no standard W passes
 * it, collected at that level afterwards); else wit holds the standard W that answered, as eval_distance_sp's. */
static int distance_collecting(u64 hand, u64 meld, u64 unseen, u64 xset, int collect_max, int *sp, eval_witness_t *wit,
                               u64 acc[64], u64 *avoid, int *collected) {
    int size = meld ? 5 : 8;
    dist_t d;
    dist_init_core(&d, hand, meld, unseen, -1, 99);
    memset(acc, 0, 64 * sizeof *acc);
    d.xacc = acc;
    d.xset = xset;
    d.collect_levels = 1;
    d.collect_from = size - collect_max;
    wit->n = 0;
    int best = distance_search_on(&d, meld != 0, wit, SP_UNKNOWN, sp), known = *sp; /* the floor: -1 or the special forms */
    *collected = 0;
    *avoid = 0;
    if (best > known && best >= d.collect_from) { /* collected on the way down (wit: no yes / no answer there) */
        wit->n = 0;
        *collected = 1;
        *avoid = d.xavoid;
    } else if (best <= known && known >= 0 && known >= d.collect_from) {
        *avoid = collect_discards(hand, meld, unseen, xset, size - known, acc);
        *collected = *avoid != ~0ULL; /* always (no standard W passes known); else the questions answer, and the
                                       * caller, told so, reads no acc */
    }
    return best < 0 ? UNREACHABLE : size - best;
}

int eval_discard_anchored(u64 hand, u64 meld, u64 unseen, u64 allowed, int *sp, eval_witness_t *wl, u64 *leaves,
                          int collect_max, u64 *acc, int *collected_out) {
    eval_witness_t w; /* the last answer's W */
    int collected = 0, d;
    u64 avoid = 0;
    allowed &= hand & REAL;
    if (acc && collect_max >= 0)
        d = distance_collecting(hand, meld, unseen, allowed, collect_max, sp, &w, acc, &avoid, &collected);
    else
        d = eval_distance_sp(hand, meld, unseen, &w, sp);
    u64 avoided = 0; /* discards some best W found so far avoids */
    *leaves = 0;
    wl->n = 0;
    if (collected_out) *collected_out = collected && d < UNREACHABLE;
    if (d >= UNREACHABLE) return d; /* hand - x reaches no W that hand does not */
    if (collected) {
        /* every best W at once (d is exact): the standard ones leave out what they leave out, and a special W leaves
         * out x exactly when hand - x keeps a special form of the hand's best overlap (closed form, per discard) */
        int m = (meld ? 5 : 8) - d;
        *leaves = avoid & allowed;
        if (!meld && *sp >= m)
            for (u64 t = allowed & ~*leaves; t; t &= t - 1) {
                dist_t e;
                dist_init_core(&e, hand & ~(t & -t), meld, unseen, m - 1, m);
                if (special_overlap_above(&e, 3, m - 1) >= m) *leaves |= t & -t;
            }
        return d;
    }
    for (u64 t = allowed & REAL;; t &= t - 1) {
        if (w.n) {
            avoided |= hand & REAL & ~w.held[0];
            if (wl->n < EVAL_MAX_WITNESS) {
                wl->held[wl->n] = w.held[0];
                wl->drawn[wl->n++] = w.drawn[0];
            }
        }
        if (!t) break;
        u64 x = t & -t;
        w.n = 0;
        if ((avoided & x) || eval_distance_at_most_sp(hand & ~x, meld, unseen, d, &w, *sp)) *leaves |= x;
    }
    return d;
}

/* The distances alone (acc_mode 0). Every W that hand - x reaches avoids x, so d(hand - x) = d exactly when some best
 * W of hand leaves x out. The hand's own search (search_levels with lev) runs its last level, the best overlap m, on
 * past the first W: every best standard W that leaves out a card no W found before it leaves out (a subtree whose W
 * holds all of those is cut; once none is left the search unwinds). Where a special form reaches m and no standard W
 * passes it, the discards a special W of overlap m leaves out are read first (closed form), and the same search runs
 * at m afterwards for the others. Every other discard raises the distance: d + 1 when hand - x reaches a W at m - 1
 * (a special form in closed form, else a standard W: one more search of the hand at m - 1 for all of them at once;
 * almost always), else its own distance. Session 34 replaced one question per discard that the first W did not
 * answer (half of them must exhaust their search to fail): 32.5M -> 26.7M instructions on `python
 * bench/rollout_instructions.py --records 3000 --table 0`'s 2,492 hands; session 42's closed forms first and one
 * search at m - 1 in place of a question per raised discard, 26.7M -> 24.6M. */
/* The cards of ask that no standard W of hand with overlap above floor leaves out: one search of the hand over the
 * W of the level, cut where a subtree's W hold every card still in question (dfs_node's lev) */
static u64 level_holds(u64 hand, u64 meld, u64 unseen, int floor, u64 ask) {
    dist_t e;
    dist_init(&e, hand, meld, unseen, floor, 99);
    e.lev = 1;
    e.want = ~0ULL;
    e.need = e.keep = ask;
    dfs(&e, e.H, meld ? 1 : 2, 1, e.jk_held);
    return e.need;
}

/* hand - x's special-form overlap where it reaches m - 1 (closed form; m - 2 when it does not) */
static int special_after(u64 hand, u64 x, u64 meld, u64 unseen, int m) {
    dist_t e;
    dist_init_core(&e, hand & ~x, meld, unseen, m - 2, m);
    return special_overlap_above(&e, 3, m - 2);
}

static void discard_levels(u64 hand, u64 meld, u64 unseen, u64 allowed, int n, const int *card, int *dist) {
    int size = meld ? 5 : 8, sp;
    dist_t h; /* the hand's own search, its last level run as the search over every best W (search_levels) */
    dist_init_core(&h, hand, meld, unseen, -1, 99);
    h.lev = 1;
    h.keep = allowed;
    h.want = ~0ULL; /* dfs_node tests lev behind want: only the collecting search, which sets want, tests it too */
    int best = distance_search_on(&h, meld != 0, NULL, SP_UNKNOWN, &sp), known = sp; /* the floor: -1 or the special forms */
    if (best < 0) { /* hand - x reaches no W that hand does not */
        for (int i = 0; i < n; i++) dist[i] = UNREACHABLE;
        return;
    }
    int m = best, d = size - m;
    int spx[8]; /* hand - x's special overlap where it reaches m - 1 (sp bounds it; -99: not asked) */
    for (int i = 0; i < n; i++) spx[i] = -99;
    /* the discards no best standard W leaves out: the search's answer when a standard W reached m above the special
     * forms (a winning hand's only W leaves out nothing), else the search below */
    u64 raise = best > known ? (m == size ? allowed : h.need) : allowed; /* h.need: within allowed (keep) */
    if (raise && best <= known) {
        /* a special form reaches m: first the discards one of its W of overlap m leaves out (closed form, asked of
         * every discard below anyway), so that the search of the standard W at m looks only for the others: a
         * smaller need cuts more and unwinds sooner (session 42) */
        for (int i = 0; i < n; i++) {
            spx[i] = special_after(hand, 1ULL << card[i], meld, unseen, m);
            if (spx[i] >= m) raise &= ~(1ULL << card[i]);
        }
        if (raise) raise = level_holds(hand, meld, unseen, m - 1, raise);
    }
    u64 ask = 0; /* the discards whose question at d + 1 only a standard W can answer */
    for (int i = 0; i < n; i++) {
        u64 x = 1ULL << card[i];
        if (!(raise & x)) {
            dist[i] = d;
            continue;
        }
        if (spx[i] == -99 && !meld && sp >= m - 1) spx[i] = special_after(hand, x, meld, unseen, m);
        if (spx[i] >= m) dist[i] = d;
        else if (spx[i] == m - 1) dist[i] = d + 1;
        else ask |= x;
    }
    if (!ask) return;
    /* the standard W at m - 1: one search of the hand over the W of that level that leave out a card of ask (a W
     * of hand that avoids x is one of hand - x, x being seen once discarded: av holds unseen cards only), cut as
     * the level search above, instead of one question of hand - x per discard (session 42) */
    u64 open = m >= 2 ? level_holds(hand, meld, unseen, m - 2, ask) : ask;
    for (int i = 0; i < n; i++) {
        u64 x = 1ULL << card[i];
        if (!(ask & x)) continue;
        if (!(open & x)) dist[i] = d + 1;
        else dist[i] = eval_distance(hand & ~x, meld, unseen); /* no W at m - 1 avoids x (or m < 2): rare */
    }
}

int eval_discard_table(u64 hand, u64 meld, u64 unseen, u64 allowed, int acc_mode, int *card, int *dist, int *acc) {
    allowed &= hand & REAL;
    int n = 0;
    for (u64 t = allowed; t && n < 8; t &= t - 1) card[n++] = ctz64(t);
    if (!n) return 0;
    if (!acc_mode) {
        for (int i = 0; i < n; i++) acc[i] = 0;
        discard_levels(hand, meld, unseen, allowed, n, card, dist);
        return n;
    }
    eval_witness_t wl; /* every best W of hand found */
    int sp = SP_UNKNOWN, best = 127, tied = 0;
    u64 leaves, acc_set[64];
    /* with counts to give, every best W at once up to distance 3, as the C bots' discard_best (`python
     * bench/rollout_instructions.py --records 3000 --table 1`, session 30: acc_mode 1 157.4M instructions with the
     * questions (4027045), 122.6M collecting up to distance 2, 77.3M up to 3, 74.8M collecting in the hand's own
     * search); distances alone were cheaper by the questions (32.5M against 40.9M / 59.4M), and are by discard_levels */
    int collected;
    int d = eval_discard_anchored(hand, meld, unseen, allowed, &sp, &wl, &leaves, 3, acc_set, &collected);
    for (int i = 0; i < n; i++) {
        u64 after = hand & ~(1ULL << card[i]);
        if (d >= UNREACHABLE) dist[i] = UNREACHABLE;
        else if (leaves >> card[i] & 1) dist[i] = d;
        else dist[i] = eval_distance_at_most_sp(after, meld, unseen, d + 1, NULL, sp) ? d + 1
                                                                                       : eval_distance(after, meld, unseen);
        if (dist[i] < best) {
            best = dist[i];
            tied = 0;
        }
        tied += dist[i] == best;
    }
    for (int i = 0; i < n; i++) {
        acc[i] = 0;
        if (!(acc_mode == 2 || (acc_mode == 1 && tied >= 2 && dist[i] == best))) continue;
        u64 x = 1ULL << card[i], after = hand & ~x, known = 0;
        u64 pool = (neighbours(after) | JK_BIT) & unseen & ~(after | meld);
        if (collected && dist[i] == d) {
            acc[i] = eval_collected_acceptance(hand, meld, unseen, x, d, acc_set[card[i]], pool, sp);
            continue;
        }
        if (dist[i] == d)
            for (int k = 0; k < wl.n; k++)
                if (!(wl.held[k] & x)) known |= wl.drawn[k];
        acc[i] = eval_acceptance_known(after, meld, unseen, pool, dist[i], -1, known, NULL, sp);
    }
    return n;
}
