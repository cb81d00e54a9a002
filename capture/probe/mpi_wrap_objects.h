// The MPI wrappers' windows, files, topologies, collectives' bytes,
// persistent requests and matched probes; the collectives' macros.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_OBJECTS_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_OBJECTS_H_

#include "capture/probe/mpi_wrap_requests.h"

namespace {

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

// Every collective: its sequence number is counted, recorded or not; one
// not recorded returns at once.
#define MERIDIAN_COLLECTIVE_SEQ(comm, call) \
  if (!probe::g_event.enabled) return call; \
  CommInfo* info = Comm(comm);              \
  const uint64_t seq = NextSeq(info);       \
  if (!probe::Recording()) return call;

// A recorded one is timed from `start` and returns `rc` from the call.
#define MERIDIAN_COLLECTIVE_CALL(comm, call) \
  MERIDIAN_COLLECTIVE_SEQ(comm, call)        \
  const int64_t start = probe::Now();        \
  const int rc = call;

// Blocking collectives: one macro body, the bytes and root per call; the
// record is made before the call, to be published as in flight.
#define MERIDIAN_COLLECTIVE(op, comm, bytes_expr, root, call)              \
  MERIDIAN_COLLECTIVE_SEQ(comm, call)                                      \
  ProbeRecord r = CollectiveRecord(op, 0, 0, info, seq, bytes_expr, root); \
  StartBlocking(&r);                                                       \
  const int rc = call;                                                     \
  FinishBlocking(&r);                                                      \
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

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_OBJECTS_H_
