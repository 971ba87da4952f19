#include "ir/IR.h"

namespace pydd {

const Type* Function::lookup(const std::string& var) const {
  for (auto& p : params)
    if (p.name == var) return &p.type;
  for (auto& l : locals)
    if (l.name == var) return &l.type;
  return nullptr;
}

Function* Module::find(const std::string& fn) const {
  for (auto& f : functions)
    if (f->name == fn) return f.get();
  return nullptr;
}

}  // namespace pydd
