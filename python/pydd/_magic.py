"""The ``%%pydd`` cell magic: ``%load_ext pydd``, then a cell

    %%pydd -O3 --bounds-check
    def f(x: Array(float64)) -> float64:
        ...

is compiled as a pydd module (through pyddc's compile cache) and its
functions are bound in the notebook's namespace. The options are pyddc's
command-line options; ``--emit=ir`` or ``--emit=cpp`` shows that form of
the cell instead of building it. A cell that does not compile shows pyddc's
diagnostic, naming the cell (``In[3]:4:9: error: ...``), as the cell's
error output, and binds nothing; no traceback into pydd is shown.

Loading the extension also shows a :class:`pydd.CompileError` raised in a
cell (by a ``@pydd.kernel`` call or ``pydd.compile``) as its diagnostic
alone.
"""

import shlex
import sys

from pydd._build import CompileError, compile_source

_MODULE = "pydd_cell"


def _shift(message, tmp_path, cell_name, offset):
    """Diagnostics on the cell body's lines, renumbered as the cell's (the
    magic's own line is the cell's first)."""
    out = []
    prefix = f"{tmp_path}:"
    for line in message.splitlines(keepends=True):
        if line.startswith(prefix):
            number, _, rest = line[len(prefix):].partition(":")
            if number.isdigit():
                line = f"{cell_name}:{int(number) + offset}:{rest}"
        out.append(line.replace(tmp_path, cell_name))
    return "".join(out)


def pydd_cell_magic(line, cell, shell=None):
    """Compiles the cell and binds its functions in the user namespace.
    Returns nothing: a cell magic's value would be displayed as the cell's."""
    from IPython import get_ipython
    shell = shell or get_ipython()
    try:
        args = shlex.split(line)
    except ValueError as e:
        print(f"%%pydd: {e}", file=sys.stderr)
        return None
    opt = 3
    rest = []
    for a in args:
        if len(a) == 3 and a.startswith("-O") and a[2] in "0123":
            opt = int(a[2])
        else:
            rest.append(a)
    cell_name = f"In[{shell.execution_count}]" if shell is not None else "<cell>"
    try:
        result = compile_source(cell, _MODULE, opt=opt, extra_args=rest,
                                rename=lambda message, tmp: _shift(message, tmp, cell_name, 1))
    except CompileError as e:
        print(str(e), file=sys.stderr)
        return None
    if any(a.startswith("--emit") for a in rest):
        print(result.stdout, end="" if result.stdout.endswith("\n") else "\n")
        return None
    names = {name: value for name, value in vars(result).items() if not name.startswith("_") and callable(value)}
    if shell is not None:
        shell.user_ns.update(names)
    return None


def _show_compile_error(shell, etype, value, tb, tb_offset=None):
    print(str(value), file=sys.stderr)


def load_ipython_extension(ipython):
    ipython.register_magic_function(lambda line, cell: pydd_cell_magic(line, cell, ipython),
                                    magic_kind="cell", magic_name="pydd")
    ipython.set_custom_exc((CompileError,), _show_compile_error)
