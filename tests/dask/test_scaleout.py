"""examples/dask_scaleout.py on a LocalCluster of 2 worker processes (2
threads each): PR-Nibble over many seeds with client.map and an element-wise
kernel over a chunked dask.array with map_blocks give exactly what the same
kernels give in this process, and the workers got the module through
client.upload_file, not through this process's sys.path."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import dask_scaleout  # noqa: E402

import pydd  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYDD_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as c:
            yield c


def test_examples_agree_with_one_process(client):
    kernels = pydd.compile(EXAMPLES / "scaleout.pydd")
    checks = dask_scaleout.run(client, kernels)
    assert len(checks) == 25
    for what, ours, reference in checks:
        assert np.array_equal(ours, reference), what
    reached = [np.count_nonzero(c[1]) for c in checks[:-1]]
    assert all(0 < r < 3000 for r in reached)  # local clusters, not the whole graph
    # The work ran in two other processes, which imported the uploaded module.
    pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()
    files = client.run(lambda dask_worker: (sys.modules["scaleout"].__file__, dask_worker.local_directory))
    for module_file, local_dir in files.values():
        assert Path(module_file).parent == Path(local_dir)
