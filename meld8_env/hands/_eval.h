/* Meld8 hand evaluator core (docs/rules.md R23-R28, R31, R33), shared by _native.c.
 *
 * A hand is a 53-bit mask in a uint64: bit = card id (R5: suit * 13 + rank - 1, Joker = 52).
 * Suit rows are contiguous 13-bit lanes, so a sequence is three adjacent bits that do not cross a
 * lane (start rank A..J), and rank-mates are the same bit in the other lanes (shifts of 13).
 *
 * Standard form: depth-first search that always places the lowest remaining real card (in a pair,
 * a triplet, or a sequence, with the Joker as one specific missing card), so every reading is
 * produced exactly once. Special forms are O(1) bit tests.
 */
#ifndef MELD8_EVAL_H
#define MELD8_EVAL_H

#include <stdint.h>
#include <string.h>

typedef uint64_t u64;

#define JK_BIT (1ULL << 52)
#define REAL ((1ULL << 52) - 1)
#define ROW 0x1FFFULL
#define UNREACHABLE 99

enum { F_STANDARD = 0, F_FOUR_PAIRS, F_TWO_QUADS, F_PURE_STRAIGHT, F_ROYAL, F_CROWN };

typedef struct {
    int form;
    int joker_as; /* card id or -1 */
    int ngroups;
    u64 groups[4];
} reading_t;

#define MAX_READINGS 32

extern u64 RANKM[13];
extern u64 NOT_K, NOT_QK;

void eval_init(void);
int eval_is_win(u64 hand, u64 meld);
int eval_std_exists(u64 m, int jk, int melds, int pair, u64 held);
int eval_readings(u64 hand, u64 meld, reading_t *out, int cap);
u64 eval_waits(u64 hand, u64 meld);
int eval_distance(u64 hand, u64 meld, u64 unseen);
/* 1 if eval_distance(hand, meld, unseen) <= r, searched as a yes/no question (faster). */
int eval_distance_at_most(u64 hand, u64 meld, u64 unseen, int r);
/* Cards x of pool (not held) with eval_distance(hand + x, meld, unseen - x) <= dist - 1: the
 * acceptance count of HAND_EVAL_NOTES.md restricted to pool, for a hand of distance dist. */
int eval_acceptance(u64 hand, u64 meld, u64 unseen, u64 pool, int dist);
/* The same count from one search over every best completion (dist must be the hand's exact distance). */
int eval_acceptance_fast(u64 hand, u64 meld, u64 unseen, u64 pool, int dist);
/* The bots' tie-break count: eval_acceptance (dist the hand's exact distance) when that count is above beat, else
 * some count <= beat (the caller only needs to know that it does not beat beat; beat < 0: always exact). */
int eval_acceptance_beat(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, int beat);
/* Witnesses: standard winning W found by yes/no searches, each as its held cards (W & hand) and its drawn
 * cards (W - hand: concrete cards, every spare card of a rank W draws by count, the Joker if W draws it). For a
 * hand of exact distance dist, a W with |W & hand| = size - dist proves each of its drawn cards accepted. */
#define EVAL_MAX_WITNESS 64
typedef struct {
    int n;
    u64 held[EVAL_MAX_WITNESS], drawn[EVAL_MAX_WITNESS];
} eval_witness_t;
/* eval_distance_at_most, and wit (NULL: none) gets the standard W that answered yes (n = 0: none, e.g. a special
 * form answered or the answer is no) */
int eval_distance_at_most_w(u64 hand, u64 meld, u64 unseen, int r, eval_witness_t *wit);
/* eval_distance, and wit (NULL: none) gets a standard W of the best overlap (n = 0: none, e.g. when a special form
 * reaches it and no standard W does) */
int eval_distance_w(u64 hand, u64 meld, u64 unseen, eval_witness_t *wit);
/* An upper bound on a hand's special-form overlap (R26.2-5: |W & hand| over special-form W) that says nothing. A
 * hand - x has no special W that hand lacks (x, seen once discarded, is in none of them), so the overlap of hand
 * bounds every hand - x: the bots pass it to the calls below to skip the special forms where they cannot matter. */
#define SP_UNKNOWN 99
/* eval_distance_w, and sp (NULL: none) gets the hand's special-form overlap (-1 with a meld or no form) */
int eval_distance_sp(u64 hand, u64 meld, u64 unseen, eval_witness_t *wit, int *sp);
/* eval_distance_w where the distance is below `below`, else `below` (the search cuts every W that cannot get there);
 * wit as there. A `below` above UNREACHABLE counts as UNREACHABLE (an unreachable hand answers 99). */
int eval_distance_below(u64 hand, u64 meld, u64 unseen, int below, eval_witness_t *wit);
/* eval_distance_at_most_w for a hand whose special-form overlap is at most sp_max (SP_UNKNOWN: not known) */
int eval_distance_at_most_sp(u64 hand, u64 meld, u64 unseen, int r, eval_witness_t *wit, int sp_max);
/* eval_acceptance_beat where known (cards already shown accepted, e.g. by a witness of a best W of hand) are
 * counted without a search; the witnesses of the per-card searches are appended to wl (NULL: not kept); sp_max: an
 * upper bound on hand's special-form overlap (SP_UNKNOWN: none known). */
int eval_acceptance_known(u64 hand, u64 meld, u64 unseen, u64 pool, int dist, int beat, u64 known,
                          eval_witness_t *wl, int sp_max);
/* Which discards leave a hand's own distance d (returned; UNREACHABLE: none asked): one search of hand finds d and a
 * best W (sp: its special-form overlap, as eval_distance_sp), then each allowed card x, ascending, that no W found so
 * far avoids is asked one yes/no question (is hand - x within d?), whose yes brings another best W. leaves: the
 * allowed cards that leave d (some best W of hand avoids them; hand - x reaches no W that hand does not, so the
 * others leave more); wl: the best W found (held and drawn cards, the witnesses' order), each a best W of every
 * hand - x it avoids. acc (NULL or collect_max < 0: never) where d is at most collect_max: no questions, the levels
 * of the hand's own search from that distance down collect every W instead, which gives the leaves and, per allowed
 * card x, acc[x] (64 entries, by card): the drawn cards of the best W that leave x out, hand - x's acceptance set
 * before special forms (eval_collected_acceptance counts it); wl stays empty. *collected (may be NULL): whether acc
 * was filled so (then d is at most collect_max); read acc only then. */
int eval_discard_anchored(u64 hand, u64 meld, u64 unseen, u64 allowed, int *sp, eval_witness_t *wl, u64 *leaves,
                          int collect_max, u64 *acc, int *collected);
/* The acceptance count of hand - x in pool (x a card of hand leaving its exact distance dist) from accx, the drawn
 * cards of the best W of hand that leave x out (eval_discard_anchored's acc[x]): special forms (sp_max: hand's
 * special-form overlap or a bound of it) and pool cards that are not unseen are counted per discard. */
int eval_collected_acceptance(u64 hand, u64 meld, u64 unseen, u64 x, int dist, u64 accx, u64 pool, int sp_max);
/* Distance after every discard in one pass: hand before its discard (8 concealed cards, or 5 with an exposed
 * meld), allowed the discards to rate (real cards of hand; at most 8). For each allowed card x, ascending:
 * card[i] = x, dist[i] = eval_distance(hand - x, meld, unseen) and acc[i] = eval_acceptance_fast(hand - x,
 * meld, unseen, pool, dist[i]) with pool = (neighbours(hand - x) | Joker) & unseen, or 0: acc_mode 0 never,
 * 1 where at least two discards tie for the smallest distance (the bots' tie-break), 2 always.
 * Returns the number of allowed cards. */
int eval_discard_table(u64 hand, u64 meld, u64 unseen, u64 allowed, int acc_mode, int *card, int *dist, int *acc);

static inline int pc64(u64 x) { return __builtin_popcountll(x); }
static inline int ctz64(u64 x) { return __builtin_ctzll(x); }

/* Bit k set where byte k of x is nonzero (byte k: bits 8k..8k+7; a word read from memory with memcpy has its
 * k-th byte there on little-endian machines only). */
static inline u64 nonzero_bytes(u64 x) {
    const u64 low7 = 0x7F7F7F7F7F7F7F7FULL;
    u64 t = (((x & low7) + low7) | x) & ~low7; /* the top bit of each nonzero byte */
    return ((t >> 7) * 0x0102040810204080ULL) >> 56;
}

/* The other cards of the ranks of the cards of s (rank-mates: the same bit in the other suit lanes). */
static inline u64 rank_mates(u64 s) {
    s &= REAL;
    return ((s << 13) | (s >> 13) | (s << 26) | (s >> 26) | (s << 39) | (s >> 39)) & REAL;
}

/* Cards of a set that are rank-mates of, or within two ranks in the same suit of, a card of s. */
static inline u64 neighbours(u64 s) {
    s &= REAL;
    u64 mates = rank_mates(s);
    u64 nb = ((s & NOT_K) << 1) | ((s >> 1) & NOT_K) | ((s & NOT_QK) << 2) | ((s >> 2) & NOT_QK);
    return (mates | nb) & REAL;
}

#endif
