/* CPython face of the fast engine (_engine.c). A batch is a writable buffer of B game_t structs
 * (a numpy structured array built from layout()); every function loops over the batch in C with
 * the GIL released, so callers may split a batch across threads. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stddef.h>
#include "_bots.h"
#include "_engine.h"
#include "_splitmix.h"

/* The rules record: every rules_t field by name (nested score parameters as "sp.NAME"), an int or a
 * list of exactly `count` ints. pack_rules() takes a dict with exactly these keys, so the Python side
 * (meld8_env/engine/fast.py::rules_record) names each value instead of relying on an order. */
typedef struct {
    const char *name;
    size_t offset;
    int count;
} rule_field_t;
#define RF(path, n) {#path, offsetof(rules_t, path), n}
static const rule_field_t RULE_FIELDS[] = {
    RF(P, 1), RF(rounds, 1), RF(starting_score, 1), RF(starting_dealer, 1), RF(suit_rank, 4),
    RF(wall_limit, 1), RF(kuikae_on, 1), RF(penalty_mode, 1), RF(chombo_payment, 1), RF(max_replays, 1),
    RF(placement_share, 1), RF(reward_rank, 1), RF(min_han, 16), RF(placement, MAXP),
    RF(sp.value_triplet_han, 1), RF(sp.haitei_han, 1), RF(sp.points_per_han, 1), RF(sp.counted_yakuman_han, 1),
    RF(sp.yakuman_value, 1), RF(sp.sequence_bonus_max, 1), RF(sp.tiebreak_yaku, 1),
};
#undef RF
#define N_RULE_FIELDS ((int)(sizeof RULE_FIELDS / sizeof RULE_FIELDS[0]))

static int int_value(PyObject *o, const char *name, int *out) {
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "rules record field %s: expected an int, got %s", name, Py_TYPE(o)->tp_name);
        return 0;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return 0;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "rules record field %s: %ld does not fit a 32-bit int", name, v);
        return 0;
    }
    *out = (int)v;
    return 1;
}

static int unpack_record(PyObject *d, rules_t *R) {
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "rules: expected a dict (meld8_env.engine.fast.rules_record)");
        return 0;
    }
    memset(R, 0, sizeof *R);
    for (int f = 0; f < N_RULE_FIELDS; f++) {
        const rule_field_t *F = &RULE_FIELDS[f];
        int *dst = (int *)((char *)R + F->offset);
        PyObject *v = PyDict_GetItemString(d, F->name); /* borrowed */
        if (!v) {
            PyErr_Format(PyExc_KeyError, "rules record lacks field %s", F->name);
            return 0;
        }
        if (F->count == 1) {
            if (!int_value(v, F->name, dst)) return 0;
            continue;
        }
        if (!PyList_Check(v) && !PyTuple_Check(v)) {
            PyErr_Format(PyExc_TypeError, "rules record field %s: expected a list of %d ints", F->name, F->count);
            return 0;
        }
        if (PySequence_Fast_GET_SIZE(v) != F->count) {
            PyErr_Format(PyExc_ValueError, "rules record field %s: expected %d ints, got %zd", F->name, F->count,
                         PySequence_Fast_GET_SIZE(v));
            return 0;
        }
        for (int i = 0; i < F->count; i++)
            if (!int_value(PySequence_Fast_GET_ITEM(v, i), F->name, dst + i)) return 0;
    }
    if (PyDict_Size(d) != N_RULE_FIELDS) {
        PyErr_Format(PyExc_KeyError, "rules record has %zd fields, the engine knows %d (see rules_fields())",
                     PyDict_Size(d), N_RULE_FIELDS);
        return 0;
    }
    if (R->P < 2 || R->P > MAXP || R->rounds < 1 || R->rounds > 16) {
        PyErr_SetString(PyExc_ValueError, "rules: players must be 2..3 and rounds 1..16");
        return 0;
    }
    eng_prepare_rules(R);
    return 1;
}

/* rules_fields() -> [(name, count)] of the rules record */
static PyObject *py_rules_fields(PyObject *self, PyObject *noargs) {
    PyObject *lst = PyList_New(N_RULE_FIELDS);
    if (!lst) return NULL;
    for (int f = 0; f < N_RULE_FIELDS; f++) {
        PyObject *t = Py_BuildValue("(si)", RULE_FIELDS[f].name, RULE_FIELDS[f].count);
        if (!t) { Py_DECREF(lst); return NULL; }
        PyList_SET_ITEM(lst, f, t);
    }
    return lst;
}

/* Rules travel as bytes holding a rules_t (made once by pack_rules), so each call only copies them. */
static int parse_rules(PyObject *o, rules_t *R) {
    if (!PyBytes_Check(o) || PyBytes_GET_SIZE(o) != (Py_ssize_t)sizeof(rules_t)) {
        PyErr_SetString(PyExc_TypeError, "rules: expected the bytes made by pack_rules()");
        return 0;
    }
    memcpy(R, PyBytes_AS_STRING(o), sizeof *R);
    return 1;
}

static PyObject *py_pack_rules(PyObject *self, PyObject *args) {
    PyObject *t;
    rules_t R;
    if (!PyArg_ParseTuple(args, "O", &t) || !unpack_record(t, &R)) return NULL;
    return PyBytes_FromStringAndSize((const char *)&R, sizeof R);
}

static int get_buf(PyObject *o, Py_buffer *b, int writable, Py_ssize_t itemsize, Py_ssize_t n, const char *what) {
    if (PyObject_GetBuffer(o, b, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) return 0;
    if (b->len % itemsize || (n >= 0 && b->len != n * itemsize)) {
        PyErr_Format(PyExc_ValueError, "%s: buffer of %zd bytes does not hold %zd items of %zd bytes", what, b->len,
                     n, itemsize);
        PyBuffer_Release(b);
        return 0;
    }
    return 1;
}

static PyObject *py_reset(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *seo;
    rules_t R;
    Py_buffer bs, bseed;
    if (!PyArg_ParseTuple(args, "OOO", &so, &ro, &seo) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 1, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(seo, &bseed, 0, 8, n, "seeds")) { PyBuffer_Release(&bs); return NULL; }
    game_t *g = bs.buf;
    const uint64_t *seeds = bseed.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) eng_reset(&g[i], &R, seeds[i]);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bseed);
    Py_RETURN_NONE;
}

/* step(states, rules, actions int64[B], illegal uint8[B], table=None) -> number of illegal actions (not applied).
 * table: the games' wait table (B * WAIT_TABLE_BYTES bytes, owned by the caller: FastBatch keeps one per batch),
 * or None for none (every check searches, as before the table) */
static PyObject *py_step(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *ao, *io, *to = Py_None;
    rules_t R;
    Py_buffer bs, ba, bi, bt = {0};
    if (!PyArg_ParseTuple(args, "OOOO|O", &so, &ro, &ao, &io, &to) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 1, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(ao, &ba, 0, 8, n, "actions")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(io, &bi, 1, 1, n, "illegal")) { PyBuffer_Release(&bs); PyBuffer_Release(&ba); return NULL; }
    int have_t = to != Py_None;
    if (have_t && !get_buf(to, &bt, 1, sizeof(wait_table_t), n, "table")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&ba); PyBuffer_Release(&bi);
        return NULL;
    }
    wait_table_t *wt = have_t && eng_wait_mode != WT_OFF ? bt.buf : NULL; /* off: the step never reads it */
    game_t *g = bs.buf;
    const int64_t *a = ba.buf;
    uint8_t *ill = bi.buf;
    long bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t act = a[i];
        if (act == -1 || g[i].phase == PH_OVER) { /* held still (or finished): no move, no reward, no outcome */
            eng_clear_step(&g[i]);
            ill[i] = act != -1; /* a finished game accepts no action */
            bad += act != -1;
            continue;
        }
        int r = (act < 0 || act > 63) ? -1 : eng_step_t(&g[i], &R, (int)act, wt ? &wt[i] : NULL);
        ill[i] = r < 0;
        bad += r < 0;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs); PyBuffer_Release(&ba); PyBuffer_Release(&bi);
    if (have_t) PyBuffer_Release(&bt);
    return PyLong_FromLong(bad);
}

/* observe(states, rules, seats int8[B] (-1: the acting seat), oracle, obs uint8[B, D], masks uint8[B, 64]) */
static PyObject *py_observe(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *seo, *oo, *mo;
    int oracle;
    rules_t R;
    Py_buffer bs, bse, bo, bm;
    if (!PyArg_ParseTuple(args, "OOOpOO", &so, &ro, &seo, &oracle, &oo, &mo) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    int D = eng_obs_size(&R, oracle);
    if (!get_buf(seo, &bse, 0, 1, n, "seats")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(oo, &bo, 1, D, n, "obs")) { PyBuffer_Release(&bs); PyBuffer_Release(&bse); return NULL; }
    if (!get_buf(mo, &bm, 1, 64, n, "masks")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&bse); PyBuffer_Release(&bo);
        return NULL;
    }
    const game_t *g = bs.buf;
    const int8_t *seats = bse.buf;
    uint8_t *obs = bo.buf, *masks = bm.buf;
    for (Py_ssize_t i = 0; i < n; i++) /* the seat indexes the record's hands (red team, session 32: seat 100 read
                                        * 800 bytes past a record) */
        if (seats[i] < -1 || seats[i] >= R.P) {
            PyBuffer_Release(&bs); PyBuffer_Release(&bse); PyBuffer_Release(&bo); PyBuffer_Release(&bm);
            PyErr_Format(PyExc_ValueError, "seats: row %zd is %d; a seat is -1 (the acting seat) or 0..%d", i,
                         (int)seats[i], R.P - 1);
            return NULL;
        }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int seat = seats[i] >= 0 ? seats[i] : (g[i].acting >= 0 ? g[i].acting : 0);
        eng_encode(&g[i], &R, seat, oracle, obs + (size_t)i * D);
        uint64_t m = g[i].acting == seat ? g[i].mask : 0;
        for (int a = 0; a < 64; a++) masks[(size_t)i * 64 + a] = (uint8_t)(m >> a & 1);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs); PyBuffer_Release(&bse); PyBuffer_Release(&bo); PyBuffer_Release(&bm);
    Py_RETURN_NONE;
}

/* random_legal(states, rng uint64[B] (splitmix64 states, advanced), out int64[B]): a uniformly random
 * legal action per game (0 for games that are over). */
static PyObject *py_random_legal(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *oo;
    Py_buffer bs, br, bo;
    if (!PyArg_ParseTuple(args, "OOO", &so, &ro, &oo)) return NULL;
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(ro, &br, 1, 8, n, "rng")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(oo, &bo, 1, 8, n, "out")) { PyBuffer_Release(&bs); PyBuffer_Release(&br); return NULL; }
    const game_t *g = bs.buf;
    uint64_t *rng = br.buf;
    int64_t *out = bo.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t m = g[i].mask;
        int k = __builtin_popcountll(m);
        if (!k) { out[i] = 0; continue; }
        int r = (int)(splitmix_next(&rng[i]) % (uint64_t)k);
        while (r--) m &= m - 1;
        out[i] = __builtin_ctzll(m);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs); PyBuffer_Release(&br); PyBuffer_Release(&bo);
    Py_RETURN_NONE;
}

/* check(states, actions int64[B]) -> index of the first action that is not legal, or -1
 * (a finished game accepts anything: it ignores its action) */
static PyObject *py_check(PyObject *self, PyObject *args) {
    PyObject *so, *ao;
    Py_buffer bs, ba;
    if (!PyArg_ParseTuple(args, "OO", &so, &ao)) return NULL;
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t), bad = -1;
    if (!get_buf(ao, &ba, 0, 8, n, "actions")) { PyBuffer_Release(&bs); return NULL; }
    const game_t *g = bs.buf;
    const int64_t *a = ba.buf;
    for (Py_ssize_t i = 0; i < n && bad < 0; i++) {
        if (g[i].phase == PH_OVER || a[i] == -1) continue; /* finished, or held still on purpose */
        if (a[i] < 0 || a[i] > 63 || !(g[i].mask >> a[i] & 1)) bad = i;
    }
    PyBuffer_Release(&bs); PyBuffer_Release(&ba);
    return PyLong_FromSsize_t(bad);
}

/* outputs(states, P, rewards f4[B,P], terminated u1[B], final_scores i4[B,P], placements u1[B,P], acting i1[B],
 *         result i1[B], caller i1[B]): the per-step outputs of every game, in one pass */
static PyObject *py_outputs(PyObject *self, PyObject *args) {
    enum { NB = 8 };
    PyObject *so, *o[NB - 1];
    int P;
    Py_buffer b[NB];
    if (!PyArg_ParseTuple(args, "OiOOOOOOO", &so, &P, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6])) return NULL;
    if (P < 2 || P > MAXP) { PyErr_SetString(PyExc_ValueError, "P must be 2 or 3"); return NULL; }
    if (!get_buf(so, &b[0], 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = b[0].len / (Py_ssize_t)sizeof(game_t);
    static const char *names[NB - 1] = {"rewards", "terminated", "final_scores", "placements", "acting", "result",
                                        "caller"};
    const Py_ssize_t item[NB - 1] = {4 * P, 1, 4 * P, P, 1, 1, 1};
    for (int k = 0; k < NB - 1; k++)
        if (!get_buf(o[k], &b[k + 1], 1, item[k], n, names[k])) {
            for (int j = 0; j <= k; j++) PyBuffer_Release(&b[j]);
            return NULL;
        }
    const game_t *g = b[0].buf;
    float *rw = b[1].buf;
    uint8_t *term = b[2].buf, *place = b[4].buf;
    int32_t *fs = b[3].buf;
    int8_t *act = b[5].buf, *res = b[6].buf, *caller = b[7].buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int over = g[i].phase == PH_OVER;
        term[i] = (uint8_t)over;
        act[i] = g[i].acting;
        res[i] = g[i].result;
        caller[i] = g[i].caller;
        for (int p = 0; p < P; p++) {
            rw[i * P + p] = g[i].rewards[p];
            fs[i * P + p] = over ? g[i].final_scores[p] : 0;
            place[i * P + p] = over ? g[i].placements[p] : 0;
        }
    }
    Py_END_ALLOW_THREADS
    for (int k = 0; k < NB; k++) PyBuffer_Release(&b[k]);
    Py_RETURN_NONE;
}

/* check_cards(states, rules, full=True) -> None, or (index, reason) of the first record whose cards or caches are wrong
 * (eng_check_cards: field ranges first, as fast.check_records, then cards and caches; full=False: ranges only) */
static PyObject *py_check_cards(PyObject *self, PyObject *args) {
    PyObject *so, *ro;
    rules_t R;
    Py_buffer bs;
    int full = 1;
    if (!PyArg_ParseTuple(args, "OO|p", &so, &ro, &full) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t), bad = -1;
    const game_t *g = bs.buf;
    char msg[200] = {0};
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        if ((full ? eng_check_cards : eng_check_ranges)(&g[i], &R, msg, (int)sizeof msg)) { bad = i; break; }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs);
    if (bad < 0) Py_RETURN_NONE;
    return Py_BuildValue("(ns)", bad, msg);
}

/* refresh(states, rules): recompute the claim window and legal mask of every live record from its hands */
static PyObject *py_refresh(PyObject *self, PyObject *args) {
    PyObject *so, *ro;
    rules_t R;
    Py_buffer bs;
    if (!PyArg_ParseTuple(args, "OO", &so, &ro) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 1, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    game_t *g = bs.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        if (g[i].phase != PH_OVER) eng_refresh(&g[i], &R);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs);
    Py_RETURN_NONE;
}

static PyObject *py_obs_size(PyObject *self, PyObject *args) {
    PyObject *ro;
    int oracle;
    rules_t R;
    if (!PyArg_ParseTuple(args, "Op", &ro, &oracle) || !parse_rules(ro, &R)) return NULL;
    return PyLong_FromLong(eng_obs_size(&R, oracle));
}

static int add_field(PyObject *lst, const char *name, Py_ssize_t off, const char *fmt, int d0, int d1) {
    PyObject *shape = d0 == 0 ? (Py_INCREF(Py_None), Py_None)
                              : (d1 == 0 ? Py_BuildValue("(i)", d0) : Py_BuildValue("(ii)", d0, d1));
    PyObject *t = shape ? Py_BuildValue("(snsN)", name, off, fmt, shape) : NULL;
    int ok = t && PyList_Append(lst, t) == 0;
    Py_XDECREF(t);
    return ok;
}

#define ADD(name, fmt, d0, d1) ok = ok && add_field(lst, #name, (Py_ssize_t)offsetof(game_t, name), fmt, d0, d1)

/* layout() -> ([(field, offset, numpy format, shape or None)], itemsize) */
static PyObject *py_layout(PyObject *self, PyObject *noargs) {
    PyObject *lst = PyList_New(0);
    int ok = lst != NULL;
    ADD(seed, "u8", 0, 0); ADD(hands, "u8", MAXP, 0); ADD(melds, "u8", MAXP, 0); ADD(kuikae, "u8", 0, 0);
    ADD(claim_opts, "u8", MAXP - 1, 0); ADD(mask, "u8", 0, 0); ADD(win_hand, "u8", 0, 0); ADD(win_meld, "u8", 0, 0);
    ADD(scores, "i4", MAXP, 0); ADD(final_scores, "i4", MAXP, 0); ADD(rewards, "f4", MAXP, 0);
    ADD(deltas, "i4", MAXP, 0); ADD(win_points, "i4", 0, 0); ADD(deals, "i4", 0, 0); ADD(replays, "i4", 0, 0); ADD(win_han, "i2", 0, 0);
    ADD(discards, "i1", MAXP, MAXD); ADD(called, "u4", MAXP, 0); ADD(wall, "i1", 53, 0);
    ADD(ndisc, "u1", MAXP, 0); ADD(calls_used, "u1", MAXP, 0); ADD(dead, "u1", MAXP, 0);
    ADD(draws_taken, "u1", MAXP, 0); ADD(placements, "u1", MAXP, 0);
    ADD(wall_pos, "u1", 0, 0); ADD(wall_end, "u1", 0, 0); ADD(wall_len, "u1", 0, 0);
    ADD(chiicha, "i1", 0, 0); ADD(round, "i1", 0, 0); ADD(phase, "i1", 0, 0); ADD(current, "i1", 0, 0);
    ADD(drawn, "i1", 0, 0); ADD(dora_ind, "i1", 0, 0); ADD(any_call, "u1", 0, 0); ADD(dealer_discarded, "u1", 0, 0);
    ADD(first_draw, "u1", 0, 0); ADD(last_card, "u1", 0, 0); ADD(claim_card, "i1", 0, 0);
    ADD(claim_discarder, "i1", 0, 0); ADD(claim_final, "i1", 0, 0); ADD(claim_n, "i1", 0, 0);
    ADD(claim_idx, "i1", 0, 0); ADD(claim_asked, "i1", MAXP - 1, 0); ADD(claim_resp, "i1", MAXP - 1, 0);
    ADD(result, "i1", 0, 0); ADD(win_seat, "i1", 0, 0); ADD(lose_seat, "i1", 0, 0); ADD(win_card, "i1", 0, 0);
    ADD(win_yakuman, "i1", 0, 0); ADD(win_flags, "i1", 0, 0); ADD(acting, "i1", 0, 0);
    ADD(win_dora, "i1", 0, 0); ADD(win_min_han, "i1", 0, 0); ADD(caller, "i1", 0, 0); ADD(hand_round, "i1", 0, 0);
    ADD(pad, "i1", 2, 0);
    if (!ok) {
        Py_XDECREF(lst);
        return NULL;
    }
    return Py_BuildValue("(Nn)", lst, (Py_ssize_t)sizeof(game_t));
}

/* constants() -> {name: value}: every code the Python side also defines (codes.py, actions.py) */
static PyObject *py_constants(PyObject *self, PyObject *noargs) {
    return Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}",
        "MAX_PLAYERS", MAXP, "MAX_DISCARDS", MAXD, "HAND_SIZE", HAND_SIZE, "N_CARDS", N_CARDS,
        "PHASE_DRAW", PH_DRAW, "PHASE_CALL_DISCARD", PH_CALL_DISCARD, "PHASE_CLAIM", PH_CLAIM, "PHASE_OVER", PH_OVER,
        "RESULT_NONE", RES_NONE, "RESULT_RON", RES_RON, "RESULT_TSUMO", RES_TSUMO, "RESULT_DRAW", RES_DRAW,
        "RESULT_CHOMBO", RES_CHOMBO, "FLAG_TSUMO", FL_TSUMO, "FLAG_DEALER", FL_DEALER, "FLAG_FIRST_DRAW",
        FL_FIRST_DRAW, "FLAG_LAST_CARD", FL_LAST_CARD, "ACTION_TSUMO", TSUMO_A, "ACTION_RON", RON_A,
        "ACTION_PON_BASE", PON_A, "ACTION_CHII_LOW", CHII_LOW_A, "ACTION_CHII_MID", CHII_MID_A, "ACTION_CHII_HIGH",
        CHII_HIGH_A, "ACTION_PASS", PASS_A, "N_CALL_ACTIONS", N_CALL_ACTIONS);
}

/* obs_layout(rules, oracle) -> [(field, offset, size)] as eng_encode writes them */
static PyObject *py_obs_layout(PyObject *self, PyObject *args) {
    PyObject *ro;
    int oracle;
    rules_t R;
    if (!PyArg_ParseTuple(args, "Op", &ro, &oracle) || !parse_rules(ro, &R)) return NULL;
    const obs_layout_t L = R.obs[oracle != 0];
    PyObject *lst = PyList_New(0);
    for (int f = 0; lst && f < OBS_NFIELDS; f++) {
        if (!L.size[f]) continue;
        PyObject *t = Py_BuildValue("(sii)", OBS_FIELD_NAMES[f], L.off[f], L.size[f]);
        if (!t || PyList_Append(lst, t) < 0) { Py_XDECREF(t); Py_DECREF(lst); return NULL; }
        Py_DECREF(t);
    }
    return lst;
}

/* call_tables(rules) -> (pairs, kuikae): bytes of N_CALL_ACTIONS x 52 uint64, row = action - PON, column = card */
static PyObject *py_call_tables(PyObject *self, PyObject *args) {
    PyObject *ro;
    rules_t R;
    if (!PyArg_ParseTuple(args, "O", &ro) || !parse_rules(ro, &R)) return NULL;
    u64 pairs[N_CALL_ACTIONS][52], kk[N_CALL_ACTIONS][52];
    for (int a = 0; a < N_CALL_ACTIONS; a++)
        for (int c = 0; c < 52; c++) {
            pairs[a][c] = eng_call_cards(PON_A + a, c);
            kk[a][c] = eng_kuikae_after(&R, PON_A + a, c);
        }
    return Py_BuildValue("(y#y#)", (const char *)pairs, (Py_ssize_t)sizeof pairs, (const char *)kk,
                         (Py_ssize_t)sizeof kk);
}

/* ---------------------------------------------------------------- bots and rollouts (_bots.c) */
static int check_codes_ext(const int8_t *codes, Py_ssize_t n, const char *what, int external_ok) {
    for (Py_ssize_t i = 0; i < n; i++)
        if ((codes[i] < 0 || codes[i] >= BOT_N) && !(external_ok && codes[i] == BOT_EXTERNAL)) {
            PyErr_Format(PyExc_ValueError, "%s: item %zd is %d, expected a policy code 0..%d%s", what, i, codes[i],
                         BOT_N - 1, external_ok ? " or the external seat's" : "");
            return 0;
        }
    return 1;
}

static int check_codes(const int8_t *codes, Py_ssize_t n, const char *what) { return check_codes_ext(codes, n, what, 0); }

/* what a bot evaluates: 7 or 8 cards counting the meld, the meld empty or 3 cards (R23), no overlap */
static int hand_size_ok(u64 hand, u64 meld) {
    int h = pc64(hand), m = pc64(meld);
    return !(hand & meld) && (m == 0 || m == 3) && (h + m == 7 || h + m == 8) && !(meld & JK_BIT);
}

/* records that the engine can index safely: the fields a bot or a step reads as indices */
static int check_states(const game_t *g, Py_ssize_t n, const rules_t *R) {
    char msg[200] = {0};
    for (Py_ssize_t i = 0; i < n; i++) {
        const game_t *x = &g[i];
        /* every field the engine indexes with, and the scores' bound: records.check_ranges's words */
        if (eng_check_ranges(x, R, msg, (int)sizeof msg)) {
            PyErr_Format(PyExc_ValueError, "engine record %zd: %s", i, msg);
            return 0;
        }
        for (int p = 0; p < R->P && x->phase != PH_OVER; p++)
            if (!hand_size_ok(x->hands[p], x->melds[p])) {
                PyErr_Format(PyExc_ValueError, "engine record %zd: seat %d holds %d cards and a meld of %d (expected "
                             "7 or 8 with the meld, the meld 0 or 3)", i, p, pc64(x->hands[p]), pc64(x->melds[p]));
                return 0;
            }
    }
    return 1;
}

/* policy_act(states, rules, codes int8[N], rng uint64[N] (advanced), out int64[N]): each record's acting
 * seat decides with its policy (-1 for a finished game) */
static PyObject *py_policy_act(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *co, *rgo, *oo;
    rules_t R;
    Py_buffer bs, bc, br, bo;
    if (!PyArg_ParseTuple(args, "OOOOO", &so, &ro, &co, &rgo, &oo) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(co, &bc, 0, 1, n, "codes")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(rgo, &br, 1, 8, n, "rng")) { PyBuffer_Release(&bs); PyBuffer_Release(&bc); return NULL; }
    if (!get_buf(oo, &bo, 1, 8, n, "out")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&bc); PyBuffer_Release(&br);
        return NULL;
    }
    const game_t *g = bs.buf;
    const int8_t *codes = bc.buf;
    uint64_t *rng = br.buf;
    int64_t *out = bo.buf;
    int ok = check_codes(codes, n, "codes") && check_states(g, n, &R);
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) out[i] = bot_act_record(&g[i], &R, codes[i], &rng[i]);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&bs); PyBuffer_Release(&bc); PyBuffer_Release(&br); PyBuffer_Release(&bo);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

/* act_obs(rules, code, obs uint8[B, D], masks uint8[B, 64], weights uint64[D] or None, seed, out int64[B]):
 * the agents' path: decisions from observation vectors (random needs the weights of RandomAgent) */
static PyObject *py_act_obs(PyObject *self, PyObject *args) {
    PyObject *ro, *obo, *mo, *wo, *oo;
    int code;
    unsigned long long seed;
    rules_t R;
    Py_buffer bob, bm, bw = {0}, bo;
    if (!PyArg_ParseTuple(args, "OiOOOKO", &ro, &code, &obo, &mo, &wo, &seed, &oo) || !parse_rules(ro, &R))
        return NULL;
    if (code < 0 || code >= BOT_N) {
        PyErr_Format(PyExc_ValueError, "code: %d is not a policy code 0..%d", code, BOT_N - 1);
        return NULL;
    }
    if (code == BOT_ORACLE) {
        PyErr_SetString(PyExc_ValueError, "code: the oracle policy reads the other seats' hands, so it decides from "
                        "records (policy_act, rollout), not observations");
        return NULL;
    }
    if (!get_buf(mo, &bm, 0, 64, -1, "masks")) return NULL;
    Py_ssize_t n = bm.len / 64;
    int D0 = eng_obs_size(&R, 0);
    if (PyObject_GetBuffer(obo, &bob, PyBUF_SIMPLE) < 0) { PyBuffer_Release(&bm); return NULL; }
    Py_ssize_t D = n ? bob.len / n : D0;
    if (n && (bob.len % n || D < D0)) {
        PyErr_Format(PyExc_ValueError, "obs: %zd bytes do not hold %zd observations of at least %d bytes", bob.len,
                     n, D0);
        PyBuffer_Release(&bm); PyBuffer_Release(&bob);
        return NULL;
    }
    int have_w = wo != Py_None;
    if (have_w && !get_buf(wo, &bw, 0, 8, D, "weights")) { PyBuffer_Release(&bm); PyBuffer_Release(&bob); return NULL; }
    if (code == BOT_RANDOM && !have_w) {
        PyErr_SetString(PyExc_ValueError, "weights: the random policy needs one uint64 weight per observation byte");
        PyBuffer_Release(&bm); PyBuffer_Release(&bob);
        return NULL;
    }
    if (!get_buf(oo, &bo, 1, 8, n, "out")) {
        PyBuffer_Release(&bm); PyBuffer_Release(&bob);
        if (have_w) PyBuffer_Release(&bw);
        return NULL;
    }
    const uint8_t *obs = bob.buf, *masks = bm.buf;
    const uint64_t *w = have_w ? bw.buf : NULL;
    int64_t *out = bo.buf;
    for (Py_ssize_t i = 0; code != BOT_RANDOM && i < n; i++) {
        bot_view_t v;
        bot_view_obs(obs + (size_t)i * (size_t)D, masks + (size_t)i * 64, &R, &v);
        if (v.mask && !hand_size_ok(v.hand, v.meld)) {
            PyErr_Format(PyExc_ValueError, "obs row %zd: a hand of %d cards and a meld of %d (expected 7 or 8 with "
                         "the meld, the meld 0 or 3)", i, pc64(v.hand), pc64(v.meld));
            PyBuffer_Release(&bm); PyBuffer_Release(&bob); PyBuffer_Release(&bo);
            if (have_w) PyBuffer_Release(&bw);
            return NULL;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        const uint8_t *ob = obs + (size_t)i * (size_t)D, *mk = masks + (size_t)i * 64;
        if (code == BOT_RANDOM) {
            u64 m = 0;
            for (int a = 0; a < 64; a++)
                if (mk[a]) m |= 1ULL << a;
            out[i] = bot_random_obs(ob, (int)D, m, w, (u64)seed);
            continue;
        }
        bot_view_t v;
        bot_view_obs(ob, mk, &R, &v);
        out[i] = bot_view_act(&v, &R, code);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bm); PyBuffer_Release(&bob); PyBuffer_Release(&bo);
    if (have_w) PyBuffer_Release(&bw);
    Py_RETURN_NONE;
}

/* The rollout's threads: each claims the next records (one atomic counter shared by all) and plays them to their
 * stop, so uneven hand lengths leave no thread idle for more than a record or two. A record's outcome depends on its own
 * inputs only, so which thread plays it changes nothing. */
typedef struct {
    game_t *g;
    const rules_t *R;
    const int8_t *pol;
    uint64_t *rng;
    int32_t *steps, *deltas;
    Py_ssize_t n, *next;
    int until, max_steps;
    long stuck; /* this thread's records that did not reach their stop (a pause for an external seat is a stop) */
} rollout_job_t;

/* records claimed at a time: a record is 360 bytes, not a multiple of the 64-byte line, so neighbouring records
 * share a line at their boundary, which both threads write at every step when they hold neighbours; claiming two at
 * a time halves the boundaries the threads share. Measured ~10 % faster than one and than four at a time (96
 * records, two threads, medians of four runs each on a noisy machine) */
#define ROLLOUT_BLOCK 2
static void *rollout_worker(void *arg) {
    rollout_job_t *J = arg;
    int P = J->R->P;
    for (Py_ssize_t i = 0, left = 0;; i++, left--) {
        if (!left) {
            i = __atomic_fetch_add(J->next, ROLLOUT_BLOCK, __ATOMIC_RELAXED);
            left = ROLLOUT_BLOCK;
        }
        if (i >= J->n) break;
        game_t *x = &J->g[i];
        int32_t start[MAXP];
        wait_table_t wt = {{0}}; /* this rollout's own table: the record brings none (_engine.c, wait table) */
        for (int p = 0; p < P; p++) start[p] = x->scores[p];
        int k = 0, done = x->phase == PH_OVER;
        int paused = 0;
        while (!done && k < J->max_steps) {
            if (x->acting < 0) break; /* not a live state: reported as stuck */
            int code = J->pol[i * P + x->acting];
            if (code == BOT_EXTERNAL) { paused = 1; break; } /* the caller decides this one */
            int a = bot_act_record(x, J->R, code, &J->rng[i]);
            if (eng_step_t(x, J->R, a, eng_wait_mode == WT_OFF ? NULL : &wt) < 0) break;
            k++;
            done = x->phase == PH_OVER || (!J->until && x->result != RES_NONE);
        }
        J->stuck += !done && !paused;
        J->steps[i] = k;
        for (int p = 0; p < P; p++) J->deltas[i * P + p] = x->scores[p] - start[p];
    }
    return NULL;
}

#define ROLLOUT_MAX_THREADS 8

/* rollout(states, rules, policies int8[N, P], rng uint64[N] (advanced), until 0 hand / 1 game, max_steps,
 *         steps int32[N], deltas int32[N, P], threads 1..8) -> number of records stopped by max_steps or a refused
 * action. Each record's seats play their policies until the current hand (or the game) ends, or until a seat whose
 * policy is BOT_EXTERNAL is to act (a pause: the caller decides and calls again); records advance in place.
 * deltas: score change over the rollout. Every input is checked before any record moves; then this thread
 * and threads - 1 more (no more than there are records) play the records, GIL released. A thread that cannot be
 * started leaves its share to the others. */
static PyObject *py_rollout(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *po, *rgo, *sto, *deo;
    int until, max_steps, threads;
    rules_t R;
    Py_buffer bs, bp, br, bst, bde;
    if (!PyArg_ParseTuple(args, "OOOOiiOOi", &so, &ro, &po, &rgo, &until, &max_steps, &sto, &deo, &threads) ||
        !parse_rules(ro, &R))
        return NULL;
    if (until != 0 && until != 1) {
        PyErr_SetString(PyExc_ValueError, "until: 0 (end of hand) or 1 (end of game)");
        return NULL;
    }
    if (threads < 1 || threads > ROLLOUT_MAX_THREADS) {
        PyErr_Format(PyExc_ValueError, "threads: 1..%d, got %d", ROLLOUT_MAX_THREADS, threads);
        return NULL;
    }
    int P = R.P;
    if (!get_buf(so, &bs, 1, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(po, &bp, 0, P, n, "policies")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(rgo, &br, 1, 8, n, "rng")) { PyBuffer_Release(&bs); PyBuffer_Release(&bp); return NULL; }
    if (!get_buf(sto, &bst, 1, 4, n, "steps")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&bp); PyBuffer_Release(&br);
        return NULL;
    }
    if (!get_buf(deo, &bde, 1, 4 * P, n, "deltas")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&bp); PyBuffer_Release(&br); PyBuffer_Release(&bst);
        return NULL;
    }
    long stuck = 0;
    int ok = check_codes_ext(bp.buf, n * P, "policies", 1) && check_states(bs.buf, n, &R);
    if (ok) {
        Py_ssize_t next = 0;
        rollout_job_t jobs[ROLLOUT_MAX_THREADS];
        pthread_t tid[ROLLOUT_MAX_THREADS];
        int started[ROLLOUT_MAX_THREADS] = {0};
        int T = threads < n ? threads : (n > 0 ? (int)n : 1);
        Py_BEGIN_ALLOW_THREADS
        for (int t = 0; t < T; t++)
            jobs[t] = (rollout_job_t){bs.buf, &R, bp.buf, br.buf, bst.buf, bde.buf, n, &next, until, max_steps, 0};
        for (int t = 1; t < T; t++) started[t] = pthread_create(&tid[t], NULL, rollout_worker, &jobs[t]) == 0;
        rollout_worker(&jobs[0]);
        for (int t = 1; t < T; t++)
            if (started[t]) pthread_join(tid[t], NULL);
        for (int t = 0; t < T; t++) stuck += jobs[t].stuck;
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&bs); PyBuffer_Release(&bp); PyBuffer_Release(&br); PyBuffer_Release(&bst);
    PyBuffer_Release(&bde);
    if (!ok) return NULL;
    return PyLong_FromLong(stuck);
}

/* play_games(states, rules, codes int8[A], seeds uint64[A], weights uint64[A, D], seats int8[N, P], actions
 * uint8[N, cap], nact int32[N], stats int32[N, 6, P]) -> games that did not end within cap actions.
 * Whole games for the arena (training/arena.py) when every agent of a lineup is a built-in C bot: seat s of game i is
 * agent seats[i, s], which decides with codes[agent]: greedy / defensive from the record (bot_act_record, as
 * act_obs decides from the observation), BOT_RANDOM as RandomAgent does, by the seeded hash of the acting seat's
 * observation (bot_random_obs with that agent's weights row and seed), never a splitmix stream. Each game is
 * stepped from its record to the end; every action is written to its actions row, and the arena's per-seat counts
 * (training.arena.GameRecord, read there from each step's outputs and hand outcomes) are kept in stats: rows
 * wins, Tsumo wins, deal-ins, calls (Pon/Chii resolved), han summed over wins, then row 5 = (hands, drawn hands). */
static PyObject *py_play_games(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *co, *seo, *wo, *sto, *ao, *no, *stato;
    rules_t R;
    Py_buffer bs, bc, bse, bw, bst, ba, bn, bstat;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &so, &ro, &co, &seo, &wo, &sto, &ao, &no, &stato) || !parse_rules(ro, &R))
        return NULL;
    int P = R.P, D = eng_obs_size(&R, 0);
    if (!get_buf(so, &bs, 1, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    Py_buffer *held[16] = {&bs}; /* every buffer taken so far, released at the end (8 are taken) */
    int nh = 1, ok = 0;
    long stuck = 0;
    uint8_t *obs = NULL;
#define TAKE(obj, buf, w, size, count, what)                                  \
    do {                                                                      \
        if (!get_buf(obj, buf, w, size, count, what)) goto release;           \
        held[nh++] = buf;                                                     \
    } while (0)
    TAKE(co, &bc, 0, 1, -1, "codes");
    Py_ssize_t A = bc.len;
    TAKE(seo, &bse, 0, 8, A, "seeds");
    TAKE(wo, &bw, 0, 8 * (Py_ssize_t)D, A, "weights");
    TAKE(sto, &bst, 0, P, n, "seats");
    TAKE(ao, &ba, 1, 1, -1, "actions");
    Py_ssize_t cap = n ? ba.len / n : 0;
    if (n && ba.len != cap * n) {
        PyErr_SetString(PyExc_ValueError, "actions: expected N rows of equal length");
        goto release;
    }
    TAKE(no, &bn, 1, 4, n, "nact");
    TAKE(stato, &bstat, 1, 4 * 6 * (Py_ssize_t)P, n, "stats");
#undef TAKE
    const int8_t *codes = bc.buf, *seats = bst.buf;
    const uint64_t *seeds = bse.buf, *weights = bw.buf;
    uint8_t *acts = ba.buf;
    int32_t *nact = bn.buf, *stats = bstat.buf;
    ok = check_codes(codes, A, "codes") && check_states(bs.buf, n, &R);
    for (Py_ssize_t i = 0; ok && i < n * P; i++)
        if (seats[i] < 0 || seats[i] >= A) {
            PyErr_Format(PyExc_ValueError, "seats: item %zd is %d, expected an agent index 0..%zd", i, seats[i], A - 1);
            ok = 0;
        }
    obs = ok ? malloc((size_t)D + 1) : NULL;
    if (ok && !obs) {
        PyErr_NoMemory();
        ok = 0;
    }
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            game_t *x = &((game_t *)bs.buf)[i];
            int32_t *st = stats + i * 6 * P;
            memset(st, 0, sizeof(int32_t) * 6 * P);
            wait_table_t wt = {{0}};
            Py_ssize_t k = 0;
            while (x->phase != PH_OVER && x->acting >= 0 && k < cap) {
                int ag = seats[i * P + x->acting], a;
                if (codes[ag] == BOT_RANDOM) {
                    eng_encode(x, &R, x->acting, 0, obs);
                    a = bot_random_obs(obs, D, x->mask, weights + (size_t)ag * D, seeds[ag]);
                } else
                    a = bot_act_record(x, &R, codes[ag], NULL);
                if (eng_step_t(x, &R, a, eng_wait_mode == WT_OFF ? NULL : &wt) < 0) break;
                acts[i * cap + k++] = (uint8_t)a;
                if (x->caller >= 0) st[3 * P + x->caller]++;
                if (x->result == RES_NONE) continue;
                st[5 * P]++;
                if (x->result == RES_DRAW) st[5 * P + 1]++;
                else if (x->result == RES_RON || x->result == RES_TSUMO) {
                    st[0 * P + x->win_seat]++;
                    st[4 * P + x->win_seat] += x->win_han;
                    if (x->result == RES_TSUMO) st[1 * P + x->win_seat]++;
                    else st[2 * P + x->lose_seat]++;
                }
            }
            nact[i] = (int32_t)k;
            stuck += x->phase != PH_OVER;
        }
        Py_END_ALLOW_THREADS
    }
release:
    free(obs);
    for (int h = 0; h < nh; h++) PyBuffer_Release(held[h]);
    if (!ok) return NULL;
    return PyLong_FromLong(stuck);
}

/* waits(states, rules, out uint64[N, P], table=None): each seat's waits (R33; 0 for a finished game and for the
 * seat that holds 8 cards after a call), read from and filled into the games' wait table when given */
static PyObject *py_waits(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *oo, *to = Py_None;
    rules_t R;
    Py_buffer bs, bo, bt = {0};
    if (!PyArg_ParseTuple(args, "OOO|O", &so, &ro, &oo, &to) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(oo, &bo, 1, 8 * R.P, n, "out")) { PyBuffer_Release(&bs); return NULL; }
    int have_t = to != Py_None;
    if (have_t && !get_buf(to, &bt, 1, sizeof(wait_table_t), n, "table")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&bo);
        return NULL;
    }
    const game_t *g = bs.buf;
    wait_table_t *wt = have_t ? bt.buf : NULL;
    uint64_t *out = bo.buf;
    int ok = check_states(g, n, &R);
    if (ok) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++)
            for (int p = 0; p < R.P; p++) out[i * R.P + p] = eng_seat_waits(&g[i], p, wt ? &wt[i] : NULL);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&bs); PyBuffer_Release(&bo);
    if (have_t) PyBuffer_Release(&bt);
    if (!ok) return NULL;
    Py_RETURN_NONE;
}

/* wait_mode(mode=-1) -> (the mode before (0 off, 1 lazy, 2 eager, 3 tenpai; -1 only reads it), bytes of one game's wait
 * table). Process-wide: a bench and test knob, set between steps, never while another thread steps. */
static PyObject *py_wait_mode(PyObject *self, PyObject *args) {
    int mode = -1, before = eng_wait_mode;
    if (!PyArg_ParseTuple(args, "|i", &mode)) return NULL;
    if (mode < -1 || mode > WT_TENPAI) {
        PyErr_Format(PyExc_ValueError, "wait_mode: %d is not a mode (0 off, 1 lazy, 2 eager, 3 tenpai)", mode);
        return NULL;
    }
    if (mode >= 0) eng_wait_mode = mode;
    return Py_BuildValue("(in)", before, (Py_ssize_t)sizeof(wait_table_t));
}

static PyMethodDef methods[] = {
    {"waits", py_waits, METH_VARARGS, "waits(states, rules, out, table=None)"},
    {"wait_mode", py_wait_mode, METH_VARARGS, "wait_mode(mode=-1) -> previous mode"},
    {"policy_act", py_policy_act, METH_VARARGS, "policy_act(states, rules, codes, rng, out)"},
    {"act_obs", py_act_obs, METH_VARARGS, "act_obs(rules, code, obs, masks, weights, seed, out)"},
    {"rollout", py_rollout, METH_VARARGS, "rollout(states, rules, policies, rng, until, max_steps, steps, deltas, threads)"},
    {"play_games", py_play_games, METH_VARARGS,
     "play_games(states, rules, codes, seeds, weights, seats, actions, nact, stats) -> unfinished"},
    {"reset", py_reset, METH_VARARGS, "reset(states, rules, seeds)"},
    {"step", py_step, METH_VARARGS, "step(states, rules, actions, illegal) -> n_illegal"},
    {"observe", py_observe, METH_VARARGS, "observe(states, rules, seats, oracle, obs, masks)"},
    {"pack_rules", py_pack_rules, METH_VARARGS, "pack_rules(rules record dict) -> bytes"},
    {"rules_fields", py_rules_fields, METH_NOARGS, "rules_fields() -> [(name, count)]"},
    {"constants", py_constants, METH_NOARGS, "constants() -> {name: value}"},
    {"obs_layout", py_obs_layout, METH_VARARGS, "obs_layout(rules, oracle) -> [(field, offset, size)]"},
    {"call_tables", py_call_tables, METH_VARARGS, "call_tables(rules) -> (pairs bytes, kuikae bytes)"},
    {"check", py_check, METH_VARARGS, "check(states, actions) -> first illegal index or -1"},
    {"outputs", py_outputs, METH_VARARGS, "outputs(states, P, rewards, terminated, final_scores, placements, acting, result, caller)"},
    {"random_legal", py_random_legal, METH_VARARGS, "random_legal(states, rng, out)"},
    {"check_cards", py_check_cards, METH_VARARGS, "check_cards(states, rules, full=True) -> None or (index, reason)"},
    {"refresh", py_refresh, METH_VARARGS, "refresh(states, rules)"},
    {"obs_size", py_obs_size, METH_VARARGS, "obs_size(rules, oracle) -> int"},
    {"layout", py_layout, METH_NOARGS, "layout() -> ([(field, offset, format, shape)], itemsize)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_fast", "Meld8 fast batched engine", -1, methods};

PyMODINIT_FUNC PyInit__fast(void) {
    eval_init();
    return PyModule_Create(&moddef);
}
