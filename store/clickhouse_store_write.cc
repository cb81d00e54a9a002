// ClickHouseStore's writes (clickhouse_store.h): the batches of one Write
// as rows of each table, inserted in order, the commit records last.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "store/chunk_rows.h"
#include "store/clickhouse_store.h"
#include "store/clickhouse_store_parts.h"
#include "store/track_spans.h"
#include "wire/batch_spans.h"
#include "wire/batch_validator.h"
#include "wire/span_chunk.h"

namespace meridian {

absl::StatusOr<std::vector<BatchWriteResult>> ClickHouseStore::Write(
    absl::Span<const v1::Batch* const> batches,
    absl::Span<std::vector<SpanColumns>* const> decoded) {
  std::vector<BatchWriteResult> results(batches.size());
  if (batches.empty()) return results;
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(named_, " is open read-only"));
  }
  WriteRows rows;
  rows.attempt = static_cast<int64_t>(random_() >> 1) | 1;
  const int64_t now = Now();
  std::set<std::pair<std::string, int64_t>> stored;
  absl::Status status = ReadStored(batches, &stored, &rows);
  for (size_t i = 0; i < batches.size() && status.ok(); ++i) {
    const v1::Batch& batch = *batches[i];
    if (!stored
             .emplace(batch.agent_id(), static_cast<int64_t>(batch.batch_seq()))
             .second) {
      results[i].duplicate = true;
      continue;
    }
    status = WriteOne(batch, decoded.empty() ? nullptr : decoded[i], now, &rows,
                      &results[i]);
  }
  if (status.ok()) status = Insert(now, rows);
  if (!status.ok()) {
    // The cached ids may name rows that were never inserted.
    caches_ = std::make_unique<Caches>(max_cached_ids_);
    return status;
  }
  return results;
}

absl::Status ClickHouseStore::ReadStored(
    absl::Span<const v1::Batch* const> batches,
    std::set<std::pair<std::string, int64_t>>* stored, WriteRows* rows) {
  // Which batches are stored already (or repeat one of this call).
  std::vector<std::string> keys;
  for (const v1::Batch* batch : batches) {
    keys.push_back(absl::StrCat("(", Quote(batch->agent_id()), ",",
                                static_cast<int64_t>(batch->batch_seq()), ")"));
  }
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT DISTINCT agent, seq FROM batches WHERE (agent, seq) "
                   "IN (",
                   absl::StrJoin(keys, ","), ")"),
      [&](RowBinaryReader& r) {
        absl::string_view agent;
        int64_t seq;
        if (!r.String(&agent) || !r.Int64(&seq)) return false;
        stored->emplace(std::string(agent), seq);
        return true;
      });
  if (!read.ok()) return read;

  // What the rings' records already stored reach, as committed.
  std::vector<std::string> rings;
  for (const v1::Batch* batch : batches) {
    for (const v1::RingRange& range : batch->rings()) {
      rings.push_back(absl::StrCat("(",
                                   static_cast<int64_t>(range.incarnation()),
                                   ",", range.ring(), ")"));
    }
  }
  if (!rings.empty()) {
    const std::string in = absl::StrCat("(", absl::StrJoin(rings, ","), ")");
    read = ReadRows(
        client_.get(),
        absl::StrCat(
            "SELECT incarnation, ring, max(end_record) FROM ring_marks WHERE "
            "(incarnation, ring) IN ",
            in,
            " AND (agent, seq, attempt) GLOBAL IN (SELECT agent, seq, "
            "min(attempt) FROM batches WHERE agent GLOBAL IN (SELECT agent "
            "FROM ring_marks WHERE (incarnation, ring) IN ",
            in, ") GROUP BY agent, seq) GROUP BY incarnation, ring"),
        [&](RowBinaryReader& r) {
          int64_t incarnation, end;
          int32_t ring;
          if (!r.Int64(&incarnation) || !r.Int32(&ring) || !r.Int64(&end)) {
            return false;
          }
          rows->marks[{incarnation, ring}] = end;
          return true;
        });
    if (!read.ok()) return read;
  }
  return absl::OkStatus();
}

absl::Status ClickHouseStore::Insert(int64_t now, WriteRows& rows) {
  absl::Status status;
  // Everything but the commit record, then the record.
  const std::pair<const char*, RowBinaryWriter*> order[] = {
      {"strings", &rows.strings},
      {"ops", &rows.ops},
      {"processes", &rows.processes},
      {"tracks", &rows.tracks},
      {"clock_models", &rows.clock_models},
      {"op_totals", &rows.op_totals},
      {"process_totals", &rows.process_totals},
      {"chunks", &rows.chunks},
      {"ring_marks", &rows.ring_marks},
  };
  for (const auto& [table, writer] : order) {
    if (!status.ok()) break;
    if (!writer->bytes().empty()) {
      status = client_->InsertRowBinary(table, writer->bytes());
    }
  }
  if (status.ok() && before_commit_) status = before_commit_();
  if (status.ok() && !rows.commits.empty()) {
    last_now_ = std::max(last_now_, now + rows.parts);
    const int64_t committed = Now();  // after every row of the attempt
    for (const auto& [agent, seq, job, name, spans] : rows.commits) {
      rows.batches.String(agent);
      rows.batches.Int64(seq);
      rows.batches.Int64(rows.attempt);
      rows.batches.Int64(job);
      rows.batches.String(name);
      rows.batches.Int64(spans);
      rows.batches.Int64(committed);
    }
    status = client_->InsertRowBinary("batches", rows.batches.bytes());
  }
  return status;
}

// One batch as WriteOne turns it into rows: its strings', processes' and
// tracks' ids in the store, its jobs, and the rows it adds to.
struct ClickHouseStore::BatchRows {
  const v1::Batch& batch;
  int64_t now;
  WriteRows* rows;
  int64_t seq = static_cast<int64_t>(batch.batch_seq());
  std::vector<int64_t> string_id;
  struct ProcessRef {
    int64_t id;
    int64_t job;
  };
  std::vector<ProcessRef> process;
  std::vector<int64_t> track_id;
  // Where a row came from: its batch and this Write's attempt.
  void Origin(RowBinaryWriter* w) const {
    w->String(batch.agent_id());
    w->Int64(seq);
    w->Int64(rows->attempt);
  }
};

absl::Status ClickHouseStore::WriteOne(const v1::Batch& batch,
                                       std::vector<SpanColumns>* decoded,
                                       int64_t now, WriteRows* rows,
                                       BatchWriteResult* result) {
  BatchRows b{batch, now, rows};
  WriteStrings(b);
  WriteProcesses(b);
  WriteTracks(b);
  WriteClockModel(b);
  WriteTotals(b);
  auto stored = WriteSpans(b, decoded);
  if (!stored.ok()) return stored.status();
  result->spans_stored = *stored;
  return absl::OkStatus();
}

void ClickHouseStore::WriteStrings(BatchRows& b) {
  const v1::Batch& batch = b.batch;
  b.string_id.resize(batch.strings_size());
  for (int i = 0; i < batch.strings_size(); ++i) {
    const std::string& s = batch.strings(i);
    if (const int64_t* cached = caches_->strings.Find(s)) {
      b.string_id[i] = *cached;
      continue;
    }
    b.string_id[i] = StringId(s);
    caches_->strings.Insert(s, b.string_id[i]);
    b.rows->strings.Int64(b.string_id[i]);
    b.rows->strings.String(s);
  }
}

int64_t ClickHouseStore::OpId(BatchRows& b, int64_t category, int64_t name) {
  const auto key = std::make_pair(category, b.string_id[name]);
  if (const int64_t* cached = caches_->ops.Find(key)) return *cached;
  const int64_t id = OpIdOf(category, key.second);
  caches_->ops.Insert(key, id);
  b.rows->ops.Int64(id);
  b.rows->ops.Int32(static_cast<int32_t>(category));
  b.rows->ops.Int64(key.second);
  return id;
}

void ClickHouseStore::WriteProcesses(BatchRows& b) {
  const v1::Batch& batch = b.batch;
  WriteRows* rows = b.rows;
  b.process.resize(batch.processes_size());
  std::vector<std::pair<int64_t, std::string>> jobs;
  for (int i = 0; i < batch.processes_size(); ++i) {
    const v1::Process& p = batch.processes(i);
    const std::string& job_name = batch.strings(p.job());
    const int64_t job = JobId(job_name);
    RowBinaryWriter key;
    key.String("process");
    key.Int64(job);
    key.Int64(b.string_id[p.node()]);
    key.Int32(p.rank());
    key.Int32(p.local_rank());
    key.Int64(p.pid());
    b.process[i] = {ContentId(key), job};
    if (std::find_if(jobs.begin(), jobs.end(), [&](const auto& j) {
          return j.first == job;
        }) == jobs.end()) {
      jobs.emplace_back(job, job_name);
    }
    // A row again once the world size or the dropped count changes; a
    // reader takes each process's largest.
    const int64_t dropped = static_cast<int64_t>(p.dropped());
    if (!rows->processes_written
             .emplace(b.process[i].id, p.world_size(), dropped)
             .second) {
      continue;
    }
    rows->processes.Int64(job);
    rows->processes.Int64(b.process[i].id);
    rows->processes.Int64(b.string_id[p.node()]);
    rows->processes.Int32(p.rank());
    rows->processes.Int32(p.local_rank());
    rows->processes.Int64(p.pid());
    rows->processes.Int32(p.world_size());
    rows->processes.Int64(b.now);
    rows->processes.Int64(dropped);
  }
  // The batch's commit records, one per job.
  if (jobs.empty()) jobs.emplace_back(0, "");
  for (const auto& [job, name] : jobs) {
    rows->commits.emplace_back(batch.agent_id(), b.seq, job, name,
                               SpanCount(batch));
  }
}

void ClickHouseStore::WriteTracks(BatchRows& b) {
  const v1::Batch& batch = b.batch;
  WriteRows* rows = b.rows;
  b.track_id.resize(batch.tracks_size());
  for (int i = 0; i < batch.tracks_size(); ++i) {
    const v1::Track& t = batch.tracks(i);
    RowBinaryWriter key;
    key.String("track");
    key.Int64(b.process[t.process()].id);
    key.Int32(t.kind());
    key.Int64(t.id());
    b.track_id[i] = ContentId(key);
    if (!rows->tracks_written.insert(b.track_id[i]).second) continue;
    rows->tracks.Int64(b.process[t.process()].job);
    rows->tracks.Int64(b.track_id[i]);
    rows->tracks.Int64(b.process[t.process()].id);
    rows->tracks.Int32(t.kind());
    rows->tracks.Int64(t.id());
    rows->tracks.Int64(b.string_id[t.name()]);
    rows->tracks.Int64(b.now);
  }
}

void ClickHouseStore::WriteClockModel(BatchRows& b) {
  const v1::Batch& batch = b.batch;
  if (!HasClockModel(batch)) return;
  // Once per (agent, node, reference).
  const v1::ClockModel& clock = batch.clock();
  const std::string key =
      absl::StrCat(batch.agent_id(), "\x1f", batch.strings(clock.node()),
                   "\x1f", clock.reference_ns());
  if (caches_->clock_models.Find(key) != nullptr) return;
  caches_->clock_models.Insert(key, true);
  RowBinaryWriter& w = b.rows->clock_models;
  w.String(batch.agent_id());
  w.String(batch.strings(clock.node()));
  w.Int64(clock.reference_ns());
  w.Int64(clock.offset_ns());
  w.Int64(clock.drift_ppb());
  w.Int64(clock.uncertainty_ns());
}

void ClickHouseStore::WriteTotals(BatchRows& b) {
  const v1::Batch& batch = b.batch;
  for (const v1::ImportedOpTotals& op : batch.op_totals()) {
    RowBinaryWriter& w = b.rows->op_totals;
    w.Int64(b.process[op.process()].job);
    w.Int64(b.process[op.process()].id);
    w.Int64(OpId(b, op.category(), op.name()));
    w.Int64(op.calls());
    w.Int64(op.bytes());
    w.Int64(op.dur_ns());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int32(s.log2());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int64(s.calls());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int64(s.bytes());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int64(s.dur_ns());
    b.Origin(&w);
    w.Int64(b.now);
  }
  for (const v1::ImportedProcessTotals& p : batch.process_totals()) {
    RowBinaryWriter& w = b.rows->process_totals;
    w.Int64(b.process[p.process()].job);
    w.Int64(b.process[p.process()].id);
    w.Int64(p.comm_ns());
    w.Int64(p.elapsed_ns());
    w.String(batch.strings(p.source()));
    w.UInt8(static_cast<uint8_t>(
        (p.has_user_ns() ? 1 : 0) | (p.has_system_ns() ? 2 : 0) |
        (p.has_max_rss_bytes() ? 4 : 0) | (p.has_context_switches() ? 8 : 0)));
    w.Int64(p.user_ns());
    w.Int64(p.system_ns());
    w.Int64(p.max_rss_bytes());
    w.Int64(p.context_switches());
    b.Origin(&w);
    w.Int64(b.now);
  }
}

absl::StatusOr<int64_t> ClickHouseStore::WriteSpans(
    BatchRows& b, std::vector<SpanColumns>* decoded) {
  const v1::Batch& batch = b.batch;
  WriteRows* rows = b.rows;
  // Spans, less what the rings stored before; then the rings' new marks.
  std::vector<uint64_t> stored_below;
  for (const v1::RingRange& range : batch.rings()) {
    auto it = rows->marks.find(
        {static_cast<int64_t>(range.incarnation()), range.ring()});
    stored_below.push_back(
        it == rows->marks.end() ? 0 : static_cast<uint64_t>(it->second));
  }
  auto by_track =
      CollectTrackSpans(batch, decoded, stored_below, &caches_->wire);
  if (!by_track.ok()) return by_track.status();
  for (const v1::RingRange& range : batch.rings()) {
    int64_t& mark =
        rows->marks[{static_cast<int64_t>(range.incarnation()), range.ring()}];
    mark = std::max(mark, static_cast<int64_t>(range.end()));
    rows->ring_marks.Int64(static_cast<int64_t>(range.incarnation()));
    rows->ring_marks.Int32(range.ring());
    rows->ring_marks.Int64(static_cast<int64_t>(range.end()));
    b.Origin(&rows->ring_marks);
  }
  int64_t stored = 0;
  for (int t = 0; t < batch.tracks_size(); ++t) {
    SpanColumns& spans = (*by_track)[t];
    if (spans.size() == 0) continue;
    stored += static_cast<int64_t>(spans.size());
    absl::Status status = WriteTrackChunks(b, t, spans);
    if (!status.ok()) return status;
  }
  return stored;
}

absl::Status ClickHouseStore::WriteTrackChunks(BatchRows& b, int track,
                                               SpanColumns& spans) {
  // The chunk's own dictionaries: operations by id, arg strings by text.
  std::vector<int64_t> op_ids;
  std::vector<std::string> strings;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> op_index;
  absl::flat_hash_map<int64_t, uint32_t> string_index;
  for (size_t i = 0; i < spans.size(); ++i) {
    const auto key = std::make_pair(spans.category[i], spans.name[i]);
    auto [it, added] = op_index.try_emplace(key, op_ids.size());
    if (added) op_ids.push_back(OpId(b, key.first, key.second));
    spans.name[i] = it->second;
    spans.category[i] = 0;
  }
  const auto local = [&](int64_t batch_string) {
    auto [it, added] = string_index.try_emplace(batch_string, strings.size());
    if (added) strings.push_back(b.batch.strings(batch_string));
    return it->second;
  };
  for (ChunkArg& arg : spans.args) {
    arg.key = local(arg.key);
    if (arg.type == ChunkArg::Type::kString) arg.value = local(arg.value);
  }
  const int64_t job = b.process[b.batch.tracks(track).process()].job;
  WriteRows* rows = b.rows;
  return ForEachStoreChunk(spans, &caches_->piece,
                           [&](const SpanColumns& piece,
                               const StoreChunkBounds& bounds) -> absl::Status {
                             auto data = EncodeSpanChunk(piece);
                             if (!data.ok()) return data.status();
                             RowBinaryWriter& w = rows->chunks;
                             w.Int64(job);
                             w.Int64(b.track_id[track]);
                             w.Int64(bounds.first_start);
                             w.Int64(bounds.max_end);
                             w.Int64(bounds.max_dur);
                             w.Int64(bounds.count);
                             w.UInt8(bounds.has_step ? 1 : 0);
                             w.Int64(bounds.min_step);
                             w.Int64(bounds.max_step);
                             w.Int64(static_cast<int64_t>(data->size()));
                             b.Origin(&w);
                             // A chunk's time is unique to it and orders it by
                             // arrival (its id in a scan).
                             w.Int32(rows->parts);
                             w.Int64(b.now + rows->parts++);
                             w.ArraySize(op_ids.size());
                             for (int64_t id : op_ids) w.Int64(id);
                             w.ArraySize(strings.size());
                             for (const std::string& s : strings) w.String(s);
                             w.String(*data);
                             return absl::OkStatus();
                           });
}

}  // namespace meridian
