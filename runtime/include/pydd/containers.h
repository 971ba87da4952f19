// pydd runtime: Python's list, dict and heapq for kernels.
//
// Every container is a handle to a shared object, as Python variables are
// references: copying a List shares it, so `b = a; b.append(1)` is seen
// through `a`. The handles are cheap to pass by value; their methods are
// const because they never change which object the handle refers to.
//
// Semantics follow CPython where a kernel could tell the difference: list
// iteration sees elements appended during the loop, dicts keep insertion
// order, and Heap/KVHeap sift exactly as heapq.py does, so equal keys come
// out in Python's order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "pydd/errors.h"

namespace pydd {

// Defined in libpydd_runtime.a (print.h); declared here so that this header
// does not depend on print.h, which depends on abi.h, which includes this.
int format_double(double x, char* out);
int format_float(float x, char* out);

namespace detail {

/// A growable array. Not std::vector: List<bool>::operator[] must return a
/// real bool&, which vector<bool> cannot.
template <class T>
class Vec {
 public:
  Vec() = default;
  Vec(const Vec&) = delete;
  Vec& operator=(const Vec&) = delete;
  ~Vec() {
    clear();
    std::free(data_);
  }

  T* data() const { return data_; }
  int64_t size() const { return size_; }
  T& operator[](int64_t i) const { return data_[i]; }

  void reserve(int64_t n) {
    if (n <= cap_) return;
    int64_t cap = cap_ ? cap_ : 4;
    while (cap < n) cap *= 2;
    T* mem = static_cast<T*>(std::malloc(static_cast<size_t>(cap) * sizeof(T)));
    if (!mem) throw Error(ErrorKind::MemoryError, "unable to allocate container memory");
    if constexpr (std::is_trivially_copyable_v<T>) {
      if (size_) std::memcpy(static_cast<void*>(mem), data_, static_cast<size_t>(size_) * sizeof(T));
    } else {
      for (int64_t i = 0; i < size_; ++i) {
        new (mem + i) T(std::move(data_[i]));
        data_[i].~T();
      }
    }
    std::free(data_);
    data_ = mem;
    cap_ = cap;
  }
  // By value: `x` may be an element of this Vec, which reserve() moves.
  void push_back(T x) {
    if (size_ == cap_) reserve(size_ + 1);
    new (data_ + size_) T(std::move(x));
    ++size_;
  }
  T pop_back() {
    T x = std::move(data_[size_ - 1]);
    data_[--size_].~T();
    return x;
  }
  void insert(int64_t i, T x) {
    push_back(std::move(x));
    std::rotate(data_ + i, data_ + size_ - 1, data_ + size_);
  }
  void erase(int64_t i) {
    std::move(data_ + i + 1, data_ + size_, data_ + i);
    pop_back();
  }
  void clear() {
    while (size_ > 0) data_[--size_].~T();
  }

 private:
  T* data_ = nullptr;
  int64_t size_ = 0;
  int64_t cap_ = 0;
};

/// Python's `a < b`: tuples compare at their first unequal member.
template <class T>
bool py_less(const T& a, const T& b);

template <size_t I, class... Ts>
bool tuple_less(const std::tuple<Ts...>& a, const std::tuple<Ts...>& b) {
  if constexpr (I == sizeof...(Ts)) {
    return false;
  } else {
    if (!(std::get<I>(a) == std::get<I>(b))) return py_less(std::get<I>(a), std::get<I>(b));
    return tuple_less<I + 1>(a, b);
  }
}

template <class T>
struct IsTuple : std::false_type {};
template <class... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};

template <class T>
bool py_less(const T& a, const T& b) {
  if constexpr (IsTuple<T>::value)
    return tuple_less<0>(a, b);
  else
    return a < b;
}

/// heapq.py's _siftdown: moves heap[pos] up towards startpos.
template <class T>
void sift_down(const Vec<T>& heap, int64_t startpos, int64_t pos) {
  T newitem = std::move(heap[pos]);
  while (pos > startpos) {
    const int64_t parentpos = (pos - 1) >> 1;
    if (!py_less(newitem, heap[parentpos])) break;
    heap[pos] = std::move(heap[parentpos]);
    pos = parentpos;
  }
  heap[pos] = std::move(newitem);
}

/// heapq.py's _siftup: moves the smaller child up until a leaf, then sifts
/// the item down from there (fewer comparisons than the textbook loop, and
/// the order of equal items depends on it).
template <class T>
void sift_up(const Vec<T>& heap, int64_t pos) {
  const int64_t endpos = heap.size(), startpos = pos;
  T newitem = std::move(heap[pos]);
  int64_t childpos = 2 * pos + 1;
  while (childpos < endpos) {
    const int64_t rightpos = childpos + 1;
    if (rightpos < endpos && !py_less(heap[childpos], heap[rightpos])) childpos = rightpos;
    heap[pos] = std::move(heap[childpos]);
    pos = childpos;
    childpos = 2 * pos + 1;
  }
  heap[pos] = std::move(newitem);
  sift_down(heap, startpos, pos);
}

// ---- dict keys: hashing, equality, repr

inline uint64_t mix(uint64_t x) {  // splitmix64's finalizer: probing needs well spread bits
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <class T>
uint64_t hash_key(const T& k) {
  if constexpr (IsTuple<T>::value) {
    uint64_t h = 0x345678;
    std::apply([&](const auto&... m) { ((h = mix(h ^ hash_key(m))), ...); }, k);
    return h;
  } else if constexpr (std::is_floating_point_v<T>) {
    const double d = k == 0 ? 0.0 : static_cast<double>(k);  // -0.0 is the same key as 0.0
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    return mix(bits);
  } else {
    return mix(static_cast<uint64_t>(static_cast<int64_t>(k)));
  }
}

/// Python's repr of a key, appended to a KeyError message.
struct KeyText {
  char text[160];
  int len = 0;
  void add(const char* s) {
    len += std::snprintf(text + len, sizeof(text) - static_cast<size_t>(len), "%s", s);
    if (len > static_cast<int>(sizeof(text)) - 1) len = sizeof(text) - 1;
  }
};

template <class T>
void key_repr(const T& k, KeyText& out) {
  char buf[40];  // format_double needs 32
  if constexpr (IsTuple<T>::value) {
    out.add("(");
    bool first = true;
    std::apply([&](const auto&... m) { ((out.add(first ? "" : ", "), first = false, key_repr(m, out)), ...); }, k);
    out.add(std::tuple_size_v<T> == 1 ? ",)" : ")");
    return;
  } else if constexpr (std::is_same_v<T, bool>) {
    std::snprintf(buf, sizeof(buf), "%s", k ? "True" : "False");
  } else if constexpr (std::is_same_v<T, double>) {
    format_double(k, buf);
  } else if constexpr (std::is_same_v<T, float>) {
    format_float(k, buf);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(k));
  }
  out.add(buf);
}

template <class T>
[[noreturn]] void throw_key_error(const T& k) {
  KeyText t;
  key_repr(k, t);
  throw Error(ErrorKind::KeyError, t.text);
}

}  // namespace detail

/// Python's list.
template <class T>
class List {
  struct Impl {
    detail::Vec<T> items;
  };

 public:
  using value_type = T;

  /// Iterates as Python does: by index against the current length, so
  /// elements appended inside the loop are visited, and yields values (the
  /// loop variable is a new binding, not an alias of the slot).
  class iterator {
   public:
    struct end_marker {};
    explicit iterator(const Impl* p) : p_(p) {}
    T operator*() const { return p_->items[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(end_marker) const { return i_ < p_->items.size(); }

   private:
    const Impl* p_;
    int64_t i_ = 0;
  };

  List() : p_(std::make_shared<Impl>()) {}
  List(std::initializer_list<T> xs) : List() {
    p_->items.reserve(static_cast<int64_t>(xs.size()));
    for (const T& x : xs) p_->items.push_back(x);
  }

  int64_t size() const { return p_->items.size(); }
  T* data() const { return p_->items.data(); }
  iterator begin() const { return iterator(p_.get()); }
  typename iterator::end_marker end() const { return {}; }

  /// Python indexing: negative wraps; always range-checked.
  T& operator[](int64_t i) const {
    const int64_t n = size(), j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) throw Error(ErrorKind::IndexError, "list index out of range");
    return p_->items[j];
  }
  void append(T x) const { p_->items.push_back(std::move(x)); }
  void reserve(int64_t n) const { p_->items.reserve(n); }
  /// list.insert: the index is clamped to [0, len], never an error.
  void insert(int64_t i, T x) const {
    const int64_t n = size();
    if (i < 0) i = std::max<int64_t>(i + n, 0);
    p_->items.insert(std::min(i, n), std::move(x));
  }
  void extend(const List& other) const {
    const int64_t n = other.size();  // other may be this list: take its length first
    p_->items.reserve(size() + n);
    for (int64_t i = 0; i < n; ++i) p_->items.push_back(other.p_->items[i]);
  }
  T pop() const {
    if (size() == 0) throw Error(ErrorKind::IndexError, "pop from empty list");
    return p_->items.pop_back();
  }
  T pop(int64_t i) const {
    const int64_t n = size(), j = i < 0 ? i + n : i;
    if (n == 0) throw Error(ErrorKind::IndexError, "pop from empty list");
    if (j < 0 || j >= n) throw Error(ErrorKind::IndexError, "pop index out of range");
    T x = std::move(p_->items[j]);
    p_->items.erase(j);
    return x;
  }
  void clear() const { p_->items.clear(); }
  bool contains(const T& x) const {
    for (int64_t i = 0; i < size(); ++i)
      if (p_->items[i] == x) return true;
    return false;
  }
  /// A new list with the same elements (list.copy(), lst[:]).
  List copy() const {
    List out;
    out.extend(*this);
    return out;
  }
  /// Whether both handles refer to the same list (Python's `is`).
  bool is(const List& o) const { return p_ == o.p_; }

 private:
  std::shared_ptr<Impl> p_;
};

/// Python's dict: insertion-ordered, a compact entry array plus an open
/// addressing index as in CPython. Keys are scalars or tuples of scalars.
template <class K, class V>
class Dict {
  struct Entry {
    K key;
    V value;
    uint64_t hash;
    bool live;
  };
  static constexpr int64_t kEmpty = -1, kDeleted = -2;

  struct Impl {
    detail::Vec<Entry> entries;  // insertion order; erased ones stay until the next rebuild
    std::unique_ptr<int64_t[]> slots;
    uint64_t mask = 0;
    int64_t live = 0;

    // CPython's probe sequence; returns the first slot index where stop(slot) holds.
    template <class Stop>
    uint64_t probe(uint64_t h, Stop stop) const {
      uint64_t i = h & mask;
      for (uint64_t perturb = h; !stop(slots[i]);) {
        perturb >>= 5;
        i = (i * 5 + perturb + 1) & mask;
      }
      return i;
    }
    int64_t find(const K& k, uint64_t h) const {
      if (!slots) return -1;
      return slots[probe(h, [&](int64_t s) {
        return s == kEmpty || (s >= 0 && entries[s].hash == h && entries[s].key == k);
      })];
    }
    void place(int64_t e) { slots[probe(entries[e].hash, [](int64_t s) { return s < 0; })] = e; }
    // Compacts erased entries away and reindexes with room to grow.
    void rebuild() {
      int64_t n = 0;
      for (int64_t e = 0; e < entries.size(); ++e)
        if (entries[e].live) {
          if (n != e) entries[n] = std::move(entries[e]);
          ++n;
        }
      while (entries.size() > n) entries.pop_back();
      uint64_t cap = 8;
      while (cap < static_cast<uint64_t>(live + 1) * 3) cap *= 2;  // a third full: room to grow
      slots.reset(new int64_t[cap]);
      std::fill(slots.get(), slots.get() + cap, kEmpty);
      mask = cap - 1;
      for (int64_t e = 0; e < n; ++e) place(e);
    }
    Entry& insert(K k, V v, uint64_t h) {
      // Slots used (live or deleted) stay below 2/3, so probing ends.
      if (!slots || static_cast<uint64_t>(entries.size() + 1) * 3 > (mask + 1) * 2) rebuild();
      entries.push_back(Entry{std::move(k), std::move(v), h, true});
      place(entries.size() - 1);
      ++live;
      return entries[entries.size() - 1];
    }
    void erase(int64_t e) {
      slots[probe(entries[e].hash, [e](int64_t s) { return s == e; })] = kDeleted;
      entries[e].live = false;
      entries[e].key = K();
      entries[e].value = V();  // drop what it holds now, as Python does
      --live;
    }
  };

  /// Live entries in insertion order, by index (safe if the dict grows);
  /// like Python, changing the dict's size during the loop is an error.
  template <class Get>
  class Range {
   public:
    struct end_marker {};
    class iterator {
     public:
      iterator(const Impl* p) : p_(p), size0_(p->live) { skip(); }
      auto operator*() const { return Get()(p_->entries[i_]); }
      iterator& operator++() {
        ++i_;
        skip();
        return *this;
      }
      bool operator!=(end_marker) const {
        if (p_->live != size0_) throw Error(ErrorKind::RuntimeError, "dictionary changed size during iteration");
        return i_ < p_->entries.size();
      }

     private:
      void skip() {
        while (i_ < p_->entries.size() && !p_->entries[i_].live) ++i_;
      }
      const Impl* p_;
      int64_t size0_, i_ = 0;
    };
    explicit Range(std::shared_ptr<Impl> p) : p_(std::move(p)) {}
    iterator begin() const { return iterator(p_.get()); }
    end_marker end() const { return {}; }

   private:
    std::shared_ptr<Impl> p_;  // keeps the dict alive for a loop over a temporary
  };
  struct GetKey {
    K operator()(const Entry& e) const { return e.key; }
  };
  struct GetValue {
    V operator()(const Entry& e) const { return e.value; }
  };
  struct GetItem {
    std::pair<K, V> operator()(const Entry& e) const { return {e.key, e.value}; }
  };

 public:
  using key_type = K;
  using mapped_type = V;

  Dict() : p_(std::make_shared<Impl>()) {}
  Dict(std::initializer_list<std::pair<K, V>> kvs) : Dict() {
    for (const auto& kv : kvs) set(kv.first, kv.second);
  }

  int64_t size() const { return p_->live; }
  bool contains(const K& k) const { return p_->find(k, detail::hash_key(k)) >= 0; }
  /// d[k] as a value or a target (d[k] += v); KeyError if absent.
  V& at(const K& k) const {
    const int64_t e = p_->find(k, detail::hash_key(k));
    if (e < 0) detail::throw_key_error(k);
    return p_->entries[e].value;
  }
  V& ref(const K& k) const { return at(k); }
  /// d[k] = v: replaces the value in place, keeping the key's position.
  void set(const K& k, V v) const {
    const uint64_t h = detail::hash_key(k);
    const int64_t e = p_->find(k, h);
    if (e >= 0)
      p_->entries[e].value = std::move(v);
    else
      p_->insert(k, std::move(v), h);
  }
  V get(const K& k, V dflt) const {
    const int64_t e = p_->find(k, detail::hash_key(k));
    return e < 0 ? dflt : p_->entries[e].value;
  }
  V& setdefault(const K& k, V dflt) const {
    const uint64_t h = detail::hash_key(k);
    const int64_t e = p_->find(k, h);
    return e >= 0 ? p_->entries[e].value : p_->insert(k, std::move(dflt), h).value;
  }
  /// del d[k]
  void erase(const K& k) const { pop(k); }
  V pop(const K& k) const {
    const int64_t e = p_->find(k, detail::hash_key(k));
    if (e < 0) detail::throw_key_error(k);
    V v = std::move(p_->entries[e].value);
    p_->erase(e);
    return v;
  }
  V pop(const K& k, V dflt) const { return contains(k) ? pop(k) : dflt; }
  void clear() const {
    p_->entries.clear();
    p_->slots.reset();
    p_->live = 0;
  }

  Range<GetKey> keys() const { return Range<GetKey>(p_); }
  Range<GetValue> values() const { return Range<GetValue>(p_); }
  Range<GetItem> items() const { return Range<GetItem>(p_); }
  /// `for k in d` iterates over the keys.
  typename Range<GetKey>::iterator begin() const { return typename Range<GetKey>::iterator(p_.get()); }
  typename Range<GetKey>::end_marker end() const { return {}; }

  bool is(const Dict& o) const { return p_ == o.p_; }

 private:
  std::shared_ptr<Impl> p_;
};

/// A min-heap as heapq keeps one: push is heappush, pop is heappop, peek is
/// heap[0], with heapq's exact sifting.
template <class T>
class Heap {
  struct Impl {
    detail::Vec<T> items;
  };

 public:
  using value_type = T;

  Heap() : p_(std::make_shared<Impl>()) {}

  int64_t size() const { return p_->items.size(); }
  void push(T x) const {
    p_->items.push_back(std::move(x));
    detail::sift_down(p_->items, 0, size() - 1);
  }
  T pop() const {
    if (size() == 0) throw Error(ErrorKind::IndexError, "index out of range");
    T last = p_->items.pop_back();
    if (size() == 0) return last;
    T top = std::move(p_->items[0]);
    p_->items[0] = std::move(last);
    detail::sift_up(p_->items, 0);
    return top;
  }
  T peek() const {
    if (size() == 0) throw Error(ErrorKind::IndexError, "list index out of range");
    return p_->items[0];
  }
  /// The heap's list in heap order (what `list(h)` shows in Python).
  const T* data() const { return p_->items.data(); }
  bool is(const Heap& o) const { return p_ == o.p_; }

 private:
  std::shared_ptr<Impl> p_;
};

/// A heap of (key, value) entries compared as Python tuples: by key, then
/// by value for equal keys.
template <class K, class V>
class KVHeap {
 public:
  using value_type = std::tuple<K, V>;

  int64_t size() const { return h_.size(); }
  void push(K k, V v) const { h_.push(value_type(std::move(k), std::move(v))); }
  value_type pop() const { return h_.pop(); }
  value_type peek() const { return h_.peek(); }
  const value_type* data() const { return h_.data(); }
  bool is(const KVHeap& o) const { return h_.is(o.h_); }

 private:
  Heap<value_type> h_;
};

}  // namespace pydd
