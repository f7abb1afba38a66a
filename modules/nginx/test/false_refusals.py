"""The bloom array's false-refusal bound (include/weir.h, weir_bloom): the
fraction F of N keys, each asking a fraction f of its burst in one window,
refused before their share, in M words with k words a key in one 8-word
line. `false_refusals.py N M K F` prints F."""
import itertools
import math
import sys
from collections import Counter


def p_covered(j, k, m):
    """The chance that j uniform k-subsets of a line's 8 words cover each of
    a key's k words at least m times."""
    subsets = list(itertools.combinations(range(8), k))
    dist = Counter({(0,) * k: 1.0})
    for _ in range(j):
        nxt = Counter()
        for counts, p in dist.items():
            for s in subsets:
                c = list(counts)
                for w in s:
                    if w < k and c[w] < m:
                        c[w] += 1
                nxt[tuple(c)] += p / len(subsets)
        dist = nxt
    return sum(p for c, p in dist.items() if min(c) >= m)


def bound(n, words, k, f):
    m = math.floor(1 / f)
    lam = 8 * n / words
    total, j = 0.0, 0
    while True:
        w = math.exp(-lam) * lam**j / math.factorial(j)
        total += w * p_covered(j, k, m)
        j += 1
        if j > lam and w < 1e-12:
            return total


if __name__ == "__main__":
    n, words, k, f = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    print("%.6g" % bound(n, words, k, f))
