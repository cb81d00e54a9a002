// The MPI wrappers' operations, communicator table and record builders.
//
// Part of mpi_wrappers.cc's translation unit, included there only (and by
// the parts after it): the wrappers' state and helpers stay in one
// translation unit's anonymous namespace, where the compiler inlines them
// into every wrapper, as the MPI call path needs.
#ifndef MERIDIAN_CAPTURE_PROBE_MPI_WRAP_COMMS_H_
#define MERIDIAN_CAPTURE_PROBE_MPI_WRAP_COMMS_H_

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

}  // namespace

#endif  // MERIDIAN_CAPTURE_PROBE_MPI_WRAP_COMMS_H_
