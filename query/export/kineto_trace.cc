#include "query/export/kineto_trace.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/json.h"
#include "query/export/span_args.h"
#include "query/export/trace_names.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

constexpr absl::string_view kCpuOp = "cpu_op";
constexpr absl::string_view kUserAnnotation = "user_annotation";
constexpr absl::string_view kCudaRuntime = "cuda_runtime";

bool OnGpu(v1::TrackKind kind) { return kind == v1::TRACK_KIND_GPU_STREAM; }

absl::string_view KinetoCategory(v1::TrackKind kind, v1::Category category) {
  // torch.distributed's operations: CPU ops, as torch's profiler records
  // its c10d ops, though Meridian puts them on a group's queue track.
  if (category == v1::CATEGORY_C10D) return kCpuOp;
  if (kind == v1::TRACK_KIND_QUEUE) return kUserAnnotation;
  if (OnGpu(kind)) {
    switch (category) {
      case v1::CATEGORY_CUDA_MEMCPY:
        return "gpu_memcpy";
      case v1::CATEGORY_CUDA_MEMSET:
        return "gpu_memset";
      case v1::CATEGORY_CUDA_SYNC:
        return "cuda_sync";
      case v1::CATEGORY_NVTX:
      case v1::CATEGORY_USER:
        return "gpu_user_annotation";
      default:
        return "kernel";
    }
  }
  switch (category) {
    case v1::CATEGORY_CUDA_RUNTIME:
    case v1::CATEGORY_CUDA_SYNC:
      return kCudaRuntime;
    case v1::CATEGORY_NVTX:
    case v1::CATEGORY_USER:
      return kUserAnnotation;
    default:
      return kCpuOp;
  }
}

// "GPU <device> stream <stream>", as CUPTI capture and the Kineto import
// name GPU stream tracks.
bool ParseStreamTrack(absl::string_view name, int64_t* device,
                      int64_t* stream) {
  if (!absl::ConsumePrefix(&name, "GPU ")) return false;
  const size_t at = name.find(" stream ");
  return at != absl::string_view::npos &&
         absl::SimpleAtoi(name.substr(0, at), device) &&
         absl::SimpleAtoi(name.substr(at + 8), stream);
}

absl::string_view WithoutNccl(absl::string_view name) {
  if (absl::StartsWithIgnoreCase(name, "nccl")) name.remove_prefix(4);
  return name;
}

// PyTorch's names for collectives ("Collective name" of record_param_comms).
std::string CollectiveName(absl::string_view op) {
  const std::string name = absl::AsciiStrToLower(WithoutNccl(op));
  if (name == "reducescatter") return "reduce_scatter";
  if (name == "alltoall") return "all_to_all";
  if (name == "bcast") return "broadcast";
  return name;
}

// PyTorch's dtype names for NCCL's data types.
absl::string_view TorchDtype(absl::string_view nccl) {
  static constexpr std::pair<absl::string_view, absl::string_view> kNames[] = {
      {"ncclInt8", "Char"},
      {"ncclChar", "Char"},
      {"ncclUint8", "Byte"},
      {"ncclInt32", "Int"},
      {"ncclInt", "Int"},
      {"ncclUint32", "UInt32"},
      {"ncclInt64", "Long"},
      {"ncclUint64", "UInt64"},
      {"ncclFloat16", "Half"},
      {"ncclHalf", "Half"},
      {"ncclFloat32", "Float"},
      {"ncclFloat", "Float"},
      {"ncclFloat64", "Double"},
      {"ncclDouble", "Double"},
      {"ncclBfloat16", "BFloat16"},
      {"ncclFloat8e4m3", "Float8_e4m3fn"},
      {"ncclFloat8e5m2", "Float8_e5m2"}};
  for (const auto& [from, to] : kNames) {
    if (from == nccl) return to;
  }
  return nccl;
}

const StoredArg* FindArg(const StoredSpan& span, absl::string_view key,
                         StoredArg::Type type) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == key && arg.type == type) return &arg;
  }
  return nullptr;
}

int64_t FloorTo(int64_t ns, int64_t period) {
  const int64_t q = ns / period;
  return (ns % period < 0 ? q - 1 : q) * period;
}

}  // namespace

// Builds one event's "args" object: keys in order, none twice.
class KinetoTraceWriter::Args {
 public:
  explicit Args(std::string* out) : out_(out) { out_->append(", \"args\": {"); }
  // Starts the value of `key`; false (nothing written) if written before.
  bool Key(absl::string_view key) {
    if (std::find(keys_.begin(), keys_.end(), key) != keys_.end()) {
      return false;
    }
    keys_.push_back(key);
    if (keys_.size() > 1) out_->append(", ");
    AppendJsonString(out_, key);
    out_->append(": ");
    return true;
  }
  template <typename T>
  void Number(absl::string_view key, T value) {
    if (Key(key)) AppendJsonNumber(out_, value);
  }
  void String(absl::string_view key, absl::string_view value) {
    if (Key(key)) AppendJsonString(out_, value);
  }
  void Close() { out_->append("}"); }

 private:
  std::string* const out_;
  absl::InlinedVector<absl::string_view, 24> keys_;
};

KinetoTraceWriter::KinetoTraceWriter(const JobCatalog& catalog,
                                     const SpanSelection& selection, Sink sink,
                                     size_t chunk_bytes)
    : catalog_(catalog),
      selection_(selection),
      origin_ns_(catalog.job.min_start_ns),
      sink_(std::move(sink)),
      chunk_bytes_(chunk_bytes) {
  for (const OpInfo& op : catalog_.ops) {
    ops_[op.id] = &op;
    if (absl::StartsWith(op.name, "ProfilerStep#")) synthesize_steps_ = false;
  }
}

absl::Status KinetoTraceWriter::CheckSelection(const JobCatalog& catalog,
                                               const SpanSelection& selection) {
  std::vector<int32_t> ranks;
  for (const ProcessInfo& p : catalog.processes) {
    if (selection.SelectsProcess(p.id)) ranks.push_back(p.rank);
  }
  if (ranks.size() == 1 && ranks[0] >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "a Kineto trace holds one rank's events, but the filter selects ",
      ranks.size(), " processes", ranks.size() == 1 ? " without a rank" : "",
      ": name one rank (write one file per rank)"));
}

int64_t KinetoTraceWriter::base_time_ns() const {
  return FloorTo(origin_ns_, kBasePeriodNs);
}

void KinetoTraceWriter::Flush() {
  if (!stopped_ && !buffer_.empty() && !sink_(buffer_)) stopped_ = true;
  buffer_.clear();
}

void KinetoTraceWriter::AppendTs(int64_t ns) {
  AppendMicros(&buffer_, std::max<int64_t>(ns - base_ns_, 0));
}

void KinetoTraceWriter::BeginEvent(absl::string_view ph, absl::string_view cat,
                                   absl::string_view name, int64_t pid,
                                   int64_t tid, int64_t ts_ns) {
  absl::StrAppend(&buffer_, first_event_ ? "\n  " : ",\n  ", "{\"ph\": \"", ph,
                  "\"");
  first_event_ = false;
  if (!cat.empty()) absl::StrAppend(&buffer_, ", \"cat\": \"", cat, "\"");
  buffer_.append(", \"name\": ");
  AppendJsonString(&buffer_, name);
  absl::StrAppend(&buffer_, ", \"pid\": ", pid, ", \"tid\": ", tid,
                  ", \"ts\": ");
  AppendTs(ts_ns);
}

void KinetoTraceWriter::Begin() {
  base_ns_ = base_time_ns();
  int32_t rank = -1;
  int32_t ranks = catalog_.job.ranks;
  for (const ProcessInfo& p : catalog_.processes) {
    if (rank < 0 && p.rank >= 0 && selection_.SelectsProcess(p.id)) {
      rank = p.rank;
    }
    if (catalog_.job.ranks <= 0) ranks = std::max(ranks, p.rank + 1);
  }
  // HTA reads the rank with "rank":\s+(\d+): the space matters.
  absl::StrAppend(&buffer_,
                  "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
                  "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ",
                  std::max(rank, 0), ", \"world_size\": ", ranks,
                  "},\n  \"baseTimeNanoseconds\": ", base_ns_,
                  ",\n  \"traceEvents\": [");

  auto metadata = [&](absl::string_view what, int64_t pid, int64_t tid,
                      absl::string_view name) {
    BeginEvent("M", "", what, pid, tid, origin_ns_);
    buffer_.append(", \"args\": {\"name\": ");
    AppendJsonString(&buffer_, name);
    buffer_.append("}}");
  };
  absl::flat_hash_map<int64_t, const ProcessInfo*> process_by_id;
  for (const ProcessInfo& p : catalog_.processes) process_by_id[p.id] = &p;
  absl::flat_hash_set<int64_t> devices;
  int64_t last_process = -1;
  int64_t synthetic_streams = 0;
  int64_t queues = 0;
  for (const TrackInfo& t : catalog_.tracks) {
    if (!selection_.SelectsProcess(t.process_id)) continue;
    const ProcessInfo& p = *process_by_id[t.process_id];
    const int64_t cpu_pid = p.pid > 0 ? p.pid : 1000000 + p.id;
    if (t.process_id != last_process) {
      last_process = t.process_id;
      synthetic_streams = queues = 0;
      metadata("process_name", cpu_pid, 0, TraceProcessName(p));
    }
    Track track;
    track.process_id = t.process_id;
    track.kind = t.kind;
    std::string name = TraceTrackName(t);
    if (t.kind == v1::TRACK_KIND_THREAD) {
      track.pid = cpu_pid;
      track.tid = t.ext_id;
    } else if (t.kind == v1::TRACK_KIND_QUEUE) {
      track.pid = cpu_pid;
      track.tid = kQueueTidBase + ++queues;
    } else {
      if (!ParseStreamTrack(t.name, &track.pid, &track.tid)) {
        track.pid = std::max(p.local_rank, 0);
        track.tid = kSyntheticStreamBase + ++synthetic_streams;
      } else {
        name = absl::StrCat("stream ", track.tid);
      }
      if (devices.insert(track.pid).second) {
        metadata("process_name", track.pid, 0, absl::StrCat("GPU ", track.pid));
      }
    }
    metadata("thread_name", track.pid, track.tid, name);
    tracks_[t.id] = std::move(track);
  }
  Flush();
}

int64_t KinetoTraceWriter::CpuExternalId(Track& track, absl::string_view cat,
                                         int64_t start_ns, int64_t end_ns,
                                         const StoredSpan& span) {
  if (track.kind == v1::TRACK_KIND_QUEUE) {
    return cat == kUserAnnotation ? next_external_id_++ : 0;
  }
  // The operations that ended by this start are no longer open.
  while (!track.open.empty() && track.open.back().first <= start_ns) {
    track.open.pop_back();
  }
  const int64_t enclosing = track.open.empty() ? 0 : track.open.back().second;
  if (cat == kCpuOp || cat == kUserAnnotation) {
    const int64_t id = next_external_id_++;
    // A span that overlaps the innermost without nesting encloses nothing
    // later: kept off the stack, which stays sorted by end.
    if (track.open.empty() || end_ns <= track.open.back().first) {
      track.open.emplace_back(end_ns, id);
    }
    return id;
  }
  if (cat == kCudaRuntime && span.correlation != 0) {
    const std::pair<int64_t, uint64_t> key(track.process_id, span.correlation);
    auto [it, inserted] = launches_.try_emplace(key, enclosing);
    if (!inserted) {
      it->second = enclosing;
    } else if (launch_order_.size() < kMaxPendingLaunches) {
      launch_order_.push_back(key);
    } else {
      // The oldest launch's GPU work has long run: forget it.
      launches_.erase(launch_order_[launch_next_]);
      launch_order_[launch_next_] = key;
      launch_next_ = (launch_next_ + 1) % kMaxPendingLaunches;
    }
  }
  return cat == kCudaRuntime ? enclosing : 0;
}

std::string KinetoTraceWriter::GpuName(const OpInfo& op,
                                       const StoredSpan& span) const {
  if (op.category != v1::CATEGORY_NCCL) return op.name;
  // HTA knows communication kernels by their names: "ncclKernel...".
  if (const StoredArg* kernel =
          FindArg(span, "kernel", StoredArg::Type::kString)) {
    return kernel->str;
  }
  if (absl::StartsWithIgnoreCase(op.name, "nccl") &&
      absl::StrContains(op.name, "Kernel")) {
    return op.name;
  }
  return absl::StrCat("ncclKernel_", WithoutNccl(op.name));
}

void KinetoTraceWriter::AppendNcclArgs(Args* args, const OpInfo& op,
                                       const StoredSpan& span) {
  const std::string collective = CollectiveName(op.name);
  args->String("Collective name", collective);
  // NCCL's count and datatype (NcclProfiler's args), else the bytes as
  // that many "Byte" elements.
  const StoredArg* count = FindArg(span, "count", StoredArg::Type::kInt);
  const StoredArg* datatype =
      FindArg(span, "datatype", StoredArg::Type::kString);
  int64_t elements = -1;
  absl::string_view dtype;
  if (count != nullptr && count->int_value >= 0) {
    elements = count->int_value;
    if (datatype != nullptr) dtype = TorchDtype(datatype->str);
  } else if (span.bytes > 0) {
    elements = span.bytes;
    dtype = "Byte";
  }
  const int64_t group = std::max<int64_t>(span.comm_size, 1);
  if (elements >= 0) {
    // NCCL counts an AllGather's input and a ReduceScatter's output (at
    // most int64's largest: a span may record any byte count).
    int64_t times_group;
    if (__builtin_mul_overflow(elements, group, &times_group)) {
      times_group = std::numeric_limits<int64_t>::max();
    }
    const int64_t in = collective == "reduce_scatter" ? times_group : elements;
    const int64_t out = collective == "allgather" ? times_group : elements;
    args->Number("In msg nelems", in);
    args->Number("Out msg nelems", out);
  }
  if (span.comm_size > 0) args->Number("Group size", span.comm_size);
  if (!dtype.empty()) args->String("dtype", dtype);
}

void KinetoTraceWriter::AppendProcessGroupArgs(Args* args,
                                               const StoredSpan& span) {
  // capture/torch's args, under the names torch's profiler gives them.
  if (const StoredArg* group = FindArg(span, "group", StoredArg::Type::kInt)) {
    args->String("Process Group Name", absl::StrCat(group->int_value));
  } else if (const StoredArg* named =
                 FindArg(span, "group", StoredArg::Type::kString)) {
    args->String("Process Group Name", named->str);
  }
  if (const StoredArg* ranks =
          FindArg(span, "ranks", StoredArg::Type::kString)) {
    args->String("Process Group Ranks", ranks->str);
  }
}

void KinetoTraceWriter::AppendArgs(Args* args, const Track& track,
                                   const OpInfo& op, int64_t external_id,
                                   const StoredSpan& span) {
  if (external_id != 0) args->Number("External id", external_id);
  if (OnGpu(track.kind)) {
    args->Number("device", track.pid);
    args->Number("stream", track.tid);
  }
  if (span.correlation != 0) args->Number("correlation", span.correlation);
  if (span.bytes != 0) args->Number("bytes", span.bytes);
  if (op.category == v1::CATEGORY_NCCL || op.category == v1::CATEGORY_C10D) {
    AppendNcclArgs(args, op, span);
  }
  if (op.category == v1::CATEGORY_C10D) AppendProcessGroupArgs(args, span);
  // Meridian's fields, as the Chrome export writes them (those written
  // above are not written again).
  struct Json {
    Args* args;
    std::string& out;
    void Int(SpanArgKey k, int64_t v) { args->Number(SpanArgName(k), v); }
    void Count(SpanArgKey k, uint64_t v) { args->Number(SpanArgName(k), v); }
    void Id(SpanArgKey k, uint64_t v) {
      if (k == SpanArgKey::kCorrelation) {
        args->Number(SpanArgName(k), v);  // Kineto's: a number
      } else {
        args->String(SpanArgName(k), absl::StrCat("0x", absl::Hex(v)));
      }
    }
    void Arg(const StoredArg& arg) {
      if (args->Key(arg.key)) AppendJsonArgValue(&out, arg);
    }
  } json{args, buffer_};
  ForEachSpanArg(span, json);
}

void KinetoTraceWriter::AppendFlow(const Track& track, const StoredSpan& span,
                                   int64_t start_ns) {
  // Kineto's "ac2g": from the runtime call to the GPU work it launched.
  const bool gpu = OnGpu(track.kind);
  absl::StrAppend(&buffer_, ",\n  {\"ph\": \"", gpu ? "f" : "s",
                  "\", \"id\": ", span.correlation, ", \"pid\": ", track.pid,
                  ", \"tid\": ", track.tid, ", \"ts\": ");
  AppendTs(start_ns);
  absl::StrAppend(&buffer_, ", \"cat\": \"ac2g\", \"name\": \"ac2g\"",
                  gpu ? ", \"bp\": \"e\"}" : "}");
}

void KinetoTraceWriter::NoteStep(const Track& track, const StoredSpan& span,
                                 int64_t start_ns, int64_t end_ns) {
  auto [it, inserted] = steps_.try_emplace(
      *span.step, Step{start_ns, end_ns, track.pid, track.tid});
  Step& step = it->second;
  if (inserted) return;
  if (start_ns < step.start_ns) {
    step.start_ns = start_ns;
    step.pid = track.pid;
    step.tid = track.tid;
  }
  step.end_ns = std::max(step.end_ns, end_ns);
}

void KinetoTraceWriter::Add(const StoredSpan& span, int64_t start_ns,
                            int64_t dur_ns) {
  if (stopped_) return;
  auto t = tracks_.find(span.track_id);
  auto o = ops_.find(span.op_id);
  if (t == tracks_.end() || o == ops_.end()) return;  // not selected
  Track& track = t->second;
  const OpInfo& op = *o->second;
  const absl::string_view cat = KinetoCategory(track.kind, op.category);
  switch (span.kind) {
    case v1::SPAN_KIND_COUNTER: {
      BeginEvent("C", cat, op.name, track.pid, track.tid, start_ns);
      Args args(&buffer_);
      args.Number(op.name, span.value);
      args.Close();
      buffer_.append("}");
      break;
    }
    case v1::SPAN_KIND_INSTANT: {
      BeginEvent("i", "cpu_instant_event", op.name, track.pid, track.tid,
                 start_ns);
      buffer_.append(", \"s\": \"t\"");
      Args args(&buffer_);
      AppendArgs(&args, track, op, 0, span);
      args.Close();
      buffer_.append("}");
      break;
    }
    default: {
      dur_ns = std::max<int64_t>(dur_ns, 0);
      const bool gpu = OnGpu(track.kind);
      int64_t external_id = 0;
      bool launched = false;  // GPU work whose launch was written
      if (!gpu) {
        external_id =
            CpuExternalId(track, cat, start_ns, start_ns + dur_ns, span);
      } else if (span.correlation != 0) {
        auto launch = launches_.find({track.process_id, span.correlation});
        if (launch != launches_.end()) {
          external_id = launch->second;
          launched = true;
        }
      }
      BeginEvent("X", cat, gpu ? GpuName(op, span) : op.name, track.pid,
                 track.tid, start_ns);
      buffer_.append(", \"dur\": ");
      AppendMicros(&buffer_, dur_ns);
      Args args(&buffer_);
      AppendArgs(&args, track, op, external_id, span);
      args.Close();
      buffer_.append("}");
      if (span.correlation != 0 && (gpu ? launched : cat == kCudaRuntime)) {
        AppendFlow(track, span, start_ns);
      }
      if (span.step && synthesize_steps_ &&
          track.kind == v1::TRACK_KIND_THREAD) {
        NoteStep(track, span, start_ns, start_ns + dur_ns);
      }
    }
  }
  ++events_;
  if (buffer_.size() >= chunk_bytes_) Flush();
}

void KinetoTraceWriter::AddCriticalPath(const v1::CriticalPathReply& path) {
  if (stopped_) return;
  for (const v1::PathSegment& s : path.segments()) {
    absl::StrAppend(&buffer_, first_event_ ? "\n  " : ",\n  ",
                    "{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": ");
    first_event_ = false;
    AppendJsonString(&buffer_,
                     absl::StrCat("rank ", s.rank(), ": ",
                                  s.name().empty() ? "(untraced)" : s.name()));
    buffer_.append(
        ", \"pid\": \"Spans\", \"tid\": \"critical path\", \"ts\": ");
    AppendTs(s.start_ns());
    buffer_.append(", \"dur\": ");
    AppendMicros(&buffer_, std::max<int64_t>(s.dur_ns(), 0));
    Args args(&buffer_);
    args.Number("rank", s.rank());
    args.String("class", TimeClassName(s.time_class()));
    if (s.category() != v1::CATEGORY_UNSPECIFIED) {
      args.String("category", CategoryName(s.category()));
    }
    if (s.has_peer()) args.Number("peer", s.peer());
    args.Close();
    buffer_.append("}");
    ++events_;
    if (buffer_.size() >= chunk_bytes_) Flush();
  }
}

void KinetoTraceWriter::WriteSteps() {
  std::vector<std::pair<int64_t, Step>> steps(steps_.begin(), steps_.end());
  std::sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i].second;
    int64_t end_ns = step.end_ns;
    // Steps follow each other on the thread: one ends where the next
    // begins, so that they nest with nothing.
    if (i + 1 < steps.size() && steps[i + 1].second.start_ns > step.start_ns) {
      end_ns = std::min(end_ns, steps[i + 1].second.start_ns);
    }
    BeginEvent("X", kUserAnnotation,
               absl::StrCat("ProfilerStep#", steps[i].first), step.pid,
               step.tid, step.start_ns);
    buffer_.append(", \"dur\": ");
    AppendMicros(&buffer_, end_ns - step.start_ns);
    Args args(&buffer_);
    args.Number("External id", next_external_id_++);
    args.Close();
    buffer_.append("}");
    if (buffer_.size() >= chunk_bytes_) Flush();
  }
}

bool KinetoTraceWriter::End() {
  WriteSteps();
  buffer_.append("\n  ]\n}\n");
  Flush();
  return !stopped_;
}

}  // namespace meridian
