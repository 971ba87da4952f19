#include "codegen/HostEmitters.h"

#include <map>

#include "codegen/CppEmitter.h"
#include "ir/Visitor.h"
#include "opt/ArrayEffects.h"
#include "stdlib/Catalog.h"

namespace pydd {
namespace {

const char* abiDtype(ScalarKind s) {
  switch (s) {
    case ScalarKind::Bool: return "Dtype::Bool";
    case ScalarKind::Int32: return "Dtype::Int32";
    case ScalarKind::Int64: return "Dtype::Int64";
    case ScalarKind::Float32: return "Dtype::Float32";
    case ScalarKind::Float64: return "Dtype::Float64";
  }
  return "";
}

/// The TypeDesc initializer for `t`. Children of a List, Dict or Tuple go
/// into arrays defined in `defs` (named td_<n>), ahead of their first use.
std::string abiType(const Type& t, std::string& defs, int& counter) {
  auto desc = [](const char* kind, const char* dtype, int rank, size_t n, const std::string& elems) {
    return std::string("{Kind::") + kind + ", " + dtype + ", " + std::to_string(rank) + ", " + std::to_string(n) +
           ", " + elems + "}";
  };
  if (t.isScalar()) return desc("Scalar", abiDtype(t.elem()), 0, 0, "nullptr");
  if (t.isArray()) return desc("Array", abiDtype(t.elem()), t.rank(), 0, "nullptr");
  if (t.isSparse()) return desc("Sparse", abiDtype(t.elem()), 2, 0, "nullptr");
  // Heaps, strings and the like never cross the boundary (sema rejects them
  // in signatures); Void is what the bridge then refuses at import.
  const char* kind = t.isList() ? "List" : t.isDict() ? "Dict" : t.isTuple() ? "Tuple" : nullptr;
  if (!kind) return desc("Void", "Dtype::Bool", 0, 0, "nullptr");
  std::string items;
  for (const Type& e : t.elems()) items += "    " + abiType(e, defs, counter) + ",\n";
  std::string name = "td_" + std::to_string(counter++);
  defs += "const pydd::abi::TypeDesc " + name + "[] = {\n" + items + "};\n";
  return desc(kind, "Dtype::Bool", 0, t.elems().size(), t.elems().empty() ? "nullptr" : name);
}

bool holdsArrays(const Type& t) {
  if (t.isArray() || t.isSparse()) return true;
  for (const Type& e : t.elems())
    if (holdsArrays(e)) return true;
  return false;
}

bool usesSparse(const Type& t) {
  if (t.isSparse()) return true;
  for (const Type& e : t.elems())
    if (usesSparse(e)) return true;
  return false;
}

// ---- which SparseMat parameters a kernel may write
//
// The bridge borrows a CSR argument's arrays; a kernel that inserts into
// the matrix (spm_set_item) cannot grow the caller's arrays, and one that
// overwrites an entry would change the caller's matrix behind SciPy's back.
// Such parameters are copied in instead. Conservative like ArrayEffects: a
// parameter counts as written unless every use is a read (a library call
// that does not write that argument, an element read, a read-only parameter
// of a user function, iteration, returning it).

using SparseEffects = std::map<const Function*, std::vector<bool>>;

class SparseUseScanner : public Visitor {
 public:
  using Visitor::visit;
  SparseUseScanner(const Module& m, const SparseEffects& effects, const std::string& var)
      : M(m), Effects(effects), Var(var) {}
  bool mayWrite = false;

  void visit(const Stmt& s) override {
    if (auto* a = dyn_cast<Assign>(&s)) {
      for (auto& t : a->targets) {
        if (auto* idx = dyn_cast<Index>(t.get())) {
          if (refersTo(*idx->base)) mayWrite = true;  // S[r, c] = v
          else visit(*idx->base);
          for (auto& i : idx->indices) visit(*i);
        } else if (a->augmented && isVar(*t)) {
          // `S op= v` may update S in place; plain rebinding leaves the
          // caller's matrix alone.
          mayWrite = true;
        }
      }
      if (a->value) {
        if (refersTo(*a->value)) mayWrite = true;  // an alias the scan does not follow
        else visit(*a->value);
      }
      return;
    }
    if (auto* r = dyn_cast<Return>(&s); r && r->value && refersTo(*r->value)) return;
    if (auto* f = dyn_cast<For>(&s); f && !f->isRange && f->iterable && isVar(*f->iterable)) {
      visit(*f->body);
      return;
    }
    visitChildren(s);
  }

  void visit(const Expr& e) override {
    // The matrix itself (or a view of it) anywhere not handled here or by
    // the caller -- in a tuple, list, dict or conditional: an alias.
    if (refersTo(e)) {
      mayWrite = true;
      return;
    }
    if (auto* c = dyn_cast<Call>(&e)) {
      for (size_t i = 0; i < c->args.size(); ++i) {
        if (!refersTo(*c->args[i])) {
          visit(*c->args[i]);
          continue;
        }
        if (c->target == CallTarget::Library && c->library && !(c->library->writesArgs >> i & 1u)) continue;
        if (c->target == CallTarget::User) {
          auto it = Effects.find(M.find(c->callee));
          if (it != Effects.end() && i < it->second.size() && !it->second[i]) continue;
        }
        mayWrite = true;
      }
      return;
    }
    if (auto* idx = dyn_cast<Index>(&e)) {
      // S[r, c] reads one element; anything else indexed out of S is a view.
      if (refersTo(*idx->base)) {
        if (!isVar(*idx->base) || !e.type.isScalar()) mayWrite = true;
      } else {
        visit(*idx->base);
      }
      for (auto& i : idx->indices) visit(*i);
      return;
    }
    visitChildren(e);
  }

 private:
  bool isVar(const Expr& e) const {
    auto* v = dyn_cast<VarRef>(&e);
    return v && v->name == Var;
  }
  /// The matrix itself, or something a library function says shares its
  /// memory. Library functions that return a SparseMat build a new one
  /// (transpose included), so only an array result can be such a view.
  bool refersTo(const Expr& e) const {
    if (isVar(e)) return true;
    if (auto* c = dyn_cast<Call>(&e);
        c && e.type.isArray() && c->library && c->library->returnsView && !c->args.empty())
      return refersTo(*c->args[0]);
    if (auto* s = dyn_cast<Select>(&e)) return refersTo(*s->trueValue) || refersTo(*s->falseValue);
    return false;
  }

  const Module& M;
  const SparseEffects& Effects;
  const std::string& Var;
};

/// written[i] for each SparseMat parameter of `target` (false for others).
std::vector<bool> writtenSparseParams(const Module& m, const Function& target) {
  SparseEffects effects;
  for (auto& f : m.functions) effects[f.get()] = std::vector<bool>(f->params.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& f : m.functions) {
      for (size_t i = 0; i < f->params.size(); ++i) {
        if (!f->params[i].type.isSparse() || effects[f.get()][i]) continue;
        SparseUseScanner scan(m, effects, f->params[i].name);
        scan.visit(*f->body);
        if (scan.mayWrite) {
          effects[f.get()][i] = true;
          changed = true;
        }
      }
    }
  }
  return effects[&target];
}

std::string signature(const Function& f) {
  std::string s = f.name + "(";
  for (size_t i = 0; i < f.params.size(); ++i) s += (i ? ", " : "") + f.params[i].name + ": " + f.params[i].type.str();
  s += ")";
  if (!f.returnType.isVoid()) s += " -> " + f.returnType.str();
  return s;
}

}  // namespace

std::string emitPythonGlue(const Module& m) {
  std::string ns = cxxIdentifier(m.name);
  std::string out = "\n// ---- Python module glue (host=python) ----\n";
  out += "namespace {\nusing pydd::abi::Dtype;\nusing pydd::abi::Kind;\n\n";
  int counter = 0;
  std::vector<std::string> results;
  for (auto& f : m.functions) {
    std::string call = ns + "::" + cxxIdentifier(f->name) + "(";
    for (size_t i = 0; i < f->params.size(); ++i)
      call += (i ? ", " : "") + std::string("pydd::abi::get<") + cxxType(f->params[i].type) + ">(a[" +
              std::to_string(i) + "])";
    call += ")";
    out += "void thunk_" + f->name + "([[maybe_unused]] void* const* a, [[maybe_unused]] void* r) {\n";
    if (f->returnType.isVoid())
      out += "  " + call + ";\n";
    else
      out += "  pydd::abi::put<" + cxxType(f->returnType) + ">(r, " + call + ");\n";
    out += "}\n";
    std::string defs, params;
    if (!f->params.empty()) {
      std::vector<bool> written = writtenArrayParams(m, *f);
      std::vector<bool> sparseWritten = writtenSparseParams(m, *f);
      for (size_t i = 0; i < f->params.size(); ++i) {
        // ArrayEffects follows array parameters only: arrays (or sparse
        // matrices) inside a list or tuple parameter may be written, so the
        // bridge wants them writable (and copies the matrices).
        const Type& t = f->params[i].type;
        const bool mayWrite = written[i] || sparseWritten[i] || (!t.isArray() && !t.isSparse() && holdsArrays(t));
        params += "    {\"" + f->params[i].name + "\", " + abiType(t, defs, counter) + ", " +
                  (mayWrite ? "true" : "false") + "},\n";
      }
    }
    results.push_back(f->returnType.isVoid() ? "{Kind::Void, Dtype::Bool, 0, 0, nullptr}"
                                             : abiType(f->returnType, defs, counter));
    out += defs;
    if (!f->params.empty()) out += "const pydd::abi::ParamDesc params_" + f->name + "[] = {\n" + params + "};\n";
  }
  if (!m.functions.empty()) {
    out += "\nconst pydd::abi::FunctionDesc functions[] = {\n";
    for (size_t k = 0; k < m.functions.size(); ++k) {
      const Function& f = *m.functions[k];
      out += "    {\"" + f.name + "\", \"" + signature(f) + "\", " + (f.params.empty() ? "nullptr" : "params_" + f.name) +
             ", " + std::to_string(f.params.size()) + ", " + results[k] + ", thunk_" + f.name + "},\n";
    }
    out += "};\n";
  }
  out += "const pydd::abi::ModuleDesc module_desc = {pydd::abi::kVersion, \"" + m.name + "\", " +
         (m.functions.empty() ? "nullptr" : "functions") + ", " + std::to_string(m.functions.size()) +
         ", &pydd::print_hook};\n";
  out += "}  // namespace\n\n";
  out += "extern \"C\" __attribute__((visibility(\"default\"))) _object* PyInit_" + m.name +
         "() { return pydd_make_module(&module_desc); }\n";
  return out;
}

std::string emitCppHeader(const Module& m) {
  std::string ns = cxxIdentifier(m.name);
  std::string out = "// Generated by pyddc from " + m.path + ". Do not edit.\n";
  out += "// Link with lib" + m.name + ".a or lib" + m.name + ".so; compile with the flags of `pyddc --cxxflags`.\n";
  out += "// Errors are thrown as pydd::Error (pydd/errors.h).\n";
  bool sparse = false;
  for (auto& f : m.functions) {
    sparse |= usesSparse(f->returnType);
    for (auto& p : f->params) sparse |= usesSparse(p.type);
  }
  out += "#pragma once\n\n#include <cstdint>\n#include <tuple>\n\n#include \"pydd/array.h\"\n#include \"pydd/containers.h\"\n"
         "#include \"pydd/errors.h\"\n";
  if (sparse) out += "#include \"pydd/sparse.h\"\n";
  out += "\n";
  out += "namespace " + ns + " {\n\n";
  for (auto& f : m.functions) out += "/// " + signature(*f) + "\n" + cxxDeclaration(m, *f) + ";\n";
  out += "\n}  // namespace " + ns + "\n";
  return out;
}

}  // namespace pydd
