#include "agent/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "abi/agent_dir.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "agent/errno_status.h"
#include "common/crc32c.h"
#include "wire/batch_spans.h"

namespace meridian {
namespace {

constexpr char kMagic[4] = {'M', 'S', 'P', 'L'};
constexpr uint32_t kVersion = 3;
constexpr size_t kHeaderBytes = 28;  // magic, version, spans, length, crc
constexpr size_t kPositionBytes = 20;
constexpr char kSuffix[] = ".batch";
constexpr char kLockName[] = "spool.lock";

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

// Makes the directories above `dir` (not `dir` itself).
absl::Status MakeParents(const std::string& dir) {
  for (size_t i = 1; i < dir.size(); ++i) {
    if (dir[i] != '/') continue;
    std::string prefix = dir.substr(0, i);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoStatus(absl::StrCat("creating the spool directory ", prefix));
    }
  }
  return absl::OkStatus();
}

// Reads file `name` of `dir_fd` whole (files are one batch each).
absl::Status ReadFile(int dir_fd, const std::string& name, std::string* data) {
  const int fd =
      openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? absl::NotFoundError(name) : ErrnoStatus(name);
  }
  data->clear();
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status status = ErrnoStatus(name);
      close(fd);
      return status;
    }
    if (n == 0) break;
    data->append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return absl::OkStatus();
}

// The distinct jobs of `batch`'s processes, in the order they come.
std::vector<std::string> JobsOf(const v1::Batch& batch) {
  std::vector<std::string> jobs;
  for (const v1::Process& p : batch.processes()) {
    const std::string job =
        p.job() < static_cast<uint32_t>(batch.strings_size())
            ? batch.strings(static_cast<int>(p.job()))
            : std::string();
    if (std::find(jobs.begin(), jobs.end(), job) == jobs.end()) {
      jobs.push_back(job);
    }
  }
  return jobs;
}

bool GetString(const std::string& in, size_t* at, std::string* out) {
  uint32_t n = 0;
  if (!Get(in, at, &n) || in.size() - *at < n) return false;
  out->assign(in, *at, n);
  *at += n;
  return true;
}

void PutString(std::string* out, const std::string& s) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  Put(out, &n, 4);
  out->append(s);
}

}  // namespace

absl::Status DecodeSpoolFile(const std::string& data,
                             std::optional<uint64_t> file_id,
                             std::vector<RingPosition>* positions,
                             v1::Batch* batch, uint64_t* spans) {
  size_t at = 4;
  uint32_t version = 0;
  if (data.size() < 8 || memcmp(data.data(), kMagic, 4) != 0 ||
      !Get(data, &at, &version) || version < 1 || version > kVersion) {
    return absl::DataLossError("not a spool file of version 1 to 3");
  }
  if (version >= 2) {
    uint64_t length = 0;
    uint32_t crc = 0;
    if (!Get(data, &at, spans) || !Get(data, &at, &length) ||
        !Get(data, &at, &crc)) {
      return absl::DataLossError("its header is cut short");
    }
    if (length != data.size() - kHeaderBytes) {
      return absl::DataLossError(
          absl::StrCat("it holds ", data.size() - kHeaderBytes,
                       " bytes of batch where its header says ", length));
    }
    const std::string_view all(data);
    if (Crc32c(all.substr(kHeaderBytes), Crc32c(all.substr(8, 16))) != crc) {
      return absl::DataLossError("its checksum does not match (CRC-32C)");
    }
  }
  // Version 3 names itself: a file renamed, swapped or copied over another
  // is caught, not resent as the batch its name says.
  uint64_t named_id = 0, batch_seq = 0;
  std::string agent_id;
  std::vector<std::string> jobs;
  if (version == 3) {
    uint32_t job_count = 0;
    if (!Get(data, &at, &named_id) || !Get(data, &at, &batch_seq) ||
        !GetString(data, &at, &agent_id) || !Get(data, &at, &job_count) ||
        job_count > (data.size() - at) / 4) {
      return absl::DataLossError("its identity is cut short");
    }
    jobs.resize(job_count);
    for (std::string& job : jobs) {
      if (!GetString(data, &at, &job)) {
        return absl::DataLossError("its identity is cut short");
      }
    }
    if (file_id && named_id != *file_id) {
      return absl::DataLossError(
          absl::StrCat("it says it is spool file ", named_id,
                       " (renamed, swapped or copied over another)"));
    }
  }
  uint32_t count = 0;
  if (!Get(data, &at, &count) || count > (data.size() - at) / kPositionBytes) {
    return absl::DataLossError("its ring positions are cut short");
  }
  positions->resize(count);
  for (RingPosition& p : *positions) {
    Get(data, &at, &p.incarnation);
    Get(data, &at, &p.ring);
    Get(data, &at, &p.end);
  }
  v1::Batch scratch;
  if (batch == nullptr && version >= 2) return absl::OkStatus();
  v1::Batch* out = batch != nullptr ? batch : &scratch;
  if (!out->ParseFromArray(data.data() + at,
                           static_cast<int>(data.size() - at))) {
    return absl::DataLossError("its batch does not parse");
  }
  if (version == 1) *spans = SpanCount(*out);
  if (version == 3 && (out->batch_seq() != batch_seq ||
                       out->agent_id() != agent_id || JobsOf(*out) != jobs ||
                       static_cast<uint64_t>(SpanCount(*out)) != *spans)) {
    return absl::DataLossError(
        "its batch is not the one its header names (sequence, agent, jobs "
        "or span count differ)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const std::string& dir,
                                                   uint64_t max_bytes,
                                                   SpoolFiles* files) {
  if (absl::Status s = MakeParents(dir); !s.ok()) return s;
  std::string error;
  const int dir_fd = OpenPrivateDir(dir, static_cast<gid_t>(-1), &error);
  if (dir_fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the spool directory ", error));
  }
  const int lock_fd = openat(dir_fd, kLockName,
                             O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const bool busy = lock_fd >= 0 && errno == EWOULDBLOCK;
    absl::Status status =
        busy ? absl::FailedPreconditionError(absl::StrCat(
                   "the spool ", dir,
                   " is in use by another agent; give each agent its own "
                   "--spool-dir"))
             : ErrnoStatus(absl::StrCat("locking the spool ", dir));
    if (lock_fd >= 0) close(lock_fd);
    close(dir_fd);
    return status;
  }
  std::unique_ptr<Spool> spool(
      new Spool(dir, dir_fd, lock_fd, max_bytes, files));
  DIR* d = fdopendir(dup(dir_fd));
  if (d == nullptr) return ErrnoStatus(absl::StrCat("reading the spool ", dir));
  std::vector<uint64_t> ids;
  while (dirent* e = readdir(d)) {
    absl::string_view name = e->d_name;
    uint64_t id;
    if (absl::EndsWith(name, ".tmp")) {
      // Left by an agent that died while writing it: never acknowledged as
      // spooled, so its records are still in their rings or resent.
      files->UnlinkAt(dir_fd, e->d_name);
    } else if (absl::ConsumeSuffix(&name, kSuffix) &&
               absl::SimpleAtoi(name, &id)) {
      ids.push_back(id);
    }
  }
  closedir(d);
  std::sort(ids.begin(), ids.end());
  absl::MutexLock lock(&spool->mu_);
  std::string data;
  std::vector<RingPosition> positions;
  for (uint64_t id : ids) {
    uint64_t spans = 0;
    absl::Status status = ReadFile(dir_fd, spool->NameOf(id), &data);
    if (status.ok()) {
      status = DecodeSpoolFile(data, id, &positions, nullptr, &spans);
    }
    if (!status.ok()) {
      files->RenameAt(dir_fd, spool->NameOf(id).c_str(),
                      (spool->NameOf(id) + ".corrupt").c_str());
      spool->corrupt_.push_back(
          absl::StrCat(spool->PathOf(id), ": ", status.message()));
      continue;
    }
    for (const RingPosition& p : positions) {
      uint64_t& end = spool->positions_[{p.incarnation, p.ring}];
      if (p.end > end) end = p.end;
    }
    spool->sizes_[id] = data.size();
    spool->bytes_ += data.size();
    spool->recovered_.push_back({id, spans});
  }
  if (!ids.empty()) spool->next_id_ = ids.back() + 1;
  return spool;
}

absl::StatusOr<v1::Batch> Spool::Read(uint64_t id) const {
  std::string data;
  absl::Status status = ReadFile(dir_fd_, NameOf(id), &data);
  std::vector<RingPosition> positions;
  v1::Batch batch;
  uint64_t spans = 0;
  if (status.ok()) {
    status = DecodeSpoolFile(data, id, &positions, &batch, &spans);
  }
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(PathOf(id), ": ", status.message()));
  }
  return batch;
}

Spool::~Spool() {
  close(lock_fd_);  // releases the lock
  close(dir_fd_);
}

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
  data.resize(kHeaderBytes);  // spans, length and crc, filled in below
  // The identity: the file's id (filled in below, once taken), the batch's
  // sequence, agent and jobs.
  data.resize(kHeaderBytes + 8);
  const uint64_t seq = batch.batch_seq();
  Put(&data, &seq, 8);
  PutString(&data, batch.agent_id());
  const std::vector<std::string> jobs = JobsOf(batch);
  const uint32_t job_count = static_cast<uint32_t>(jobs.size());
  Put(&data, &job_count, 4);
  for (const std::string& job : jobs) PutString(&data, job);
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
  const uint64_t spans = SpanCount(batch);
  const uint64_t length = data.size() - kHeaderBytes;
  memcpy(&data[8], &spans, 8);
  memcpy(&data[16], &length, 8);
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
  memcpy(&data[kHeaderBytes], &id, 8);
  const std::string_view all(data);
  const uint32_t crc =
      Crc32c(all.substr(kHeaderBytes), Crc32c(all.substr(8, 16)));
  memcpy(&data[24], &crc, 4);
  absl::Status written = WriteFile(id, data);
  if (!written.ok()) {
    absl::MutexLock lock(&mu_);
    bytes_ -= data.size();
    sizes_.erase(id);
    return written;
  }
  return id;
}

absl::Status Spool::WriteFile(uint64_t id, const std::string& data) {
  const std::string path = PathOf(id);
  const std::string name = NameOf(id);
  const std::string temporary = name + ".tmp";
  const auto failed = [&path](const char* call) {
    return ErrnoStatus(absl::StrCat("writing ", path, ": ", call));
  };
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  const int fd = files_->OpenAt(dir_fd_, temporary.c_str(), flags, 0600);
  if (fd < 0) return failed("open");
  absl::Status status;
  for (size_t at = 0; at < data.size();) {
    const ssize_t n = files_->Write(fd, data.data() + at, data.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status = n < 0 ? failed("write")
                     : absl::InternalError(absl::StrCat(
                           "writing ", path, ": write: nothing written"));
      break;
    }
    at += static_cast<size_t>(n);
  }
  if (status.ok() && files_->Fdatasync(fd) != 0) status = failed("fdatasync");
  // A close may report a write the flush did not (a network file system).
  if (files_->Close(fd) != 0 && status.ok()) status = failed("close");
  if (status.ok() &&
      files_->RenameAt(dir_fd_, temporary.c_str(), name.c_str()) != 0) {
    status = failed("rename");
  }
  if (!status.ok()) {
    files_->UnlinkAt(dir_fd_, temporary.c_str());
    return status;
  }
  // The rename is durable only once the directory is. If it is not, the
  // file is taken back: a batch the agent was told failed is not resent
  // by the next agent as well.
  if (files_->Fsync(dir_fd_) != 0) {
    status = failed("fsync of the directory");
    files_->UnlinkAt(dir_fd_, name.c_str());
    return status;
  }
  return absl::OkStatus();
}

absl::Status Spool::Remove(uint64_t id) {
  {
    absl::MutexLock lock(&mu_);
    if (sizes_.count(id) == 0) {
      return absl::NotFoundError(absl::StrCat("no spooled batch ", id));
    }
  }
  // Not under the lock: an Append on another thread does not wait for it.
  // A file already gone (removed by hand) is removed.
  if (files_->UnlinkAt(dir_fd_, NameOf(id).c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(absl::StrCat("removing ", PathOf(id)));
  }
  absl::MutexLock lock(&mu_);
  auto it = sizes_.find(id);
  if (it != sizes_.end()) {
    bytes_ -= it->second;
    sizes_.erase(it);
  }
  return absl::OkStatus();
}

uint64_t Spool::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

}  // namespace meridian
