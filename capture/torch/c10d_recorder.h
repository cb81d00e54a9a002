// C10dRecorder: torch.distributed's (c10d's) operations as spans in the
// probe's ring, one span per operation, from its call to its work's
// completion. torch_callbacks.cc feeds it from torch's RecordFunction
// callbacks; it knows nothing of torch, so its tests need no torch.
//
// What a span carries (category C10D, docs/torch.md):
//   name      the operation: allreduce, broadcast, reduce, allgather,
//             gather, scatter, reduce_scatter, alltoall, barrier, send, recv
//   comm      the group's id: a hash of its name and its members' world
//             ranks, equal on every member (torch names groups in the order
//             every process creates them)
//   comm_size the group's size
//   seq       collectives only: the group's count of collectives before
//             this one, from 0, equal on every member (c10d requires every
//             member to issue a group's collectives in one order)
//   peer      the root of a rooted collective, the other side of a send or
//             receive: a world rank
//   tag       a send's or receive's tag
//   bytes     the tensors this rank gives (allreduce, broadcast, reduce,
//             send, recv: its tensors; allgather, gather, alltoall,
//             reduce_scatter: its inputs; scatter: what it receives)
//   step      the training step current when it was called
//   args      backend=gloo;group=0;ranks=[0, 1];work=gloo:all_reduce: the
//             group's backend, name and members' world ranks (left out past
//             64 members), the title of the backend's work; timing=enqueue
//             instead of work where no work was seen to complete (the span
//             then ends when the call returned)
// Spans go on the process's track "c10d group <name>" (a queue track): an
// operation may complete on the backend's thread, after its caller moved
// on, and a group's operations may overlap (DDP's buckets).
//
// The calls, per operation: Begin on the calling thread when the c10d op is
// called, CallEnd when it returns; WorkStart and WorkDone on whichever
// thread the backend's work begins and completes on (gloo: its worker
// threads, after the call may have returned; nccl and mpi: the calling
// thread, within the call). A work is matched to its operation by a key
// both show: the identity of the first tensor the operation gives the
// backend (Call::key; the work's first input), or for operations without
// tensors (barrier) none (key 0). The span is recorded when the work
// completes. Two operations waiting at once with one key (the same tensor
// given twice before the first's work began; two barriers): the work takes
// the later one, and the earlier one is recorded as unclaimed. An
// operation no work claims (a backend whose works torch does not profile,
// a key taken over, an op that threw before making its work) is recorded
// with its call's time and args timing=enqueue when its slot is needed
// again (kSlots operations later) or at Flush (collectives.py flushes at
// exit).
//
// seq is counted at every Begin, recorded or not (outside a recording
// window too), so that it stays equal on every member.
//
// Slots carry a generation, bumped each time one is freed; the tokens that
// name an operation (Begin's, and the values of the key and handle tables)
// hold it, so a late call for a slot reused since is recognised and
// ignored.
//
// Allocation: none per operation. Groups are registered (RegisterGroup,
// from Python, when torch creates them; UnregisterGroup when it destroys
// them) into a fixed table read without a lock; operations live in a fixed
// ring of slots, found by key and by the work's handle through fixed
// HandleTables. An operation on a group never registered is recorded with
// comm 0 (so never matched across ranks) and counted. Thread-safe: torch
// calls from any thread.
#ifndef MERIDIAN_CAPTURE_TORCH_C10D_RECORDER_H_
#define MERIDIAN_CAPTURE_TORCH_C10D_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture/probe/capture_sink.h"
#include "capture/probe/handle_table.h"

namespace meridian {

class C10dRecorder {
 public:
  static constexpr int kMaxGroups = 1024;
  static constexpr uint32_t kSlots = 4096;

  enum class Op : uint8_t {
    kAllreduce,
    kBroadcast,
    kReduce,
    kAllgather,
    kGather,
    kScatter,
    kReduceScatter,
    kAlltoall,
    kBarrier,
    kSend,
    kRecv,
  };
  // The span name of `op` ("allreduce"...), and the op of a name (false
  // for none).
  static const char* OpName(Op op);
  static bool OpNamed(const std::string& name, Op* op);
  static bool IsCollective(Op op) { return op != Op::kSend && op != Op::kRecv; }

  // An operation as its call gives it.
  struct Call {
    Op op;
    const void* group;  // the process group object: the key RegisterGroup got
    int64_t bytes;
    int32_t group_peer;  // root or peer as a rank of the group; -1: none
    int32_t tag;         // send/recv; 0 otherwise
    uint64_t key;        // the first tensor given to the backend; 0: none
  };

  struct Counters {
    uint64_t recorded = 0;      // spans emitted
    uint64_t enqueue_only = 0;  // of them, without a work seen to complete
    uint64_t unregistered = 0;  // operations on a group never registered
    uint64_t untracked = 0;     // operations the tables had no room for
  };

  // `sink` may be null: then nothing is recorded.
  explicit C10dRecorder(CaptureSink* sink);

  // Tells the recorder the group behind `group`: its name (torch's:
  // "0", "1"...), its backend ("gloo"), and its members' world ranks by
  // group rank. Again for a registered key, true only if equal (the entry
  // is kept). False if the table is full or `world_ranks` is empty. At most
  // kMaxGroups registrations in a process's life.
  bool RegisterGroup(const void* group, const std::string& name,
                     const std::string& backend,
                     const std::vector<int>& world_ranks);
  // `group` was destroyed: its key may name another group from now on.
  void UnregisterGroup(const void* group);

  // The calls of the top. Begin returns the operation's token, or 0 when
  // it is not recorded (not recording, no sink, no free slot): CallEnd is
  // then not needed.
  uint64_t Begin(const Call& call);
  void CallEnd(uint64_t op);
  // Work `handle` (non-zero), titled `title` ("gloo:all_reduce"), begins;
  // `key` as Call::key. Works of backends no group has, and works no
  // operation waits for, are ignored.
  void WorkStart(uint64_t handle, uint64_t key, const char* title);
  void WorkDone(uint64_t handle);
  // Whether `title` names a registered backend's work ("gloo:...").
  bool IsWorkTitle(const char* title) const;
  // Records every operation whose call returned but no work claimed, as
  // enqueue time.
  void Flush();
  // Calls in flight (abi/in_flight.h, docs/health.md): Begin publishes its
  // operation as the calling thread's call in flight, and CallEnd clears
  // it, unless a Python function that waits for it (a synchronous
  // torch.distributed.all_reduce...: collectives.py) runs on that thread:
  // then it stays until that function returns (PythonCallEnd), its wait
  // included. Per thread; nested calls count.
  static void PythonCallBegin();
  void PythonCallEnd();
  // An asynchronous operation's later wait (`work.wait()` of an
  // async_op=True call, an isend's): TakeLastBegun hands over the calling
  // thread's last operation Begin published (false: none since the last
  // take or PythonCallBegin), as the Python function that made it returns;
  // WaitBegin publishes that operation again as this thread's call in flight,
  // from now, until the matching PythonCallEnd (collectives.py keeps the record
  // with the work and wraps its wait), unless recording stopped meanwhile.
  // Thread-local: no slot of another thread's is read.
  static bool TakeLastBegun(ProbeRecord* out);
  void WaitBegin(const ProbeRecord& record);

  Counters counters() const;

 private:
  enum State : uint32_t { kFree, kCalling, kCalled, kBound, kRetiring };
  // A slot's state word: generation << 32 | State.
  static uint64_t Word(uint32_t generation, State state) {
    return static_cast<uint64_t>(generation) << 32 | state;
  }
  struct Slot {
    std::atomic<uint64_t> state{0};
    std::atomic<int64_t> call_end_ns{0};
    // The span as Begin made it (its dur_ns and args set when it is
    // emitted), and its group's index (-1: unregistered). Written by the
    // thread that moved `state` off kFree, read by the one that moves it on
    // (release/acquire through `state` or the tables).
    ProbeRecord record{};
    int16_t group = -1;
  };
  struct Group {
    std::atomic<const void*> key{nullptr};  // nullptr: unregistered
    uint64_t comm = 0;
    uint32_t size = 0;
    uint32_t queue = 0;
    std::atomic<uint64_t> next_seq{0};
    std::vector<int> ranks;
    std::string name;
    std::string backend;
    std::string args;  // "backend=gloo;group=0;ranks=[0, 1]"
  };

  // The registered group of `key` (lock-free: entries are published whole
  // and never change but for `key`), or nullptr.
  Group* Find(const void* key);
  // The slot of `token` and its generation, or nullptr.
  Slot* SlotOf(uint64_t token, uint32_t* generation);
  // A free slot moved to kCalling (retiring an unclaimed one), its token in
  // `*token`; nullptr if every slot is busy.
  Slot* Claim(uint64_t* token);
  // Records `slot` if it is kCalled (unclaimed) in `generation`, and frees
  // it.
  void Retire(Slot* slot, uint32_t generation);
  // Frees `slot` of `generation` (its next generation, kFree).
  static void Free(Slot* slot, uint32_t generation);
  void Emit(const Slot& slot, int64_t end_ns, uint32_t args);
  // The string id of group `group`'s args (-1: "group=unregistered") with
  // `key`=`value` after them.
  uint32_t ArgsWith(int16_t group, const char* key, const char* value);

  CaptureSink* const sink_;
  std::unique_ptr<Group[]> groups_;
  std::atomic<int> group_count_{0};
  std::mutex register_mutex_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_slot_{0};
  HandleTable<uint64_t, kSlots> by_key_;     // key + 1 -> token
  HandleTable<uint64_t, kSlots> by_handle_;  // work handle -> token
  uint32_t unregistered_queue_ = 0;
  std::atomic<uint64_t> recorded_{0};
  std::atomic<uint64_t> enqueue_only_{0};
  std::atomic<uint64_t> unregistered_{0};
  std::atomic<uint64_t> untracked_{0};
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_TORCH_C10D_RECORDER_H_
