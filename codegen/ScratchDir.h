// A scratch directory for one build that is removed on every exit path:
// normal return, error return, and a terminating signal (SIGINT, SIGTERM,
// SIGHUP, SIGPIPE, SIGQUIT). On a signal the running compiler child is
// killed too, the directory removed, and the signal re-raised with its
// default action, so the exit status still says what happened.
#pragma once

#include <string>
#include <vector>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"

namespace pydd {

class ScratchDir {
 public:
  /// Creates a fresh directory under the system temporary directory.
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  bool ok() const { return !Path.empty(); }
  llvm::StringRef path() const { return Path; }
  std::string file(llvm::StringRef name) const;

  /// Runs `argv` (argv[0] an executable path) in a process group of its
  /// own, with stdout and stderr to `log`, and waits for it. A signal that
  /// arrives meanwhile is passed on to that group (the compiler driver and
  /// its cc1plus/as/ld children) before the directory is removed. Returns
  /// the exit status, 128 + N after signal N, or -1 if it could not start
  /// (`message` says why).
  int execute(const std::vector<std::string>& argv, const std::string& log, std::string& message) const;
  /// Runs the commands at the same time, each as execute does (its output
  /// to logs[k]), and waits for all; at most 16. Returns their statuses.
  std::vector<int> executeAll(const std::vector<std::vector<std::string>>& commands,
                              const std::vector<std::string>& logs, std::vector<std::string>& messages) const;

 private:
  llvm::SmallString<256> Path;
};

}  // namespace pydd
