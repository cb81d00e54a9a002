#include "capture/nccl/nccl_profiler.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace meridian {
namespace {

constexpr uint8_t kCategoryNccl = 2;         // v1::CATEGORY_NCCL
constexpr uint8_t kCategoryCudaRuntime = 7;  // v1::CATEGORY_CUDA_RUNTIME
constexpr uint64_t kNoStart = UINT64_MAX;
// Correlation ids of NCCL operations: apart from CUPTI's (32-bit) ones.
constexpr uint64_t kCorrelationBase = 1ULL << 62;
constexpr size_t kArgsBytes = 192;

// Bytes per element of NCCL's data types, by the names NCCL gives them.
int64_t TypeBytes(const char* datatype) {
  if (datatype == nullptr) return 0;
  static constexpr struct {
    const char* name;
    int64_t bytes;
  } kTypes[] = {
      {"ncclInt8", 1},       {"ncclChar", 1},       {"ncclUint8", 1},
      {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}, {"ncclFloat16", 2},
      {"ncclHalf", 2},       {"ncclBfloat16", 2},   {"ncclInt32", 4},
      {"ncclInt", 4},        {"ncclUint32", 4},     {"ncclFloat32", 4},
      {"ncclFloat", 4},      {"ncclInt64", 8},      {"ncclUint64", 8},
      {"ncclFloat64", 8},    {"ncclDouble", 8},
  };
  for (const auto& type : kTypes) {
    if (strcmp(datatype, type.name) == 0) return type.bytes;
  }
  return 0;
}

const char* OrNone(const char* s) { return s != nullptr ? s : "none"; }

void StoreMin(std::atomic<uint64_t>* slot, uint64_t value) {
  uint64_t seen = slot->load(std::memory_order_relaxed);
  while (value < seen &&
         !slot->compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

void StoreMax(std::atomic<uint64_t>* slot, uint64_t value) {
  uint64_t seen = slot->load(std::memory_order_relaxed);
  while (value > seen &&
         !slot->compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// Handles: generation << 32 | (slot + 1) << 1 | channel. Never null.
void* MakeHandle(uint32_t generation, uint32_t slot, bool channel) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(generation) << 32 |
                                 static_cast<uintptr_t>(slot + 1) << 1 |
                                 (channel ? 1 : 0));
}

}  // namespace

struct NcclProfiler::Comm {
  uint64_t hash = 0;
  int ranks = 0;
  int rank = -1;
  uint32_t track = 0;  // string id of the GPU track's name
};

struct NcclProfiler::Op {
  // Bumped when the slot is claimed; handles carry it.
  std::atomic<uint32_t> generation{0};
  std::atomic<bool> busy{false};
  // Stops still to come: the enqueue's and one per announced channel.
  std::atomic<int> pending{0};
  std::atomic<uint64_t> gpu_start{kNoStart};
  std::atomic<uint64_t> gpu_end{0};
  // Written by the thread that started the operation, before the handle
  // is given out; read by whoever completes it.
  const Comm* comm = nullptr;
  bool collective = false;
  uint64_t seq = 0;
  int peer = -1;
  int64_t bytes = 0;
  uint32_t exec_name = 0;
  uint32_t api_name = 0;
  uint32_t args = 0;
  uint64_t correlation = 0;
  int64_t cpu_start = 0;
  int64_t cpu_end = 0;
  int64_t step = 0;
  bool has_step = false;
  char args_text[kArgsBytes] = {};
};

NcclProfiler::NcclProfiler(CaptureSink* sink)
    : sink_(sink), ops_(new Op[kSlots]), comms_(new Comm[kMaxComms]) {}

NcclProfiler::~NcclProfiler() = default;

nccl::Result NcclProfiler::Init(void** context, uint64_t comm_hash,
                                int* activation_mask, const char* comm_name,
                                int /*nodes*/, int ranks, int rank) {
  *context = nullptr;
  // NCCL keeps one mask for the process: every communicator gets the same.
  *activation_mask =
      sink_ == nullptr
          ? 0
          : static_cast<int>(nccl::kColl | nccl::kP2p | nccl::kKernelCh);
  if (sink_ == nullptr) return nccl::kSuccess;
  const int index = comm_count_.fetch_add(1);
  if (index >= kMaxComms) return nccl::kSuccess;  // this one is not traced
  Comm& comm = comms_[index];
  comm.hash = comm_hash;
  comm.ranks = ranks;
  comm.rank = rank;
  char track[160];
  if (comm_name != nullptr && comm_name[0] != '\0') {
    snprintf(track, sizeof(track), "GPU NCCL %s (%016" PRIx64 ")", comm_name,
             comm_hash);
  } else {
    snprintf(track, sizeof(track), "GPU NCCL %016" PRIx64, comm_hash);
  }
  comm.track = sink_->Name(track);
  *context = &comm;
  return nccl::kSuccess;
}

NcclProfiler::Op* NcclProfiler::Resolve(void* handle, bool* channel) const {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(handle);
  const uint32_t slot = static_cast<uint32_t>((bits & 0xffffffffu) >> 1);
  if (slot == 0 || slot > kSlots) return nullptr;
  Op* op = &ops_[slot - 1];
  if (op->generation.load(std::memory_order_acquire) != bits >> 32) {
    return nullptr;  // the slot was reused: a stale event
  }
  if (channel != nullptr) *channel = (bits & 1) != 0;
  return op;
}

nccl::Result NcclProfiler::StartEvent(void* context, void** handle,
                                      const nccl::EventDescrV5* descr) {
  *handle = nullptr;
  if (sink_ == nullptr || descr == nullptr) return nccl::kSuccess;
  if (descr->type == nccl::kKernelCh) {
    bool channel = true;
    Op* op = Resolve(descr->parent, &channel);
    if (op == nullptr || channel) return nccl::kSuccess;
    const uint64_t timer = descr->kernel_ch.gpu_timer;
    if (timer != 0) {
      clock_.Observe(sink_->NowNs(), timer);
      StoreMin(&op->gpu_start, timer);
    }
    *handle = MakeHandle(op->generation.load(std::memory_order_relaxed),
                         static_cast<uint32_t>(op - ops_.get()), true);
    return nccl::kSuccess;
  }
  const bool collective = descr->type == nccl::kColl;
  if ((!collective && descr->type != nccl::kP2p) || context == nullptr ||
      !sink_->Recording()) {
    return nccl::kSuccess;
  }
  const Comm* comm = static_cast<const Comm*>(context);

  // The next slot; one still busy 4096 operations later is given up on.
  const uint32_t index = static_cast<uint32_t>(next_op_.fetch_add(1) % kSlots);
  Op* op = &ops_[index];
  Retire(op);

  const char* func = collective ? descr->coll.func : descr->p2p.func;
  const char* datatype =
      collective ? descr->coll.datatype : descr->p2p.datatype;
  const size_t count = collective ? descr->coll.count : descr->p2p.count;
  const int channels = collective ? descr->coll.channels : descr->p2p.channels;
  op->comm = comm;
  op->collective = collective;
  op->seq = collective ? descr->coll.seq : 0;
  op->peer = collective ? -1 : descr->p2p.peer;
  op->bytes = static_cast<int64_t>(count) * TypeBytes(datatype);
  op->exec_name = sink_->Name(func);
  char api[64];
  snprintf(api, sizeof(api), "nccl%s", OrNone(func));
  op->api_name = sink_->Name(api);
  if (collective) {
    const bool rooted = func != nullptr && (strcmp(func, "Broadcast") == 0 ||
                                            strcmp(func, "Reduce") == 0);
    char root[24] = "";
    if (rooted) {
      snprintf(root, sizeof(root), ";root=%d", descr->coll.root);
      op->peer = descr->coll.root;  // as MPI's rooted collectives carry it
    }
    snprintf(op->args_text, kArgsBytes,
             "algo=%s;proto=%s;channels=%d;count=%zu;datatype=%s;rank=%d%s",
             OrNone(descr->coll.algorithm), OrNone(descr->coll.protocol),
             channels, count, OrNone(datatype), comm->rank, root);
  } else {
    snprintf(op->args_text, kArgsBytes,
             "channels=%d;count=%zu;datatype=%s;rank=%d", channels, count,
             OrNone(datatype), comm->rank);
  }
  op->args = sink_->Name(op->args_text);
  op->correlation = kCorrelationBase |
                    next_correlation_.fetch_add(1, std::memory_order_relaxed);
  op->has_step = sink_->Step(&op->step);
  op->gpu_start.store(kNoStart, std::memory_order_relaxed);
  op->gpu_end.store(0, std::memory_order_relaxed);
  op->cpu_end = 0;
  op->pending.store(1 + channels, std::memory_order_relaxed);
  op->cpu_start = sink_->NowNs();
  op->busy.store(true, std::memory_order_release);
  *handle =
      MakeHandle(op->generation.load(std::memory_order_relaxed), index, false);
  return nccl::kSuccess;
}

nccl::Result NcclProfiler::RecordEventState(void* handle, int state,
                                            const nccl::EventStateArgs* args) {
  if (state != nccl::kKernelChStop || args == nullptr) return nccl::kSuccess;
  bool channel = false;
  Op* op = Resolve(handle, &channel);
  if (op == nullptr || !channel) return nccl::kSuccess;
  const uint64_t timer = args->kernel_ch.gpu_timer;
  if (timer != 0) {
    clock_.Observe(sink_->NowNs(), timer);
    StoreMax(&op->gpu_end, timer);
  }
  return nccl::kSuccess;
}

nccl::Result NcclProfiler::StopEvent(void* handle) {
  bool channel = false;
  Op* op = Resolve(handle, &channel);
  if (op == nullptr) return nccl::kSuccess;
  if (!channel) {
    // The operation is enqueued: its launch span, on this thread.
    op->cpu_end = sink_->NowNs();
    ProbeRecord launch{};
    launch.start_ns = op->cpu_start;
    launch.dur_ns = op->cpu_end - op->cpu_start;
    launch.name = op->api_name;
    launch.category = kCategoryCudaRuntime;
    launch.correlation = op->correlation;
    launch.bytes = op->bytes;
    sink_->Emit(launch, true);
  }
  if (op->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) Complete(op);
  return nccl::kSuccess;
}

void NcclProfiler::Complete(Op* op) {
  if (!op->busy.exchange(false, std::memory_order_acq_rel)) return;
  const bool timed =
      op->gpu_start.load(std::memory_order_relaxed) != kNoStart &&
      op->gpu_end.load(std::memory_order_relaxed) != 0;
  EmitExecution(op, timed);
}

void NcclProfiler::Retire(Op* op) {
  // Events still to come for the slot's operation are ignored from now on.
  op->generation.fetch_add(1, std::memory_order_acq_rel);
  Complete(op);
}

void NcclProfiler::EmitExecution(Op* op, bool gpu_timed) {
  ProbeRecord r{};
  if (gpu_timed) {
    const uint64_t start = op->gpu_start.load(std::memory_order_relaxed);
    const uint64_t end = op->gpu_end.load(std::memory_order_relaxed);
    r.start_ns = clock_.ToHost(start);
    r.dur_ns = end > start ? static_cast<int64_t>(end - start) : 0;
    r.args = op->args;
    gpu_timed_.fetch_add(1, std::memory_order_relaxed);
  } else {
    // Only the enqueue was seen (or it never finished being enqueued).
    const int64_t end = op->cpu_end != 0 ? op->cpu_end : op->cpu_start;
    r.start_ns = op->cpu_start;
    r.dur_ns = end - op->cpu_start;
    char args[kArgsBytes + 24];
    snprintf(args, sizeof(args), "%s;timing=enqueue", op->args_text);
    r.args = sink_->Name(args);
    enqueue_timed_.fetch_add(1, std::memory_order_relaxed);
  }
  r.name = op->exec_name;
  r.category = kCategoryNccl;
  r.queue = op->comm->track;
  r.flags = ProbeRecord::kGpuTrack;
  r.bytes = op->bytes;
  r.comm = op->comm->hash;
  r.comm_size = static_cast<uint32_t>(op->comm->ranks);
  r.correlation = op->correlation;
  if (op->collective) {
    r.seq = op->seq;
    r.flags |= ProbeRecord::kHasSeq;
  }
  if (op->peer >= 0) {
    r.peer = op->peer;
    r.flags |= ProbeRecord::kHasPeer;
  }
  if (op->has_step) {
    r.step = op->step;
    r.flags |= ProbeRecord::kHasStep;
  }
  sink_->Emit(r, false);
}

nccl::Result NcclProfiler::Finalize(void* context) {
  if (context == nullptr) return nccl::kSuccess;
  for (uint32_t i = 0; i < kSlots; ++i) {
    Op* op = &ops_[i];
    if (op->busy.load(std::memory_order_acquire) && op->comm == context) {
      Retire(op);
    }
  }
  return nccl::kSuccess;
}

}  // namespace meridian
