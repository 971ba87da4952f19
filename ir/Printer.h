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
/// `name(x: T, n: int64 = 3) -> R`. With `asWritten`, an instance of a
/// rank-generic function shows the source's name and rank-less
/// `Array(T)`s (as help() does in Python).
std::string printSignature(const Function& f, bool asWritten);
/// For an instance of a rank-generic function: `f(x: Array(float64)) for
/// x: Array(float64, 2)`.
std::string describeInstance(const Function& f);

/// The shortest decimal text that reads back as exactly `v`, always with a
/// '.' or an exponent so that it stays a float literal.
std::string formatFloatLiteral(double v);
/// `2.5j`, `1j`: an imaginary literal of the value's shortest digits.
std::string formatImaginaryLiteral(double v);

}  // namespace pydd
