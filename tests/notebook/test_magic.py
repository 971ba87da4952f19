"""The %%pydd magic's options, in an in-process IPython shell (the
notebook test runs it in a real kernel)."""

import numpy as np
import pytest

pytest.importorskip("IPython")


@pytest.fixture(scope="module")
def ip(tmp_path_factory):
    from IPython.testing.globalipapp import start_ipython
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYDD_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        shell = start_ipython()
        shell.run_line_magic("load_ext", "pydd")
        yield shell


CELL = """\
def pick(x: Array(float64), i: int) -> float64:
    return x[i]
"""


def test_options_reach_pyddc(ip):
    ip.user_ns.pop("pick", None)
    ip.run_cell_magic("pydd", "-O0 --bounds-check", CELL)
    assert ip.user_ns["pick"](np.arange(3.0), 2) == 2.0
    with pytest.raises(IndexError):
        ip.user_ns["pick"](np.arange(3.0), 5)


def test_emit_ir_shows_instead_of_building(ip, capsys):
    ip.user_ns.pop("pick", None)
    ip.run_cell_magic("pydd", "--emit=ir", CELL)
    out = capsys.readouterr().out
    assert "def pick(x: Array(float64, 1), i: int64) -> float64:" in out
    assert "pick" not in ip.user_ns


def test_compile_error_binds_nothing(ip, capsys):
    ip.user_ns.pop("pick", None)
    ip.run_cell_magic("pydd", "", CELL + "\ndef bad(x: int) -> int:\n    return x.nope\n")
    err = capsys.readouterr().err
    assert err.startswith(f"In[{ip.execution_count}]:6:") and "error:" in err
    assert "pick" not in ip.user_ns


def test_bad_option_is_reported(ip, capsys):
    ip.run_cell_magic("pydd", "--no-such-option", CELL)
    assert "no-such-option" in capsys.readouterr().err
