/* Meld8 fast engine: reference.py line for line, on one game_t. See _engine.h. */
#include "_engine.h"
#include <string.h>
#include "_splitmix.h"

static const int PON_PAIRS[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

/* ---------------------------------------------------------------- seeding (seeding.py) */
static void shuffled_deck(u64 seed, u64 index, int8_t *deck) {
    u64 state = mix64(seed ^ mix64(index * GOLDEN));
    for (int i = 0; i < 53; i++) deck[i] = (int8_t)i;
    for (int i = 52; i > 0; i--) {
        int j = (int)(splitmix_next(&state) % (u64)(i + 1));
        int8_t t = deck[i];
        deck[i] = deck[j];
        deck[j] = t;
    }
}

static inline int rank_of(int c) { return c % 13 + 1; }
static inline int suit_of(int c) { return c / 13; }
static inline int card_of(int rank, int suit) { return suit * 13 + rank - 1; }
static inline int dealer_of(const game_t *g, const rules_t *R) { return (g->chiicha + g->round) % R->P; }

/* ---------------------------------------------------------------- the wait table (issue 20 item 3)
 * Why: each discard asks every other seat "Ron?" and each draw asks the drawer "Tsumo?". Both questions are
 * "is this card one of the seat's waits": for a card c it does not hold, eval_is_win(hand | c) exactly when
 * c is in eval_waits(hand) (R33's waits; tests/test_wait_table.py checks it), and the scorer's furiten test
 * (R33) computes those very waits again. A seat's hand changes once per turn (its discard) while it is asked
 * up to P times, so the engine keeps each seat's waits and a check becomes `waits & card` before the (still
 * required) scoring and yaku check (R30-R32). bench/wait_table.py measures it.
 * Where: outside the record (wait_table_t, _engine.h), keyed by the hand and the meld it was computed for.
 * The waits are a pure function of that key, so an entry whose key is the seat's hand and meld now is right
 * whatever the record's history (a restore, an edit, a forged record): nothing to validate, nothing to
 * invalidate, and records stay the plain values callers hand in and compare byte for byte. */
/* WT_TENPAI by default: the one mode that measured no slower than the table-less checks (README, "wait
 * table"): with today's evaluator a wait costs ~7-14 is_win checks, so computing the waits of every hand
 * (lazy, eager) costs more than it saves; computing them only for hands that have shown a win form saves the
 * scorer's repeated furiten waits (-5% instructions per env step, callgrind). */
int eng_wait_mode = WT_TENPAI;

u64 eng_wait_hand(const game_t *g, int seat) {
    if (g->phase == PH_OVER) return 0;
    u64 h = g->hands[seat];
    if (seat != g->current) return h;
    if (g->phase == PH_DRAW) return g->drawn >= 0 ? h & ~(1ULL << g->drawn) : 0;
    return g->phase == PH_CALL_DISCARD ? 0 : h;
}

/* seat's waits for `hand` (its hand now, 7 cards with the meld): the entry when its key matches, else
 * computed into it */
static inline u64 table_waits(const game_t *g, wait_table_t *wt, int seat, u64 hand) {
    u64 meld = g->melds[seat];
    if (wt->hand[seat] != hand || wt->meld[seat] != meld) {
        wt->hand[seat] = hand;
        wt->meld[seat] = meld;
        wt->waits[seat] = eval_waits(hand, meld);
    }
    return wt->waits[seat];
}

/* the waits to test `card` against for a seat holding `hand` (card not held), or -1 when hand + card is no win
 * form. WT_TENPAI asks eval_is_win first and computes the waits only for a hand that has just been shown to
 * have one (a wait costs ~10 is_win checks on random-play hands, bench/wait_table.py); the other modes
 * always read the entry. */
static inline int64_t waits_for_check(const game_t *g, wait_table_t *wt, int seat, u64 hand, int card) {
    u64 meld = g->melds[seat];
    if (eng_wait_mode == WT_TENPAI && (wt->hand[seat] != hand || wt->meld[seat] != meld) &&
        !eval_is_win(hand | (1ULL << card), meld))
        return -1;
    return (int64_t)table_waits(g, wt, seat, hand);
}

u64 eng_seat_waits(const game_t *g, int seat, wait_table_t *wt) {
    u64 hand = eng_wait_hand(g, seat);
    if (!hand) return 0;
    return wt ? table_waits(g, wt, seat, hand) : eval_waits(hand, g->melds[seat]);
}

/* ---------------------------------------------------------------- setup */
static void draw_card(game_t *g, int seat) {
    int card = g->wall[g->wall_pos++];
    g->hands[seat] |= 1ULL << card;
    g->drawn = (int8_t)card;
    g->draws_taken[seat]++;
    g->first_draw = g->draws_taken[seat] == 1 && !g->any_call;
    g->last_card = g->wall_pos == g->wall_end;
    g->current = (int8_t)seat;
    g->phase = PH_DRAW;
    g->kuikae = 0;
}

static void start_deal(game_t *g, const rules_t *R) {
    int8_t deck[53];
    g->deals++;
    shuffled_deck(g->seed, (u64)g->deals, deck);
    int P = R->P, dealer = dealer_of(g, R), pos = 0;
    memset(g->hands, 0, sizeof g->hands);
    for (int i = 0; i < HAND_SIZE; i++)
        for (int k = 0; k < P; k++) g->hands[(dealer + k) % P] |= 1ULL << deck[pos++];
    g->wall_len = (uint8_t)(53 - pos);
    memcpy(g->wall, deck + pos, (size_t)g->wall_len);
    g->wall_pos = 0;
    g->wall_end = (uint8_t)(g->wall_len - R->wall_limit);
    memset(g->melds, 0, sizeof g->melds);
    memset(g->ndisc, 0, sizeof g->ndisc);
    memset(g->called, 0, sizeof g->called);
    memset(g->calls_used, 0, sizeof g->calls_used);
    memset(g->dead, 0, sizeof g->dead);
    memset(g->draws_taken, 0, sizeof g->draws_taken);
    g->any_call = 0;
    g->dora_ind = -1;
    g->dealer_discarded = 0;
    g->claim_n = 0;
    g->kuikae = 0;
    g->first_draw = g->last_card = 0;
    g->drawn = -1;
    draw_card(g, dealer);
}

/* ---------------------------------------------------------------- queries */
static u64 furiten_mask(const game_t *g, int seat) {
    u64 m = 0;
    for (int i = 0; i < g->ndisc[seat]; i++)
        if (!(g->called[seat] >> i & 1)) m |= 1ULL << g->discards[seat][i];
    return m;
}

static int win_flags(const game_t *g, const rules_t *R, int seat, int tsumo, int last_card) {
    return (tsumo ? FL_TSUMO : 0) | (seat == dealer_of(g, R) ? FL_DEALER : 0) |
           (tsumo && g->first_draw ? FL_FIRST_DRAW : 0) | (last_card ? FL_LAST_CARD : 0);
}

static int dora_card(const game_t *g) {
    return g->dora_ind >= 0 ? suit_of(g->dora_ind) * 13 + rank_of(g->dora_ind) % 13 : -1;
}

/* the scoring and yaku part of a win check (R30-R32; furiten: the cards the scorer tests, 0 when already done) */
static int score_ok(const game_t *g, const rules_t *R, int seat, u64 hand, int win_card, int tsumo, int last_card,
                    u64 furiten, score_out_t *so) {
    int flags = win_flags(g, R, seat, tsumo, last_card), dora = dora_card(g);
    score_hand_c(&R->sp, hand, g->melds[seat], win_card, flags, R->min_han[g->round], dora, furiten, so);
    return so->reason == 0;
}

static int wins(const game_t *g, const rules_t *R, int seat, u64 hand, int win_card, int tsumo, int last_card,
                score_out_t *so) {
    if (!eval_is_win(hand, g->melds[seat])) return 0;
    return score_ok(g, R, seat, hand, win_card, tsumo, last_card, tsumo ? 0 : furiten_mask(g, seat), so);
}

/* Ron on `card` for a seat holding `hand` (7 cards with the meld). With the table: the card must be a wait
 * (the win form, R26), no wait may be in the seat's own discards (furiten, R33, the scorer's own test), then
 * the scorer decides yaku and minimum; the same answer as wins(), fewer searches. wt NULL: wins() itself. */
static inline __attribute__((always_inline)) int ron_ok(const game_t *g, wait_table_t *wt, const rules_t *R, int seat,
                                                        u64 hand, int card, int final) {
    score_out_t so;
    if (!wt || eng_wait_mode == WT_OFF) return wins(g, R, seat, hand | (1ULL << card), card, 0, final, &so);
    int64_t w = waits_for_check(g, wt, seat, hand, card);
    if (w < 0 || !((u64)w >> card & 1) || ((u64)w & furiten_mask(g, seat))) return 0;
    return score_ok(g, R, seat, hand | (1ULL << card), card, 0, final, 0, &so);
}

/* Tsumo on the drawn card: with the table, the drawn card must be a wait of the hand before the draw */
static inline __attribute__((always_inline)) int tsumo_ok(const game_t *g, wait_table_t *wt, const rules_t *R,
                                                          int seat) {
    score_out_t so;
    if (!wt || eng_wait_mode == WT_OFF || g->drawn < 0)
        return wins(g, R, seat, g->hands[seat], g->drawn, 1, g->last_card, &so);
    int64_t w = waits_for_check(g, wt, seat, g->hands[seat] & ~(1ULL << g->drawn), g->drawn);
    return w >= 0 && ((u64)w >> g->drawn & 1) && score_ok(g, R, seat, g->hands[seat], g->drawn, 1, g->last_card, 0, &so);
}

static u64 discard_options(const game_t *g, int seat) { return g->hands[seat] & ~g->kuikae & REAL; }

static inline u64 kuikae_after(const rules_t *R, int action, int card) {
    if (!R->kuikae_on) return 0;
    int r = rank_of(card), s = suit_of(card);
    if (action < CHII_LOW_A) return RANKM[r - 1];
    if (action == CHII_LOW_A && r + 3 <= 13) return 1ULL << card_of(r + 3, s);
    if (action == CHII_HIGH_A && r - 3 >= 1) return 1ULL << card_of(r - 3, s);
    return 0;
}

static inline u64 call_cards(int action, int card) {
    int r = rank_of(card), s = suit_of(card), a, b;
    if (action < CHII_LOW_A) {
        return (1ULL << card_of(r, PON_PAIRS[action - PON_A][0])) | (1ULL << card_of(r, PON_PAIRS[action - PON_A][1]));
    }
    if (action == CHII_LOW_A) { a = r + 1; b = r + 2; }
    else if (action == CHII_MID_A) { a = r - 1; b = r + 1; }
    else { a = r - 2; b = r - 1; }
    if (a < 1 || b > 13) return 0;
    return (1ULL << card_of(a, s)) | (1ULL << card_of(b, s));
}

/* always inlined: discard() is the hot caller (a second caller, eng_claim_window, made GCC stop inlining it: -25% steps) */
static inline __attribute__((always_inline)) u64 claim_options(const game_t *g, wait_table_t *wt, const rules_t *R, int seat,
                                                               int card, int discarder, int final, int dealer_first) {
    if (g->dead[seat]) return 0;
    u64 opts = 0, hand = g->hands[seat];
    if (ron_ok(g, wt, R, seat, hand, card, final)) opts |= 1ULL << RON_A;
    if (final || dealer_first || g->calls_used[seat]) return opts;
    int chii_ok = seat == (discarder + 1) % R->P;
    int last = chii_ok ? CHII_HIGH_A : CHII_LOW_A - 1;
    for (int a = PON_A; a <= last; a++) {
        u64 pair = call_cards(a, card);
        if (!pair || (hand & pair) != pair) continue;
        u64 after = hand & ~pair;
        if (after & ~(kuikae_after(R, a, card) | JK_BIT)) opts |= 1ULL << a;
    }
    return opts;
}

static inline __attribute__((always_inline)) void compute_mask(game_t *g, const rules_t *R, wait_table_t *wt) {
    if (g->phase == PH_OVER) {
        g->mask = 0;
        g->acting = -1;
        return;
    }
    if (g->phase == PH_CLAIM) {
        g->acting = g->claim_asked[g->claim_idx];
        g->mask = g->claim_opts[g->claim_idx];
        return;
    }
    int seat = g->current;
    g->acting = (int8_t)seat;
    u64 m = discard_options(g, seat);
    if (g->phase == PH_DRAW && !g->dead[seat] && tsumo_ok(g, wt, R, seat)) m |= 1ULL << TSUMO_A;
    g->mask = m;
}

/* ---------------------------------------------------------------- ends of deals */
static void finish(game_t *g, const rules_t *R) {
    int P = R->P, order[MAXP], bonus[MAXP];
    for (int i = 0; i < P; i++) order[i] = i;
    for (int i = 0; i < P; i++) /* by score desc, then seat order from the chiicha (R40) */
        for (int j = i + 1; j < P; j++) {
            int a = order[i], b = order[j];
            int worse = g->scores[b] > g->scores[a] ||
                        (g->scores[b] == g->scores[a] && (b - g->chiicha + P) % P < (a - g->chiicha + P) % P);
            if (worse) { order[i] = b; order[j] = a; }
        }
    if (R->placement_share) {
        int i = 0;
        while (i < P) {
            int j = i, sum = 0;
            while (j + 1 < P && g->scores[order[j + 1]] == g->scores[order[i]]) j++;
            for (int k = i; k <= j; k++) sum += R->placement[k];
            /* floor division, as Python's // */
            int n = j - i + 1, share = sum >= 0 ? sum / n : -((-sum + n - 1) / n);
            for (int k = i; k <= j; k++) bonus[order[k]] = share;
            i = j + 1;
        }
    } else {
        for (int k = 0; k < P; k++) bonus[order[k]] = R->placement[k];
    }
    for (int k = 0; k < P; k++) g->placements[order[k]] = (uint8_t)(k + 1);
    for (int p = 0; p < P; p++) {
        g->final_scores[p] = g->scores[p] + bonus[p];
        if (!R->reward_rank) g->rewards[p] += (float)bonus[p] / 10000.0f;
        else g->rewards[p] += g->placements[p] == 1 ? 1.0f : (g->placements[p] == P ? -1.0f : 0.0f);
    }
    g->phase = PH_OVER;
    g->current = -1;
}

static void end_deal(game_t *g, const rules_t *R, int kind, const int *deltas) {
    g->result = (int8_t)kind;
    g->hand_round = g->round;
    for (int p = 0; p < R->P; p++) {
        g->deltas[p] = deltas[p];
        g->scores[p] += deltas[p];
        if (!R->reward_rank) g->rewards[p] += (float)deltas[p] / 10000.0f;
    }
    if (kind == RES_DRAW && (R->max_replays < 0 || g->replays < R->max_replays)) {
        g->replays++;
    } else {
        g->round++;
        g->replays = 0;
    }
    g->claim_n = 0;
    if (g->round >= R->rounds) finish(g, R);
    else start_deal(g, R);
}

static void win(game_t *g, const rules_t *R, int seat, int card, int discarder, int last_card) {
    int tsumo = discarder < 0, P = R->P, deltas[MAXP] = {0};
    u64 hand = g->hands[seat] | (tsumo ? 0 : 1ULL << card);
    score_out_t so;
    wins(g, R, seat, hand, card, tsumo, last_card, &so);
    if (tsumo) {
        int share = P == 3 ? so.points / (P - 1) : so.points;
        for (int p = 0; p < P; p++)
            if (p != seat) { deltas[p] -= share; deltas[seat] += share; }
    } else {
        deltas[discarder] -= so.points;
        deltas[seat] += so.points;
    }
    g->win_seat = (int8_t)seat;
    g->lose_seat = (int8_t)discarder;
    g->win_hand = hand;
    g->win_meld = g->melds[seat];
    g->win_card = (int8_t)card;
    g->win_han = (int16_t)so.han;
    g->win_points = so.points;
    g->win_yakuman = (int8_t)so.yakuman;
    g->win_flags = (int8_t)win_flags(g, R, seat, tsumo, last_card);
    g->win_dora = (int8_t)dora_card(g);
    g->win_min_han = (int8_t)R->min_han[g->round];
    end_deal(g, R, tsumo ? RES_TSUMO : RES_RON, deltas);
}

static void chombo(game_t *g, const rules_t *R, int seat) {
    int deltas[MAXP] = {0};
    for (int p = 0; p < R->P; p++)
        if (p != seat) { deltas[p] += R->chombo_payment; deltas[seat] -= R->chombo_payment; }
    g->win_seat = -1;
    g->lose_seat = (int8_t)seat;
    end_deal(g, R, RES_CHOMBO, deltas);
}

/* ---------------------------------------------------------------- claims */
static inline __attribute__((always_inline)) void no_claim(game_t *g, const rules_t *R, int discarder, int final) {
    if (final) {
        int deltas[MAXP] = {0};
        g->win_seat = g->lose_seat = -1;
        end_deal(g, R, RES_DRAW, deltas);
    } else {
        draw_card(g, (discarder + 1) % R->P);
    }
}

static void call(game_t *g, const rules_t *R, int seat, int action, int card, int discarder) {
    u64 pair = call_cards(action, card);
    g->hands[seat] &= ~pair;
    g->melds[seat] = pair | (1ULL << card);
    g->called[discarder] |= 1u << (g->ndisc[discarder] - 1);
    g->calls_used[seat] = 1;
    g->caller = (int8_t)seat;
    g->any_call = 1;
    g->current = (int8_t)seat;
    g->phase = PH_CALL_DISCARD;
    g->kuikae = kuikae_after(R, action, card);
    g->drawn = -1;
}

static void resolve_claims(game_t *g, const rules_t *R) {
    int n = g->claim_n, card = g->claim_card, d = g->claim_discarder, final = g->claim_final;
    g->claim_n = 0;
    for (int i = 0; i < n; i++)
        if (g->claim_resp[i] == RON_A) { win(g, R, g->claim_asked[i], card, d, final); return; }
    for (int i = 0; i < n; i++)
        if (g->claim_resp[i] >= PON_A && g->claim_resp[i] < CHII_LOW_A) {
            call(g, R, g->claim_asked[i], g->claim_resp[i], card, d);
            return;
        }
    for (int i = 0; i < n; i++)
        if (g->claim_resp[i] >= CHII_LOW_A && g->claim_resp[i] <= CHII_HIGH_A) {
            call(g, R, g->claim_asked[i], g->claim_resp[i], card, d);
            return;
        }
    no_claim(g, R, d, final);
}

static void discard(game_t *g, const rules_t *R, int seat, int card, wait_table_t *wt) {
    g->hands[seat] &= ~(1ULL << card);
    if (wt && eng_wait_mode == WT_EAGER) table_waits(g, wt, seat, g->hands[seat]);
    g->discards[seat][g->ndisc[seat]++] = (int8_t)card;
    int dealer_first = seat == dealer_of(g, R) && !g->dealer_discarded;
    if (dealer_first) {
        g->dealer_discarded = 1;
        g->dora_ind = (int8_t)card;
    }
    g->drawn = -1;
    g->kuikae = 0;
    int final = g->wall_end == g->wall_pos, n = 0;
    for (int k = 1; k < R->P; k++) {
        int s = (seat + k) % R->P;
        u64 opts = claim_options(g, wt, R, s, card, seat, final, dealer_first);
        if (opts) {
            g->claim_asked[n] = (int8_t)s;
            g->claim_opts[n] = opts | (1ULL << PASS_A);
            n++;
        }
    }
    if (!n) {
        no_claim(g, R, seat, final);
        return;
    }
    g->claim_n = (int8_t)n;
    g->claim_idx = 0;
    g->claim_card = (int8_t)card;
    g->claim_discarder = (int8_t)seat;
    g->claim_final = (int8_t)final;
    g->phase = PH_CLAIM;
}

/* ---------------------------------------------------------------- public */
void eng_reset(game_t *g, const rules_t *R, uint64_t seed) {
    memset(g, 0, sizeof *g);
    g->seed = seed;
    for (int p = 0; p < R->P; p++) g->scores[p] = R->starting_score;
    if (R->starting_dealer >= 0) {
        g->chiicha = (int8_t)R->starting_dealer;
    } else {
        int8_t deck[53];
        shuffled_deck(seed, 0, deck);
        int best = 0, bs = -1;
        for (int p = 0; p < R->P; p++) {
            int c = deck[p];
            int s = c == 52 ? 100 * 8 : ((rank_of(c) == 1 ? 14 : rank_of(c)) * 8 + R->suit_rank[suit_of(c)]);
            if (s > bs) { bs = s; best = p; }
        }
        g->chiicha = (int8_t)best;
    }
    g->result = RES_NONE;
    g->caller = -1;
    start_deal(g, R);
    compute_mask(g, R, NULL);
}

/* ---------------------------------------------------------------- state as a value (records.py) */
/* The claim window a discard of claim_card by claim_discarder opens with the hands as they are now
 * (discard() builds the same one): the asked seats in turn order and their options, PASS included. */
int eng_claim_window(const game_t *g, const rules_t *R, int8_t *asked, u64 *opts) {
    int card = g->claim_card, seat = g->claim_discarder, final = g->wall_end == g->wall_pos, n = 0;
    int dealer_first = seat == dealer_of(g, R) && g->ndisc[seat] == 1; /* the dealer's first discard (R18) */
    for (int k = 1; k < R->P; k++) {
        int s = (seat + k) % R->P;
        u64 o = claim_options(g, NULL, R, s, card, seat, final, dealer_first);
        if (o) {
            asked[n] = (int8_t)s;
            opts[n] = o | (1ULL << PASS_A);
            n++;
        }
    }
    return n;
}

/* the legal-action mask and acting seat compute_mask would set now */
u64 eng_mask_now(const game_t *g, const rules_t *R, int *acting) {
    game_t t = *g;
    compute_mask(&t, R, NULL);
    *acting = t.acting;
    return t.mask;
}

/* Recompute everything the engine caches from the hands (the claim window, the legal mask) after a record
 * was edited: a claim window is rebuilt as the discard would open it now (every eligible seat asked again,
 * answers forgotten); when nobody is eligible any more the game goes on as discard() would (next draw,
 * or the drawn round after the final discard). */
void eng_refresh(game_t *g, const rules_t *R) {
    if (g->phase == PH_CLAIM) {
        int8_t asked[MAXP - 1] = {0};
        u64 opts[MAXP - 1] = {0};
        int n = eng_claim_window(g, R, asked, opts);
        g->claim_final = (int8_t)(g->wall_end == g->wall_pos);
        for (int i = 0; i < MAXP - 1; i++) {
            g->claim_asked[i] = i < n ? asked[i] : 0;
            g->claim_opts[i] = i < n ? opts[i] : 0;
            g->claim_resp[i] = 0;
        }
        g->claim_idx = 0;
        g->claim_n = (int8_t)n;
        if (!n) no_claim(g, R, g->claim_discarder, g->claim_final);
    }
    compute_mask(g, R, NULL);
}

/* would `seat` be offered Ron (R29-R33: the win form, yaku and minimum, furiten; never a dead seat) if the acting
 * seat discarded `card` now: the test discard() runs for it, without a table */
int eng_ron_offered(const game_t *g, const rules_t *R, int seat, int card) {
    if (g->dead[seat]) return 0;
    return ron_ok(g, NULL, R, seat, g->hands[seat], card, g->wall_end == g->wall_pos);
}

/* exported for _fast.call_tables (the test that C and meld8_env/calls.py agree) */
u64 eng_call_cards(int action, int card) { return call_cards(action, card); }
u64 eng_kuikae_after(const rules_t *R, int action, int card) { return kuikae_after(R, action, card); }

/* what a step clears before it acts: the last step's rewards and hand outcome */
static inline void clear_step(game_t *g) {
    for (int p = 0; p < MAXP; p++) g->rewards[p] = 0, g->deltas[p] = 0;
    g->result = RES_NONE;
    g->caller = -1;
}

void eng_clear_step(game_t *g) { clear_step(g); }


int eng_step_t(game_t *g, const rules_t *R, int action, wait_table_t *wt) {
    if (g->phase == PH_OVER || action < 0 || action > 63) return -1;
    int seat = g->acting;
    if (!(g->mask >> action & 1)) {
        if (!R->penalty_mode) return -1;
        clear_step(g);
        if (action == TSUMO_A || action == RON_A) {
            chombo(g, R, seat);
            compute_mask(g, R, wt);
            return 0;
        }
        g->dead[seat] = 1;
        if (g->phase == PH_CLAIM) action = PASS_A;
        else {
            u64 opts = discard_options(g, seat);
            action = (g->drawn >= 0 && (opts >> g->drawn & 1)) ? g->drawn : 63 - __builtin_clzll(opts);
        }
    } else {
        clear_step(g);
    }
    if (g->phase == PH_CLAIM) {
        g->claim_resp[g->claim_idx++] = (int8_t)action;
        if (g->claim_idx == g->claim_n) resolve_claims(g, R);
    } else if (action == TSUMO_A) {
        win(g, R, seat, g->drawn, -1, g->last_card);
    } else {
        discard(g, R, seat, action, wt);
    }
    compute_mask(g, R, wt);
    return 0;
}

int eng_step(game_t *g, const rules_t *R, int action) { return eng_step_t(g, R, action, NULL); }

/* ---------------------------------------------------------------- observations (observation.py) */
const char *const OBS_FIELD_NAMES[OBS_NFIELDS] = {
    "hand", "drawn", "melds", "discarded", "called", "discard_order", "dora_indicator", "claim_card",
    "discarder", "phase", "dealer", "round", "calls_used", "scores", "replays", "wall_left", "min_han",
    "oracle_hands", "oracle_wall",
};

void eng_obs_layout(const rules_t *R, int oracle, obs_layout_t *L) {
    int P = R->P;
    const int size[OBS_NFIELDS] = {
        N_CARDS, N_CARDS, P * N_CARDS, P * N_CARDS, P * N_CARDS, P * MAXD, N_CARDS, N_CARDS, P, 4, P, R->rounds,
        P, P, 1, 1, 1, oracle ? P * N_CARDS : 0, oracle ? N_CARDS : 0,
    };
    int off = 0;
    for (int f = 0; f < OBS_NFIELDS; f++) {
        L->off[f] = off;
        L->size[f] = size[f];
        off += size[f];
    }
    L->total = off;
}

void eng_prepare_rules(rules_t *R) {
    eng_obs_layout(R, 0, &R->obs[0]);
    eng_obs_layout(R, 1, &R->obs[1]);
}

int eng_obs_size(const rules_t *R, int oracle) { return R->obs[oracle != 0].total; }

static void plane(uint8_t *out, u64 m) {
    for (u64 t = m; t; t &= t - 1) out[ctz64(t)] = 1;
}

void eng_encode(const game_t *g, const rules_t *R, int seat, int oracle, uint8_t *out) {
    int P = R->P;
    const obs_layout_t *L = &R->obs[oracle != 0];
    memset(out, 0, (size_t)L->total);
#define F(name) (out + L->off[OBS_##name])
    plane(F(HAND), g->hands[seat]);
    if (g->drawn >= 0 && g->acting == seat && g->phase == PH_DRAW) F(DRAWN)[g->drawn] = 1;
    for (int k = 0; k < P; k++) {
        int p = (seat + k) % P;
        plane(F(MELDS) + N_CARDS * k, g->melds[p]);
        for (int i = 0; i < g->ndisc[p]; i++) {
            int c = g->discards[p][i];
            F(DISCARDED)[N_CARDS * k + c] = 1;
            if (g->called[p] >> i & 1) F(CALLED)[N_CARDS * k + c] = 1;
            F(DISCARD_ORDER)[MAXD * k + i] = (uint8_t)(c + 1);
        }
        F(CALLS_USED)[k] = g->calls_used[p];
        int sc = g->scores[p] >= 0 ? g->scores[p] / 1000 : -((-g->scores[p] + 999) / 1000); /* floor */
        sc += 128;
        F(SCORES)[k] = (uint8_t)(sc < 0 ? 0 : sc > 255 ? 255 : sc);
    }
    if (g->dora_ind >= 0) F(DORA)[g->dora_ind] = 1;
    if (g->phase == PH_CLAIM) {
        F(CLAIM_CARD)[g->claim_card] = 1;
        F(DISCARDER)[(g->claim_discarder - seat + P) % P] = 1;
    }
    F(PHASE)[g->phase] = 1;
    if (g->phase != PH_OVER) {
        F(DEALER)[(dealer_of(g, R) - seat + P) % P] = 1;
        F(ROUND)[g->round] = 1;
        F(MIN_HAN)[0] = (uint8_t)R->min_han[g->round];
    }
    F(REPLAYS)[0] = (uint8_t)(g->replays > 255 ? 255 : g->replays);
    int left = g->wall_end - g->wall_pos;
    F(WALL_LEFT)[0] = (uint8_t)(left > 0 ? left : 0);
    if (oracle) {
        for (int k = 0; k < P; k++) plane(F(ORACLE_HANDS) + N_CARDS * k, g->hands[(seat + k) % P]);
        for (int i = g->wall_pos; i < g->wall_end; i++) F(ORACLE_WALL)[i - g->wall_pos] = (uint8_t)(g->wall[i] + 1);
    }
#undef F
}
