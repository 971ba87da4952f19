"""Running a .pydd file as plain Python (the reference for compiled code)."""

import ast
import io
import tokenize
import types
from pathlib import Path

# Tokens after which a new statement begins.
_STATEMENT_BOUNDARY = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
# Tokens that carry no syntax.
_TRIVIA = {tokenize.NL, tokenize.COMMENT}
_BLOCK_KEYWORDS = {"async", "finish", "isolated"}


def rewrite_source(source):
    """Rewrites Intrepydd-only syntax into Python, keeping every line and column.

    * ``pfor i in ...:`` at a statement start becomes ``for  i in ...:``.
    * The block headers ``async:``, ``finish:`` and ``isolated:`` at a
      statement start become ``if 1 :``, ``if 1  :``, ``if 1    :`` (the
      same width). ``finish`` and ``isolated`` count as block headers only
      when nothing but a comment follows the colon, so that an annotated
      variable with one of those names is left alone.

    Strings and comments are never touched. Source that Python's tokenizer
    rejects is returned unchanged (compiling it then reports the error).
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    significant = [t for t in tokens if t.type not in _TRIVIA]
    lines = io.StringIO(source).readlines()  # the tokenizer's notion of a line
    edits = []  # (row, start col, end col, replacement)
    for i, tok in enumerate(significant):
        if tok.type != tokenize.NAME:
            continue
        if i > 0 and significant[i - 1].type not in _STATEMENT_BOUNDARY:
            continue
        nxt = significant[i + 1] if i + 1 < len(significant) else None
        if nxt is None:
            continue
        if tok.string == "pfor" and nxt.type == tokenize.NAME:
            edits.append((tok.start[0], tok.start[1], tok.end[1], "for "))
        elif (tok.string in _BLOCK_KEYWORDS and nxt.type == tokenize.OP and nxt.string == ":"
              and nxt.start[0] == tok.start[0]):
            after = significant[i + 2] if i + 2 < len(significant) else None
            if tok.string != "async" and after is not None and after.type != tokenize.NEWLINE:
                continue
            width = nxt.end[1] - tok.start[1]
            edits.append((tok.start[0], tok.start[1], nxt.end[1], "if 1" + " " * (width - 5) + ":"))
    for row, start, end, text in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + text + line[end:]
    return "".join(lines)


# The module-level name through which rewritten code reaches pydd._lib,
# whatever the kernel imported.
_LIB_NAME = "__pydd__"
# Methods of list, dict and heap (list) values, never rewritten into calls.
_CONTAINER_METHODS = frozenset({"append", "pop", "get", "items", "keys", "values", "insert",
                                "extend", "remove", "clear", "index", "count", "sort", "reverse",
                                "setdefault", "update"})
# Names that denote modules, not values: `np.sqrt(x)` is left alone.
_MODULE_NAMES = frozenset({"np", "numpy", "math", "pydd", "heapq", "scipy", "time", _LIB_NAME})


class _Rewriter(ast.NodeTransformer):
    """Rewrites what NumPy spells differently from pydd (see rewrite_tree)."""

    def __init__(self, library):
        self.library = library

    @staticmethod
    def _lib(attr, node):
        return ast.copy_location(
            ast.Attribute(value=ast.copy_location(ast.Name(id=_LIB_NAME, ctx=ast.Load()), node),
                          attr=attr, ctx=ast.Load()), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return node
        base = func.value
        root = base
        while isinstance(root, ast.Attribute):  # np.linalg.norm(x): a module's function too
            root = root.value
        if isinstance(root, ast.Name) and root.id in _MODULE_NAMES and (root is base or base.attr == "linalg"):
            return node
        if func.attr == "shape" and len(node.args) == 1 and not node.keywords \
                and not isinstance(node.args[0], ast.Starred):
            # A.shape(k) -> A.shape[k]
            return ast.copy_location(ast.Subscript(value=func, slice=node.args[0], ctx=ast.Load()), node)
        if func.attr in self.library and func.attr not in _CONTAINER_METHODS:
            # X.name(args) -> name(X, args)
            return ast.copy_location(
                ast.Call(func=self._lib(func.attr, func), args=[base, *node.args], keywords=node.keywords),
                node)
        return node

    def visit_BoolOp(self, node):
        # a and b and c -> _and(a, lambda: b, lambda: c): element-wise on
        # arrays, short-circuit on scalars.
        self.generic_visit(node)
        name = "_and" if isinstance(node.op, ast.And) else "_or"
        thunks = [ast.copy_location(ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                                                  kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                                  defaults=[]), body=v), v)
                  for v in node.values[1:]]
        return ast.copy_location(ast.Call(func=self._lib(name, node), args=[node.values[0], *thunks],
                                          keywords=[]), node)

    def visit_Compare(self, node):
        # a == b / a != b on arrays: NumPy 1.24 returns a scalar False (with a
        # DeprecationWarning) for shapes that do not broadcast; NumPy 2 raises
        # ValueError, as every other operator does.
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            name = "_eq" if isinstance(node.ops[0], ast.Eq) else "_ne"
            return ast.copy_location(ast.Call(func=self._lib(name, node), args=[node.left, node.comparators[0]],
                                              keywords=[]), node)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ast.Call(func=self._lib("_not", node), args=[node.operand], keywords=[]),
                                     node)
        return node


def rewrite_tree(tree):
    """Rewrites a parsed .pydd module (``ast.Module``) in place into Python
    that runs with NumPy arrays, keeping every node's line and column:

    * ``X.name(args)`` becomes ``name(X, args)`` when ``name`` is a pydd
      library function and not a list or dict method (``x.abs().sqrt()``,
      ``A.sum(1)``, ``sub(y, z).sum()``);
    * ``X.shape(k)`` becomes ``X.shape[k]``;
    * ``and``, ``or`` and ``not`` become calls that act element-wise on
      arrays and exactly like the operators on scalars (short-circuit
      included);
    * ``a == b`` and ``a != b`` become calls that raise ValueError for
      arrays whose shapes do not broadcast, as NumPy 2 does (NumPy 1.24
      returns False).

    The rewritten calls reach the library as the module global ``__pydd__``
    (which :func:`load_python` defines), whatever the kernel imported.
    Returns the tree.
    """
    from pydd import _lib
    tree = _Rewriter(_lib.LIBRARY_FUNCTIONS).visit(tree)
    return ast.fix_missing_locations(tree)


def load_python(path, module_name=None):
    """Runs the .pydd file at ``path`` as Python and returns the new module.

    The source goes through :func:`rewrite_source` (Intrepydd keywords) and
    :func:`rewrite_tree` (method spellings, element-wise ``and``/``or``/
    ``not``). Loading it switches NumPy to NEP 50 promotion (see pydd._lib).

    The module is fresh (not registered in ``sys.modules``); its code objects
    carry the original file name and line numbers, so tracebacks and
    ``inspect`` point at the .pydd source. Functions with a ``SparseMat`` in
    their signature are wrapped: sparse arguments become pydd._lib's
    SparseMatrix (a csr_matrix sharing the argument's arrays, whose ``*``,
    ``+``, ``@`` and ``.T`` are pydd's), sparse results plain csr_matrix.
    """
    from pydd import _lib
    path = Path(path)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(rewrite_source(source), str(path), "exec")
    code = compile(rewrite_tree(tree), str(path), "exec", dont_inherit=True)
    module = types.ModuleType(module_name or path.stem)
    module.__file__ = str(path)
    module.__dict__[_LIB_NAME] = _lib
    module.__dict__.update(_lib.KERNEL_ONLY)
    exec(code, module.__dict__)
    # Kernels with a SparseMat in their signature take sparse arguments as
    # pydd._lib's SparseMatrix (operators as pydd's) and return csr_matrix.
    for name, obj in list(module.__dict__.items()):
        if isinstance(obj, types.FunctionType) and obj.__code__.co_filename == str(path) \
                and any(_lib._mentions_sparse(t) for t in obj.__annotations__.values()):
            module.__dict__[name] = _lib._sparse_kernel(obj)
    return module
