// A C++ program that calls pydd kernels with no Python involved: the
// kernels were compiled with `pyddc --host=cpp` into libnumeric.a,
// libkmeans.a, libarrays.a and libgraph.a, whose headers declare them in
// namespaces numeric, kmeans, arrays and graph.
#include <cmath>
#include <cstdio>
#include <vector>

#include "arrays.h"
#include "graph.h"
#include "kmeans.h"
#include "numeric.h"

int main() {
  int failures = 0;
  auto report = [&](const char* what, double ours, double expected) {
    bool ok = std::fabs(ours - expected) <= 1e-9 * std::fmax(1.0, std::fabs(expected));
    std::printf("  %-28s pyddc: %-14.10g C++ reference: %-14.10g %s\n", what, ours, expected, ok ? "ok" : "MISMATCH");
    failures += !ok;
  };

  report("fib(25)", double(numeric::fib(25)), 75025);
  report("gcd(1071, 462)", double(numeric::gcd(1071, 462)), 21);
  double pi = 0;
  for (int k = 1; k <= 10000; ++k) pi += 1.0 / (double(k) * k);
  report("pisum(1)", numeric::pisum(1), pi);

  // Arrays: borrow the host's memory (no copy), or let the runtime allocate.
  const int64_t n = 6, d = 2, k = 2;
  std::vector<double> points = {0, 0, 0, 1, 1, 0, 10, 10, 10, 11, 11, 10};
  std::vector<double> centers = {0, 0, 10, 10};
  auto X = pydd::Array<double, 2>::borrow(points.data(), {n, d});
  auto C = pydd::Array<double, 2>::borrow(centers.data(), {k, d});
  auto labels = pydd::Array<int64_t, 1>::zeros({n});

  // pfor loops (assign_labels has one) run on OMP_NUM_THREADS threads, or
  // as many as pydd::set_num_threads says (parallel.h, in every header).
  pydd::set_num_threads(2);
  report("pydd::get_num_threads()", pydd::get_num_threads(), 2);
  pydd::Array<double, 2> D = kmeans::pairwise_sqdist(X, C);
  report("D[5, 1] (11,10) to (10,10)", D(5, 1), 1.0);
  int64_t changed = kmeans::assign_labels(D, labels);
  report("points that changed label", double(changed), 3);
  pydd::Array<double, 2> C2 = kmeans::update_centers(X, labels, k);
  report("new center 1, x", C2(1, 0), 31.0 / 3);
  report("new center 1, y", C2(1, 1), 31.0 / 3);

  // Whole-array kernels return new arrays; lists come back as pydd::List.
  std::vector<double> table = {1, 3, 2, 2, 5, 5};
  auto T = pydd::Array<double, 2>::borrow(table.data(), {2, 3});
  pydd::Array<double, 2> R = arrays::row_normalize(T);
  report("row_normalize(T)[0, 1]", R(0, 1), 0.5);
  pydd::Array<double, 2> Z = arrays::standardize(T);
  report("standardize(T)[1, 0]", Z(1, 0), 1.0);
  std::vector<double> values = {0.5, 9, 3, 7, 1};
  auto top = arrays::top_k(pydd::Array<double, 1>::borrow(values.data(), {5}), 2);
  report("top_k(values, 2)[1]", double(top[1]), 1);

  // Sparse matrices: CSR arrays the host owns, wrapped without a copy.
  // A triangle 0-1-2 plus an edge 2-3.
  std::vector<int64_t> indptr = {0, 2, 4, 7, 8}, cols = {1, 2, 0, 2, 0, 1, 3, 2};
  std::vector<double> ones(cols.size(), 1.0);
  auto G = pydd::csr_to_spm(pydd::Array<double, 1>::borrow(ones.data(), {int64_t(ones.size())}),
                            pydd::Array<int64_t, 1>::borrow(cols.data(), {int64_t(cols.size())}),
                            pydd::Array<int64_t, 1>::borrow(indptr.data(), {5}), 4);
  report("triangles(G)", double(graph::triangles(G)), 1);

  // Kernel errors arrive as pydd::Error with the Python exception's kind.
  try {
    numeric::gcd(1, 0);
    std::vector<double> empty_rows;
    auto E = pydd::Array<double, 2>::borrow(empty_rows.data(), {0, d});
    kmeans::update_centers(E, labels, -1);
    std::printf("  expected an error for a negative dimension\n");
    ++failures;
  } catch (const pydd::Error& e) {
    std::printf("  %-28s pydd::Error: %s\n", "zeros((-1, d))", e.what());
  }
  return failures ? 1 : 0;
}
