// The compile cache's keys and entries (codegen/BuildCache), without the C++
// compiler: the builder writes a file, and the tests count its calls.
#include "codegen/BuildCache.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace {

namespace fs = llvm::sys::fs;

class TempDir {
 public:
  TempDir() { fs::createUniqueDirectory("build-cache-test", Path); }
  ~TempDir() { fs::remove_directories(Path); }
  std::string operator/(const std::string& name) const {
    llvm::SmallString<256> p(Path);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

 private:
  llvm::SmallString<256> Path;
};

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string keyOf(std::initializer_list<std::pair<const char*, const char*>> parts) {
  pydd::BuildKey key;
  for (auto& [label, data] : parts) key.add(label, data);
  return key.hex();
}

TEST(BuildKey, PartsAreUnambiguous) {
  EXPECT_EQ(keyOf({{"a", "bc"}}), keyOf({{"a", "bc"}}));
  EXPECT_NE(keyOf({{"a", "bc"}}), keyOf({{"ab", "c"}}));
  EXPECT_NE(keyOf({{"a", "b"}, {"c", ""}}), keyOf({{"a", "b"}, {"", "c"}}));
  EXPECT_EQ(keyOf({{"a", "b"}}).size(), 32u);
}

TEST(BuildKey, TreeContentsCoverEveryFile) {
  TempDir dir;
  fs::create_directories(dir / "pydd");
  write(dir / "pydd/runtime.h", "// v1\n");
  write(dir / "pydd/array.h", "// a\n");
  auto treeKey = [&] {
    pydd::BuildKey key;
    key.addTreeContents(dir / "pydd");
    return key.hex();
  };
  std::string before = treeKey();
  EXPECT_EQ(treeKey(), before);
  write(dir / "pydd/array.h", "// b\n");  // a header fix must not reuse old builds
  EXPECT_NE(treeKey(), before);
}

TEST(BuildCache, BuildsOnceThenHits) {
  TempDir dir;
  pydd::BuildCache cache(dir / "cache", 0, false);
  int builds = 0;
  auto build = [&](const std::string& out) {
    ++builds;
    write(out + "/k.so", "module");
    pydd::BuildOutput result;
    result.ok = true;
    return result;
  };
  std::string entry;
  bool hit = true;
  ASSERT_TRUE(cache.lookupOrBuild("k", std::string(32, 'a'), build, entry, hit).ok);
  EXPECT_FALSE(hit);
  EXPECT_TRUE(fs::exists(entry + "/k.so"));
  ASSERT_TRUE(cache.lookupOrBuild("k", std::string(32, 'a'), build, entry, hit).ok);
  EXPECT_TRUE(hit);
  EXPECT_EQ(builds, 1);
  std::string error;
  ASSERT_TRUE(pydd::BuildCache::copyEntry(entry, dir / "out", error)) << error;
  EXPECT_TRUE(fs::exists(dir / "out/k.so"));
}

TEST(BuildCache, FailedBuildLeavesNoEntry) {
  TempDir dir;
  pydd::BuildCache cache(dir / "cache", 0, false);
  auto fail = [&](const std::string& out) {
    write(out + "/half.so", "partial");
    pydd::BuildOutput result;
    result.error = "boom";
    return result;
  };
  std::string entry;
  bool hit = false;
  auto result = cache.lookupOrBuild("k", std::string(32, 'b'), fail, entry, hit);
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.error, "boom");
  EXPECT_FALSE(fs::exists(entry));
  std::error_code ec;
  for (fs::directory_iterator it(dir / "cache", ec), end; it != end && !ec; it.increment(ec))
    ADD_FAILURE() << "left behind: " << it->path();
}

}  // namespace
