// PerfettoTraceWriter: writes a job's spans as a Perfetto protobuf trace of
// TrackEvents (a `Trace` message: TracePacket records `0x0A <varint length>
// <packet>`), hand-encoded (proto_encoder.h), which
// Perfetto UI and trace_processor load. Incremental like the Chrome export:
// memory holds one chunk and a little state per process, track, lane,
// counter, interned string and message channel; nothing per span.
//
// Packets, all on one sequence (trusted_packet_sequence_id kSequenceId):
//   1. a ClockSnapshot, BOOTTIME = REALTIME = the origin, with
//      sequence_flags INCREMENTAL_STATE_CLEARED | NEEDS_INCREMENTAL_STATE
//      and first_packet_on_sequence; every later packet carries
//      NEEDS_INCREMENTAL_STATE;
//   2. (Begin) a TrackDescriptor per selected process: ProcessDescriptor
//      pid = rank + 1 (as the Chrome export), process_name "rank N (host)",
//      children in explicit order; then one per track of it, a child of
//      the process track:
//        CPU thread         ThreadDescriptor{pid, tid = OS thread id,
//                           thread_name}: a thread track, which the UI
//                           shows as "NAME TID" in its process
//        GPU stream, queue  a named track ("GPU 0 stream 7", "queue 3"):
//                           no thread of the process runs it
//      sibling_order_rank = kind * 1000000 + position, the Chrome export's
//      thread_sort_index (threads, then streams, then queues);
//   3. per span, in the order given:
//        complete  SLICE_BEGIN at its start (name, category, debug
//                  annotations, flow ids) and SLICE_END at its end
//        instant   INSTANT
//        counter   COUNTER (double_counter_value) on a counter track per
//                  (process, operation) named after the operation, made
//                  (described) when first used, after the process's tracks.
//
// Timestamps: TracePacket.timestamp is absolute Unix-epoch ns on the
// default clock (BOOTTIME; no timestamp_clock_id). The snapshot maps it one
// to one onto REALTIME, so the UI's default display counts from the trace's
// start and its wall-clock formats show true dates. Packets stamped
// REALTIME (timestamp_clock_id 1) would need that snapshot too, to be
// converted into trace_processor's BOOTTIME trace time, and gain nothing.
//
// Nesting. Perfetto closes the innermost open slice of a track at each
// SLICE_END, so the slices of one track must nest. A span goes on the first
// lane of its track where it nests: lane 0 is the track itself; lanes 1,
// 2, ... are child tracks "NAME (lane K)" made when first needed. A span
// [s, e) fits a lane if s is no earlier than the last time written on the
// lane and e is no later than the end of the innermost slice still open at
// s. SLICE_ENDs are written lazily: a lane's slices that ended by s are
// closed when the next span comes to that lane (the rest at End), so each
// lane's packets are in time order and trace_processor's stable sort by
// timestamp keeps it. Nonblocking MPI operations (MPI_Isend, ...: recorded
// from issue to completion, not part of the call stack) start at lane 1.
// A track has at most kMaxLanes lanes (a client may write any number of
// overlapping spans, and each would cost a lane and a pass over the lanes
// before it): a span that nests in none of them is written as an instant
// on the track at its start, with its args, and counted
// (spans_as_instants()).

// Example, one thread, spans in this order:
//   A [0,100)  B [10,20)  C [50,150)  D [120,130)
//   lane 0: A, B inside it; C ends after A: lane 1; D: A ended, lane 0
//   packets: BEGIN A 0, BEGIN B 10, END B 20 (written with C), BEGIN C 50
//   (lane 1), END A 100 (written with D), BEGIN D 120, END D 130 and END C
//   150 (at End).
//
// Flows (TrackEvent.flow_ids, fixed64, on the SLICE_BEGIN or INSTANT):
//   launch      a CPU launch and the GPU work with its correlation id in
//               the same process (the Chrome export's "launch" arrows):
//               LaunchFlowId(pid, correlation);
//   message     the n-th send and the n-th receive of a channel (comm,
//               source rank, destination rank, tag), counted in the order
//               given, as mpi_semantics.h pairs them: MessageFlowId. Exact
//               over whole message streams (the whole job, whole steps); a
//               time window can cut two ranks' streams at different places
//               and pair the wrong ones: set_message_flows(false) then;
//   collective  the members of one collective instance, equal (comm, seq):
//               CollectiveFlowId; Perfetto links them in time order, first
//               arrival to last.
// No id is ever terminated (terminating_flow_ids): an arrow then joins two
// events whichever comes first in time (a receive posted before its send,
// a kernel that a clock correction put before its launch), and the several
// kernels of one launch (a CUDA graph) chain from it. Ids are 64-bit hashes
// of their inputs, so no two flows share one.
//
// Interning: operation names (event_names), categories (event_categories)
// and annotation keys (debug_annotation_names) get iids from 1, each table
// its own, defined in the packet that first uses them. Annotation keys past
// kMaxInternedKeys distinct ones are written inline.
//
// Debug annotations, the Chrome export's args: bytes, peer, tag, comm and
// correlation (pointer values, which the UI shows in hex as the Chrome
// export's "0x..." strings), comm_size, seq, step, partition, then the
// span's own args.
//
// AddCriticalPath: a process "critical path" (pid kCriticalPathPid) with one
// track "critical path", a slice per segment named "rank R: NAME", category
// "critical_path", annotations rank, class, category and peer.
//
// Sink and call order: trace_writer.h. Every piece the sink gets ends at a
// packet boundary, so each is a valid trace on its own.
#ifndef MERIDIAN_QUERY_EXPORT_PERFETTO_TRACE_H_
#define MERIDIAN_QUERY_EXPORT_PERFETTO_TRACE_H_

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/query.pb.h"
#include "query/export/proto_encoder.h"
#include "query/export/trace_writer.h"
#include "query/ops/message_ordinals.h"
#include "query/ops/mpi_semantics.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

class PerfettoTraceWriter : public TraceWriter {
 public:
  static constexpr uint32_t kSequenceId = 8008;
  static constexpr int64_t kCriticalPathPid = 999999;
  static constexpr size_t kMaxInternedKeys = 4096;

  PerfettoTraceWriter(const JobCatalog& catalog, const SpanSelection& selection,
                      Sink sink, size_t chunk_bytes = 64 * 1024);

  // The clock snapshot's instant: the job's earliest stored start unless
  // set, before Begin, to another (JobClocks::epoch_ns). Timestamps stay
  // absolute either way.
  void set_origin_ns(int64_t origin_ns) override { origin_ns_ = origin_ns; }
  // Message flows (above); on by default. Before the first Add.
  void set_message_flows(bool on) override { message_flows_ = on; }

  void Begin() override;
  using TraceWriter::Add;
  // Spans of tracks that Begin did not describe (processes not selected)
  // are skipped.
  void Add(const StoredSpan& span, int64_t start_ns, int64_t dur_ns) override;
  void AddCriticalPath(const v1::CriticalPathReply& path) override;
  bool End() override;

  int64_t events() const override { return events_; }
  static constexpr size_t kMaxLanes = 64;
  // Spans written as instants because no lane of their track took them.
  int64_t spans_as_instants() const { return spans_as_instants_; }
  bool ok() const override { return !stopped_; }

  // The flow ids (never 0), stable across exports of the same job.
  static uint64_t LaunchFlowId(int64_t pid, uint64_t correlation);
  static uint64_t MessageFlowId(uint64_t comm, int32_t source,
                                int32_t destination, int32_t tag,
                                uint64_t ordinal);
  static uint64_t CollectiveFlowId(uint64_t comm, uint64_t seq);

 private:
  // Annotation keys of the span fields, interned through key_iid_.
  enum Key : uint8_t {
    kBytes,
    kPeer,
    kTag,
    kComm,
    kCommSize,
    kSeq,
    kStep,
    kPartition,
    kCorrelation,  // the first nine in SpanArgKey's order (span_args.h)
    kRank,
    kClass,
    kCategory,
    kKeyCount
  };
  // A track's lane: the track itself (lane 0) or a child track.
  struct Lane {
    uint64_t uuid = 0;
    int64_t last_ts = INT64_MIN;     // latest timestamp written
    std::vector<int64_t> open_ends;  // open slices' ends, innermost last
  };
  struct Track {
    int64_t pid = 0;
    int32_t rank = -1;
    int64_t process_id = 0;
    uint64_t process_uuid = 0;
    v1::TrackKind kind = v1::TRACK_KIND_THREAD;
    std::string name;
    std::vector<Lane> lanes;  // [0]: the track itself
  };
  struct Op {
    const OpInfo* info = nullptr;
    uint64_t name_iid = 0;      // 0 until first written
    uint64_t category_iid = 0;  // likewise
    SpanRole role = SpanRole::kNone;
    bool nonblocking = false;
  };
  // (comm, source, destination, tag) -> (sends, receives) seen.
  struct Interned {
    uint32_t table;  // InternedData field
    uint64_t iid;
    absl::string_view name;  // alive until the packet is written
  };

  // Steps of Begin and Add.
  void WriteClockSnapshot();
  uint64_t DescribeProcess(int64_t pid, absl::string_view name);
  size_t PlaceOnLane(Track& track, int64_t start_ns, int64_t end_ns,
                     bool nonblocking);
  void AddLane(Track& track, int64_t ts);
  void CloseEndedSlices(Lane& lane, int64_t ts);
  void WriteSliceEnd(uint64_t uuid, int64_t ts);
  void WriteSpanEvent(uint32_t type, uint64_t track_uuid, int64_t ts,
                      const Track& track, Op& op, const StoredSpan& span);
  void WriteCounter(const Track& track, const Op& op, const StoredSpan& span,
                    int64_t ts);
  void WriteAnnotations(ProtoEncoder* e, const StoredSpan& span);
  void WriteFlows(ProtoEncoder* e, const Track& track, const Op& op,
                  const StoredSpan& span);
  // Interning: the iid, recording a new entry for the next packet.
  uint64_t CategoryIid(absl::string_view category);
  uint64_t KeyIid(Key key);
  uint64_t KeyIid(absl::string_view key);  // 0: write the name inline
  size_t BeginAnnotation(ProtoEncoder* e, uint64_t iid, absl::string_view key);
  // A packet: timestamp, sequence, flags, pending interned entries, then
  // `payload` as field `field` (a TrackEvent or TrackDescriptor).
  void WritePacket(int64_t ts, uint32_t field, absl::string_view payload);
  void Flush();

  const JobCatalog& catalog_;
  const SpanSelection& selection_;
  int64_t origin_ns_;
  Sink sink_;
  const size_t chunk_bytes_;
  bool message_flows_ = true;
  std::string buffer_;
  ProtoEncoder out_{&buffer_};
  std::string payload_;  // the packet being written's event or descriptor
  bool stopped_ = false;
  int64_t events_ = 0;
  int64_t spans_as_instants_ = 0;
  uint64_t next_uuid_ = 1;

  std::vector<Track> tracks_;
  absl::flat_hash_map<int64_t, size_t> track_index_;  // by track id
  std::vector<Op> ops_;
  absl::flat_hash_map<int64_t, size_t> op_index_;  // by op id
  absl::flat_hash_map<std::pair<int64_t, int64_t>, uint64_t> counter_uuid_;
  absl::flat_hash_map<int64_t, int32_t> counters_in_process_;
  MessageOrdinals messages_;

  absl::flat_hash_map<absl::string_view, uint64_t> category_iid_;
  absl::flat_hash_map<std::string, uint64_t> key_iid_;
  std::array<uint64_t, kKeyCount> fixed_key_iid_{};
  uint64_t next_name_iid_ = 1;
  uint64_t next_category_iid_ = 1;
  uint64_t next_key_iid_ = 1;
  std::vector<Interned> pending_;  // for the next packet's interned_data
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_PERFETTO_TRACE_H_
