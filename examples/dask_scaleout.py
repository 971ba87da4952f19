"""pydd kernels on a Dask cluster: PR-Nibble from many seeds with
``client.map`` and an element-wise kernel over a chunked ``dask.array`` with
``map_blocks``, on a LocalCluster of worker processes; both are checked
against the same kernels run in this process.

    /usr/bin/python3 examples/dask_scaleout.py [--workers N]

How the kernels reach the workers: ``pydd.compile`` makes the module
importable by its own name here (``import scaleout``), so its functions
pickle by reference, and ``client.upload_file(module.__file__)`` puts the
built module in every worker's directory, which Dask keeps on the workers'
``sys.path``. That is also how a remote cluster gets it, as long as the
workers see the pydd runtime library at the same path (the same build or
installation on a shared file system); a shared path for the module itself,
on every worker's ``PYTHONPATH``, works as well. Kernels release the GIL, so
a worker with several threads runs several kernels at once.
"""
import argparse
import os
import sys

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import pydd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def ring_graph(n, extra, rng):
    """An undirected graph: a ring (every degree >= 2) plus random edges."""
    src = np.concatenate([np.arange(n), rng.integers(0, n, n * extra)])
    dst = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, n * extra)])
    keep = src != dst
    A = sp.coo_matrix((np.ones(keep.sum()), (src[keep], dst[keep])), shape=(n, n)).tocsr()
    return ((A + A.T) > 0).astype(np.float64).tocsr()


def run(client, kernels, n_nodes=3000, n_seeds=24):
    """Runs both examples on ``client``'s cluster; returns a list of
    (what, cluster result, single-process result)."""
    rng = np.random.default_rng(7)
    client.upload_file(kernels.__file__)
    A = ring_graph(n_nodes, 4, rng)
    seeds = rng.choice(n_nodes, n_seeds, replace=False).tolist()
    # The graph goes to every worker once, not once per task.
    A_remote = client.scatter(A, broadcast=True)
    futures = client.map(kernels.pr_nibble, seeds, adj=A_remote, alpha=0.15, epsilon=1e-5)
    clusters = client.gather(futures)
    local = [kernels.pr_nibble(s, A, 0.15, 1e-5) for s in seeds]
    checks = [(f"pr_nibble(seed={s})", c, l) for s, c, l in zip(seeds, clusters, local)]

    import dask.array as da
    X = rng.normal(size=(2000, 1500))
    # A block that reached a worker through pickle's out-of-band buffers
    # may be unaligned, which pydd refuses rather than copy behind your
    # back; np.require copies just those.
    def logistic(block):
        return kernels.logistic(np.require(block, requirements="A"))
    Y = da.from_array(X, chunks=(500, 600)).map_blocks(logistic, dtype=np.float64).compute()
    checks.append(("logistic over 4x3 blocks", Y, kernels.logistic(X)))
    return checks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from dask.distributed import Client, LocalCluster

    kernels = pydd.compile(os.path.join(HERE, "scaleout.pydd"))
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        checks = run(client, kernels)
        pids = client.run(os.getpid)
    ok = True
    for what, ours, reference in checks:
        same = np.array_equal(ours, reference)
        ok &= same
        print(f"  {what:<28} {'same as in one process' if same else 'MISMATCH'}")
    best = checks[0][1]
    print(f"{len(checks) - 1} PR-Nibble seeds and one map_blocks ran on {len(pids)} worker processes; "
          f"seed {checks[0][0]}: {np.count_nonzero(best)} nodes reached")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
