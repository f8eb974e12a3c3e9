"""Every pair of documents ranked by the share of code they have in common, rare code weighing more.

Students write 10 to 22 lines an assignment, so honest students often write
the same line: `return len(pos)` proves nothing.  Like MOSS, which ignores a
passage once it appears in more than a few documents (its `-m` option), we
weigh each fingerprint by how few documents have it: the smoothed inverse
document frequency of scikit-learn's TfidfTransformer (smooth_idf=True),

    weight(f) = 1 + ln((1 + N) / (1 + df(f)))

with N documents and df(f) of them holding f.  A fingerprint every student
has weighs 1; one only two of 200 share weighs 5.2.  In a class of two,
every fingerprint weighs the same.

A pair's share of code in common, seen from each side, is the weight of the
fingerprints both hold over the weight of all that side holds; the pair is
ranked by the mean of the two (JPlag's default "average similarity"), so a
hand-in that is a copy of half of another ranks by both halves.  All pairs
at once are one matrix product (the fingerprints in chunks), so a class of
1,000 (499,500 pairs) takes seconds.
"""

import math
from dataclasses import dataclass

import numpy as np

CHUNK = 4096        # fingerprints per block of the matrix product


@dataclass(frozen=True)
class Pair:
    a: int              # document indices, a < b (a of the class; b of the class or from --against)
    b: int
    similarity: float   # mean of share_a and share_b
    share_a: float      # of a's own code (weighted), the part b has too
    share_b: float
    rank: int = 0       # 1 = most similar


def weights(documents):
    """{fingerprint: weight} over the fingerprints of every document."""
    counts = {}
    for document in documents:
        for h in document.hashes:
            counts[h] = counts.get(h, 0) + 1
    n = len(documents)
    return {h: 1.0 + math.log((1 + n) / (1 + df)) for h, df in counts.items()}


def rank_pairs(documents, weight, compared):
    """Every pair with code in common, most similar first.  `compared(i, j)`: whether the pair counts
    (two documents of past classes are never compared with each other)."""
    sets = [document.hashes for document in documents]
    totals = np.array([sum(weight[h] for h in s) for s in sets], dtype=np.float64)
    shared = _shared_weights(sets, weight)
    pairs = []
    rows, cols = np.nonzero(np.triu(shared, k=1) > 0)
    for i, j in zip(rows.tolist(), cols.tolist()):
        if not compared(i, j) or not totals[i] or not totals[j]:
            continue
        share_i, share_j = float(shared[i, j] / totals[i]), float(shared[i, j] / totals[j])
        pairs.append(Pair(i, j, round(min((share_i + share_j) / 2, 1.0), 6), round(min(share_i, 1.0), 6),
                          round(min(share_j, 1.0), 6)))
    # Ties (the same variants chosen) in the documents' order, so the same class gives the same page.
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return [Pair(p.a, p.b, p.similarity, p.share_a, p.share_b, rank) for rank, p in enumerate(pairs, 1)]


def _shared_weights(sets, weight):
    """shared[i, j] = the weight of the fingerprints documents i and j both hold."""
    n = len(sets)
    counts = {}
    for s in sets:
        for h in s:
            counts[h] = counts.get(h, 0) + 1
    common = sorted(h for h, c in counts.items() if c > 1)      # only these can be shared
    shared = np.zeros((n, n), dtype=np.float64)
    for start in range(0, len(common), CHUNK):
        block = common[start:start + CHUNK]
        column = {h: k for k, h in enumerate(block)}
        present = np.zeros((n, len(block)), dtype=np.float64)
        for i, s in enumerate(sets):
            hits = [column[h] for h in s if h in column]
            present[i, hits] = 1.0
        scaled = present * np.sqrt(np.array([weight[h] for h in block], dtype=np.float64))
        shared += scaled @ scaled.T
    return shared


def clusters(pairs, threshold, size=3):
    """Groups of `size` or more documents joined by pairs at or above `threshold`, largest first."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for pair in pairs:
        if pair.similarity >= threshold:
            parent[find(pair.a)] = find(pair.b)
    groups = {}
    for x in list(parent):
        groups.setdefault(find(x), set()).add(x)
    found = [sorted(g) for g in groups.values() if len(g) >= size]
    return sorted(found, key=lambda g: (-len(g), g))
