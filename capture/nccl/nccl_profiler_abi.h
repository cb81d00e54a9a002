// The binary interface of NCCL's profiler plugins, versions 4 (NCCL 2.27)
// and 5 (NCCL 2.28), declared from NCCL's documented ABI
// (ext-profiler/README.md and src/include/plugin/profiler/profiler_v{4,5}.h
// of the NCCL sources): NCCL dlopens the library named by
// NCCL_PROFILER_PLUGIN and looks up the symbol `ncclProfiler_v5`, then
// `ncclProfiler_v4`, ... Each is a table of five functions and a name.
//
// Only the layout matters here: field order and types follow NCCL's
// structures exactly; the names are ours. NCCL's headers are not installed
// with NCCL, so a plugin has to carry these declarations.
//
// Lifecycle, as NCCL drives it: Init once per communicator (it returns an
// activation mask of event kinds; NCCL keeps one process-wide mask), then
// StartEvent / RecordEventState / StopEvent per event, from the threads that
// issue collectives and from NCCL's proxy thread, then Finalize per
// communicator. Collective (kColl) and point-to-point (kP2p) events stop
// when the operation is *enqueued*; their kernel channel (kKernelCh)
// children carry the GPU's %globaltimer (ns) at the start of the channel's
// work (in the descriptor) and at its end (RecordEventState
// kKernelChStop). Handles are opaque to NCCL: it only passes them back
// (and as `parent` of child events), never dereferences them.
#ifndef MERIDIAN_CAPTURE_NCCL_NCCL_PROFILER_ABI_H_
#define MERIDIAN_CAPTURE_NCCL_NCCL_PROFILER_ABI_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace meridian {
namespace nccl {

// ncclResult_t: 0 is success; a plugin only ever reports success or an
// internal error (3).
enum Result : int { kSuccess = 0, kInternalError = 3 };

// NCCL's logger: level, subsystem flags, file, line, printf format...
using Logger = void (*)(int level, unsigned long flags, const char* file,
                        int line, const char* format, ...);

// Event kinds: the `type` of a descriptor and the bits of the activation
// mask. Enabling a kind enables its ancestors (kKernelCh -> kColl/kP2p ->
// kGroup).
enum EventKind : uint64_t {
  kGroup = 1 << 0,
  kColl = 1 << 1,
  kP2p = 1 << 2,
  kProxyOp = 1 << 3,
  kProxyStep = 1 << 4,
  kProxyCtrl = 1 << 5,
  kKernelCh = 1 << 6,
  kNetPlugin = 1 << 7,
  kGroupApi = 1 << 8,      // v5
  kCollApi = 1 << 9,       // v5
  kP2pApi = 1 << 10,       // v5
  kKernelLaunch = 1 << 11  // v5
};

// The states RecordEventState reports that Meridian uses.
enum EventState : int { kKernelChStop = 22 };

// The event descriptor of version 5 (NCCL 2.28).
struct EventDescrV5 {
  uint64_t type;  // one EventKind
  void* parent;   // the parent event's handle (a collective's group...)
  int rank;       // this process's rank in the communicator
  union {
    struct {
      bool graph_captured;
      int group_depth;
    } group_api;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graph_captured;
    } coll_api;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graph_captured;
    } p2p_api;
    struct {
      void* stream;
    } kernel_launch;
    struct {
      uint64_t seq;      // per communicator and function
      const char* func;  // "AllReduce", "AllGather", ...
      const void* send_buffer;
      void* recv_buffer;
      size_t count;  // elements (per rank for AllGather, ReduceScatter)
      int root;
      const char* datatype;  // "ncclFloat32", ...
      uint8_t channels;
      uint8_t warps;
      const char* algorithm;  // "RING", "TREE", ...
      const char* protocol;   // "SIMPLE", "LL", "LL128"
      void* parent_group;
    } coll;
    struct {
      const char* func;  // "Send", "Recv"
      void* buffer;
      const char* datatype;
      size_t count;
      int peer;  // rank in the communicator
      uint8_t channels;
      void* parent_group;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channel;
      int peer;
      int steps;
      int chunk_bytes;
      int is_send;
    } proxy_op;
    struct {
      int step;
    } proxy_step;
    struct {
      uint8_t channel;
      uint64_t gpu_timer;  // %globaltimer ns when the channel's work began
    } kernel_ch;
    struct {
      int64_t id;
      void* data;
    } net_plugin;
  };
};

// The event descriptor of version 4 (NCCL 2.27): a one-byte type, no API
// events, no parent_group.
struct EventDescrV4 {
  uint8_t type;
  void* parent;
  int rank;
  union {
    struct {
      uint64_t seq;
      const char* func;
      const void* send_buffer;
      void* recv_buffer;
      size_t count;
      int root;
      const char* datatype;
      uint8_t channels;
      uint8_t warps;
      const char* algorithm;
      const char* protocol;
    } coll;
    struct {
      const char* func;
      void* buffer;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t channels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channel;
      int peer;
      int steps;
      int chunk_bytes;
      int is_send;
    } proxy_op;
    struct {
      int step;
    } proxy_step;
    struct {
      uint8_t channel;
      uint64_t gpu_timer;
    } kernel_ch;
    struct {
      int64_t id;
      void* data;
    } net_plugin;
  };
};

// What comes with a state change (the same in versions 4 and 5).
union EventStateArgs {
  struct {
    size_t bytes;
  } proxy_step;
  struct {
    int appended_proxy_ops;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    uint64_t gpu_timer;  // %globaltimer ns when the channel's work ended
  } kernel_ch;
};

struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t comm_hash, int* activation_mask,
                 const char* comm_name, int nodes, int ranks, int rank,
                 Logger log);
  Result (*start_event)(void* context, void** handle, EventDescrV5* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, EventStateArgs* args);
  Result (*finalize)(void* context);
};

struct ProfilerV4 {
  const char* name;
  Result (*init)(void** context, int* activation_mask, const char* comm_name,
                 uint64_t comm_hash, int nodes, int ranks, int rank,
                 Logger log);
  Result (*start_event)(void* context, void** handle, EventDescrV4* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, EventStateArgs* args);
  Result (*finalize)(void* context);
};

// The offsets NCCL's declarations imply on x86-64 and aarch64: a change here
// would silently misread every event.
static_assert(offsetof(EventDescrV5, parent) == 8);
static_assert(offsetof(EventDescrV5, rank) == 16);
static_assert(offsetof(EventDescrV5, coll) == 24);
static_assert(offsetof(EventDescrV5, coll.count) == 24 + 32);
static_assert(offsetof(EventDescrV5, coll.datatype) == 24 + 48);
static_assert(offsetof(EventDescrV5, coll.channels) == 24 + 56);
static_assert(offsetof(EventDescrV5, coll.algorithm) == 24 + 64);
static_assert(offsetof(EventDescrV5, kernel_ch.gpu_timer) == 24 + 8);
static_assert(offsetof(EventDescrV4, coll) == 24);
static_assert(sizeof(EventStateArgs) == 8);

}  // namespace nccl
}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_NCCL_NCCL_PROFILER_ABI_H_
