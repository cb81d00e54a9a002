// MPI capture through the profiling interface: each MPI_X below records a
// ProbeRecord around PMPI_X. Built once per MPI family, against its mpi.h
// (mpi_family.cc: libmeridian_mpi_openmpi.so, libmeridian_mpi_mpich.so), and
// reached through libmeridian_probe.so's dispatcher (mpi_dispatch.h). Calls
// into MPI go to PMPI_* only: an MPI_* call would go back through the
// dispatcher.
//
// What a record holds (docs/architecture.md has the full table):
//   bytes      count x type size of the call's primary buffer, summed over
//              the counts of v-variants; rooted collectives count the root's
//              buffer at the root (Gather recv, Scatter send).
//   peer       destination, source (as received, for MPI_ANY_SOURCE) or
//              root, as a rank of MPI_COMM_WORLD.
//   comm       an id equal on every member: MPI_COMM_WORLD is 1,
//              MPI_COMM_SELF 2, and a communicator made by dup, split,
//              split_type, create or cart_create is Mix(parent id, how many
//              communicators the parent made before, world rank of the new
//              rank 0). Every member counts the same because those calls are
//              collective over the parent.
//   seq        for collectives, the instance number on that communicator
//              (0, 1, 2...), counted even outside the tracing window so that
//              it matches across ranks.
//   callsite   with MERIDIAN_CALLSITES=1, where the program made the call
//              (callsite.h); a persistent request's start names MPI_Start's.
//   args       a neighbor collective's in-neighbors, "sources=A,B,C" (world
//              ranks; NeighborSourcesArg), an MPI_Win_lock's lock type,
//              "lock_type=exclusive" or "lock_type=shared" (LockArgs), and
//              an MPI_Win_post's or MPI_Win_start's group, "group=A,B,C"
//              (world ranks; EpochGroupArg): what the dependency graph
//              needs (query/ops/mpi_args.h).
// Non-blocking calls are recorded from issue to completion (the Wait or
// Test that completes them); the Wait calls are recorded as well, the Test
// calls (usually polled) are not. MPI may return one completed request for
// many calls (Open MPI's small sends, MPICH's built-in completed requests):
// such requests are kept per thread in issue order, and each completion of
// the shared handle on that thread ends the oldest (SharedRequests).
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>  // MPIX_Bcast_init & co (the pcollreq extension)
#endif

#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>
#include <type_traits>

#include "capture/probe/callsite.h"
#include "capture/probe/handle_table.h"
#include "capture/probe/mpi_ops.h"
#include "capture/probe/probe_runtime.h"

namespace {

using meridian::HandleTable;
using meridian::ProbeRecord;
namespace probe = meridian::probe;

constexpr uint8_t kCategoryMpi = 1;  // v1::CATEGORY_MPI

// The recorded MPI functions (mpi_ops.h); their names are interned once
// (slot 16 + op).

enum Op {
#define MERIDIAN_ENUM(name) k##name,
  MERIDIAN_MPI_OPS(MERIDIAN_ENUM)
#undef MERIDIAN_ENUM
      kOpCount
};

const char* const kOpNames[] = {
#define MERIDIAN_NAME(name) "MPI_" #name,
    MERIDIAN_MPI_OPS(MERIDIAN_NAME)
#undef MERIDIAN_NAME
};
static_assert(16 + kOpCount <= probe::kNameSlots);

uint32_t OpName(Op op) { return probe::CachedName(16 + op, kOpNames[op]); }

// ---- Communicators ----------------------------------------------------------

// A table slot (key and CommInfo) is one cache line: a collective reads its
// communicator's id and size and counts its sequence number there.
struct CommInfo {
  uint64_t id;
  uint32_t size;
  const int32_t* world;  // world rank of each rank; nullptr: the identity
  uint64_t next_seq;     // both counters: __atomic builtins only
  uint64_t children;
  // The string id of this rank's "sources=..." arg on the communicator's
  // neighbor collectives, found at the first (NeighborSourcesArg): 0 not
  // yet, kNoSourcesArg none. __atomic builtins only.
  uint32_t sources_arg;
  uint32_t unused[3];
};
static_assert(sizeof(CommInfo) + 8 == 64);

alignas(64) HandleTable<CommInfo, 4096, 32> g_comms;
std::mutex g_comm_mutex;  // comm creation and lazy registration only

uint64_t Mix(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e5b9ULL);
  h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ULL ^ c;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h < 16 ? h + 16 : h;  // small ids are reserved (1: world, 2: self)
}

// A handle as a table key: Open MPI's handles are pointers, MPICH's are
// ints; neither family has a handle 0 (MPICH's null handles are non-zero
// constants too).
template <typename Handle>
uint64_t Key(Handle handle) {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<uintptr_t>(handle);
  } else {
    return static_cast<uint32_t>(handle);
  }
}

// The world ranks of `group`'s ranks 0..size-1 into `world` (MPI_UNDEFINED
// for one outside MPI_COMM_WORLD), with `scratch` (size ints) for the
// ranks asked; false if MPI failed.
bool ToWorldRanks(MPI_Group group, int size, int* scratch, int32_t* world) {
  MPI_Group world_group;
  if (PMPI_Comm_group(MPI_COMM_WORLD, &world_group) != MPI_SUCCESS) {
    return false;
  }
  for (int i = 0; i < size; ++i) scratch[i] = i;
  const int rc =
      PMPI_Group_translate_ranks(group, size, scratch, world_group, world);
  PMPI_Group_free(&world_group);
  return rc == MPI_SUCCESS;
}

// World ranks of `comm`'s ranks (allocated once per communicator; never
// freed, since records in flight may still point at it).
const int32_t* WorldRanksOfGroup(MPI_Group group, int size) {
  int* ranks = new (std::nothrow) int[size];
  int32_t* world = new (std::nothrow) int32_t[size];
  if (ranks != nullptr && world != nullptr) {
    ToWorldRanks(group, size, ranks, world);
  }
  delete[] ranks;
  return world;
}

const int32_t* WorldRanks(MPI_Comm comm, int size) {
  MPI_Group group;
  if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS) return nullptr;
  const int32_t* world = WorldRanksOfGroup(group, size);
  PMPI_Group_free(&group);
  return world;
}

// `world`: WorldRanks(comm, size), or nullptr for the identity.
CommInfo* Register(MPI_Comm comm, uint64_t id, int size, const int32_t* world) {
  const CommInfo info{id, static_cast<uint32_t>(size), world};
  if (!g_comms.Insert(Key(comm), info)) return nullptr;
  return g_comms.Find(Key(comm));
}

// An id from the members' world ranks: equal on all of them.
uint64_t IdOfMembers(uint64_t seed, const int32_t* world, int size) {
  uint64_t id = seed;
  for (int i = 0; world != nullptr && i < size; ++i) id = Mix(id, world[i], i);
  return id;
}

// The world rank of rank `rank` of a group of `size` whose world ranks are
// `world` (nullptr: the identity); -1 if none.
int32_t RankInWorld(const int32_t* world, uint32_t size, int rank) {
  if (rank < 0 || static_cast<uint32_t>(rank) >= size) return -1;
  return world == nullptr ? rank : world[rank];
}

int32_t WorldRankOf(const CommInfo* info, int rank) {
  return info == nullptr ? -1 : RankInWorld(info->world, info->size, rank);
}

// A communicator made without a wrapped call (Intercomm_create, Comm_idup,
// ...): its id hashes its members, the same on all of them, but equal for
// two such communicators with the same members.
CommInfo* RegisterLazily(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  if (CommInfo* info = g_comms.Find(Key(comm))) return info;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return nullptr;
  int size = 0;
  PMPI_Comm_size(comm, &size);
  const int32_t* world = WorldRanks(comm, size);
  return Register(comm, IdOfMembers(0x4c415a59 /* "LAZY" */, world, size), size,
                  world);
}

inline __attribute__((always_inline)) CommInfo* Comm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return nullptr;
  CommInfo* info = g_comms.Find(Key(comm));
  return info != nullptr ? info : RegisterLazily(comm);
}

// Registers `child`, the result of a collective creation over `parent`.
void RegisterChild(MPI_Comm parent, MPI_Comm child, uint64_t salt) {
  CommInfo* p = Comm(parent);
  const uint64_t ordinal =
      p == nullptr ? 0 : __atomic_fetch_add(&p->children, 1, __ATOMIC_RELAXED);
  if (child == MPI_COMM_NULL) return;
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  int size = 0;
  PMPI_Comm_size(child, &size);
  const int32_t* world = WorldRanks(child, size);
  const uint64_t first = world != nullptr && size > 0 ? world[0] : 0;
  const uint64_t parent_id = p == nullptr ? 0 : p->id;
  Register(child, Mix(Mix(parent_id, ordinal, salt), first, size), size, world);
}

// ---- Records ----------------------------------------------------------------

// Datatype sizes without a call into MPI for predefined (named) types,
// which MPI never frees: after its first use such a type's size is one load
// from one cache line. A derived type's handle is kept too, marked -1, so
// that it is asked for its size (it can be freed, and a new type made at its
// handle) with one call, not also checked for being named again. Entries
// are claimed once (0 -> kClaiming -> the handle) and never change after; a
// type finding its 4 slots taken is not kept.
class TypeSizes {
 public:
  // Inline: a named type in its home slot, the common case.
  int Size(MPI_Datatype type) {
    const uintptr_t key = Key(type);
    const Entry& entry = entries_[Home(key)];
    if (entry.type.load(std::memory_order_acquire) == key && entry.size >= 0) {
      return entry.size;
    }
    return SizeSlow(type);
  }

 private:
  static constexpr uint32_t kIndexBits = 6;
  static constexpr uint32_t kEntries = 1 << kIndexBits;
  static constexpr uint32_t kProbe = 4;
  static constexpr uintptr_t kClaiming = 1;
  struct Entry {
    std::atomic<uintptr_t> type{0};
    int size = 0;  // -1: a derived type
  };

  static int AskMpi(MPI_Datatype type) {
    int size = 0;
    PMPI_Type_size(type, &size);
    return size;
  }

  // The other slots of `type`'s 4; at its first use, its size kept in the
  // first free one.
  __attribute__((noinline, cold)) int SizeSlow(MPI_Datatype type) {
    const uintptr_t key = Key(type);
    const uint32_t home = Home(key);
    for (uint32_t i = 0; i < kProbe; ++i) {
      const Entry& entry = entries_[(home + i) & (kEntries - 1)];
      const uintptr_t held = entry.type.load(std::memory_order_acquire);
      if (held == key) return entry.size >= 0 ? entry.size : AskMpi(type);
      if (held == 0) break;
    }
    const int size = AskMpi(type);
    for (uint32_t i = 0; i < kProbe; ++i) {
      Entry& entry = entries_[(home + i) & (kEntries - 1)];
      uintptr_t expected = 0;
      if (entry.type.compare_exchange_strong(expected, kClaiming,
                                             std::memory_order_relaxed)) {
        entry.size = Named(type) ? size : -1;
        entry.type.store(key, std::memory_order_release);
        break;
      }
      if (expected == key) break;  // another thread kept it meanwhile
    }
    return size;
  }

  static uint32_t Home(uintptr_t key) {
    return static_cast<uint32_t>((key * 0x9e3779b97f4a7c15ULL) >>
                                 (64 - kIndexBits));
  }
  static bool Named(MPI_Datatype type) {
    int integers = 0, addresses = 0, types = 0, combiner = 0;
    return PMPI_Type_get_envelope(type, &integers, &addresses, &types,
                                  &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
  }

  alignas(64) Entry entries_[kEntries];
};

TypeSizes g_type_sizes;

inline __attribute__((always_inline)) int64_t TypeBytes(int64_t count,
                                                        MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL || count <= 0) return 0;
  return count * g_type_sizes.Size(type);
}

int64_t SumBytes(const int counts[], int n, MPI_Datatype type) {
  if (counts == nullptr) return 0;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) total += counts[i];
  return TypeBytes(total, type);
}

// The current MPI call's call site, if MERIDIAN_CALLSITES=1 (callsite.h).
inline void SetCallsite(ProbeRecord* r) {
  r->flags &= ~ProbeRecord::kHasCallsite;
  if (const uint32_t callsite = probe::CurrentCallsite()) {
    r->callsite = callsite;
    r->flags |= ProbeRecord::kHasCallsite;
  }
}

inline __attribute__((always_inline)) ProbeRecord Base(Op op, int64_t start,
                                                       int64_t end,
                                                       const CommInfo* comm) {
  ProbeRecord r{};
  r.start_ns = start;
  r.dur_ns = end - start;
  r.name = OpName(op);
  r.category = kCategoryMpi;
  r.flags = probe::TimeFlags();
  if (comm != nullptr) {
    r.comm = comm->id;
    r.comm_size = comm->size;
  }
  probe::StampStep(&r);
  SetCallsite(&r);
  return r;
}

void SetPeer(ProbeRecord* r, int32_t world_rank) {
  if (world_rank < 0) return;
  r->peer = world_rank;
  r->flags |= ProbeRecord::kHasPeer;
}

void SetTag(ProbeRecord* r, int tag) {
  if (tag < 0) return;
  r->tag = tag;
  r->flags |= ProbeRecord::kHasTag;
}

// ---- Requests ---------------------------------------------------------------

// A request's communicator as it was when the request was made: the table
// entry of a communicator freed while the request is pending (MPI allows
// it) may be another communicator's by the time the request completes, so
// the world ranks that translate a wildcard receive's source are copied
// (the arrays are never freed).
struct CommRef {
  CommRef() = default;
  CommRef(const CommInfo* comm)  // NOLINT: made where a CommInfo* is
      : info(comm),
        world(comm != nullptr ? comm->world : nullptr),
        size(comm != nullptr ? comm->size : 0) {}
  // The world rank of the communicator's rank `rank`, -1 if none.
  int32_t WorldRank(int rank) const { return RankInWorld(world, size, rank); }
  // The table's entry, for a persistent collective's sequence numbers.
  const CommInfo* info = nullptr;
  const int32_t* world = nullptr;
  uint32_t size = 0;
};

// A non-blocking call waiting for its completion. `comm` translates the
// source of a wildcard receive when it completes.
struct Pending {
  ProbeRecord record;
  CommRef comm;
  bool resolve_source;
  bool resolve_tag;
  // A persistent collective: each start is the next instance on `comm`.
  bool collective = false;
};

HandleTable<Pending, 8192, 16> g_requests;

#if defined(OPEN_MPI)
// Open MPI's completed request, returned by every send it completes
// inline (ob1's send_inline): one handle for many requests. Exported by
// libmpi; weak, so a library without it leaves the address null.
extern "C" __attribute__((weak)) char ompi_request_empty;
#endif

// Whether `request` is a completed request MPI hands to many calls at
// once, so that its handle does not tell one request from another.
bool SharedCompleted(MPI_Request request) {
#if defined(OPEN_MPI)
  const void* empty = &ompi_request_empty;
  return empty != nullptr && static_cast<const void*>(request) == empty;
#else
  // MPICH: a built-in object (handle kind 1, in bits 30-31); its built-in
  // requests are completed ones.
  return (static_cast<uint32_t>(request) >> 30) == 1;
#endif
}

// This thread's scratch memory for array completion calls (SavedRequests),
// made at its first one; and whether EndThread will run at its end.
struct Scratch {
  static constexpr int kSize = 1024;
  uint32_t tickets[kSize];
  MPI_Status statuses[kSize];
};
thread_local Scratch* tls_scratch = nullptr;
thread_local bool tls_thread_watched = false;
void WatchThreadEnd();

// This thread's requests whose handle is a shared completed one, in issue
// order, in g_requests under keys of their own (bit 62, the thread's number,
// the request's): a completion of the shared handle on this thread ends the
// oldest. Their handles being equal, which Wait ends which of them is
// known only by order; each record keeps its own bytes, peer and tag. A
// thread that hands such requests to another to complete (which then ends
// its own oldest, if any) keeps at most kBacklog; older ones, and those left
// when the thread exits, are recorded as ending with their issuing call,
// where MPI completed them.
class SharedRequests {
 public:
  static constexpr uint32_t kBacklog = 64;
  void Issue(const Pending& pending) {
    Number();
    if (issued_ - completed_ >= kBacklog) EndInCall();
    // Its place in the order is taken even if the table is full.
    g_requests.Insert(KeyOf(issued_++), pending);
  }
  // A shared completed request issued while recording was off: its
  // completion ends nothing.
  void Skip() {
    Number();
    if (issued_ - completed_ >= kBacklog) EndInCall();
    ++issued_;
  }
  // Takes the oldest into `out`: false if this thread has none, or the
  // oldest was not recorded.
  bool Oldest(Pending* out) {
    if (completed_ == issued_) return false;
    return g_requests.Take(KeyOf(completed_++), out);
  }
  // The oldest ends where MPI completed it, in its issuing call.
  void EndInCall() {
    Pending oldest;
    if (!Oldest(&oldest)) return;
    oldest.record.dur_ns = oldest.record.extra;
    probe::Emit(oldest.record);
  }
  bool empty() const { return completed_ == issued_; }

 private:
  static inline std::atomic<uint32_t> g_threads{0};
  void Number() {
    if (number_ == 0) {
      number_ =
          (g_threads.fetch_add(1, std::memory_order_relaxed) & 0x3fffffff) + 1;
    }
  }
  uint64_t KeyOf(uint32_t n) const {
    return 1ULL << 62 | static_cast<uint64_t>(number_) << 32 | n;
  }
  uint32_t number_ = 0;
  uint32_t issued_ = 0;
  uint32_t completed_ = 0;
};
// Trivially destructible: a thread's state outlives every C++ thread_local
// destructor (which may still call MPI); EndThread, a pthread key
// destructor, runs after them and ends what is left.
thread_local SharedRequests tls_shared;

// The ticket (HandleTable::Mark) standing for "this thread's oldest shared
// completed request".
constexpr uint32_t kSharedTicket = UINT32_MAX;

// `record` starts where the issuing call started; the call returned at
// `call_end`: the time inside it goes with the record (kExtraCallTime).
void IssueAt(MPI_Request* request, ProbeRecord record, int64_t call_end,
             const CommInfo* comm, bool resolve_source, bool resolve_tag) {
  if (request == nullptr || *request == MPI_REQUEST_NULL) return;
  record.extra = call_end - record.start_ns;
  record.flags |= ProbeRecord::kExtraCallTime;
  const Pending pending{record, comm, resolve_source, resolve_tag};
  if (SharedCompleted(*request)) {
    WatchThreadEnd();
    tls_shared.Issue(pending);
  } else {
    g_requests.Insert(Key(*request), pending);
  }
}

// The issuing call returned just now.
void Issue(MPI_Request* request, const ProbeRecord& record,
           const CommInfo* comm, bool resolve_source, bool resolve_tag) {
  IssueAt(request, record, probe::Now(), comm, resolve_source, resolve_tag);
}

// The request of `handle` (MPI_REQUEST_NULL or not) is about to be
// completed by this thread: marks its entry (HandleTable::Mark) and
// returns the ticket, 0 if the probe is not waiting for it.
uint32_t MarkRequest(const MPI_Request* handle) {
  if (handle == nullptr || *handle == MPI_REQUEST_NULL) return 0;
  if (SharedCompleted(*handle)) return kSharedTicket;
  return g_requests.Mark(Key(*handle));
}

// The request of `ticket` completed at `end` with `status` (nullptr if
// unknown).
void Complete(uint32_t ticket, int64_t end, const MPI_Status* status) {
  Pending pending;
  if (ticket == kSharedTicket ? !tls_shared.Oldest(&pending)
                              : !g_requests.TakeMarked(ticket, &pending)) {
    return;
  }
  ProbeRecord& r = pending.record;
  r.dur_ns = end - r.start_ns;
  if (status != nullptr && status != MPI_STATUS_IGNORE) {
    if (pending.resolve_source) {
      SetPeer(&r, pending.comm.WorldRank(status->MPI_SOURCE));
    }
    if (pending.resolve_tag) SetTag(&r, status->MPI_TAG);
  }
  probe::Emit(r);
}

// The requests of an array completion call (Waitall & co), marked before
// the call completes and overwrites them (MarkRequest), and the statuses to
// pass it: the caller's, or ours when the caller ignores them and the count
// fits, so that wildcard receives still learn their source. Requests the
// call did not complete are unmarked when this goes out of scope. The
// scratch memory is allocated once per thread, on its first such call, and
// freed when the thread exits; beyond kScratch requests the rest are not
// matched.
class SavedRequests {
 public:
  SavedRequests(int count, const MPI_Request requests[], MPI_Status* statuses) {
    if (tls_scratch == nullptr) {
      tls_scratch = new (std::nothrow) Scratch;
      WatchThreadEnd();
    }
    scratch_ = tls_scratch;
    statuses_ = statuses;
    if (scratch_ == nullptr || requests == nullptr) return;
    saved_ = count < kScratch ? count : kScratch;
    for (int i = 0; i < saved_; ++i) {
      scratch_->tickets[i] = MarkRequest(&requests[i]);
    }
    if (statuses_ == MPI_STATUSES_IGNORE && count <= kScratch) {
      statuses_ = scratch_->statuses;
    }
  }
  ~SavedRequests() {
    for (int i = 0; i < saved_; ++i) g_requests.Unmark(scratch_->tickets[i]);
  }
  SavedRequests(const SavedRequests&) = delete;
  SavedRequests& operator=(const SavedRequests&) = delete;

  MPI_Status* statuses() const { return statuses_; }

  // Request `index` completed at `end`; its status is `status`.
  void Complete(int index, int64_t end, const MPI_Status* status) {
    if (index != MPI_UNDEFINED && index >= 0 && index < saved_) {
      ::Complete(scratch_->tickets[index], end, status);
      scratch_->tickets[index] = 0;
    }
  }
  // Every request completed (Waitall, Testall).
  void CompleteAll(int64_t end) {
    for (int i = 0; i < saved_; ++i) Complete(i, end, StatusAt(i));
  }
  // The `outcount` requests in `indices` completed (Waitsome, Testsome).
  void CompleteSome(int outcount, const int indices[], int64_t end) {
    for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; ++i) {
      Complete(indices[i], end, StatusAt(i));
    }
  }

 private:
  static constexpr int kScratch = Scratch::kSize;

  const MPI_Status* StatusAt(int i) const {
    return statuses_ == MPI_STATUSES_IGNORE ? nullptr : &statuses_[i];
  }

  Scratch* scratch_ = nullptr;
  int saved_ = 0;
  MPI_Status* statuses_;
};

// The end of a thread that made MPI calls: what is left of its shared
// completed requests ends in their calls, and its scratch memory goes.
// A pthread key destructor, so it runs after the thread's C++ thread_local
// destructors; a later key destructor that calls MPI again sets the key
// again, and glibc runs this once more.
void EndThread(void*) {
  tls_thread_watched = false;
  while (!tls_shared.empty()) tls_shared.EndInCall();
  delete tls_scratch;
  tls_scratch = nullptr;
}

void WatchThreadEnd() {
  if (tls_thread_watched) return;
  static pthread_key_t key;
  static const bool made = pthread_key_create(&key, EndThread) == 0;
  if (made && pthread_setspecific(key, &tls_thread_watched) == 0) {
    tls_thread_watched = true;
  }
}

// ---- Call helpers -----------------------------------------------------------

ProbeRecord PointToPointRecord(Op op, int64_t start, int64_t end,
                               const CommInfo* info, int peer, int tag,
                               int64_t bytes) {
  ProbeRecord r = Base(op, start, end, info);
  r.bytes = bytes;
  SetPeer(&r, WorldRankOf(info, peer));
  SetTag(&r, tag);
  return r;
}

// A blocking point-to-point call that ran from `start` to now.
void RecordPointToPoint(Op op, int64_t start, MPI_Comm comm, int peer, int tag,
                        int64_t bytes) {
  const int64_t end = probe::Now();
  probe::Emit(PointToPointRecord(op, start, end, Comm(comm), peer, tag, bytes));
}

// A blocking call that sends `sent` of its `bytes` to `peer` with `tag` and
// receives the rest from `source` with `recv_tag` (Sendrecv; both as
// received, from the status): the sent bytes go with the record
// (kExtraSendBytes), and the receive's source and tag (kRecvPeer) unless
// it received nothing (MPI_PROC_NULL).
void RecordSendReceive(Op op, int64_t start, MPI_Comm comm, int peer, int tag,
                       int source, int recv_tag, int64_t bytes, int64_t sent) {
  const int64_t end = probe::Now();
  const CommInfo* info = Comm(comm);
  ProbeRecord r = PointToPointRecord(op, start, end, info, peer, tag, bytes);
  r.extra = sent;
  r.flags |= ProbeRecord::kExtraSendBytes;
  const int32_t from = WorldRankOf(info, source);
  if (from >= 0 && recv_tag >= 0) {
    r.seq = static_cast<uint64_t>(static_cast<uint32_t>(from)) |
            static_cast<uint64_t>(static_cast<uint32_t>(recv_tag)) << 32;
    r.flags |= ProbeRecord::kRecvPeer;
  }
  probe::Emit(r);
}

// A non-blocking one issued at `start`: recorded when it completes.
void IssuePointToPoint(Op op, int64_t start, MPI_Comm comm, int peer, int tag,
                       int64_t bytes, MPI_Request* request) {
  const CommInfo* info = Comm(comm);
  Issue(request, PointToPointRecord(op, start, start, info, peer, tag, bytes),
        info, peer == MPI_ANY_SOURCE, tag == MPI_ANY_TAG);
}

// The next instance number of a collective on `info` (always counted).
uint64_t NextSeq(CommInfo* info) {
  return info == nullptr
             ? 0
             : __atomic_fetch_add(&info->next_seq, 1, __ATOMIC_RELAXED);
}

inline __attribute__((always_inline)) ProbeRecord CollectiveRecord(
    Op op, int64_t start, int64_t end, CommInfo* info, uint64_t seq,
    int64_t bytes, int root) {
  ProbeRecord r = Base(op, start, end, info);
  r.bytes = bytes;
  r.seq = seq;
  r.flags |= ProbeRecord::kHasSeq;
  if (root >= 0) SetPeer(&r, WorldRankOf(info, root));
  return r;
}

int CommRank(MPI_Comm comm) {
  int rank = -1;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

int CommSize(MPI_Comm comm) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return size;
}

// How many entries the counts arrays of a v- or w-collective on `comm` have:
// its size, or on an intercommunicator the remote group's (MPI-3.1 5.8: the
// arrays describe what goes to and comes from the remote group).
int CountsSize(MPI_Comm comm) {
  int inter = 0, size = 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) {
    PMPI_Comm_remote_size(comm, &size);
  } else {
    PMPI_Comm_size(comm, &size);
  }
  return size;
}

void AfterInit(int64_t start, Op op) {
  const int64_t end = probe::Now();
  if (!probe::g_event.enabled) return;
  {
    std::lock_guard<std::mutex> lock(g_comm_mutex);
    Register(MPI_COMM_WORLD, 1, CommSize(MPI_COMM_WORLD), nullptr);
    Register(MPI_COMM_SELF, 2, 1, WorldRanks(MPI_COMM_SELF, 1));
  }
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Where the launcher's environment said neither (launch_env.h).
  probe::SetWorldRank(rank, CommSize(MPI_COMM_WORLD));
  if (probe::Recording()) probe::Emit(Base(op, start, end, nullptr));
}

// ---- Windows, files, topologies, messages -----------------------------------

// Windows and files are named like communicators: an id equal on every
// member, a size, world ranks. They live in g_comms too (their handles are
// other objects than communicators', so keys never coincide).
constexpr uint64_t kWindowSalt = 0x57494e;  // "WIN"
constexpr uint64_t kFileSalt = 0x46494c45;  // "FILE"

// Registers window or file `key`, made by a call collective over `parent`,
// whose members are `group`'s (freed here): the id mixes the parent's id,
// how many objects the parent made before, and the members, as
// RegisterChild does.
void RegisterMade(uint64_t key, MPI_Comm parent, uint64_t salt,
                  MPI_Group group) {
  CommInfo* p = Comm(parent);
  const uint64_t ordinal =
      p == nullptr ? 0 : __atomic_fetch_add(&p->children, 1, __ATOMIC_RELAXED);
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  int size = 0;
  PMPI_Group_size(group, &size);
  const int32_t* world = WorldRanksOfGroup(group, size);
  PMPI_Group_free(&group);
  const uint64_t first = world != nullptr && size > 0 ? world[0] : 0;
  const uint64_t parent_id = p == nullptr ? 0 : p->id;
  g_comms.Insert(key, CommInfo{Mix(Mix(parent_id, ordinal, salt), first, size),
                               static_cast<uint32_t>(size), world});
}

// A window or file made before the probe saw it (or whose table window was
// full): named from its members, as RegisterLazily names communicators.
CommInfo* RegisterObjectLazily(uint64_t key, uint64_t salt, MPI_Group group) {
  std::lock_guard<std::mutex> lock(g_comm_mutex);
  if (CommInfo* info = g_comms.Find(key)) {
    PMPI_Group_free(&group);
    return info;
  }
  int size = 0;
  PMPI_Group_size(group, &size);
  const int32_t* world = WorldRanksOfGroup(group, size);
  PMPI_Group_free(&group);
  if (!g_comms.Insert(key, CommInfo{IdOfMembers(salt, world, size),
                                    static_cast<uint32_t>(size), world})) {
    return nullptr;
  }
  return g_comms.Find(key);
}

CommInfo* Window(MPI_Win win) {
  if (win == MPI_WIN_NULL) return nullptr;
  if (CommInfo* info = g_comms.Find(Key(win))) return info;
  MPI_Group group;
  if (PMPI_Win_get_group(win, &group) != MPI_SUCCESS) return nullptr;
  return RegisterObjectLazily(Key(win), kWindowSalt, group);
}

CommInfo* File(MPI_File file) {
  if (file == MPI_FILE_NULL) return nullptr;
  if (CommInfo* info = g_comms.Find(Key(file))) return info;
  MPI_Group group;
  if (PMPI_File_get_group(file, &group) != MPI_SUCCESS) return nullptr;
  return RegisterObjectLazily(Key(file), kFileSalt, group);
}

// How many neighbors `comm`'s topology gives this rank to send to (the
// counts of a neighbor collective's v and w forms); 0 without a topology.
int OutDegree(MPI_Comm comm) {
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return 0;
  int n = 0;
  if (kind == MPI_CART) {
    PMPI_Cartdim_get(comm, &n);
    return 2 * n;
  }
  if (kind == MPI_GRAPH) {
    PMPI_Graph_neighbors_count(comm, CommRank(comm), &n);
    return n;
  }
  if (kind == MPI_DIST_GRAPH) {
    int in = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &n, &weighted);
    return n;
  }
  return 0;
}

// At most this many in-neighbors are recorded (query/ops/mpi_args.h reads
// no more); a rank with more gets no "sources" arg.
constexpr int kMaxNeighborSources = 256;
constexpr uint32_t kNoSourcesArg = ~0u;

// This rank's in-neighbors in `comm`'s topology, as ranks of `comm`, in
// MPI's order (a Cartesian topology's: per dimension the -1, then the +1
// neighbor of MPI_Cart_shift, MPI_PROC_NULL left out), into `sources`
// (kMaxNeighborSources long); how many, or -1 if they are not listed.
int InNeighbors(MPI_Comm comm, int* sources) {
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return -1;
  int n = 0;
  if (kind == MPI_CART) {
    int dims = 0;
    PMPI_Cartdim_get(comm, &dims);
    if (dims < 0 || dims > kMaxNeighborSources / 2) return -1;
    for (int d = 0; d < dims; ++d) {
      int minus = MPI_PROC_NULL, plus = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &minus, &plus);
      if (minus != MPI_PROC_NULL) sources[n++] = minus;
      if (plus != MPI_PROC_NULL) sources[n++] = plus;
    }
    return n;
  }
  if (kind == MPI_GRAPH) {
    const int rank = CommRank(comm);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    if (n < 0 || n > kMaxNeighborSources) return -1;
    PMPI_Graph_neighbors(comm, rank, n, sources);
    return n;
  }
  if (kind == MPI_DIST_GRAPH) {
    int out = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &n, &out, &weighted);
    if (n < 0 || n > kMaxNeighborSources || out < 0) return -1;
    // MPI wants room for the out-neighbors too (MPICH refuses a
    // maxoutdegree below the out-degree, fatally) and for the weights,
    // whether or not the graph has any: made once per communicator.
    int* rest = new (std::nothrow) int[n + 2 * static_cast<size_t>(out) + 1];
    if (rest == nullptr) return -1;
    PMPI_Dist_graph_neighbors(comm, n, sources, rest, out, rest + n,
                              rest + n + out);
    delete[] rest;
    return n;
  }
  return -1;
}

// The interned arg "KEY=A,B,C" of `n` world ranks (0 < n <=
// kMaxNeighborSources), in stack buffers; 0 if n is 0.
uint32_t RankListArg(const char* key, const int32_t* world, int n) {
  if (n <= 0) return 0;
  // KEY, "=" and up to 256 world ranks of up to 10 digits, with commas.
  char text[16 + kMaxNeighborSources * 11];
  int used = snprintf(text, sizeof(text), "%s=", key);
  for (int i = 0; i < n; ++i) {
    used +=
        snprintf(text + used, sizeof(text) - used, i ? ",%d" : "%d", world[i]);
    if (used >= static_cast<int>(sizeof(text))) return 0;  // not reached
  }
  return probe::Intern(text);
}

// The first neighbor collective on `info`: its "sources" arg found,
// interned and kept in the table entry.
__attribute__((noinline, cold)) uint32_t FindNeighborSources(MPI_Comm comm,
                                                             CommInfo* info) {
  int sources[kMaxNeighborSources];
  const int n = InNeighbors(comm, sources);
  int32_t world[kMaxNeighborSources];
  int listed = 0;
  for (int i = 0; i < n; ++i) {
    const int32_t rank = WorldRankOf(info, sources[i]);
    if (rank >= 0) world[listed++] = rank;
  }
  uint32_t id = RankListArg("sources", world, listed);
  if (id == 0) id = kNoSourcesArg;
  __atomic_store_n(&info->sources_arg, id, __ATOMIC_RELEASE);
  return id;
}

// The args of a neighbor collective on `comm` ("sources=A,B,C": the world
// ranks of this rank's in-neighbors), or 0: found once per communicator,
// then one load. Two threads meeting a new communicator at once both find
// the same string, and Intern gives them the same id.
inline uint32_t NeighborSourcesArg(MPI_Comm comm, CommInfo* info) {
  if (info == nullptr) return 0;
  uint32_t id = __atomic_load_n(&info->sources_arg, __ATOMIC_ACQUIRE);
  if (__builtin_expect(id == 0, 0)) id = FindNeighborSources(comm, info);
  return id == kNoSourcesArg ? 0 : id;
}

// The args of an MPI_Win_lock: its lock type, and nocheck=1 where
// MPI_MODE_NOCHECK says no lock is taken. Four constant strings, each
// interned at its first use.
uint32_t LockArgs(int lock_type, int assert_flags) {
  static const char* const kText[4] = {
      "lock_type=exclusive", "lock_type=shared",
      "lock_type=exclusive;nocheck=1", "lock_type=shared;nocheck=1"};
  static uint32_t ids[4];  // __atomic builtins only
  const int which = (lock_type == MPI_LOCK_EXCLUSIVE ? 0 : 1) +
                    ((assert_flags & MPI_MODE_NOCHECK) ? 2 : 0);
  uint32_t id = __atomic_load_n(&ids[which], __ATOMIC_RELAXED);
  if (__builtin_expect(id == 0, 0)) {
    id = probe::Intern(kText[which]);
    __atomic_store_n(&ids[which], id, __ATOMIC_RELAXED);
  }
  return id;
}

// The args of an MPI_Win_post or MPI_Win_start: "group=A,B,C", the world
// ranks of `group`'s members in group order, or 0 (an empty or null group,
// more than kMaxNeighborSources members, one outside MPI_COMM_WORLD). Found
// at every call, since a freed group's handle may come back as another
// group's: in stack buffers, as FindNeighborSources finds sources, and
// interned (a lookup without lock or allocation once the string is known).
__attribute__((noinline)) uint32_t EpochGroupArg(MPI_Group group) {
  int size = 0;
  if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &size) != MPI_SUCCESS ||
      size <= 0 || size > kMaxNeighborSources) {
    return 0;
  }
  int ranks[kMaxNeighborSources];
  int32_t world[kMaxNeighborSources];
  if (!ToWorldRanks(group, size, ranks, world)) return 0;
  for (int i = 0; i < size; ++i) {
    if (world[i] < 0) return 0;  // MPI_UNDEFINED: not in the world
  }
  return RankListArg("group", world, size);
}

// Bytes of `n` blocks of counts[i] elements of types[i] (the w forms).
int64_t SumTypedBytes(const int counts[], const MPI_Datatype types[], int n) {
  if (counts == nullptr || types == nullptr) return 0;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) total += TypeBytes(counts[i], types[i]);
  return total;
}

// The bytes a collective records (the file comment's table), one function
// per shape, shared by its blocking, non-blocking and persistent forms.
// Allgather, Alltoall: the rank's block (in place: its receive block).
int64_t BlockBytes(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   int recvcount, MPI_Datatype recvtype) {
  return sendbuf == MPI_IN_PLACE ? TypeBytes(recvcount, recvtype)
                                 : TypeBytes(sendcount, sendtype);
}
// Alltoallv: the rank's blocks, one per member (in place: its receive
// blocks).
int64_t BlocksBytes(const void* sendbuf, const int sendcounts[],
                    MPI_Datatype sendtype, const int recvcounts[],
                    MPI_Datatype recvtype, MPI_Comm comm) {
  return sendbuf == MPI_IN_PLACE
             ? SumBytes(recvcounts, CountsSize(comm), recvtype)
             : SumBytes(sendcounts, CountsSize(comm), sendtype);
}
// Alltoallw: the same with a type per block.
int64_t TypedBlocksBytes(const void* sendbuf, const int sendcounts[],
                         const MPI_Datatype sendtypes[], const int recvcounts[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return sendbuf == MPI_IN_PLACE
             ? SumTypedBytes(recvcounts, recvtypes, CountsSize(comm))
             : SumTypedBytes(sendcounts, sendtypes, CountsSize(comm));
}
// Gather(v): the root's receive buffer at the root, the rank's block
// elsewhere; Scatter(v): the root's send buffer at the root, the rank's
// block elsewhere.
int64_t GatherBytes(MPI_Comm comm, int root, int sendcount,
                    MPI_Datatype sendtype, int recvcount,
                    MPI_Datatype recvtype) {
  return CommRank(comm) == root ? TypeBytes(recvcount, recvtype)
                                : TypeBytes(sendcount, sendtype);
}
int64_t GathervBytes(MPI_Comm comm, int root, int sendcount,
                     MPI_Datatype sendtype, const int recvcounts[],
                     MPI_Datatype recvtype) {
  return CommRank(comm) == root
             ? SumBytes(recvcounts, CountsSize(comm), recvtype)
             : TypeBytes(sendcount, sendtype);
}
int64_t ScatterBytes(MPI_Comm comm, int root, int sendcount,
                     MPI_Datatype sendtype, int recvcount,
                     MPI_Datatype recvtype) {
  return CommRank(comm) == root ? TypeBytes(sendcount, sendtype)
                                : TypeBytes(recvcount, recvtype);
}
int64_t ScattervBytes(MPI_Comm comm, int root, const int sendcounts[],
                      MPI_Datatype sendtype, int recvcount,
                      MPI_Datatype recvtype) {
  return CommRank(comm) == root
             ? SumBytes(sendcounts, CountsSize(comm), sendtype)
             : TypeBytes(recvcount, recvtype);
}

// A one-sided transfer with `target` (a rank of the window's group): its
// peer is the target's world rank, its comm the window's id.
void RecordOneSided(Op op, int64_t start, MPI_Win win, int target,
                    int64_t bytes) {
  const int64_t end = probe::Now();
  const CommInfo* info = Window(win);
  probe::Emit(PointToPointRecord(op, start, end, info, target, -1, bytes));
}

void IssueOneSided(Op op, int64_t start, MPI_Win win, int target, int64_t bytes,
                   MPI_Request* request) {
  const CommInfo* info = Window(win);
  Issue(request, PointToPointRecord(op, start, start, info, target, -1, bytes),
        info, false, false);
}

// Persistent requests: the operation MPI_Send_init & co describe, recorded
// from each MPI_Start to the completion that follows it, as a
// non-blocking call is (named after the init call that made it).
HandleTable<Pending, 4096, 16> g_persistent;

// Persistent request `key` was started at `start` by a call that returned
// at `call_end` having started `count` requests (its time shared among
// them).
void StartPersistent(uint64_t key, int64_t start, int64_t call_end, int count) {
  const Pending* made = key == 0 ? nullptr : g_persistent.Find(key);
  if (made == nullptr) return;
  Pending started = *made;
  ProbeRecord& r = started.record;
  r.start_ns = start;
  r.dur_ns = 0;
  r.flags = static_cast<uint16_t>(
      (r.flags & ~(ProbeRecord::kHasStep | ProbeRecord::kTicks)) |
      probe::TimeFlags() | ProbeRecord::kExtraCallTime);
  probe::StampStep(&r);
  SetCallsite(&r);  // the start's, not the init's
  r.extra = (call_end - start) / (count > 0 ? count : 1);
  if (started.collective) {
    // The table's CommInfo, shared with the blocking collectives.
    r.seq = NextSeq(const_cast<CommInfo*>(started.comm.info));
    r.flags |= ProbeRecord::kHasSeq;
  }
  g_requests.Insert(key, started);
}

// A start that is not recorded (recording paused) still counts its
// collective's instance, so that sequence numbers stay equal across ranks.
void CountUnrecordedStart(uint64_t key) {
  const Pending* made = key == 0 ? nullptr : g_persistent.Find(key);
  if (made != nullptr && made->collective) {
    NextSeq(const_cast<CommInfo*>(made->comm.info));
  }
}

// A persistent collective was made: remembered for its starts.
void MakePersistentCollective(MPI_Request* request, Op op, MPI_Comm comm,
                              int64_t bytes, int root) {
  if (!probe::g_event.enabled || request == nullptr ||
      *request == MPI_REQUEST_NULL) {
    return;
  }
  CommInfo* info = Comm(comm);
  ProbeRecord r = CollectiveRecord(op, 0, 0, info, 0, bytes, root);
  r.flags &= ~ProbeRecord::kHasSeq;  // given at each start
  if (op >= kNeighbor_allgather_init && op <= kNeighbor_alltoallw_init) {
    r.args = NeighborSourcesArg(comm, info);
  }
  g_persistent.Insert(Key(*request), Pending{r, info, false, false, true});
}

// Matched probes: the communicator a message was probed on, for the
// MPI_Mrecv that receives it (its status names a rank of that
// communicator).
struct ProbedMessage {
  const CommInfo* comm;
};
HandleTable<ProbedMessage, 1024, 16> g_messages;

// A matched message's table key; 0 for none (null, or MPI_PROC_NULL's).
uint64_t MessageKey(const MPI_Message* message) {
  return message == nullptr || *message == MPI_MESSAGE_NULL ||
                 *message == MPI_MESSAGE_NO_PROC
             ? 0
             : Key(*message);
}

void KeepMessage(const MPI_Message* message, const CommInfo* comm) {
  if (const uint64_t key = MessageKey(message)) {
    g_messages.Insert(key, ProbedMessage{comm});
  }
}

const CommInfo* TakeMessage(uint64_t key) {
  ProbedMessage message{nullptr};
  if (key != 0) g_messages.Take(key, &message);
  return message.comm;
}

}  // namespace

// Every collective: its sequence number is counted, recorded or not; if
// recorded, it is timed from `start` and returns `rc` from the call.
#define MERIDIAN_COLLECTIVE_CALL(comm, call) \
  if (!probe::g_event.enabled) return call;  \
  CommInfo* info = Comm(comm);               \
  const uint64_t seq = NextSeq(info);        \
  if (!probe::Recording()) return call;      \
  const int64_t start = probe::Now();        \
  const int rc = call;

// Blocking collectives: one macro body, the bytes and root per call.
#define MERIDIAN_COLLECTIVE(op, comm, bytes_expr, root, call)                 \
  MERIDIAN_COLLECTIVE_CALL(comm, call)                                        \
  const int64_t end = probe::Now();                                           \
  probe::Emit(CollectiveRecord(op, start, end, info, seq, bytes_expr, root)); \
  return rc;

// Non-blocking collectives: recorded from issue to completion.
#define MERIDIAN_ICOLLECTIVE(op, comm, bytes_expr, root, request, call)    \
  MERIDIAN_COLLECTIVE_CALL(comm, call)                                     \
  if (rc == MPI_SUCCESS) {                                                 \
    Issue(request,                                                         \
          CollectiveRecord(op, start, start, info, seq, bytes_expr, root), \
          info, false, false);                                             \
  }                                                                        \
  return rc;

// Neighbor collectives, blocking and not: as above, with this rank's
// in-neighbors as args, looked up after the call's time is taken (once per
// communicator: NeighborSourcesArg).
#define MERIDIAN_NEIGHBOR(op, comm, bytes_expr, call)                          \
  MERIDIAN_COLLECTIVE_CALL(comm, call)                                         \
  const int64_t end = probe::Now();                                            \
  ProbeRecord r = CollectiveRecord(op, start, end, info, seq, bytes_expr, -1); \
  if (rc == MPI_SUCCESS) r.args = NeighborSourcesArg(comm, info);              \
  probe::Emit(r);                                                              \
  return rc;

#define MERIDIAN_INEIGHBOR(op, comm, bytes_expr, request, call)        \
  MERIDIAN_COLLECTIVE_CALL(comm, call)                                 \
  if (rc == MPI_SUCCESS) {                                             \
    const int64_t call_end = probe::Now();                             \
    ProbeRecord r =                                                    \
        CollectiveRecord(op, start, start, info, seq, bytes_expr, -1); \
    r.args = NeighborSourcesArg(comm, info);                           \
    IssueAt(request, r, call_end, info, false, false);                 \
  }                                                                    \
  return rc;

extern "C" {

// ---- Init and Finalize ------------------------------------------------------

int MPI_Init(int* argc, char*** argv) {
  const int64_t start = probe::Now();
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) AfterInit(start, kInit);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int64_t start = probe::Now();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) AfterInit(start, kInit_thread);
  return rc;
}

// The resource use counters come first: mpitrace reads them at
// MPI_Finalize, before MPI tears down.
int MPI_Finalize(void) {
  probe::EmitResourceUse();
  const int64_t start = probe::Now();
  const int rc = PMPI_Finalize();
  if (probe::Recording()) {
    probe::Emit(Base(kFinalize, start, probe::Now(), nullptr));
  }
  return rc;
}

// ---- Blocking point-to-point ------------------------------------------------

// Point-to-point calls outside the tracing window go straight to PMPI:
// no clock read, no lookup.
#define MERIDIAN_SEND(Name, op)                                             \
  int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest,   \
                 int tag, MPI_Comm comm) {                                  \
    if (!probe::Recording())                                                \
      return PMPI_##Name(buf, count, type, dest, tag, comm);                \
    const int64_t start = probe::Now();                                     \
    const int rc = PMPI_##Name(buf, count, type, dest, tag, comm);          \
    RecordPointToPoint(op, start, comm, dest, tag, TypeBytes(count, type)); \
    return rc;                                                              \
  }
MERIDIAN_SEND(Send, kSend)
MERIDIAN_SEND(Ssend, kSsend)
MERIDIAN_SEND(Rsend, kRsend)
MERIDIAN_SEND(Bsend, kBsend)
#undef MERIDIAN_SEND

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  if (!probe::Recording()) {
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, s);
  RecordPointToPoint(
      kRecv, start, comm, source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
      tag == MPI_ANY_TAG ? s->MPI_TAG : tag, TypeBytes(count, type));
  return rc;
}

// Sendrecv: peer and tag of the send, source and tag of the receive (as
// received); bytes of both buffers.
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 int dest, int sendtag, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status* status) {
  if (!probe::Recording()) {
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                         recvcount, recvtype, source, recvtag, comm, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc =
      PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                    recvcount, recvtype, source, recvtag, comm, s);
  const int64_t sent = TypeBytes(sendcount, sendtype);
  RecordSendReceive(kSendrecv, start, comm, dest, sendtag,
                    source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                    recvtag == MPI_ANY_TAG ? s->MPI_TAG : recvtag,
                    sent + TypeBytes(recvcount, recvtype), sent);
  return rc;
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest,
                         int sendtag, int source, int recvtag, MPI_Comm comm,
                         MPI_Status* status) {
  if (!probe::Recording()) {
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                 recvtag, comm, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source,
                                       recvtag, comm, s);
  RecordSendReceive(kSendrecv_replace, start, comm, dest, sendtag,
                    source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                    recvtag == MPI_ANY_TAG ? s->MPI_TAG : recvtag,
                    2 * TypeBytes(count, type), TypeBytes(count, type));
  return rc;
}

// ---- Non-blocking point-to-point --------------------------------------------

// Issued while recording is off: a shared completed request still takes its
// place in this thread's order (SharedRequests), so that its completion
// ends nothing recorded.
int Unrecorded(int rc, const MPI_Request* request) {
  if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr &&
      SharedCompleted(*request)) {
    tls_shared.Skip();
  }
  return rc;
}

#define MERIDIAN_ISEND(Name, op)                                             \
  int MPI_##Name(const void* buf, int count, MPI_Datatype type, int dest,    \
                 int tag, MPI_Comm comm, MPI_Request* request) {             \
    if (!probe::Recording())                                                 \
      return Unrecorded(                                                     \
          PMPI_##Name(buf, count, type, dest, tag, comm, request), request); \
    const int64_t start = probe::Now();                                      \
    const int rc = PMPI_##Name(buf, count, type, dest, tag, comm, request);  \
    if (rc == MPI_SUCCESS) {                                                 \
      IssuePointToPoint(op, start, comm, dest, tag, TypeBytes(count, type),  \
                        request);                                            \
    }                                                                        \
    return rc;                                                               \
  }
MERIDIAN_ISEND(Isend, kIsend)
MERIDIAN_ISEND(Issend, kIssend)
MERIDIAN_ISEND(Irsend, kIrsend)
MERIDIAN_ISEND(Ibsend, kIbsend)
#undef MERIDIAN_ISEND

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
              MPI_Comm comm, MPI_Request* request) {
  if (!probe::Recording()) {
    return Unrecorded(PMPI_Irecv(buf, count, type, source, tag, comm, request),
                      request);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS) {
    IssuePointToPoint(kIrecv, start, comm, source, tag, TypeBytes(count, type),
                      request);
  }
  return rc;
}

// ---- Completion -------------------------------------------------------------

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!probe::g_event.enabled) return PMPI_Wait(request, status);
  const uint32_t ticket = MarkRequest(request);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Wait(request, s);
  const int64_t end = probe::Now();
  Complete(ticket, end, s);
  if (probe::Recording()) probe::Emit(Base(kWait, start, end, nullptr));
  return rc;
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!probe::g_event.enabled) return PMPI_Test(request, flag, status);
  const uint32_t ticket = MarkRequest(request);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int rc = PMPI_Test(request, flag, s);
  if (*flag) {
    Complete(ticket, probe::Now(), s);
  } else {
    g_requests.Unmark(ticket);
  }
  return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!probe::g_event.enabled) return PMPI_Waitall(count, requests, statuses);
  SavedRequests saved(count, requests, statuses);
  const int64_t start = probe::Now();
  const int rc = PMPI_Waitall(count, requests, saved.statuses());
  const int64_t end = probe::Now();
  saved.CompleteAll(end);
  if (probe::Recording()) probe::Emit(Base(kWaitall, start, end, nullptr));
  return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int* flag,
                MPI_Status statuses[]) {
  if (!probe::g_event.enabled)
    return PMPI_Testall(count, requests, flag, statuses);
  SavedRequests saved(count, requests, statuses);
  const int rc = PMPI_Testall(count, requests, flag, saved.statuses());
  if (*flag) saved.CompleteAll(probe::Now());
  return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index,
                MPI_Status* status) {
  if (!probe::g_event.enabled)
    return PMPI_Waitany(count, requests, index, status);
  SavedRequests saved(count, requests, MPI_STATUSES_IGNORE);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Waitany(count, requests, index, s);
  const int64_t end = probe::Now();
  saved.Complete(*index, end, s);
  if (probe::Recording()) probe::Emit(Base(kWaitany, start, end, nullptr));
  return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Testany(count, requests, index, flag, status);
  }
  SavedRequests saved(count, requests, MPI_STATUSES_IGNORE);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int rc = PMPI_Testany(count, requests, index, flag, s);
  if (*flag) saved.Complete(*index, probe::Now(), s);
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!probe::g_event.enabled) {
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  }
  SavedRequests saved(incount, requests, statuses);
  const int64_t start = probe::Now();
  const int rc =
      PMPI_Waitsome(incount, requests, outcount, indices, saved.statuses());
  const int64_t end = probe::Now();
  saved.CompleteSome(*outcount, indices, end);
  if (probe::Recording()) probe::Emit(Base(kWaitsome, start, end, nullptr));
  return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount,
                 int indices[], MPI_Status statuses[]) {
  if (!probe::g_event.enabled) {
    return PMPI_Testsome(incount, requests, outcount, indices, statuses);
  }
  SavedRequests saved(incount, requests, statuses);
  const int rc =
      PMPI_Testsome(incount, requests, outcount, indices, saved.statuses());
  saved.CompleteSome(*outcount, indices, probe::Now());
  return rc;
}

// ---- Blocking collectives ---------------------------------------------------

int MPI_Barrier(MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kBarrier, comm, 0, -1, PMPI_Barrier(comm))
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root,
              MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kBcast, comm, TypeBytes(count, type), root,
                      PMPI_Bcast(buf, count, type, root, comm))
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, int root, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kReduce, comm, TypeBytes(count, type), root,
      PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm))
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count,
                  MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kAllreduce, comm, TypeBytes(count, type), -1,
                      PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm))
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAllgather, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm))
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kAllgatherv, comm,
                      SumBytes(recvcounts, CountsSize(comm), recvtype), -1,
                      PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                      recvcounts, displs, recvtype, comm))
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAlltoall, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    comm))
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAlltoallv, comm,
      BlocksBytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
      -1,
      PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                     recvcounts, rdispls, recvtype, comm))
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
               MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kGather, comm,
      GatherBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                  root, comm))
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int recvcounts[], const int displs[],
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kGatherv, comm,
      GathervBytes(comm, root, sendcount, sendtype, recvcounts, recvtype), root,
      PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                   recvtype, root, comm))
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kScatter, comm,
      ScatterBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                   root, comm))
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[],
                 const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kScatterv, comm,
      ScattervBytes(comm, root, sendcounts, sendtype, recvcount, recvtype),
      root,
      PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, comm))
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf,
                       const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kReduce_scatter, comm, SumBytes(recvcounts, CommSize(comm), type), -1,
      PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm))
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kReduce_scatter_block, comm, TypeBytes(recvcount, type), -1,
      PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm))
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
             MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kScan, comm, TypeBytes(count, type), -1,
                      PMPI_Scan(sendbuf, recvbuf, count, type, op, comm))
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
               MPI_Op op, MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(kExscan, comm, TypeBytes(count, type), -1,
                      PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm))
}

// ---- Non-blocking collectives -----------------------------------------------

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIbarrier, comm, 0, -1, request,
                       PMPI_Ibarrier(comm, request))
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
               MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIbcast, comm, TypeBytes(count, type), root, request,
                       PMPI_Ibcast(buf, count, type, root, comm, request))
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIreduce, comm, TypeBytes(count, type), root, request,
      PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request))
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIallreduce, comm, TypeBytes(count, type), -1, request,
      PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request))
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIallgather, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                      recvtype, comm, request))
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIallgatherv, comm, SumBytes(recvcounts, CountsSize(comm), recvtype), -1,
      request,
      PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                       displs, recvtype, comm, request))
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIalltoall, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                     comm, request))
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[],
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIalltoallv, comm,
      BlocksBytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
      -1, request,
      PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                      recvcounts, rdispls, recvtype, comm, request))
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIgather, comm,
      GatherBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                   root, comm, request))
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[],
                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIgatherv, comm,
      GathervBytes(comm, root, sendcount, sendtype, recvcounts, recvtype), root,
      request,
      PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                    recvtype, root, comm, request))
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIscatter, comm,
      ScatterBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                    root, comm, request))
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIscatterv, comm,
      ScattervBytes(comm, root, sendcounts, sendtype, recvcount, recvtype),
      root, request,
      PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                     recvtype, root, comm, request))
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf,
                        const int recvcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIreduce_scatter, comm,
                       SumBytes(recvcounts, CommSize(comm), type), -1, request,
                       PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type,
                                            op, comm, request))
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(kIreduce_scatter_block, comm, TypeBytes(recvcount, type),
                       -1, request,
                       PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount,
                                                  type, op, comm, request))
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
              MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIscan, comm, TypeBytes(count, type), -1, request,
      PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request))
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIexscan, comm, TypeBytes(count, type), -1, request,
      PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request))
}

// ---- Communicators ----------------------------------------------------------

#define MERIDIAN_COMM_CREATE(op, parent, out, salt, call)   \
  if (!probe::g_event.enabled) return call;                 \
  const int64_t start = probe::Now();                       \
  const int rc = call;                                      \
  const int64_t end = probe::Now();                         \
  if (rc == MPI_SUCCESS) RegisterChild(parent, *out, salt); \
  if (probe::Recording()) {                                 \
    probe::Emit(Base(op, start, end, Comm(parent)));        \
  }                                                         \
  return rc;

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kComm_dup, comm, newcomm, 0,
                       PMPI_Comm_dup(comm, newcomm))
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kComm_split, comm, newcomm, 0,
                       PMPI_Comm_split(comm, color, key, newcomm))
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kComm_split_type, comm, newcomm, 0,
      PMPI_Comm_split_type(comm, split_type, key, info, newcomm))
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kComm_create, comm, newcomm, 0,
                       PMPI_Comm_create(comm, group, newcomm))
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[],
                    const int periods[], int reorder, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kCart_create, comm, newcomm, 0,
      PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm))
}

// Collective over `group` only, not the parent: the members' ordinals may
// differ, so the id comes from the members (as a lazily registered one) and
// the tag.
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag,
                          MPI_Comm* newcomm) {
  const int64_t start = probe::Now();
  const int rc = PMPI_Comm_create_group(comm, group, tag, newcomm);
  if (!probe::g_event.enabled) return rc;
  const int64_t end = probe::Now();
  if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
    std::lock_guard<std::mutex> lock(g_comm_mutex);
    const int size = CommSize(*newcomm);
    const int32_t* world = WorldRanks(*newcomm, size);
    Register(*newcomm,
             IdOfMembers(Mix(0x47525550 /* "GRUP" */, tag, size), world, size),
             size, world);
  }
  if (probe::Recording()) {
    probe::Emit(Base(kComm_create_group, start, end, Comm(comm)));
  }
  return rc;
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (probe::g_event.enabled && comm != nullptr)
    g_comms.Take(Key(*comm), nullptr);
  return PMPI_Comm_free(comm);
}

// ---- Topologies -------------------------------------------------------------

int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[],
                     const int edges[], int reorder, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kGraph_create, comm, newcomm, 0,
      PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm))
}

int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[],
                          const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(
      kDist_graph_create, comm, newcomm, 0,
      PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights,
                             info, reorder, newcomm))
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree,
                                   const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[],
                                   const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* newcomm) {
  MERIDIAN_COMM_CREATE(kDist_graph_create_adjacent, comm, newcomm, 0,
                       PMPI_Dist_graph_create_adjacent(
                           comm, indegree, sources, sourceweights, outdegree,
                           destinations, destweights, info, reorder, newcomm))
}

// ---- Queries mpitrace counts, and MPI_Pcontrol ------------------------------

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  if (!probe::Recording()) return PMPI_Comm_rank(comm, rank);
  const int64_t start = probe::Now();
  const int rc = PMPI_Comm_rank(comm, rank);
  probe::Emit(Base(kComm_rank, start, probe::Now(), Comm(comm)));
  return rc;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  if (!probe::Recording()) return PMPI_Comm_size(comm, size);
  const int64_t start = probe::Now();
  const int rc = PMPI_Comm_size(comm, size);
  probe::Emit(Base(kComm_size, start, probe::Now(), Comm(comm)));
  return rc;
}

// Level 0 pauses recording, any other resumes it (probe_runtime.h). The
// call is recorded as an instant with its level ("level" arg) whether or
// not recording is on, so that the windows show in the timeline.
int MPI_Pcontrol(const int level, ...) {
  if (probe::g_event.enabled) {
    if (level != 0) probe::SetPcontrol(level);
    const int64_t now = probe::Now();
    ProbeRecord r = Base(kPcontrol, now, now, nullptr);
    r.kind = 1;  // v1::SPAN_KIND_INSTANT
    // One string per level: a program uses a handful.
    char args[24];
    snprintf(args, sizeof(args), "level=%d", level);
    r.args = probe::Intern(args);
    probe::Emit(r);
    if (level == 0) probe::SetPcontrol(0);
  }
  return PMPI_Pcontrol(level);
}

// ---- Persistent requests ----------------------------------------------------

#define MERIDIAN_INIT(Name, op)                                              \
  int MPI_##Name(const void* buf, int count, MPI_Datatype type, int peer,    \
                 int tag, MPI_Comm comm, MPI_Request* request) {             \
    const int rc = PMPI_##Name(buf, count, type, peer, tag, comm, request);  \
    if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr && \
        *request != MPI_REQUEST_NULL) {                                      \
      const CommInfo* info = Comm(comm);                                     \
      g_persistent.Insert(                                                   \
          Key(*request),                                                     \
          Pending{PointToPointRecord(op, 0, 0, info, peer, tag,              \
                                     TypeBytes(count, type)),                \
                  info, peer == MPI_ANY_SOURCE, tag == MPI_ANY_TAG});        \
    }                                                                        \
    return rc;                                                               \
  }
MERIDIAN_INIT(Send_init, kSend_init)
MERIDIAN_INIT(Ssend_init, kSsend_init)
MERIDIAN_INIT(Rsend_init, kRsend_init)
MERIDIAN_INIT(Bsend_init, kBsend_init)
#undef MERIDIAN_INIT

int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  const int rc = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr &&
      *request != MPI_REQUEST_NULL) {
    const CommInfo* info = Comm(comm);
    g_persistent.Insert(
        Key(*request),
        Pending{PointToPointRecord(kRecv_init, 0, 0, info, source, tag,
                                   TypeBytes(count, type)),
                info, source == MPI_ANY_SOURCE, tag == MPI_ANY_TAG});
  }
  return rc;
}

int MPI_Start(MPI_Request* request) {
  if (!probe::g_event.enabled) return PMPI_Start(request);
  const uint64_t key =
      (request == nullptr || *request == MPI_REQUEST_NULL) ? 0 : Key(*request);
  if (!probe::Recording()) {
    CountUnrecordedStart(key);
    return PMPI_Start(request);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Start(request);
  if (rc == MPI_SUCCESS) StartPersistent(key, start, probe::Now(), 1);
  return rc;
}

int MPI_Startall(int count, MPI_Request requests[]) {
  if (!probe::g_event.enabled || requests == nullptr) {
    return PMPI_Startall(count, requests);
  }
  if (!probe::Recording()) {
    for (int i = 0; i < count; ++i) {
      if (requests[i] != MPI_REQUEST_NULL) {
        CountUnrecordedStart(Key(requests[i]));
      }
    }
    return PMPI_Startall(count, requests);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Startall(count, requests);
  const int64_t end = probe::Now();
  // Persistent requests keep their handles when started.
  for (int i = 0; rc == MPI_SUCCESS && i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL) {
      StartPersistent(Key(requests[i]), start, end, count);
    }
  }
  return rc;
}

int MPI_Request_free(MPI_Request* request) {
  if (probe::g_event.enabled && request != nullptr &&
      *request != MPI_REQUEST_NULL) {
    if (SharedCompleted(*request)) {
      // An Isend freed rather than waited for (a common pattern): it ended
      // in its call, where MPI completed it.
      tls_shared.EndInCall();
    } else {
      g_persistent.Take(Key(*request), nullptr);
      // Freed before a Wait or Test saw it complete: it is recorded as
      // ending here, where the program let it go.
      Pending pending;
      if (g_requests.Take(Key(*request), &pending)) {
        pending.record.dur_ns = probe::Now() - pending.record.start_ns;
        probe::Emit(pending.record);
      }
    }
  }
  return PMPI_Request_free(request);
}

// ---- Probes and matched receives --------------------------------------------

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!probe::Recording()) return PMPI_Probe(source, tag, comm, status);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Probe(source, tag, comm, s);
  RecordPointToPoint(kProbe, start, comm,
                     source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                     tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0);
  return rc;
}

// Every call is recorded (mpitrace counts them all), with the matched
// source and tag when a message was there.
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag,
               MPI_Status* status) {
  if (!probe::Recording()) return PMPI_Iprobe(source, tag, comm, flag, status);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Iprobe(source, tag, comm, flag, s);
  const bool found = rc == MPI_SUCCESS && *flag;
  RecordPointToPoint(kIprobe, start, comm,
                     found && source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                     found && tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0);
  return rc;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
               MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Mprobe(source, tag, comm, message, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Mprobe(source, tag, comm, message, s);
  const CommInfo* info = Comm(comm);
  if (rc == MPI_SUCCESS) KeepMessage(message, info);
  if (probe::Recording()) {
    probe::Emit(
        PointToPointRecord(kMprobe, start, probe::Now(), info,
                           source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
                           tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0));
  }
  return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag,
                MPI_Message* message, MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Improbe(source, tag, comm, flag, message, status);
  }
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Improbe(source, tag, comm, flag, message, s);
  const bool found = rc == MPI_SUCCESS && *flag;
  const CommInfo* info = Comm(comm);
  if (found) KeepMessage(message, info);
  if (probe::Recording()) {
    probe::Emit(PointToPointRecord(
        kImprobe, start, probe::Now(), info,
        found && source == MPI_ANY_SOURCE ? s->MPI_SOURCE : source,
        found && tag == MPI_ANY_TAG ? s->MPI_TAG : tag, 0));
  }
  return rc;
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
              MPI_Status* status) {
  if (!probe::g_event.enabled) {
    return PMPI_Mrecv(buf, count, type, message, status);
  }
  const uint64_t key = MessageKey(message);
  MPI_Status own;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &own : status;
  const int64_t start = probe::Now();
  const int rc = PMPI_Mrecv(buf, count, type, message, s);
  const CommInfo* info = TakeMessage(key);
  if (probe::Recording()) {
    probe::Emit(PointToPointRecord(kMrecv, start, probe::Now(), info,
                                   s->MPI_SOURCE, s->MPI_TAG,
                                   TypeBytes(count, type)));
  }
  return rc;
}

int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message,
               MPI_Request* request) {
  if (!probe::g_event.enabled) {
    return PMPI_Imrecv(buf, count, type, message, request);
  }
  const uint64_t key = MessageKey(message);
  const int64_t start = probe::Now();
  const int rc = PMPI_Imrecv(buf, count, type, message, request);
  const CommInfo* info = TakeMessage(key);
  if (rc == MPI_SUCCESS && probe::Recording()) {
    // Source and tag from the completing status.
    Issue(request,
          PointToPointRecord(kImrecv, start, start, info, -1, -1,
                             TypeBytes(count, type)),
          info, true, true);
  }
  return rc;
}

// ---- Alltoallw and neighbor collectives -------------------------------------

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[],
                  const int sdispls[], const MPI_Datatype sendtypes[],
                  void* recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  MERIDIAN_COLLECTIVE(
      kAlltoallw, comm,
      TypedBlocksBytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                       comm),
      -1,
      PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                     recvcounts, rdispls, recvtypes, comm))
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[],
                   void* recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  MERIDIAN_ICOLLECTIVE(
      kIalltoallw, comm,
      TypedBlocksBytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                       comm),
      -1, request,
      PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                      recvcounts, rdispls, recvtypes, comm, request))
}

// Neighbor collectives: the bytes this rank sends, to each neighbor for
// allgather(v) and alltoall (as Allgather and Alltoall record them), summed
// over its out-neighbors for alltoallv and alltoallw.
int MPI_Neighbor_allgather(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(kNeighbor_allgather, comm, TypeBytes(sendcount, sendtype),
                    PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype,
                                            recvbuf, recvcount, recvtype, comm))
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(
      kNeighbor_allgatherv, comm, TypeBytes(sendcount, sendtype),
      PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                               recvcounts, displs, recvtype, comm))
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(kNeighbor_alltoall, comm, TypeBytes(sendcount, sendtype),
                    PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype,
                                           recvbuf, recvcount, recvtype, comm))
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype,
                           void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(
      kNeighbor_alltoallv, comm,
      SumBytes(sendcounts, OutDegree(comm), sendtype),
      PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                              recvcounts, rdispls, recvtype, comm))
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm) {
  MERIDIAN_NEIGHBOR(
      kNeighbor_alltoallw, comm,
      SumTypedBytes(sendcounts, sendtypes, OutDegree(comm)),
      PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                              recvcounts, rdispls, recvtypes, comm))
}

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_allgather, comm, TypeBytes(sendcount, sendtype), request,
      PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, request))
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                             MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_allgatherv, comm, TypeBytes(sendcount, sendtype), request,
      PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
                                recvcounts, displs, recvtype, comm, request))
}

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_alltoall, comm, TypeBytes(sendcount, sendtype), request,
      PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                              recvtype, comm, request))
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_alltoallv, comm,
      SumBytes(sendcounts, OutDegree(comm), sendtype), request,
      PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                               recvcounts, rdispls, recvtype, comm, request))
}

int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                            const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const int recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  MERIDIAN_INEIGHBOR(
      kIneighbor_alltoallw, comm,
      SumTypedBytes(sendcounts, sendtypes, OutDegree(comm)), request,
      PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                               recvcounts, rdispls, recvtypes, comm, request))
}

// ---- One-sided communication ------------------------------------------------

// Window creation is collective over `comm`: recorded as its collective
// (comm, seq), and the window is registered with an id of its own.
#define MERIDIAN_WIN_CREATE(op, comm, win, call)                              \
  if (!probe::g_event.enabled) return call;                                   \
  CommInfo* parent = Comm(comm);                                              \
  const uint64_t seq = NextSeq(parent);                                       \
  const int64_t start = probe::Now();                                         \
  const int rc = call;                                                        \
  const int64_t end = probe::Now();                                           \
  MPI_Group group;                                                            \
  if (rc == MPI_SUCCESS && PMPI_Win_get_group(*(win), &group) == MPI_SUCCESS) \
    RegisterMade(Key(*(win)), comm, kWindowSalt, group);                      \
  if (probe::Recording()) {                                                   \
    probe::Emit(CollectiveRecord(op, start, end, parent, seq, 0, -1));        \
  }                                                                           \
  return rc;

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                   MPI_Comm comm, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(kWin_create, comm, win,
                      PMPI_Win_create(base, size, disp_unit, info, comm, win))
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void* baseptr, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(
      kWin_allocate, comm, win,
      PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win))
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info,
                            MPI_Comm comm, void* baseptr, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(
      kWin_allocate_shared, comm, win,
      PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win))
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  MERIDIAN_WIN_CREATE(kWin_create_dynamic, comm, win,
                      PMPI_Win_create_dynamic(info, comm, win))
}
#undef MERIDIAN_WIN_CREATE

// Freeing a window or closing a file is collective over its members: an
// instance (its id, seq) like a communicator's collectives. Its id is
// copied first, since the table entry goes with the handle.
#define MERIDIAN_FREE_OBJECT(op, handle, lookup, call)                \
  if (!probe::g_event.enabled || (handle) == nullptr) return call;    \
  const uint64_t key = Key(*(handle));                                \
  CommInfo* info = lookup(*(handle));                                 \
  const uint64_t seq = NextSeq(info);                                 \
  CommInfo copy = info != nullptr ? *info : CommInfo{};               \
  const int64_t start = probe::Now();                                 \
  const int rc = call;                                                \
  const int64_t end = probe::Now();                                   \
  g_comms.Take(key, nullptr);                                         \
  if (probe::Recording() && info != nullptr) {                        \
    probe::Emit(CollectiveRecord(op, start, end, &copy, seq, 0, -1)); \
  }                                                                   \
  return rc;

int MPI_Win_free(MPI_Win* win) {
  MERIDIAN_FREE_OBJECT(kWin_free, win, Window, PMPI_Win_free(win))
}

// A fence that only opens an epoch (MPI_MODE_NOPRECEDE, which every member
// gives or none) need not synchronize: it is counted but carries no seq, so
// the analyses do not take it for an instance that waits for every member.
int MPI_Win_fence(int assert_flags, MPI_Win win) {
  if (!probe::g_event.enabled) return PMPI_Win_fence(assert_flags, win);
  CommInfo* info = Window(win);
  const uint64_t seq = NextSeq(info);
  if (!probe::Recording()) return PMPI_Win_fence(assert_flags, win);
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_fence(assert_flags, win);
  ProbeRecord r =
      CollectiveRecord(kWin_fence, start, probe::Now(), info, seq, 0, -1);
  if (assert_flags & MPI_MODE_NOPRECEDE) r.flags &= ~ProbeRecord::kHasSeq;
  probe::Emit(r);
  return rc;
}

#define MERIDIAN_RMA(op, win, target, bytes, call) \
  if (!probe::Recording()) return call;            \
  const int64_t start = probe::Now();              \
  const int rc = call;                             \
  RecordOneSided(op, start, win, target, bytes);   \
  return rc;

#define MERIDIAN_RRMA(op, win, target, bytes, request, call) \
  if (!probe::Recording()) return call;                      \
  const int64_t start = probe::Now();                        \
  const int rc = call;                                       \
  if (rc == MPI_SUCCESS) {                                   \
    IssueOneSided(op, start, win, target, bytes, request);   \
  }                                                          \
  return rc;

int MPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_type, MPI_Win win) {
  MERIDIAN_RMA(kPut, win, target, TypeBytes(origin_count, origin_type),
               PMPI_Put(origin, origin_count, origin_type, target, target_disp,
                        target_count, target_type, win))
}

int MPI_Get(void* origin, int origin_count, MPI_Datatype origin_type,
            int target, MPI_Aint target_disp, int target_count,
            MPI_Datatype target_type, MPI_Win win) {
  MERIDIAN_RMA(kGet, win, target, TypeBytes(origin_count, origin_type),
               PMPI_Get(origin, origin_count, origin_type, target, target_disp,
                        target_count, target_type, win))
}

int MPI_Accumulate(const void* origin, int origin_count,
                   MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_type, MPI_Op op,
                   MPI_Win win) {
  MERIDIAN_RMA(kAccumulate, win, target, TypeBytes(origin_count, origin_type),
               PMPI_Accumulate(origin, origin_count, origin_type, target,
                               target_disp, target_count, target_type, op, win))
}

// Bytes: the origin buffer's (0 for MPI_NO_OP's empty one).
int MPI_Get_accumulate(const void* origin, int origin_count,
                       MPI_Datatype origin_type, void* result, int result_count,
                       MPI_Datatype result_type, int target,
                       MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  MERIDIAN_RMA(
      kGet_accumulate, win, target, TypeBytes(origin_count, origin_type),
      PMPI_Get_accumulate(origin, origin_count, origin_type, result,
                          result_count, result_type, target, target_disp,
                          target_count, target_type, op, win))
}

int MPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type,
                     int target, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  MERIDIAN_RMA(
      kFetch_and_op, win, target, TypeBytes(1, type),
      PMPI_Fetch_and_op(origin, result, type, target, target_disp, op, win))
}

int MPI_Compare_and_swap(const void* origin, const void* compare, void* result,
                         MPI_Datatype type, int target, MPI_Aint target_disp,
                         MPI_Win win) {
  MERIDIAN_RMA(kCompare_and_swap, win, target, TypeBytes(1, type),
               PMPI_Compare_and_swap(origin, compare, result, type, target,
                                     target_disp, win))
}

int MPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  MERIDIAN_RRMA(kRput, win, target, TypeBytes(origin_count, origin_type),
                request,
                PMPI_Rput(origin, origin_count, origin_type, target,
                          target_disp, target_count, target_type, win, request))
}

int MPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type,
             int target, MPI_Aint target_disp, int target_count,
             MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  MERIDIAN_RRMA(kRget, win, target, TypeBytes(origin_count, origin_type),
                request,
                PMPI_Rget(origin, origin_count, origin_type, target,
                          target_disp, target_count, target_type, win, request))
}

int MPI_Raccumulate(const void* origin, int origin_count,
                    MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                    int target_count, MPI_Datatype target_type, MPI_Op op,
                    MPI_Win win, MPI_Request* request) {
  MERIDIAN_RRMA(
      kRaccumulate, win, target, TypeBytes(origin_count, origin_type), request,
      PMPI_Raccumulate(origin, origin_count, origin_type, target, target_disp,
                       target_count, target_type, op, win, request))
}

int MPI_Rget_accumulate(const void* origin, int origin_count,
                        MPI_Datatype origin_type, void* result,
                        int result_count, MPI_Datatype result_type, int target,
                        MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  MERIDIAN_RRMA(
      kRget_accumulate, win, target, TypeBytes(origin_count, origin_type),
      request,
      PMPI_Rget_accumulate(origin, origin_count, origin_type, result,
                           result_count, result_type, target, target_disp,
                           target_count, target_type, op, win, request))
}

// Synchronization: lock, unlock and flush name their target as the peer;
// the _all forms and the general active target calls name none.
// Recorded as the other one-sided calls, with its lock type (LockArgs):
// exclusive epochs on one target serialize.
int MPI_Win_lock(int lock_type, int target, int assert_flags, MPI_Win win) {
  if (!probe::Recording()) {
    return PMPI_Win_lock(lock_type, target, assert_flags, win);
  }
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_lock(lock_type, target, assert_flags, win);
  const int64_t end = probe::Now();
  ProbeRecord r =
      PointToPointRecord(kWin_lock, start, end, Window(win), target, -1, 0);
  r.args = LockArgs(lock_type, assert_flags);
  probe::Emit(r);
  return rc;
}

int MPI_Win_unlock(int target, MPI_Win win) {
  MERIDIAN_RMA(kWin_unlock, win, target, 0, PMPI_Win_unlock(target, win))
}

int MPI_Win_lock_all(int assert_flags, MPI_Win win) {
  MERIDIAN_RMA(kWin_lock_all, win, -1, 0, PMPI_Win_lock_all(assert_flags, win))
}

int MPI_Win_unlock_all(MPI_Win win) {
  MERIDIAN_RMA(kWin_unlock_all, win, -1, 0, PMPI_Win_unlock_all(win))
}

int MPI_Win_flush(int target, MPI_Win win) {
  MERIDIAN_RMA(kWin_flush, win, target, 0, PMPI_Win_flush(target, win))
}

int MPI_Win_flush_all(MPI_Win win) {
  MERIDIAN_RMA(kWin_flush_all, win, -1, 0, PMPI_Win_flush_all(win))
}

int MPI_Win_flush_local(int target, MPI_Win win) {
  MERIDIAN_RMA(kWin_flush_local, win, target, 0,
               PMPI_Win_flush_local(target, win))
}

int MPI_Win_flush_local_all(MPI_Win win) {
  MERIDIAN_RMA(kWin_flush_local_all, win, -1, 0, PMPI_Win_flush_local_all(win))
}

// An MPI_Win_post or MPI_Win_start that ran from `start` to now, with its
// group (EpochGroupArg): which exposure and access epochs match.
void RecordEpochOpen(Op op, int64_t start, MPI_Win win, MPI_Group group) {
  const int64_t end = probe::Now();
  ProbeRecord r = PointToPointRecord(op, start, end, Window(win), -1, -1, 0);
  r.args = EpochGroupArg(group);
  probe::Emit(r);
}

int MPI_Win_post(MPI_Group group, int assert_flags, MPI_Win win) {
  if (!probe::Recording()) return PMPI_Win_post(group, assert_flags, win);
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_post(group, assert_flags, win);
  RecordEpochOpen(kWin_post, start, win, group);
  return rc;
}

int MPI_Win_start(MPI_Group group, int assert_flags, MPI_Win win) {
  if (!probe::Recording()) return PMPI_Win_start(group, assert_flags, win);
  const int64_t start = probe::Now();
  const int rc = PMPI_Win_start(group, assert_flags, win);
  RecordEpochOpen(kWin_start, start, win, group);
  return rc;
}

int MPI_Win_complete(MPI_Win win) {
  MERIDIAN_RMA(kWin_complete, win, -1, 0, PMPI_Win_complete(win))
}

int MPI_Win_wait(MPI_Win win) {
  MERIDIAN_RMA(kWin_wait, win, -1, 0, PMPI_Win_wait(win))
}
#undef MERIDIAN_RMA
#undef MERIDIAN_RRMA

// ---- MPI-IO -----------------------------------------------------------------

// Opening is collective over `comm` (its (comm, seq)); the file gets an id
// of its own, and its collective calls (_all, close) are instances
// (file id, seq).
int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info,
                  MPI_File* fh) {
  if (!probe::g_event.enabled) {
    return PMPI_File_open(comm, filename, amode, info, fh);
  }
  CommInfo* parent = Comm(comm);
  const uint64_t seq = NextSeq(parent);
  const int64_t start = probe::Now();
  const int rc = PMPI_File_open(comm, filename, amode, info, fh);
  const int64_t end = probe::Now();
  MPI_Group group;
  if (rc == MPI_SUCCESS && PMPI_File_get_group(*fh, &group) == MPI_SUCCESS) {
    RegisterMade(Key(*fh), comm, kFileSalt, group);
  }
  if (probe::Recording()) {
    probe::Emit(CollectiveRecord(kFile_open, start, end, parent, seq, 0, -1));
  }
  return rc;
}

int MPI_File_close(MPI_File* fh) {
  MERIDIAN_FREE_OBJECT(kFile_close, fh, File, PMPI_File_close(fh))
}
#undef MERIDIAN_FREE_OBJECT

// Independent blocking reads and writes: bytes asked for (count x type).
#define MERIDIAN_FILE_IO(op, fh, count, type, call)                         \
  if (!probe::Recording()) return call;                                     \
  const int64_t start = probe::Now();                                       \
  const int rc = call;                                                      \
  probe::Emit(PointToPointRecord(op, start, probe::Now(), File(fh), -1, -1, \
                                 TypeBytes(count, type)));                  \
  return rc;

// Collective ones: an instance (file id, seq), counted recorded or not.
#define MERIDIAN_FILE_IO_ALL(op, fh, count, type, call)            \
  if (!probe::g_event.enabled) return call;                        \
  CommInfo* info = File(fh);                                       \
  const uint64_t seq = NextSeq(info);                              \
  if (!probe::Recording()) return call;                            \
  const int64_t start = probe::Now();                              \
  const int rc = call;                                             \
  probe::Emit(CollectiveRecord(op, start, probe::Now(), info, seq, \
                               TypeBytes(count, type), -1));       \
  return rc;

// Non-blocking: from issue to completion, like MPI_Isend.
#define MERIDIAN_FILE_IIO(op, fh, count, type, request, call) \
  if (!probe::Recording()) return call;                       \
  const int64_t start = probe::Now();                         \
  const int rc = call;                                        \
  if (rc == MPI_SUCCESS) {                                    \
    const CommInfo* info = File(fh);                          \
    Issue(request,                                            \
          PointToPointRecord(op, start, start, info, -1, -1,  \
                             TypeBytes(count, type)),         \
          info, false, false);                                \
  }                                                           \
  return rc;

// Non-blocking collective: an instance too.
#define MERIDIAN_FILE_IIO_ALL(op, fh, count, type, request, call) \
  if (!probe::g_event.enabled) return call;                       \
  CommInfo* info = File(fh);                                      \
  const uint64_t seq = NextSeq(info);                             \
  if (!probe::Recording()) return call;                           \
  const int64_t start = probe::Now();                             \
  const int rc = call;                                            \
  if (rc == MPI_SUCCESS) {                                        \
    Issue(request,                                                \
          CollectiveRecord(op, start, start, info, seq,           \
                           TypeBytes(count, type), -1),           \
          info, false, false);                                    \
  }                                                               \
  return rc;

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype type,
                  MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_read, fh, count, type,
                   PMPI_File_read(fh, buf, count, type, status))
}

int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                   MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_write, fh, count, type,
                   PMPI_File_write(fh, buf, count, type, status))
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count,
                     MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_read_at, fh, count, type,
                   PMPI_File_read_at(fh, offset, buf, count, type, status))
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf,
                      int count, MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO(kFile_write_at, fh, count, type,
                   PMPI_File_write_at(fh, offset, buf, count, type, status))
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype type,
                      MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(kFile_read_all, fh, count, type,
                       PMPI_File_read_all(fh, buf, count, type, status))
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count,
                       MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(kFile_write_all, fh, count, type,
                       PMPI_File_write_all(fh, buf, count, type, status))
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(
      kFile_read_at_all, fh, count, type,
      PMPI_File_read_at_all(fh, offset, buf, count, type, status))
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf,
                          int count, MPI_Datatype type, MPI_Status* status) {
  MERIDIAN_FILE_IO_ALL(
      kFile_write_at_all, fh, count, type,
      PMPI_File_write_at_all(fh, offset, buf, count, type, status))
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype type,
                   MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iread, fh, count, type, request,
                    PMPI_File_iread(fh, buf, count, type, request))
}

int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                    MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iwrite, fh, count, type, request,
                    PMPI_File_iwrite(fh, buf, count, type, request))
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count,
                      MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iread_at, fh, count, type, request,
                    PMPI_File_iread_at(fh, offset, buf, count, type, request))
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf,
                       int count, MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO(kFile_iwrite_at, fh, count, type, request,
                    PMPI_File_iwrite_at(fh, offset, buf, count, type, request))
}

int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype type,
                       MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(kFile_iread_all, fh, count, type, request,
                        PMPI_File_iread_all(fh, buf, count, type, request))
}

int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count,
                        MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(kFile_iwrite_all, fh, count, type, request,
                        PMPI_File_iwrite_all(fh, buf, count, type, request))
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(
      kFile_iread_at_all, fh, count, type, request,
      PMPI_File_iread_at_all(fh, offset, buf, count, type, request))
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf,
                           int count, MPI_Datatype type, MPI_Request* request) {
  MERIDIAN_FILE_IIO_ALL(
      kFile_iwrite_at_all, fh, count, type, request,
      PMPI_File_iwrite_at_all(fh, offset, buf, count, type, request))
}
#undef MERIDIAN_FILE_IO
#undef MERIDIAN_FILE_IO_ALL
#undef MERIDIAN_FILE_IIO
#undef MERIDIAN_FILE_IIO_ALL

// ---- Persistent collectives (MPI-4)
// -------------------------------------------

// MPI_Bcast_init & co (Open MPI 4.1: its extension's MPIX_Bcast_init...,
// recorded under the MPI-4 names): each MPI_Start/Startall performs the
// collective once, recorded like the non-blocking form from start to
// completion, under the init call's name, with the next sequence number of
// the communicator at the start (members start their persistent
// collectives in the same order, as they must call collectives).
#if defined(OPEN_MPI)
#define MERIDIAN_MPI4(name) MPIX_##name
#define MERIDIAN_PMPI4(name) PMPIX_##name
#else
#define MERIDIAN_MPI4(name) MPI_##name
#define MERIDIAN_PMPI4(name) PMPI_##name
#endif

#define MERIDIAN_COLLECTIVE_INIT(op, comm, bytes_expr, root, request, call) \
  const int rc = call;                                                      \
  if (rc == MPI_SUCCESS) {                                                  \
    MakePersistentCollective(request, op, comm, bytes_expr, root);          \
  }                                                                         \
  return rc;

int MERIDIAN_MPI4(Barrier_init)(MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(kBarrier_init, comm, 0, -1, request,
                           MERIDIAN_PMPI4(Barrier_init)(comm, info, request))
}

int MERIDIAN_MPI4(Bcast_init)(void* buf, int count, MPI_Datatype type, int root,
                              MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kBcast_init, comm, TypeBytes(count, type), root, request,
      MERIDIAN_PMPI4(Bcast_init)(buf, count, type, root, comm, info, request))
}

int MERIDIAN_MPI4(Reduce_init)(const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype type, MPI_Op op, int root,
                               MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kReduce_init, comm, TypeBytes(count, type), root, request,
      MERIDIAN_PMPI4(Reduce_init)(sendbuf, recvbuf, count, type, op, root, comm,
                                  info, request))
}

int MERIDIAN_MPI4(Allreduce_init)(const void* sendbuf, void* recvbuf, int count,
                                  MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAllreduce_init, comm, TypeBytes(count, type), -1, request,
      MERIDIAN_PMPI4(Allreduce_init)(sendbuf, recvbuf, count, type, op, comm,
                                     info, request))
}

int MERIDIAN_MPI4(Allgather_init)(const void* sendbuf, int sendcount,
                                  MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAllgather_init, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      MERIDIAN_PMPI4(Allgather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                     recvcount, recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Allgatherv_init)(const void* sendbuf, int sendcount,
                                   MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAllgatherv_init, comm, SumBytes(recvcounts, CountsSize(comm), recvtype),
      -1, request,
      MERIDIAN_PMPI4(Allgatherv_init)(sendbuf, sendcount, sendtype, recvbuf,
                                      recvcounts, displs, recvtype, comm, info,
                                      request))
}

int MERIDIAN_MPI4(Alltoall_init)(const void* sendbuf, int sendcount,
                                 MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAlltoall_init, comm,
      BlockBytes(sendbuf, sendcount, sendtype, recvcount, recvtype), -1,
      request,
      MERIDIAN_PMPI4(Alltoall_init)(sendbuf, sendcount, sendtype, recvbuf,
                                    recvcount, recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Alltoallv_init)(const void* sendbuf, const int sendcounts[],
                                  const int sdispls[], MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAlltoallv_init, comm,
      BlocksBytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm),
      -1, request,
      MERIDIAN_PMPI4(Alltoallv_init)(sendbuf, sendcounts, sdispls, sendtype,
                                     recvbuf, recvcounts, rdispls, recvtype,
                                     comm, info, request))
}

int MERIDIAN_MPI4(Alltoallw_init)(const void* sendbuf, const int sendcounts[],
                                  const int sdispls[],
                                  const MPI_Datatype sendtypes[], void* recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kAlltoallw_init, comm,
      TypedBlocksBytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                       comm),
      -1, request,
      MERIDIAN_PMPI4(Alltoallw_init)(sendbuf, sendcounts, sdispls, sendtypes,
                                     recvbuf, recvcounts, rdispls, recvtypes,
                                     comm, info, request))
}

int MERIDIAN_MPI4(Gather_init)(const void* sendbuf, int sendcount,
                               MPI_Datatype sendtype, void* recvbuf,
                               int recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Info info,
                               MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kGather_init, comm,
      GatherBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      MERIDIAN_PMPI4(Gather_init)(sendbuf, sendcount, sendtype, recvbuf,
                                  recvcount, recvtype, root, comm, info,
                                  request))
}

int MERIDIAN_MPI4(Gatherv_init)(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kGatherv_init, comm,
      GathervBytes(comm, root, sendcount, sendtype, recvcounts, recvtype), root,
      request,
      MERIDIAN_PMPI4(Gatherv_init)(sendbuf, sendcount, sendtype, recvbuf,
                                   recvcounts, displs, recvtype, root, comm,
                                   info, request))
}

int MERIDIAN_MPI4(Scatter_init)(const void* sendbuf, int sendcount,
                                MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kScatter_init, comm,
      ScatterBytes(comm, root, sendcount, sendtype, recvcount, recvtype), root,
      request,
      MERIDIAN_PMPI4(Scatter_init)(sendbuf, sendcount, sendtype, recvbuf,
                                   recvcount, recvtype, root, comm, info,
                                   request))
}

int MERIDIAN_MPI4(Scatterv_init)(const void* sendbuf, const int sendcounts[],
                                 const int displs[], MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount,
                                 MPI_Datatype recvtype, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kScatterv_init, comm,
      ScattervBytes(comm, root, sendcounts, sendtype, recvcount, recvtype),
      root, request,
      MERIDIAN_PMPI4(Scatterv_init)(sendbuf, sendcounts, displs, sendtype,
                                    recvbuf, recvcount, recvtype, root, comm,
                                    info, request))
}

int MERIDIAN_MPI4(Reduce_scatter_init)(const void* sendbuf, void* recvbuf,
                                       const int recvcounts[],
                                       MPI_Datatype type, MPI_Op op,
                                       MPI_Comm comm, MPI_Info info,
                                       MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kReduce_scatter_init, comm, SumBytes(recvcounts, CommSize(comm), type),
      -1, request,
      MERIDIAN_PMPI4(Reduce_scatter_init)(sendbuf, recvbuf, recvcounts, type,
                                          op, comm, info, request))
}

int MERIDIAN_MPI4(Reduce_scatter_block_init)(const void* sendbuf, void* recvbuf,
                                             int recvcount, MPI_Datatype type,
                                             MPI_Op op, MPI_Comm comm,
                                             MPI_Info info,
                                             MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kReduce_scatter_block_init, comm, TypeBytes(recvcount, type), -1, request,
      MERIDIAN_PMPI4(Reduce_scatter_block_init)(sendbuf, recvbuf, recvcount,
                                                type, op, comm, info, request))
}

int MERIDIAN_MPI4(Scan_init)(const void* sendbuf, void* recvbuf, int count,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                             MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kScan_init, comm, TypeBytes(count, type), -1, request,
      MERIDIAN_PMPI4(Scan_init)(sendbuf, recvbuf, count, type, op, comm, info,
                                request))
}

int MERIDIAN_MPI4(Exscan_init)(const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                               MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kExscan_init, comm, TypeBytes(count, type), -1, request,
      MERIDIAN_PMPI4(Exscan_init)(sendbuf, recvbuf, count, type, op, comm, info,
                                  request))
}

int MERIDIAN_MPI4(Neighbor_allgather_init)(const void* sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void* recvbuf,
                                           int recvcount, MPI_Datatype recvtype,
                                           MPI_Comm comm, MPI_Info info,
                                           MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(kNeighbor_allgather_init, comm,
                           TypeBytes(sendcount, sendtype), -1, request,
                           MERIDIAN_PMPI4(Neighbor_allgather_init)(
                               sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_allgatherv_init)(
    const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kNeighbor_allgatherv_init, comm, TypeBytes(sendcount, sendtype), -1,
      request,
      MERIDIAN_PMPI4(Neighbor_allgatherv_init)(sendbuf, sendcount, sendtype,
                                               recvbuf, recvcounts, displs,
                                               recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_alltoall_init)(const void* sendbuf, int sendcount,
                                          MPI_Datatype sendtype, void* recvbuf,
                                          int recvcount, MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info,
                                          MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(kNeighbor_alltoall_init, comm,
                           TypeBytes(sendcount, sendtype), -1, request,
                           MERIDIAN_PMPI4(Neighbor_alltoall_init)(
                               sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_alltoallv_init)(
    const void* sendbuf, const int sendcounts[], const int sdispls[],
    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
    MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kNeighbor_alltoallv_init, comm,
      SumBytes(sendcounts, OutDegree(comm), sendtype), -1, request,
      MERIDIAN_PMPI4(Neighbor_alltoallv_init)(
          sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
          recvtype, comm, info, request))
}

int MERIDIAN_MPI4(Neighbor_alltoallw_init)(
    const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
    MPI_Info info, MPI_Request* request) {
  MERIDIAN_COLLECTIVE_INIT(
      kNeighbor_alltoallw_init, comm,
      SumTypedBytes(sendcounts, sendtypes, OutDegree(comm)), -1, request,
      MERIDIAN_PMPI4(Neighbor_alltoallw_init)(
          sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
          recvtypes, comm, info, request))
}
#undef MERIDIAN_COLLECTIVE_INIT
#undef MERIDIAN_MPI4
#undef MERIDIAN_PMPI4

// ---- Partitioned point-to-point (MPI-4; MPICH)
// ---------------------------------

#if !defined(OPEN_MPI)
// Psend_init/Precv_init make persistent requests, recorded as Send_init's
// are: each start from MPI_Start to completion, under the init call's name,
// with the whole buffer's bytes (partitions x count x type size). The
// MPI_Pready* calls that release partitions are recorded as calls of their
// own; MPI_Parrived, polled like MPI_Test, is not.
#define MERIDIAN_PARTITIONED_INIT(Name, op, buf_type, peer_is_source)         \
  int MPI_##Name(buf_type buf, int partitions, MPI_Count count,               \
                 MPI_Datatype type, int peer, int tag, MPI_Comm comm,         \
                 MPI_Info info, MPI_Request* request) {                       \
    const int rc = PMPI_##Name(buf, partitions, count, type, peer, tag, comm, \
                               info, request);                                \
    if (rc == MPI_SUCCESS && probe::g_event.enabled && request != nullptr &&  \
        *request != MPI_REQUEST_NULL) {                                       \
      const CommInfo* info_of_comm = Comm(comm);                              \
      g_persistent.Insert(                                                    \
          Key(*request),                                                      \
          Pending{PointToPointRecord(op, 0, 0, info_of_comm, peer, tag,       \
                                     TypeBytes(partitions * count, type)),    \
                  info_of_comm, peer_is_source && peer == MPI_ANY_SOURCE,     \
                  peer_is_source && tag == MPI_ANY_TAG});                     \
    }                                                                         \
    return rc;                                                                \
  }
MERIDIAN_PARTITIONED_INIT(Psend_init, kPsend_init, const void*, false)
MERIDIAN_PARTITIONED_INIT(Precv_init, kPrecv_init, void*, true)
#undef MERIDIAN_PARTITIONED_INIT

#define MERIDIAN_PREADY(op, call)                      \
  if (!probe::Recording()) return call;                \
  const int64_t start = probe::Now();                  \
  const int rc = call;                                 \
  probe::Emit(Base(op, start, probe::Now(), nullptr)); \
  return rc;

int MPI_Pready(int partition, MPI_Request request) {
  MERIDIAN_PREADY(kPready, PMPI_Pready(partition, request))
}

int MPI_Pready_range(int partition_low, int partition_high,
                     MPI_Request request) {
  MERIDIAN_PREADY(kPready_range,
                  PMPI_Pready_range(partition_low, partition_high, request))
}

int MPI_Pready_list(int length, int partitions[], MPI_Request request) {
  MERIDIAN_PREADY(kPready_list, PMPI_Pready_list(length, partitions, request))
}
#undef MERIDIAN_PREADY
#endif  // !OPEN_MPI

}  // extern "C"
