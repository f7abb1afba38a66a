/* The bay's C replays' queue of things due later (calls finishing,
 * retries waiting, resources coming back): a min-heap of (at, a, b) in
 * lexicographic order, the order the Rust scenarios' BinaryHeap of
 * Reverse((at, a, b)) gives them back, so ties break alike. Each program
 * has one queue. */
#ifndef BAY_DUE_H
#define BAY_DUE_H

#include <stdint.h>
#include <stdlib.h>

struct bay_due {
    int64_t at, a, b;
};

static struct bay_due *bay_due_heap;
static size_t bay_due_len, bay_due_cap;

static inline int bay_due_before(const struct bay_due *x, const struct bay_due *y) {
    if (x->at != y->at) return x->at < y->at;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static inline void bay_due_swap(size_t i, size_t j) {
    struct bay_due t = bay_due_heap[i];
    bay_due_heap[i] = bay_due_heap[j];
    bay_due_heap[j] = t;
}

static inline void bay_due_push(int64_t at, int64_t a, int64_t b) {
    if (bay_due_len == bay_due_cap) {
        bay_due_cap = bay_due_cap ? 2 * bay_due_cap : 1024;
        bay_due_heap = realloc(bay_due_heap, bay_due_cap * sizeof *bay_due_heap);
        if (!bay_due_heap) exit(3);
    }
    size_t i = bay_due_len++;
    bay_due_heap[i] = (struct bay_due){at, a, b};
    while (i > 0 && bay_due_before(&bay_due_heap[i], &bay_due_heap[(i - 1) / 2])) {
        bay_due_swap(i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

/* The earliest entry, or NULL when none is waiting. */
static inline const struct bay_due *bay_due_peek(void) { return bay_due_len ? &bay_due_heap[0] : NULL; }

static inline struct bay_due bay_due_pop(void) {
    struct bay_due top = bay_due_heap[0];
    bay_due_heap[0] = bay_due_heap[--bay_due_len];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < bay_due_len && bay_due_before(&bay_due_heap[l], &bay_due_heap[m])) m = l;
        if (r < bay_due_len && bay_due_before(&bay_due_heap[r], &bay_due_heap[m])) m = r;
        if (m == i) break;
        bay_due_swap(i, m);
        i = m;
    }
    return top;
}

#endif
