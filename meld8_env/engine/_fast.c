/* CPython face of the fast engine (_engine.c). A batch is a writable buffer of B game_t structs
 * (a numpy structured array built from layout()); every function loops over the batch in C with
 * the GIL released, so callers may split a batch across threads. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include "_engine.h"

static int unpack_tuple(PyObject *t, rules_t *R) {
    /* order: see meld8_env/engine/fast.py::_rules_tuple */
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 41) {
        PyErr_SetString(PyExc_ValueError, "rules: expected a tuple of 41 ints");
        return 0;
    }
    int v[41];
    for (int i = 0; i < 41; i++) {
        v[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, i));
        if (v[i] == -1 && PyErr_Occurred()) return 0;
    }
    memset(R, 0, sizeof *R);
    int k = 0;
    R->P = v[k++]; R->rounds = v[k++]; R->starting_score = v[k++]; R->starting_dealer = v[k++];
    for (int i = 0; i < 4; i++) R->suit_rank[i] = v[k++];
    R->wall_limit = v[k++]; R->kuikae_on = v[k++]; R->penalty_mode = v[k++]; R->chombo_payment = v[k++];
    R->max_replays = v[k++]; R->placement_share = v[k++]; R->reward_rank = v[k++];
    for (int i = 0; i < 16; i++) R->min_han[i] = v[k++];
    for (int i = 0; i < MAXP; i++) R->placement[i] = v[k++];
    R->sp.value_triplet_han = v[k++]; R->sp.haitei_han = v[k++]; R->sp.points_per_han = v[k++];
    R->sp.counted_yakuman_han = v[k++]; R->sp.yakuman_value = v[k++]; R->sp.sequence_bonus_max = v[k++];
    R->sp.tiebreak_yaku = v[k++];
    if (R->P < 2 || R->P > MAXP || R->rounds < 1 || R->rounds > 16) {
        PyErr_SetString(PyExc_ValueError, "rules: players must be 2..3 and rounds 1..16");
        return 0;
    }
    return 1;
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
    if (!PyArg_ParseTuple(args, "O", &t) || !unpack_tuple(t, &R)) return NULL;
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

/* step(states, rules, actions int64[B], illegal uint8[B]) -> number of illegal actions (not applied) */
static PyObject *py_step(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *ao, *io;
    rules_t R;
    Py_buffer bs, ba, bi;
    if (!PyArg_ParseTuple(args, "OOOO", &so, &ro, &ao, &io) || !parse_rules(ro, &R)) return NULL;
    if (!get_buf(so, &bs, 1, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(ao, &ba, 0, 8, n, "actions")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(io, &bi, 1, 1, n, "illegal")) { PyBuffer_Release(&bs); PyBuffer_Release(&ba); return NULL; }
    game_t *g = bs.buf;
    const int64_t *a = ba.buf;
    uint8_t *ill = bi.buf;
    long bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t act = a[i];
        if (act == -1) { /* hold this game still for one step: no action, no reward */
            for (int p = 0; p < MAXP; p++) g[i].rewards[p] = 0;
            g[i].result = RES_NONE;
            ill[i] = 0;
            continue;
        }
        int r = (act < 0 || act > 63) ? -1 : eng_step(&g[i], &R, (int)act);
        ill[i] = r < 0;
        bad += r < 0;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs); PyBuffer_Release(&ba); PyBuffer_Release(&bi);
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
        rng[i] += 0x9E3779B97F4A7C15ULL;
        uint64_t z = rng[i];
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        int r = (int)(z % (uint64_t)k);
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

/* outputs(states, P, rewards f4[B,P], terminated u1[B], final_scores i4[B,P], acting i1[B]) */
static PyObject *py_outputs(PyObject *self, PyObject *args) {
    PyObject *so, *ro, *to, *fo, *ao;
    int P;
    Py_buffer bs, br, bt, bf, ba;
    if (!PyArg_ParseTuple(args, "OiOOOO", &so, &P, &ro, &to, &fo, &ao)) return NULL;
    if (P < 2 || P > MAXP) { PyErr_SetString(PyExc_ValueError, "P must be 2 or 3"); return NULL; }
    if (!get_buf(so, &bs, 0, sizeof(game_t), -1, "states")) return NULL;
    Py_ssize_t n = bs.len / (Py_ssize_t)sizeof(game_t);
    if (!get_buf(ro, &br, 1, 4 * P, n, "rewards")) { PyBuffer_Release(&bs); return NULL; }
    if (!get_buf(to, &bt, 1, 1, n, "terminated")) { PyBuffer_Release(&bs); PyBuffer_Release(&br); return NULL; }
    if (!get_buf(fo, &bf, 1, 4 * P, n, "final_scores")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&br); PyBuffer_Release(&bt);
        return NULL;
    }
    if (!get_buf(ao, &ba, 1, 1, n, "acting")) {
        PyBuffer_Release(&bs); PyBuffer_Release(&br); PyBuffer_Release(&bt); PyBuffer_Release(&bf);
        return NULL;
    }
    const game_t *g = bs.buf;
    float *rw = br.buf;
    uint8_t *term = bt.buf;
    int32_t *fs = bf.buf;
    int8_t *act = ba.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int over = g[i].phase == PH_OVER;
        term[i] = (uint8_t)over;
        act[i] = g[i].acting;
        for (int p = 0; p < P; p++) {
            rw[i * P + p] = g[i].rewards[p];
            fs[i * P + p] = over ? g[i].final_scores[p] : 0;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&bs); PyBuffer_Release(&br); PyBuffer_Release(&bt); PyBuffer_Release(&bf); PyBuffer_Release(&ba);
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
    ADD(win_points, "i4", 0, 0); ADD(deals, "i4", 0, 0); ADD(replays, "i4", 0, 0); ADD(win_han, "i2", 0, 0);
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
    ADD(win_dora, "i1", 0, 0); ADD(win_min_han, "i1", 0, 0); ADD(pad, "i1", 4, 0);
    if (!ok) {
        Py_XDECREF(lst);
        return NULL;
    }
    return Py_BuildValue("(Nn)", lst, (Py_ssize_t)sizeof(game_t));
}

static PyMethodDef methods[] = {
    {"reset", py_reset, METH_VARARGS, "reset(states, rules, seeds)"},
    {"step", py_step, METH_VARARGS, "step(states, rules, actions, illegal) -> n_illegal"},
    {"observe", py_observe, METH_VARARGS, "observe(states, rules, seats, oracle, obs, masks)"},
    {"pack_rules", py_pack_rules, METH_VARARGS, "pack_rules(tuple of 41 ints) -> bytes"},
    {"check", py_check, METH_VARARGS, "check(states, actions) -> first illegal index or -1"},
    {"outputs", py_outputs, METH_VARARGS, "outputs(states, P, rewards, terminated, final_scores, acting)"},
    {"random_legal", py_random_legal, METH_VARARGS, "random_legal(states, rng, out)"},
    {"obs_size", py_obs_size, METH_VARARGS, "obs_size(rules, oracle) -> int"},
    {"layout", py_layout, METH_NOARGS, "layout() -> ([(field, offset, format, shape)], itemsize)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_fast", "Meld8 fast batched engine", -1, methods};

PyMODINIT_FUNC PyInit__fast(void) {
    eval_init();
    return PyModule_Create(&moddef);
}
