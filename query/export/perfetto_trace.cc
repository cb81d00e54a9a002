#include "query/export/perfetto_trace.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "query/export/span_args.h"
#include "query/export/trace_names.h"
#include "query/ops/category.h"
#include "query/ops/mpi_args.h"

namespace meridian {
namespace {

// Field numbers of Perfetto's trace protos (protos/perfetto/trace/).
namespace trace {
constexpr uint32_t kPacket = 1;
}  // namespace trace
namespace packet {
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kSequenceId = 10;  // trusted_packet_sequence_id
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kFirstPacketOnSequence = 87;
constexpr uint64_t kIncrementalStateCleared = 1;
constexpr uint64_t kNeedsIncrementalState = 2;
}  // namespace packet
namespace clock_snapshot {
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
constexpr uint32_t kClockId = 1;         // Clock
constexpr uint32_t kClockTimestamp = 2;  // Clock
constexpr uint64_t kRealtime = 1;
constexpr uint64_t kBoottime = 6;
}  // namespace clock_snapshot
namespace descriptor {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
constexpr uint64_t kExplicitOrder = 3;
constexpr uint32_t kPid = 1;          // ProcessDescriptor, ThreadDescriptor
constexpr uint32_t kProcessName = 6;  // ProcessDescriptor
constexpr uint32_t kTid = 2;          // ThreadDescriptor
constexpr uint32_t kThreadName = 5;   // ThreadDescriptor
constexpr int64_t kCounterRank = 3;   // after the track kinds (0, 1, 2)
constexpr int64_t kRankPerKind = 1000000;
}  // namespace descriptor
namespace event {
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kName = 23;
constexpr uint32_t kDoubleCounterValue = 44;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kSliceBegin = 1;
constexpr uint32_t kSliceEnd = 2;
constexpr uint32_t kInstant = 3;
constexpr uint32_t kCounter = 4;
}  // namespace event
namespace annotation {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kIntValue = 4;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kPointerValue = 7;
constexpr uint32_t kName = 10;
}  // namespace annotation
namespace interned {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kIid = 1;   // each entry
constexpr uint32_t kName = 2;  // each entry
}  // namespace interned

// The names of the keys after the span fields' (whose are SpanArgName's).
constexpr absl::string_view kTrackKeyNames[] = {"rank", "class", "category"};
constexpr absl::string_view kCriticalPathCategory = "critical_path";

// splitmix64's finalizer: a bijection that spreads every input bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

uint64_t Combine(uint64_t hash, uint64_t value) {
  return Mix(hash ^
             (value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2)));
}

uint64_t NonZero(uint64_t id) { return id != 0 ? id : 1; }

uint64_t Timestamp(int64_t ns) {
  return ns > 0 ? static_cast<uint64_t>(ns) : 0;
}

}  // namespace

uint64_t PerfettoTraceWriter::LaunchFlowId(int64_t pid, uint64_t correlation) {
  return NonZero(
      Combine(Combine(Mix('L'), static_cast<uint64_t>(pid)), correlation));
}

uint64_t PerfettoTraceWriter::MessageFlowId(uint64_t comm, int32_t source,
                                            int32_t destination, int32_t tag,
                                            uint64_t ordinal) {
  uint64_t h = Combine(Mix('M'), comm);
  h = Combine(h, static_cast<uint32_t>(source));
  h = Combine(h, static_cast<uint32_t>(destination));
  h = Combine(h, static_cast<uint32_t>(tag));
  return NonZero(Combine(h, ordinal));
}

uint64_t PerfettoTraceWriter::CollectiveFlowId(uint64_t comm, uint64_t seq) {
  return NonZero(Combine(Combine(Mix('C'), comm), seq));
}

PerfettoTraceWriter::PerfettoTraceWriter(const JobCatalog& catalog,
                                         const SpanSelection& selection,
                                         Sink sink, size_t chunk_bytes)
    : catalog_(catalog),
      selection_(selection),
      origin_ns_(catalog.job.min_start_ns),
      sink_(std::move(sink)),
      chunk_bytes_(chunk_bytes) {
  ops_.reserve(catalog_.ops.size());
  for (const OpInfo& info : catalog_.ops) {
    Op op;
    op.info = &info;
    op.role = RoleOf(info.category, info.name);
    op.nonblocking = IsAsynchronous(info.category, info.name);
    op_index_[info.id] = ops_.size();
    ops_.push_back(op);
  }
}

void PerfettoTraceWriter::Flush() {
  if (!stopped_ && !buffer_.empty() && !sink_(buffer_)) stopped_ = true;
  buffer_.clear();
}

void PerfettoTraceWriter::WritePacket(int64_t ts, uint32_t field,
                                      absl::string_view payload) {
  const size_t packet = out_.BeginMessage(trace::kPacket);
  out_.Varint(packet::kTimestamp, Timestamp(ts));
  out_.Varint(packet::kSequenceId, kSequenceId);
  out_.Varint(packet::kSequenceFlags, packet::kNeedsIncrementalState);
  if (!pending_.empty()) {
    const size_t data = out_.BeginMessage(packet::kInternedData);
    for (const Interned& entry : pending_) {
      const size_t m = out_.BeginMessage(entry.table);
      out_.Varint(interned::kIid, entry.iid);
      out_.Bytes(interned::kName, entry.name);
      out_.EndMessage(m);
    }
    out_.EndMessage(data);
    pending_.clear();
  }
  out_.Bytes(field, payload);
  out_.EndMessage(packet);
}

void PerfettoTraceWriter::WriteClockSnapshot() {
  // The sequence's first packet: it clears (starts) the incremental state.
  const size_t packet = out_.BeginMessage(trace::kPacket);
  out_.Varint(packet::kTimestamp, Timestamp(origin_ns_));
  out_.Varint(packet::kSequenceId, kSequenceId);
  out_.Varint(packet::kSequenceFlags, packet::kIncrementalStateCleared |
                                          packet::kNeedsIncrementalState);
  out_.Varint(packet::kFirstPacketOnSequence, 1);
  const size_t snapshot = out_.BeginMessage(packet::kClockSnapshot);
  for (uint64_t clock :
       {clock_snapshot::kBoottime, clock_snapshot::kRealtime}) {
    const size_t m = out_.BeginMessage(clock_snapshot::kClocks);
    out_.Varint(clock_snapshot::kClockId, clock);
    out_.Varint(clock_snapshot::kClockTimestamp, Timestamp(origin_ns_));
    out_.EndMessage(m);
  }
  out_.Varint(clock_snapshot::kPrimaryTraceClock, clock_snapshot::kBoottime);
  out_.EndMessage(snapshot);
  out_.EndMessage(packet);
}

uint64_t PerfettoTraceWriter::DescribeProcess(int64_t pid,
                                              absl::string_view name) {
  const uint64_t uuid = next_uuid_++;
  payload_.clear();
  ProtoEncoder d(&payload_);
  d.Varint(descriptor::kUuid, uuid);
  const size_t process = d.BeginMessage(descriptor::kProcess);
  d.Int(descriptor::kPid, pid);
  d.Bytes(descriptor::kProcessName, name);
  d.EndMessage(process);
  d.Varint(descriptor::kChildOrdering, descriptor::kExplicitOrder);
  WritePacket(origin_ns_, packet::kTrackDescriptor, payload_);
  return uuid;
}

void PerfettoTraceWriter::Begin() {
  buffer_.clear();
  WriteClockSnapshot();
  absl::flat_hash_map<int64_t, const ProcessInfo*> process_by_id;
  absl::flat_hash_map<int64_t, uint64_t> process_uuid;
  for (const ProcessInfo& p : catalog_.processes) {
    process_by_id[p.id] = &p;
    if (!selection_.SelectsProcess(p.id)) continue;
    process_uuid[p.id] = DescribeProcess(TracePid(p), TraceProcessName(p));
  }
  // Tracks come ordered by process, kind, ext_id: number them per process
  // as the Chrome export numbers its tids.
  int64_t last_process = -1;
  int64_t position = 0;
  for (const TrackInfo& t : catalog_.tracks) {
    if (t.process_id != last_process) {
      last_process = t.process_id;
      position = 0;
    }
    ++position;
    if (!selection_.SelectsProcess(t.process_id)) continue;
    const ProcessInfo& p = *process_by_id[t.process_id];
    Track track;
    track.pid = TracePid(p);
    track.rank = p.rank;
    track.process_id = p.id;
    track.process_uuid = process_uuid[p.id];
    track.kind = t.kind;
    track.name = TraceTrackName(t);
    track.lanes.emplace_back();
    track.lanes[0].uuid = next_uuid_++;

    payload_.clear();
    ProtoEncoder d(&payload_);
    d.Varint(descriptor::kUuid, track.lanes[0].uuid);
    d.Varint(descriptor::kParentUuid, track.process_uuid);
    if (t.kind == v1::TRACK_KIND_THREAD) {
      const size_t thread = d.BeginMessage(descriptor::kThread);
      d.Int(descriptor::kPid, track.pid);
      d.Int(descriptor::kTid, t.ext_id);
      d.Bytes(descriptor::kThreadName, track.name);
      d.EndMessage(thread);
    } else {
      d.Bytes(descriptor::kName, track.name);
    }
    d.Int(descriptor::kSiblingOrderRank,
          static_cast<int64_t>(t.kind) * descriptor::kRankPerKind + position);
    WritePacket(origin_ns_, packet::kTrackDescriptor, payload_);

    track_index_[t.id] = tracks_.size();
    tracks_.push_back(std::move(track));
  }
  Flush();
}

void PerfettoTraceWriter::AddLane(Track& track, int64_t ts) {
  const int64_t k = static_cast<int64_t>(track.lanes.size());
  Lane lane;
  lane.uuid = next_uuid_++;
  payload_.clear();
  ProtoEncoder d(&payload_);
  d.Varint(descriptor::kUuid, lane.uuid);
  d.Varint(descriptor::kParentUuid, track.lanes[0].uuid);
  d.Bytes(descriptor::kName, absl::StrCat(track.name, " (lane ", k, ")"));
  d.Int(descriptor::kSiblingOrderRank, k);
  WritePacket(ts, packet::kTrackDescriptor, payload_);
  track.lanes.push_back(std::move(lane));
}

void PerfettoTraceWriter::WriteSliceEnd(uint64_t uuid, int64_t ts) {
  const size_t packet = out_.BeginMessage(trace::kPacket);
  out_.Varint(packet::kTimestamp, Timestamp(ts));
  out_.Varint(packet::kSequenceId, kSequenceId);
  out_.Varint(packet::kSequenceFlags, packet::kNeedsIncrementalState);
  const size_t e = out_.BeginMessage(packet::kTrackEvent);
  out_.Varint(event::kType, event::kSliceEnd);
  out_.Varint(event::kTrackUuid, uuid);
  out_.EndMessage(e);
  out_.EndMessage(packet);
}

void PerfettoTraceWriter::CloseEndedSlices(Lane& lane, int64_t ts) {
  // Inner slices end no later than outer ones: the ENDs go out in time
  // order, innermost first.
  while (!lane.open_ends.empty() && lane.open_ends.back() <= ts) {
    lane.last_ts = lane.open_ends.back();
    WriteSliceEnd(lane.uuid, lane.last_ts);
    lane.open_ends.pop_back();
  }
}

size_t PerfettoTraceWriter::PlaceOnLane(Track& track, int64_t start_ns,
                                        int64_t end_ns, bool nonblocking) {
  for (size_t k = nonblocking ? 1 : 0; k < kMaxLanes; ++k) {
    if (k == track.lanes.size()) AddLane(track, start_ns);  // empty: fits
    Lane& lane = track.lanes[k];
    CloseEndedSlices(lane, start_ns);
    if (start_ns >= lane.last_ts &&
        (lane.open_ends.empty() || end_ns <= lane.open_ends.back())) {
      return k;
    }
  }
  return kMaxLanes;  // none: the header says what becomes of the span
}

uint64_t PerfettoTraceWriter::CategoryIid(absl::string_view category) {
  auto [it, inserted] = category_iid_.try_emplace(category, next_category_iid_);
  if (inserted) {
    pending_.push_back(
        {interned::kEventCategories, next_category_iid_++, category});
  }
  return it->second;
}

uint64_t PerfettoTraceWriter::KeyIid(absl::string_view key) {
  auto it = key_iid_.find(key);
  if (it != key_iid_.end()) return it->second;
  if (key_iid_.size() >= kMaxInternedKeys) return 0;
  key_iid_.emplace(std::string(key.data(), key.size()), next_key_iid_);
  pending_.push_back({interned::kDebugAnnotationNames, next_key_iid_, key});
  return next_key_iid_++;
}

uint64_t PerfettoTraceWriter::KeyIid(Key key) {
  uint64_t& iid = fixed_key_iid_[key];
  if (iid == 0) {
    iid = KeyIid(key <= kCorrelation ? SpanArgName(static_cast<SpanArgKey>(key))
                                     : kTrackKeyNames[key - kRank]);
  }
  return iid;
}

size_t PerfettoTraceWriter::BeginAnnotation(ProtoEncoder* e, uint64_t iid,
                                            absl::string_view key) {
  const size_t m = e->BeginMessage(event::kDebugAnnotations);
  if (iid != 0) {
    e->Varint(annotation::kNameIid, iid);
  } else {
    e->Bytes(annotation::kName, key);
  }
  return m;
}

void PerfettoTraceWriter::WriteAnnotations(ProtoEncoder* e,
                                           const StoredSpan& span) {
  static_assert(static_cast<int>(kCorrelation) ==
                static_cast<int>(SpanArgKey::kCorrelation));
  // Numbers as signed integers, counts as unsigned, 64-bit ids as
  // pointers (Perfetto shows them in hex).
  struct Annotations {
    PerfettoTraceWriter* writer;
    ProtoEncoder* e;
    void Number(SpanArgKey k, uint32_t field, uint64_t value) {
      const size_t m =
          writer->BeginAnnotation(e, writer->KeyIid(static_cast<Key>(k)), "");
      e->Varint(field, value);
      e->EndMessage(m);
    }
    void Int(SpanArgKey k, int64_t v) {
      Number(k, annotation::kIntValue, static_cast<uint64_t>(v));
    }
    void Count(SpanArgKey k, uint64_t v) {
      Number(k, annotation::kUintValue, v);
    }
    void Id(SpanArgKey k, uint64_t v) {
      Number(k, annotation::kPointerValue, v);
    }
    void Arg(const StoredArg& arg) {
      const size_t m =
          writer->BeginAnnotation(e, writer->KeyIid(arg.key), arg.key);
      switch (arg.type) {
        case StoredArg::Type::kString:
          e->Bytes(annotation::kStringValue, arg.str);
          break;
        case StoredArg::Type::kInt:
          e->Int(annotation::kIntValue, arg.int_value);
          break;
        case StoredArg::Type::kReal:
          e->Double(annotation::kDoubleValue, arg.real_value);
          break;
      }
      e->EndMessage(m);
    }
  } annotations{this, e};
  ForEachSpanArg(span, annotations);
}

void PerfettoTraceWriter::WriteFlows(ProtoEncoder* e, const Track& track,
                                     const Op& op, const StoredSpan& span) {
  if (span.correlation != 0 && span.kind == v1::SPAN_KIND_COMPLETE &&
      track.kind != v1::TRACK_KIND_QUEUE) {
    e->Fixed64(event::kFlowIds, LaunchFlowId(track.pid, span.correlation));
  }
  if (message_flows_) {
    const std::optional<ReceiveHalf> receive =
        op.role == SpanRole::kSendRecv ? SendrecvReceive(span) : std::nullopt;
    messages_.ForEachEnd(
        op.role, track.rank, span.peer, span.tag, receive, span.comm,
        [&](const MessageEnd& m) {
          e->Fixed64(
              event::kFlowIds,
              MessageFlowId(m.comm, m.source, m.destination, m.tag, m.ordinal));
        });
  }
  if (IsCollective(op.role) && span.seq && span.comm != 0) {
    e->Fixed64(event::kFlowIds, CollectiveFlowId(span.comm, *span.seq));
  }
}

void PerfettoTraceWriter::WriteSpanEvent(uint32_t type, uint64_t track_uuid,
                                         int64_t ts, const Track& track, Op& op,
                                         const StoredSpan& span) {
  if (op.name_iid == 0) {
    op.name_iid = next_name_iid_++;
    pending_.push_back({interned::kEventNames, op.name_iid, op.info->name});
    op.category_iid = CategoryIid(CategoryName(op.info->category));
  }
  // Keys and names interned while the payload is written go out in the
  // packet's interned_data, ahead of it.
  payload_.clear();
  ProtoEncoder e(&payload_);
  e.Varint(event::kType, type);
  e.Varint(event::kTrackUuid, track_uuid);
  e.Varint(event::kNameIid, op.name_iid);
  e.Varint(event::kCategoryIids, op.category_iid);
  WriteAnnotations(&e, span);
  WriteFlows(&e, track, op, span);
  WritePacket(ts, packet::kTrackEvent, payload_);
}

void PerfettoTraceWriter::WriteCounter(const Track& track, const Op& op,
                                       const StoredSpan& span, int64_t ts) {
  auto [it, inserted] =
      counter_uuid_.try_emplace({track.process_id, op.info->id}, 0);
  if (inserted) {
    it->second = next_uuid_++;
    const int64_t position = ++counters_in_process_[track.process_id];
    payload_.clear();
    ProtoEncoder d(&payload_);
    d.Varint(descriptor::kUuid, it->second);
    d.Varint(descriptor::kParentUuid, track.process_uuid);
    d.Bytes(descriptor::kName, op.info->name);
    d.EndMessage(d.BeginMessage(descriptor::kCounter));  // counter {}
    d.Int(descriptor::kSiblingOrderRank,
          descriptor::kCounterRank * descriptor::kRankPerKind + position);
    WritePacket(ts, packet::kTrackDescriptor, payload_);
  }
  payload_.clear();
  ProtoEncoder e(&payload_);
  e.Varint(event::kType, event::kCounter);
  e.Varint(event::kTrackUuid, it->second);
  e.Double(event::kDoubleCounterValue, span.value);
  WritePacket(ts, packet::kTrackEvent, payload_);
}

void PerfettoTraceWriter::Add(const StoredSpan& span, int64_t start_ns,
                              int64_t dur_ns) {
  if (stopped_) return;
  auto t = track_index_.find(span.track_id);
  auto o = op_index_.find(span.op_id);
  // Spans of processes Begin did not describe (not selected) are skipped.
  if (t == track_index_.end() || o == op_index_.end()) return;
  Track& track = tracks_[t->second];
  Op& op = ops_[o->second];
  switch (span.kind) {
    case v1::SPAN_KIND_COUNTER:
      WriteCounter(track, op, span, start_ns);
      break;
    case v1::SPAN_KIND_INSTANT:
      CloseEndedSlices(track.lanes[0], start_ns);
      WriteSpanEvent(event::kInstant, track.lanes[0].uuid, start_ns, track, op,
                     span);
      break;
    default: {
      const int64_t end_ns = start_ns + std::max<int64_t>(dur_ns, 0);
      const size_t k = PlaceOnLane(track, start_ns, end_ns, op.nonblocking);
      if (k == kMaxLanes) {
        ++spans_as_instants_;
        WriteSpanEvent(event::kInstant, track.lanes[0].uuid, start_ns, track,
                       op, span);
        break;
      }
      Lane& lane = track.lanes[k];
      WriteSpanEvent(event::kSliceBegin, lane.uuid, start_ns, track, op, span);
      lane.last_ts = start_ns;
      lane.open_ends.push_back(end_ns);
    }
  }
  ++events_;
  if (buffer_.size() >= chunk_bytes_) Flush();
}

void PerfettoTraceWriter::AddCriticalPath(const v1::CriticalPathReply& path) {
  if (stopped_) return;
  Track track;
  track.pid = kCriticalPathPid;
  track.process_uuid = DescribeProcess(kCriticalPathPid, "critical path");
  track.name = "critical path";
  track.lanes.emplace_back();
  track.lanes[0].uuid = next_uuid_++;
  payload_.clear();
  ProtoEncoder d(&payload_);
  d.Varint(descriptor::kUuid, track.lanes[0].uuid);
  d.Varint(descriptor::kParentUuid, track.process_uuid);
  d.Bytes(descriptor::kName, track.name);
  WritePacket(origin_ns_, packet::kTrackDescriptor, payload_);
  tracks_.push_back(std::move(track));
  Track& cp = tracks_.back();

  for (const v1::PathSegment& s : path.segments()) {
    const int64_t end_ns = s.start_ns() + std::max<int64_t>(s.dur_ns(), 0);
    const size_t k = PlaceOnLane(cp, s.start_ns(), end_ns, false);
    Lane& lane = cp.lanes[k];
    payload_.clear();
    ProtoEncoder e(&payload_);
    e.Varint(event::kType, event::kSliceBegin);
    e.Varint(event::kTrackUuid, lane.uuid);
    e.Bytes(event::kName,
            absl::StrCat("rank ", s.rank(), ": ",
                         s.name().empty() ? "(untraced)" : s.name()));
    e.Varint(event::kCategoryIids, CategoryIid(kCriticalPathCategory));
    size_t m = BeginAnnotation(&e, KeyIid(kRank), "");
    e.Int(annotation::kIntValue, s.rank());
    e.EndMessage(m);
    m = BeginAnnotation(&e, KeyIid(kClass), "");
    e.Bytes(annotation::kStringValue, TimeClassName(s.time_class()));
    e.EndMessage(m);
    if (s.category() != v1::CATEGORY_UNSPECIFIED) {
      m = BeginAnnotation(&e, KeyIid(kCategory), "");
      e.Bytes(annotation::kStringValue, CategoryName(s.category()));
      e.EndMessage(m);
    }
    if (s.has_peer()) {
      m = BeginAnnotation(&e, KeyIid(kPeer), "");
      e.Int(annotation::kIntValue, s.peer());
      e.EndMessage(m);
    }
    WritePacket(s.start_ns(), packet::kTrackEvent, payload_);
    lane.last_ts = s.start_ns();
    lane.open_ends.push_back(end_ns);
    ++events_;
    if (buffer_.size() >= chunk_bytes_) Flush();
  }
}

bool PerfettoTraceWriter::End() {
  for (Track& track : tracks_) {
    for (Lane& lane : track.lanes) {
      CloseEndedSlices(lane, INT64_MAX);
      if (buffer_.size() >= chunk_bytes_) Flush();
    }
  }
  Flush();
  return !stopped_;
}

}  // namespace meridian
