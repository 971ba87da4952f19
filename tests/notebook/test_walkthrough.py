"""examples/walkthrough.ipynb, executed top to bottom by nbclient in a real
IPython kernel (Debian's python3 kernelspec), with a fresh compile cache.

The notebook asserts its own results against NumPy/SciPy; here we check
what a reader sees: every cell ran, the results and the chart are there, and
compile errors appear as pyddc diagnostics naming the cell, never as a
traceback into pydd."""

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "walkthrough.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("notebook")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with pytest.MonkeyPatch.context() as mp:  # the kernel inherits our environment
        mp.setenv("PYDD_CACHE_DIR", str(tmp / "cache"))
        mp.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiets ipykernel's debugger
        nbclient.NotebookClient(nb, timeout=180, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp)}}).execute()
    return [c for c in nb.cells if c.cell_type == "code"]


def text(cell, stream):
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == stream)


def cell_with(cells, source):
    return next(c for c in cells if source in c.source)


def test_every_cell_ran(executed):
    assert all(c.execution_count for c in executed)
    for c in executed:
        assert "Traceback" not in text(c, "stderr") + text(c, "stdout")
        assert not [o for o in c.outputs if o.output_type == "error"], c.source


def test_results_match_numpy(executed):
    assert "agree with NumPy on 20000 points" in text(cell_with(executed, "labels_np"), "stdout")
    assert "pagerank agrees with SciPy" in text(cell_with(executed, "rank = pagerank"), "stdout")


def test_chart_is_drawn(executed):
    cell = cell_with(executed, "plt.show()")
    assert any("image/png" in o.get("data", {}) for o in cell.outputs)
    ratios = re.search(r"NumPy time / pydd time: \[(.*)\]", text(cell, "stdout"))
    assert ratios and len(ratios.group(1).split(",")) == 3


def test_magic_compile_error_is_a_diagnostic(executed):
    cell = cell_with(executed, "%%pydd\ndef smooth")
    n = cell.execution_count
    assert text(cell, "stderr").splitlines() == [
        f"In[{n}]:3:14: error: lambda expressions are not supported in pydd kernels",
        "    kernel = lambda v: 0.5 * v",
        "             ^"]
    assert text(cell, "stdout") == ""


def test_decorator_compile_error_is_a_diagnostic(executed):
    cell = cell_with(executed, "undefined_factor\n")
    assert text(cell, "stderr").splitlines()[0] == \
        f"In[{cell.execution_count}]:3:16: error: name 'undefined_factor' is not defined"


def test_fallback_runs_python_with_a_warning(executed):
    cell = cell_with(executed, "fallback=True")
    assert text(cell, "stdout") == "5 values, mean 2.00\n"
    warning = text(cell, "stderr")
    assert "FallbackWarning: pydd.kernel: describe runs as Python" in warning
    assert f"In[{cell.execution_count}]:2:36: error: unknown type 'str'" in warning
