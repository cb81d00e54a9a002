// JobClocks: how a query puts a job's timestamps on one time axis, the
// collector's clock. For a span of node n at raw node time t:
//   shown(t) = ClockTimeline_n.ToCollector(t) + correction_n
// where the timeline comes from the node's stored clock models and the
// correction from the CausalRefiner run over the job's MPI spans (one scan
// of the store, when the query loads the job). Spans whose end still breaks
// causality after that have their end moved later (EndShift). Raw
// timestamps stay in the store unchanged: a better model or refinement
// applies to old jobs too.
#ifndef MERIDIAN_QUERY_CLOCKS_JOB_CLOCKS_H_
#define MERIDIAN_QUERY_CLOCKS_JOB_CLOCKS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "query/clocks/causal_refiner.h"
#include "query/clocks/clock_evidence.h"
#include "query/clocks/clock_solve_state.h"
#include "query/clocks/clock_timeline.h"
#include "query/clocks/evidence_log.h"
#include "store/store.h"

namespace meridian {

class JobClocks;

// Which spans of a job a load reads: by default all of them, in one scan.
struct JobRead {
  // Scanned in turn. No span may be in two ranges (it would be read twice).
  std::vector<ScanRange> ranges{ScanRange{}};
  // If set, point-to-point messages are matched only among spans tagged with
  // a step in this range (first, last; inclusive). Sends and receives are
  // paired in order (the n-th send to the n-th receive of the same
  // communicator, ranks and tag), which is sound over whole message
  // streams; a read of some steps' window cuts the streams of different
  // ranks at different places, but those steps' own messages are whole.
  std::optional<std::pair<int64_t, int64_t>> message_steps;
  ScanStats* stats = nullptr;  // if set, counts what the scans read
  // If set, only the spans it keeps are read (seen, refined, kept): a
  // filter finer than a ScanRange, applied as the scan goes.
  std::function<bool(const StoredSpan&)> keep;
  // If set, a refinement's scan stops once it is true and Load returns
  // CANCELLED (checked at every span, so a collector that shuts down stops
  // a whole-job solve, a minute at 100M spans, at once). A load that uses
  // a stored solution, or finds no node, does not scan to refine and is
  // not stopped.
  const std::atomic<bool>* cancel = nullptr;
  // If positive, a memory budget in spans: once the scans have kept more
  // spans than this (after `keep`), they stop and Load returns
  // RESOURCE_EXHAUSTED ("... holds more than N spans"), so that a window
  // too large for the caller's memory is refused before it is all read.
  int64_t max_spans = 0;
  // If set, clocks of the same job (the same catalog) loaded before: their
  // nodes' clock models are taken instead of read again (one query per
  // node: a step read in two passes reads them once).
  const JobClocks* models_of = nullptr;
};

// Whether a send or receive tagged `step` takes part in message matching
// under JobRead::message_steps `steps`.
inline bool PairsMessage(
    const std::optional<std::pair<int64_t, int64_t>>& steps,
    const std::optional<int64_t>& step) {
  return !steps || (step && *step >= steps->first && *step <= steps->second);
}

class JobClocks {
 public:
  // Loads the models of the job's nodes and scans its spans for the
  // refinement. A node without models keeps its raw clock, and its
  // refinement is bounded by +-1 s instead of a model's uncertainty.
  // `visit`, if set, sees every span of that scan (raw times), so that a
  // caller that needs the spans too reads the store once (JobSpans::Load).
  // `read` says which spans are scanned: the refinement is made over those.
  // `stored`, if given, is the job's stored solution (Store::
  // LoadClockSolution): used instead of refining when it was made for the
  // job as it stands (its spans, last write and clock models), whatever
  // `read` is: a window of a finished job is placed as the whole job is
  // (a solution from more evidence than the window's), and no query of it
  // solves. Then no span is read at all unless `visit` is set, and then
  // those of `read`.
  static absl::StatusOr<JobClocks> Load(
      Store& store, const JobCatalog& catalog,
      const std::function<void(const StoredSpan&)>& visit = nullptr,
      const JobRead& read = JobRead{},
      const std::optional<StoredJobResult>* stored = nullptr);

  // The whole job's clocks as Load solves them: the stored solution if it
  // is of the job as it stands; else, with `state` (what the last update of
  // the job kept, clock_solve_state.h) if it still holds, from the chunks
  // written since it alone (Store::Scan with ScanRange::written_after): only
  // its open evidence and the new spans are placed and matched, and its
  // settled groups counted (a span read twice, as ClickHouse's write mark
  // rereads the last seconds, counts once); otherwise solved whole from one
  // scan of the job's chunks, and the state (if given) made again. With a
  // state and `log` (the collector's, evidence_log.h), the evidence of the
  // chunks it needs is taken from the log instead where the log holds all
  // of them: no chunk is read. `catalog` and the store's write mark must be
  // of one snapshot (OpenJob's). The same answer as Load's whole-job solve
  // either way, byte for byte. `stats` and `cancel` as JobRead's.
  static absl::StatusOr<JobClocks> Update(
      Store& store, const JobCatalog& catalog,
      const std::optional<StoredJobResult>* stored,
      const std::atomic<bool>* cancel = nullptr, ScanStats* stats = nullptr,
      ClockSolveState* state = nullptr, EvidenceLog* log = nullptr);

  // This solution, to store with the job: set when Load refined the whole
  // job (a window's refinement is not the job's), nullopt otherwise.
  const std::optional<StoredJobResult>& new_solution() const {
    return new_solution_;
  }
  // Spans of the evidence that Update solved from.
  int64_t evidence_spans() const { return evidence_spans_; }
  // Whether Load took a stored solution, and when that was computed (or
  // now, if Load computed it).
  bool from_stored() const { return from_stored_; }
  int64_t solved_ns() const { return solved_ns_; }

  // A span's start on the collector's axis, and its duration there (with
  // any end shift). Reads the span's start_ns, dur_ns, track_id and op_id.
  struct Interval {
    int64_t start_ns;
    int64_t dur_ns;
  };
  Interval Place(const StoredSpan& span) const;
  // The raw time of `track_id`'s node that Place puts at collector time t
  // (end shifts aside): where a read of a collector-time window starts and
  // ends on that node.
  int64_t ToRaw(int64_t track_id, int64_t t) const;
  // The earliest raw time of `track_id`'s node that Place puts at or after
  // collector time t: a span of that node starts before t on the
  // collector's axis exactly when its raw start is before this. Exact
  // wherever the node's conversion grows with time (clock models drift by
  // parts per million; SetEpoch relies on the same), found by search from
  // ToRaw's guess. `t` should be within the job's times give or take its
  // length (a conversion far outside may overflow).
  int64_t FirstRawAtOrAfter(int64_t track_id, int64_t t) const;
  // The most that any span's end is moved later (EndShift); 0 if none is.
  int64_t max_end_shift_ns() const;
  // No span starts earlier on the collector's axis: the export's origin.
  int64_t epoch_ns() const { return epoch_ns_; }

  // What `meridian clocks` shows, with each node's models over the job
  // (NodeClock.timeline: at most 200, evenly chosen).
  v1::ClocksReply Report() const;

 private:
  struct Node {
    std::string name;
    std::vector<int32_t> ranks;
    ClockTimeline timeline;
    int64_t correction_ns = 0;
  };
  const Node& NodeOf(int64_t track_id) const;
  static uint64_t SpanId(const StoredSpan& span);
  // The steps of Load, in order. Nodes from the catalog's processes, with
  // their clock models; the node of each track.
  absl::Status LoadNodes(Store& store, const JobCatalog& catalog,
                         const JobClocks* models_of = nullptr);
  // Whether `stored` is a solution of the job as it stands; if so, taken.
  bool TakeStored(const JobCatalog& catalog,
                  const std::optional<StoredJobResult>* stored);
  // What the refinement needs of the catalog: the role of each operation
  // whose spans it reads, and each track's rank.
  struct Roles {
    absl::flat_hash_map<int64_t, SpanRole> of_op;
    absl::flat_hash_map<int64_t, int32_t> rank_of_track;
    // ToCausal's lookups of the last tracks and operations seen, by their
    // ids' low bits (a job's evidence names few of each): no hash lookup
    // for most spans.
    struct TrackMemo {
      bool set = false;
      int64_t id = 0;
      int node = 0;
      int32_t rank = 0;
    };
    struct OpMemo {
      bool set = false;
      int64_t id = 0;
      SpanRole role = SpanRole::kNone;
    };
    mutable std::array<TrackMemo, 64> track_memo;
    mutable std::array<OpMemo, 64> op_memo;
  };
  static Roles RolesOf(const JobCatalog& catalog);
  // Scans `read` (calling `visit`), handing each span the refinement reads
  // to `add` and every span's start to `first_start` (ClockEvidence::
  // SawStart). CANCELLED, once read.cancel is set.
  absl::Status Gather(Store& store, const JobCatalog& catalog,
                      const Roles& roles,
                      const std::function<void(const StoredSpan&)>& visit,
                      const JobRead& read,
                      const std::function<void(EvidenceSpan&&)>& add,
                      ClockEvidence* first_start);
  // A span of the evidence as the refiner takes it (placed by the models).
  CausalSpan ToCausal(const Roles& roles, const EvidenceSpan& span) const;
  // Solves `refiner` (with `settled`'s groups) and applies its corrections
  // and end shifts.
  void Solve(CausalRefiner& refiner, const SettledGroups* settled = nullptr);
  // Whether `state` still holds for the job as loaded (see
  // clock_solve_state.h), before any new span is read.
  bool Trusts(const JobCatalog& catalog,
              const std::optional<StoredJobResult>* stored,
              const ClockSolveState& state) const;
  // Update from `state`: false, leaving `state` and these clocks as they
  // were (their nodes loaded, nothing solved), if a new span breaks what it
  // assumed (then the caller solves whole).
  absl::StatusOr<bool> UpdateFrom(Store& store, const JobCatalog& catalog,
                                  const Roles& roles,
                                  const std::atomic<bool>* cancel,
                                  ScanStats* stats, ClockSolveState* state,
                                  EvidenceLog* log);
  // Moves the groups of `evidence` (the spans added to `refiner`, solved,
  // in order) that no later span can change into state->settled, and the
  // other spans to state->open; advances each node's horizon first.
  void Settle(const Roles& roles, const CausalRefiner& refiner,
              std::vector<EvidenceSpan> evidence, ClockSolveState* state) const;
  // Adds to `refiner` every span of `evidence` it orders and drops the
  // others from `evidence` (they take part in nothing), so that evidence[i]
  // is then the refiner's span i; returns how many it dropped.
  int64_t AddOrdered(const Roles& roles, std::vector<EvidenceSpan>* evidence,
                     CausalRefiner* refiner) const;
  // Calls `visit` with each channel a span is an end of, and whether it is
  // the send there: a send's or receive's one, a Sendrecv's send and
  // receive; none for other spans.
  static void ForEachChannel(
      const Roles& roles, const EvidenceSpan& span,
      absl::FunctionRef<void(const ClockSolveState::Channel&, bool)> visit);
  // The solution to store, of the whole job.
  void SetNewSolution(const JobCatalog& catalog);
  // The earliest shown start, from each track's earliest raw start.
  void SetEpoch(const JobCatalog& catalog,
                const absl::flat_hash_map<int64_t, int64_t>& first_start);
  // The solution as stored (a text of lines: docs/clocks.md), and taking
  // one back: false, changing nothing, if it does not parse or names other
  // nodes.
  std::string Serialize() const;
  bool Apply(absl::string_view data);
  // The clock models of all nodes together (a stored solution's version).
  int64_t Models() const;

  int64_t job_middle_ns_ = 0;
  std::vector<Node> nodes_;
  absl::flat_hash_map<int64_t, int> node_of_track_;
  absl::flat_hash_map<uint64_t, int64_t> end_shift_;
  Refinement refinement_;
  int64_t epoch_ns_ = 0;
  std::optional<StoredJobResult> new_solution_;
  int64_t evidence_spans_ = 0;
  bool from_stored_ = false;
  int64_t solved_ns_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_JOB_CLOCKS_H_
