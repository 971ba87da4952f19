"""Sinkhorn Word Mover's Distance (prog-eval's sinkhorn_wmd; the Intrepydd
paper's sparse benchmark): the distance from one query document to every
document of a collection by 15 Sinkhorn iterations (Cuturi 2013, as in
Kusner et al. 2015), with lambda = 1.

Data (seeded, synthetic): V word embeddings of dimension D drawn around a
few topic centres (norms ~2-3 as word2vec's, so the distances are a few
units and exp(-M) stays far from underflow); documents are bags of words,
each a topic mixture sampled from a Zipf-like vocabulary, stored as the
V x N term matrix of word frequencies (columns sum to 1, ~0.5 % dense);
the query is one more such document (~30 distinct words) as a dense
histogram over the vocabulary.
"""
import numpy as np
import scipy.sparse as sp

ENTRY = "sinkhorn_wmd"
PFOR = False
TOLERANCE = "np.allclose(rtol=1e-8, atol=0) per document (float64; prog-eval's own check is max abs diff < 1e-6)"

LAMB = 1.0
MAX_ITER = 15

# vocabulary, embedding dim, documents, tokens per document (lo, hi), query tokens, topics
SIZES = {
    "small": dict(vocab=600, dim=32, docs=120, tokens=(8, 30), query=12, topics=4),
    "full": dict(vocab=8000, dim=300, docs=5000, tokens=(40, 100), query=36, topics=20),
}


def _bag(rng, vocab, n_tokens, word_p, topic_words):
    """One document: n_tokens draws, half from the whole vocabulary (Zipf),
    half from one topic's words; returns (word ids, frequencies)."""
    n_topic = n_tokens // 2
    general = rng.choice(vocab, n_tokens - n_topic, p=word_p)
    topical = rng.choice(topic_words[rng.integers(len(topic_words))], n_topic)
    words, counts = np.unique(np.concatenate([general, topical]), return_counts=True)
    return words, counts / counts.sum()


def generate(size):
    p = SIZES[size]
    rng = np.random.default_rng(20200615)
    V, D, N = p["vocab"], p["dim"], p["docs"]
    # embeddings: topic centre + noise
    topic = rng.integers(p["topics"], size=V)
    centres = rng.normal(scale=0.12, size=(p["topics"], D))
    vecs = centres[topic] + rng.normal(scale=0.12, size=(V, D))
    topic_words = [np.flatnonzero(topic == t) for t in range(p["topics"])]
    # Zipf-like word frequencies over a random ranking of the vocabulary
    rank = rng.permutation(V)
    word_p = 1.0 / (rank + 10.0)
    word_p /= word_p.sum()

    rows, cols, vals = [], [], []
    lo, hi = p["tokens"]
    for d in range(N):
        words, freq = _bag(rng, V, int(rng.integers(lo, hi + 1)), word_p, topic_words)
        rows.append(words)
        cols.append(np.full(len(words), d))
        vals.append(freq)
    c = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(V, N))
    c.sort_indices()
    words, freq = _bag(rng, V, p["query"], word_p, topic_words)
    r = np.zeros(V)
    r[words] = freq
    return {"r": r, "c": c, "vecs": vecs}


def arguments(data, version):
    r, c, vecs = data["r"], data["c"], data["vecs"]
    if version == "python":
        return (r.copy(), c.copy(), vecs.copy(), LAMB, MAX_ITER)
    # pydd (like the paper's listing) and the compiled versions take c's CSR arrays
    return (r.copy(), c.data.copy(), c.indices.copy(), c.indptr.copy(), c.shape[1],
            vecs.copy(), LAMB, MAX_ITER)


def result(returned, args):
    return np.asarray(returned, dtype=np.float64).ravel()


def check(expected, got):
    expected = np.asarray(expected, dtype=np.float64).ravel()
    got = np.asarray(got, dtype=np.float64).ravel()
    assert got.shape == expected.shape, f"shape {got.shape}, expected {expected.shape}"
    assert np.isfinite(got).all(), f"{np.count_nonzero(~np.isfinite(got))} non-finite distances"
    if not np.allclose(got, expected, rtol=1e-8, atol=0):
        i = int(np.argmax(np.abs(got - expected) / np.abs(expected)))
        raise AssertionError(
            f"document {i}: WMD {got[i]!r}, expected {expected[i]!r} "
            f"(max rel diff {np.max(np.abs(got - expected) / np.abs(expected)):.3e}, rtol 1e-8)")
