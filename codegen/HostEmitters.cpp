#include "codegen/HostEmitters.h"

#include "codegen/CppEmitter.h"
#include "ir/Printer.h"
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
    case ScalarKind::Complex64: return "Dtype::Complex64";
    case ScalarKind::Complex128: return "Dtype::Complex128";
    case ScalarKind::Int8: return "Dtype::Int8";
    case ScalarKind::Int16: return "Dtype::Int16";
    case ScalarKind::UInt8: return "Dtype::UInt8";
    case ScalarKind::UInt16: return "Dtype::UInt16";
    case ScalarKind::UInt32: return "Dtype::UInt32";
    case ScalarKind::UInt64: return "Dtype::UInt64";
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


}  // namespace

std::string emitPythonGlue(const Module& m) {
  std::string ns = cxxIdentifier(m.name);
  std::string out = "\n// ---- Python module glue (host=python) ----\n";
  out += "namespace {\nusing pydd::abi::Dtype;\nusing pydd::abi::Kind;\n\n";
  int counter = 0;
  std::vector<std::string> results;
  auto writtenByFunction = writtenArrayParams(m);
  for (auto& f : m.functions) {
    std::string call = ns + "::" + cxxIdentifier(f->sourceName()) + "(";
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
      const std::vector<bool>& written = writtenByFunction[f.get()];
      for (size_t i = 0; i < f->params.size(); ++i) {
        // ArrayEffects follows array and sparse parameters: arrays (or
        // sparse matrices) inside a list or tuple parameter may be written,
        // so the bridge wants them writable (and copies the matrices).
        const Type& t = f->params[i].type;
        const bool mayWrite = written[i] || (!t.isArray() && !t.isSparse() && holdsArrays(t));
        const std::string& d = f->params[i].defaultValue;
        params += "    {\"" + f->params[i].name + "\", " + abiType(t, defs, counter) + ", " +
                  (mayWrite ? "true" : "false") + ", " + (d.empty() ? "nullptr" : "\"" + d + "\"") + "},\n";
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
      // The instances of a rank-generic function share its name: the bridge
      // makes them one Python function that dispatches on ndim.
      out += "    {\"" + f.sourceName() + "\", \"" + printSignature(f, true) + "\", " + (f.params.empty() ? "nullptr" : "params_" + f.name) +
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
  out += "#pragma once\n\n#include <complex>\n#include <cstdint>\n#include <tuple>\n\n#include \"pydd/array.h\"\n#include \"pydd/containers.h\"\n"
         "#include \"pydd/errors.h\"\n#include \"pydd/parallel.h\"  // pydd::set_num_threads\n";
  if (sparse) out += "#include \"pydd/sparse.h\"\n";
  out += "\n";
  out += "namespace " + ns + " {\n\n";
  // A rank-generic function is one overload per instance.
  for (auto& f : m.functions)
    out += "/// " + (f->generic.empty() ? printSignature(*f, true) : describeInstance(*f)) + "\n" + cxxDeclaration(m, *f, true) + ";\n";
  out += "\n}  // namespace " + ns + "\n";
  return out;
}

}  // namespace pydd
