#include "query/analysis/step_summaries.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/step_blocks.h"
#include "query/analysis/step_breakdown.h"
#include "query/analysis/stragglers.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

// Whether step `step` of the job holds the probe's marker of a step's end
// (a user span "step"): one scan of the step, keeping nothing.
absl::StatusOr<bool> StepEnded(Store& store, const JobCatalog& catalog,
                               int64_t step) {
  absl::flat_hash_set<int64_t> markers;
  for (const OpInfo& op : catalog.ops) {
    if (IsStepMarker(op.category, op.name)) {
      markers.insert(op.id);
    }
  }
  if (markers.empty()) return false;
  ScanRange range;
  range.first_step = step;
  range.last_step = step;
  bool ended = false;
  absl::Status scan =
      store.Scan(catalog.job, range, [&](const StoredSpan& span) {
        ended = markers.contains(span.op_id) && span.step == step;
        return !ended;
      });
  if (!scan.ok()) return scan;
  return ended;
}

// What an analysis holds per span (query_service.cc's figure).
constexpr uint64_t kBytesPerSpan = 190;

// A summary's data: this line, then the serialized v1::StoredStep.
constexpr absl::string_view kStepHeader = "meridian-step 1\n";

// The state's data: "meridian-steps 2", "complete C", "last L", "mark M":
// steps up to C are complete, up to L summarised, from the spans written up to
// M (Store::WriteMark). A state of version 1 (no mark) does not read, so its
// job's steps are all made again once.
struct Coverage {
  int64_t complete = 0;
  int64_t last = 0;
  int64_t mark = 0;
};

std::string WriteCoverage(const Coverage& c) {
  return absl::StrCat("meridian-steps 2\ncomplete ", c.complete, "\nlast ",
                      c.last, "\nmark ", c.mark, "\n");
}

std::optional<Coverage> ReadCoverage(absl::string_view data) {
  std::vector<absl::string_view> lines = absl::StrSplit(data, '\n');
  Coverage c;
  if (lines.size() < 4 || lines[0] != "meridian-steps 2" ||
      !absl::ConsumePrefix(&lines[1], "complete ") ||
      !absl::SimpleAtoi(lines[1], &c.complete) ||
      !absl::ConsumePrefix(&lines[2], "last ") ||
      !absl::SimpleAtoi(lines[2], &c.last) ||
      !absl::ConsumePrefix(&lines[3], "mark ") ||
      !absl::SimpleAtoi(lines[3], &c.mark) || c.complete > c.last) {
    return std::nullopt;
  }
  return c;
}

absl::Status Damaged(const JobCatalog& catalog, int64_t step) {
  return absl::DataLossError(absl::StrCat("job ", catalog.job.name,
                                          ": the stored summary of step ", step,
                                          " does not read"));
}

// Calls `visit` with each step's summary, ascending: the stored ones and
// those `made` holds, which replace stored ones of the same step and every
// stored one from made.remade_from on.
absl::Status ForEachStep(
    Store& store, const JobCatalog& catalog, const StepSummaries::Made& made,
    const std::function<void(const v1::StoredStep&)>& visit) {
  absl::Status bad;
  v1::StoredStep step;
  auto parse = [&](const StoredStepSummary& row) {
    absl::string_view data = row.data;
    if (!absl::ConsumePrefix(&data, kStepHeader) ||
        !step.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
      bad = Damaged(catalog, row.step);
      return false;
    }
    return true;
  };
  size_t next = 0;  // of made.steps
  auto visit_made_below = [&](int64_t below) {
    for (; next < made.steps.size() && made.steps[next].step < below; ++next) {
      if (!parse(made.steps[next])) return false;
      visit(step);
    }
    return true;
  };
  absl::Status scanned = store.ScanStepSummaries(
      catalog.job.id, std::numeric_limits<int64_t>::min(),
      [&](const StoredStepSummary& row) {
        if (row.step >= made.remade_from) return false;
        if (!visit_made_below(row.step)) return false;
        if (next < made.steps.size() && made.steps[next].step == row.step) {
          return true;  // made again: visited as made
        }
        if (!parse(row)) return false;
        visit(step);
        return true;
      });
  if (!scanned.ok()) return scanned;
  if (!bad.ok()) return bad;
  if (!visit_made_below(std::numeric_limits<int64_t>::max())) return bad;
  return absl::OkStatus();
}

// The coverage of the job's stored state, if it reads and is this job's:
// a state for more spans or a later write than the job has is another
// job's that had the same id (deleted since).
std::optional<Coverage> CoverageOf(const std::optional<StoredJobResult>& stored,
                                   const JobInfo& job) {
  if (!stored) return std::nullopt;
  std::optional<Coverage> coverage = ReadCoverage(stored->data);
  if (coverage &&
      (stored->spans > job.spans || stored->written_ns > job.written_ns)) {
    coverage.reset();
  }
  return coverage;
}

// The last complete step: steps below every rank's last are complete (a
// rank's last: the highest of its tracks', so a thread that stopped
// recording holds nothing back).
absl::StatusOr<int64_t> LastCompleteStep(Store& store,
                                         const JobCatalog& catalog,
                                         int64_t last_step) {
  auto tracks = store.TrackLastSteps(catalog.job.id);
  if (!tracks.ok()) return tracks.status();
  absl::flat_hash_map<int64_t, int64_t> process_of_track;
  for (const TrackInfo& t : catalog.tracks)
    process_of_track[t.id] = t.process_id;
  absl::flat_hash_map<int64_t, int64_t> process_last;
  for (const auto& [track, last] : *tracks) {
    auto [it, added] = process_last.try_emplace(process_of_track[track], last);
    if (!added) it->second = std::max(it->second, last);
  }
  int64_t lowest_last = last_step;
  for (const auto& [process, last] : process_last) {
    lowest_last = std::min(lowest_last, last);
  }
  return lowest_last - 1;
}

// RESOURCE_EXHAUSTED if one step of about `per_step` spans would take
// more than `budget` to summarise.
absl::Status StepsFit(const JobInfo& job, int64_t per_step, uint64_t budget) {
  if (static_cast<uint64_t>(per_step) * kBytesPerSpan <= budget) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "job ", job.name, "'s steps have about ", per_step,
      " spans each: summarising one would take about ",
      per_step * kBytesPerSpan >> 20,
      " MiB, over this collector's --analysis-memory-mib ", budget >> 20,
      "; raise the limit, or analyse one step (--step N)"));
}

// Makes the summaries of steps lo..hi (of first_step..last_step) from
// their block's `spans`, appended to `made`.
absl::Status SummariseBlock(Store& store, const JobCatalog& catalog, int64_t lo,
                            int64_t hi, int64_t first_step, int64_t last_step,
                            JobSpans& spans, StepSummaries::Made* made) {
  // A block of the job's last step alone shows no step's end if that
  // step never ended: whether the job marks its steps' ends is read
  // from the step before (its marker only).
  if (hi == last_step && lo > first_step && !spans.marks_steps()) {
    auto ended = StepEnded(store, catalog, lo - 1);
    if (!ended.ok()) return ended.status();
    if (*ended) spans.MarksSteps();
  }
  const DependencyGraph graph(spans);
  v1::StepsReply breakdown = StepBreakdown(graph);
  std::map<int64_t, v1::StragglersReply> waits =
      StragglersByStep(graph, lo, hi, kInstancesPerStep);
  for (v1::StepSummary& summary : *breakdown.mutable_steps()) {
    if (summary.step() < lo || summary.step() > hi) continue;
    v1::StoredStep step;
    auto w = waits.find(summary.step());
    if (w != waits.end()) *step.mutable_stragglers() = std::move(w->second);
    *step.mutable_summary() = std::move(summary);
    made->steps.push_back(
        StoredStepSummary{step.summary().step(),
                          absl::StrCat(kStepHeader, step.SerializeAsString())});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StepSummaries::Made> StepSummaries::Update(
    Store& store, const JobCatalog& catalog, uint64_t budget,
    const std::atomic<bool>* cancel) {
  const JobInfo& job = catalog.job;
  auto range = store.StepRange(job.id);
  if (!range.ok()) return range.status();
  if (!*range) {
    return absl::NotFoundError(
        absl::StrCat("job ", job.name, " has no span tagged with a step"));
  }
  const auto [first_step, last_step] = **range;
  Made made;
  made.state.spans = job.spans;
  made.state.written_ns = job.written_ns;
  made.state.computed_ns = absl::ToUnixNanos(absl::Now());
  auto stored = store.LoadSummaryState(job.id);
  if (!stored.ok()) return stored.status();
  const std::optional<Coverage> coverage = CoverageOf(*stored, job);
  if (coverage && (*stored)->spans == job.spans &&
      (*stored)->written_ns == job.written_ns) {
    made.current = true;
    made.state = **stored;
    return made;
  }
  // Before any span is read: what is written after it is new to the next
  // update.
  auto mark = store.WriteMark(job.id);
  if (!mark.ok()) return mark.status();
  // Steps after the last complete one summarised (all of them without a
  // readable state).
  int64_t from =
      coverage ? std::max(first_step, coverage->complete + 1) : first_step;
  from = std::min(from, last_step);
  // Blocks of about kBlockSpans spans, fewer within the budget; no block
  // holds more than the budget's spans, whatever the steps' sizes (one
  // step over it is refused).
  const int64_t max_spans = static_cast<int64_t>(budget / kBytesPerSpan);
  StepBlocks blocks(job.spans, last_step - first_step + 1,
                    std::min<int64_t>(kBlockSpans, max_spans));
  absl::Status fits = StepsFit(job, blocks.per_step(), budget);
  if (!fits.ok()) return fits;
  auto complete = LastCompleteStep(store, catalog, last_step);
  if (!complete.ok()) return complete.status();
  // Steps first..last (inclusive), a block at a time.
  auto summarise = [&](int64_t first, int64_t last) -> absl::Status {
    for (int64_t lo = first, hi; lo <= last; lo = hi + 1) {
      hi = std::min(last, lo + blocks.steps() - 1);
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
        return absl::CancelledError(absl::StrCat(
            "summarising job ", job.name, "'s steps: stopped at step ", lo));
      }
      std::optional<JobClocks> clocks;
      auto spans = JobSpans::LoadSteps(store, catalog, lo, hi, &clocks, nullptr,
                                       nullptr, nullptr, max_spans);
      if (absl::IsNotFound(spans.status())) continue;  // a gap in the steps
      if (absl::IsResourceExhausted(spans.status())) {
        if (!blocks.Halve(hi - lo + 1)) {
          return absl::ResourceExhaustedError(absl::StrCat(
              "job ", job.name, "'s step ", lo, " holds more than ", max_spans,
              " spans: summarising it would take more than this "
              "collector's --analysis-memory-mib ",
              budget >> 20, "; raise the limit"));
        }
        hi = lo - 1;  // the same steps again, fewer at a time
        continue;
      }
      if (!spans.ok()) return spans.status();
      blocks.Fitted();
      ++made.blocks;
      absl::Status block = SummariseBlock(store, catalog, lo, hi, first_step,
                                          last_step, *spans, &made);
      if (!block.ok()) return block;
    }
    return absl::OkStatus();
  };
  // Complete steps that spans written since the last update are tagged
  // with (an agent's spool sent late) are made again, first.
  if (coverage) {
    auto late = store.StepsWrittenAfter(job.id, coverage->mark, from - 1);
    if (!late.ok()) return late.status();
    int64_t next = first_step;  // the lowest step not yet made again
    for (const auto& [lo, hi] : *late) {
      const int64_t a = std::max(lo, next), b = std::min(hi, from - 1);
      if (a > b) continue;
      absl::Status made_late = summarise(a, b);
      if (!made_late.ok()) return made_late;
      next = b + 1;
    }
  }
  absl::Status made_new = summarise(from, last_step);
  if (!made_new.ok()) return made_new;
  made.remade_from = from;
  made.state.data =
      WriteCoverage(Coverage{std::max(*complete, from - 1), last_step, *mark});
  return made;
}

absl::StatusOr<v1::StepsReply> StepSummaries::Steps(Store& store,
                                                    const JobCatalog& catalog,
                                                    const Made& made,
                                                    std::optional<int32_t> rank,
                                                    bool means_only) {
  v1::StepsReply reply;
  reply.set_from_summaries(true);
  reply.set_summarised(static_cast<int64_t>(made.steps.size()));
  absl::Status read =
      ForEachStep(store, catalog, made, [&](const v1::StoredStep& step) {
        v1::StepSummary* summary = reply.add_steps();
        *summary = step.summary();
        if (!rank && !means_only) return;
        auto* ranks = summary->mutable_ranks();
        int kept = 0;
        for (int i = 0; i < ranks->size(); ++i) {
          if (rank && ranks->Get(i).rank() == *rank) {
            ranks->SwapElements(i, kept++);
          }
        }
        ranks->DeleteSubrange(kept, ranks->size() - kept);
      });
  if (!read.ok()) return read;
  return reply;
}

absl::StatusOr<v1::StragglersReply> StepSummaries::Stragglers(
    Store& store, const JobCatalog& catalog, const Made& made, int head) {
  std::map<int32_t, v1::RankWait> ranks;
  for (const ProcessInfo& p : catalog.processes) {
    if (p.rank >= 0) ranks[p.rank].set_rank(p.rank);
  }
  // The listed instances, most skewed first (earlier steps first on ties),
  // keeping at most `head`.
  std::vector<v1::CollectiveInstance> instances;
  v1::StragglersReply reply;
  reply.set_from_summaries(true);
  auto more_skewed = [](const v1::CollectiveInstance& a,
                        const v1::CollectiveInstance& b) {
    return a.skew_ns() > b.skew_ns();
  };
  absl::Status read =
      ForEachStep(store, catalog, made, [&](const v1::StoredStep& step) {
        const v1::StragglersReply& s = step.stragglers();
        reply.set_instances(reply.instances() + s.instances());
        reply.set_messages(reply.messages() + s.messages());
        for (const v1::RankWait& w : s.ranks()) {
          v1::RankWait& r = ranks[w.rank()];
          r.set_rank(w.rank());
          r.set_wait_ns(r.wait_ns() + w.wait_ns());
          r.set_collective_wait_ns(r.collective_wait_ns() +
                                   w.collective_wait_ns());
          r.set_late_sender_wait_ns(r.late_sender_wait_ns() +
                                    w.late_sender_wait_ns());
          r.set_instances_last(r.instances_last() + w.instances_last());
          r.set_waited_ns(r.waited_ns() + w.waited_ns());
        }
        for (const v1::CollectiveInstance& c : s.collectives()) {
          instances.push_back(c);
        }
        // Bounded: past twice `head`, keep the `head` most skewed.
        if (head > 0 && instances.size() > 2 * static_cast<size_t>(head)) {
          std::stable_sort(instances.begin(), instances.end(), more_skewed);
          instances.resize(head);
        }
      });
  if (!read.ok()) return read;
  ListStragglers(std::move(instances), head, std::move(ranks), &reply);
  return reply;
}

}  // namespace meridian
