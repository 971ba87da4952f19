// pydd runtime: what the loops the emitter runs in chunks rely on (a loop
// whose test or guard goes either way at random; see the emitter's
// testsFirstLoop and selectsFirstLoop).
//
// Such a chunk first evaluates its test for every index into a bool array,
// in a loop with no branch that the C++ compiler vectorizes, then turns the
// array into the list of indices whose test held (keep_indices), then runs
// the body for those. Keeping the indices one at a time (`kept[n] = i; n +=
// test`) was scalar, about 3.5 cycles an element, and made up a fifth of
// bigCLAM's time.
#pragma once

#include <cstdint>
#include <cstring>

namespace pydd {

/// The indices a chunk holds, with room for keep_indices' last whole group
/// of 8 writing past the count.
inline constexpr int64_t kIndexChunk = 1024;
inline constexpr int64_t kKeptIndices = kIndexChunk + 8;

namespace detail {

/// For each 8-bit mask, the positions of its set bits in order (the rest 0).
struct KeepLanes {
  uint8_t lane[256][8];
  constexpr KeepLanes() : lane{} {
    for (int mask = 0; mask < 256; ++mask) {
      int n = 0;
      for (int bit = 0; bit < 8; ++bit)
        if (mask >> bit & 1) lane[mask][n++] = static_cast<uint8_t>(bit);
    }
  }
};
inline constexpr KeepLanes kKeepLanes{};

}  // namespace detail

/// Writes base + j for each j in [0, n) whose test[j] is true, in order,
/// to kept (which has room for n + 7 indices), and returns how many. Eight
/// tests at a time with no branch: their 8 bools (bytes of 0 or 1) become an
/// 8-bit mask by one multiplication, and a table gives the mask's set
/// positions, all 8 of which are written (those past the count are
/// overwritten by the next group, or ignored). Inline on purpose: compiled
/// once into the runtime library, the call in the middle of a chunked loop
/// made g++ keep bigCLAM's accumulators, which live across it, in memory
/// (every xmm register is caller-saved), and the kernel ran 1.35x slower.
inline int64_t keep_indices(const bool* test, int64_t n, int64_t base, int64_t* __restrict kept) {
  int64_t count = 0, j = 0;
  for (; j + 8 <= n; j += 8) {
    uint64_t bytes;
    std::memcpy(&bytes, test + j, sizeof bytes);
    // Byte k's bit (bit 8k) lands on bit 56 + k of the product and no two
    // partial products share a bit, so nothing carries into the top byte.
    const unsigned mask = static_cast<unsigned>((bytes * 0x0102040810204080ull) >> 56);
    const uint8_t* lane = detail::kKeepLanes.lane[mask];
    for (int k = 0; k < 8; ++k) kept[count + k] = base + j + lane[k];
    count += __builtin_popcount(mask);
  }
  for (; j < n; ++j) {
    kept[count] = base + j;
    count += test[j];
  }
  return count;
}

}  // namespace pydd
