"""Programs pyddc must reject with a located diagnostic:
`file:LINE:COL: error: message`, the source line, a caret under COL, exit
status 1 -- never a C++ compiler error or a crash.

Each kernels/errors/*.pydd starts with `# expect-error: L:C [L:C ...]`,
the location(s) a diagnostic may point at (the construct, or for an
expression assigned to a variable, the variable)."""

import re

import pytest

import pydd
from conftest import ERROR_KERNELS, run_pyddc

CASES = sorted(ERROR_KERNELS.glob("*.pydd"))
DIAG = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.+)$")
# What a leaked C++ compiler diagnostic or a crash looks like.
FORBIDDEN = re.compile(r"\.(cpp|cc|hpp|h):\d+|Traceback|Segmentation fault|terminate called|"
                       r"Assertion .* failed|Stack dump|core dumped|internal compiler error|PLEASE submit")


def expected_locations(path):
    first = path.read_text().splitlines()[0]
    m = re.match(r"# expect-error: (.+)", first)
    assert m, f"{path.name}: first line must be '# expect-error: L:C ...'"
    return {tuple(map(int, loc.split(":"))) for loc in m.group(1).split()}


def test_cases_present():
    assert len(CASES) >= 11


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_compile_error(path, tmp_path, pyddc):
    src = tmp_path / path.name
    src.write_text(path.read_text())
    proc = run_pyddc(src, "-o", tmp_path / "out")
    stderr = proc.stderr
    assert proc.returncode == 1, f"exit status {proc.returncode}\n{stderr}"
    assert not FORBIDDEN.search(stderr + proc.stdout), stderr
    lines = stderr.splitlines()
    idx = next((i for i, l in enumerate(lines) if DIAG.match(l)), None)
    assert idx is not None, f"no 'file:line:col: error:' diagnostic in:\n{stderr}"
    m = DIAG.match(lines[idx])
    assert m["file"] == str(src) or m["file"].endswith("/" + src.name) or m["file"] == src.name, lines[idx]
    line, col = int(m["line"]), int(m["col"])
    assert (line, col) in expected_locations(path), f"got {line}:{col}:\n{stderr}"
    assert m["msg"].strip(), "empty error message"
    # The source line (possibly after a gutter such as "  7 | "), then a
    # caret under the column.
    assert idx + 2 < len(lines), f"source line and caret missing:\n{stderr}"
    source_line = src.read_text().splitlines()[line - 1]
    shown, caret = lines[idx + 1], lines[idx + 2]
    offset = shown.find(source_line.strip())
    assert offset >= 0 and shown[offset:].rstrip() == source_line.strip(), \
        f"source line not shown after the diagnostic:\n{stderr}"
    indent = len(source_line) - len(source_line.lstrip())
    assert "^" in caret, f"no caret line:\n{stderr}"
    assert caret.index("^") == offset - indent + col - 1, f"caret not under column {col}:\n{stderr}"
    assert not list(tmp_path.glob("out/*.so")), "a module was written despite the error"


def test_compile_error_raised_by_pydd_compile(tmp_path, pyddc):
    src = tmp_path / "undefined_name.pydd"
    src.write_text((ERROR_KERNELS / "undefined_name.pydd").read_text())
    with pytest.raises(pydd.CompileError) as info:
        pydd.compile(src, out_dir=tmp_path / "out", opt=0)
    assert isinstance(info.value, Exception)
    locations = expected_locations(ERROR_KERNELS / "undefined_name.pydd")
    m = re.search(r"undefined_name\.pydd:(\d+):(\d+): error:", str(info.value))
    assert m and (int(m[1]), int(m[2])) in locations, str(info.value)
