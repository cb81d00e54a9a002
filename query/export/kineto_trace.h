// KinetoTraceWriter: writes one rank's spans as a PyTorch profiler (Kineto)
// trace, the JSON that Holistic Trace Analysis and TensorBoard's profiler
// plugin read: `meridian export --format kineto --per-rank DIR` writes one
// file per rank with it. Incremental: memory holds one chunk, a stack of
// open operations per CPU thread, the External ids of the last
// kMaxPendingLaunches launches, and one entry per training step.
//
// Layout, in Kineto's key order (HTA reads the metadata before
// "traceEvents" and finds the rank with the regex "rank":\s+(\d+), line by
// line, so distributedInfo comes first and keeps its spaces):
//   {
//     "schemaVersion": 1,
//     "deviceProperties": [],
//     "distributedInfo": {"backend": "nccl", "rank": R, "world_size": W},
//     "baseTimeNanoseconds": B,
//     "traceEvents": [
//     M events: process_name per process and device, thread_name per track;
//     spans in the order given, each "X" with "cat" and "dur";
//     ProfilerStep#N user_annotation spans (at End)
//     ]
//   }
// B is the origin floored to Kineto's 3-month boundary (7,889,238 s), so
// the files of every rank share it when they share the origin (the job's);
// ts and dur are microseconds with three decimals, ts since B.
//
// Processes and threads, as Kineto numbers them:
//   CPU thread  pid = the OS pid (1000000 + the stored process id when
//               unknown), tid = the OS thread id
//   GPU stream  pid = the device, tid = the stream, from the track name
//               "GPU <device> stream <stream>" (CUPTI capture and Kineto
//               import name them so); other GPU tracks (NCCL's) get the
//               process's local rank as device and stream
//               kSyntheticStreamBase + their position
//   queue       pid = the OS pid, tid = kQueueTidBase + its position
//
// Categories: on GPU streams kernels "kernel", copies "gpu_memcpy",
// memsets "gpu_memset", synchronisation "cuda_sync", NCCL "kernel", NVTX
// and user ranges "gpu_user_annotation"; on CPU threads CUDA runtime and
// synchronisation calls "cuda_runtime", NVTX and user ranges
// "user_annotation", the rest (MPI, NCCL calls) "cpu_op"; queues
// "user_annotation". Instants are "i" (cat "cpu_instant_event"), counters
// "C"; HTA drops both, as it drops every event without "dur".
//
// Args, Kineto's names first:
//   "External id"  each cpu_op and user_annotation on a CPU thread gets a
//                  new one; a cuda_runtime call takes that of the innermost
//                  operation open on its thread, and the GPU work with its
//                  correlation id takes the call's (as Kineto links them)
//   "correlation"  the CUDA correlation id, on the call and its GPU work
//   "device", "stream"  on GPU events (HTA: stream > 0 means GPU)
//   "bytes"        when the span has bytes (copies, memsets, messages)
//   NCCL           GPU spans are kernels named "ncclKernel_<Op>" (or the
//                  "kernel" arg of an imported one) with "Collective name"
//                  ("allreduce", "allgather", "reduce_scatter", ...), "In
//                  msg nelems" and "Out msg nelems" (from the span's count
//                  arg, else its bytes as dtype "Byte"), "Group size" and
//                  "dtype" (NCCL's datatype arg in PyTorch's names)
// then Meridian's fields as the Chrome export writes them (peer, tag, comm,
// comm_size, seq, step, partition) and the span's own args, less any
// already written.
// A launch and its GPU work are also joined by an "ac2g" flow ("s" at the
// call, "f" with "bp":"e" at the GPU event, id = the correlation id) when
// the launch is in the file (one of the last kMaxPendingLaunches).
//
// Steps: a span's step makes a "ProfilerStep#N" user_annotation on the CPU
// thread of the step's first CPU span, from that span's start to the last
// end of the step's CPU spans, cut at the next step's start; none when the
// job already has ProfilerStep# spans (an imported Kineto trace).
//
// AddCriticalPath: the segments as cat "Trace" spans (which HTA drops, as it
// drops Kineto's own) of pid "Spans", tid "critical path".
//
// The selection should name exactly one rank (CheckSelection): the file
// carries that rank's events and that rank in distributedInfo.
#ifndef MERIDIAN_QUERY_EXPORT_KINETO_TRACE_H_
#define MERIDIAN_QUERY_EXPORT_KINETO_TRACE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/query.pb.h"
#include "query/export/trace_writer.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

class KinetoTraceWriter : public TraceWriter {
 public:
  static constexpr int64_t kBasePeriodNs = int64_t{7889238} * 1000000000;
  static constexpr int64_t kSyntheticStreamBase = 1000000;
  static constexpr int64_t kQueueTidBase = 1000000000;
  static constexpr size_t kMaxPendingLaunches = 1 << 16;

  KinetoTraceWriter(const JobCatalog& catalog, const SpanSelection& selection,
                    Sink sink, size_t chunk_bytes = 64 * 1024);

  // INVALID_ARGUMENT unless `selection` selects exactly one process with a
  // rank (a Kineto file is one rank's).
  static absl::Status CheckSelection(const JobCatalog& catalog,
                                     const SpanSelection& selection);

  // The origin that baseTimeNanoseconds is floored from: the job's earliest
  // stored start unless set, before Begin, to another (JobClocks::epoch_ns).
  void set_origin_ns(int64_t origin_ns) override { origin_ns_ = origin_ns; }
  int64_t base_time_ns() const;

  void Begin() override;
  using TraceWriter::Add;
  void Add(const StoredSpan& span, int64_t start_ns, int64_t dur_ns) override;
  void AddCriticalPath(const v1::CriticalPathReply& path) override;
  bool End() override;

  int64_t events() const override { return events_; }
  bool ok() const override { return !stopped_; }

 private:
  class Args;  // one event's "args" object
  struct Track {
    int64_t process_id = 0;
    int64_t pid = 0;
    int64_t tid = 0;
    v1::TrackKind kind = v1::TRACK_KIND_THREAD;
    // CPU threads: the operations open at the last span's start,
    // innermost last, as (end, External id).
    std::vector<std::pair<int64_t, int64_t>> open;
  };
  struct Step {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t pid = 0;
    int64_t tid = 0;
  };

  void BeginEvent(absl::string_view ph, absl::string_view cat,
                  absl::string_view name, int64_t pid, int64_t tid,
                  int64_t ts_ns);
  void AppendTs(int64_t ns);
  // "External id" of a CPU span (0: none), keeping the thread's stack.
  int64_t CpuExternalId(Track& track, absl::string_view cat, int64_t start_ns,
                        int64_t end_ns, const StoredSpan& span);
  std::string GpuName(const OpInfo& op, const StoredSpan& span) const;
  void AppendArgs(Args* args, const Track& track, const OpInfo& op,
                  int64_t external_id, const StoredSpan& span);
  // What Kineto writes of a collective ("Collective name", message
  // elements, "Group size", "dtype"), for NCCL's and c10d's operations.
  void AppendNcclArgs(Args* args, const OpInfo& op, const StoredSpan& span);
  // A c10d operation's "Process Group Name" and "Process Group Ranks".
  void AppendProcessGroupArgs(Args* args, const StoredSpan& span);
  void AppendFlow(const Track& track, const StoredSpan& span, int64_t start_ns);
  void NoteStep(const Track& track, const StoredSpan& span, int64_t start_ns,
                int64_t end_ns);
  void WriteSteps();
  void Flush();

  const JobCatalog& catalog_;
  const SpanSelection& selection_;
  int64_t origin_ns_;
  int64_t base_ns_ = 0;  // set by Begin
  Sink sink_;
  const size_t chunk_bytes_;
  std::string buffer_;
  bool stopped_ = false;
  bool first_event_ = true;
  int64_t events_ = 0;
  int64_t next_external_id_ = 1;
  bool synthesize_steps_ = true;

  absl::flat_hash_map<int64_t, Track> tracks_;  // by track id
  absl::flat_hash_map<int64_t, const OpInfo*> ops_;
  // (process id, correlation) -> the External id of the launch (0: none),
  // for the latest kMaxPendingLaunches launches; launch_order_ is their
  // ring, launch_next_ the oldest once it is full.
  absl::flat_hash_map<std::pair<int64_t, uint64_t>, int64_t> launches_;
  std::vector<std::pair<int64_t, uint64_t>> launch_order_;
  size_t launch_next_ = 0;
  absl::flat_hash_map<int64_t, Step> steps_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_KINETO_TRACE_H_
