#include "store/store_copy.h"

#include <map>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "wire/batch_builder.h"
#include "wire/batch_validator.h"

namespace meridian {
namespace {

// Spans per batch, and batches per Write.
constexpr size_t kBatchSpans = 20000;
constexpr size_t kWriteBatches = 8;

// The agent id of a job's copy: stable across runs, within the 256 bytes an
// agent id may have.
std::string CopyAgent(const std::string& job) {
  if (job.size() <= 200) return "migrate/" + job;
  uint64_t h = 1469598103934665603ull;  // FNV-1a: only tells long names apart
  for (unsigned char c : job) h = (h ^ c) * 1099511628211ull;
  return absl::StrCat("migrate/", job.substr(0, 180), "/", absl::Hex(h));
}

// Validates and writes batches, counting what they did.
class Writer {
 public:
  Writer(Store* to, CopyReport* report) : to_(to), report_(report) {}

  absl::Status Add(v1::Batch batch) {
    pending_.push_back(std::move(batch));
    return pending_.size() >= kWriteBatches ? Flush() : absl::OkStatus();
  }

  absl::Status Flush() {
    if (pending_.empty()) return absl::OkStatus();
    std::vector<std::vector<SpanColumns>> decoded(pending_.size());
    std::vector<const v1::Batch*> batches;
    std::vector<std::vector<SpanColumns>*> columns;
    for (size_t i = 0; i < pending_.size(); ++i) {
      BatchRepairs repairs;
      absl::Status valid = ValidateBatch(&pending_[i], &decoded[i], &repairs);
      if (!valid.ok()) {
        return absl::Status(
            valid.code(),
            absl::StrCat("a copied batch is not valid: ", valid.message()));
      }
      batches.push_back(&pending_[i]);
      columns.push_back(&decoded[i]);
    }
    auto results = to_->Write(batches, columns);
    if (!results.ok()) return results.status();
    for (const BatchWriteResult& r : *results) {
      ++report_->batches;
      if (r.duplicate) ++report_->duplicates;
      report_->spans += r.spans_stored;
    }
    pending_.clear();
    return absl::OkStatus();
  }

 private:
  Store* to_;
  CopyReport* report_;
  std::vector<v1::Batch> pending_;
};

// One job's copy: its catalog declared to a batch builder of its own
// agent id, then its clock models, spans and imported totals sent through
// the writer, in that order.
class JobCopy {
 public:
  JobCopy(const JobInfo& job, Writer* writer, const CopyBounds& bounds)
      : job_(job),
        writer_(writer),
        bounds_(bounds),
        builder_(CopyAgent(job.name)) {}

  absl::Status Run(Store& from) {
    auto catalog = from.LoadCatalog(job_.name);
    if (!catalog.ok()) return catalog.status();
    Declare(*catalog);
    absl::Status step = CopyClockModels(from);
    if (step.ok()) step = CopySpans(from, catalog->job);
    if (step.ok()) step = CopyTotals(from);
    return step;
  }

 private:
  void Declare(const JobCatalog& catalog) {
    for (const ProcessInfo& p : catalog.processes) {
      process_handle_[p.id] = builder_.DeclareProcess(
          {job_.name, p.node, p.rank, p.local_rank, p.pid, job_.world_size,
           static_cast<uint64_t>(p.dropped)});
      nodes_.insert(p.node);
    }
    for (const TrackInfo& t : catalog.tracks) {
      auto process = process_handle_.find(t.process_id);
      if (process == process_handle_.end()) continue;
      track_handle_[t.id] =
          builder_.DeclareTrack(process->second, t.kind, t.ext_id, t.name);
    }
    for (const OpInfo& op : catalog.ops) ops_[op.id] = op;
  }

  // Clock models first, one batch each (the job's span batches, from the
  // same agent, tie them to the job).
  absl::Status CopyClockModels(Store& from) {
    for (const std::string& node : nodes_) {
      if (bounds_.check) {
        absl::Status go_on = bounds_.check();
        if (!go_on.ok()) return go_on;
      }
      auto models = from.LoadClockModels(node, job_.id);
      if (!models.ok()) return models.status();
      for (const NodeClockModel& m : *models) {
        const uint32_t node_index = builder_.String(node);
        v1::Batch batch = builder_.Take();
        v1::ClockModel* clock = batch.mutable_clock();
        clock->set_node(node_index);
        clock->set_reference_ns(m.reference_ns);
        clock->set_offset_ns(m.offset_ns);
        clock->set_drift_ppb(m.drift_ppb);
        clock->set_uncertainty_ns(m.uncertainty_ns);
        absl::Status added = writer_->Add(std::move(batch));
        if (!added.ok()) return added;
      }
    }
    return absl::OkStatus();
  }

  absl::Status CopySpans(Store& from, const JobInfo& stored) {
    absl::Status failed;
    absl::Status scanned = from.Scan(stored, {}, [&](const StoredSpan& s) {
      // A job that grew since it was listed (a write the snapshot lets in).
      if (bounds_.max_spans > 0 && ++scanned_ > bounds_.max_spans) {
        failed = absl::ResourceExhaustedError(absl::StrCat(
            "it has more spans than the copy's bound of ", bounds_.max_spans));
        return false;
      }
      failed = AddSpan(s);
      if (failed.ok() && builder_.spans() >= kBatchSpans) {
        failed = writer_->Add(builder_.Take());
        if (failed.ok() && bounds_.check) failed = bounds_.check();
      }
      return failed.ok();
    });
    if (!scanned.ok()) return scanned;
    if (!failed.ok()) return failed;
    if (builder_.spans() == 0) return absl::OkStatus();
    return writer_->Add(builder_.Take());
  }

  absl::Status AddSpan(const StoredSpan& s) {
    auto track = track_handle_.find(s.track_id);
    auto op = ops_.find(s.op_id);
    if (track == track_handle_.end() || op == ops_.end()) {
      return absl::DataLossError(absl::StrCat(
          "job ", job_.name, ": a span of an unknown track or operation"));
    }
    auto [columns, i] =
        builder_.AddColumnSpan(track->second, -1, 0, op->second.category,
                               op->second.name, s.start_ns, s.dur_ns);
    columns->kind[i] = s.kind;
    columns->bytes[i] = s.bytes;
    uint8_t flags = 0;
    if (s.peer) flags |= SpanColumns::kHasPeer, columns->peer[i] = *s.peer;
    if (s.tag) flags |= SpanColumns::kHasTag, columns->tag[i] = *s.tag;
    if (s.seq) flags |= SpanColumns::kHasSeq, columns->seq[i] = *s.seq;
    if (s.step) flags |= SpanColumns::kHasStep, columns->step[i] = *s.step;
    if (s.partition) {
      flags |= SpanColumns::kHasPartition;
      columns->partition[i] = *s.partition;
    }
    columns->flags[i] = flags;
    columns->comm[i] = s.comm;
    columns->comm_size[i] = s.comm_size;
    columns->correlation[i] = s.correlation;
    columns->value[i] = s.value;
    for (const StoredArg& arg : s.args) columns->AddArg(ArgOf(arg));
    return absl::OkStatus();
  }

  ChunkArg ArgOf(const StoredArg& arg) {
    ChunkArg a;
    a.key = builder_.String(arg.key);
    switch (arg.type) {
      case StoredArg::Type::kString:
        a.type = ChunkArg::Type::kString;
        a.value = builder_.String(arg.str);
        break;
      case StoredArg::Type::kInt:
        a.type = ChunkArg::Type::kInt;
        a.value = arg.int_value;
        break;
      case StoredArg::Type::kReal:
        a.type = ChunkArg::Type::kReal;
        a.real = arg.real_value;
        break;
    }
    return a;
  }

  // Imported statistics last.
  absl::Status CopyTotals(Store& from) {
    auto totals = from.LoadTotals(job_.id);
    if (!totals.ok()) return totals.status();
    if (totals->ops.empty() && totals->processes.empty()) {
      return absl::OkStatus();
    }
    for (const StoredOpTotals& t : totals->ops) {
      auto process = process_handle_.find(t.process_id);
      auto op = ops_.find(t.op_id);
      if (process == process_handle_.end() || op == ops_.end()) continue;
      v1::ImportedOpTotals* out = builder_.AddOpTotals(
          process->second, op->second.category, op->second.name);
      out->set_calls(t.calls);
      out->set_bytes(t.bytes);
      out->set_dur_ns(t.dur_ns);
      for (const StoredOpTotals::Size& size : t.sizes) {
        v1::ImportedSizeTotals* s = out->add_sizes();
        s->set_log2(size.log2);
        s->set_calls(size.calls);
        s->set_bytes(size.bytes);
        s->set_dur_ns(size.dur_ns);
      }
    }
    for (const StoredProcessTotals& t : totals->processes) {
      auto process = process_handle_.find(t.process_id);
      if (process == process_handle_.end()) continue;
      v1::ImportedProcessTotals* out =
          builder_.AddProcessTotals(process->second, t.source);
      CopyProcessTotals(t, out);
    }
    return writer_->Add(builder_.Take());
  }

  const JobInfo& job_;
  Writer* writer_;
  const CopyBounds& bounds_;
  int64_t scanned_ = 0;
  BatchBuilder builder_;
  absl::flat_hash_map<int64_t, int> process_handle_, track_handle_;
  absl::flat_hash_map<int64_t, OpInfo> ops_;
  std::set<std::string> nodes_;
};

}  // namespace

absl::StatusOr<CopyReport> CopyStore(
    Store& from, Store& to,
    const std::function<void(const std::string& job, int64_t spans)>& progress,
    const CopyBounds& bounds) {
  absl::Status snapshot = from.BeginSnapshot();
  if (!snapshot.ok()) return snapshot;
  absl::StatusOr<std::vector<JobInfo>> jobs;
  if (bounds.only) {
    auto catalog = from.LoadCatalog(*bounds.only);
    if (absl::IsNotFound(catalog.status())) return CopyReport{};
    if (!catalog.ok()) return catalog.status();
    jobs = std::vector<JobInfo>{catalog->job};
  } else {
    jobs = from.ListJobs();
  }
  if (!jobs.ok()) return jobs.status();
  CopyReport report;
  Writer writer(&to, &report);
  for (const JobInfo& job : *jobs) {
    if (bounds.which && !bounds.which(job.name)) continue;
    if (bounds.max_spans > 0 && job.spans > bounds.max_spans) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "job ", job.name, " has ", job.spans,
          " spans, more than the copy's bound of ", bounds.max_spans));
    }
    if (bounds.check) {
      absl::Status go_on = bounds.check();
      if (!go_on.ok()) return go_on;
    }
    const int64_t before = report.spans;
    absl::Status copied = JobCopy(job, &writer, bounds).Run(from);
    if (copied.ok()) copied = writer.Flush();
    if (!copied.ok()) {
      return absl::Status(copied.code(), absl::StrCat("copying job ", job.name,
                                                      ": ", copied.message()));
    }
    ++report.jobs;
    if (progress) progress(job.name, report.spans - before);
  }
  return report;
}

}  // namespace meridian
