#include "capture/torch/c10d_recorder.h"

#include <cstdio>
#include <cstring>

namespace meridian {
namespace {

constexpr uint8_t kCategoryC10d = 10;  // v1::CATEGORY_C10D
// Groups of more members have their ranks left out of their args.
constexpr size_t kMaxListedRanks = 64;
constexpr size_t kArgsBytes = 1024;

// "backend=gloo;group=0;ranks=[0, 1]" (the ranks as Kineto lists a
// process group's).
std::string GroupArgs(const std::string& name, const std::string& backend,
                      const std::vector<int>& ranks) {
  std::string args = "backend=" + backend + ";group=" + name;
  if (ranks.size() <= kMaxListedRanks) {
    args += ";ranks=[";
    for (size_t i = 0; i < ranks.size(); ++i) {
      args += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
    }
    args += "]";
  }
  return args;
}

// FNV-1a, 64 bits: the group's id from its name and members, never 0.
uint64_t GroupId(const std::string& name, const std::vector<int>& ranks) {
  uint64_t h = 14695981039346656037ull;
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

bool C10dRecorder::OpNamed(const std::string& name, Op* op) {
  for (int i = 0; i <= static_cast<int>(Op::kRecv); ++i) {
    if (name == OpName(static_cast<Op>(i))) {
      *op = static_cast<Op>(i);
      return true;
    }
  }
  return false;
}

C10dRecorder::C10dRecorder(CaptureSink* sink)
    : sink_(sink), groups_(new Group[kMaxGroups]), slots_(new Slot[kSlots]) {
  if (sink_ != nullptr) {
    unregistered_queue_ = sink_->Name("c10d group (unregistered)");
  }
}

bool C10dRecorder::RegisterGroup(const void* group, const std::string& name,
                                 const std::string& backend,
                                 const std::vector<int>& world_ranks) {
  if (group == nullptr || world_ranks.empty() || sink_ == nullptr) {
    return false;
  }
  std::lock_guard<std::mutex> lock(register_mutex_);
  if (const Group* g = Find(group)) {
    return g->name == name && g->backend == backend && g->ranks == world_ranks;
  }
  const int count = group_count_.load(std::memory_order_relaxed);
  if (count == kMaxGroups) return false;
  Group& g = groups_[count];
  g.name = name;
  g.backend = backend;
  g.ranks = world_ranks;
  g.comm = GroupId(name, world_ranks);
  g.size = static_cast<uint32_t>(world_ranks.size());
  g.queue = sink_->Name(("c10d group " + name).c_str());
  g.args = GroupArgs(name, backend, world_ranks);
  g.key.store(group, std::memory_order_relaxed);
  // Published: readers see the entry whole once they see the count.
  group_count_.store(count + 1, std::memory_order_release);
  return true;
}

void C10dRecorder::UnregisterGroup(const void* group) {
  std::lock_guard<std::mutex> lock(register_mutex_);
  if (Group* g = Find(group)) g->key.store(nullptr, std::memory_order_release);
}

C10dRecorder::Group* C10dRecorder::Find(const void* key) {
  const int count = group_count_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    if (groups_[i].key.load(std::memory_order_acquire) == key) {
      return &groups_[i];
    }
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

C10dRecorder::Slot* C10dRecorder::SlotOf(uint64_t token, uint32_t* generation) {
  const uint64_t index = (token & 0xffffffffu) - 1;
  if (token == 0 || index >= kSlots) return nullptr;
  *generation = static_cast<uint32_t>(token >> 32);
  return &slots_[index];
}

void C10dRecorder::Free(Slot* slot, uint32_t generation) {
  slot->state.store(Word(generation + 1, kFree), std::memory_order_release);
}

C10dRecorder::Slot* C10dRecorder::Claim(uint64_t* token) {
  for (uint32_t tries = 0; tries < kSlots; ++tries) {
    const uint64_t index =
        next_slot_.fetch_add(1, std::memory_order_relaxed) % kSlots;
    Slot* slot = &slots_[index];
    uint64_t word = slot->state.load(std::memory_order_acquire);
    const uint32_t generation = static_cast<uint32_t>(word >> 32);
    if (static_cast<State>(word & 0xffffffffu) == kCalled) {
      Retire(slot, generation);
      word = slot->state.load(std::memory_order_acquire);
    }
    if (static_cast<State>(word & 0xffffffffu) == kFree &&
        slot->state.compare_exchange_strong(
            word, Word(static_cast<uint32_t>(word >> 32), kCalling),
            std::memory_order_acquire)) {
      *token = (word >> 32 << 32) | (index + 1);
      return slot;
    }
  }
  return nullptr;
}

uint32_t C10dRecorder::ArgsWith(int16_t group, const char* key,
                                const char* value) {
  char args[kArgsBytes];
  snprintf(args, sizeof(args), "%s;%s=%s",
           group < 0 ? "group=unregistered" : groups_[group].args.c_str(), key,
           value);
  return sink_->Name(args);
}

void C10dRecorder::Retire(Slot* slot, uint32_t generation) {
  uint64_t expected = Word(generation, kCalled);
  if (!slot->state.compare_exchange_strong(
          expected, Word(generation, kRetiring), std::memory_order_acq_rel)) {
    return;
  }
  // Its key's entry, if still there, names this generation: a later
  // WorkStart finds it stale and drops it.
  enqueue_only_.fetch_add(1, std::memory_order_relaxed);
  Emit(*slot, slot->call_end_ns.load(std::memory_order_relaxed),
       ArgsWith(slot->group, "timing", "enqueue"));
  Free(slot, generation);
}

namespace {

// This thread's Python functions that wait for their operations, and
// whether it has an operation published in flight.
thread_local int tls_python_calls = 0;
thread_local bool tls_in_call = false;
// The operation this thread's last Begin published, until taken.
thread_local ProbeRecord tls_last_begun{};
thread_local bool tls_has_last_begun = false;

}  // namespace

void C10dRecorder::PythonCallBegin() {
  ++tls_python_calls;
  tls_has_last_begun = false;  // what the function begins, from now
}

bool C10dRecorder::TakeLastBegun(ProbeRecord* out) {
  if (!tls_has_last_begun) return false;
  *out = tls_last_begun;
  tls_has_last_begun = false;
  return true;
}

void C10dRecorder::WaitBegin(const ProbeRecord& record) {
  ++tls_python_calls;
  if (sink_ == nullptr || !sink_->Recording()) return;
  ProbeRecord r = record;
  r.start_ns = sink_->NowNs();
  sink_->EnterCall(r);
  tls_in_call = true;
}

void C10dRecorder::PythonCallEnd() {
  if (tls_python_calls > 0) --tls_python_calls;
  if (tls_python_calls == 0 && tls_in_call && sink_ != nullptr) {
    sink_->LeaveCall();
    tls_in_call = false;
  }
}

uint64_t C10dRecorder::Begin(const Call& call) {
  if (sink_ == nullptr) return 0;
  Group* group = Find(call.group);
  // Counted whether or not it is recorded: equal on every member.
  uint64_t seq = 0;
  if (group != nullptr && IsCollective(call.op)) {
    seq = group->next_seq.fetch_add(1, std::memory_order_relaxed);
  }
  if (!sink_->Recording()) return 0;
  uint64_t token;
  Slot* slot = Claim(&token);
  if (slot == nullptr) {
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  ProbeRecord& r = slot->record;
  r = ProbeRecord{};
  r.start_ns = sink_->NowNs();
  slot->call_end_ns.store(r.start_ns, std::memory_order_relaxed);
  r.bytes = call.bytes;
  r.name = sink_->Name(OpName(call.op));
  r.tag = call.tag;
  r.category = kCategoryC10d;
  if (sink_->Step(&r.step)) r.flags |= ProbeRecord::kHasStep;
  if (group == nullptr) {
    unregistered_.fetch_add(1, std::memory_order_relaxed);
    slot->group = -1;
    r.queue = unregistered_queue_;
  } else {
    slot->group = static_cast<int16_t>(group - groups_.get());
    r.comm = group->comm;
    r.comm_size = group->size;
    r.queue = group->queue;
    if (IsCollective(call.op)) {
      r.seq = seq;
      r.flags |= ProbeRecord::kHasSeq;
    }
    if (call.group_peer >= 0 &&
        static_cast<size_t>(call.group_peer) < group->ranks.size()) {
      r.peer = group->ranks[call.group_peer];
      r.flags |= ProbeRecord::kHasPeer;
    }
  }
  if (call.op == Op::kSend || call.op == Op::kRecv) {
    r.flags |= ProbeRecord::kHasTag;
  }
  sink_->EnterCall(r);
  tls_in_call = true;
  tls_last_begun = r;
  tls_has_last_begun = true;
  // The key's entry published last (release): a worker that finds it sees
  // the slot filled. An entry of the same key still there (its operation's
  // work has not begun) is replaced: that operation is left to Retire.
  if (!by_key_.Insert(call.key + 1, token)) {
    untracked_.fetch_add(1, std::memory_order_relaxed);
  }
  return token;
}

void C10dRecorder::CallEnd(uint64_t op) {
  if (tls_in_call && tls_python_calls == 0 && sink_ != nullptr) {
    sink_->LeaveCall();
    tls_in_call = false;
  }
  uint32_t generation;
  Slot* s = SlotOf(op, &generation);
  if (s == nullptr) return;
  s->call_end_ns.store(sink_->NowNs(), std::memory_order_relaxed);
  uint64_t expected = Word(generation, kCalling);
  // Fails where the work already began (kBound: it records the
  // operation) or the slot moved on.
  s->state.compare_exchange_strong(expected, Word(generation, kCalled),
                                   std::memory_order_release);
}

void C10dRecorder::WorkStart(uint64_t handle, uint64_t key, const char* title) {
  if (handle == 0 || !IsWorkTitle(title)) return;
  uint64_t token;
  if (!by_key_.Take(key + 1, &token)) return;
  uint32_t generation;
  Slot* s = SlotOf(token, &generation);
  if (s == nullptr) return;
  uint64_t word = s->state.load(std::memory_order_acquire);
  for (;;) {
    if (word != Word(generation, kCalling) &&
        word != Word(generation, kCalled)) {
      return;  // retired or reused since: a stale entry
    }
    if (s->state.compare_exchange_weak(word, Word(generation, kBound),
                                       std::memory_order_acq_rel)) {
      break;
    }
  }
  s->record.args = ArgsWith(s->group, "work", title);
  if (!by_handle_.Insert(handle, token)) {
    // No room to wait for its end: recorded now, as far as it got.
    untracked_.fetch_add(1, std::memory_order_relaxed);
    Emit(*s, sink_->NowNs(), s->record.args);
    Free(s, generation);
  }
}

void C10dRecorder::WorkDone(uint64_t handle) {
  uint64_t token;
  if (handle == 0 || !by_handle_.Take(handle, &token)) return;
  uint32_t generation;
  Slot* s = SlotOf(token, &generation);
  if (s == nullptr ||
      s->state.load(std::memory_order_acquire) != Word(generation, kBound)) {
    return;
  }
  Emit(*s, sink_->NowNs(), s->record.args);
  Free(s, generation);
}

void C10dRecorder::Flush() {
  for (uint32_t i = 0; i < kSlots; ++i) {
    const uint64_t word = slots_[i].state.load(std::memory_order_acquire);
    Retire(&slots_[i], static_cast<uint32_t>(word >> 32));
  }
}

void C10dRecorder::Emit(const Slot& s, int64_t end_ns, uint32_t args) {
  ProbeRecord r = s.record;
  r.dur_ns = end_ns > r.start_ns ? end_ns - r.start_ns : 0;
  r.args = args;
  sink_->Emit(r, false);
  recorded_.fetch_add(1, std::memory_order_relaxed);
}

C10dRecorder::Counters C10dRecorder::counters() const {
  Counters c;
  c.recorded = recorded_.load(std::memory_order_relaxed);
  c.enqueue_only = enqueue_only_.load(std::memory_order_relaxed);
  c.unregistered = unregistered_.load(std::memory_order_relaxed);
  c.untracked = untracked_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace meridian
