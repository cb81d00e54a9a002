// The MPI wrappers' request tracking (non-blocking calls from issue to
// completion) and call helpers.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_REQUESTS_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_REQUESTS_H_

#include "capture/probe/mpi_wrap_comms.h"

namespace {

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

// MPI_Wait for the request of `ticket` (MarkRequest's) begins at `start`:
// published as the thread's call in flight with the request's communicator,
// peer, tag, bytes and sequence number (a persistent collective's) and its
// operation (waits_for), so that a hang in it is told like one in the
// blocking call; a request the probe does not hold, by the name alone.
void EnterWaitFor(uint32_t ticket, int64_t start) {
  const Pending* pending =
      ticket == kSharedTicket ? nullptr : g_requests.PeekMarked(ticket);
  if (pending == nullptr) {
    probe::EnterCall(OpName(kWait), kCategoryMpi, start);
    return;
  }
  ProbeRecord r = pending->record;
  const uint32_t op = r.name;
  r.name = OpName(kWait);
  r.start_ns = start;
  r.flags = (r.flags & (ProbeRecord::kHasPeer | ProbeRecord::kHasTag |
                        ProbeRecord::kHasSeq)) |
            probe::TimeFlags();
  probe::EnterWait(r, op);
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

// A blocking call that `r` describes, built before it: timed from now, and
// published as the thread's call in flight (probe::EnterCall) until
// FinishBlocking times its end and records it.
inline __attribute__((always_inline)) void StartBlocking(ProbeRecord* r) {
  r->start_ns = probe::Now();
  probe::EnterCall(*r);
}
inline __attribute__((always_inline)) void FinishBlocking(ProbeRecord* r) {
  const int64_t end = probe::Now();
  probe::LeaveCall();
  r->dur_ns = end - r->start_ns;
  probe::Emit(*r);
}

// A blocking receive's source and tag as received, where the call named
// MPI_ANY_SOURCE or MPI_ANY_TAG (`source`, `tag` as called).
void SetReceived(ProbeRecord* r, const CommInfo* info, int source, int tag,
                 const MPI_Status* status) {
  if (source == MPI_ANY_SOURCE)
    SetPeer(r, WorldRankOf(info, status->MPI_SOURCE));
  if (tag == MPI_ANY_TAG) SetTag(r, status->MPI_TAG);
}

// A blocking call that sends `sent` of its bytes and receives the rest
// from `source` with `recv_tag` (Sendrecv; both as received, from the
// status): the sent bytes go with the record (kExtraSendBytes), and the
// receive's source and tag (kRecvPeer) unless it received nothing
// (MPI_PROC_NULL).
void SetSendReceive(ProbeRecord* r, const CommInfo* info, int source,
                    int recv_tag, int64_t sent) {
  r->extra = sent;
  r->flags |= ProbeRecord::kExtraSendBytes;
  const int32_t from = WorldRankOf(info, source);
  if (from >= 0 && recv_tag >= 0) {
    r->seq = static_cast<uint64_t>(static_cast<uint32_t>(from)) |
             static_cast<uint64_t>(static_cast<uint32_t>(recv_tag)) << 32;
    r->flags |= ProbeRecord::kRecvPeer;
  }
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

}  // namespace

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_REQUESTS_H_
