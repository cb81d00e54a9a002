// SqliteStore's writes (sqlite_store.h): a group of batches in one
// transaction, each batch's strings, job, processes, tracks, spans, clock
// models, agents and imported totals.
#include <time.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "store/sqlite_store.h"
#include "store/sqlite_store_parts.h"
#include "store/track_spans.h"
#include "wire/batch_spans.h"
#include "wire/batch_validator.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// Running totals of a job, added to its row after each write.
struct Totals {
  int64_t min_start = std::numeric_limits<int64_t>::max();
  int64_t max_end = std::numeric_limits<int64_t>::min();
  int64_t max_dur = 0;
  int64_t max_chunk = 0;
  int64_t spans = 0;
  int64_t chunks = 0;
  int64_t bytes = 0;
};

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

absl::StatusOr<std::vector<BatchWriteResult>> SqliteStore::Write(
    absl::Span<const v1::Batch* const> batches,
    absl::Span<std::vector<SpanColumns>* const> decoded) {
  std::vector<BatchWriteResult> results(batches.size());
  absl::Status status = Exec("BEGIN IMMEDIATE;");
  if (!status.ok()) return status;
  for (size_t i = 0; i < batches.size() && status.ok(); ++i) {
    status = WriteOne(*batches[i], decoded.empty() ? nullptr : decoded[i],
                      &results[i]);
  }
  if (status.ok()) status = Exec("COMMIT;");
  if (!status.ok()) {
    // Nothing of this call is stored; interned ids may name rolled-back rows.
    Exec("ROLLBACK;").IgnoreError();
    caches_ = std::make_unique<Caches>(max_cached_ids_);
    if (observer_ != nullptr) observer_->RolledBack();
    return status;
  }
  if (observer_ != nullptr) observer_->Committed();
  return results;
}

absl::Status SqliteStore::WriteOne(const v1::Batch& batch,
                                   std::vector<SpanColumns>* decoded,
                                   BatchWriteResult* result) {
  auto recorded = RecordBatch(batch);
  if (!recorded.ok()) return recorded.status();
  if (!*recorded) {
    result->duplicate = true;
    return absl::OkStatus();
  }
  absl::Status clock = StoreClockModel(batch);
  if (!clock.ok()) return clock;
  auto string_id = InternStrings(batch);
  if (!string_id.ok()) return string_id.status();
  if (observer_ != nullptr) observer_->Strings(batch, *string_id);
  auto process = StoreProcesses(batch, *string_id);
  if (!process.ok()) return process.status();
  auto track_id = StoreTracks(batch, *process, *string_id);
  if (!track_id.ok()) return track_id.status();
  if (absl::Status s = RecordJobAgents(batch, *process); !s.ok()) return s;
  if (absl::Status s = StoreTotals(batch, *process, *string_id); !s.ok()) {
    return s;
  }
  auto by_track = SpansByTrack(batch, decoded, *string_id);
  if (!by_track.ok()) return by_track.status();

  int64_t stored = 0;
  for (int t = 0; t < batch.tracks_size(); ++t) {
    SpanColumns& spans = (*by_track)[t];
    stored += static_cast<int64_t>(spans.size());
    if (spans.size() == 0) continue;
    const JobRef& job = (*process)[batch.tracks(t).process()].job;
    absl::Status status =
        WriteTrackSpans(job.id, job.epoch_ns, (*track_id)[t], &spans);
    if (!status.ok()) return status;
  }
  result->spans_stored = stored;
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteStore::RecordBatch(const v1::Batch& batch) {
  auto mark = Prepare(
      "INSERT OR IGNORE INTO batches(agent, seq, spans, stored_at_ns) "
      "VALUES(?1, ?2, ?3, ?4)");
  if (!mark.ok()) return mark.status();
  const int rc = (*mark)
                     ->Bind(1, batch.agent_id())
                     .Bind(2, static_cast<int64_t>(batch.batch_seq()))
                     .Bind(3, SpanCount(batch))
                     .Bind(4, NowNs())
                     .Step();
  (*mark)->Reset();
  if (rc != SQLITE_DONE) return Fail("recording a batch failed");
  return sqlite3_changes(db_) != 0;
}

// A node sends the same model with every batch until it fits a new one.
absl::Status SqliteStore::StoreClockModel(const v1::Batch& batch) {
  if (!HasClockModel(batch)) return absl::OkStatus();
  const v1::ClockModel& clock = batch.clock();
  auto node = InternString(batch.strings(clock.node()));
  if (!node.ok()) return node.status();
  auto insert = Prepare(
      "INSERT OR IGNORE INTO agent_clock_models VALUES(?1, ?2, ?3, ?4, ?5, "
      "?6)");
  if (!insert.ok()) return insert.status();
  const int rc = (*insert)
                     ->Bind(1, batch.agent_id())
                     .Bind(2, *node)
                     .Bind(3, clock.reference_ns())
                     .Bind(4, clock.offset_ns())
                     .Bind(5, clock.drift_ppb())
                     .Bind(6, clock.uncertainty_ns())
                     .Step();
  (*insert)->Reset();
  if (rc != SQLITE_DONE) return Fail("storing a clock model failed");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::InternStrings(
    const v1::Batch& batch) {
  std::vector<int64_t> string_id(batch.strings_size());
  for (int i = 0; i < batch.strings_size(); ++i) {
    auto id = InternString(batch.strings(i));
    if (!id.ok()) return id.status();
    string_id[i] = *id;
  }
  return string_id;
}

absl::StatusOr<SqliteStore::JobRef> SqliteStore::StoreJob(
    const std::string& name, int64_t epoch_ns) {
  if (const JobRef* cached = caches_->jobs.Find(name)) return *cached;
  auto insert = Prepare(
      "INSERT INTO jobs(name, epoch_ns, min_start_ns, max_end_ns, "
      "max_dur_ns, max_chunk_ns, spans, chunks) "
      "VALUES(?1, ?2, ?3, ?4, 0, 0, 0, 0) "
      "ON CONFLICT(name) DO UPDATE SET name=name RETURNING id, epoch_ns");
  if (!insert.ok()) return insert.status();
  (*insert)
      ->Bind(1, name)
      .Bind(2, epoch_ns)
      .Bind(3, std::numeric_limits<int64_t>::max())
      .Bind(4, std::numeric_limits<int64_t>::min());
  JobRef job;
  auto id = InsertReturningId(*insert, "creating a job failed", &job.epoch_ns);
  if (!id.ok()) return id.status();
  job.id = *id;
  caches_->jobs.Insert(name, job);
  return job;
}

absl::StatusOr<std::vector<SqliteStore::ProcessRef>>
SqliteStore::StoreProcesses(const v1::Batch& batch,
                            const std::vector<int64_t>& string_id) {
  // A new job's epoch is the earliest start in the batch that creates it.
  const int64_t batch_min_start = MinStart(batch);
  std::vector<ProcessRef> process(batch.processes_size());
  for (int i = 0; i < batch.processes_size(); ++i) {
    const v1::Process& p = batch.processes(i);
    auto job = StoreJob(batch.strings(p.job()), batch_min_start);
    if (!job.ok()) return job.status();
    auto key = std::make_tuple(job->id, string_id[p.node()],
                               static_cast<int64_t>(p.rank()),
                               static_cast<int64_t>(p.local_rank()), p.pid());
    const Caches::StoredProcess* cached = caches_->processes.Find(key);
    int64_t process_id = cached != nullptr ? cached->id : 0;
    // A process learns its world size at MPI_Init, after its first spans;
    // its dropped count grows (both: the validator bounds them).
    const int64_t dropped = static_cast<int64_t>(p.dropped());
    if (cached == nullptr || cached->world_size < p.world_size() ||
        cached->dropped < dropped) {
      auto insert = Prepare(
          "INSERT INTO processes(job, node, rank, local_rank, pid, world_size, "
          "dropped) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO UPDATE "
          "SET world_size=max(world_size, excluded.world_size), "
          "dropped=max(dropped, excluded.dropped) RETURNING id, world_size, "
          "dropped");
      if (!insert.ok()) return insert.status();
      (*insert)
          ->Bind(1, std::get<0>(key))
          .Bind(2, std::get<1>(key))
          .Bind(3, std::get<2>(key))
          .Bind(4, std::get<3>(key))
          .Bind(5, std::get<4>(key))
          .Bind(6, static_cast<int64_t>(p.world_size()))
          .Bind(7, dropped);
      int64_t stored[2] = {0, 0};
      auto id =
          InsertReturningId(*insert, "storing a process failed", stored, 2);
      if (!id.ok()) return id.status();
      caches_->processes.Insert(
          key, {*id, static_cast<int32_t>(stored[0]), stored[1]});
      process_id = *id;
    }
    process[i] = {process_id, *job};
  }
  return process;
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::StoreTracks(
    const v1::Batch& batch, const std::vector<ProcessRef>& process,
    const std::vector<int64_t>& string_id) {
  std::vector<int64_t> track_id(batch.tracks_size());
  for (int i = 0; i < batch.tracks_size(); ++i) {
    const v1::Track& t = batch.tracks(i);
    auto key = std::make_tuple(process[t.process()].id,
                               static_cast<int64_t>(t.kind()), t.id());
    const int64_t* cached = caches_->tracks.Find(key);
    int64_t id_of_track = cached != nullptr ? *cached : 0;
    if (cached == nullptr) {
      // The first name a track is stored with is kept.
      auto insert = Prepare(
          "INSERT INTO tracks(process, kind, ext_id, name) "
          "VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO UPDATE SET kind=kind "
          "RETURNING id");
      if (!insert.ok()) return insert.status();
      (*insert)
          ->Bind(1, std::get<0>(key))
          .Bind(2, std::get<1>(key))
          .Bind(3, std::get<2>(key))
          .Bind(4, string_id[t.name()]);
      auto id = InsertReturningId(*insert, "storing a track failed");
      if (!id.ok()) return id.status();
      caches_->tracks.Insert(key, *id);
      id_of_track = *id;
    }
    track_id[i] = id_of_track;
  }
  return track_id;
}

// The batch's spans per track (track_spans.h), then translated to the
// store's ids.
absl::StatusOr<std::vector<SpanColumns>> SqliteStore::SpansByTrack(
    const v1::Batch& batch, std::vector<SpanColumns>* decoded,
    const std::vector<int64_t>& string_id) {
  auto marks = RingMarks(batch);
  if (!marks.ok()) return marks.status();
  auto by_track = CollectTrackSpans(batch, decoded, *marks, &caches_->wire);
  if (!by_track.ok()) return by_track.status();
  for (SpanColumns& columns : *by_track) {
    absl::Status status = ToStoreIds(batch, string_id, &columns);
    if (!status.ok()) return status;
  }
  return by_track;
}

// For each of the batch's ring ranges, the end of what is already stored
// from that ring (0: nothing); then advances the marks to the ranges' ends.
absl::StatusOr<std::vector<uint64_t>> SqliteStore::RingMarks(
    const v1::Batch& batch) {
  std::vector<uint64_t> marks;
  if (batch.rings_size() == 0) return marks;
  auto select = Prepare(
      "SELECT end_record FROM ring_marks WHERE incarnation=?1 AND ring=?2");
  if (!select.ok()) return select.status();
  auto upsert = Prepare(
      "INSERT INTO ring_marks VALUES(?1, ?2, ?3) ON CONFLICT DO UPDATE SET "
      "end_record=max(end_record, excluded.end_record)");
  if (!upsert.ok()) return upsert.status();
  for (const v1::RingRange& range : batch.rings()) {
    const int64_t incarnation = static_cast<int64_t>(range.incarnation());
    int rc = (*select)->Bind(1, incarnation).Bind(2, range.ring()).Step();
    marks.push_back(rc == SQLITE_ROW ? static_cast<uint64_t>((*select)->Int(0))
                                     : 0);
    (*select)->Reset();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return Fail("reading a ring mark failed");
    }
    rc = (*upsert)
             ->Bind(1, incarnation)
             .Bind(2, range.ring())
             .Bind(3, static_cast<int64_t>(range.end()))
             .Step();
    (*upsert)->Reset();
    if (rc != SQLITE_DONE) return Fail("storing a ring mark failed");
  }
  return marks;
}

absl::StatusOr<int64_t> SqliteStore::OpId(int64_t category, int64_t name_id) {
  auto op_key = std::make_pair(category, name_id);
  if (const int64_t* cached = caches_->ops.Find(op_key)) return *cached;
  auto insert = Prepare(
      "INSERT INTO ops(category, name) VALUES(?1, ?2) "
      "ON CONFLICT DO UPDATE SET name=name RETURNING id");
  if (!insert.ok()) return insert.status();
  (*insert)->Bind(1, op_key.first).Bind(2, op_key.second);
  auto id = InsertReturningId(*insert, "storing an operation failed");
  if (!id.ok()) return id.status();
  caches_->ops.Insert(op_key, *id);
  return *id;
}

absl::Status SqliteStore::ToStoreIds(const v1::Batch& batch,
                                     const std::vector<int64_t>& string_id,
                                     SpanColumns* spans) {
  // Consecutive spans mostly share their operation, so one lookup serves a
  // run of them.
  int64_t last_category = -1, last_name = -1, last_op = 0;
  for (size_t i = 0; i < spans->size(); ++i) {
    if (spans->category[i] != last_category || spans->name[i] != last_name) {
      auto op = OpId(spans->category[i], string_id[spans->name[i]]);
      if (!op.ok()) return op.status();
      if (observer_ != nullptr) {
        observer_->Operation(*op, static_cast<v1::Category>(spans->category[i]),
                             batch.strings(spans->name[i]));
      }
      last_category = spans->category[i];
      last_name = spans->name[i];
      last_op = *op;
    }
    spans->name[i] = static_cast<uint32_t>(last_op);
    spans->category[i] = 0;
  }
  for (ChunkArg& arg : spans->args) {
    arg.key = static_cast<uint32_t>(string_id[arg.key]);
    if (arg.type == ChunkArg::Type::kString) arg.value = string_id[arg.value];
  }
  return absl::OkStatus();
}

// Stores one track's spans as chunks (ForEachStoreChunk), each a row with
// its time and step bounds.
absl::Status SqliteStore::WriteTrackSpans(int64_t job_id, int64_t epoch_ns,
                                          int64_t track, SpanColumns* spans) {
  auto insert = Prepare(
      "INSERT INTO chunks(job, track, first_start, max_end, count, min_step, "
      "max_step, data) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert.ok()) return insert.status();
  Totals totals;
  absl::Status stored = ForEachStoreChunk(
      *spans, &caches_->piece,
      [&](const SpanColumns& piece,
          const StoreChunkBounds& bounds) -> absl::Status {
        auto data = EncodeSpanChunk(piece);
        if (!data.ok()) return data.status();
        (*insert)
            ->Bind(1, job_id)
            .Bind(2, track)
            .Bind(3, bounds.first_start - epoch_ns)
            .Bind(4, bounds.max_end - epoch_ns)
            .Bind(5, bounds.count)
            .BindOptional(6, bounds.has_step, bounds.min_step)
            .BindOptional(7, bounds.has_step, bounds.max_step)
            .BindBlob(8, *data);
        const int rc = (*insert)->Step();
        (*insert)->Reset();
        if (rc != SQLITE_DONE) return Fail("storing a chunk failed");
        if (observer_ != nullptr) {
          observer_->Chunk(job_id, track, sqlite3_last_insert_rowid(db_),
                           piece);
        }
        totals.min_start = std::min(totals.min_start, bounds.first_start);
        totals.max_end = std::max(totals.max_end, bounds.max_end);
        totals.max_dur = std::max(totals.max_dur, bounds.max_dur);
        totals.max_chunk =
            std::max(totals.max_chunk, bounds.max_end - bounds.first_start);
        totals.spans += bounds.count;
        ++totals.chunks;
        totals.bytes += static_cast<int64_t>(data->size());
        return absl::OkStatus();
      });
  if (!stored.ok()) return stored;

  auto update = Prepare(
      "UPDATE jobs SET min_start_ns=min(min_start_ns, ?2), "
      "max_end_ns=max(max_end_ns, ?3), max_dur_ns=max(max_dur_ns, ?4), "
      "max_chunk_ns=max(max_chunk_ns, ?5), spans=spans+?6, "
      "chunks=chunks+?7, bytes=bytes+?8 WHERE id=?1");
  if (!update.ok()) return update.status();
  const int rc = (*update)
                     ->Bind(1, job_id)
                     .Bind(2, totals.min_start)
                     .Bind(3, totals.max_end)
                     .Bind(4, totals.max_dur)
                     .Bind(5, totals.max_chunk)
                     .Bind(6, totals.spans)
                     .Bind(7, totals.chunks)
                     .Bind(8, totals.bytes)
                     .Step();
  (*update)->Reset();
  if (rc != SQLITE_DONE) return Fail("updating job totals failed");
  return absl::OkStatus();
}

absl::Status SqliteStore::RecordJobAgents(
    const v1::Batch& batch, const std::vector<ProcessRef>& processes) {
  auto insert = Prepare("INSERT OR IGNORE INTO job_agents VALUES(?1, ?2)");
  if (!insert.ok()) return insert.status();
  auto written = Prepare("UPDATE jobs SET written_ns=?2 WHERE id=?1");
  if (!written.ok()) return written.status();
  const int64_t now = NowNs();
  int64_t last_job = -1;
  for (const ProcessRef& process : processes) {
    if (process.job.id == last_job) continue;
    last_job = process.job.id;
    int rc =
        (*insert)->Bind(1, process.job.id).Bind(2, batch.agent_id()).Step();
    (*insert)->Reset();
    if (rc != SQLITE_DONE) return Fail("recording a job's agent failed");
    rc = (*written)->Bind(1, process.job.id).Bind(2, now).Step();
    (*written)->Reset();
    if (rc != SQLITE_DONE) return Fail("recording a job's write time failed");
  }
  return absl::OkStatus();
}

// Totals replace what was stored for the same process (and operation):
// they are one tool's measurement of it, not increments.
absl::Status SqliteStore::StoreTotals(const v1::Batch& batch,
                                      const std::vector<ProcessRef>& process,
                                      const std::vector<int64_t>& string_id) {
  if (batch.op_totals_size() == 0 && batch.process_totals_size() == 0) {
    return absl::OkStatus();
  }
  auto op_row = Prepare(
      "INSERT OR REPLACE INTO op_totals(process, op, calls, bytes, dur_ns) "
      "VALUES(?1, ?2, ?3, ?4, ?5)");
  auto clear_sizes =
      Prepare("DELETE FROM op_size_totals WHERE process=?1 AND op=?2");
  auto size_row = Prepare(
      "INSERT INTO op_size_totals(process, op, log2, calls, bytes, dur_ns) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  auto process_row = Prepare(
      "INSERT OR REPLACE INTO process_totals(process, comm_ns, elapsed_ns, "
      "source, user_ns, system_ns, max_rss_bytes, context_switches) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (const auto* s : {&op_row, &clear_sizes, &size_row, &process_row}) {
    if (!s->ok()) return s->status();
  }
  const auto step = [&](Statement* statement) {
    const int rc = statement->Step();
    statement->Reset();
    return rc == SQLITE_DONE ? absl::OkStatus()
                             : Fail("storing imported totals failed");
  };
  for (const v1::ImportedOpTotals& op : batch.op_totals()) {
    const int64_t process_id = process[op.process()].id;
    auto op_id = OpId(op.category(), string_id[op.name()]);
    if (!op_id.ok()) return op_id.status();
    (*op_row)
        ->Bind(1, process_id)
        .Bind(2, *op_id)
        .Bind(3, op.calls())
        .Bind(4, op.bytes())
        .Bind(5, op.dur_ns());
    if (absl::Status s = step(*op_row); !s.ok()) return s;
    (*clear_sizes)->Bind(1, process_id).Bind(2, *op_id);
    if (absl::Status s = step(*clear_sizes); !s.ok()) return s;
    for (const v1::ImportedSizeTotals& size : op.sizes()) {
      (*size_row)
          ->Bind(1, process_id)
          .Bind(2, *op_id)
          .Bind(3, static_cast<int64_t>(size.log2()))
          .Bind(4, size.calls())
          .Bind(5, size.bytes())
          .Bind(6, size.dur_ns());
      if (absl::Status s = step(*size_row); !s.ok()) return s;
    }
  }
  for (const v1::ImportedProcessTotals& p : batch.process_totals()) {
    (*process_row)
        ->Bind(1, process[p.process()].id)
        .Bind(2, p.comm_ns())
        .Bind(3, p.elapsed_ns())
        .Bind(4, string_id[p.source()])
        .BindOptional(5, p.has_user_ns(), p.user_ns())
        .BindOptional(6, p.has_system_ns(), p.system_ns())
        .BindOptional(7, p.has_max_rss_bytes(), p.max_rss_bytes())
        .BindOptional(8, p.has_context_switches(), p.context_switches());
    if (absl::Status s = step(*process_row); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace meridian
