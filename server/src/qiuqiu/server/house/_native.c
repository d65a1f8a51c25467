/* The house's heads-up decision in C: policy.py's solved branch, over a tree flattened
 * by native.py. The Python is the reference, as pickle.py is to _pickle.c; this exists
 * for speed alone, and tests/server/house/test_native.py holds it to the Python,
 * decision for decision and draw for draw. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

/* Whole numbers are long long: long long go up to 10**12 (protocol's MAX_CHIPS). */

/* A node's ints and doubles, in the order native.flatten writes them. */
#define MOST 6
enum {
    KIND, PLAYER, ROUND, ACTIONS, OFFSET, ON_CHECK, ON_CALL, ON_FOLD, SIZED, SIZES,
    CHILDREN, SIZE_ACTIONS = CHILDREN + MOST, ACTION_KINDS = SIZE_ACTIONS + MOST,
    ALL_INS = ACTION_KINDS + MOST, INTS = ALL_INS + MOST
};
enum { SIZE_FRACTIONS, ACTION_FRACTIONS = MOST, DOUBLES = 2 * MOST };
enum { DECISION = 0, DEAL = 3 };
/* A Move's fields, by place (record.py). */
enum { MOVE_SEAT, MOVE_KIND, MOVE_ROUND, MOVE_ADDED, MOVE_TO, MOVE_ALL_IN, MOVE_FIELDS };
/* Move and action kinds; a sized node's SIZED is BET or RAISE. */
enum { CHECK, CALL, FOLD, BET, RAISE, OTHER };
#define TILES 28

static PyObject *s_check, *s_stacks, *s_complete, *s_rules, *s_ante, *s_button, *s_memo,
    *s_solved, *s_flat, *s_antes, *s_moves, *s_seat, *s_round, *s_raise, *s_draws, *s_tiles,
    *s_index, *s_legal, *s_pot, *s_call, *s_bet, *s_raise_to, *s_min, *s_max, *s_random;
static long long binomial[TILES + 1][5];

static int read_integer(PyObject *object, PyObject *name, long long *out) {
    PyObject *value = PyObject_GetAttr(object, name);
    if (value == NULL) return -1;
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int read_bool(PyObject *object, PyObject *name, int *out) {
    PyObject *value = PyObject_GetAttr(object, name);
    if (value == NULL) return -1;
    *out = PyObject_IsTrue(value);
    Py_DECREF(value);
    return *out < 0 ? -1 : 0;
}

/* mapping.get(key, 0) for an int mapping. */
static int item_or_zero(PyObject *mapping, long long key, long long *out) {
    PyObject *k = PyLong_FromLongLong(key);
    if (k == NULL) return -1;
    PyObject *value = PyObject_GetItem(mapping, k);
    Py_DECREF(k);
    if (value == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
        PyErr_Clear();
        *out = 0;
        return 0;
    }
    *out = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

static long long item_integer(PyObject *tuple, Py_ssize_t index) {
    return PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, index));
}

/* The next seat of ``seats`` (an iterator over the mapping ``stacks``) and its stack. */
static int seat_and_stack(PyObject *stacks, PyObject *seats, long long *seat, long long *stack) {
    PyObject *key = PyIter_Next(seats);
    if (key == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "two stacks, not fewer");
        return -1;
    }
    PyObject *value = PyObject_GetItem(stacks, key);
    *seat = PyLong_AsLongLong(key);
    Py_DECREF(key);
    if (value == NULL) return -1;
    *stack = PyLong_AsLongLong(value);
    Py_DECREF(value);
    return PyErr_Occurred() ? -1 : 0;
}

static void swap_seats(long long *first, long long *stack0, long long *second, long long *stack1) {
    long long seat = *first, stack = *stack0;
    *first = *second, *stack0 = *stack1, *second = seat, *stack1 = stack;
}

static int move_kind(PyObject *kind) {
    int found = OTHER; /* no action of the tree: the walk leaves it, as in Python */
    if (PyUnicode_Check(kind)) {
        if (PyUnicode_CompareWithASCIIString(kind, "check") == 0) found = CHECK;
        else if (PyUnicode_CompareWithASCIIString(kind, "call") == 0) found = CALL;
        else if (PyUnicode_CompareWithASCIIString(kind, "fold") == 0) found = FOLD;
        else if (PyUnicode_CompareWithASCIIString(kind, "bet") == 0) found = BET;
        else if (PyUnicode_CompareWithASCIIString(kind, "raise") == 0) found = RAISE;
    }
    return found;
}

static double draw(PyObject *rng) {
    PyObject *value = PyObject_CallMethodNoArgs(rng, s_random);
    if (value == NULL) return -1.0;
    double drawn = PyFloat_AsDouble(value);
    Py_DECREF(value);
    return drawn;
}

/* The place of a set of tile indexes among all sets of its size, in the order of
 * itertools.combinations (holdings.py). */
static long long combination_number(long long *indexes, int k) {
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && indexes[j - 1] > indexes[j]; j--) {
            long long swap = indexes[j];
            indexes[j] = indexes[j - 1];
            indexes[j - 1] = swap;
        }
    long long number = binomial[TILES][k] - 1;
    for (int i = 0; i < k; i++) number -= binomial[TILES - 1 - indexes[i]][k - i];
    return number;
}

/* The row of the seat's tiles: Solved.state. */
static long long state_of(PyObject *tiles, PyObject *holdings, PyObject *hands,
                          long long hand_buckets) {
    Py_ssize_t count = PyTuple_GET_SIZE(tiles);
    if (count < 3 || count > 4) {
        PyErr_SetString(PyExc_ValueError, "the house holds three or four tiles");
        return -1;
    }
    long long indexes[4];
    for (Py_ssize_t i = 0; i < count; i++)
        if (read_integer(PyTuple_GET_ITEM(tiles, i), s_index, &indexes[i])) return -1;
    long long first3[3] = {indexes[0], indexes[1], indexes[2]};
    long long holding = combination_number(first3, 3);
    if (holdings == Py_None) return holding;
    long long first = ((const int *)PyBytes_AS_STRING(holdings))[holding];
    if (count == 3) return first;
    long long hand = combination_number(indexes, 4);
    return first * hand_buckets + ((const int *)PyBytes_AS_STRING(hands))[hand];
}

static int bounds(PyObject *range, long long *low, long long *high) {
    return read_integer(range, s_min, low) || read_integer(range, s_max, high) ? -1 : 0;
}

static long long clamp(long long amount, long long low, long long high) {
    return amount < low ? low : amount > high ? high : amount;
}

static int made(long long out[2], int kind, long long amount) {
    out[0] = kind;
    out[1] = amount;
    return 0;
}

/* policy._real: the abstract action as a legal real one, its kind and its amount (-1
 * where it has none) in ``out``; -1 on an error. */
static int real(const int *node, int index, const double *doubles, PyObject *legal, long long pot,
                long long bets[2], long long left[2], long long out[2]) {
    int kind = node[ACTION_KINDS + index], all_in = node[ALL_INS + index];
    double fraction = doubles[ACTION_FRACTIONS + index];
    int check;
    PyObject *range;
    long long low, high;
    if (kind == CHECK || kind == FOLD) {
        if (read_bool(legal, s_check, &check)) return -1;
        return made(out, check ? CHECK : FOLD, -1);
    }
    if (kind == CALL) {
        if ((range = PyObject_GetAttr(legal, s_call)) == NULL) return -1;
        int none = range == Py_None;
        Py_DECREF(range);
        return made(out, none ? CHECK : CALL, -1);
    }
    int me = node[PLAYER];
    long long behind = left[1 - me];
    if (kind == BET) {
        if ((range = PyObject_GetAttr(legal, s_bet)) == NULL) return -1;
        if (range == Py_None) {
            Py_DECREF(range);
            return made(out, CHECK, -1);
        }
        int failed = bounds(range, &low, &high);
        Py_DECREF(range);
        if (failed) return -1;
        long long amount = all_in ? behind : (long long)rint(fraction * (double)pot);
        return made(out, BET, clamp(amount < behind ? amount : behind, low, high));
    }
    if ((range = PyObject_GetAttr(legal, s_raise_to)) == NULL) return -1;
    if (range == Py_None) {
        Py_DECREF(range);
        return made(out, CALL, -1);
    }
    int failed = bounds(range, &low, &high);
    Py_DECREF(range);
    if (failed) return -1;
    long long most = bets[1 - me] + behind, to;
    if (all_in) {
        to = most;
    } else {
        long long current = bets[0] > bets[1] ? bets[0] : bets[1];
        to = current + (long long)rint(fraction * (double)(pot + current - bets[me]));
    }
    return made(out, RAISE, clamp(to < most ? to : most, low, high));
}

/* decide(chosen, unsized, sized, situation, strategies, rng) -> Decision | None:
 * policy._in_python's answer to (situation, strategies, rng), made by policy's own
 * ``unsized`` decisions (a tuple by kind) and ``sized(kind, amount)``; ``chosen`` is
 * translation.chosen, called at the hand's first turn. */
static PyObject *decide(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "decide takes 6 arguments");
        return NULL;
    }
    PyObject *chosen = args[0], *unsized = args[1], *sized = args[2];
    PyObject *situation = args[3], *strategies = args[4], *rng = args[5];
    PyObject *result = NULL, *stacks = NULL, *items = NULL, *rules = NULL, *memo = NULL,
             *solved = NULL, *flat = NULL, *antes = NULL, *moves = NULL, *draws = NULL,
             *tiles = NULL, *legal = NULL;
    long long ante, button, me, round, pot, first, second, stack0, stack1;
    int complete;

    if ((stacks = PyObject_GetAttr(situation, s_stacks)) == NULL) goto done;
    Py_ssize_t seats = PyObject_Length(stacks);
    if (seats < 0) goto done;
    if (seats != 2) goto none;
    if (read_bool(situation, s_complete, &complete)) goto done;
    if ((rules = PyObject_GetAttr(situation, s_rules)) == NULL) goto done;
    if (read_integer(rules, s_ante, &ante)) goto done;
    if (!complete || !ante) goto none;
    if ((items = PyObject_GetIter(stacks)) == NULL) goto done;
    if (seat_and_stack(stacks, items, &first, &stack0)) goto done;
    if (seat_and_stack(stacks, items, &second, &stack1)) goto done;
    if (read_integer(situation, s_button, &button) || read_integer(situation, s_seat, &me) ||
        read_integer(situation, s_round, &round) || read_integer(situation, s_pot, &pot))
        goto done;
    /* Abstract seat 0 acts first: the seat that is not the button. */
    if (first > second) swap_seats(&first, &stack0, &second, &stack1);
    if (first == button) swap_seats(&first, &stack0, &second, &stack1);
    long long effective = stack0 < stack1 ? stack0 : stack1;

    if ((memo = PyObject_GetAttr(situation, s_memo)) == NULL) goto done;
    if ((solved = PyObject_GetAttr(memo, s_solved)) == NULL) goto done;
    if (solved == Py_None) {
        Py_CLEAR(solved);
        PyObject *behind = PyLong_FromLongLong(effective - ante);
        if (behind == NULL) goto done;
        PyObject *call[] = {strategies, situation, behind};
        solved = PyObject_Vectorcall(chosen, call, 3, NULL);
        Py_DECREF(behind);
        if (solved == NULL) goto done;
        if (solved == Py_None) goto none;
    }
    if ((flat = PyObject_GetAttr(solved, s_flat)) == NULL) goto done;
    if (!PyTuple_Check(flat) || PyTuple_GET_SIZE(flat) != 6) {
        PyErr_SetString(PyExc_TypeError, "Solved.flat is native.flatten's tuple");
        goto done;
    }
    const int *ints = (const int *)PyBytes_AS_STRING(PyTuple_GET_ITEM(flat, 0));
    const double *doubles = (const double *)PyBytes_AS_STRING(PyTuple_GET_ITEM(flat, 1));
    const unsigned char *weights =
        (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(flat, 2));
    long long hand_buckets = PyLong_AsLongLong(PyTuple_GET_ITEM(flat, 5));

    if ((antes = PyObject_GetAttr(situation, s_antes)) == NULL) goto done;
    long long put[2], bets[2] = {0, 0};
    if (item_or_zero(antes, first, &put[0]) || item_or_zero(antes, second, &put[1])) goto done;
    long long walked = put[0] + put[1];
    if ((moves = PyObject_GetAttr(situation, s_moves)) == NULL) goto done;
    if ((draws = PyObject_GetAttr(memo, s_draws)) == NULL) goto done;
    if (!PyTuple_Check(moves) || !PyList_Check(draws)) {
        PyErr_SetString(PyExc_TypeError, "moves are a tuple and draws a list");
        goto done;
    }

    const int *node = ints;
    Py_ssize_t count = PyTuple_GET_SIZE(moves);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *move = PyTuple_GET_ITEM(moves, i);
        if (!PyTuple_Check(move) || PyTuple_GET_SIZE(move) != MOVE_FIELDS) {
            PyErr_SetString(PyExc_TypeError, "a move is a record.Move");
            goto done;
        }
        long long seat = item_integer(move, MOVE_SEAT), move_round = item_integer(move, MOVE_ROUND);
        long long added = item_integer(move, MOVE_ADDED), to;
        int kind = move_kind(PyTuple_GET_ITEM(move, MOVE_KIND));
        int all_in = PyObject_IsTrue(PyTuple_GET_ITEM(move, MOVE_ALL_IN));
        if (all_in < 0 || PyErr_Occurred()) goto done;
        if (node[KIND] == DEAL && move_round == node[ROUND] + 1) {
            node = ints + (Py_ssize_t)node[CHILDREN] * INTS;
            bets[0] = bets[1] = 0;
        }
        int p = seat == first ? 0 : 1;
        if (node[KIND] != DECISION || move_round != node[ROUND] || node[PLAYER] != p) goto none;
        long long child = kind == CHECK ? node[ON_CHECK]
                   : kind == CALL  ? node[ON_CALL]
                   : kind == FOLD  ? node[ON_FOLD] : -1;
        if (child < 0) {
            if ((kind != BET && kind != RAISE) || kind != node[SIZED]) goto none;
            const double *sizes = doubles + (node - ints) / INTS * DOUBLES + SIZE_FRACTIONS;
            const int *actions = node + SIZE_ACTIONS, *children = node + CHILDREN;
            int last = node[SIZES] - 1;
            long long current = bets[0] > bets[1] ? bets[0] : bets[1];
            double x;
            if (kind == BET) {
                x = (double)added / (double)walked;
            } else {
                if ((to = item_integer(move, MOVE_TO)) == -1 && PyErr_Occurred()) goto done;
                x = (double)(to - current) / (double)(walked + current - (to - added));
            }
            /* An all-in for less than the smallest size: pot odds answer it. */
            if (all_in && x < sizes[0] && seat != me) goto none;
            int whole = all_in || put[p] + added >= effective;
            if (whole && node[ALL_INS + actions[last]]) {
                child = children[actions[last]];
            } else if (x <= sizes[0]) {
                child = children[actions[0]];
            } else if (x >= sizes[last]) {
                child = children[actions[last]];
            } else if (seat == me) {
                double log_x = log1p(x), best = HUGE_VAL;
                for (int k = 0; k <= last; k++) {
                    double distance = fabs(log1p(sizes[k]) - log_x);
                    if (distance < best) {
                        best = distance;
                        child = children[actions[k]];
                    }
                }
            } else {
                while (PyList_GET_SIZE(draws) <= i) {
                    PyObject *value = PyObject_CallMethodNoArgs(rng, s_random);
                    if (value == NULL) goto done;
                    int failed = PyList_Append(draws, value);
                    Py_DECREF(value);
                    if (failed) goto done;
                }
                double drawn = PyFloat_AsDouble(PyList_GET_ITEM(draws, i));
                if (drawn == -1.0 && PyErr_Occurred()) goto done;
                int k = 1;
                while (x > sizes[k]) k++;
                double low = sizes[k - 1], high = sizes[k];
                double chance = (high - x) * (1 + low) / ((high - low) * (1 + x));
                child = children[actions[drawn < chance ? k - 1 : k]];
            }
        }
        walked += added;
        bets[p] += added;
        put[p] += added;
        node = ints + child * INTS;
    }
    if (node[KIND] == DEAL && round == node[ROUND] + 1) {
        node = ints + (Py_ssize_t)node[CHILDREN] * INTS;
        bets[0] = bets[1] = 0;
    }
    if (node[KIND] != DECISION || node[ROUND] != round || node[PLAYER] != (me == first ? 0 : 1))
        goto none;

    if ((tiles = PyObject_GetAttr(situation, s_tiles)) == NULL) goto done;
    if (!PyTuple_Check(tiles)) {
        PyErr_SetString(PyExc_TypeError, "the house's tiles are a tuple");
        goto done;
    }
    PyObject *holdings = PyTuple_GET_ITEM(flat, 3), *hands = PyTuple_GET_ITEM(flat, 4);
    long long state = state_of(tiles, holdings, hands, hand_buckets);
    if (state < 0) goto done;
    const unsigned char *row = weights + node[OFFSET] + state * node[ACTIONS];
    double point = draw(rng);
    if (point == -1.0 && PyErr_Occurred()) goto done;
    /* One uniform draw against the row's cumulative weights, which sum to 255. */
    point *= 255;
    int index = 0, last = node[ACTIONS] - 1;
    while (index < last) {
        point -= row[index];
        if (point < 0) break;
        index++;
    }
    if ((legal = PyObject_GetAttr(situation, s_legal)) == NULL) goto done;
    long long left[2] = {stack0 - put[0], stack1 - put[1]};
    long long decided[2];
    const double *fractions = doubles + (node - ints) / INTS * DOUBLES;
    if (real(node, index, fractions, legal, pot, bets, left, decided)) goto done;
    if (decided[1] < 0) {
        result = Py_NewRef(PyTuple_GET_ITEM(unsized, decided[0]));
    } else {
        PyObject *amount = PyLong_FromLongLong(decided[1]);
        if (amount == NULL) goto done;
        PyObject *call[] = {decided[0] == BET ? s_bet : s_raise, amount};
        result = PyObject_Vectorcall(sized, call, 2, NULL);
        Py_DECREF(amount);
    }
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(stacks);
    Py_XDECREF(items);
    Py_XDECREF(rules);
    Py_XDECREF(memo);
    Py_XDECREF(solved);
    Py_XDECREF(flat);
    Py_XDECREF(antes);
    Py_XDECREF(moves);
    Py_XDECREF(draws);
    Py_XDECREF(tiles);
    Py_XDECREF(legal);
    return result;
}

static PyMethodDef methods[] = {
    {"decide", (PyCFunction)(void (*)(void))decide, METH_FASTCALL,
     "The house's solved decision, or None (see native.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, methods};

static PyObject **const names[] = {
    &s_check, &s_stacks, &s_complete, &s_rules, &s_ante, &s_button, &s_memo, &s_solved,
    &s_flat, &s_antes, &s_moves, &s_seat, &s_round, &s_raise,
    &s_draws, &s_tiles, &s_index, &s_legal, &s_pot, &s_call, &s_bet, &s_raise_to, &s_min,
    &s_max, &s_random};
static const char *const spelled[] = {
    "check", "stacks", "complete", "rules", "ante", "button", "memo", "solved",
    "flat", "antes", "moves", "seat", "round", "raise",
    "draws", "tiles", "index", "legal", "pot", "call", "bet", "raise_to", "min",
    "max", "random"};

PyMODINIT_FUNC PyInit__native(void) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((*names[i] = PyUnicode_InternFromString(spelled[i])) == NULL) return NULL;
    for (int n = 0; n <= TILES; n++) {
        binomial[n][0] = 1;
        for (int k = 1; k < 5; k++)
            binomial[n][k] = n == 0 ? 0 : binomial[n - 1][k - 1] + binomial[n - 1][k];
    }
    return PyModule_Create(&module);
}
