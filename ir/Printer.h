// Unparses the IR to pydd source.
//
// The output is valid pydd (and so valid Intrepydd): `--emit=ir` and
// `--dump-after=PASS` show a programmer what the compiler did in their own
// language. With types shown, every local is declared up front with a bare
// annotation (`x: float64`) and every implicit conversion is explicit.
#pragma once

#include <string>

#include "ir/IR.h"

namespace pydd {

std::string printModule(const Module& m);
std::string printFunction(const Function& f);
std::string printExpr(const Expr& e);

/// The shortest decimal text that reads back as exactly `v`, always with a
/// '.' or an exponent so that it stays a float literal.
std::string formatFloatLiteral(double v);

}  // namespace pydd
