#include "cli/mpitrace_profile_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/saturating.h"
#include "import/paths.h"

namespace meridian {
namespace {

constexpr char kDashes[] =
    "-----------------------------------------------------------------------\n";

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// mpitrace's MBytes: ru_maxrss (KiB) / 1024.
double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

double Average(int64_t bytes, int64_t calls) {
  return calls > 0 ? static_cast<double>(bytes) / calls : 0.0;
}

// One word: readers split rows on whitespace.
std::string Word(const std::string& text, const char* if_empty) {
  if (text.empty()) return if_empty;
  std::string word = text;
  for (char& c : word) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) c = '_';
  }
  return word;
}

// A rank's figures as its file states them.
struct RankFigures {
  const v1::RankStats* stats = nullptr;
  std::vector<const v1::OpStats*> routines;  // category MPI
  int64_t comm_ns = 0;
  int64_t elapsed_ns = 0;
};

RankFigures FiguresOf(const v1::RankStats& r) {
  RankFigures f;
  f.stats = &r;
  for (const v1::OpStats& op : r.ops()) {
    if (op.category() != v1::CATEGORY_MPI) continue;
    f.routines.push_back(&op);
    f.comm_ns = SaturatingAdd(f.comm_ns, op.dur_ns());
  }
  // Only an imported summary table's row: its communication time.
  if (r.ops_size() == 0) f.comm_ns = r.comm_ns();
  f.elapsed_ns = r.mpi_elapsed_ns() != 0 ? r.mpi_elapsed_ns() : r.elapsed_ns();
  return f;
}

// The ranks (indexes into `ranks`) with the minimum, median (the lower
// middle) and maximum communication time, ties to the lower rank: as
// StatsBuilder picks them, over these files' times.
struct Roles {
  size_t min = 0, median = 0, max = 0;
};

Roles RolesOf(const std::vector<RankFigures>& ranks) {
  std::vector<std::pair<int64_t, size_t>> by_comm;  // ranks ascend already
  for (size_t i = 0; i < ranks.size(); ++i) {
    by_comm.push_back({ranks[i].comm_ns, i});
  }
  std::sort(by_comm.begin(), by_comm.end());
  Roles roles;
  roles.min = by_comm.front().second;
  roles.median = by_comm[(by_comm.size() - 1) / 2].second;
  roles.max = std::lower_bound(by_comm.begin(), by_comm.end(),
                               std::make_pair(by_comm.back().first, size_t{0}))
                  ->second;
  return roles;
}

bool CountsAllCalls(const v1::OpStats& op) {
  int64_t calls = 0;
  for (const v1::SizeBucket& b : op.buckets()) calls += b.calls();
  return calls == op.calls();
}

void AppendRoutines(const RankFigures& f, std::string* out) {
  *out += kDashes;
  absl::StrAppendFormat(out, "%-28s %12s %11s %12s\n", "MPI Routine", "#calls",
                        "avg. bytes", "time(sec)");
  *out += kDashes;
  for (const v1::OpStats* op : f.routines) {
    absl::StrAppendFormat(
        out, "%-28s %12d %11.1f %12.3f\n", Word(op->name(), "?"), op->calls(),
        Average(op->bytes(), op->calls()), Seconds(op->dur_ns()));
  }
  *out += kDashes;
}

void AppendTotals(const RankFigures& f, std::string* out) {
  const v1::RankStats& r = *f.stats;
  absl::StrAppendFormat(out,
                        "total communication time = %.3f seconds.\n"
                        "total elapsed time = %.3f seconds.\n"
                        "user cpu time = %.3f seconds.\n"
                        "system time = %.3f seconds.\n"
                        "max resident set size = %.3f MBytes.\n",
                        Seconds(f.comm_ns), Seconds(f.elapsed_ns),
                        Seconds(r.user_ns()), Seconds(r.system_ns()),
                        MiB(r.max_rss_bytes()));
}

void AppendDistributions(const RankFigures& f, std::string* out) {
  *out += "\n";
  *out += kDashes;
  *out += "Message size distributions:\n\n";
  for (const v1::OpStats* op : f.routines) {
    if (op->bytes() <= 0 || !CountsAllCalls(*op)) continue;
    absl::StrAppendFormat(out, "%-28s %12s %11s %12s\n", Word(op->name(), "?"),
                          "#calls", "avg. bytes", "time(sec)");
    for (const v1::SizeBucket& b : op->buckets()) {
      absl::StrAppendFormat(out, "%-28s %12d %11.1f %12.3f\n", "", b.calls(),
                            Average(b.bytes(), b.calls()), Seconds(b.dur_ns()));
    }
    *out += "\n";
  }
}

// Rank 0's summary of all ranks.
void AppendSummary(const std::vector<RankFigures>& ranks, const Roles& roles,
                   std::string* out) {
  const RankFigures* memory = &ranks.front();
  const RankFigures* elapsed = &ranks.front();
  for (const RankFigures& f : ranks) {
    if (f.stats->max_rss_bytes() > memory->stats->max_rss_bytes()) memory = &f;
    if (f.elapsed_ns > elapsed->elapsed_ns) elapsed = &f;
  }
  *out += kDashes;
  *out += "Communication summary for all tasks:\n\n";
  absl::StrAppendFormat(
      out,
      "  Rank %d reported the largest memory utilization : %.2f MBytes\n"
      "  Rank %d reported the largest elapsed time : %.2f sec\n\n",
      memory->stats->rank(), MiB(memory->stats->max_rss_bytes()),
      elapsed->stats->rank(), Seconds(elapsed->elapsed_ns));
  const std::pair<const char*, size_t> kRoles[] = {{"minimum", roles.min},
                                                   {"median ", roles.median},
                                                   {"maximum", roles.max}};
  for (const auto& [role, i] : kRoles) {
    absl::StrAppendFormat(
        out, "  %s communication time = %.3f sec for task %d\n", role,
        Seconds(ranks[i].comm_ns), ranks[i].stats->rank());
  }
  *out += "\nMPI timing summary for all ranks:\n";
  size_t host_width = 8;  // "hostname"
  for (const RankFigures& f : ranks) {
    host_width = std::max(host_width, Word(f.stats->host(), "-").size());
  }
  const int width = static_cast<int>(host_width);
  absl::StrAppendFormat(out, "%6s %*s %10s %10s %10s %10s %10s %10s\n",
                        "taskid", width, "hostname", "comm(s)", "elapsed(s)",
                        "user(s)", "system(s)", "size(MB)", "switches");
  for (const RankFigures& f : ranks) {
    const v1::RankStats& r = *f.stats;
    absl::StrAppendFormat(
        out, "%6d %*s %10.2f %10.2f %10.2f %10.2f %10.2f %10d\n", r.rank(),
        width, Word(r.host(), "-"), Seconds(f.comm_ns), Seconds(f.elapsed_ns),
        Seconds(r.user_ns()), Seconds(r.system_ns()), MiB(r.max_rss_bytes()),
        r.context_switches());
  }
}

std::string ProfileText(const std::vector<RankFigures>& ranks, size_t i,
                        const Roles& roles, int32_t world_size) {
  const RankFigures& f = ranks[i];
  const int32_t rank = f.stats->rank();
  // mpitrace says which part of the run it counted: MPI_Pcontrol(1) and
  // (0) are its summary_start() and summary_stop().
  std::string out = absl::StrFormat(
      "Data for MPI rank %d of %d:\n"
      "Times and statistics from %s.\n",
      rank, world_size,
      f.stats->pcontrol_windows() ? "summary_start() to summary_stop()"
                                  : "MPI_Init() to MPI_Finalize()");
  AppendRoutines(f, &out);
  const std::pair<const char*, size_t> kRoles[] = {
      {"minimum", roles.min}, {"maximum", roles.max}, {"median", roles.median}};
  for (const auto& [role, r] : kRoles) {
    if (r != i) continue;
    absl::StrAppendFormat(&out,
                          "MPI task %d of %d had the %s communication time.\n",
                          rank, world_size, role);
  }
  AppendTotals(f, &out);
  AppendDistributions(f, &out);
  if (i == 0) AppendSummary(ranks, roles, &out);
  return out;
}

// Creates `dir` (0700) unless it is a directory already.
absl::Status MakeDirectory(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)) {
      return absl::UnavailableError(
          absl::StrCat("cannot create directory ", dir, ": ", strerror(errno)));
    }
    if (stat(dir.c_str(), &st) != 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot read directory ", dir, ": ", strerror(errno)));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, " exists and is not a directory: give --mpitrace a directory"));
  }
  return absl::OkStatus();
}

absl::Status Exists(const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(path,
                   " exists; meridian stats --mpitrace never replaces a "
                   "file: remove it or give another directory"));
}

// Writes `text` to a new file `path`: O_EXCL, so never over an existing
// file and never through a symbolic link (O_NOFOLLOW says so twice).
absl::Status WriteNewFile(const std::string& path, const std::string& text) {
  const int fd = open(
      path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return Exists(path);
    return absl::UnavailableError(
        absl::StrCat("cannot create ", path, ": ", strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const int write_error = done < text.size() ? errno : 0;
  const bool closed = close(fd) == 0;
  if (write_error != 0 || !closed) {
    const int error = write_error != 0 ? write_error : errno;
    unlink(path.c_str());
    return absl::UnavailableError(
        absl::StrCat("writing ", path, " failed: ", strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<MpitraceProfileText> MpitraceProfiles(const v1::StatsReply& stats,
                                                  int32_t world_size) {
  std::vector<const v1::RankStats*> sorted;
  for (const v1::RankStats& r : stats.ranks()) {
    if (r.rank() >= 0) sorted.push_back(&r);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const v1::RankStats* a, const v1::RankStats* b) {
                     return a->rank() < b->rank();
                   });
  std::vector<RankFigures> ranks;
  for (const v1::RankStats* r : sorted) {
    ranks.push_back(FiguresOf(*r));
    world_size = std::max(world_size, r->rank() + 1);
  }
  std::vector<MpitraceProfileText> profiles;
  if (ranks.empty()) return profiles;
  const Roles roles = RolesOf(ranks);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int32_t rank = ranks[i].stats->rank();
    profiles.push_back({rank, absl::StrCat("mpi_profile.", rank),
                        ProfileText(ranks, i, roles, world_size)});
  }
  return profiles;
}

absl::StatusOr<int> WriteMpitraceProfiles(const v1::StatsReply& stats,
                                          int32_t world_size,
                                          const std::string& dir) {
  const std::vector<MpitraceProfileText> profiles =
      MpitraceProfiles(stats, world_size);
  if (absl::Status s = MakeDirectory(dir); !s.ok()) return s;
  // All refused before any is written, not half a set.
  for (const MpitraceProfileText& p : profiles) {
    const std::string path = PathJoin(dir, p.file_name);
    struct stat st;
    if (lstat(path.c_str(), &st) == 0) return Exists(path);
  }
  std::vector<std::string> written;
  for (const MpitraceProfileText& p : profiles) {
    const std::string path = PathJoin(dir, p.file_name);
    if (absl::Status s = WriteNewFile(path, p.text); !s.ok()) {
      for (const std::string& done : written) unlink(done.c_str());
      return s;
    }
    written.push_back(path);
  }
  return static_cast<int>(written.size());
}

}  // namespace meridian
