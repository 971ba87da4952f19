"""print() in kernels writes through sys.stdout, formatted like Python."""

import numpy as np


def run_captured(capsys, fn, *args):
    result = fn(*args)
    out = capsys.readouterr().out
    return result, out


def test_print_scalars(build, opt, capsys):
    comp, ref = build("printing", opt)
    for args in [(3, 0.1, True), (-12, 2.5, False), (0, -0.0, True), (2**62, 1e-5, False)]:
        r1, out1 = run_captured(capsys, comp.show, *args)
        # The reference gets an int64 so that 2 * 2**62 wraps as in NumPy.
        with np.errstate(over="ignore"):
            r2, out2 = run_captured(capsys, ref.show, np.int64(args[0]), *args[1:])
        assert r1 == r2
        assert out1 == out2, args


def test_print_in_loop(build, opt, capsys):
    comp, ref = build("printing", opt)
    _, out1 = run_captured(capsys, comp.show_loop, 5)
    _, out2 = run_captured(capsys, ref.show_loop, 5)
    assert out1 == out2
    assert out1.count("\n") == 6


def test_print_array_elements(build, opt, capsys):
    comp, ref = build("printing", opt)
    rng = np.random.default_rng(50)
    x = np.concatenate([rng.normal(size=5), [0.1, 1e-5, 1e22, 1.0 / 3.0, 5e-324, -2.5e-8]])
    k = rng.integers(-(2**62), 2**62, len(x))
    _, out1 = run_captured(capsys, comp.show_array, x, k)
    _, out2 = run_captured(capsys, ref.show_array, x, k)
    assert out1 == out2


def test_print_int32(build, opt, capsys):
    comp, ref = build("printing", opt)
    _, out1 = run_captured(capsys, comp.show_i32, -123456)
    _, out2 = run_captured(capsys, ref.show_i32, -123456)
    assert out1 == out2


def test_print_interleaves_with_python(build, opt, capsys):
    comp, ref = build("printing", opt)
    _, middle = run_captured(capsys, ref.show_loop, 1)
    print("before")
    comp.show_loop(1)
    print("after")
    out = capsys.readouterr().out
    assert out == "before\n" + middle + "after\n"


def test_print_lists_dicts_and_tuples(build, opt, capsys):
    comp, ref = build("printing", opt)
    for args in [(3, 0.1), (0, -2.5), (-1, 1e-7)]:
        _, out1 = run_captured(capsys, comp.print_containers, *args)
        _, out2 = run_captured(capsys, ref.print_containers, *args)
        assert out1 == out2, args
    _, out = run_captured(capsys, comp.print_containers, 2, 0.5)
    assert out.splitlines()[0] == "values: [2, 2, -3] [0.5, 0.1, 1e+20] [[1, 2], [3]] [True, False] [1.5]"
    assert out.splitlines()[1] == "{2: 0.5, 7: 0.5} {True: 1} (2, 0.5) (2,) (1, (2.5, False))"
    assert out.splitlines()[2] == "[] [0.0, 0.25]"
