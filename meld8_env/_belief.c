/* The C core of the belief sampler (meld8_env/belief.py, methods "uniform" and "two_level", no flags).
 *
 * It draws the opponents' hidden hands and the wall order of n worlds exactly as the numpy code of
 * belief.sample_worlds does, consuming the caller's numpy PCG64 stream in the same order, so the worlds are
 * bit-identical (tests/test_belief_core.py checks it on thousands of information sets) and every search
 * decision is unchanged; only the speed differs (the numpy code is ~40 small array passes per opponent).
 *
 * The stream, as numpy's Generator uses it (PCG64 XSL-RR 128/64):
 *   random()          (next64 >> 11) * 2^-53                        (numpy's next_double)
 *   permuted(axis=1)  per row, i = len-1 .. 1: j = interval(i); swap   (numpy's _shuffle_raw)
 *   interval(max)     (next32 & mask) until <= max, mask = 2^k - 1 >= max (next32: the low half of a next64,
 *                     its high half buffered for the next next32: has_uint32 / uinteger)
 * Per opponent j with h hidden cards, in seat order (numpy code: sample_worlds and _choose):
 *   two_level: want[w] = random() < p_j for w = 0..n-1; then stage 0 (k = min(8, tries)) and stage 1
 *   (k = tries) over the worlds still without a match ("todo", in order): proposals r = 0..m-1 (m = todo*k,
 *   world-major) are partial Fisher-Yates shuffles of the world's pool row, step t = 0..h-1 drawing one
 *   random() per proposal (all m of step t before step t+1): pos = t + (int)(u * (U - t)), swap(t, pos);
 *   a proposal matches when (waits != 0 and no wait in the furiten mask) == want[w]; the world takes its
 *   first match; after stage 1 a world without one keeps its first stage-1 proposal (counted as missed).
 *   uniform: one proposal per world (k = 1), taken as it is.
 *   The chosen cards leave the world's pool row, the rest keeping their order.
 * Then the wall of each world is its pool row permuted (numpy permuted, rows in order).
 *
 * state words (6,) uint64, read and written: state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <stdlib.h>

#include "hands/_eval.h"

typedef unsigned __int128 u128;

typedef struct {
    u128 state, inc;
    int has32;
    uint32_t buf32;
} pcg_t;

static const u128 PCG_MULT = ((u128)0x2360ed051fc65da4ULL << 64) | 0x4385df649fccf645ULL;

static inline u64 pcg_next64(pcg_t *g) {
    g->state = g->state * PCG_MULT + g->inc;
    u64 x = (u64)(g->state >> 64) ^ (u64)g->state;
    unsigned r = (unsigned)(g->state >> 122);
    return (x >> r) | (x << ((64 - r) & 63));
}

static inline uint32_t pcg_next32(pcg_t *g) {
    if (g->has32) {
        g->has32 = 0;
        return g->buf32;
    }
    u64 v = pcg_next64(g);
    g->has32 = 1;
    g->buf32 = (uint32_t)(v >> 32);
    return (uint32_t)v;
}

static inline double pcg_double(pcg_t *g) { return (double)(pcg_next64(g) >> 11) * (1.0 / 9007199254740992.0); }

static inline uint32_t pcg_interval(pcg_t *g, uint32_t max) {
    if (max == 0) return 0;
    uint32_t mask = max, v;
    mask |= mask >> 1; mask |= mask >> 2; mask |= mask >> 4; mask |= mask >> 8; mask |= mask >> 16;
    while ((v = (pcg_next32(g) & mask)) > max) {
    }
    return v;
}

/* Proposals of one stage: m = (worlds) * k partial shuffles of positions 0..U-1 of a pool row, into idx (m, U);
 * the first h entries of each row are a proposal (positions in its world's pool row). */
static void propose(pcg_t *g, int U, int m, int h, uint8_t *idx) {
    for (int r = 0; r < m; r++)
        for (int c = 0; c < U; c++) idx[(size_t)r * U + c] = (uint8_t)c;
    for (int t = 0; t < h; t++)
        for (int r = 0; r < m; r++) {
            uint8_t *row = idx + (size_t)r * U;
            int pos = t + (int)(pcg_double(g) * (double)(U - t));
            uint8_t a = row[t];
            row[t] = row[pos];
            row[pos] = a;
        }
}

static u64 proposal_mask(const int8_t *pool_row, const uint8_t *idx_row, int h) {
    u64 mask = 0;
    for (int t = 0; t < h; t++) mask |= 1ULL << pool_row[idx_row[t]];
    return mask;
}

/* sample(words, pool, n, tries, uniform, opp_h, opp_p, opp_furiten, opp_meld, hands_out, wall_out) -> missed
 * pool (U,) int8 card ids; opp_* (J,) for the opponents with hidden cards, in seat order; hands_out (n, J) uint64;
 * wall_out (n, U - sum h) int8. */
static PyObject *py_sample(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *ow, *op, *oh, *opp, *of, *om, *oho, *owo;
    int n, tries, uniform;
    if (!PyArg_ParseTuple(args, "OOiiiOOOOOO", &ow, &op, &n, &tries, &uniform, &oh, &opp, &of, &om, &oho, &owo))
        return NULL;
    Py_buffer b[8];
    PyObject *objs[8] = {ow, op, oh, opp, of, om, oho, owo};
    const Py_ssize_t item[8] = {8, 1, 4, 8, 8, 8, 8, 1};
    /* the struct-module codes each argument may have (after a byte-order prefix): a float64 where a uint64
     * belongs has the same size, so the size alone would not catch it */
    static const char *const kinds[8] = {"LQ", "b", "il", "d", "LQ", "LQ", "LQ", "b"};
    static const char *const types[8] = {"uint64", "int8", "int32", "float64", "uint64", "uint64", "uint64", "int8"};
    static const char *const names[8] = {"words",       "pool",     "opp_h",     "opp_p",
                                         "opp_furiten", "opp_meld", "hands_out", "wall_out"};
    const int little = *(const unsigned char *)&(int){1}; /* the byte orders a buffer may declare: native only */
    const char *native = little ? "@=<" : "@=>!";
    int held = 0;
    for (; held < 8; held++) {
        int flags = PyBUF_FORMAT | ((held == 0 || held >= 6) ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS);
        if (PyObject_GetBuffer(objs[held], &b[held], flags) < 0) goto fail;
        if (b[held].itemsize != item[held]) {
            PyErr_Format(PyExc_ValueError, "belief core: %s has items of %zd bytes, expected %zd (%s)", names[held],
                         b[held].itemsize, item[held], types[held]);
            held++;
            goto fail;
        }
        const char *fmt = b[held].format ? b[held].format : "B";
        if (*fmt && strchr(native, *fmt)) fmt++;
        if (!*fmt || fmt[1] || !strchr(kinds[held], *fmt)) {
            PyErr_Format(PyExc_ValueError, "belief core: %s has items of format '%s', expected native-order %s",
                         names[held], b[held].format ? b[held].format : "B", types[held]);
            held++;
            goto fail;
        }
    }
    {
        const Py_ssize_t U0 = b[1].len, J = b[2].len / 4;
        if (n < 1 || n > 65536 || tries < 1 || tries > 4096) { /* also keeps n * tries * 53 far from overflow */
            PyErr_Format(PyExc_ValueError, "belief core: n=%d must be 1..65536 and tries=%d 1..4096", n, tries);
            goto fail;
        }
        if (b[0].len != 48 || U0 > 53 || b[3].len != 8 * J || b[4].len != 8 * J ||
            b[5].len != 8 * J || b[6].len != 8 * (Py_ssize_t)n * J) {
            PyErr_SetString(PyExc_ValueError, "belief core: inconsistent argument sizes");
            goto fail;
        }
        const int32_t *hs = b[2].buf;
        Py_ssize_t total = 0;
        for (Py_ssize_t j = 0; j < J; j++) {
            if (hs[j] < 1 || hs[j] > 8) {
                PyErr_SetString(PyExc_ValueError, "belief core: hidden hand sizes must be 1..8");
                goto fail;
            }
            total += hs[j];
        }
        if (total > U0 || b[7].len != (Py_ssize_t)n * (U0 - total)) {
            PyErr_SetString(PyExc_ValueError, "belief core: the pool cannot hold the hidden hands / wall size");
            goto fail;
        }
        u64 seen = 0;
        for (Py_ssize_t c = 0; c < U0; c++) { /* distinct card ids 0..52: a shift by more would be undefined */
            int8_t id = ((const int8_t *)b[1].buf)[c];
            if (id < 0 || id > 52 || (seen >> id & 1)) {
                PyErr_Format(PyExc_ValueError, "belief core: pool entry %zd is %d, expected distinct card ids 0..52", c, id);
                goto fail;
            }
            seen |= 1ULL << id;
        }
        u64 *w = b[0].buf;
        pcg_t g = {((u128)w[0] << 64) | w[1], ((u128)w[2] << 64) | w[3], (int)w[4], (uint32_t)w[5]};
        const double *ps = b[3].buf;
        const u64 *fur = b[4].buf, *meld = b[5].buf;
        u64 *hands = b[6].buf;
        int8_t *wall = b[7].buf;
        int U = (int)U0, missed = 0, kmax = tries > 8 ? tries : 8;
        int8_t *pool = malloc((size_t)n * 53);
        int8_t *chosen = malloc((size_t)n * 8);
        int *todo = malloc(sizeof(int) * (size_t)n), *next = malloc(sizeof(int) * (size_t)n);
        uint8_t *want = malloc((size_t)n);
        uint8_t *idx = malloc((size_t)n * kmax * 53);
        if (!pool || !chosen || !todo || !next || !want || !idx) {
            free(pool); free(chosen); free(todo); free(next); free(want); free(idx);
            PyErr_NoMemory();
            goto fail;
        }
        Py_BEGIN_ALLOW_THREADS
        for (int i = 0; i < n; i++) memcpy(pool + (size_t)i * 53, b[1].buf, (size_t)U);
        for (Py_ssize_t j = 0; j < J; j++) {
            int h = hs[j];
            if (uniform) {
                propose(&g, U, n, h, idx);
                for (int i = 0; i < n; i++) memcpy(chosen + (size_t)i * 8, idx + (size_t)i * U, (size_t)h);
            } else {
                for (int i = 0; i < n; i++) want[i] = pcg_double(&g) < ps[j];
                int nt = n;
                for (int i = 0; i < n; i++) todo[i] = i;
                for (int stage = 0; stage < 2 && nt > 0; stage++) {
                    int k = stage == 0 ? (tries < 8 ? tries : 8) : tries, nn = 0;
                    propose(&g, U, nt * k, h, idx); /* row a*k+t: try t of world todo[a] */
                    for (int a = 0; a < nt; a++) {
                        int i = todo[a], got = -1;
                        const int8_t *row = pool + (size_t)i * 53;
                        for (int t = 0; t < k && got < 0; t++) {
                            const uint8_t *ir = idx + ((size_t)a * k + t) * U;
                            u64 wt = eval_waits(proposal_mask(row, ir, h), meld[j]);
                            int ready = wt != 0 && (wt & fur[j]) == 0;
                            if (ready == want[i]) got = t;
                        }
                        if (got < 0 && stage == 1) {
                            got = 0;
                            missed++;
                        }
                        if (got >= 0)
                            memcpy(chosen + (size_t)i * 8, idx + ((size_t)a * k + got) * U, (size_t)h);
                        else
                            next[nn++] = i;
                    }
                    memcpy(todo, next, sizeof(int) * (size_t)nn);
                    nt = nn;
                }
            }
            for (int i = 0; i < n; i++) { /* the hand, and the pool row without its cards (order kept) */
                int8_t *row = pool + (size_t)i * 53;
                const int8_t *ch = chosen + (size_t)i * 8;
                u64 take = 0, mask = 0;
                for (int t = 0; t < h; t++) {
                    take |= 1ULL << ch[t];
                    mask |= 1ULL << row[ch[t]];
                }
                hands[(size_t)i * J + j] = mask;
                int o = 0;
                for (int c = 0; c < U; c++)
                    if (!(take >> c & 1)) row[o++] = row[c];
            }
            U -= h;
        }
        for (int i = 0; i < n; i++) { /* the wall: numpy's permuted, row by row */
            int8_t *out = wall + (size_t)i * U;
            memcpy(out, pool + (size_t)i * 53, (size_t)U);
            for (int a = U - 1; a > 0; a--) {
                int c = (int)pcg_interval(&g, (uint32_t)a);
                int8_t x = out[a];
                out[a] = out[c];
                out[c] = x;
            }
        }
        Py_END_ALLOW_THREADS
        w[0] = (u64)(g.state >> 64); w[1] = (u64)g.state; w[2] = (u64)(g.inc >> 64); w[3] = (u64)g.inc;
        w[4] = (u64)g.has32; w[5] = g.buf32;
        free(pool); free(chosen); free(todo); free(next); free(want); free(idx);
        for (int q = 0; q < held; q++) PyBuffer_Release(&b[q]);
        return PyLong_FromLong(missed);
    }
fail:
    for (int q = 0; q < held; q++) PyBuffer_Release(&b[q]);
    return NULL;
}

static PyMethodDef METHODS[] = {
    {"sample", py_sample, METH_VARARGS,
     "sample(words, pool, n, tries, uniform, opp_h, opp_p, opp_furiten, opp_meld, hands_out, wall_out) -> missed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_belief", "C core of meld8_env.belief", -1, METHODS};

PyMODINIT_FUNC PyInit__belief(void) {
    eval_init();
    return PyModule_Create(&MODULE);
}
