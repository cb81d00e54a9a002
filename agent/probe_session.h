// ProbeSession: the node agent's view of one traced process: its shared
// ProcessRegion (mapped from the memfd the probe handed over), a reader per
// thread ring, and its identity (job, rank, local rank, pid).
//
// Read() turns the records published since the last call into column spans
// of a BatchBuilder, with the ring range they came from; CommitTo() (or
// Commit()) then releases their ring slots. The agent commits once the
// collector has acknowledged the batch holding them, or once it is in the
// spool. So an agent killed in between leaves them in the rings for its
// successor, which skips what the spool already holds (SkipTo, from the
// spool's ring positions); the collector's ring marks drop what it stored.
//
// Times: records carry CLOCK_MONOTONIC ns or counter ticks (kTicks); Read
// maps both ends of each (and its call time) through the node's one
// NodeTimeMap onto the node's clock. That map is the same function whichever
// drain reads a record, and monotone, so a span that encloses another in the
// process's own clock encloses it in the batch too.
// Not thread-safe: the agent's loop owns its sessions.
#ifndef MERIDIAN_AGENT_PROBE_SESSION_H_
#define MERIDIAN_AGENT_PROBE_SESSION_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "abi/agent_protocol.h"
#include "abi/process_region.h"
#include "abi/span_ring.h"
#include "absl/status/statusor.h"
#include "agent/callsite_symbolizer.h"
#include "agent/node_counters.h"
#include "agent/node_time_map.h"
#include "agent/probe_args.h"
#include "agent/process_activity.h"
#include "agent/step_times.h"
#include "meridian/v1/control.pb.h"
#include "wire/batch_builder.h"
#include "wire/span_rules.h"

namespace meridian {

// Where a ring's reader stood after a read: the spool keeps these so that
// a restarted agent resumes after them.
struct RingPosition {
  uint64_t incarnation;
  uint32_t ring;
  uint64_t end;  // records before this index are in the spool
};

class ProbeSession {
 public:
  // Maps `memfd` (the probe's region, `hello.region_bytes` long: a memfd
  // sealed against shrinking) and checks it; INVALID_ARGUMENT naming what
  // is wrong otherwise. Takes ownership of
  // `memfd` (closed once mapped).
  static absl::StatusOr<std::unique_ptr<ProbeSession>> Open(
      const ProbeHello& hello, int memfd, const std::string& node);
  ~ProbeSession();

  // What MPI_Init learnt: a rank, local rank or world size of -1/0 (not
  // known) keeps the one from the hello.
  void SetIdentity(int32_t rank, int32_t local_rank, int32_t world_size);

  // Reads up to `max_records` published records into `builder`; returns how
  // many were read. Records that cannot be stored (a name that is not in
  // the string area; or a span that breaks a rule of wire/span_rules.h,
  // checked on its wall-clock times) are skipped one by one and counted in
  // invalid_records(), the first one's reason in first_invalid(). Names
  // that are not valid UTF-8 are repaired (BatchBuilder::String).
  size_t Read(BatchBuilder* builder, const NodeTimeMap& time,
              size_t max_records);
  // Releases what Read returned so far.
  void Commit();
  // Releases ring `ring`'s records before `end` (no further than Read
  // reached): the agent calls it once the collector has acknowledged them.
  void CommitTo(uint32_t ring, uint64_t end);
  // Releases, in each ring whose records not yet released (read or not)
  // are more than `max_held`, what Read returned so far; returns how many
  // records it released so. The agent calls it once what it read is in
  // its memory, so that a ring waiting for the collector's
  // acknowledgement does not fill and drop (docs/agent.md, "Durability").
  uint64_t ReleaseOver(uint64_t max_held);
  // The positions Read reached, one per ring that has a reader.
  void Positions(std::vector<RingPosition>* out) const;
  // Resume ring `ring` after `end` (what a previous agent spooled).
  void SkipTo(uint32_t ring, uint64_t end);

  // Once the process has exited and Read has taken all of it: puts the
  // process in `builder`'s current batch marked as ended (v1::Process.ended)
  // and returns true; false (nothing added) if no record of it was ever
  // read, so that the collector never heard of it.
  bool MarkEnded(BatchBuilder* builder);

  // Records the probe could not record: full rings and threads beyond the
  // ring limit. Cumulative.
  uint64_t dropped() const;
  uint64_t invalid_records() const { return invalid_; }
  const std::string& first_invalid() const { return first_invalid_; }

  // Call sites (records with a `callsite`, MERIDIAN_CALLSITES=1) become the
  // span's string arg "callsite", as `symbolizer` names them (once per
  // distinct call site of the process; at most kMaxCallsites of them, the
  // rest carry none). Without a symbolizer, or before one is set, records'
  // call sites are left out. `symbolizer` must outlive the session.
  static constexpr size_t kMaxCallsites = 8192;
  void set_symbolizer(CallsiteSymbolizer* symbolizer) {
    symbolizer_ = symbolizer;
  }

  // What the process's threads are in now (agent/process_activity.h), with
  // its job, rank and pid, and the steps it ended since the last sample
  // (agent/step_times.h), into `out`.
  void SampleActivity(const NodeTimeMap& time, int64_t node_now_ns,
                      v1::ProcessActivity* out);

  // The node's counters sampled at `node_ns` (agent/node_counters.h), as
  // counter spans (category user) on the process's track "node counters"
  // (a queue, id kNodeCountersTrack): the agent puts them in one process
  // of each job on the node.
  static constexpr int64_t kNodeCountersTrack = -1;
  void AddNodeCounters(BatchBuilder* builder, int64_t node_ns,
                       const std::vector<NodeCounter>& counters);
  int32_t rank() const { return process_.rank; }

  // Asks the process to record the next `steps` steps, or everything for
  // `seconds` seconds (see ProcessRegionHeader).
  void RequestTrace(uint32_t steps, uint32_t seconds);

  const std::string& job() const { return process_.job; }
  int64_t pid() const { return process_.pid; }
  uint64_t incarnation() const { return layout_.incarnation; }
  uint64_t ring_capacity() const { return layout_.ring_capacity; }

 private:
  ProbeSession(void* memory, const ProcessRegionLayout& layout,
               ProcessDesc process);
  // Makes readers for rings that threads took.
  void OpenReadyRings();
  // Takes owner record `r` (index `index` of ring `ring`) into owners_;
  // false if it names no thread.
  bool TakeOwner(uint32_t ring, uint64_t index, const ProbeRecord& r);
  // Moves ring `ring`'s reader to `end`, reading the owner records it
  // passes, and commits there.
  void Skip(uint32_t ring, uint64_t end);
  // Records ring `ring` committed up to `end`: its tail owner follows.
  void Committed(uint32_t ring, uint64_t end);
  // Counts record `record` as invalid because of `problem`.
  void Invalid(uint64_t record, const std::string& problem);
  int TrackFor(BatchBuilder* builder, int32_t tid, uint32_t queue, bool gpu);
  // The process's handle in `builder`, declared again where the builder
  // forgot it.
  int ProcessIn(BatchBuilder* builder);
  // Adds the arguments of string `args` ("key=value;key=value") to the last
  // span of `span`.
  void AddExtra(BatchBuilder* builder, const ProbeRecord& r, int64_t wall_start,
                int64_t dur, const NodeTimeMap& time, SpanColumns* span);
  void AddArgs(BatchBuilder* builder, uint32_t args, SpanColumns* span);
  // A Sendrecv's receive (ProbeRecord::kRecvPeer) as its span's args.
  void AddReceive(BatchBuilder* builder, const ProbeRecord& r,
                  SpanColumns* span);
  void AddCallsite(BatchBuilder* builder, uint32_t callsite, SpanColumns* span);

  // The region's header, for its atomics only (counters, ring slots, trace
  // orders); offsets and sizes come from layout_.
  ProcessRegionHeader* header() const {
    return static_cast<ProcessRegionHeader*>(memory_);
  }

  // The mapping. Offsets and sizes in it come from layout_, copied and
  // checked once at Open.
  void* memory_;
  ProcessRegionLayout layout_;
  ProcessDesc process_;
  std::vector<std::unique_ptr<SpanRingReader>> readers_;  // by ring index
  // Which thread owns each ring's records (process_region.h): `tid` at the
  // reader's position, `committed` at the ring's committed tail, and the
  // owner records read in between as (index, new owner).
  struct RingOwners {
    int32_t tid = 0;
    int32_t committed = 0;
    std::deque<std::pair<uint64_t, int32_t>> changes;
  };
  std::vector<RingOwners> owners_;     // by ring index
  std::map<uint32_t, uint64_t> skip_;  // ring -> resume index, before ready
  uint64_t invalid_ = 0;
  std::string first_invalid_;

  // Handles in the BatchBuilder last used; redeclared when the builder, its
  // declarations (BatchBuilder::ForgetDeclarations) or the identity change.
  const BatchBuilder* builder_ = nullptr;
  uint64_t builder_declarations_ = 0;
  int process_handle_ = -1;
  bool declared_ = false;  // in some batch: the collector knows of it
  // (queue, gpu) of a named track, or (0, false) and the thread's id for
  // a thread's own track -> track handle.
  std::map<std::tuple<uint32_t, bool, int32_t>, int> tracks_;
  int node_track_ = -1;  // "node counters" in the current declarations
  std::map<uint32_t, std::vector<ProbeArg>> args_;  // parsed once per string
  CallsiteSymbolizer* symbolizer_ = nullptr;
  SlotSeen seen_[ProcessRegionHeader::kMaxRings] = {};  // SampleActivity's
  StepTimes step_times_;  // Read adds, SampleActivity takes
  std::map<uint32_t, std::string> callsites_;  // "" when not a call site
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROBE_SESSION_H_
