// JobSpans: a job's complete spans in memory, compactly, on the collector's
// clock: what the analyses (critical path, stragglers, steps, graph) read.
//
// Each span keeps what dependencies and breakdowns need (times, track, op,
// rank, comm/seq, peer/tag, step, correlation, bytes) in 88 bytes; names stay
// in the catalog. Spans are ordered by track, then start, then longest
// first, so that on a track an enclosing span precedes the spans it
// contains. Instants and counters are left out: they take no time.
//
// Asynchronous spans are MPI's nonblocking operations (MPI_Isend,
// MPI_Iallreduce, ...): the probe records them from issue to completion,
// while the thread goes on, so they do not occupy their track; the Wait
// that completes them does.
//
// A span's role is its operation's, as its args narrow it (RoleOfSpan,
// query/ops/mpi_args.h: a shared Win_lock is kSharedLock). A neighbor
// collective's in-neighbors (its "sources" arg), and the group of a
// Win_post or Win_start (its "group" arg), are kept once per distinct list
// (sources()).
#ifndef MERIDIAN_QUERY_ANALYSIS_JOB_SPANS_H_
#define MERIDIAN_QUERY_ANALYSIS_JOB_SPANS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "query/clocks/job_clocks.h"
#include "query/ops/mpi_semantics.h"
#include "store/store.h"

namespace meridian {

struct JobSpan {
  int64_t start = 0;  // collector-clock ns
  int64_t end = 0;
  int64_t step = 0;  // valid if has_step
  int64_t bytes = 0;
  uint64_t comm = 0;
  // A collective's instance (valid if has_seq); a Sendrecv's (kSendRecv,
  // which has no seq) receive instead: the source (-1: none known) and the
  // tag, which the 88 bytes of a span have no other room for.
  struct Receive {
    int32_t peer;
    int32_t tag;
  };
  union {
    uint64_t seq = 0;
    Receive recv;
  };
  uint64_t correlation = 0;
  int32_t track = 0;  // index into JobSpans::tracks()
  int32_t op = 0;     // index into the catalog's ops
  int32_t rank = -1;
  int32_t peer = -1;  // root, destination or source; -1: none
  int32_t tag = 0;
  v1::Category category = v1::CATEGORY_UNSPECIFIED;
  SpanRole role = SpanRole::kNone;
  bool has_step = false;
  bool has_seq = false;
  bool async = false;
  int32_t sources = -1;  // listed ranks: JobSpans::sources(); -1: none
};
static_assert(sizeof(JobSpan) == 88, "docs/PERFORMANCE.md counts 88 bytes");

struct JobTrack {
  int64_t id = 0;  // the store's track id
  int32_t rank = -1;
  int32_t process = 0;  // index into the catalog's processes
  v1::TrackKind kind = v1::TRACK_KIND_THREAD;
  std::string name;
  // This track's spans: JobSpans::spans()[first, first + count).
  int64_t first = 0;
  int64_t count = 0;
};

// NOT_FOUND, naming the job and the step: no span of the job has `step`.
absl::Status StepNotFound(const std::string& job, int64_t step);

class JobSpans {
 public:
  // Reads every span of the job and the job's clocks, into *clocks, in one
  // scan: the spans are kept as JobClocks::Load's refinement scan reads
  // them, then placed on the collector's clock in memory. `catalog` must
  // outlive the result.
  // `read` (default: the whole job) says which spans; with its
  // message_steps, sends and receives of other steps take no part in
  // dependencies (role kNone). `stored`: the job's stored clock solution,
  // for JobClocks::Load.
  static absl::StatusOr<JobSpans> Load(
      Store& store, const JobCatalog& catalog, std::optional<JobClocks>* clocks,
      const JobRead& read = JobRead{},
      const std::optional<StoredJobResult>* stored = nullptr);

  // What one step's analysis needs, without reading the rest of the job:
  //  1. the chunks that hold spans tagged with `step` (the store keeps each
  //     chunk's step range), whose MPI spans refine the clocks and whose
  //     first start and last end, placed, make the step's window;
  //  2. per node, the chunks overlapping that window, mapped back to the
  //     node's raw clock: the spans of every track while the step ran,
  //     tagged or not (GPU kernels, copies), refined again.
  // Messages are matched over the step's spans only (see JobRead). The
  // clocks are the job's stored solution `stored` if it is of the job as
  // it stands (JobClocks::Load: a finished job's step solves nothing),
  // else refined over the step's spans, so that a step's path can then
  // differ from the same step in a whole-job load where the clocks drift
  // within the job. NOT_FOUND naming the job if no span is tagged with
  // `step`. `stats`, if set, counts both reads. `max_spans`, if positive,
  // is the most spans the step may hold: RESOURCE_EXHAUSTED once the second
  // read has kept more (JobRead::max_spans), before the rest is read.
  static absl::StatusOr<JobSpans> LoadStep(
      Store& store, const JobCatalog& catalog, int64_t step,
      std::optional<JobClocks>* clocks, ScanStats* stats = nullptr,
      const std::optional<StoredJobResult>* stored = nullptr,
      int64_t max_spans = 0);
  // The same for the steps first..last (inclusive) together: their window
  // is the first start to the last end of the spans tagged with any of
  // them, and messages are matched among those spans. NOT_FOUND naming
  // `first` if no span is tagged with any of them. `cover`, if set, is a
  // [start, end] on the collector's clock the window is widened to hold
  // (the untagged time between steps, and before and after them, that a
  // whole-job path walked step by step needs). `max_spans` as LoadStep's.
  static absl::StatusOr<JobSpans> LoadSteps(
      Store& store, const JobCatalog& catalog, int64_t first, int64_t last,
      std::optional<JobClocks>* clocks, ScanStats* stats = nullptr,
      const std::optional<StoredJobResult>* stored = nullptr,
      const std::pair<int64_t, int64_t>* cover = nullptr,
      int64_t max_spans = 0);

  // Spans given one at a time, with their times on the collector's clock
  // (tests); Finish sorts.
  explicit JobSpans(const JobCatalog& catalog);
  void Add(const StoredSpan& span, int64_t start_ns, int64_t dur_ns);
  void Finish();

  const JobCatalog& catalog() const { return *catalog_; }
  const std::vector<JobSpan>& spans() const { return spans_; }
  const std::vector<JobTrack>& tracks() const { return tracks_; }
  const std::string& name(const JobSpan& span) const {
    return catalog_->ops[span.op].name;
  }
  // A neighbor collective's in-neighbors, or a Win_post's or Win_start's
  // group (world ranks, ascending); empty for other spans and where the
  // span lists none.
  absl::Span<const int32_t> sources(const JobSpan& span) const {
    return source_lists_.Get(span.sources);
  }
  // The span as MPI matching sees it (mpi_semantics.h).
  MpiOp MpiOpOf(const JobSpan& span) const;
  // Whether the span sets up or tears down (IsSetUp: MPI_Init...).
  bool setup(const JobSpan& span) const { return op_setup_[span.op] != 0; }
  // Whether the job records its steps' ends: the spans loaded hold a step
  // marker, the user span "step" that meridian_step_end records when a step
  // ends (so that a step without one never ended, or was cut by a trace
  // window). A load of some steps alone shows it if one of them ended;
  // MarksSteps() says so of a load that holds none (StepSummaries, for a
  // block of the job's last step alone, from the step before).
  bool marks_steps() const { return marks_steps_; }
  void MarksSteps() { marks_steps_ = true; }
  // Whether `span` is such a marker, tagged with its step.
  bool is_step_marker(const JobSpan& span) const {
    return span.has_step && span.op == step_marker_;
  }
  // A copy in which span i of spans() is at [start[i], end[i]) (a replay's
  // prediction), sorted again; both as long as spans().
  JobSpans Retimed(absl::Span<const int64_t> start,
                   absl::Span<const int64_t> end) const;
  // The ranks that have spans, ascending.
  std::vector<int32_t> Ranks() const;
  // Bytes held, for the memory-per-span figure.
  int64_t MemoryBytes() const;

 private:
  const JobCatalog* catalog_;
  std::vector<JobSpan> spans_;
  std::vector<JobTrack> tracks_;
  absl::flat_hash_map<int64_t, int32_t> track_index_;
  absl::flat_hash_map<int64_t, int32_t> op_index_;
  std::vector<SpanRole> op_role_;
  std::vector<char> op_async_;
  std::vector<char> op_setup_;
  int32_t step_marker_ = -1;  // the catalog's op index of "step", if any
  bool marks_steps_ = false;  // a marker was added
  SourceLists source_lists_;
  // See JobRead::message_steps.
  std::optional<std::pair<int64_t, int64_t>> message_steps_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_JOB_SPANS_H_
