/* Batched scorer (docs/rules.md §7, R26-R38): the C twin of meld8_env/scoring.py. */
#ifndef MELD8_SCORE_H
#define MELD8_SCORE_H
#include "_eval.h"

typedef struct {
    int value_triplet_han, haitei_han, points_per_han, counted_yakuman_han, yakuman_value, sequence_bonus_max;
    int tiebreak_yaku; /* 1: ties broken by standard-yaku han (R28 default) */
} score_params_t;

typedef struct {
    int reason; /* 0 win, 1 no_form, 2 illegal_joker, 3 furiten, 4 no_yaku, 5 below_minimum */
    int han, yakuman, points, yaku_han;
} score_out_t;

enum { FL_TSUMO = 1, FL_DEALER = 2, FL_FIRST_DRAW = 4, FL_LAST_CARD = 8 };

void score_hand_c(const score_params_t *P, u64 hand, u64 meld, int win_card, int flags, int min_han, int dora,
                  u64 furiten, score_out_t *out);
#endif
