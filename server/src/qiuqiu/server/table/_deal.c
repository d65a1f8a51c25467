/* The server's fair deal in C: fairness.hand_seed and fairness.derive_deck (protocol
 * package, PROTOCOL.md "Fairness"), byte for byte. The Python is the reference, and what
 * clients verify with; this exists for speed alone (issue 18: a deal's 65 or so digests
 * cost Python more in calls than in hashing), and tests/server/table/test_deal_native.py
 * holds it to the Python. SHA-256 is OpenSSL's. */
#define PY_SSIZE_T_CLEAN
/* SHA256_Init, _Update and _Final are deprecated by OpenSSL 3 in favour of EVP, yet still
 * exported by libcrypto 3; the define silences the warnings. They are kept for their plain
 * struct state: HMAC copies a started state for every block of the stream, a struct copy
 * here and a provider call with EVP_MD_CTX_copy_ex, and a deal's digests take 30% less
 * time with them than with EVP and pre-started contexts (3.7 against 5.1 us, SHA-NI). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <Python.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <string.h>

#define TILES 28
#define SALT 16
#define DIGEST SHA256_DIGEST_LENGTH
#define HMAC_BLOCK SHA256_CBLOCK
#define SEED_HEX (2 * DIGEST)
#define MOST_CLIENT_SEED 64

static PyObject *tile_names[TILES]; /* "0-0", "1-0", "1-1", ..., "6-6": canonical order */
static unsigned char tile_ascii[TILES][3];
static PyObject *sealed_deck;       /* fairness.SealedDeck */

static void sha256(const unsigned char *data, size_t n, unsigned char out[DIGEST]) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, n);
    SHA256_Final(out, &context);
}

/* HMAC-SHA256 (RFC 2104) under one key: its two padded hashes, each started once. Every
 * key here is a 32-byte seed, shorter than a block, so none is hashed first. */
typedef struct {
    SHA256_CTX inner, outer;
} hmac_key;

static void hmac_start(hmac_key *key, const unsigned char secret[DIGEST]) {
    unsigned char inner[HMAC_BLOCK], outer[HMAC_BLOCK];
    for (int i = 0; i < HMAC_BLOCK; i++) {
        unsigned char b = i < DIGEST ? secret[i] : 0;
        inner[i] = b ^ 0x36;
        outer[i] = b ^ 0x5c;
    }
    SHA256_Init(&key->inner);
    SHA256_Update(&key->inner, inner, HMAC_BLOCK);
    SHA256_Init(&key->outer);
    SHA256_Update(&key->outer, outer, HMAC_BLOCK);
}

/* The HMAC of the message fed to ``inner``, a copy of ``key->inner``. */
static void hmac_finish(const hmac_key *key, SHA256_CTX *inner, unsigned char out[DIGEST]) {
    unsigned char digest[DIGEST];
    SHA256_CTX outer = key->outer;
    SHA256_Final(digest, inner);
    SHA256_Update(&outer, digest, DIGEST);
    SHA256_Final(out, &outer);
}

/* Where the salts and draws come from: the deal's HMAC stream (fairness.Stream), or,
 * for the tests' shuffle(), bytes given. Returns -1 with an exception set. */
typedef struct source {
    int (*take)(struct source *, unsigned char *out, size_t n);
} source;

typedef struct {
    source base;
    hmac_key key;
    uint64_t counter;
    unsigned char block[DIGEST];
    size_t left; /* of block, not yet taken */
} stream;

static int stream_take(source *base, unsigned char *out, size_t n) {
    stream *s = (stream *)base;
    while (n > 0) {
        if (s->left == 0) {
            unsigned char counter[8];
            for (int i = 0; i < 8; i++) counter[i] = (unsigned char)(s->counter >> (56 - 8 * i));
            SHA256_CTX inner = s->key.inner;
            SHA256_Update(&inner, counter, sizeof counter);
            hmac_finish(&s->key, &inner, s->block);
            s->counter++;
            s->left = DIGEST;
        }
        size_t k = n < s->left ? n : s->left;
        memcpy(out, s->block + DIGEST - s->left, k);
        out += k;
        n -= k;
        s->left -= k;
    }
    return 0;
}

typedef struct {
    source base;
    const unsigned char *bytes;
    size_t left;
} given;

static int given_take(source *base, unsigned char *out, size_t n) {
    given *g = (given *)base;
    if (g->left < n) {
        PyErr_SetString(PyExc_ValueError, "the draws ran out before the shuffle's end");
        return -1;
    }
    memcpy(out, g->bytes, n);
    g->bytes += n;
    g->left -= n;
    return 0;
}

/* fairness.shuffled: Fisher-Yates over the canonical order, a refused draw (u >= limit)
 * followed by the next 4 bytes of the same source. */
static int shuffle(source *draws, int deck[TILES]) {
    for (int p = 0; p < TILES; p++) deck[p] = p;
    for (int i = TILES - 1; i > 0; i--) {
        uint64_t n = (uint64_t)i + 1;
        uint64_t limit = (UINT64_C(1) << 32) - (UINT64_C(1) << 32) % n;
        uint64_t u;
        do {
            unsigned char b[4];
            if (draws->take(draws, b, 4)) return -1;
            u = (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3];
        } while (u >= limit);
        int j = (int)(u % n), swapped = deck[i];
        deck[i] = deck[j];
        deck[j] = swapped;
    }
    return 0;
}

static PyObject *hex_string(const unsigned char *bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    PyObject *text = PyUnicode_New((Py_ssize_t)(2 * n), 127);
    if (text == NULL) return NULL;
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(text);
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = (Py_UCS1)digits[bytes[i] >> 4];
        out[2 * i + 1] = (Py_UCS1)digits[bytes[i] & 15];
    }
    return text;
}

static int hex_value(Py_UCS1 c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* fairness._seed_bytes: 32 bytes in lowercase hex. */
static int seed_bytes(PyObject *seed, unsigned char out[DIGEST]) {
    if (!PyUnicode_Check(seed)) {
        PyErr_SetString(PyExc_TypeError, "a seed is a str");
        return -1;
    }
    if (PyUnicode_IS_ASCII(seed) && PyUnicode_GET_LENGTH(seed) == SEED_HEX) {
        const Py_UCS1 *text = PyUnicode_1BYTE_DATA(seed);
        int i = 0;
        for (; i < DIGEST; i++) {
            int high = hex_value(text[2 * i]), low = hex_value(text[2 * i + 1]);
            if (high < 0 || low < 0) break;
            out[i] = (unsigned char)(high << 4 | low);
        }
        if (i == DIGEST) return 0;
    }
    PyErr_SetString(PyExc_ValueError, "a seed is 32 bytes in lowercase hex");
    return -1;
}

static int client_seed_char(Py_UCS1 c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

/* One (seat, seed) item of the client seeds into the deal key's message: the seat's
 * number and the seed's length, a byte each, then the seed's ASCII bytes. */
static int hash_client_seed(SHA256_CTX *inner, PyObject *item) {
    long seat = PyLong_AsLong(PyTuple_GET_ITEM(item, 0));
    if (seat == -1 && PyErr_Occurred()) return -1;
    if (seat < 0 || seat > 255) {
        PyErr_SetString(PyExc_ValueError, "a seat's number is in range(0, 256)");
        return -1;
    }
    PyObject *seed = PyTuple_GET_ITEM(item, 1);
    if (!PyUnicode_Check(seed)) {
        PyErr_SetString(PyExc_TypeError, "a client seed is a str");
        return -1;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(seed);
    int valid = PyUnicode_IS_ASCII(seed) && length <= MOST_CLIENT_SEED;
    const Py_UCS1 *text = valid ? PyUnicode_1BYTE_DATA(seed) : NULL;
    for (Py_ssize_t i = 0; valid && i < length; i++) valid = client_seed_char(text[i]);
    if (!valid) {
        PyErr_SetString(PyExc_ValueError, "a client seed is 1 to 64 letters, digits, '_' or '-'");
        return -1;
    }
    unsigned char head[2] = {(unsigned char)seat, (unsigned char)length};
    SHA256_Update(inner, head, sizeof head);
    SHA256_Update(inner, text, (size_t)length);
    return 0;
}

/* fairness.deal_key: HMAC(hand seed, every seat's client seed in ascending seat order). */
static int deal_key(PyObject *hand_seed, PyObject *client_seeds, unsigned char out[DIGEST]) {
    unsigned char secret[DIGEST];
    if (seed_bytes(hand_seed, secret)) return -1;
    PyObject *items = PyMapping_Items(client_seeds);
    if (items == NULL) return -1;
    hmac_key key;
    hmac_start(&key, secret);
    SHA256_CTX inner = key.inner;
    int failed = PyList_Sort(items);
    for (Py_ssize_t i = 0; !failed && i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        failed = !PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2;
        if (failed) PyErr_SetString(PyExc_TypeError, "the client seeds' items are pairs");
        else failed = hash_client_seed(&inner, item);
    }
    Py_DECREF(items);
    if (failed) return -1;
    hmac_finish(&key, &inner, out);
    return 0;
}

/* fairness.seal_salted's SealedDeck of the tiles, by their canonical number, and salts. */
static PyObject *sealed(const int deck[TILES], unsigned char salts[TILES][SALT]) {
    unsigned char leaves[TILES][DIGEST], root[DIGEST];
    for (int p = 0; p < TILES; p++) {
        unsigned char preimage[1 + SALT + 3];
        preimage[0] = (unsigned char)p;
        memcpy(preimage + 1, salts[p], SALT);
        memcpy(preimage + 1 + SALT, tile_ascii[deck[p]], 3);
        sha256(preimage, sizeof preimage, leaves[p]);
    }
    sha256(&leaves[0][0], sizeof leaves, root);
    PyObject *fields[4] = {PyTuple_New(TILES), PyTuple_New(TILES), PyTuple_New(TILES),
                           hex_string(root, DIGEST)};
    PyObject *result = NULL;
    for (int i = 0; i < 4; i++)
        if (fields[i] == NULL) goto done;
    for (int p = 0; p < TILES; p++) {
        PyObject *salt = hex_string(salts[p], SALT), *leaf = hex_string(leaves[p], DIGEST);
        if (salt == NULL || leaf == NULL) {
            Py_XDECREF(salt);
            Py_XDECREF(leaf);
            goto done;
        }
        PyTuple_SET_ITEM(fields[0], p, Py_NewRef(tile_names[deck[p]]));
        PyTuple_SET_ITEM(fields[1], p, salt);
        PyTuple_SET_ITEM(fields[2], p, leaf);
    }
    result = PyObject_Vectorcall(sealed_deck, fields, 4, NULL);
done:
    for (int i = 0; i < 4; i++) Py_XDECREF(fields[i]);
    return result;
}

static PyObject *derive_deck(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "derive_deck takes a hand seed and client seeds");
        return NULL;
    }
    unsigned char key[DIGEST];
    if (deal_key(args[0], args[1], key)) return NULL;
    stream source = {.base = {stream_take}};
    hmac_start(&source.key, key);
    unsigned char salts[TILES][SALT];
    int deck[TILES];
    stream_take(&source.base, &salts[0][0], sizeof salts);
    if (shuffle(&source.base, deck)) return NULL;
    return sealed(deck, salts);
}

static PyObject *hand_seed(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "hand_seed takes a table seed, a table id and a hand id");
        return NULL;
    }
    unsigned char secret[DIGEST], out[DIGEST];
    if (seed_bytes(args[0], secret)) return NULL;
    PyObject *table_id = args[1];
    if (!PyUnicode_Check(table_id)) {
        PyErr_SetString(PyExc_TypeError, "a table id is a str");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(table_id)) /* fails with the Python's UnicodeEncodeError */
        return PyUnicode_AsASCIIString(table_id);
    unsigned long long hand_id = PyLong_AsUnsignedLongLong(args[2]);
    if (hand_id == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    unsigned char tail[1 + 8] = {0};
    for (int i = 0; i < 8; i++) tail[1 + i] = (unsigned char)(hand_id >> (56 - 8 * i));
    hmac_key key;
    hmac_start(&key, secret);
    SHA256_CTX inner = key.inner;
    SHA256_Update(&inner, PyUnicode_1BYTE_DATA(table_id), (size_t)PyUnicode_GET_LENGTH(table_id));
    SHA256_Update(&inner, tail, sizeof tail);
    hmac_finish(&key, &inner, out);
    return hex_string(out, DIGEST);
}

/* For the tests: the canonical tiles shuffled by ``draws``, as fairness.shuffled would
 * shuffle them from a stream of those bytes; no stream can be steered to refuse a draw. */
static PyObject *shuffle_given(PyObject *self, PyObject *draws) {
    Py_buffer view;
    if (PyObject_GetBuffer(draws, &view, PyBUF_SIMPLE)) return NULL;
    given source = {.base = {given_take}, .bytes = view.buf, .left = (size_t)view.len};
    int deck[TILES];
    int failed = shuffle(&source.base, deck);
    PyBuffer_Release(&view);
    if (failed) return NULL;
    PyObject *tiles = PyTuple_New(TILES);
    if (tiles == NULL) return NULL;
    for (int p = 0; p < TILES; p++) PyTuple_SET_ITEM(tiles, p, Py_NewRef(tile_names[deck[p]]));
    return tiles;
}

static PyMethodDef methods[] = {
    {"hand_seed", (PyCFunction)(void (*)(void))hand_seed, METH_FASTCALL,
     "fairness.hand_seed(table_seed, table_id, hand_id), compiled."},
    {"derive_deck", (PyCFunction)(void (*)(void))derive_deck, METH_FASTCALL,
     "fairness.derive_deck(hand_seed_hex, client_seeds), compiled."},
    {"shuffle", shuffle_given, METH_O,
     "The canonical tiles shuffled by draws from the given bytes (for the tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_deal", NULL, -1, methods};

PyMODINIT_FUNC PyInit__deal(void) {
    int p = 0;
    for (char high = '0'; high <= '6'; high++)
        for (char low = '0'; low <= high; low++, p++) {
            const char name[] = {high, '-', low, '\0'};
            memcpy(tile_ascii[p], name, 3);
            if ((tile_names[p] = PyUnicode_InternFromString(name)) == NULL) return NULL;
        }
    PyObject *fairness = PyImport_ImportModule("qiuqiu.protocol.fairness");
    if (fairness == NULL) return NULL;
    sealed_deck = PyObject_GetAttrString(fairness, "SealedDeck");
    Py_DECREF(fairness);
    if (sealed_deck == NULL) return NULL;
    return PyModule_Create(&module);
}
