// pydd runtime: the small pieces of library calls that are neither array
// kernels nor container methods — shapes as values, and Python's builtins
// (sum, min, any, in) on lists and dicts.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <cstdint>
#include <tuple>
#include <utility>

#include "pydd/array.h"
#include "pydd/containers.h"
#include "pydd/errors.h"

namespace pydd {

// ---- shapes ------------------------------------------------------------------

/// A shape argument as the allocation functions take it: an integer, a
/// tuple of integers, or the shape of an array (zeros_like).
inline std::array<int64_t, 1> shape_of(int64_t n) { return {n}; }
template <class... I>
std::array<int64_t, sizeof...(I)> shape_of(const std::tuple<I...>& t) {
  return std::apply([](auto... n) { return std::array<int64_t, sizeof...(I)>{static_cast<int64_t>(n)...}; }, t);
}
template <class T, int N>
std::array<int64_t, N> shape_of(const Array<T, N>& a) {
  std::array<int64_t, N> s;
  for (int k = 0; k < N; ++k) s[k] = a.shape(k);
  return s;
}

namespace detail {
template <class T, int N, size_t... K>
auto shape_tuple(const Array<T, N>& a, std::index_sequence<K...>) {
  return std::make_tuple(a.shape(static_cast<int>(K))...);
}
}  // namespace detail

/// `A.shape`: the extents as a tuple of int64.
template <class T, int N>
auto shape_tuple(const Array<T, N>& a) {
  return detail::shape_tuple(a, std::make_index_sequence<N>());
}

namespace detail {
template <class L, size_t... K>
auto list_shape(const L& l, std::index_sequence<K...>) {
  return std::make_tuple(static_cast<int64_t>(l[static_cast<int64_t>(K)])...);
}
}  // namespace detail

/// shape_from_list<N>(l): a list of integers as an N-tuple shape, for an
/// allocation whose rank an annotation gives; ValueError for another length.
template <int N, class L>
auto shape_from_list(const L& l) {
  if (l.size() != N) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "a shape list of length %lld for an array declared with rank %d",
                  static_cast<long long>(l.size()), N);
    throw Error(ErrorKind::ValueError, msg);
  }
  return detail::list_shape(l, std::make_index_sequence<N>());
}

namespace detail {
template <class V, size_t... K>
auto elements(const V& v, std::index_sequence<K...>) {
  return std::make_tuple(v(static_cast<int64_t>(K))...);
}
}  // namespace detail

/// unpack<N>(a): `x, y, z = a` for a 1-D array: its N elements, with
/// Python's ValueError (3.11's wording) when a has another length.
template <int N, class T>
auto unpack(const Array<T, 1>& a) {
  const int64_t n = a.shape(0);
  if (n != N) {
    char msg[120];
    if (n > N) std::snprintf(msg, sizeof msg, "too many values to unpack (expected %d)", N);
    else std::snprintf(msg, sizeof msg, "not enough values to unpack (expected %d, got %lld)", N, static_cast<long long>(n));
    throw Error(ErrorKind::ValueError, msg);
  }
  return detail::elements(a.view(), std::make_index_sequence<N>());
}

// ---- Python builtins on lists ------------------------------------------------------

template <class R, class L>
R list_sum(const L& l) {
  R s = R(0);
  for (int64_t i = 0; i < l.size(); ++i) s = static_cast<R>(s + static_cast<R>(l[i]));
  return s;
}

/// min/max of a list: Python's, which keeps the first of equal elements
/// and compares with `<` (so a NaN is only replaced by a later smaller value).
template <class R, class L, class Better>
R list_extreme(const L& l, const char* name, Better better) {
  if (l.size() == 0) throw Error(ErrorKind::ValueError, (std::string(name) + "() arg is an empty sequence").c_str());
  R best = l[0];
  for (int64_t i = 1; i < l.size(); ++i)
    if (better(static_cast<R>(l[i]), best)) best = l[i];
  return best;
}
template <class R, class L>
R list_min(const L& l) {
  return list_extreme<R>(l, "min", [](R a, R b) { return a < b; });
}
template <class R, class L>
R list_max(const L& l) {
  return list_extreme<R>(l, "max", [](R a, R b) { return a > b; });
}

template <class L>
bool list_any(const L& l) {
  for (int64_t i = 0; i < l.size(); ++i)
    if (l[i]) return true;
  return false;
}
template <class L>
bool list_all(const L& l) {
  for (int64_t i = 0; i < l.size(); ++i)
    if (!l[i]) return false;
  return true;
}

/// `x in l`: Python compares by value across kinds (2.0 == 2).
template <class L, class X>
bool list_contains(const L& l, X x) {
  for (int64_t i = 0; i < l.size(); ++i)
    if (l[i] == x) return true;
  return false;
}

// ---- dicts ----------------------------------------------------------------------

/// `x in d`: a probe that no key can equal (2.5 for int keys) is absent,
/// not converted to a nearby key.
template <class K, class V, class X>
bool dict_contains(const Dict<K, V>& d, X x) {
  if (static_cast<X>(static_cast<K>(x)) != x) return false;
  return d.contains(static_cast<K>(x));
}

template <class K, class V, class X>
V dict_get(const Dict<K, V>& d, X x, V dflt) {
  if (static_cast<X>(static_cast<K>(x)) != x) return dflt;
  return d.get(static_cast<K>(x), dflt);
}

template <class K, class V>
List<K> dict_keys(const Dict<K, V>& d) {
  List<K> out;
  for (const K& k : d.keys()) out.append(k);
  return out;
}
template <class K, class V>
List<V> dict_values(const Dict<K, V>& d) {
  List<V> out;
  for (const K& k : d.keys()) out.append(d.at(k));
  return out;
}
template <class K, class V>
List<std::tuple<K, V>> dict_items(const Dict<K, V>& d) {
  List<std::tuple<K, V>> out;
  for (const K& k : d.keys()) out.append(std::tuple<K, V>(k, d.at(k)));
  return out;
}

}  // namespace pydd
