/* CPython face of the C hand evaluator (_eval.c) and the batched scorer (_score.c).
 * Single-hand functions take and return Python ints (53-bit masks); batch functions take objects
 * with the buffer protocol (C-contiguous numpy arrays) and write into a caller-supplied output, with
 * the GIL released so callers may use threads. The pure-Python twin is _reference.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_eval.h"
#include "_score.h"

static int get_u64(PyObject *o, u64 *out) {
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return 0;
    *out = (u64)v;
    return 1;
}

/* ---- the input contract (meld8_env/hands/contract.py says it in Python, with the same words) ------
 * Cards are bits 0..52; a meld is 0 or 3 playing cards disjoint from the hand, a Pon or a Chii; a function takes lo..hi
 * cards counting the meld. The evaluator's arrays are sized for that: nothing outside it reaches them. */
static char contract_msg[96];

static const char *hand_error(u64 h, u64 m, int lo, int hi) {
    if (h >> 53) return "a card id outside 0..52 in the hand";
    if (m >> 52) return "a card id outside 0..51 (or the Joker) in the meld";
    if (h & m) return "a card both in the hand and the meld";
    int nm = pc64(m), n = pc64(h) + nm;
    if (nm != 0 && nm != 3) {
        snprintf(contract_msg, sizeof contract_msg, "a meld of %d cards (a called meld has 3)", nm);
        return contract_msg;
    }
    if (nm) { /* a Pon (one rank) or a Chii (three in a row in one suit, starting at A..J) */
        u64 ranks = (m | m >> 13 | m >> 26 | m >> 39) & 0x1FFFULL;
        int low = ctz64(m);
        if (pc64(ranks) != 1 && !(m == 7ULL << low && low % 13 <= 10))
            return "a meld that is neither a Pon (three cards of one rank) nor a Chii (three in a row in one suit)";
    }
    if (n < lo || n > hi) {
        if (lo == hi)
            snprintf(contract_msg, sizeof contract_msg, "%d cards counting the meld (this function takes %d)", n, lo);
        else
            snprintf(contract_msg, sizeof contract_msg, "%d cards counting the meld (this function takes %d or %d)", n,
                     lo, hi);
        return contract_msg;
    }
    return NULL;
}

static int check_one(const char *fn, u64 h, u64 m, int lo, int hi) {
    const char *err = hand_error(h, m, lo, hi);
    if (err) PyErr_Format(PyExc_ValueError, "%s: %s", fn, err);
    return err == NULL;
}

static int check_rows(const char *fn, const u64 *h, const u64 *m, Py_ssize_t n, int lo, int hi) {
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *err = hand_error(h[i], m ? m[i] : 0, lo, hi);
        if (err) {
            PyErr_Format(PyExc_ValueError, "%s: row %zd: %s", fn, i, err);
            return 0;
        }
    }
    return 1;
}

static int check_sets(const char *what, const u64 *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; s && i < n; i++)
        if (s[i] >> 53) {
            PyErr_Format(PyExc_ValueError, "%s: row %zd has a card id outside 0..52", what, i);
            return 0;
        }
    return 1;
}

/* unseen cards are the ones the seat cannot see: none of its hand or meld (the tables read a discard as seen) */
static int check_unseen_apart(const u64 *h, const u64 *m, const u64 *u, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (u[i] & (h[i] | (m ? m[i] : 0))) {
            PyErr_Format(PyExc_ValueError, "unseen: row %zd holds a card of the hand or meld; unseen cards are the ones "
                         "the seat cannot see", i);
            return 0;
        }
    return 1;
}

static PyObject *py_is_win_form(PyObject *self, PyObject *args) {
    PyObject *ho, *mo;
    u64 h, m;
    if (!PyArg_ParseTuple(args, "OO", &ho, &mo) || !get_u64(ho, &h) || !get_u64(mo, &m)) return NULL;
    if (!check_one("is_win_form", h, m, 8, 8)) return NULL;
    return PyBool_FromLong(eval_is_win(h, m));
}

static PyObject *py_readings(PyObject *self, PyObject *args) {
    PyObject *ho, *mo;
    u64 h, m;
    if (!PyArg_ParseTuple(args, "OO", &ho, &mo) || !get_u64(ho, &h) || !get_u64(mo, &m)) return NULL;
    if (!check_one("readings", h, m, 8, 8)) return NULL;
    reading_t rd[MAX_READINGS];
    int n = eval_readings(h, m, rd, MAX_READINGS);
    PyObject *lst = PyList_New(n);
    if (!lst) return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *groups = PyTuple_New(rd[i].ngroups);
        if (!groups) { Py_DECREF(lst); return NULL; }
        for (int g = 0; g < rd[i].ngroups; g++)
            PyTuple_SET_ITEM(groups, g, PyLong_FromUnsignedLongLong(rd[i].groups[g]));
        PyObject *t = Py_BuildValue("(iNi)", rd[i].form, groups, rd[i].joker_as);
        if (!t) { Py_DECREF(lst); return NULL; }
        PyList_SET_ITEM(lst, i, t);
    }
    return lst;
}

static PyObject *py_waits(PyObject *self, PyObject *args) {
    PyObject *ho, *mo;
    u64 h, m;
    if (!PyArg_ParseTuple(args, "OO", &ho, &mo) || !get_u64(ho, &h) || !get_u64(mo, &m)) return NULL;
    if (!check_one("waits", h, m, 7, 7)) return NULL;
    return PyLong_FromUnsignedLongLong(eval_waits(h, m));
}

static PyObject *py_distance(PyObject *self, PyObject *args) {
    PyObject *ho, *mo, *uo;
    u64 h, m, u;
    if (!PyArg_ParseTuple(args, "OOO", &ho, &mo, &uo) || !get_u64(ho, &h) || !get_u64(mo, &m) ||
        !get_u64(uo, &u))
        return NULL;
    if (!check_one("distance", h, m, 7, 8) || !check_sets("unseen", &u, 1)) return NULL;
    return PyLong_FromLong(eval_distance(h, m, u));
}

/* ---- buffers ---------------------------------------------------------------------------- */
typedef struct {
    Py_buffer view;
    int held;
} buf_t;

static int take_buf(PyObject *o, buf_t *b, Py_ssize_t itemsize, Py_ssize_t n, int writable, const char *what) {
    b->held = 0;
    if (o == Py_None) return 1;
    if (PyObject_GetBuffer(o, &b->view, PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : PyBUF_SIMPLE)) < 0) return 0;
    b->held = 1;
    /* the bytes are read as integers: a float or bool array would be reinterpreted bit by bit, so it is refused */
    const char *f = b->view.format ? b->view.format : "B";
    if (*f == '<' || *f == '>' || *f == '=' || *f == '@' || *f == '!') f++;
    if (!f[0] || f[1] || !strchr("bBhHiIlLqQnN", f[0])) {
        PyErr_Format(PyExc_TypeError, "%s: an integer array is expected (e.g. numpy uint64 / int8), got format '%s'",
                     what, b->view.format ? b->view.format : "B");
        return 0;
    }
    if (n >= 0 && b->view.len != n * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes, got %zd bytes", what, n, itemsize,
                     b->view.len);
        return 0;
    }
    if (b->view.len % itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: buffer size is not a multiple of %zd", what, itemsize);
        return 0;
    }
    return 1;
}

static void drop_buf(buf_t *b) {
    if (b->held) PyBuffer_Release(&b->view);
    b->held = 0;
}

#define BATCH_HEAD(NARGS_FMT, ...)                                                            \
    buf_t bh = {0}, bm = {0}, bu = {0}, bo = {0};                                             \
    PyObject *ho, *mo, *uo = Py_None, *oo;                                                    \
    if (!PyArg_ParseTuple(args, NARGS_FMT, __VA_ARGS__)) return NULL;                         \
    if (!take_buf(ho, &bh, 8, -1, 0, "hands")) goto fail;                                      \
    Py_ssize_t n = bh.view.len / 8;                                                           \
    if (!take_buf(mo, &bm, 8, n, 0, "melds")) goto fail;                                      \
    if (!take_buf(uo, &bu, 8, n, 0, "unseen")) goto fail;

static PyObject *py_is_win_form_batch(PyObject *self, PyObject *args) {
    BATCH_HEAD("OOO", &ho, &mo, &oo)
    if (!take_buf(oo, &bo, 1, n, 1, "out")) goto fail;
    if (!check_rows("is_win_form", bh.view.buf, bm.held ? bm.view.buf : NULL, n, 8, 8)) goto fail;
    {
        const u64 *h = bh.view.buf, *m = bm.held ? bm.view.buf : NULL;
        uint8_t *o = bo.view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) o[i] = (uint8_t)eval_is_win(h[i], m ? m[i] : 0);
        Py_END_ALLOW_THREADS
    }
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bo);
    Py_RETURN_NONE;
fail:
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo);
    return NULL;
}

static PyObject *py_waits_batch(PyObject *self, PyObject *args) {
    BATCH_HEAD("OOO", &ho, &mo, &oo)
    if (!take_buf(oo, &bo, 8, n, 1, "out")) goto fail;
    if (!check_rows("waits", bh.view.buf, bm.held ? bm.view.buf : NULL, n, 7, 7)) goto fail;
    {
        const u64 *h = bh.view.buf, *m = bm.held ? bm.view.buf : NULL;
        u64 *o = bo.view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) o[i] = eval_waits(h[i], m ? m[i] : 0);
        Py_END_ALLOW_THREADS
    }
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bo);
    Py_RETURN_NONE;
fail:
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo);
    return NULL;
}

/* The acceptance bindings share one body: (hands, melds, unseen, pool, dist[, beat], out), every row counted by
 * fn (beat < 0 for the counts that take none). */
typedef int (*acc_fn)(u64, u64, u64, u64, int, int);

static int acc_per_card(u64 h, u64 m, u64 u, u64 p, int d, int beat) { (void)beat; return eval_acceptance(h, m, u, p, d); }
static int acc_one_search(u64 h, u64 m, u64 u, u64 p, int d, int beat) {
    (void)beat;
    return eval_acceptance_fast(h, m, u, p, d);
}

static PyObject *acceptance_impl(PyObject *args, acc_fn fn, int with_beat, const char *name) {
    buf_t bp = {0}, bd = {0}, bb = {0};
    PyObject *po, *dobj, *a6, *a7 = NULL;
    BATCH_HEAD("OOOOOO|O", &ho, &mo, &uo, &po, &dobj, &a6, &a7)
    if (with_beat != (a7 != NULL)) {
        PyErr_Format(PyExc_TypeError, "%s takes %d arguments (hands, melds, unseen, pool, dist%s, out)", name,
                     with_beat ? 7 : 6, with_beat ? ", beat" : "");
        goto fail;
    }
    oo = with_beat ? a7 : a6;
    if (!take_buf(po, &bp, 8, n, 0, "pool")) goto fail;
    if (!take_buf(dobj, &bd, 1, n, 0, "dist")) goto fail;
    if (with_beat && !take_buf(a6, &bb, 1, n, 0, "beat")) goto fail;
    if (!take_buf(oo, &bo, 1, n, 1, "out")) goto fail;
    if (!bu.held || !bp.held || !bd.held || (with_beat && !bb.held)) {
        PyErr_Format(PyExc_ValueError, "%s needs %s arrays", name,
                     with_beat ? "unseen, pool, dist and beat" : "unseen, pool and dist");
        goto fail;
    }
    if (!check_rows("acceptance", bh.view.buf, bm.held ? bm.view.buf : NULL, n, 7, 7) ||
        !check_sets("unseen", bu.view.buf, n) || !check_sets("pool", bp.view.buf, n))
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++)
        if (((const int8_t *)bd.view.buf)[i] < 0) {
            PyErr_Format(PyExc_ValueError, "dist: row %zd is negative", i);
            goto fail;
        }
    {
        const u64 *h = bh.view.buf, *m = bm.held ? bm.view.buf : NULL, *u = bu.view.buf, *p = bp.view.buf;
        const int8_t *d = bd.view.buf, *b = with_beat ? bb.view.buf : NULL;
        int8_t *o = bo.view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) o[i] = (int8_t)fn(h[i], m ? m[i] : 0, u[i], p[i], d[i], b ? b[i] : -1);
        Py_END_ALLOW_THREADS
    }
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo); drop_buf(&bp); drop_buf(&bd); drop_buf(&bb);
    Py_RETURN_NONE;
fail:
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo); drop_buf(&bp); drop_buf(&bd); drop_buf(&bb);
    return NULL;
}

static PyObject *py_acceptance_batch(PyObject *self, PyObject *args) {
    return acceptance_impl(args, acc_per_card, 0, "acceptance_batch");
}

/* the one-search count (bots' path); dist must be each hand's exact distance */
static PyObject *py_acceptance_onepass_batch(PyObject *self, PyObject *args) {
    return acceptance_impl(args, acc_one_search, 0, "acceptance_onepass_batch");
}

/* acceptance_tiebreak_batch(hands, melds, unseen, pool, dist, beat, out): eval_acceptance_beat per row (the bots'
 * tie-break count: exact where it is above beat, else some count <= beat); dist must be each hand's exact
 * distance, beat int8 (-1: always exact) */
static PyObject *py_acceptance_tiebreak_batch(PyObject *self, PyObject *args) {
    return acceptance_impl(args, eval_acceptance_beat, 1, "acceptance_tiebreak_batch");
}

/* The per-discard tables share one body: (hands, melds, unseen, set[, mode], dist_out, acc_out), 8-card hands (counting
 * the meld), (N, 53) int8 outputs set to -1 and then written by row_fn at the cards it answers for. */
typedef void (*table_row_fn)(u64 h, u64 m, u64 u, u64 set, int mode, int8_t *od, int8_t *oa);

static inline int8_t clip_count(int acc) { return (int8_t)(acc > 127 ? 127 : acc); }

static void discard_table_row(u64 h, u64 m, u64 u, u64 allowed, int mode, int8_t *od, int8_t *oa) {
    int card[8], dist[8], acc[8];
    int k = eval_discard_table(h, m, u, allowed, mode, card, dist, acc);
    for (int j = 0; j < k; j++) {
        od[card[j]] = (int8_t)dist[j];
        oa[card[j]] = clip_count(acc[j]);
    }
}

/* the C bots' special-form bound (discard_best): the 8-card hand's distance d and special overlap sp, then per held
 * non-Joker card c the bounded yes/no distance after discarding c (d or d + 1) and the bounded tie-break count */
static void special_bound_row(u64 h, u64 m, u64 u, u64 pool, int mode, int8_t *od, int8_t *oa) {
    (void)mode;
    int sp = SP_UNKNOWN;
    int d = eval_distance_sp(h, m, u, NULL, &sp);
    for (int c = 0; c < 52; c++) {
        if (!(h >> c & 1)) continue;
        u64 after = h & ~(1ULL << c);
        int dc = eval_distance_at_most_sp(after, m, u, d, NULL, sp) ? d : d + 1;
        od[c] = (int8_t)dc;
        oa[c] = clip_count(eval_acceptance_known(after, m, u, pool, dc, -1, 0, NULL, sp));
    }
}

static PyObject *table_impl(PyObject *args, int with_mode, const char *name, const char *rows, const char *set_name,
                            table_row_fn fn) {
    buf_t bs = {0}, bacc = {0};
    PyObject *so, *a5, *a6, *a7 = NULL;
    BATCH_HEAD("OOOOOO|O", &ho, &mo, &uo, &so, &a5, &a6, &a7)
    int mode = 0;
    if (with_mode != (a7 != NULL)) {
        PyErr_Format(PyExc_TypeError, "%s takes %d arguments (hands, melds, unseen, %s%s, dist_out, acc_out)", name,
                     with_mode ? 7 : 6, set_name, with_mode ? ", acc_mode" : "");
        goto fail;
    }
    if (with_mode) {
        mode = (int)PyLong_AsLong(a5);
        if (mode == -1 && PyErr_Occurred()) goto fail;
        if (mode < 0 || mode > 2) {
            PyErr_Format(PyExc_ValueError, "acc_mode: %d is not 0 (none), 1 (ties) or 2 (all)", mode);
            goto fail;
        }
        oo = a6;
        a6 = a7;
    } else {
        oo = a5;
    }
    if (!take_buf(so, &bs, 8, n, 0, set_name)) goto fail;
    if (!take_buf(oo, &bo, 53, n, 1, "dist_out")) goto fail;
    if (!take_buf(a6, &bacc, 53, n, 1, "acc_out")) goto fail;
    if (!bu.held || !bs.held || !bo.held || !bacc.held) {
        PyErr_Format(PyExc_ValueError, "%s needs unseen, %s and both output arrays", name, set_name);
        goto fail;
    }
    if (!check_rows(rows, bh.view.buf, bm.held ? bm.view.buf : NULL, n, 8, 8) ||
        !check_sets("unseen", bu.view.buf, n) || !check_sets(set_name, bs.view.buf, n) ||
        !check_unseen_apart(bh.view.buf, bm.held ? bm.view.buf : NULL, bu.view.buf, n))
        goto fail;
    {
        const u64 *h = bh.view.buf, *m = bm.held ? bm.view.buf : NULL, *u = bu.view.buf, *st = bs.view.buf;
        int8_t *od = bo.view.buf, *oa = bacc.view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            memset(od + 53 * i, -1, 53);
            memset(oa + 53 * i, -1, 53);
            fn(h[i], m ? m[i] : 0, u[i], st[i], mode, od + 53 * i, oa + 53 * i);
        }
        Py_END_ALLOW_THREADS
    }
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo); drop_buf(&bs); drop_buf(&bacc);
    Py_RETURN_NONE;
fail:
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo); drop_buf(&bs); drop_buf(&bacc);
    return NULL;
}

/* special_bound_batch(hands, melds, unseen, pool, dist_out, acc_out): special_bound_row per row, exposed so the bound
 * can be checked against the unbounded functions (tests/test_cbots.py) */
static PyObject *py_special_bound_batch(PyObject *self, PyObject *args) {
    return table_impl(args, 0, "special_bound_batch", "special_bound", "pool", special_bound_row);
}

/* discard_table_batch(hands, melds, unseen, allowed, acc_mode, dist_out, acc_out): eval_discard_table per row;
 * hands are before the discard (8 cards counting the meld); dist_out / acc_out are (N, 53) int8, written at
 * each allowed card the hand holds (never the Joker) and -1 elsewhere. */
static PyObject *py_discard_table_batch(PyObject *self, PyObject *args) {
    return table_impl(args, 1, "discard_table_batch", "discard_table", "allowed", discard_table_row);
}

static PyObject *py_distance_batch(PyObject *self, PyObject *args) {
    BATCH_HEAD("OOOO", &ho, &mo, &uo, &oo)
    if (!take_buf(oo, &bo, 1, n, 1, "out")) goto fail;
    if (!check_rows("distance", bh.view.buf, bm.held ? bm.view.buf : NULL, n, 7, 8) ||
        !check_sets("unseen", bu.held ? bu.view.buf : NULL, n))
        goto fail;
    {
        const u64 *h = bh.view.buf, *m = bm.held ? bm.view.buf : NULL, *u = bu.held ? bu.view.buf : NULL;
        int8_t *o = bo.view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            u64 mm = m ? m[i] : 0;
            u64 uu = u ? u[i] : ((1ULL << 53) - 1) & ~(h[i] | mm);
            o[i] = (int8_t)eval_distance(h[i], mm, uu);
        }
        Py_END_ALLOW_THREADS
    }
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo);
    Py_RETURN_NONE;
fail:
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bu); drop_buf(&bo);
    return NULL;
}

/* score_batch(hands, melds, win_cards(int8), flags(uint8), min_han(int8), dora(int8), furiten(u64|None),
 *             params(tuple of 7 ints), out_reason(int8), out_han(int16), out_yakuman(int8),
 *             out_points(int32), out_yaku_han(int16)) */
static PyObject *py_score_batch(PyObject *self, PyObject *args) {
    PyObject *ho, *mo, *wo, *fo, *no, *doo, *fuo, *po, *o1, *o2, *o3, *o4, *o5;
    buf_t bh = {0}, bm = {0}, bw = {0}, bf = {0}, bn = {0}, bd = {0}, bfu = {0}, r1 = {0}, r2 = {0}, r3 = {0},
          r4 = {0}, r5 = {0};
    score_params_t P;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOO", &ho, &mo, &wo, &fo, &no, &doo, &fuo, &po, &o1, &o2, &o3, &o4,
                          &o5))
        return NULL;
    if (!PyArg_ParseTuple(po, "iiiiiii", &P.value_triplet_han, &P.haitei_han, &P.points_per_han,
                          &P.counted_yakuman_han, &P.yakuman_value, &P.sequence_bonus_max, &P.tiebreak_yaku))
        return NULL;
    if (!take_buf(ho, &bh, 8, -1, 0, "hands")) goto fail;
    Py_ssize_t n = bh.view.len / 8;
    if (!take_buf(mo, &bm, 8, n, 0, "melds") || !take_buf(wo, &bw, 1, n, 0, "win_cards") ||
        !take_buf(fo, &bf, 1, n, 0, "flags") || !take_buf(no, &bn, 1, n, 0, "min_han") ||
        !take_buf(doo, &bd, 1, n, 0, "dora") || !take_buf(fuo, &bfu, 8, n, 0, "furiten") ||
        !take_buf(o1, &r1, 1, n, 1, "reason") || !take_buf(o2, &r2, 2, n, 1, "han") ||
        !take_buf(o3, &r3, 1, n, 1, "yakuman") || !take_buf(o4, &r4, 4, n, 1, "points") ||
        !take_buf(o5, &r5, 2, n, 1, "yaku_han"))
        goto fail;
    if (!bw.held || !bf.held || !bn.held || !bd.held) {
        PyErr_SetString(PyExc_ValueError, "score_batch needs win_cards, flags, min_han and dora arrays");
        goto fail;
    }
    if (!check_rows("score", bh.view.buf, bm.held ? bm.view.buf : NULL, n, 8, 8) ||
        !check_sets("furiten", bfu.held ? bfu.view.buf : NULL, n))
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int8_t w = ((const int8_t *)bw.view.buf)[i], dr = ((const int8_t *)bd.view.buf)[i];
        const uint8_t fl = ((const uint8_t *)bf.view.buf)[i];
        if (w < 0 || w > 52 || !(((const u64 *)bh.view.buf)[i] >> w & 1)) {
            PyErr_Format(PyExc_ValueError, "win_cards: row %zd is not a card of its hand", i);
            goto fail;
        }
        if (dr < -1 || dr > 52 || fl > 15 || ((const int8_t *)bn.view.buf)[i] < 0) {
            PyErr_Format(PyExc_ValueError, "score: row %zd: dora must be -1..52, flags 0..15, min_han >= 0", i);
            goto fail;
        }
    }
    if (P.points_per_han < 0 || P.yakuman_value < 0 || P.counted_yakuman_han < 1) {
        PyErr_SetString(PyExc_ValueError, "score: bad scoring parameters");
        goto fail;
    }
    {
        const u64 *h = bh.view.buf, *m = bm.held ? bm.view.buf : NULL, *fu = bfu.held ? bfu.view.buf : NULL;
        const int8_t *w = bw.view.buf, *mn = bn.view.buf, *dr = bd.view.buf;
        const uint8_t *fl = bf.view.buf;
        int8_t *reason = r1.view.buf, *yakuman = r3.view.buf;
        int16_t *han = r2.view.buf, *yh = r5.view.buf;
        int32_t *pts = r4.view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            score_out_t so;
            score_hand_c(&P, h[i], m ? m[i] : 0, w[i], fl[i], mn[i], dr[i], fu ? fu[i] : 0, &so);
            reason[i] = (int8_t)so.reason;
            han[i] = (int16_t)so.han;
            yakuman[i] = (int8_t)so.yakuman;
            pts[i] = so.points;
            yh[i] = (int16_t)so.yaku_han;
        }
        Py_END_ALLOW_THREADS
    }
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bw); drop_buf(&bf); drop_buf(&bn); drop_buf(&bd); drop_buf(&bfu);
    drop_buf(&r1); drop_buf(&r2); drop_buf(&r3); drop_buf(&r4); drop_buf(&r5);
    Py_RETURN_NONE;
fail:
    drop_buf(&bh); drop_buf(&bm); drop_buf(&bw); drop_buf(&bf); drop_buf(&bn); drop_buf(&bd); drop_buf(&bfu);
    drop_buf(&r1); drop_buf(&r2); drop_buf(&r3); drop_buf(&r4); drop_buf(&r5);
    return NULL;
}

/* count_all(k): exhaustive counts over every k-card concealed hand (k = 8: winning hands and
 * hands with several forms; k = 7: tenpai hands, with waits). Used as an oracle in tests. */
typedef struct {
    long long hands, with_joker, multi_form, total_waits, max_waits, max_readings;
} counts_t;

static void count_rec(int k, int start, u64 h, int left, counts_t *c) {
    if (!left) {
        if (k == 8) {
            if (!eval_is_win(h, 0)) return;
            c->hands++;
            if (h & JK_BIT) c->with_joker++;
            reading_t rd[MAX_READINGS];
            int n = eval_readings(h, 0, rd, MAX_READINGS), forms = 0;
            for (int i = 0; i < n; i++) forms |= 1 << rd[i].form;
            if (pc64((u64)forms) > 1) c->multi_form++;
            if (n > c->max_readings) c->max_readings = n;
        } else {
            u64 w = eval_waits(h, 0);
            if (!w) return;
            c->hands++;
            if (h & JK_BIT) c->with_joker++;
            int nw = pc64(w);
            c->total_waits += nw;
            if (nw > c->max_waits) c->max_waits = nw;
        }
        return;
    }
    for (int i = start; i <= 53 - left; i++) count_rec(k, i + 1, h | (1ULL << i), left - 1, c);
}

static PyObject *py_count_all(PyObject *self, PyObject *args) {
    int k;
    if (!PyArg_ParseTuple(args, "i", &k)) return NULL;
    if (k != 7 && k != 8) {
        PyErr_SetString(PyExc_ValueError, "count_all: k must be 7 or 8");
        return NULL;
    }
    counts_t c = {0};
    Py_BEGIN_ALLOW_THREADS
    count_rec(k, 0, 0, k, &c);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("{sLsLsLsLsLsL}", "hands", c.hands, "with_joker", c.with_joker, "multi_form",
                         c.multi_form, "total_waits", c.total_waits, "max_waits", c.max_waits, "max_readings",
                         c.max_readings);
}

static PyMethodDef methods[] = {
    {"is_win_form", py_is_win_form, METH_VARARGS, "is_win_form(hand, meld) -> bool"},
    {"readings", py_readings, METH_VARARGS, "readings(hand, meld) -> list of (form, groups, joker_as)"},
    {"waits", py_waits, METH_VARARGS, "waits(hand, meld) -> mask"},
    {"distance", py_distance, METH_VARARGS, "distance(hand, meld, unseen) -> int"},
    {"is_win_form_batch", py_is_win_form_batch, METH_VARARGS, "is_win_form_batch(hands, melds, out)"},
    {"waits_batch", py_waits_batch, METH_VARARGS, "waits_batch(hands, melds, out)"},
    {"distance_batch", py_distance_batch, METH_VARARGS, "distance_batch(hands, melds, unseen, out)"},
    {"acceptance_batch", py_acceptance_batch, METH_VARARGS,
     "acceptance_batch(hands, melds, unseen, pool, dist, out)"},
    {"discard_table_batch", py_discard_table_batch, METH_VARARGS,
     "discard_table_batch(hands, melds, unseen, allowed, acc_mode, dist_out, acc_out): distance after every discard"},
    {"acceptance_onepass_batch", py_acceptance_onepass_batch, METH_VARARGS,
     "acceptance_onepass_batch(hands, melds, unseen, pool, dist, out): as acceptance_batch, one search per hand"},
    {"acceptance_tiebreak_batch", py_acceptance_tiebreak_batch, METH_VARARGS,
     "acceptance_tiebreak_batch(hands, melds, unseen, pool, dist, beat, out): the bots' tie-break count"},
    {"special_bound_batch", py_special_bound_batch, METH_VARARGS,
     "special_bound_batch(hands, melds, unseen, pool, dist_out, acc_out): the bots' bounded distances and counts"},
    {"score_batch", py_score_batch, METH_VARARGS, "batched scorer, see scoring.py"},
    {"count_all", py_count_all, METH_VARARGS, "count_all(k) -> dict of exhaustive counts"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_native", "Meld8 C hand evaluator", -1, methods};

PyMODINIT_FUNC PyInit__native(void) {
    eval_init();
    return PyModule_Create(&moddef);
}
