// pydd::List, Dict, Heap and KVHeap against Python's list, dict and heapq.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "pydd/array.h"
#include "pydd/containers.h"

using pydd::Dict;
using pydd::Error;
using pydd::ErrorKind;
using pydd::Heap;
using pydd::KVHeap;
using pydd::List;

namespace {

// Runs f, expecting a pydd::Error of `kind` with exactly `message`.
template <class F>
void expect_error(F f, ErrorKind kind, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error, expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

template <class T>
std::vector<T> to_vector(const List<T>& l) {
  std::vector<T> out;
  for (T x : l) out.push_back(x);
  return out;
}

}  // namespace

TEST(List, AppendIndexPop) {
  List<int64_t> l;
  EXPECT_EQ(l.size(), 0);
  for (int64_t i = 0; i < 100; ++i) l.append(i * i);
  EXPECT_EQ(l.size(), 100);
  EXPECT_EQ(l[3], 9);
  EXPECT_EQ(l[-1], 99 * 99);
  EXPECT_EQ(l[-100], 0);
  l[5] += 1;
  EXPECT_EQ(l[5], 26);
  EXPECT_EQ(l.pop(), 99 * 99);
  EXPECT_EQ(l.pop(0), 0);
  EXPECT_EQ(l.pop(-1), 98 * 98);
  EXPECT_EQ(l.size(), 97);
  EXPECT_EQ(l[0], 1);
  EXPECT_TRUE(l.contains(26));
  EXPECT_FALSE(l.contains(25));
  expect_error([&] { l[97]; }, ErrorKind::IndexError, "list index out of range");
  expect_error([&] { l[-98]; }, ErrorKind::IndexError, "list index out of range");
  expect_error([&] { l.pop(97); }, ErrorKind::IndexError, "pop index out of range");
  List<double> e;
  expect_error([&] { e.pop(); }, ErrorKind::IndexError, "pop from empty list");
  expect_error([&] { e.pop(0); }, ErrorKind::IndexError, "pop from empty list");
}

TEST(List, SharedByCopies) {
  List<double> a{1.0, 2.0};
  List<double> b = a;  // b = a: the same list
  b.append(3.0);
  EXPECT_EQ(a.size(), 3);
  EXPECT_TRUE(a.is(b));
  List<double> c = a.copy();
  c.append(4.0);
  EXPECT_EQ(a.size(), 3);
  EXPECT_FALSE(a.is(c));
  EXPECT_EQ(to_vector(c), (std::vector<double>{1, 2, 3, 4}));
}

TEST(List, BoolElementsAreReferences) {
  List<bool> l{true, false};
  bool& r = l[1];
  r = true;
  EXPECT_TRUE(l[1]);
  EXPECT_EQ(l.data()[0], true);
}

TEST(List, InsertClampsLikePython) {
  List<int32_t> l{1, 2, 3};
  l.insert(0, 0);
  l.insert(100, 9);
  l.insert(-1, 8);
  l.insert(-100, -1);
  EXPECT_EQ(to_vector(l), (std::vector<int32_t>{-1, 0, 1, 2, 3, 8, 9}));
}

TEST(List, ExtendWithItself) {
  List<int64_t> l{1, 2};
  l.extend(l);
  EXPECT_EQ(to_vector(l), (std::vector<int64_t>{1, 2, 1, 2}));
}

TEST(List, IterationSeesAppends) {
  // for x in l: if x < 4: l.append(x + 1)  -> visits 0..4
  List<int64_t> l{0};
  std::vector<int64_t> seen;
  for (int64_t x : l) {
    seen.push_back(x);
    if (x < 4) l.append(x + 1);  // may reallocate: the loop must not hold a pointer
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(List, OfArraysSharesTheArrays) {
  List<pydd::Array<double, 1>> l;
  auto a = pydd::Array<double, 1>::zeros({3});
  l.append(a);
  for (int i = 0; i < 20; ++i) l.append(pydd::Array<double, 1>::ones({2}));  // moves elements on growth
  l[0](1) = 5.0;
  EXPECT_EQ(a(1), 5.0);
  EXPECT_EQ(a.owner()->refs.load(), 2);
  l.pop(0);
  EXPECT_EQ(a.owner()->refs.load(), 1);
  l.clear();
  EXPECT_EQ(l.size(), 0);
}

TEST(Dict, InsertionOrderAndUpdate) {
  Dict<int64_t, double> d;
  d.set(5, 1.0);
  d.set(-3, 2.0);
  d.set(7, 3.0);
  d.set(5, 4.0);  // keeps its position
  std::vector<int64_t> keys;
  for (int64_t k : d) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<int64_t>{5, -3, 7}));
  EXPECT_EQ(d.at(5), 4.0);
  d.ref(7) += 0.5;
  EXPECT_EQ(d.at(7), 3.5);
  d.erase(5);
  d.set(5, 9.0);  // re-inserted: now last
  std::vector<std::pair<int64_t, double>> items;
  for (auto kv : d.items()) items.push_back(kv);
  EXPECT_EQ(items, (std::vector<std::pair<int64_t, double>>{{-3, 2.0}, {7, 3.5}, {5, 9.0}}));
  std::vector<double> values;
  for (double v : d.values()) values.push_back(v);
  EXPECT_EQ(values, (std::vector<double>{2.0, 3.5, 9.0}));
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.get(100, -1.0), -1.0);
  EXPECT_EQ(d.get(7, -1.0), 3.5);
  EXPECT_EQ(d.pop(100, 0.25), 0.25);
  EXPECT_EQ(d.pop(-3), 2.0);
  EXPECT_FALSE(d.contains(-3));
  d.setdefault(11, 1.0) += 1.0;
  EXPECT_EQ(d.at(11), 2.0);
  Dict<int64_t, double> alias = d;
  alias.clear();
  EXPECT_EQ(d.size(), 0);
}

TEST(Dict, KeyErrorShowsTheKeyRepr) {
  Dict<int64_t, int64_t> di{{1, 2}};
  expect_error([&] { di.at(-42); }, ErrorKind::KeyError, "-42");
  expect_error([&] { di.ref(3) += 1; }, ErrorKind::KeyError, "3");
  expect_error([&] { di.erase(3); }, ErrorKind::KeyError, "3");
  Dict<double, int64_t> dd;
  expect_error([&] { dd.at(0.1); }, ErrorKind::KeyError, "0.1");
  expect_error([&] { dd.at(1e16); }, ErrorKind::KeyError, "1e+16");
  expect_error([&] { dd.at(2.0); }, ErrorKind::KeyError, "2.0");
  Dict<bool, int64_t> db;
  expect_error([&] { db.at(true); }, ErrorKind::KeyError, "True");
  Dict<std::tuple<int64_t, double>, int64_t> dt;
  expect_error([&] { dt.at({1, 2.5}); }, ErrorKind::KeyError, "(1, 2.5)");
  dt.set({1, 2.5}, 7);
  EXPECT_EQ(dt.at({1, 2.5}), 7);
}

TEST(Dict, FloatKeys) {
  Dict<double, int64_t> d;
  d.set(0.0, 1);
  d.set(-0.0, 2);  // the same key, as in Python
  EXPECT_EQ(d.size(), 1);
  EXPECT_EQ(d.at(0.0), 2);
  // NaN is never equal to itself: each store adds an entry, lookups miss.
  d.set(NAN, 3);
  d.set(NAN, 4);
  EXPECT_EQ(d.size(), 3);
  EXPECT_FALSE(d.contains(NAN));
}

TEST(Dict, ChangingSizeDuringIterationRaises) {
  Dict<int32_t, int32_t> d{{1, 1}, {2, 2}};
  expect_error(
      [&] {
        for (int32_t k : d) d.set(k + 10, k);
      },
      ErrorKind::RuntimeError, "dictionary changed size during iteration");
  // Assigning to existing keys is fine.
  Dict<int32_t, int32_t> e{{1, 1}, {2, 2}};
  for (auto kv : e.items()) e.set(kv.first, kv.second * 10);
  EXPECT_EQ(e.at(2), 20);
}

TEST(Dict, MatchesAModelUnderRandomUpdates) {
  // Inserts and deletes with many collisions and rebuilds, checked against
  // std::map for contents and against an order list for insertion order.
  Dict<int64_t, int64_t> d;
  std::map<int64_t, int64_t> model;
  std::vector<int64_t> order;
  std::mt19937_64 rng(42);
  for (int step = 0; step < 20000; ++step) {
    const int64_t k = static_cast<int64_t>(rng() % 600) * 1024;  // equal low bits
    if (rng() % 3 == 0) {
      if (model.count(k)) {
        EXPECT_EQ(d.pop(k), model[k]);
        model.erase(k);
        order.erase(std::find(order.begin(), order.end(), k));
      } else {
        EXPECT_FALSE(d.contains(k));
      }
    } else {
      if (!model.count(k)) order.push_back(k);
      model[k] = step;
      d.set(k, step);
    }
  }
  ASSERT_EQ(d.size(), static_cast<int64_t>(model.size()));
  std::vector<int64_t> keys;
  for (auto kv : d.items()) {
    keys.push_back(kv.first);
    EXPECT_EQ(kv.second, model[kv.first]);
  }
  EXPECT_EQ(keys, order);
}

TEST(Dict, OfLists) {
  // d.setdefault(k, []).append(x): the adjacency-list idiom.
  Dict<int64_t, List<int64_t>> adj;
  for (int64_t e = 0; e < 10; ++e) adj.setdefault(e % 3, List<int64_t>()).append(e);
  EXPECT_EQ(to_vector(adj.at(1)), (std::vector<int64_t>{1, 4, 7}));
}

TEST(Heap, MatchesHeapq) {
  // The same pseudo-random pushes and pops as this Python, with duplicates:
  //   x = 12345; for step in range(40): x = (x*1103515245+12345) % 2**31
  //   heappop(h) if step % 3 == 2 else heappush(h, (x >> 8) % 10)
  Heap<int64_t> h;
  std::vector<int64_t> pops;
  uint64_t x = 12345;
  for (int step = 0; step < 40; ++step) {
    x = (x * 1103515245 + 12345) % (1ULL << 31);
    if (step % 3 == 2)
      pops.push_back(h.pop());
    else
      h.push(static_cast<int64_t>((x >> 8) % 10));
  }
  EXPECT_EQ(pops, (std::vector<int64_t>{0, 0, 3, 5, 6, 1, 5, 0, 2, 4, 3, 4, 5}));
  const std::vector<int64_t> layout{5, 6, 6, 7, 7, 6, 8, 7, 8, 8, 8, 8, 8, 8};
  ASSERT_EQ(h.size(), static_cast<int64_t>(layout.size()));
  EXPECT_EQ(std::vector<int64_t>(h.data(), h.data() + h.size()), layout);
  EXPECT_EQ(h.peek(), 5);
  Heap<double> e;
  expect_error([&] { e.pop(); }, ErrorKind::IndexError, "index out of range");
  expect_error([&] { e.peek(); }, ErrorKind::IndexError, "list index out of range");
}

TEST(KVHeap, ComparesAsTuples) {
  // x = 7; for step in range(30): x = ...; heappop(h) if step % 4 == 3
  //   else heappush(h, ((x >> 8) % 3, (x >> 12) % 5))
  KVHeap<int64_t, int64_t> h;
  uint64_t x = 7;
  for (int step = 0; step < 30; ++step) {
    x = (x * 1103515245 + 12345) % (1ULL << 31);
    if (step % 4 == 3)
      h.pop();
    else
      h.push(static_cast<int64_t>((x >> 8) % 3), static_cast<int64_t>((x >> 12) % 5));
  }
  using Entry = std::tuple<int64_t, int64_t>;
  const std::vector<Entry> layout{{0, 3}, {0, 4}, {0, 4}, {1, 3}, {1, 0}, {2, 0},
                                                         {1, 0}, {2, 3}, {2, 2}, {2, 3}, {1, 3}, {2, 1},
                                                         {2, 3}, {2, 3}, {1, 0}, {2, 4}};
  ASSERT_EQ(h.size(), static_cast<int64_t>(layout.size()));
  EXPECT_EQ(std::vector<Entry>(h.data(), h.data() + h.size()), layout);
  EXPECT_EQ(h.peek(), (Entry{0, 3}));
  Entry prev{-1, -1};
  while (h.size() > 0) {
    auto t = h.pop();
    EXPECT_LE(prev, t);
    prev = t;
  }
}

TEST(KVHeap, NanKeysDoNotBreakIt) {
  KVHeap<double, int64_t> h;
  h.push(2.0, 1);
  h.push(NAN, 2);
  h.push(1.0, 3);
  h.push(NAN, 0);
  EXPECT_EQ(h.size(), 4);
  for (int i = 0; i < 4; ++i) h.pop();
  EXPECT_EQ(h.size(), 0);
}
