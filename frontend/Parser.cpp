// Lowering from tree-sitter-python's concrete syntax tree to the pydd IR.
//
// The subset is checked here: every Python construct outside it is named in
// an error at its own line and column. Lowering is purely syntactic; names
// and types are sema's job.

#include "frontend/Parser.h"
#include "frontend/Gradient.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "frontend/Keywords.h"
#include "frontend/Lexer.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "tree_sitter/api.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace pydd {
namespace {

SourceLoc locOf(TSNode n) {
  TSPoint p = ts_node_start_point(n);
  return {p.row + 1, p.column + 1};
}

llvm::StringRef typeOf(TSNode n) { return ts_node_type(n); }

TSNode field(TSNode n, const char* name) {
  return ts_node_child_by_field_name(n, name, static_cast<uint32_t>(std::strlen(name)));
}

/// Named children other than comments (tree-sitter puts comments anywhere).
std::vector<TSNode> namedChildren(TSNode n) {
  std::vector<TSNode> out;
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (typeOf(c) != "comment") out.push_back(c);
  }
  return out;
}

/// What the user wrote, for "X is not supported in pydd kernels".
const char* unsupportedConstruct(llvm::StringRef type) {
  return llvm::StringSwitch<const char*>(type)
      .Case("class_definition", "class definitions are")
      .Case("decorated_definition", "decorators are")
      .Case("lambda", "lambda expressions are")
      .Case("dictionary_comprehension", "dict comprehensions are")
      .Case("set_comprehension", "set comprehensions are")
      .Case("generator_expression", "generator expressions outside a call are")
      .Case("with_statement", "'with' statements are")
      .Case("try_statement", "'try' statements are")
      .Case("global_statement", "'global' declarations are")
      .Case("nonlocal_statement", "'nonlocal' declarations are")
      .Case("raise_statement", "'raise' statements are")
      .Case("delete_statement", "'del' statements are")
      .Case("import_statement", "imports inside functions are")
      .Case("future_import_statement", "imports other than 'from pydd import ...' are")
      .Case("print_statement", "Python 2 print statements are")
      .Case("exec_statement", "exec statements are")
      .Case("match_statement", "'match' statements are")
      .Case("type_alias_statement", "type aliases are")
      .Case("yield", "generators ('yield') are")
      .Case("await", "'await' expressions are")
      .Case("named_expression", "assignment expressions (':=') are")
      .Case("set", "set literals are")
      .Case("list_splat", "star-arguments are")
      .Case("dictionary_splat", "keyword star-arguments are")
      .Case("list_splat_pattern", "star-arguments are")
      .Case("dictionary_splat_pattern", "keyword star-arguments are")
      .Case("keyword_separator", "keyword-only arguments are")
      .Case("positional_separator", "positional-only markers are")
      .Case("ellipsis", "'...' is")
      .Case("none", "None values are")
      .Case("concatenated_string", "implicitly concatenated strings are")
      .Case("function_definition", "nested functions are")
      .Default(nullptr);
}

class Lowerer {
 public:
  Lowerer(Diagnostics& diag, llvm::StringRef text, std::vector<KeywordSite> sites)
      : Diag(diag), Text(text), Sites(std::move(sites)) {}

  std::unique_ptr<Module> module(TSNode root, const std::string& name) {
    auto m = std::make_unique<Module>();
    m->name = name;
    m->path = Diag.path();
    for (TSNode item : namedChildren(root)) {
      llvm::StringRef t = typeOf(item);
      if (t == "function_definition") {
        if (auto f = function(item)) m->functions.push_back(std::move(f));
      } else if (t == "import_from_statement") {
        importFrom(item);
      } else if (t == "import_statement") {
        importModule(item, *m);
      } else if (t == "expression_statement" && isDocstring(item)) {
        // A module docstring: no effect, but its escapes must be valid Python.
        checkString(item);
      } else {
        unsupported(item, "only function definitions and 'from pydd import ...' may appear at the top level of a pydd file");
      }
    }
    return m;
  }

 private:
  // ---- helpers -------------------------------------------------------------

  llvm::StringRef text(TSNode n) const {
    return Text.slice(ts_node_start_byte(n), ts_node_end_byte(n));
  }

  void error(TSNode n, const llvm::Twine& msg) { Diag.error(locOf(n), msg); }

  /// Reports `n` as outside the subset, with the construct's own name.
  void unsupported(TSNode n, const char* fallback = nullptr) {
    if (const char* what = unsupportedConstruct(typeOf(n)))
      error(n, llvm::Twine(what) + " not supported in pydd kernels");
    else if (fallback)
      error(n, fallback);
    else
      error(n, "'" + typeOf(n) + "' is not supported in pydd kernels");
  }

  const KeywordSite* siteAt(TSNode n) const {
    SourceLoc l = locOf(n);
    for (auto& s : Sites)
      if (s.loc.line == l.line && s.loc.col == l.col) return &s;
    return nullptr;
  }

  /// Reports what is invalid in the string literals of `n` (escapes, prefixes)
  /// for a string whose value is not used.
  void checkString(TSNode n) {
    if (typeOf(n) == "string") {
      (void)string(n);
      return;
    }
    for (TSNode c : namedChildren(n)) checkString(c);
  }

  bool isDocstring(TSNode stmt) {
    auto kids = namedChildren(stmt);
    return kids.size() == 1 && typeOf(kids[0]) == "string";
  }

  /// `from pydd import ...`, and NumPy's names: `from numpy import ...`
  /// (numpy.linalg too) names catalog functions, which sema resolves.
  void importFrom(TSNode n) {
    TSNode mod = field(n, "module_name");
    if (ts_node_is_null(mod) || !isImportable(text(mod)))
      error(n, "imports other than 'from pydd import ...' and 'from numpy import ...' are not supported in pydd kernels");
  }
  static bool isImportable(llvm::StringRef mod) { return mod == "pydd" || mod == "numpy" || mod == "numpy.linalg"; }

  /// `import numpy` / `import numpy as np`: records the name `np.` calls go through.
  void importModule(TSNode n, Module& m) {
    for (TSNode item : namedChildren(n)) {
      TSNode name = typeOf(item) == "aliased_import" ? field(item, "name") : item;
      TSNode alias = typeOf(item) == "aliased_import" ? field(item, "alias") : item;
      if (text(name) == "numpy") m.numpyAliases.push_back(text(alias).str());
      else if (text(name) != "pydd") error(item, "only numpy and pydd can be imported in pydd kernels");
    }
  }

  // ---- types -----------------------------------------------------------------

  static unsigned typeNesting(llvm::StringRef t) {
    unsigned depth = 0, deepest = 0;
    for (char c : t) {
      if (c == '(') deepest = std::max(deepest, ++depth);
      if (c == ')' && depth) --depth;
    }
    return deepest;
  }

  /// A type annotation: `float64`, `int`, `Array(float64, 2)`, `Array(int32)`.
  /// `signature`: a parameter's or the result's, where `Array(T)` has any
  /// rank (Type::isAnyRankArray); elsewhere it is `Array(T, 1)`.
  Type typeExpr(TSNode n, bool signature = false) {
    if (typeOf(n) == "type") {
      auto kids = namedChildren(n);
      if (kids.size() == 1) return typeExpr(kids[0], signature);
    }
    Type t = parseTypeText(text(n), signature);
    if (t.isUnknown() && typeNesting(text(n)) > kMaxTypeNesting)
      error(n, "type nested more than " + llvm::Twine(kMaxTypeNesting) + " levels deep is not supported in pydd kernels");
    else if (t.isUnknown() && mentionsComplex(text(n)) && llvm::StringRef(text(n)).contains_insensitive("SparseMat"))
      error(n, "SparseMat of complex numbers is not supported; use a dense Array(complex128, 2)");
    else if (t.isUnknown() && mentionsComplex(text(n)))
      error(n, "complex numbers cannot be dict keys or heap keys in pydd kernels, in '" + text(n) + "'");
    else if (t.isUnknown())
      error(n, "unknown type '" + text(n) +
                   "'; expected bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64, complex128, Array(T, n), SparseMat(T), List(T), Dict(K, V), Heap(T) or a tuple (T1, T2)");
    return t;
  }

  /// Whether a type text that failed to parse names a complex type, which
  /// SparseMat, Dict keys and Heap keys refuse (parseTypeText).
  static bool mentionsComplex(llvm::StringRef t) {
    std::string real = t.str();
    bool found = false;
    for (auto [from, to] : {std::pair<const char*, const char*>{"complex128", "float64"}, {"complex64", "float32"}, {"complex", "float"}})
      for (size_t at; (at = real.find(from)) != std::string::npos; found = true) real.replace(at, std::strlen(from), to);
    return found && !parseTypeText(real, false).isUnknown();
  }

  // ---- functions -------------------------------------------------------------

  /// Python's `async def` / `async for` (Intrepydd's `async:` is rewritten
  /// before parsing, so this is the coroutine keyword).
  static bool startsWithAsync(TSNode n) {
    return ts_node_child_count(n) > 0 && typeOf(ts_node_child(n, 0)) == "async";
  }

  std::unique_ptr<Function> function(TSNode n) {
    if (startsWithAsync(n)) {
      error(n, "'async def' is not supported in pydd kernels");
      return nullptr;
    }
    auto f = std::make_unique<Function>();
    FunctionNames.clear();
    NextTemp = 0;
    collectNames(n);
    f->name = text(field(n, "name")).str();
    f->loc = locOf(n);
    if (!ts_node_is_null(field(n, "type_parameters"))) unsupported(field(n, "type_parameters"), "type parameters are not supported in pydd kernels");
    bool sawDefault = false;
    for (TSNode p : namedChildren(field(n, "parameters"))) {
      llvm::StringRef t = typeOf(p);
      if (t == "typed_parameter") {
        auto kids = namedChildren(p);
        TSNode nameNode = kids.empty() ? p : kids[0];
        if (typeOf(nameNode) != "identifier") {
          unsupported(nameNode);
          continue;
        }
        f->params.push_back(signatureParam(nameNode, field(p, "type")));
        if (sawDefault) error(p, "non-default argument follows default argument");
      } else if (t == "identifier" || t == "default_parameter") {
        llvm::StringRef name = text(t == "identifier" ? p : field(p, "name"));
        error(p, "parameter '" + name + "' needs a type annotation, e.g. '" + name + ": float64'");
      } else if (t == "typed_default_parameter") {
        TSNode nameNode = field(p, "name");
        Param param = signatureParam(nameNode, field(p, "type"));
        param.defaultValue = defaultValue(field(p, "value"));
        f->params.push_back(std::move(param));
        sawDefault = true;
      } else {
        unsupported(p);
      }
    }
    TSNode ret = field(n, "return_type");
    f->inferReturn = ts_node_is_null(ret);
    if (!ts_node_is_null(ret)) {
      if (text(ret) == "None")
        f->returnType = Type::voidTy();
      else
        f->returnType = typeExpr(ret, true);
      f->returnAnyRank = f->returnType.isAnyRankArray();
    }
    f->body = block(field(n, "body"));
    return f;
  }

  Param signatureParam(TSNode name, TSNode type) {
    Param p{text(name).str(), typeExpr(type, true), locOf(name), {}};
    p.anyRank = p.type.isAnyRankArray();
    return p;
  }

  /// A parameter's default value as Python literal text: a number, possibly
  /// negated, or True/False (what sema and the Python bridge read back).
  std::string defaultValue(TSNode n) {
    llvm::StringRef t = typeOf(n);
    bool negated = t == "unary_operator" && text(field(n, "operator")) == "-";
    TSNode literal = negated ? field(n, "argument") : n;
    llvm::StringRef lt = typeOf(literal);
    if ((lt == "integer" || lt == "float") && llvm::StringRef(text(literal)).endswith_insensitive("j")) {
      error(n, "a default value must be a real number; complex defaults are not supported");
      return "0";
    }
    if (lt == "true" || lt == "false") {
      if (!negated) return lt == "true" ? "True" : "False";
    } else if (lt == "integer") {
      ExprPtr value = integer(literal, negated);  // held: the literal's value is read below
      if (auto* i = dyn_cast<IntLit>(value.get())) return std::to_string(i->value);
      return "0";  // reported
    } else if (lt == "float") {
      auto lit = floating(literal);
      auto* f = dyn_cast<FloatLit>(lit.get());
      if (!f) return "0";  // reported
      double v = negated ? -f->value : f->value;
      if (!std::isfinite(v)) {
        error(n, "a default value must be a finite number");
        return "0";
      }
      // The shortest text that reads back as v, as Python's repr.
      char buf[40];
      for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
      }
      std::string out = buf;
      if (out.find_first_of(".e") == std::string::npos) out += ".0";
      return out;
    }
    error(n, "a default parameter value must be a constant (a number, True or False) in pydd kernels");
    return "0";
  }

  // ---- statements ------------------------------------------------------------

  BlockPtr block(TSNode n) {
    auto b = std::make_unique<Block>(locOf(n));
    // Indentation bounds how deep blocks nest in the text, but each elif
    // lowers to an If nested in the previous one's else block.
    if (BlockDepth > kMaxNestingDepth) {
      error(n, "too deeply nested: pydd kernels allow at most " + llvm::Twine(kMaxNestingDepth) +
                   " levels of nested blocks (each 'elif' counts as one)");
      return b;
    }
    ++BlockDepth;
    auto leave = llvm::make_scope_exit([&] { --BlockDepth; });
    auto kids = namedChildren(n);
    for (size_t i = 0; i < kids.size(); ++i) statement(kids[i], *b);
    return b;
  }

  /// Lowers one statement into `out`, after the statements its list
  /// comprehensions hoisted (they run first: see comprehension()).
  void statement(TSNode n, Block& out) {
    std::vector<StmtPtr> hoisted;
    std::vector<StmtPtr>* outer = Hoisted;
    Hoisted = &hoisted;
    Block lowered(locOf(n));
    statementParts(n, lowered);
    Hoisted = outer;
    for (auto& h : hoisted) out.stmts.push_back(std::move(h));
    for (auto& st : lowered.stmts) out.stmts.push_back(std::move(st));
  }

  void statementParts(TSNode n, Block& out) {
    llvm::StringRef t = typeOf(n);
    SourceLoc loc = locOf(n);
    if (t == "expression_statement") return expressionStatement(n, out);
    if (t == "assert_statement") return assertStatement(n, out);
    if (t == "return_statement") {
      auto kids = namedChildren(n);
      ExprPtr value;
      if (!kids.empty()) value = expr(kids[0]);
      out.stmts.push_back(std::make_unique<Return>(loc, std::move(value)));
      return;
    }
    if (t == "pass_statement") return out.stmts.push_back(std::make_unique<Pass>(loc));
    if (t == "break_statement") return out.stmts.push_back(std::make_unique<Break>(loc));
    if (t == "continue_statement") return out.stmts.push_back(std::make_unique<Continue>(loc));
    if (t == "if_statement") return ifStatement(n, out);
    if (t == "while_statement") {
      if (!ts_node_is_null(field(n, "alternative")))
        return error(field(n, "alternative"), "'else' clauses on loops are not supported in pydd kernels");
      auto w = std::make_unique<While>(loc);
      w->cond = withoutHoisting(field(n, "condition"), "a while condition");
      w->body = block(field(n, "body"));
      out.stmts.push_back(std::move(w));
      return;
    }
    if (t == "for_statement") return forStatement(n, out);
    if (t == "import_from_statement") return importFrom(n);
    unsupported(n);
  }

  void ifStatement(TSNode n, Block& out) {
    if (const KeywordSite* site = siteAt(n)) {
      // `async:` / `finish:` / `isolated:` came through as `if 1 :`.
      TaskKind kind = site->kind == KeywordKind::Async    ? TaskKind::Async
                      : site->kind == KeywordKind::Finish ? TaskKind::Finish
                                                          : TaskKind::Isolated;
      auto task = std::make_unique<Task>(locOf(n), kind);
      task->body = block(field(n, "consequence"));
      out.stmts.push_back(std::move(task));
      return;
    }
    auto top = std::make_unique<If>(locOf(n));
    top->cond = expr(field(n, "condition"));
    top->thenBody = block(field(n, "consequence"));
    // Each elif becomes an If alone in the previous else block.
    If* last = top.get();
    unsigned depthBefore = BlockDepth;
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_child(n, i);
      llvm::StringRef ct = typeOf(c);
      if (ct == "elif_clause") {
        ++BlockDepth;
        auto elif = std::make_unique<If>(locOf(c));
        elif->cond = withoutHoisting(field(c, "condition"), "an elif condition");
        elif->thenBody = block(field(c, "consequence"));
        If* next = elif.get();
        last->elseBody = std::make_unique<Block>(locOf(c));
        last->elseBody->stmts.push_back(std::move(elif));
        last = next;
      } else if (ct == "else_clause") {
        last->elseBody = block(field(c, "body"));
      }
    }
    BlockDepth = depthBefore;
    out.stmts.push_back(std::move(top));
  }

  /// `assert cond, "message"`: `if not cond: assertion_error("message")`.
  void assertStatement(TSNode n, Block& out) {
    auto kids = namedChildren(n);
    SourceLoc loc = locOf(n);
    auto check = std::make_unique<If>(loc);
    check->cond = std::make_unique<Not>(loc, expr(kids[0]));
    auto raise = std::make_unique<Call>(loc, "assertion_error");
    if (kids.size() > 1) {
      if (typeOf(kids[1]) != "string") return error(kids[1], "an assert message must be a string literal in pydd kernels");
      raise->args.push_back(string(kids[1]));
    }
    check->thenBody = std::make_unique<Block>(loc);
    check->thenBody->stmts.push_back(std::make_unique<ExprStmt>(loc, std::move(raise)));
    out.stmts.push_back(std::move(check));
  }

  void forStatement(TSNode n, Block& out) {
    if (startsWithAsync(n)) return error(n, "'async for' is not supported in pydd kernels");
    if (!ts_node_is_null(field(n, "alternative")))
      return error(field(n, "alternative"), "'else' clauses on loops are not supported in pydd kernels");
    const KeywordSite* site = siteAt(n);
    bool parallel = site && site->kind == KeywordKind::Pfor;
    auto f = loopHeader(field(n, "left"), field(n, "right"), locOf(n), parallel, false, out);
    if (!f) return;
    BlockPtr body = block(field(n, "body"));
    for (auto& st : body->stmts) f->body->stmts.push_back(std::move(st));
    out.stmts.push_back(std::move(f));
  }

  // ---- for loops -------------------------------------------------------------
  //
  // `for LEFT in RIGHT` is a For over range bounds or over the elements of a
  // value; what each iteration binds is an expression of the loop variable,
  // or a tuple of them for zip(...) and enumerate(...), which lower to
  // counted loops and indexing (no iterator objects):
  //
  //   for a, b in zip(X, Y):       for i in range(min(len(X), len(Y))): a, b = X[i], Y[i]
  //   for i, x in enumerate(X):    c = 0; for item in X: i, x = c, item; c = c + 1
  //   for i, (a, b) in enumerate(zip(X, Y)):  the zip loop, with i = its index + start
  //
  // The loop's body starts with the assignment that binds LEFT.

  /// What one iteration binds: an expression, or a tuple of items.
  struct LoopItem {
    ExprPtr value;
    std::vector<LoopItem> parts;
  };

  bool isBuiltinCall(TSNode n, llvm::StringRef name) {
    if (typeOf(n) != "call") return false;
    TSNode fn = field(n, "function");
    return typeOf(fn) == "identifier" && text(fn) == name && !Renames.count(name.str());
  }

  /// The positional arguments of a builtin call; keywords other than `allowed` are errors.
  bool builtinArguments(TSNode call, std::vector<TSNode>& args, TSNode* keyword = nullptr, const char* allowed = nullptr) {
    llvm::StringRef name = text(field(call, "function"));
    TSNode argList = field(call, "arguments");
    if (typeOf(argList) != "argument_list") {
      unsupported(argList);
      return false;
    }
    for (TSNode a : namedChildren(argList)) {
      if (typeOf(a) != "keyword_argument") {
        args.push_back(a);
        continue;
      }
      if (!allowed) {
        error(a, name + "() takes no keyword arguments");
        return false;
      }
      if (text(field(a, "name")) != allowed) {
        error(a, name + "() got an unexpected keyword argument '" + text(field(a, "name")) + "'");
        return false;
      }
      *keyword = field(a, "value");
    }
    return true;
  }

  /// The For of `for left in right`, with the statements binding `left`
  /// at the start of its body; statements that must run once before the
  /// loop go to `before`. In a comprehension (`ownScope`) the names bound
  /// by `left` are renamed to fresh variables after `right` is lowered.
  std::unique_ptr<For> loopHeader(TSNode left, TSNode right, SourceLoc loc, bool parallel, bool ownScope, Block& before) {
    llvm::StringRef lt = typeOf(left);
    bool pattern = lt == "pattern_list" || lt == "tuple_pattern" || lt == "list_pattern";
    if (!pattern && lt != "identifier") {
      error(left, "a for loop must bind a variable or a tuple of variables in pydd kernels");
      return nullptr;
    }
    auto f = std::make_unique<For>(loc);
    f->parallel = parallel;
    f->varLoc = locOf(left);
    f->body = std::make_unique<Block>(loc);
    LoopItem item;
    if (isBuiltinCall(right, "enumerate")) {
      std::vector<TSNode> args;
      TSNode startNode{};
      if (!builtinArguments(right, args, &startNode, "start")) return nullptr;
      bool hasStart = !ts_node_is_null(startNode);
      if (args.empty() || args.size() + hasStart > 2) {
        error(right, "enumerate() takes an iterable and an optional start");
        return nullptr;
      }
      if (args.size() == 2) startNode = args[1], hasStart = true;
      SourceLoc rl = locOf(right);
      ExprPtr start = hasStart ? expr(startNode) : std::make_unique<IntLit>(rl, 0);
      LoopItem index, element;
      if (isBuiltinCall(args[0], "zip")) {
        if (!zipLoop(args[0], *f, before, element)) return nullptr;
        index.value = std::make_unique<Binary>(rl, BinaryOp::Add, std::make_unique<VarRef>(rl, f->var), std::move(start));
      } else {
        if (parallel) {
          error(right, "pfor over enumerate(...) is not supported; write 'pfor i in range(len(x))'");
          return nullptr;
        }
        std::string counter = newTemp("count");
        auto init = std::make_unique<Assign>(rl);
        init->targets.push_back(std::make_unique<VarRef>(rl, counter));
        init->value = std::move(start);
        f->isRange = false;
        f->iterable = expr(args[0]);
        before.stmts.push_back(std::move(init));
        f->var = newTemp("item");
        index.value = std::make_unique<VarRef>(rl, counter);
        element.value = std::make_unique<VarRef>(rl, f->var);
        // The count steps before the body runs (a `continue` skips nothing),
        // after the binding that reads it.
        auto step = std::make_unique<Assign>(rl);
        step->targets.push_back(std::make_unique<VarRef>(rl, counter));
        step->value = std::make_unique<Binary>(rl, BinaryOp::Add, std::make_unique<VarRef>(rl, counter),
                                               std::make_unique<IntLit>(rl, 1));
        f->body->stmts.push_back(std::move(step));
      }
      item.parts.push_back(std::move(index));
      item.parts.push_back(std::move(element));
    } else if (isBuiltinCall(right, "zip")) {
      if (!zipLoop(right, *f, before, item)) return nullptr;
    } else if (isBuiltinCall(right, "range")) {
      // `range(...)` is loop syntax, not a value: keep its bounds apart.
      std::vector<TSNode> args;
      if (!builtinArguments(right, args)) return nullptr;
      if (args.empty() || args.size() > 3) {
        error(right, "range expected 1 to 3 arguments, got " + llvm::Twine(args.size()));
        return nullptr;
      }
      SourceLoc rl = locOf(right);
      std::vector<ExprPtr> bounds;
      for (TSNode a : args) bounds.push_back(expr(a));
      f->start = bounds.size() == 1 ? std::make_unique<IntLit>(rl, 0) : std::move(bounds[0]);
      f->stop = std::move(bounds[bounds.size() == 1 ? 0 : 1]);
      f->step = bounds.size() == 3 ? std::move(bounds[2]) : std::make_unique<IntLit>(rl, 1);
    } else {
      f->isRange = false;
      f->iterable = expr(right);
    }
    if (ownScope) scopeNames(left);
    if (f->var.empty()) {
      if (!pattern) {
        f->var = name(left);
        return f;
      }
      f->var = newTemp("item");
      item.value = std::make_unique<VarRef>(locOf(left), f->var);
    }
    std::vector<StmtPtr> binding;
    bind(left, std::move(item), binding);
    f->body->stmts.insert(f->body->stmts.begin(), std::make_move_iterator(binding.begin()),
                          std::make_move_iterator(binding.end()));
    return f;
  }

  /// zip(X, Y, ...) as a counted loop: f runs its variable over
  /// range(min(len(X), len(Y), ...)) and `item` is (X[i], Y[i], ...).
  /// `range(stop)` and `range(start, stop)` may be zipped too.
  bool zipLoop(TSNode call, For& f, Block& before, LoopItem& item) {
    std::vector<TSNode> args;
    if (!builtinArguments(call, args)) return false;
    if (args.empty()) {
      error(call, "zip() needs at least one sequence in pydd kernels");
      return false;
    }
    SourceLoc loc = locOf(call);
    f.var = newTemp("i");
    std::vector<ExprPtr> lengths;
    auto once = [&](TSNode n, const char* hint) -> std::string {
      if (typeOf(n) == "identifier") return name(n);
      std::string temp = newTemp(hint);
      auto a = std::make_unique<Assign>(locOf(n));
      a->targets.push_back(std::make_unique<VarRef>(locOf(n), temp));
      a->value = expr(n);
      before.stmts.push_back(std::move(a));
      return temp;
    };
    auto var = [&](const std::string& v, SourceLoc at) { return std::make_unique<VarRef>(at, v); };
    for (TSNode a : args) {
      SourceLoc at = locOf(a);
      LoopItem part;
      if (isBuiltinCall(a, "range")) {
        std::vector<TSNode> bounds;
        if (!builtinArguments(a, bounds)) return false;
        if (bounds.empty() || bounds.size() > 2) {
          error(a, "zip() over range() takes range(stop) or range(start, stop) in pydd kernels");
          return false;
        }
        std::string start = bounds.size() == 2 ? once(bounds[0], "start") : "";
        std::string stop = once(bounds.back(), "stop");
        if (bounds.size() == 1) {
          part.value = var(f.var, at);
          lengths.push_back(var(stop, at));
        } else {
          part.value = std::make_unique<Binary>(at, BinaryOp::Add, var(start, at), var(f.var, at));
          lengths.push_back(std::make_unique<Binary>(at, BinaryOp::Sub, var(stop, at), var(start, at)));
        }
      } else {
        std::string seq = once(a, "seq");
        auto element = std::make_unique<Index>(at, var(seq, at));
        element->indices.push_back(var(f.var, at));
        part.value = std::move(element);
        auto len = std::make_unique<Call>(at, "len");
        len->args.push_back(var(seq, at));
        lengths.push_back(std::move(len));
      }
      item.parts.push_back(std::move(part));
    }
    f.start = std::make_unique<IntLit>(loc, 0);
    f.step = std::make_unique<IntLit>(loc, 1);
    if (lengths.size() == 1) {
      f.stop = std::move(lengths[0]);
    } else {
      auto shortest = std::make_unique<Call>(loc, "min");
      shortest->args = std::move(lengths);
      f.stop = std::move(shortest);
    }
    return true;
  }

  /// Statements that bind `left` to `item`: one assignment where the
  /// pattern follows the item's tuple structure (all values read before
  /// any target is stored), and an unpacking assignment for each
  /// sub-pattern bound to a single value.
  void bind(TSNode left, LoopItem item, std::vector<StmtPtr>& out) {
    SourceLoc loc = locOf(left);
    auto a = std::make_unique<Assign>(loc);
    std::vector<ExprPtr> values;
    std::vector<std::pair<TSNode, ExprPtr>> unpacks;
    flattenBinding(left, std::move(item), a->targets, values, unpacks);
    if (values.size() == 1) {
      a->value = std::move(values[0]);
    } else {
      auto tuple = std::make_unique<TupleLit>(loc, false);
      tuple->elems = std::move(values);
      a->value = std::move(tuple);
    }
    if (!a->targets.empty()) out.push_back(std::move(a));
    for (auto& [pattern, value] : unpacks) {
      auto u = std::make_unique<Assign>(locOf(pattern));
      targets(pattern, u->targets);
      u->value = std::move(value);
      out.push_back(std::move(u));
    }
  }

  void flattenBinding(TSNode left, LoopItem item, std::vector<ExprPtr>& targetsOut, std::vector<ExprPtr>& values,
                      std::vector<std::pair<TSNode, ExprPtr>>& unpacks) {
    llvm::StringRef lt = typeOf(left);
    bool pattern = lt == "pattern_list" || lt == "tuple_pattern" || lt == "list_pattern";
    if (pattern && !item.parts.empty()) {
      auto kids = namedChildren(left);
      if (kids.size() != item.parts.size()) {
        error(left, llvm::Twine(kids.size() > item.parts.size() ? "not enough" : "too many") + " values to unpack (expected " +
                        llvm::Twine(kids.size()) + ", got " + llvm::Twine(item.parts.size()) + ")");
        return;
      }
      for (size_t i = 0; i < kids.size(); ++i) flattenBinding(kids[i], std::move(item.parts[i]), targetsOut, values, unpacks);
      return;
    }
    ExprPtr value = itemValue(std::move(item), locOf(left));
    if (pattern) return unpacks.push_back({left, std::move(value)});
    targets(left, targetsOut);
    values.push_back(std::move(value));
  }

  static ExprPtr itemValue(LoopItem item, SourceLoc loc) {
    if (item.parts.empty()) return std::move(item.value);
    auto tuple = std::make_unique<TupleLit>(loc, false);
    for (auto& p : item.parts) tuple->elems.push_back(itemValue(std::move(p), loc));
    return tuple;
  }

  void expressionStatement(TSNode n, Block& out) {
    auto kids = namedChildren(n);
    if (kids.size() != 1) {
      error(n, "tuples as statements are not supported in pydd kernels");
      return;
    }
    TSNode e = kids[0];
    llvm::StringRef t = typeOf(e);
    if (t == "assignment") return assignment(e, out, typeComment(n));
    if (t == "augmented_assignment") return augmentedAssignment(e, out);
    if (t == "string") return checkString(e);  // a docstring or a bare string: no effect
    out.stmts.push_back(std::make_unique<ExprStmt>(locOf(e), expr(e)));
  }

  /// `x = 0  # type: float64` — a comment on the statement's own line.
  Type typeComment(TSNode stmt) {
    TSNode next = ts_node_next_sibling(stmt);
    if (ts_node_is_null(next) || typeOf(next) != "comment") return Type();
    if (ts_node_start_point(next).row != ts_node_end_point(stmt).row) return Type();
    llvm::StringRef c = text(next).drop_front(1).ltrim();
    if (!c.consume_front("type:")) return Type();
    Type t = parseTypeText(c.trim());
    if (t.isUnknown()) error(next, "unknown type '" + c.trim() + "' in type comment");
    return t;
  }

  void assignment(TSNode n, Block& out, Type commentType) {
    // `a = b = v` arrives nested; Python evaluates v once and then stores
    // it into each target from left to right.
    std::vector<TSNode> chain = {field(n, "left")};
    TSNode right = field(n, "right");
    while (!ts_node_is_null(right) && typeOf(right) == "assignment") {
      if (!ts_node_is_null(field(right, "type"))) return error(right, "invalid syntax");
      chain.push_back(field(right, "left"));
      right = field(right, "right");
    }
    if (!ts_node_is_null(right) && typeOf(right) == "augmented_assignment") return error(right, "invalid syntax");
    TSNode annotation = field(n, "type");
    // `x: T = y = v` is not Python: an annotated assignment has one target.
    if (!ts_node_is_null(annotation) && chain.size() > 1) return error(field(n, "right"), "invalid syntax");
    Type declared = ts_node_is_null(annotation) ? commentType : typeExpr(annotation);

    if (chain.size() == 1) {
      auto a = std::make_unique<Assign>(locOf(n));
      a->declared = declared;
      targets(chain[0], a->targets);
      if (!ts_node_is_null(right)) a->value = expr(right);
      if (a->targets.size() > 1 && !a->declared.isUnknown()) return error(n, "a tuple assignment cannot be annotated");
      out.stmts.push_back(std::move(a));
      return;
    }
    for (TSNode target : chain)
      if (typeOf(target) != "identifier" && typeOf(target) != "subscript")
        return error(target, "chained assignment to several targets at once is not supported in pydd kernels");
    // A literal or a variable can be read again for each target; anything
    // else is evaluated once into a temporary.
    llvm::StringRef rt = typeOf(right);
    bool reread = rt == "integer" || rt == "float" || rt == "true" || rt == "false" || rt == "identifier";
    std::string temp;
    if (!reread) {
      temp = newTemp("chained");
      auto t = std::make_unique<Assign>(locOf(right));
      t->targets.push_back(std::make_unique<VarRef>(locOf(right), temp));
      t->value = expr(right);
      out.stmts.push_back(std::move(t));
    }
    for (size_t i = 0; i < chain.size(); ++i) {
      auto a = std::make_unique<Assign>(locOf(chain[i]));
      if (i == 0) a->declared = declared;
      a->targets.push_back(expr(chain[i]));
      a->value = reread ? expr(right) : std::make_unique<VarRef>(locOf(right), temp);
      out.stmts.push_back(std::move(a));
    }
  }

  /// A variable name for a compiler temporary that the function does not
  /// use (the printed IR shows it, so it must be a plain identifier).
  std::string newTemp(const std::string& hint) {
    for (;;) {
      std::string name = hint + "_" + std::to_string(NextTemp++);
      if (FunctionNames.insert(name).second) return name;
    }
  }

  void collectNames(TSNode n) {
    if (typeOf(n) == "identifier") FunctionNames.insert(text(n).str());
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) collectNames(ts_node_named_child(n, i));
  }

  void targets(TSNode left, std::vector<ExprPtr>& out) {
    llvm::StringRef t = typeOf(left);
    if (t == "pattern_list" || t == "tuple_pattern" || t == "list_pattern") {
      for (TSNode c : namedChildren(left)) targets(c, out);
      return;
    }
    if (t == "subscript") {
      // A[i][mask] = v stores through the view A[i] (sema accepts that
      // for a mask or an index array only; see Sema's finalizeTarget).
      TSNode base = field(left, "value");
      while (typeOf(base) == "subscript") base = field(base, "value");
      if (typeOf(base) != "identifier") return error(left, "only elements of a named array can be assigned");
    }
    if (t == "identifier" || t == "subscript") {
      out.push_back(expr(left));
      return;
    }
    if (t == "attribute") return error(left, "assignment to attributes is not supported in pydd kernels");
    unsupported(left, "cannot assign to this expression");
  }

  /// An index read twice (as the target and as the current value of an
  /// augmented assignment) but evaluated once: a literal or a name is
  /// simply repeated, anything else goes into a temporary first.
  std::pair<ExprPtr, ExprPtr> evaluatedOnce(TSNode n, Block& out) {
    llvm::StringRef kt = typeOf(n);
    if (kt == "integer" || kt == "identifier") return {expr(n), expr(n)};
    std::string temp = newTemp("index");
    auto t = std::make_unique<Assign>(locOf(n));
    t->targets.push_back(std::make_unique<VarRef>(locOf(n), temp));
    t->value = expr(n);
    out.stmts.push_back(std::move(t));
    return {std::make_unique<VarRef>(locOf(n), temp), std::make_unique<VarRef>(locOf(n), temp)};
  }

  /// A name, or a subscript of a name (A[i], A[i][j]...).
  bool namedSubscript(TSNode n) {
    while (typeOf(n) == "subscript") n = field(n, "value");
    return typeOf(n) == "identifier";
  }

  void augmentedAssignment(TSNode n, Block& out) {
    TSNode left = field(n, "left");
    llvm::StringRef opText = text(field(n, "operator"));
    opText = opText.drop_back(1);  // "+=" -> "+"
    BinaryOp op;
    if (!binaryOp(opText, op)) return error(field(n, "operator"), "'" + opText + "=' is not supported in pydd kernels");
    SourceLoc loc = locOf(n);
    auto a = std::make_unique<Assign>(loc);
    ExprPtr current;
    if (typeOf(left) == "identifier") {
      a->targets.push_back(expr(left));
      current = expr(left);
    } else if (typeOf(left) == "subscript" && namedSubscript(field(left, "value"))) {
      // A[i] op= v  ==>  A[i] = A[i] op v, with each index evaluated once
      // and before v, as Python does: an index that could change (it reads
      // memory or calls) goes into a temporary first, and so does a view
      // being indexed (A[i][m] op= v: the view A[i] is named first).
      auto [tb, lb] = evaluatedOnce(field(left, "value"), out);
      auto target = std::make_unique<Index>(locOf(left), std::move(tb));
      auto load = std::make_unique<Index>(locOf(left), std::move(lb));
      auto kids = namedChildren(left);
      for (size_t i = 1; i < kids.size(); ++i) {
        if (typeOf(kids[i]) != "slice") {
          auto [t, l] = evaluatedOnce(kids[i], out);
          target->indices.push_back(std::move(t));
          load->indices.push_back(std::move(l));
          continue;
        }
        auto ts = std::make_unique<Slice>(locOf(kids[i]));
        auto ls = std::make_unique<Slice>(locOf(kids[i]));
        int colons = 0;
        uint32_t count = ts_node_child_count(kids[i]);
        for (uint32_t j = 0; j < count; ++j) {
          TSNode k = ts_node_child(kids[i], j);
          if (!ts_node_is_named(k)) {
            colons += typeOf(k) == ":";
            continue;
          }
          if (typeOf(k) == "comment") continue;
          auto [t, l] = evaluatedOnce(k, out);
          (colons == 0 ? ts->start : colons == 1 ? ts->stop : ts->step) = std::move(t);
          (colons == 0 ? ls->start : colons == 1 ? ls->stop : ls->step) = std::move(l);
        }
        target->indices.push_back(std::move(ts));
        load->indices.push_back(std::move(ls));
      }
      a->targets.push_back(std::move(target));
      current = std::move(load);
    } else {
      return error(left, "augmented assignment needs a variable or an element of a named array as target");
    }
    a->value = std::make_unique<Binary>(locOf(field(n, "operator")), op, std::move(current), expr(field(n, "right")));
    a->augmented = true;
    out.stmts.push_back(std::move(a));
  }

  // ---- expressions -------------------------------------------------------------

  static bool binaryOp(llvm::StringRef s, BinaryOp& op) {
    auto r = llvm::StringSwitch<int>(s)
                 .Case("+", int(BinaryOp::Add)).Case("-", int(BinaryOp::Sub))
                 .Case("*", int(BinaryOp::Mul)).Case("/", int(BinaryOp::Div))
                 .Case("//", int(BinaryOp::FloorDiv)).Case("%", int(BinaryOp::Mod))
                 .Case("**", int(BinaryOp::Pow)).Case("@", int(BinaryOp::MatMul))
                 .Case("&", int(BinaryOp::BitAnd))
                 .Case("|", int(BinaryOp::BitOr)).Case("^", int(BinaryOp::BitXor))
                 .Case("<<", int(BinaryOp::Shl)).Case(">>", int(BinaryOp::Shr))
                 .Default(-1);
    if (r < 0) return false;
    op = BinaryOp(r);
    return true;
  }

  ExprPtr expr(TSNode n) {
    SourceLoc loc = locOf(n);
    llvm::StringRef t = typeOf(n);
    if (t == "identifier") return std::make_unique<VarRef>(loc, name(n));
    if (t == "integer") return integer(n, false);
    if (t == "float") return floating(n);
    if (t == "true" || t == "false") return std::make_unique<BoolLit>(loc, t == "true");
    if (t == "string") return string(n);
    if (t == "parenthesized_expression") {
      auto kids = namedChildren(n);
      if (kids.size() == 1) return expr(kids[0]);
    }
    if (t == "unary_operator") {
      TSNode arg = field(n, "argument");
      llvm::StringRef op = text(field(n, "operator"));
      // Fold `-123` so that the most negative int64 can be written.
      if (op == "-" && typeOf(arg) == "integer") return integer(arg, true, loc);
      UnaryOp u = op == "-" ? UnaryOp::Neg : op == "+" ? UnaryOp::Pos : UnaryOp::Invert;
      return std::make_unique<Unary>(loc, u, expr(arg));
    }
    if (t == "binary_operator") {
      TSNode opNode = field(n, "operator");
      BinaryOp op;
      if (!binaryOp(text(opNode), op)) {
        error(opNode, "'" + text(opNode) + "' is not supported in pydd kernels yet");
        return poison(loc);
      }
      if (isBitwiseLogic(op)) return bitwiseChain(n);
      return std::make_unique<Binary>(loc, op, expr(field(n, "left")), expr(field(n, "right")));
    }
    if (t == "boolean_operator") {
      bool isAnd = text(field(n, "operator")) == "and";
      ExprPtr lhs = expr(field(n, "left"));
      return std::make_unique<Logical>(loc, isAnd, std::move(lhs), withoutHoisting(field(n, "right"), "the right operand of 'and'/'or'"));
    }
    if (t == "not_operator") return std::make_unique<Not>(loc, expr(field(n, "argument")));
    if (t == "comparison_operator") return comparison(n);
    if (t == "conditional_expression") {
      auto kids = namedChildren(n);
      if (kids.size() == 3) {
        ExprPtr cond = expr(kids[1]);
        ExprPtr yes = withoutHoisting(kids[0], "a conditional expression's branch");
        return std::make_unique<Select>(loc, std::move(cond), std::move(yes), withoutHoisting(kids[2], "a conditional expression's branch"));
      }
    }
    if (t == "call") return call(n);
    if (t == "list_comprehension") return comprehension(n);
    if (t == "subscript") {
      auto x = std::make_unique<Index>(loc, expr(field(n, "value")));
      auto kids = namedChildren(n);
      for (size_t i = 1; i < kids.size(); ++i)
        // `x[:, None]` is `x[:, np.newaxis]`; sema reads the name None
        // (which no variable can have) as a new axis.
        x->indices.push_back(typeOf(kids[i]) == "none" ? std::make_unique<VarRef>(locOf(kids[i]), "None")
                                                       : expr(kids[i]));
      return x;
    }
    if (t == "slice") return slice(n);
    if (t == "dictionary") {
      auto d = std::make_unique<DictLit>(loc);
      for (TSNode pair : namedChildren(n)) {
        if (typeOf(pair) != "pair") {
          unsupported(pair);
          return poison(loc);
        }
        d->keys.push_back(expr(field(pair, "key")));
        d->values.push_back(expr(field(pair, "value")));
      }
      return d;
    }
    if (t == "attribute") return std::make_unique<Attribute>(loc, expr(field(n, "object")), text(field(n, "attribute")).str());
    if (t == "tuple" || t == "list" || t == "expression_list") {
      auto tup = std::make_unique<TupleLit>(loc, t == "list");
      for (TSNode c : namedChildren(n)) tup->elems.push_back(expr(c));
      return tup;
    }
    unsupported(n);
    return poison(loc);
  }

  /// A name as the current scope sees it (a comprehension's own variables
  /// are renamed apart from the function's).
  std::string name(TSNode identifier) {
    std::string n = text(identifier).str();
    auto it = Renames.find(n);
    return it == Renames.end() ? n : it->second;
  }

  /// Gives each name bound by a comprehension's `for` target a fresh
  /// variable: Python 3 comprehensions have their own scope.
  void scopeNames(TSNode target) {
    if (typeOf(target) == "identifier") {
      Renames[text(target).str()] = newTemp(text(target).str());
      return;
    }
    for (TSNode c : namedChildren(target)) scopeNames(c);
  }

  /// `e` where it may not run on every evaluation of its statement (or
  /// runs more than once): a comprehension there cannot be hoisted.
  ExprPtr withoutHoisting(TSNode e, const char* where) {
    const char* outer = NoHoist;
    NoHoist = where;
    ExprPtr r = expr(e);
    NoHoist = outer;
    return r;
  }

  /// `[body for x in s if c ...]` (or a generator consumed by a call):
  /// hoisted before the statement that holds it as a loop that appends to
  /// a fresh list, whose element type sema infers from the appends:
  ///
  ///   list_0 = []
  ///   for x_1 in s:
  ///       if c:
  ///           list_0.append(body)
  ///
  /// The expression is then that list. It runs before the rest of its
  /// statement, so it may not sit where Python evaluates lazily or
  /// repeatedly (a branch of `x if c else y`, the right of `and`/`or`,
  /// while and elif conditions).
  ExprPtr comprehension(TSNode n) {
    SourceLoc loc = locOf(n);
    if (NoHoist || !Hoisted) {
      error(n, llvm::Twine("a list comprehension in ") + (NoHoist ? NoHoist : "this position") +
                   " is not supported in pydd kernels; assign it to a variable first");
      return poison(loc);
    }
    std::string result = newTemp("list");
    auto init = std::make_unique<Assign>(loc);
    init->targets.push_back(std::make_unique<VarRef>(loc, result));
    init->value = std::make_unique<TupleLit>(loc, true);
    Hoisted->push_back(std::move(init));
    auto renames = Renames;
    std::vector<StmtPtr>* outer = Hoisted;
    std::vector<StmtPtr>* sink = Hoisted;
    for (TSNode c : namedChildren(n)) {
      llvm::StringRef ct = typeOf(c);
      Hoisted = sink;
      if (ct == "for_in_clause") {
        if (startsWithAsync(c)) {
          error(c, "asynchronous comprehensions are not supported in pydd kernels");
          break;
        }
        Block before(locOf(c));
        auto f = loopHeader(field(c, "left"), field(c, "right"), locOf(c), false, true, before);
        if (!f) break;
        for (auto& st : before.stmts) sink->push_back(std::move(st));
        std::vector<StmtPtr>* body = &f->body->stmts;
        sink->push_back(std::move(f));
        sink = body;
      } else if (ct == "if_clause") {
        auto kids = namedChildren(c);
        auto test = std::make_unique<If>(locOf(c));
        test->cond = expr(kids[0]);
        test->thenBody = std::make_unique<Block>(locOf(c));
        std::vector<StmtPtr>* body = &test->thenBody->stmts;
        sink->push_back(std::move(test));
        sink = body;
      }
    }
    Hoisted = sink;
    auto append = std::make_unique<Call>(loc, "append");
    append->isMethod = true;
    append->args.push_back(std::make_unique<VarRef>(loc, result));
    append->args.push_back(expr(field(n, "body")));
    sink->push_back(std::make_unique<ExprStmt>(loc, std::move(append)));
    Hoisted = outer;
    Renames = std::move(renames);
    return std::make_unique<VarRef>(loc, result);
  }

  static bool isBitwiseLogic(BinaryOp op) {
    return op == BinaryOp::BitAnd || op == BinaryOp::BitXor || op == BinaryOp::BitOr;
  }

  /// tree-sitter-python 0.23 ranks `^` above `&`; Python binds `&` tightest,
  /// then `^`, then `|`. The unparenthesized run of these operators is
  /// flattened back into source order and regrouped with Python's ranks.
  ExprPtr bitwiseChain(TSNode n) {
    std::vector<TSNode> operands;
    std::vector<std::pair<BinaryOp, TSNode>> ops;
    flattenBitwise(n, operands, ops);
    auto rank = [](BinaryOp op) { return op == BinaryOp::BitOr ? 1 : op == BinaryOp::BitXor ? 2 : 3; };
    // Precedence climbing over operands[0] op0 operands[1] op1 ...
    size_t next = 0;
    std::function<ExprPtr(int)> climb = [&](int minRank) -> ExprPtr {
      ExprPtr lhs = expr(operands[next]);
      while (next < ops.size() && rank(ops[next].first) >= minRank) {
        auto [op, opNode] = ops[next];
        ++next;
        ExprPtr rhs = climb(rank(op) + 1);
        SourceLoc at = lhs->loc;
        lhs = std::make_unique<Binary>(at, op, std::move(lhs), std::move(rhs));
      }
      return lhs;
    };
    return climb(1);
  }

  void flattenBitwise(TSNode n, std::vector<TSNode>& operands, std::vector<std::pair<BinaryOp, TSNode>>& ops) {
    BinaryOp op;
    if (typeOf(n) == "binary_operator" && binaryOp(text(field(n, "operator")), op) && isBitwiseLogic(op)) {
      flattenBitwise(field(n, "left"), operands, ops);
      ops.push_back({op, field(n, "operator")});
      flattenBitwise(field(n, "right"), operands, ops);
      return;
    }
    operands.push_back(n);
  }

  /// A placeholder after an error, so lowering can go on and report more.
  static ExprPtr poison(SourceLoc loc) { return std::make_unique<IntLit>(loc, 0); }

  ExprPtr integer(TSNode n, bool negate, SourceLoc loc = {}) {
    if (loc.line == 0) loc = locOf(n);
    std::string digits;
    for (char c : text(n))
      if (c != '_') digits += c;
    // `1j`: tree-sitter reads an imaginary literal as an integer with a suffix.
    if (!digits.empty() && (digits.back() == 'j' || digits.back() == 'J')) {
      ExprPtr imaginary = floating(n);
      if (!negate) return imaginary;
      return std::make_unique<Unary>(loc, UnaryOp::Neg, std::move(imaginary));
    }
    int base = 10;
    const char* p = digits.c_str();
    if (digits.size() > 1 && digits[0] == '0') {
      char k = static_cast<char>(digits[1] | 0x20);
      if (k == 'x') base = 16, p += 2;
      else if (k == 'o') base = 8, p += 2;
      else if (k == 'b') base = 2, p += 2;
    }
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(p, &end, base);
    unsigned long long limit = negate ? 9223372036854775808ull : 9223372036854775807ull;
    if (errno == ERANGE || v > limit || *end != '\0') {
      error(n, "integer literal '" + text(n) + "' does not fit in int64");
      return poison(loc);
    }
    int64_t value = negate ? static_cast<int64_t>(0ull - v) : static_cast<int64_t>(v);
    return std::make_unique<IntLit>(loc, value);
  }

  ExprPtr floating(TSNode n) {
    std::string digits;
    for (char c : text(n))
      if (c != '_') digits += c;
    bool imaginary = !digits.empty() && (digits.back() == 'j' || digits.back() == 'J');
    if (imaginary) digits.pop_back();
    return std::make_unique<FloatLit>(locOf(n), std::strtod(digits.c_str(), nullptr), imaginary);
  }

  ExprPtr string(TSNode n) {
    llvm::StringRef raw = text(n);
    size_t quote = raw.find_first_of("'\"");
    llvm::StringRef prefix = raw.take_front(quote);
    if (prefix.find_insensitive('f') != llvm::StringRef::npos) {
      error(n, "f-strings are not supported in pydd kernels");
      return poison(locOf(n));
    }
    if (prefix.find_insensitive('b') != llvm::StringRef::npos) {
      error(n, "bytes literals are not supported in pydd kernels");
      return poison(locOf(n));
    }
    bool rawString = prefix.find_insensitive('r') != llvm::StringRef::npos;
    llvm::StringRef body = raw.drop_front(quote);
    size_t q = body.startswith("\"\"\"") || body.startswith("'''") ? 3 : 1;
    body = body.drop_front(q).drop_back(q);
    std::string value;
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c != '\\' || rawString || i + 1 == body.size()) {
        value += c;
        continue;
      }
      char e = body[++i];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'a': value += '\a'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\n': break;
        case 'x':
        case 'u':
        case 'U': {
          // Exactly 2, 4 or 8 hex digits, as Python requires.
          int want = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          size_t before = i;
          unsigned code = hexDigits(body, i, want);
          if (static_cast<int>(i - before) != want || code > 0x10FFFF) {
            error(n, llvm::Twine("invalid \\") + llvm::Twine(e) + " escape in string literal");
            return poison(locOf(n));
          }
          appendCodePoint(value, code);
          break;
        }
        case 'N':
          error(n, "\\N{...} escapes are not supported in pydd kernels");
          return poison(locOf(n));
        default:
          if (e >= '0' && e <= '7') {
            // Up to three octal digits, as in Python.
            unsigned code = static_cast<unsigned>(e - '0');
            for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
              code = code * 8 + static_cast<unsigned>(body[++i] - '0');
            appendCodePoint(value, code);
          } else {
            value += '\\';
            value += e;
          }
      }
    }
    return std::make_unique<StrLit>(locOf(n), std::move(value));
  }

  /// Reads `count` hex digits after position i (advancing i).
  static unsigned hexDigits(llvm::StringRef body, size_t& i, int count) {
    unsigned code = 0;
    for (int k = 0; k < count && i + 1 < body.size() && llvm::isHexDigit(body[i + 1]); ++k)
      code = code * 16 + llvm::hexDigitValue(body[++i]);
    return code;
  }

  /// Appends a code point as UTF-8, which is how the text is printed.
  static void appendCodePoint(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  /// `start:stop:step`: the parts are told apart by the colons around them.
  ExprPtr slice(TSNode n) {
    auto sl = std::make_unique<Slice>(locOf(n));
    int colons = 0;
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode k = ts_node_child(n, i);
      if (typeOf(k) == "comment") continue;
      if (!ts_node_is_named(k)) {
        if (typeOf(k) == ":") ++colons;
        continue;
      }
      (colons == 0 ? sl->start : colons == 1 ? sl->stop : sl->step) = expr(k);
    }
    return sl;
  }

  ExprPtr comparison(TSNode n) {
    auto c = std::make_unique<Compare>(locOf(n));
    uint32_t count = ts_node_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode k = ts_node_child(n, i);
      llvm::StringRef kt = typeOf(k);
      if (kt == "comment") continue;
      if (ts_node_is_named(k)) {
        // From the third operand on, a chain evaluates lazily.
        c->operands.push_back(c->operands.size() < 2 ? expr(k) : withoutHoisting(k, "a comparison chain"));
        continue;
      }
      int op = llvm::StringSwitch<int>(kt)
                   .Case("<", int(CmpOp::Lt)).Case("<=", int(CmpOp::Le))
                   .Case(">", int(CmpOp::Gt)).Case(">=", int(CmpOp::Ge))
                   .Case("==", int(CmpOp::Eq)).Case("!=", int(CmpOp::Ne))
                   .Case("in", int(CmpOp::In)).Case("not in", int(CmpOp::NotIn))
                   .Default(-1);
      // `not in` arrives as two tokens.
      if (kt == "not" && i + 1 < count && typeOf(ts_node_child(n, i + 1)) == "in") {
        op = int(CmpOp::NotIn);
        ++i;
      }
      if (op < 0) {
        error(k, "the '" + text(k) + "' operator is not supported in pydd kernels");
        return poison(locOf(n));
      }
      c->ops.push_back(CmpOp(op));
    }
    return c;
  }

  ExprPtr call(TSNode n) {
    TSNode fn = field(n, "function");
    TSNode argList = field(n, "arguments");

    std::unique_ptr<Call> c;
    if (typeOf(fn) == "attribute") {
      // `x.name(args)`: a library function or container method called on x.
      c = std::make_unique<Call>(locOf(n), text(field(fn, "attribute")).str());
      c->isMethod = true;
      c->args.push_back(expr(field(fn, "object")));
    } else if (typeOf(fn) == "identifier") {
      c = std::make_unique<Call>(locOf(n), text(fn).str());
    } else if (typeOf(fn) == "call" && typeOf(field(fn, "function")) == "identifier" &&
               (text(field(fn, "function")) == "grad" || text(field(fn, "function")) == "value_and_grad")) {
      // `grad(f, argnum)(args)`: a call of f's derivative (frontend/Gradient.h).
      GradRequest r;
      r.withValue = text(field(fn, "function")) == "value_and_grad";
      std::vector<TSNode> spec = namedChildren(field(fn, "arguments"));
      if (spec.empty() || spec.size() > 2 || typeOf(spec[0]) != "identifier") {
        error(fn, "grad() takes a kernel of this file and an argument number: grad(f, 0)(x, ...)");
        return poison(locOf(n));
      }
      r.function = text(spec[0]).str();
      if (spec.size() == 2) {
        std::vector<TSNode> nums = typeOf(spec[1]) == "tuple" ? namedChildren(spec[1]) : std::vector<TSNode>{spec[1]};
        for (TSNode k : nums) {
          if (typeOf(k) != "integer") {
            error(k, "grad()'s argument number must be an integer literal or a tuple of them");
            return poison(locOf(n));
          }
          r.argnums.push_back(std::stoi(text(k).str()));
        }
      }
      if (r.argnums.empty()) r.argnums = {0};
      c = std::make_unique<Call>(locOf(n), gradientMarker(r));
    } else {
      error(fn, "only named functions and methods can be called in pydd kernels");
      return poison(locOf(n));
    }
    // `f(x for x in s)`: the generator is consumed whole, as a list would be.
    if (typeOf(argList) == "generator_expression") {
      c->args.push_back(comprehension(argList));
      return c;
    }
    for (TSNode a : namedChildren(argList)) {
      if (typeOf(a) == "keyword_argument") {
        TSNode name = field(a, "name"), value = field(a, "value");
        // `axis=None`: NumPy's every axis, all_axes(); sema checks that the
        // parameter takes it.
        ExprPtr v = typeOf(value) == "none" ? std::make_unique<Call>(locOf(value), "all_axes") : expr(value);
        c->keywords.push_back({text(name).str(), locOf(name), std::move(v)});
      } else if (!c->keywords.empty()) {
        error(a, "positional argument follows keyword argument");
      } else {
        c->args.push_back(expr(a));
      }
    }
    return c;
  }

  Diagnostics& Diag;
  llvm::StringRef Text;
  std::vector<KeywordSite> Sites;
  std::set<std::string> FunctionNames;  // every identifier of the current function
  std::map<std::string, std::string> Renames;  // a comprehension's variables
  std::vector<StmtPtr>* Hoisted = nullptr;     // run before the current statement
  const char* NoHoist = nullptr;               // why a comprehension cannot be hoisted here
  unsigned NextTemp = 0;
  unsigned BlockDepth = 0;
};

/// One iterative walk over the syntax tree before lowering (the tree can be
/// as deep as the input is long, so nothing here recurses). Reports, at the
/// first offending node in source order, what tree-sitter's error recovery
/// accepted silently: ERROR and MISSING nodes, nesting beyond
/// kMaxNestingDepth, keywords used as names and blocks with no statement.
bool checkTree(TSNode root, llvm::StringRef text, const std::vector<StatementStart>& starts, LexError& problem) {
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  unsigned depth = 0;
  // tree-sitter's scanner skips a newline where the grammar cannot take
  // one, so `def f\n(x): ...` parses as one statement. The lexer knows the
  // logical lines: each must start a statement (or an elif/else clause),
  // and a statement that does not start one must be in a one-line suite.
  std::vector<TSNode> parents;  // ts_node_parent walks down from the root: too slow here
  std::vector<uint32_t> treeStarts;
  auto lexStart = [&](uint32_t offset) {
    return std::binary_search(starts.begin(), starts.end(), StatementStart{offset, {}},
                              [](const StatementStart& a, const StatementStart& b) { return a.offset < b.offset; });
  };
  bool ok = true;
  auto fail = [&](TSNode n, const llvm::Twine& msg) {
    problem = {locOf(n), msg.str()};
    ok = false;
  };
  while (ok) {
    TSNode n = ts_tree_cursor_current_node(&cursor);
    llvm::StringRef type = typeOf(n);
    llvm::StringRef spelled = text.slice(ts_node_start_byte(n), ts_node_end_byte(n));
    if (ts_node_is_missing(n))
      fail(n, "invalid syntax: expected '" + type + "'");
    else if (type == "ERROR")
      fail(n, "invalid syntax");
    else if (depth > kMaxNestingDepth)
      fail(n, "too deeply nested: pydd kernels allow at most " + llvm::Twine(kMaxNestingDepth) +
                  " levels of nested expressions and statements");
    else if (type == "identifier" && isPythonKeyword(spelled))
      fail(n, "invalid syntax: '" + spelled + "' is a keyword and cannot be used as a name");
    else if (type == "block" && namedChildren(n).empty()) {
      TSNode colon = ts_node_prev_sibling(n);
      fail(!ts_node_is_null(colon) && typeOf(colon) == ":" ? colon : n, "expected an indented block after this ':'");
    }
    if (!ok) break;
    llvm::StringRef parent = parents.empty() ? "" : typeOf(parents.back());
    bool statement = (parent == "module" || parent == "block") && type != "comment";
    // Parts of a statement that start logical lines of their own.
    bool clause = llvm::is_contained(std::initializer_list<llvm::StringRef>{"elif_clause", "else_clause", "except_clause", "except_group_clause",
                                      "finally_clause", "case_clause", "decorator"}, type) ||
                  (parent == "decorated_definition" && type != "comment");
    if (statement || clause) {
      uint32_t at = ts_node_start_byte(n);
      treeStarts.push_back(at);
      bool oneLineSuite = parent == "block" && !lexStart(ts_node_start_byte(parents.back()));
      if (!lexStart(at) && (clause || !oneLineSuite)) {
        fail(n, "invalid syntax");
        break;
      }
    }
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      parents.push_back(n);
      ++depth;
      continue;
    }
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        done = true;
        break;
      }
      parents.pop_back();
      --depth;
    }
    if (!done) continue;
    ts_tree_cursor_delete(&cursor);
    std::sort(treeStarts.begin(), treeStarts.end());
    for (const StatementStart& s : starts)
      if (!std::binary_search(treeStarts.begin(), treeStarts.end(), s.offset)) {
        problem = {s.loc, "invalid syntax"};
        return false;
      }
    return true;
  }
  ts_tree_cursor_delete(&cursor);
  return false;
}

}  // namespace

namespace {

/// Recursive descent over the annotation grammar:
///   type := scalar | Array(scalar[, rank]) | List(type) | Dict(type, type)
///         | Heap(type[, type]) | Tuple(type, ...) | (type, ...) | (type,) | SparseMat(scalar)
Type parseTypePrefix(llvm::StringRef& text, bool anyRank, unsigned depth = 0) {
  if (depth > kMaxTypeNesting) return Type();
  text = text.ltrim();
  size_t n = 0;
  while (n < text.size() && (llvm::isAlnum(text[n]) || text[n] == '_')) ++n;
  std::string name = text.take_front(n).str();
  text = text.drop_front(n).ltrim();
  ScalarKind s;
  if (parseScalarName(name, s)) return Type::scalar(s);
  // `(int64, float64)` is the same as Tuple(int64, float64).
  if (name.empty() && text.startswith("(")) name = "Tuple";
  if (name != "Array" && name != "List" && name != "Dict" && name != "Heap" && name != "Tuple" && name != "SparseMat")
    return Type();
  if (!text.consume_front("(")) return Type();
  std::vector<Type> args;
  // Without a rank: any (0) where the caller allows it, else 1.
  unsigned rank = anyRank && depth == 0 ? 0 : 1;
  for (size_t position = 0;; ++position) {
    text = text.ltrim();
    if (name == "Array" && position == 2) return Type();
    if (name == "Array" && position == 1) {
      size_t d = 0;
      while (d < text.size() && llvm::isDigit(text[d])) ++d;
      if (d == 0 || text.take_front(d).getAsInteger(10, rank) || rank < 1 || rank > 8) return Type();
      text = text.drop_front(d);
    } else {
      Type t = parseTypePrefix(text, false, depth + 1);
      if (t.isUnknown()) return Type();
      args.push_back(std::move(t));
    }
    text = text.ltrim();
    if (text.consume_front(")")) break;
    if (!text.consume_front(",")) return Type();
    // A trailing comma closes a tuple, as Python spells one element: (int64,).
    if (name == "Tuple" && text.ltrim().consume_front(")")) {
      text = text.ltrim().drop_front(1);
      break;
    }
  }
  if (name == "Array") {
    if (args.size() != 1 || !args[0].isScalar()) return Type();
    return Type::array(args[0].elem(), static_cast<int>(rank));
  }
  if (name == "Tuple") return args.size() >= 1 ? Type::tuple(args) : Type();
  // Not implemented for complex numbers: sparse matrices, dict keys (the
  // runtime's dicts hash real keys) and heap keys (complex numbers have no
  // order).
  if (name == "SparseMat")
    return args.size() == 1 && args[0].isScalar() && !args[0].isComplex() ? Type::sparse(args[0].elem()) : Type();
  if (name == "List") return args.size() == 1 ? Type::list(args[0]) : Type();
  if (name == "Dict") return args.size() == 2 && !args[0].isComplex() ? Type::dict(args[0], args[1]) : Type();
  if (args.empty() || args.size() > 2 || args[0].isComplex()) return Type();
  return Type::heap(args[0], args.size() == 2 ? args[1] : Type());
}

}  // namespace

Type parseTypeText(llvm::StringRef text, bool anyRank) {
  Type t = parseTypePrefix(text, anyRank);
  return text.trim().empty() ? t : Type();
}

std::unique_ptr<Module> parseModule(Diagnostics& diag, const std::string& moduleName) {
  std::vector<StatementStart> starts;
  LexError lexError;
  bool lexed = lexPython(diag.source(), starts, lexError);
  std::vector<KeywordSite> sites;
  std::string text = rewriteIntrepyddKeywords(diag.source(), starts, sites);

  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_python());
  TSTree* tree = ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  TSNode root = ts_tree_root_node(tree);

  // CPython stops at the first error in the text, whether its tokenizer or
  // its parser finds it; so does this.
  std::unique_ptr<Module> m;
  LexError treeError;
  bool parsed = checkTree(root, text, starts, treeError);
  if (lexed && parsed) {
    m = Lowerer(diag, text, std::move(sites)).module(root, moduleName);
  } else {
    auto before = [](SourceLoc a, SourceLoc b) { return a.line < b.line || (a.line == b.line && a.col < b.col); };
    const LexError& first =
        !lexed && (parsed || lexError.beyondGrammar || !before(treeError.loc, lexError.loc)) ? lexError : treeError;
    diag.error(first.loc, first.message);
  }
  ts_tree_delete(tree);
  ts_parser_delete(parser);
  if (diag.errorCount()) return nullptr;
  return m;
}

}  // namespace pydd
