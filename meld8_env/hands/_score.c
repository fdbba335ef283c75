/* Batched scorer: mirrors _evaluate / score_masks in meld8_env/scoring.py line for line. */
#include "_score.h"

#define CROWN_ALL (RANKM[0] | RANKM[10] | RANKM[11] | RANKM[12])
#define BLACK_M (0x1FFFULL | (0x1FFFULL << 39))
#define RED_M ((0x1FFFULL << 13) | (0x1FFFULL << 26))

typedef struct {
    int yakuman, total, yaku_han;
} eval_t;

static inline u64 resolve(u64 g, int joker_as) {
    return (g & REAL) | ((g & JK_BIT) ? 1ULL << joker_as : 0);
}
static inline int is_triplet(u64 rg) { return pc64(rg) == 3 && (rg & RANKM[ctz64(rg) % 13]) == rg; }
static inline int is_sequence(u64 rg) { return pc64(rg) == 3 && !is_triplet(rg); }

static int two_sided(const reading_t *rd, int win_card) {
    u64 bit = 1ULL << win_card;
    for (int i = 0; i < rd->ngroups; i++) {
        u64 g = rd->groups[i];
        if (!(g & bit)) continue;
        u64 rg = resolve(g, rd->joker_as);
        if (!is_sequence(rg)) return 0;
        int target = win_card == 52 ? rd->joker_as : win_card;
        u64 others = rg & ~(1ULL << target);
        int x = ctz64(others) % 13 + 1, y = (63 - __builtin_clzll(others)) % 13 + 1;
        return y == x + 1 && x >= 2 && x + 1 <= 12;
    }
    return 0;
}

static eval_t evaluate(const score_params_t *P, const reading_t *rd, u64 meld, int win_card, int flags, int dora) {
    eval_t e = {0, 0, 0};
    int called = meld != 0, has_joker = rd->joker_as >= 0, form = rd->form;
    u64 rg[5], raw[5];
    int ng = 0;
    for (int i = 0; i < rd->ngroups; i++) {
        raw[ng] = rd->groups[i];
        rg[ng++] = resolve(rd->groups[i], rd->joker_as);
    }
    if (called) {
        raw[ng] = meld;
        rg[ng++] = meld & REAL;
    }
    u64 all = 0, real = meld & REAL;
    for (int i = 0; i < ng; i++) all |= rg[i];
    for (int i = 0; i < rd->ngroups; i++) real |= rd->groups[i] & REAL;
    if (form == F_ROYAL || form == F_CROWN) {
        int mult = form == F_ROYAL ? ((all & ~0x1FFFULL) ? 1 : 2) : ((!(all & RED_M) || !(all & BLACK_M)) ? 2 : 1);
        e.yakuman = mult;
        e.total = P->counted_yakuman_han * mult;
        return e;
    }
    int yh = 0, reducible = 0, ntrip = 0, nseq = 0, nseq_nojk = 0, value = 0;
    u64 seqs[2] = {0, 0};
    for (int i = 0; i < ng; i++) {
        if (is_triplet(rg[i])) {
            ntrip++;
            if ((rg[i] & CROWN_ALL) && !(raw[i] & JK_BIT)) value++;
        } else if (is_sequence(rg[i])) {
            if (nseq < 2) seqs[nseq] = rg[i];
            nseq++;
            if (!(raw[i] & JK_BIT)) nseq_nojk++;
        }
    }
    int tsumo = flags & FL_TSUMO;
    if (tsumo && !called) yh += 1;                            /* closed_tsumo */
    yh += value * P->value_triplet_han;                       /* value_triplet */
    if (!called && !(all & CROWN_ALL)) yh += 1;               /* tanyao */
    if (form == F_FOUR_PAIRS) yh += 1;                        /* four_pairs */
    if (flags & FL_LAST_CARD) yh += P->haitei_han;            /* haitei */
    if (form != F_PURE_STRAIGHT && (!(all & BLACK_M) || !(all & RED_M))) { yh += 2; reducible++; } /* all red/black */
    if (form == F_STANDARD && ntrip == 2) { yh += 2; reducible++; }                         /* toitoi */
    if (form == F_STANDARD || form == F_FOUR_PAIRS || form == F_TWO_QUADS) {
        int only = 1, touch = 1;
        for (int i = 0; i < ng; i++) {
            if (rg[i] & ~CROWN_ALL) only = 0;
            if (!(rg[i] & CROWN_ALL)) touch = 0;
        }
        if (only) { yh += 3; reducible++; }       /* jun_chanta */
        else if (touch) { yh += 2; reducible++; } /* chanta */
    }
    if (nseq == 2) {
        int ra = ctz64(seqs[0]) % 13, rb = ctz64(seqs[1]) % 13;
        if (ra == rb && ctz64(seqs[0]) / 13 != ctz64(seqs[1]) / 13) { yh += 2; reducible++; } /* identical */
        if (two_sided(rd, win_card)) { yh += 2; reducible++; }                                  /* pinfu */
    }
    if (tsumo && (flags & FL_FIRST_DRAW) && !called) yh += 4; /* tenhou / chiihou */
    if (form == F_TWO_QUADS || form == F_PURE_STRAIGHT) { yh += 6; reducible++; }
    if (called || has_joker) yh -= reducible; /* R32 */
    int bonus = 0;
    if (nseq_nojk) bonus += nseq_nojk < P->sequence_bonus_max ? nseq_nojk : P->sequence_bonus_max;
    if (dora >= 0 && (real >> dora & 1)) bonus += 1;
    if (flags & FL_DEALER) bonus += 1;
    e.yaku_han = yh;
    e.total = yh + bonus;
    e.yakuman = e.total >= P->counted_yakuman_han;
    return e;
}

static int illegal_joker(u64 hand, u64 meld) {
    if (!(hand & JK_BIT)) return 0;
    u64 base = hand & ~JK_BIT, held = (hand | meld) & REAL;
    for (int c = 0; c < 52; c++)
        if (!(held >> c & 1) && eval_is_win(base | (1ULL << c), meld)) return 1;
    /* the stand-in-blind search (nothing counts as held), as reference.relaxed_joker_standard */
    return eval_std_exists(hand & REAL, 1, meld ? 1 : 2, 1, 0);
}

void score_hand_c(const score_params_t *P, u64 hand, u64 meld, int win_card, int flags, int min_han, int dora,
                  u64 furiten, score_out_t *out) {
    reading_t rd[MAX_READINGS];
    out->reason = out->han = out->yakuman = out->points = out->yaku_han = 0;
    int n = eval_readings(hand, meld, rd, MAX_READINGS);
    if (!n) {
        out->reason = illegal_joker(hand, meld) ? 2 : 1;
        return;
    }
    if (!(flags & FL_TSUMO) && furiten && (eval_waits(hand & ~(1ULL << win_card), meld) & furiten)) {
        out->reason = 3;
        return;
    }
    int best = -1, any_yaku = 0, need = min_han > 1 ? min_han : 1;
    eval_t be = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        eval_t e = evaluate(P, &rd[i], meld, win_card, flags, dora);
        int real_yakuman = rd[i].form == F_ROYAL || rd[i].form == F_CROWN;
        if (e.yaku_han >= 1) any_yaku = 1;
        if (!real_yakuman && e.yaku_han < need) continue;
        int better = best < 0 || e.yakuman > be.yakuman ||
                     (e.yakuman == be.yakuman &&
                      (e.total > be.total || (e.total == be.total && P->tiebreak_yaku && e.yaku_han > be.yaku_han)));
        if (better) {
            best = i;
            be = e;
        }
    }
    if (best < 0) {
        out->reason = any_yaku ? 5 : 4;
        return;
    }
    int real_yakuman = rd[best].form == F_ROYAL || rd[best].form == F_CROWN;
    out->yakuman = be.yakuman;
    out->yaku_han = real_yakuman ? 0 : be.yaku_han;
    out->han = be.total;
    out->points = be.yakuman ? P->yakuman_value * be.yakuman : be.total * P->points_per_han;
}
