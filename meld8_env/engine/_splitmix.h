/* splitmix64, the one mixer of the project: seeding (seeding.py) and the C random-legal sampler use
 * it; its Python twins are meld8_env/engine/seeding.py (mix64, mix64_array). */
#ifndef MELD8_SPLITMIX_H
#define MELD8_SPLITMIX_H
#include <stdint.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* advance a splitmix64 state and return its next output */
static inline uint64_t splitmix_next(uint64_t *state) {
    *state += GOLDEN;
    return mix64(*state);
}
#endif
