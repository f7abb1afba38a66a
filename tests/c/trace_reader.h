/* The conformance traces' reader (traces/README.md), shared by the C
 * replay (tests/c/traces.c) and the C++ one (tests/cpp/traces_test.cpp):
 * it splits each call line, hands it to the face's run function, and
 * compares the answers the face wrote with the trace's, exactly, naming the
 * file and line of the first difference. Plain C that C++ compiles too. */
#ifndef WEIR_TEST_TRACE_READER_H
#define WEIR_TEST_TRACE_READER_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weir.h"

enum { LINE_MAX_LEN = 8192, MAX_ARGS = 1100, MAX_TICKETS = 4096, MAX_LIST = 64, MAX_CHARGE = 32 };

/* One call line, split: its op, its argument tokens, the expected answers
 * (the text after " = "), and the answers the library gave. */
typedef struct {
    const char *file;
    int line;
    char *op;
    char *args[MAX_ARGS];
    int nargs;
    int next;
    const char *want;
    char got[LINE_MAX_LEN];
    size_t len;
} call;

static inline void fail(const call *c, const char *why) {
    fprintf(stderr, "%s:%d: %s\n", c->file, c->line, why);
    exit(1);
}

static inline const char *arg(call *c) {
    if (c->next >= c->nargs) fail(c, "too few arguments");
    return c->args[c->next++];
}
static inline int64_t a_i64(call *c) { return (int64_t)strtoll(arg(c), NULL, 10); }
static inline uint64_t a_u64(call *c) { return (uint64_t)strtoull(arg(c), NULL, 10); }
static inline double a_f64(call *c) {
    uint64_t bits = (uint64_t)strtoull(arg(c), NULL, 16);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* A key: "x" and two hex digits a byte, decoded into buf. */
static inline size_t a_key(call *c, unsigned char *buf, size_t cap) {
    const char *t = arg(c);
    size_t n = 0;
    if (t[0] != 'x') fail(c, "a key starts with x");
    for (t++; t[0] && t[1]; t += 2) {
        char two[3] = {t[0], t[1], 0};
        if (n == cap) fail(c, "key too long");
        buf[n++] = (unsigned char)strtoul(two, NULL, 16);
    }
    return n;
}

static inline void put(call *c, const char *text) {
    size_t n = strlen(text);
    if (c->len + n + 2 >= sizeof c->got) fail(c, "answer too long");
    if (c->len > 0) c->got[c->len++] = ' ';
    memcpy(c->got + c->len, text, n + 1);
    c->len += n;
}
static inline void o_i64(call *c, int64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRId64, v);
    put(c, b);
}
static inline void o_u64(call *c, uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    put(c, b);
}
static inline void o_bool(call *c, bool v) { put(c, v ? "1" : "0"); }
static inline void o_f64(call *c, double v) {
    uint64_t bits;
    char b[32];
    memcpy(&bits, &v, sizeof bits);
    snprintf(b, sizeof b, "0x%016" PRIx64, bits);
    put(c, b);
}
static inline void o_status(call *c, weir_status s) { o_i64(c, (int64_t)s); }

/* One face's replay: run makes one call on the state (false for an op
 * the face does not know); fresh readies the state for a new file and done
 * frees what it holds at the file's end. */
typedef struct {
    const char *face;
    bool (*run)(call *c, void *state);
    void (*fresh)(void *state);
    void (*done)(void *state);
    void *state;
} trace_face;

enum { MAX_SKIPS = 64 };

/* The face's lines of traces/skips.txt: the types and files it skips. */
static inline int trace_skips(const char *root, const char *face, char skips[][128]) {
    char path[1024], line[LINE_MAX_LEN];
    int n = 0;
    size_t len = strlen(face);
    FILE *f;
    snprintf(path, sizeof path, "%s/traces/skips.txt", root);
    f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        exit(1);
    }
    while (fgets(line, sizeof line, f) && n < MAX_SKIPS) {
        if (strncmp(line, face, len) == 0 && line[len] == ' ') {
            char *what = line + len + 1;
            size_t w = strcspn(what, " \n");
            if (w >= 128) w = 127;
            memcpy(skips[n], what, w);
            skips[n][w] = '\0';
            n++;
        }
    }
    fclose(f);
    return n;
}

static inline bool trace_skipped(char skips[][128], int n, const char *what) {
    for (int i = 0; i < n; i++)
        if (strcmp(skips[i], what) == 0) return true;
    return false;
}

/* Replays one file; returns the number of calls (0 for a skipped type). */
static inline long trace_replay_file(const trace_face *face, const char *path, char skips[][128],
                              int nskips) {
    static char text[LINE_MAX_LEN];
    static call c;
    FILE *f = fopen(path, "r");
    long calls = 0;
    memset(&c, 0, sizeof c);
    c.file = path;
    if (!f) fail(&c, "cannot open");
    face->fresh(face->state);
    while (fgets(text, sizeof text, f)) {
        char *eol = strchr(text, '\n');
        char *eq, *tok;
        c.line++;
        if (!eol) fail(&c, "line too long or not ended");
        *eol = '\0';
        if (c.line == 1) {
            if (strncmp(text, "weir-trace 1 ", 13) != 0) fail(&c, "not a version 1 trace");
            if (trace_skipped(skips, nskips, text + 13)) break;
            continue;
        }
        if (text[0] == '\0' || text[0] == '#') continue;
        eq = strstr(text, " =");
        if (!eq) fail(&c, "no ' =' in a call line");
        *eq = '\0';
        c.want = eq[2] == ' ' ? eq + 3 : eq + 2;
        c.nargs = 0;
        c.next = 0;
        c.len = 0;
        c.got[0] = '\0';
        c.op = strtok(text, " ");
        while ((tok = strtok(NULL, " ")) != NULL) {
            if (c.nargs == MAX_ARGS) fail(&c, "too many arguments");
            c.args[c.nargs++] = tok;
        }
        if (!face->run(&c, face->state)) fail(&c, "unknown op");
        if (c.next != c.nargs) fail(&c, "unused arguments");
        if (strcmp(c.got, c.want) != 0) {
            fprintf(stderr, "%s:%d: %s: expected \"%s\", got \"%s\"\n", path, c.line, c.op,
                    c.want, c.got);
            exit(1);
        }
        calls++;
    }
    fclose(f);
    face->done(face->state);
    return calls;
}

/* Replays every trace traces/index.txt lists under root that the face
 * does not skip; prints a summary line and returns the traces replayed
 * (exits on the first difference). */
static inline long trace_replay_all(const trace_face *face, const char *root) {
    static char skips[MAX_SKIPS][128];
    char name[512], path[1024];
    int nskips = trace_skips(root, face->face, skips);
    FILE *index;
    long files = 0, calls = 0;
    snprintf(path, sizeof path, "%s/traces/index.txt", root);
    index = fopen(path, "r");
    if (!index) {
        fprintf(stderr, "%s: cannot open\n", path);
        exit(1);
    }
    while (fgets(name, sizeof name, index)) {
        long n;
        name[strcspn(name, "\n")] = '\0';
        if (name[0] == '\0' || name[0] == '#' || trace_skipped(skips, nskips, name)) continue;
        snprintf(path, sizeof path, "%s/traces/%s", root, name);
        n = trace_replay_file(face, path, skips, nskips);
        if (n > 0) {
            calls += n;
            files++;
        }
    }
    fclose(index);
    printf("%s: %ld calls in %ld traces replayed exactly\n", face->face, calls, files);
    return files;
}

#endif
