// A GoogleTest predicate shared by the runtime tests: `f()` throws a
// pydd::Error of `kind` whose message is exactly `message`.
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "pydd/errors.h"

namespace pydd::testing_support {

template <class F>
::testing::AssertionResult Raises(F&& f, ErrorKind kind, const char* message) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() != kind)
      return ::testing::AssertionFailure() << "wrong kind " << static_cast<int>(e.kind()) << ": " << e.what();
    if (std::strcmp(e.what(), message) != 0) return ::testing::AssertionFailure() << "wrong message: " << e.what();
    return ::testing::AssertionSuccess();
  } catch (...) {
    return ::testing::AssertionFailure() << "threw something other than pydd::Error";
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace pydd::testing_support
