#include "capture/torch/c10d_recorder.h"

#include <cstdio>
#include <cstring>

namespace meridian {
namespace {

constexpr uint8_t kCategoryC10d = 10;  // v1::CATEGORY_C10D
constexpr size_t kArgsBytes = 256;

// FNV-1a, 64 bits: the group's id from its name and members, never 0.
uint64_t GroupId(const std::string& name, const std::vector<int>& ranks) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 1099511628211ull;
    }
  };
  mix(name.data(), name.size());
  mix("\0", 1);
  for (int r : ranks) mix(&r, sizeof(r));
  return h == 0 ? 1 : h;
}

}  // namespace

const char* C10dRecorder::OpName(Op op) {
  switch (op) {
    case Op::kAllreduce:
      return "allreduce";
    case Op::kBroadcast:
      return "broadcast";
    case Op::kReduce:
      return "reduce";
    case Op::kAllgather:
      return "allgather";
    case Op::kGather:
      return "gather";
    case Op::kScatter:
      return "scatter";
    case Op::kReduceScatter:
      return "reduce_scatter";
    case Op::kAlltoall:
      return "alltoall";
    case Op::kBarrier:
      return "barrier";
    case Op::kSend:
      return "send";
    case Op::kRecv:
      return "recv";
  }
  return "unknown";
}

C10dRecorder::C10dRecorder(CaptureSink* sink)
    : sink_(sink), groups_(new Group[kMaxGroups]), slots_(new Slot[kSlots]) {
  if (sink_ != nullptr) {
    unregistered_queue_ = sink_->Name("c10d group (unregistered)");
    unregistered_args_ = sink_->Name("group=unregistered");
  }
}

bool C10dRecorder::RegisterGroup(const void* group, const std::string& name,
                                 const std::string& backend,
                                 const std::vector<int>& world_ranks) {
  if (group == nullptr || world_ranks.empty() || sink_ == nullptr) {
    return false;
  }
  std::lock_guard<std::mutex> lock(register_mutex_);
  const int count = group_count_.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i) {
    const Group& g = groups_[i];
    if (g.key == group) {
      return g.name == name && g.backend == backend && g.ranks == world_ranks;
    }
  }
  if (count == kMaxGroups) return false;
  Group& g = groups_[count];
  g.key = group;
  g.name = name;
  g.backend = backend;
  g.ranks = world_ranks;
  g.comm = GroupId(name, world_ranks);
  g.size = static_cast<uint32_t>(world_ranks.size());
  g.queue = sink_->Name(("c10d group " + name).c_str());
  g.args = sink_->Name(("backend=" + backend + ";group=" + name).c_str());
  // Published: readers see the entry whole once they see the count.
  group_count_.store(count + 1, std::memory_order_release);
  return true;
}

C10dRecorder::Group* C10dRecorder::Find(const void* key) {
  const int count = group_count_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (groups_[i].key == key) return &groups_[i];
  }
  return nullptr;
}

bool C10dRecorder::IsWorkTitle(const char* title) const {
  const int count = group_count_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    const std::string& b = groups_[i].backend;
    if (strncmp(title, b.c_str(), b.size()) == 0 && title[b.size()] == ':') {
      return true;
    }
  }
  return false;
}

C10dRecorder::Slot* C10dRecorder::Claim() {
  for (uint32_t tries = 0; tries < kSlots; ++tries) {
    Slot* slot =
        &slots_[next_slot_.fetch_add(1, std::memory_order_relaxed) % kSlots];
    Retire(slot);
    uint32_t expected = kFree;
    if (slot->state.compare_exchange_strong(expected, kCalling,
                                            std::memory_order_acquire)) {
      return slot;
    }
  }
  return nullptr;
}

void C10dRecorder::Retire(Slot* slot) {
  uint32_t expected = kCalled;
  if (!slot->state.compare_exchange_strong(expected, kRetiring,
                                           std::memory_order_acq_rel)) {
    return;
  }
  by_key_.Take(slot->key + 1, nullptr);
  char args[kArgsBytes];
  if (slot->group < 0) {
    snprintf(args, sizeof(args), "group=unregistered;timing=enqueue");
  } else {
    const Group& g = groups_[slot->group];
    snprintf(args, sizeof(args), "backend=%s;group=%s;timing=enqueue",
             g.backend.c_str(), g.name.c_str());
  }
  enqueue_only_.fetch_add(1, std::memory_order_relaxed);
  Emit(*slot, slot->call_end_ns, sink_->Name(args));
  slot->state.store(kFree, std::memory_order_release);
}

uint32_t C10dRecorder::Begin(const Call& call) {
  if (sink_ == nullptr || !sink_->Recording()) return 0;
  Slot* slot = Claim();
  if (slot == nullptr) return 0;
  Slot& s = *slot;
  s.start_ns = sink_->NowNs();
  s.call_end_ns = s.start_ns;
  s.bytes = call.bytes;
  s.key = call.key;
  s.name = sink_->Name(OpName(call.op));
  s.tag = call.tag;
  s.flags = 0;
  s.comm = 0;
  s.seq = 0;
  s.peer = 0;
  s.comm_size = 0;
  if (sink_->Step(&s.step)) s.flags |= ProbeRecord::kHasStep;
  Group* group = Find(call.group);
  if (group == nullptr) {
    unregistered_.fetch_add(1, std::memory_order_relaxed);
    s.group = -1;
    s.queue = unregistered_queue_;
    s.args = unregistered_args_;
  } else {
    s.group = static_cast<int16_t>(group - groups_.get());
    s.comm = group->comm;
    s.comm_size = group->size;
    s.queue = group->queue;
    s.args = group->args;
    if (IsCollective(call.op)) {
      s.seq = group->next_seq.fetch_add(1, std::memory_order_relaxed);
      s.flags |= ProbeRecord::kHasSeq;
    }
    if (call.group_peer >= 0 &&
        static_cast<size_t>(call.group_peer) < group->ranks.size()) {
      s.peer = group->ranks[call.group_peer];
      s.flags |= ProbeRecord::kHasPeer;
    }
  }
  if (call.op == Op::kSend || call.op == Op::kRecv) {
    s.flags |= ProbeRecord::kHasTag;
  }
  const uint32_t index = static_cast<uint32_t>(slot - slots_.get());
  // A key another operation still holds (the same tensor given again
  // before its work began) is taken over: that operation is left to Retire.
  by_key_.Insert(call.key + 1, index);
  return index + 1;
}

void C10dRecorder::CallEnd(uint32_t op) {
  if (op == 0 || op > kSlots) return;
  Slot& s = slots_[op - 1];
  s.call_end_ns = sink_->NowNs();
  uint32_t expected = kCalling;
  // Fails where the work already began (kBound): then it records it.
  s.state.compare_exchange_strong(expected, kCalled, std::memory_order_release);
}

void C10dRecorder::WorkStart(uint64_t handle, uint64_t key, const char* title) {
  if (handle == 0 || !IsWorkTitle(title)) return;
  uint32_t index;
  if (!by_key_.Take(key + 1, &index) || index >= kSlots) return;
  Slot& s = slots_[index];
  uint32_t state = s.state.load(std::memory_order_acquire);
  while ((state == kCalling || state == kCalled) &&
         !s.state.compare_exchange_weak(state, kBound,
                                        std::memory_order_acq_rel)) {
  }
  if (state != kCalling && state != kCalled) return;  // retired meanwhile
  if (s.key != key) {  // the key was taken over: not this work's operation
    s.state.store(state, std::memory_order_release);
    return;
  }
  char args[kArgsBytes];
  if (s.group < 0) {
    snprintf(args, sizeof(args), "group=unregistered;work=%s", title);
  } else {
    const Group& g = groups_[s.group];
    snprintf(args, sizeof(args), "backend=%s;group=%s;work=%s",
             g.backend.c_str(), g.name.c_str(), title);
  }
  s.args = sink_->Name(args);
  if (!by_handle_.Insert(handle, index)) {
    // No room to wait for its end: recorded as its call.
    s.state.store(kCalled, std::memory_order_release);
    Retire(&s);
  }
}

void C10dRecorder::WorkDone(uint64_t handle) {
  uint32_t index;
  if (handle == 0 || !by_handle_.Take(handle, &index) || index >= kSlots) {
    return;
  }
  Slot& s = slots_[index];
  if (s.state.load(std::memory_order_acquire) != kBound) return;
  Emit(s, sink_->NowNs(), s.args);
  s.state.store(kFree, std::memory_order_release);
}

void C10dRecorder::Flush() {
  for (uint32_t i = 0; i < kSlots; ++i) Retire(&slots_[i]);
}

void C10dRecorder::Emit(const Slot& s, int64_t end_ns, uint32_t args) {
  ProbeRecord r{};
  r.start_ns = s.start_ns;
  r.dur_ns = end_ns > s.start_ns ? end_ns - s.start_ns : 0;
  r.bytes = s.bytes;
  r.comm = s.comm;
  r.seq = s.seq;
  r.step = s.step;
  r.name = s.name;
  r.queue = s.queue;
  r.peer = s.peer;
  r.tag = s.tag;
  r.comm_size = s.comm_size;
  r.category = kCategoryC10d;
  r.flags = s.flags;
  r.args = args;
  sink_->Emit(r, false);
  recorded_.fetch_add(1, std::memory_order_relaxed);
}

C10dRecorder::Counters C10dRecorder::counters() const {
  Counters c;
  c.recorded = recorded_.load(std::memory_order_relaxed);
  c.enqueue_only = enqueue_only_.load(std::memory_order_relaxed);
  c.unregistered = unregistered_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace meridian
