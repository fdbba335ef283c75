/* Meld8 built-in bots in C (issue 20): random, greedy, defensive over what one seat sees.
 *
 * The readable reference twins are agents/random_agent.py, agents/greedy.py and agents/defensive.py;
 * every decision here must equal theirs, ties included (tests/test_cbots.py checks it on states
 * from real games). A decision reads a bot_view_t: the acting seat's view, seats relative to it
 * (0 = self), built either from an engine record (rollouts) or from an observation vector (the
 * agents' act_batch), so both paths decide on the same numbers. */
#ifndef MELD8_BOTS_H
#define MELD8_BOTS_H
#include "_engine.h"

/* BOT_ORACLE reads the other seats' hands in the record (CHEATING; records only, never observations). The _LITE
 * policies are greedy / defensive with a cheap tie-break where the tied discards leave two or more cards to win:
 * the size of each one's acceptance pool (live neighbours and the Joker, an upper bound of the count) instead of
 * the exact count; the search's rollouts can afford more worlds with them (twins: agents/greedy.py, defensive.py
 * with lite=True) */
enum { BOT_RANDOM = 0, BOT_GREEDY = 1, BOT_DEFENSIVE = 2, BOT_ORACLE = 3, BOT_GREEDY_LITE = 4, BOT_DEFENSIVE_LITE = 5,
       BOT_N = 6 };
/* Not a bot: in a rollout's policies, the seat whose decisions the caller makes (meld8_env.rollout, external=). The
 * rollout stops a record where such a seat is to act; every other entry point refuses the code. */
enum { BOT_EXTERNAL = 6 };

typedef struct {
    int P;
    u64 mask;               /* legal actions of the seat */
    u64 hand, meld, unseen; /* own concealed cards, own exposed meld, cards seen nowhere (Joker included) */
    u64 discarded[MAXP];    /* discards of each relative seat */
    int calls_used[MAXP];   /* relative seats */
    int claim_card;         /* -1 outside a claim */
    int wall_left;
} bot_view_t;

/* the acting seat's view of an engine record */
void bot_view_record(const game_t *g, const rules_t *R, bot_view_t *v);
/* the view in an observation vector (the non-oracle layout of R; an oracle tail is ignored) and its
 * 64-byte legal-action mask (nonzero byte = legal) */
void bot_view_obs(const uint8_t *obs, const uint8_t *mask64, const rules_t *R, bot_view_t *v);

/* the decision of a view-reading policy: greedy, defensive and their _LITE variants (-1 when nothing is legal, as
 * the Python twins) */
int bot_view_act(const bot_view_t *v, const rules_t *R, int code);
/* uniformly random legal action from a splitmix64 state (advanced); 0 when nothing is legal */
int bot_random_rng(u64 mask, u64 *rng);
/* agents/random_agent.py: a seeded hash of the observation picks among the legal actions */
int bot_random_obs(const uint8_t *obs, int D, u64 mask, const u64 *weights, u64 seed);

/* one decision of policy `code` for the acting seat of record g (rng: the record's bot stream) */
int bot_act_record(const game_t *g, const rules_t *R, int code, u64 *rng);

/* oracle (agents/oracle.py): greedy that never deals in. Reading the record's hidden hands, it discards greedy's
 * choice among the legal discards no other seat would be offered Ron on, or greedy's choice when every one is */
int bot_oracle(const game_t *g, const rules_t *R, const bot_view_t *v);

/* best discard of greedy (smallest distance, then most acceptance, then lowest id) among `allowed`; lite: the
 * _LITE tie-break (pool size for acceptance at distance >= 2); returns the card (-1 if allowed is empty) and its
 * distance (127 when none) */
int bot_best_discard(u64 hand, u64 meld, u64 unseen, u64 allowed, int *dist_out, int lite);
#endif
