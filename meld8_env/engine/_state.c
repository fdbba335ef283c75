/* Card conservation and cache consistency of one engine record (meld8_env/engine/records.py).
 *
 * A record that is restored or stepped from outside (search clones, sampled worlds, edited records) must be
 * one the engine could have reached: each of the 53 cards in exactly one place (a concealed hand, a meld, an
 * uncalled discard, the undrawn wall; a called discard counts once, in the caller's meld), every seat holding
 * the cards its phase requires, and the cached claim window / legal mask matching the hands (an edited record
 * must go through eng_refresh first). Finished games (phase OVER) are not checked: nothing plays them. */
#include <stdio.h>
#include <string.h>
#include "_engine.h"

static const char *card_name(int c, char *buf) {
    if (c == 52) return "JK";
    if (c < 0 || c > 52) { snprintf(buf, 8, "#%d", c); return buf; }
    buf[0] = "A23456789TJQK"[c % 13];
    buf[1] = "shdc"[c / 13];
    buf[2] = 0;
    return buf;
}

/* where a card was found: kind (0 hand, 1 meld, 2 discard, 3 wall) and seat */
static const char *const PLACE[4] = {"hand", "meld", "discards", "wall"};

#define FAIL(...) do { snprintf(msg, (size_t)len, __VA_ARGS__); return 1; } while (0)

static int place(int8_t *kind, int8_t *seat, int c, int k, int s, char *msg, int len) {
    char b1[8];
    if (kind[c] >= 0) {
        if (kind[c] == 3 && k == 3) FAIL("card %s is twice in the wall", card_name(c, b1));
        if (kind[c] == 3) FAIL("card %s is in seat %d's %s and in the wall", card_name(c, b1), s, PLACE[k]);
        if (k == 3) FAIL("card %s is in seat %d's %s and in the wall", card_name(c, b1), seat[c], PLACE[kind[c]]);
        FAIL("card %s is in seat %d's %s and in seat %d's %s", card_name(c, b1), seat[c], PLACE[kind[c]], s,
             PLACE[k]);
    }
    kind[c] = (int8_t)k;
    seat[c] = (int8_t)s;
    return 0;
}

/* the ranges fast.check_records checks in numpy: every field the engine indexes with */
#define RANGE(name, ok) do { if (!(ok)) FAIL("field '%s' out of range", name); } while (0)
int eng_check_ranges(const game_t *g, const rules_t *R, char *msg, int len) {
    int P = R->P;
    RANGE("phase", g->phase >= PH_DRAW && g->phase <= PH_OVER);
    RANGE("acting", g->acting >= -1 && g->acting < P);
    RANGE("current", g->current >= -1 && g->current < P);
    for (int p = 0; p < MAXP; p++) {
        RANGE("ndisc", g->ndisc[p] <= MAXD);
        for (int i = 0; i < MAXD; i++) RANGE("discards", g->discards[p][i] >= -1 && g->discards[p][i] < N_CARDS);
    }
    RANGE("wall_len", g->wall_len <= N_CARDS);
    RANGE("wall_pos", g->wall_pos <= g->wall_len && g->wall_end <= g->wall_len);
    for (int i = 0; g->wall_len && i < N_CARDS; i++) RANGE("wall", g->wall[i] >= 0 && g->wall[i] < N_CARDS);
    RANGE("round", g->round >= 0 && g->round < 16);
    RANGE("claim_n", g->claim_n >= 0 && g->claim_n <= 2 && g->claim_idx >= 0 && g->claim_idx <= 2);
    RANGE("drawn", g->drawn >= -1 && g->drawn < N_CARDS);
    RANGE("dora_ind", g->dora_ind >= -1 && g->dora_ind < N_CARDS);
    RANGE("claim_card", g->claim_card >= -1 && g->claim_card < N_CARDS);
    RANGE("win_card", g->win_card >= -1 && g->win_card < N_CARDS);
    for (int i = 0; i < MAXP - 1; i++) RANGE("claim_asked", g->claim_asked[i] >= -1 && g->claim_asked[i] < P);
    RANGE("claim_discarder", g->claim_discarder >= -1 && g->claim_discarder < P);
    RANGE("win_seat", g->win_seat >= -1 && g->win_seat < P);
    RANGE("lose_seat", g->lose_seat >= -1 && g->lose_seat < P);
    RANGE("caller", g->caller >= -1 && g->caller < P);
    /* the dealer is (chiicha + round) % P: a negative chiicha indexed before the hands (red team, session 32) */
    RANGE("chiicha", g->chiicha >= 0 && g->chiicha < P);
    RANGE("current", g->phase == PH_OVER || g->current >= 0); /* a live game has a current seat */
    /* no score a game can reach lies beyond what the rules let one hand move over every round (the bound
     * meld8_env.rules refuses options by): a score past it would wrap the 32-bit sums */
    long long largest = 2LL * R->sp.yakuman_value, b = (long long)(R->sp.counted_yakuman_han - 1) * R->sp.points_per_han;
    if (b > largest) largest = b;
    if ((long long)R->chombo_payment * (P - 1) > largest) largest = (long long)R->chombo_payment * (P - 1);
    long long bound = (long long)R->starting_score + (long long)R->rounds * largest;
    for (int p = 0; p < P; p++) RANGE("scores", g->scores[p] >= -bound && g->scores[p] <= bound);
    return 0;
}

int eng_check_cards(const game_t *g, const rules_t *R, char *msg, int len) {
    char b1[8];
    if (eng_check_ranges(g, R, msg, len)) return 1;
    if (g->phase == PH_OVER) return 0;
    int8_t kind[N_CARDS], seat[N_CARDS];
    memset(kind, -1, sizeof kind);
    memset(seat, -1, sizeof seat);
    const u64 all = (1ULL << N_CARDS) - 1;
    for (int p = 0; p < MAXP; p++) {
        if (p >= R->P) {
            if (g->hands[p] || g->melds[p] || g->ndisc[p]) FAIL("seat %d holds cards but the rules seat %d players", p, R->P);
            continue;
        }
        if ((g->hands[p] | g->melds[p]) & ~all) FAIL("seat %d's hand or meld has bits above card 52", p);
        for (u64 m = g->hands[p]; m; m &= m - 1)
            if (place(kind, seat, ctz64(m), 0, p, msg, len)) return 1;
        for (u64 m = g->melds[p]; m; m &= m - 1)
            if (place(kind, seat, ctz64(m), 1, p, msg, len)) return 1;
    }
    for (int p = 0; p < R->P; p++)
        for (int i = 0; i < g->ndisc[p]; i++) {
            int c = g->discards[p][i];
            if (c < 0 || c >= N_CARDS) FAIL("seat %d's discard %d is not a card (%d)", p, i, c);
            if (c == 52) FAIL("the Joker (JK) is in seat %d's discards (R12)", p);
            if (g->called[p] >> i & 1) { /* counted in the caller's meld */
                if (kind[c] != 1 || seat[c] == p)
                    FAIL("seat %d's discard %s is marked called but is in no other seat's meld", p, card_name(c, b1));
                continue;
            }
            if (place(kind, seat, c, 2, p, msg, len)) return 1;
        }
    if (g->wall_pos > g->wall_end || g->wall_end > g->wall_len || g->wall_len > N_CARDS)
        FAIL("wall positions out of order (pos %d, end %d, len %d)", g->wall_pos, g->wall_end, g->wall_len);
    for (int i = g->wall_pos; i < g->wall_len; i++) {
        int c = g->wall[i];
        if (c < 0 || c >= N_CARDS) FAIL("wall slot %d is not a card (%d)", i, c);
        if (place(kind, seat, c, 3, -1, msg, len)) return 1;
    }
    int ncalled = 0, nmelds = 0;
    for (int p = 0; p < R->P; p++) ncalled += __builtin_popcount(g->called[p] & ((1u << g->ndisc[p]) - 1)), nmelds += g->melds[p] != 0;
    if (ncalled != nmelds) FAIL("%d discards are marked called but %d seats have a meld", ncalled, nmelds);
    for (int c = 0; c < N_CARDS; c++)
        if (kind[c] < 0) FAIL("card %s is nowhere (not in a hand, meld, discard or the wall)", card_name(c, b1));
    /* counts per seat: 7 (R10), 8 for the seat that has drawn or just called (R11, R19) */
    int cur = g->current, holding = g->phase == PH_DRAW || g->phase == PH_CALL_DISCARD;
    if (cur < 0 || cur >= R->P) FAIL("no current seat in a live game (current %d)", cur);
    for (int p = 0; p < R->P; p++) {
        int nm = pc64(g->melds[p]), n = pc64(g->hands[p]) + nm, want = HAND_SIZE + (holding && p == cur);
        if (nm != 0 && nm != 3) FAIL("seat %d's meld has %d cards (R19: 3)", p, nm);
        if (nm && !g->calls_used[p]) FAIL("seat %d has a meld but no call recorded", p);
        if (n != want)
            FAIL("seat %d holds %d cards, the %s phase needs %d", p, n,
                 g->phase == PH_DRAW ? "draw" : g->phase == PH_CALL_DISCARD ? "call_discard" : "claim", want);
    }
    if (g->phase == PH_DRAW && g->drawn >= 0 && !(g->hands[cur] >> g->drawn & 1))
        FAIL("the drawn card %s is not in seat %d's hand", card_name(g->drawn, b1), cur);
    /* the caches */
    if (g->phase == PH_CLAIM) {
        int8_t asked[MAXP - 1];
        u64 opts[MAXP - 1];
        /* a seat that died answering in this window (an illegal claim in penalty mode, R41: it passes) was
         * asked while alive: the window is the one its discard opened */
        game_t t = *g;
        for (int i = 0; i < g->claim_idx && i < MAXP - 1; i++)
            if (g->claim_asked[i] >= 0 && g->claim_asked[i] < R->P) t.dead[g->claim_asked[i]] = 0;
        int n = eng_claim_window(&t, R, asked, opts), stale = n != g->claim_n || g->claim_idx >= g->claim_n;
        for (int i = 0; !stale && i < n; i++) stale = asked[i] != g->claim_asked[i] || opts[i] != g->claim_opts[i];
        for (int i = 0; !stale && i < g->claim_idx; i++)
            stale = g->claim_resp[i] < 0 || !(opts[i] >> g->claim_resp[i] & 1);
        if (stale) FAIL("the claim window is stale (the hands changed after the discard): call refresh(records, rules)");
    }
    int acting;
    u64 mask = eng_mask_now(g, R, &acting);
    if (mask != g->mask || acting != g->acting)
        FAIL("the legal-action mask is stale (the hands changed after it was computed): call refresh(records, rules)");
    return 0;
}
