#include "query/sql/sql_copy.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "store/store_copy.h"

namespace meridian {
namespace {

// A directory of its own, removed with everything in it when this goes.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Make(const std::string& under) {
    std::string pattern = under + "/meridian-sql-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (mkdtemp(name.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("could not make a temporary directory for the job's "
                       "copy: ",
                       strerror(errno)));
    }
    return TempDir(name.data());
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Removes the copies of this user left in `dir` by a collector that died
// while it copied (a copy lasts at most a statement's time: one an hour old
// is no query's): directories named as TempDir names them, not links.
void SweepStaleCopies(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const time_t stale = time(nullptr) - 3600;
  while (const dirent* entry = readdir(d)) {
    if (strncmp(entry->d_name, "meridian-sql-", 13) != 0) continue;
    const std::string path = dir + "/" + entry->d_name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != geteuid() || st.st_mtime > stale) {
      continue;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  closedir(d);
}

}  // namespace

absl::StatusOr<v1::SqlReply> RunSqlOnCopy(
    Store& from, const std::string& tmp_dir, const v1::SqlRequest& request,
    const SqlLimits& limits,
    const std::function<bool(const std::string& job)>& may_read,
    std::function<bool()> cancelled) {
  if (request.job().empty()) {
    return absl::InvalidArgumentError(
        "meridian sql over this collector's store (ClickHouse) reads one "
        "job: name it (--job J)");
  }
  const absl::Time deadline = absl::Now() + limits.timeout;
  SweepStaleCopies(tmp_dir);
  auto dir = TempDir::Make(tmp_dir);
  if (!dir.ok()) return dir.status();
  const std::string path = dir->path() + "/copy.db";
  {
    StoreOptions options;
    options.full_sync = false;  // a copy for one query
    options.name_in_errors = "the query's copy of the job";
    auto to = Store::Open(path, options);
    if (!to.ok()) return to.status();
    CopyBounds bounds;
    bounds.only = request.job();
    bounds.which = [&](const std::string& job) {
      return job == request.job() && (!may_read || may_read(job));
    };
    bounds.max_spans = limits.max_copy_spans;
    bounds.check = [&]() -> absl::Status {
      if (cancelled && cancelled()) {
        return absl::CancelledError("the query was cancelled");
      }
      if (absl::Now() > deadline) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "the query ran past its ", absl::FormatDuration(limits.timeout),
            " while its job was copied out of the store and was stopped"));
      }
      return absl::OkStatus();
    };
    auto copied = CopyStore(from, **to, nullptr, bounds);
    if (!copied.ok()) {
      const absl::Status& s = copied.status();
      if (absl::IsResourceExhausted(s) || absl::IsCancelled(s)) return s;
      return absl::Status(
          s.code(), absl::StrCat("copying the job out of the store for the "
                                 "query: ",
                                 s.message()));
    }
  }  // the copy's store closed: every write is in the file
  SqlLimits left = limits;
  left.deadline = deadline;
  if (absl::Now() >= deadline) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the query ran past its ", absl::FormatDuration(limits.timeout),
        " while its job was copied out of the store and was "
        "stopped"));
  }
  return RunSql(path, request, left, may_read, std::move(cancelled));
}

}  // namespace meridian
