/* Meld8 fast engine: the reference engine (meld8_env/engine/reference.py) in C, one struct per game.
 * A batch is a C-contiguous numpy structured array of game_t (dtype in meld8_env/engine/fast.py,
 * checked against sizeof/offsetof at import). Legal actions are a 64-bit mask (action id = bit). */
#ifndef MELD8_ENGINE_H
#define MELD8_ENGINE_H
#include <stdint.h>
#include "../hands/_score.h"

/* Every code below is also defined in Python (meld8_env/codes.py, meld8_env/actions.py); _fast.constants()
 * exports these values and meld8_env/engine/fast.py refuses to import when the two sides disagree. */
#define MAXP 3
#define MAXD 24
#define HAND_SIZE 7
#define N_CARDS 53
enum { PH_DRAW = 0, PH_CALL_DISCARD = 1, PH_CLAIM = 2, PH_OVER = 3 };
enum { RES_NONE = 0, RES_RON = 1, RES_TSUMO = 2, RES_DRAW = 3, RES_CHOMBO = 4 };
/* action ids (meld8_env/actions.py) */
enum { TSUMO_A = 52, RON_A = 53, PON_A = 54, CHII_LOW_A = 60, CHII_MID_A = 61, CHII_HIGH_A = 62, PASS_A = 63 };
#define N_CALL_ACTIONS (PASS_A - PON_A)

typedef struct {
    uint64_t seed;
    uint64_t hands[MAXP];
    uint64_t melds[MAXP];
    uint64_t kuikae;          /* cards the caller may not discard now (R20) */
    uint64_t claim_opts[MAXP - 1]; /* legal actions of each asked seat, PASS included */
    uint64_t mask;            /* legal actions of the acting seat */
    uint64_t win_hand, win_meld; /* last win: for statistics and replays */
    int32_t scores[MAXP];
    int32_t final_scores[MAXP];
    float rewards[MAXP];
    int32_t deltas[MAXP];     /* point change of each seat from the hand that ended on the last step */
    int32_t win_points, deals, replays;
    int16_t win_han;
    int8_t discards[MAXP][MAXD];
    uint32_t called[MAXP];    /* bit i: discard i was called */
    int8_t wall[53];
    uint8_t ndisc[MAXP], calls_used[MAXP], dead[MAXP], draws_taken[MAXP], placements[MAXP];
    uint8_t wall_pos, wall_end, wall_len;
    int8_t chiicha, round, phase, current, drawn, dora_ind;
    uint8_t any_call, dealer_discarded, first_draw, last_card;
    int8_t claim_card, claim_discarder, claim_final, claim_n, claim_idx;
    int8_t claim_asked[MAXP - 1], claim_resp[MAXP - 1];
    int8_t result, win_seat, lose_seat, win_card, win_yakuman, win_flags, acting;
    int8_t win_dora, win_min_han;
    int8_t caller;            /* seat whose Pon/Chii was resolved on the last step, else -1 */
    int8_t hand_round;        /* round index of the hand that ended on the last step */
    int8_t pad[2];
} game_t;

/* The observation layout (meld8_env/observation.py writes the same table): field offsets in bytes. */
enum {
    OBS_HAND, OBS_DRAWN, OBS_MELDS, OBS_DISCARDED, OBS_CALLED, OBS_DISCARD_ORDER, OBS_DORA, OBS_CLAIM_CARD,
    OBS_DISCARDER, OBS_PHASE, OBS_DEALER, OBS_ROUND, OBS_CALLS_USED, OBS_SCORES, OBS_REPLAYS, OBS_WALL_LEFT,
    OBS_MIN_HAN, OBS_ORACLE_HANDS, OBS_ORACLE_WALL, OBS_NFIELDS
};
extern const char *const OBS_FIELD_NAMES[OBS_NFIELDS];
typedef struct {
    int off[OBS_NFIELDS], size[OBS_NFIELDS], total;
} obs_layout_t;
typedef struct {
    int P, rounds, starting_score, starting_dealer; /* starting_dealer -1: draw (R7) */
    int suit_rank[4];                                /* dealer-draw strength of each suit */
    int wall_limit, kuikae_on, penalty_mode, chombo_payment, max_replays; /* max_replays -1: none */
    int placement_share, reward_rank;
    int min_han[16];
    int placement[MAXP];
    score_params_t sp;
    obs_layout_t obs[2]; /* derived, not part of the record: the layout without / with the oracle view */
} rules_t;

/* The wait table (see the "wait table" comment in _engine.c): per game and seat, the waits (R33) of one
 * concealed hand beside one meld, keyed by both. It lives outside the record, owned by whoever steps the
 * game (FastBatch, one rollout), so records stay plain values; an entry is used only when its key is the
 * seat's hand and meld now, so a table never needs resetting (all zero: empty; no real hand is 0). */
typedef struct {
    uint64_t waits[MAXP], hand[MAXP], meld[MAXP];
} wait_table_t;
/* When entries are computed (process-wide, read by every step with a table; change it only between steps).
 * WT_OFF: never (every check asks eval_is_win, the old path, even with a table); WT_LAZY: when a check needs
 * one; WT_EAGER: also at the seat's discard; WT_TENPAI: a check asks eval_is_win until it passes once for
 * the seat's hand, then reads the waits (computed then) for every later check on that hand. */
enum { WT_OFF = 0, WT_LAZY = 1, WT_EAGER = 2, WT_TENPAI = 3 };
extern int eng_wait_mode;

void eng_reset(game_t *g, const rules_t *R, uint64_t seed);
/* returns 0 when applied; -1 when illegal in default mode (nothing changes) */
int eng_step(game_t *g, const rules_t *R, int action);
/* eng_step reading and filling the game's wait table wt (NULL: none, the old path); the same game either way */
int eng_step_t(game_t *g, const rules_t *R, int action, wait_table_t *wt);
/* the concealed hand seat's waits are about: its hand without the card it just drew; 0 for the seat that holds
 * 8 cards after a call (no 7-card hand until it discards) and in a finished game */
u64 eng_wait_hand(const game_t *g, int seat);
/* seat's waits (0 where eng_wait_hand is 0), from wt when it has them (filling it), else computed */
u64 eng_seat_waits(const game_t *g, int seat, wait_table_t *wt);
/* clear the last step's rewards, deltas, result and caller (a step that holds a game still does only this) */
void eng_clear_step(game_t *g);
void eng_obs_layout(const rules_t *R, int oracle, obs_layout_t *L);
/* fill the derived fields of a rules_t (call once after setting the record fields) */
void eng_prepare_rules(rules_t *R);
int eng_obs_size(const rules_t *R, int oracle);
/* Ron offered to `seat` on `card` if the acting seat discarded it now (a CHEATING question: it reads seat's hand) */
int eng_ron_offered(const game_t *g, const rules_t *R, int seat, int card);
/* the two hand cards a Pon/Chii action uses on a discarded card (0: impossible shape), and the cards
 * the caller may not discard right after it (R20) */
u64 eng_call_cards(int action, int card);
u64 eng_kuikae_after(const rules_t *R, int action, int card);
/* state as a value (meld8_env/engine/records.py) */
int eng_claim_window(const game_t *g, const rules_t *R, int8_t *asked, u64 *opts);
u64 eng_mask_now(const game_t *g, const rules_t *R, int *acting);
void eng_refresh(game_t *g, const rules_t *R);
/* 0 when every field the engine indexes with is in range and, for a live game, every card is in exactly one place and the cached claim window and mask match the hands;
 * otherwise 1 with a one-line reason (R4 card names) in msg */
int eng_check_cards(const game_t *g, const rules_t *R, char *msg, int len);
int eng_check_ranges(const game_t *g, const rules_t *R, char *msg, int len);
void eng_encode(const game_t *g, const rules_t *R, int seat, int oracle, uint8_t *out);
#endif
