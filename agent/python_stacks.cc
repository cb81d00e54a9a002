#include "agent/python_stacks.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/utf8.h"

namespace meridian {
namespace {

constexpr absl::string_view kFilePrefix = "/memfd:meridian-python-stacks-";
constexpr size_t kMaxDumpBytes = size_t{1} << 20;
constexpr size_t kMaxFrameBytes = 512;

// A traced process's dump file, open here.
struct DumpFile {
  int fd = -1;
  int signal = 0;
};

// The signal a link of /proc/PID/fd names ("/memfd:meridian-python-stacks-
// 41 (deleted)"), if it is a dump file's and the signal real-time.
std::optional<int> DumpSignal(absl::string_view link) {
  if (!absl::ConsumePrefix(&link, kFilePrefix) ||
      !absl::ConsumeSuffix(&link, " (deleted)")) {
    return std::nullopt;
  }
  int signal = 0;
  if (!absl::SimpleAtoi(link, &signal) || signal < SIGRTMIN ||
      signal > SIGRTMAX) {
    return std::nullopt;
  }
  return signal;
}

// The process's dump file, if it registered one.
absl::StatusOr<std::optional<DumpFile>> FindDumpFile(pid_t pid) {
  const std::string dir = absl::StrCat("/proc/", pid, "/fd");
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "cannot list process ", pid, "'s files (", dir, "): ", strerror(errno),
        errno == EACCES ? " (another user's process)" : ""));
  }
  std::optional<DumpFile> found;
  while (const dirent* entry = readdir(fds)) {
    const std::string path = absl::StrCat(dir, "/", entry->d_name);
    char link[256];
    const ssize_t n = readlink(path.c_str(), link, sizeof(link));
    if (n <= 0 || n == sizeof(link)) continue;
    const std::optional<int> signal = DumpSignal({link, size_t(n)});
    if (!signal) continue;
    // Checked before it is opened (it could be a FIFO or a device by now)
    // and again once open (it could have been swapped in between).
    struct stat before, opened;
    if (stat(path.c_str(), &before) != 0 || !S_ISREG(before.st_mode)) continue;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    if (fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) ||
        opened.st_ino != before.st_ino || opened.st_dev != before.st_dev) {
      close(fd);
      continue;
    }
    found = DumpFile{fd, *signal};
    break;
  }
  closedir(fds);
  return found;
}

// Whether `signal` is set in the mask on /proc/PID/task/TID/status's line
// `field` ("SigPnd", "SigBlk"); nullopt: the thread is gone.
std::optional<bool> MaskHas(const std::string& status, absl::string_view field,
                            int signal) {
  const size_t at = status.find(absl::StrCat("\n", field, ":\t"));
  if (at == std::string::npos) return std::nullopt;
  const size_t from = at + field.size() + 3;
  const size_t end = status.find('\n', from);
  uint64_t mask = 0;
  if (!absl::SimpleHexAtoi(status.substr(from, end - from), &mask)) {
    return std::nullopt;
  }
  return (mask >> (signal - 1)) & 1;
}

off_t FileSize(int fd) {
  struct stat now;
  return fstat(fd, &now) == 0 ? now.st_size : -1;
}

// Waits until the thread has handled `signal` and the file has grown past
// `size` (at most a second); the size then.
absl::StatusOr<off_t> AwaitDump(pid_t pid, pid_t tid, const DumpFile& file,
                                off_t size) {
  const std::string status_path =
      absl::StrCat("/proc/", pid, "/task/", tid, "/status");
  const absl::Time deadline = absl::Now() + absl::Seconds(1);
  for (;;) {
    std::ifstream in(status_path);
    const std::string status((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    const std::optional<bool> pending = MaskHas(status, "SigPnd", file.signal);
    const std::optional<bool> blocked = MaskHas(status, "SigBlk", file.signal);
    if (!pending || !blocked) {
      return absl::NotFoundError(absl::StrCat("thread ", tid, " is gone"));
    }
    const off_t now = FileSize(file.fd);
    if (!*pending && !*blocked && now > size) return now;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("thread ", tid, " did not answer signal ", file.signal,
                       " in 1 s", *pending ? " (it blocks it)" : ""));
    }
    absl::SleepFor(absl::Milliseconds(2));
  }
}

}  // namespace

absl::StatusOr<std::vector<std::string>> PythonStack(pid_t pid, pid_t tid,
                                                     int max_frames) {
  absl::StatusOr<std::optional<DumpFile>> found = FindDumpFile(pid);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return std::vector<std::string>{};
  const DumpFile file = **found;
  const off_t size = FileSize(file.fd);
  const absl::StatusOr<off_t> grown =
      size >= 0 && syscall(SYS_tgkill, pid, tid, file.signal) == 0
          ? AwaitDump(pid, tid, file, size)
          : absl::UnavailableError(absl::StrCat("cannot signal thread ", tid,
                                                " of process ", pid, ": ",
                                                strerror(errno)));
  std::string dump;
  if (grown.ok()) {
    dump.resize(std::min<size_t>(*grown - size, kMaxDumpBytes));
    const ssize_t n = pread(file.fd, dump.data(), dump.size(), size);
    dump.resize(n > 0 ? size_t(n) : 0);
  }
  close(file.fd);
  if (!grown.ok()) return grown.status();
  return ParseFaulthandlerDump(dump, max_frames);
}

std::vector<std::string> ParseFaulthandlerDump(std::string_view text,
                                               int max_frames) {
  absl::string_view dump(text.data(), text.size());
  std::vector<std::string> frames;
  bool current = false;  // in the "Current thread" block
  while (!dump.empty() && static_cast<int>(frames.size()) < max_frames) {
    const size_t end = std::min(dump.find('\n'), dump.size());
    absl::string_view line = dump.substr(0, end);
    dump.remove_prefix(std::min(end + 1, dump.size()));
    if (absl::StartsWith(line, "Current thread ")) {
      current = true;
      continue;
    }
    if (!current) continue;
    // `  File "PATH", line N in FUNCTION`; anything else ends the block.
    if (!absl::ConsumePrefix(&line, "  File \"")) break;
    const size_t at = line.rfind("\", line ");
    if (at == absl::string_view::npos) break;
    const absl::string_view path = line.substr(0, at);
    line.remove_prefix(at + 8);
    const size_t in = line.find(" in ");
    if (in == absl::string_view::npos) break;
    std::string frame = absl::StrCat(line.substr(in + 4), " (", path, ":",
                                     line.substr(0, in), ")");
    frame = RepairUtf8(frame);
    frame.resize(Utf8Prefix(frame, kMaxFrameBytes));
    frames.push_back(std::move(frame));
  }
  return frames;
}

}  // namespace meridian
