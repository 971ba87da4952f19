"""Running a .pydd file as plain Python (the reference for compiled code)."""

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


def load_python(path, module_name=None):
    """Runs the .pydd file at ``path`` as Python and returns the new module.

    The module is fresh (not registered in ``sys.modules``); its code objects
    carry the original file name and line numbers, so tracebacks and
    ``inspect`` point at the .pydd source.
    """
    path = Path(path)
    source = path.read_text(encoding="utf-8")
    code = compile(rewrite_source(source), str(path), "exec", dont_inherit=True)
    module = types.ModuleType(module_name or path.stem)
    module.__file__ = str(path)
    exec(code, module.__dict__)
    return module
