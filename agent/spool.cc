#include "agent/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "capture/probe/agent_dir.h"

namespace meridian {
namespace {

constexpr char kMagic[4] = {'M', 'S', 'P', 'L'};
constexpr uint32_t kVersion = 1;
constexpr char kSuffix[] = ".batch";

void Put(std::string* out, const void* data, size_t n) {
  out->append(static_cast<const char*>(data), n);
}

template <typename T>
bool Get(const std::string& in, size_t* at, T* value) {
  if (in.size() - *at < sizeof(T)) return false;
  memcpy(value, in.data() + *at, sizeof(T));
  *at += sizeof(T);
  return true;
}

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

// Makes the directories above `dir` (not `dir` itself).
absl::Status MakeParents(const std::string& dir) {
  for (size_t i = 1; i < dir.size(); ++i) {
    if (dir[i] != '/') continue;
    std::string prefix = dir.substr(0, i);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Errno(absl::StrCat("creating the spool directory ", prefix));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const std::string& dir,
                                                   uint64_t max_bytes) {
  if (absl::Status s = MakeParents(dir); !s.ok()) return s;
  std::string error;
  const int dir_fd = OpenPrivateDir(dir, static_cast<gid_t>(-1), &error);
  if (dir_fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the spool directory ", error));
  }
  std::unique_ptr<Spool> spool(new Spool(dir, dir_fd, max_bytes));
  DIR* d = fdopendir(dup(dir_fd));
  if (d == nullptr) return Errno(absl::StrCat("reading the spool ", dir));
  std::vector<uint64_t> ids;
  while (dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    uint64_t id;
    if (absl::EndsWith(name, ".tmp")) {
      // Left by an agent that died while writing it: never acknowledged as
      // spooled, so its records are still in their rings or resent.
      unlinkat(dir_fd, e->d_name, 0);
    } else if (absl::ConsumeSuffix(&name, kSuffix) &&
               absl::SimpleAtoi(name, &id)) {
      ids.push_back(id);
    }
  }
  closedir(d);
  std::sort(ids.begin(), ids.end());
  absl::MutexLock lock(&spool->mu_);
  for (uint64_t id : ids) {
    const std::string path = spool->PathOf(id);
    std::string data;
    const int fd = openat(dir_fd, spool->NameOf(id).c_str(),
                          O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char buffer[1 << 16];
    for (ssize_t n = 0; fd >= 0;) {
      n = read(fd, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      data.append(buffer, static_cast<size_t>(n));
    }
    if (fd >= 0) close(fd);
    size_t at = 0;
    uint32_t version = 0, count = 0;
    bool ok = data.size() >= 4 && memcmp(data.data(), kMagic, 4) == 0;
    at = 4;
    ok = ok && Get(data, &at, &version) && version == kVersion &&
         Get(data, &at, &count) && count <= 1u << 20;
    std::vector<RingPosition> positions(ok ? count : 0);
    for (uint32_t i = 0; ok && i < count; ++i) {
      ok = Get(data, &at, &positions[i].incarnation) &&
           Get(data, &at, &positions[i].ring) &&
           Get(data, &at, &positions[i].end);
    }
    Entry entry{id, {}};
    ok = ok && entry.batch.ParseFromArray(data.data() + at,
                                          static_cast<int>(data.size() - at));
    if (!ok) {
      renameat(dir_fd, spool->NameOf(id).c_str(), dir_fd,
               (spool->NameOf(id) + ".corrupt").c_str());
      spool->corrupt_.push_back(path);
      continue;
    }
    for (const RingPosition& p : positions) {
      uint64_t& end = spool->positions_[{p.incarnation, p.ring}];
      if (p.end > end) end = p.end;
    }
    spool->sizes_[id] = data.size();
    spool->bytes_ += data.size();
    spool->recovered_.push_back(std::move(entry));
  }
  if (!ids.empty()) spool->next_id_ = ids.back() + 1;
  return spool;
}

Spool::~Spool() { close(dir_fd_); }

std::string Spool::NameOf(uint64_t id) const {
  return absl::StrFormat("%020d%s", id, kSuffix);
}

std::string Spool::PathOf(uint64_t id) const {
  return absl::StrCat(dir_, "/", NameOf(id));
}

absl::StatusOr<uint64_t> Spool::Append(
    const v1::Batch& batch, const std::vector<RingPosition>& positions) {
  std::string data(kMagic, 4);
  Put(&data, &kVersion, 4);
  const uint32_t count = positions.size();
  Put(&data, &count, 4);
  for (const RingPosition& p : positions) {
    Put(&data, &p.incarnation, 8);
    Put(&data, &p.ring, 4);
    Put(&data, &p.end, 8);
  }
  if (!batch.AppendToString(&data)) {
    return absl::InternalError("serializing a batch for the spool");
  }
  uint64_t id;
  {
    absl::MutexLock lock(&mu_);
    if (bytes_ + data.size() > max_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the spool ", dir_, " is full (", bytes_, " of ", max_bytes_,
          " bytes); raise --spool-max-bytes or start the collector"));
    }
    id = next_id_++;
    ++writes_;
    bytes_ += data.size();
    sizes_[id] = data.size();
  }
  const std::string path = PathOf(id);
  const std::string name = NameOf(id);
  const std::string temporary = name + ".tmp";
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = openat(dir_fd_, temporary.c_str(), flags, 0600);
  bool ok = fd >= 0;
  for (size_t at = 0; ok && at < data.size();) {
    ssize_t n = write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) at += n;
  }
  ok = ok && fdatasync(fd) == 0;
  if (fd >= 0) close(fd);
  ok = ok && renameat(dir_fd_, temporary.c_str(), dir_fd_, name.c_str()) == 0;
  if (!ok) {
    absl::Status status = Errno(absl::StrCat("writing ", path));
    unlinkat(dir_fd_, temporary.c_str(), 0);
    absl::MutexLock lock(&mu_);
    bytes_ -= data.size();
    sizes_.erase(id);
    return status;
  }
  return id;
}

absl::Status Spool::Remove(uint64_t id) {
  {
    absl::MutexLock lock(&mu_);
    auto it = sizes_.find(id);
    if (it == sizes_.end()) {
      return absl::NotFoundError(absl::StrCat("no spooled batch ", id));
    }
    bytes_ -= it->second;
    sizes_.erase(it);
  }
  if (unlinkat(dir_fd_, NameOf(id).c_str(), 0) != 0) {
    return Errno(absl::StrCat("removing ", PathOf(id)));
  }
  return absl::OkStatus();
}

std::vector<Spool::Entry> Spool::TakeRecovered() {
  return std::move(recovered_);
}

uint64_t Spool::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace meridian
