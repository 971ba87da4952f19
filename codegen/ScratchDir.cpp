#include "codegen/ScratchDir.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace pydd {
namespace {

// What the signal handler cleans up. pyddc runs one build at a time on one
// thread, so one slot is enough; a second ScratchDir while one is active
// only loses the signal-time cleanup for itself (its destructor still runs).
char ActivePath[PATH_MAX];
// The compilers running now (executeAll runs several at once).
constexpr size_t kMaxChildren = 16;
volatile sig_atomic_t ActiveChildren[kMaxChildren] = {};
bool Installed = false;

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};
struct sigaction Previous[sizeof(kSignals) / sizeof(kSignals[0])];

/// Removes `name` (under the directory `parent`) and everything in it,
/// with system calls that are safe in a signal handler: no allocation, no
/// stdio. A pass that unlinks something rereads the directory, since
/// unlinking during getdents64 may skip entries.
void removeTree(int parent, const char* name, int depth) {
  if (depth > 8) return;
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buf[4096];
    for (bool removed = true; removed;) {
      removed = false;
      lseek(fd, 0, SEEK_SET);
      for (ssize_t n; (n = getdents64(fd, buf, sizeof buf)) > 0;) {
        for (ssize_t off = 0; off < n;) {
          auto* d = reinterpret_cast<struct dirent64*>(buf + off);
          off += d->d_reclen;
          if (!std::strcmp(d->d_name, ".") || !std::strcmp(d->d_name, "..")) continue;
          if (unlinkat(fd, d->d_name, 0) != 0) removeTree(fd, d->d_name, depth + 1);
          removed = true;
        }
      }
    }
    close(fd);
  }
  unlinkat(parent, name, AT_REMOVEDIR);
}

void onSignal(int sig) {
  for (size_t k = 0; k < kMaxChildren; ++k) {
    pid_t child = ActiveChildren[k];
    // The whole group: the driver's cc1plus, as and ld write here too.
    if (child > 0) kill(-child, sig == SIGPIPE ? SIGTERM : sig);
  }
  for (size_t k = 0; k < kMaxChildren; ++k) {
    pid_t child = ActiveChildren[k];
    if (child > 0) waitpid(child, nullptr, 0);  // it must stop writing into the directory first
  }
  if (ActivePath[0]) removeTree(AT_FDCWD, ActivePath, 0);
  // SA_RESETHAND restored the default action: die of the same signal.
  raise(sig);
}

void install() {
  if (Installed) return;
  Installed = true;
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = onSignal;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(kSignals[i], nullptr, &Previous[i]);
    // A signal the caller ignores (nohup) stays ignored.
    if (Previous[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &sa, nullptr);
  }
}

void uninstall() {
  if (!Installed) return;
  Installed = false;
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i)
    if (Previous[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &Previous[i], nullptr);
}

}  // namespace

ScratchDir::ScratchDir() {
  if (llvm::sys::fs::createUniqueDirectory("pyddc", Path)) {
    Path.clear();
    return;
  }
  if (ActivePath[0] || Path.size() >= sizeof ActivePath) return;
  std::memcpy(ActivePath, Path.c_str(), Path.size() + 1);
  install();
}

ScratchDir::~ScratchDir() {
  if (Path.empty()) return;
  if (Installed && Path.str() == ActivePath) {
    uninstall();
    ActivePath[0] = '\0';
  }
  llvm::sys::fs::remove_directories(Path);
}

std::string ScratchDir::file(llvm::StringRef name) const {
  llvm::SmallString<256> p(Path);
  llvm::sys::path::append(p, name);
  return std::string(p);
}

int ScratchDir::execute(const std::vector<std::string>& argv, const std::string& log, std::string& message) const {
  std::vector<std::string> messages;
  int status = executeAll({argv}, {log}, messages)[0];
  message = messages[0];
  return status;
}

std::vector<int> ScratchDir::executeAll(const std::vector<std::vector<std::string>>& commands,
                                        const std::vector<std::string>& logs,
                                        std::vector<std::string>& messages) const {
  std::vector<int> statuses(commands.size(), -1);
  messages.assign(commands.size(), "");
  std::vector<pid_t> pids(commands.size(), 0);
  for (size_t k = 0; k < commands.size() && k < kMaxChildren; ++k) {
    std::vector<char*> args;
    for (auto& a : commands[k]) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, logs[k].c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int err = posix_spawn(&pids[k], args[0], &files, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
      messages[k] = std::strerror(err);
      pids[k] = 0;
      break;  // the ones started are waited for below
    }
    ActiveChildren[k] = pids[k];
  }
  for (size_t k = 0; k < pids.size(); ++k) {
    if (!pids[k]) continue;
    int status = 0;
    while (waitpid(pids[k], &status, 0) < 0 && errno == EINTR) {
    }
    ActiveChildren[k] = 0;
    statuses[k] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return statuses;
}

}  // namespace pydd
