#include "agent/probe_session.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/process_activity.h"

namespace meridian {
namespace {

constexpr size_t kChunk = 512;

// A process's word for its world size, kept if plausible (the launcher's
// variables are checked in the probe, but the socket is a boundary).
int32_t ValidWorldSize(int32_t world_size) {
  return world_size > 0 && world_size < (1 << 30) ? world_size : 0;
}

// a + b and a - b as the ring's raw times and the mapped ones wrap: a
// record's fields are the process's to write, and what wraps breaks a span
// rule (a negative length) instead of the agent.
int64_t Plus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t Minus(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProbeSession>> ProbeSession::Open(
    const ProbeHello& hello, int memfd, const std::string& node) {
  struct stat st;
  if (memfd < 0 || fstat(memfd, &st) != 0) {
    if (memfd >= 0) close(memfd);
    return absl::InvalidArgumentError(
        absl::StrCat("process ", hello.pid, " sent no shared memory"));
  }
  const uint64_t bytes = hello.region_bytes;
  if (bytes < sizeof(ProcessRegionHeader) ||
      static_cast<uint64_t>(st.st_size) < bytes) {
    close(memfd);
    return absl::InvalidArgumentError(
        absl::StrCat("process ", hello.pid, " declared ", bytes,
                     " bytes of shared memory but sent ", st.st_size));
  }
  // A memory file that could shrink under the mapping would kill the agent
  // (SIGBUS on the next read): only a memfd sealed against shrinking is
  // mapped. Any other descriptor (a file, a pipe) has no seals to show.
  const int seals = fcntl(memfd, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    close(memfd);
    return absl::InvalidArgumentError(absl::StrCat(
        "process ", hello.pid,
        " sent shared memory that is not a memfd sealed against shrinking "
        "(F_SEAL_SHRINK): refused, since it could be cut under the agent; "
        "is its probe older than this agent?"));
  }
  void* memory =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  close(memfd);
  if (memory == MAP_FAILED) {
    return absl::InternalError(absl::StrCat("mapping the memory of process ",
                                            hello.pid, ": ", strerror(errno)));
  }
  ProcessRegionLayout layout;
  if (!ReadProcessRegionLayout(memory, bytes, &layout)) {
    munmap(memory, bytes);
    return absl::InvalidArgumentError(absl::StrCat(
        "process ", hello.pid,
        " sent memory that is not a Meridian probe region of version ",
        ProcessRegionHeader::kVersion));
  }
  ProcessDesc process;
  process.job = std::string(hello.job, strnlen(hello.job, sizeof(hello.job)));
  process.node = node;
  process.rank = hello.rank;
  process.local_rank = hello.local_rank;
  process.world_size = ValidWorldSize(hello.world_size);
  process.pid = hello.pid;
  process.incarnation = layout.incarnation;
  return std::unique_ptr<ProbeSession>(
      new ProbeSession(memory, layout, std::move(process)));
}

ProbeSession::ProbeSession(void* memory, const ProcessRegionLayout& layout,
                           ProcessDesc process)
    : memory_(memory), layout_(layout), process_(std::move(process)) {
  readers_.resize(ProcessRegionHeader::kMaxRings);
  owners_.resize(ProcessRegionHeader::kMaxRings);
}

ProbeSession::~ProbeSession() { munmap(memory_, layout_.bytes); }

void ProbeSession::SetIdentity(int32_t rank, int32_t local_rank,
                               int32_t world_size) {
  world_size = ValidWorldSize(world_size);
  if (rank == process_.rank && local_rank == process_.local_rank &&
      world_size == process_.world_size) {
    return;
  }
  process_.rank = rank;
  if (local_rank >= 0) process_.local_rank = local_rank;
  if (world_size > 0) process_.world_size = world_size;
  builder_ = nullptr;  // declare the process anew
}

void ProbeSession::OpenReadyRings() {
  for (uint32_t i = 0; i < ProcessRegionHeader::kMaxRings; ++i) {
    RingSlot& slot = header()->slots[i];
    if (readers_[i] != nullptr ||
        slot.state.load(std::memory_order_acquire) == kSlotUnused) {
      continue;
    }
    auto reader = std::make_unique<SpanRingReader>(
        RingMemory(memory_, layout_, i), SpanRingBytes(layout_.ring_capacity));
    if (!reader->valid()) continue;
    // The thread whose records start at the committed tail, where the
    // reader starts. Only a label: a process that writes nonsense here
    // mislabels its own threads.
    const int32_t owner = slot.tail_owner.load(std::memory_order_relaxed);
    owners_[i] = RingOwners{};
    owners_[i].tid = owners_[i].committed = owner > 0 ? owner : slot.tid;
    readers_[i] = std::move(reader);
    if (auto it = skip_.find(i); it != skip_.end()) {
      Skip(i, it->second);
      skip_.erase(it);
    }
  }
}

void ProbeSession::SampleActivity(const NodeTimeMap& time, int64_t node_now_ns,
                                  v1::ProcessActivity* out) {
  out->set_job(process_.job);
  out->set_rank(process_.rank);
  out->set_pid(process_.pid);
  meridian::SampleActivity(memory_, layout_, time, node_now_ns, seen_, out);
  for (const StepTimes::Step& s : step_times_.Take()) {
    v1::StepTime* step = out->add_steps();
    step->set_step(s.step);
    step->set_dur_ns(s.dur_ns);
    step->set_comm_ns(s.comm_ns);
    for (const StepTimes::Peer& p : s.peers) {
      v1::PeerTime* peer = step->add_peers();
      peer->set_peer(p.peer);
      peer->set_ns(p.ns);
      peer->set_bytes(p.bytes);
    }
  }
}

void ProbeSession::SkipTo(uint32_t ring, uint64_t end) {
  if (ring >= ProcessRegionHeader::kMaxRings) return;
  if (readers_[ring] != nullptr) {
    Skip(ring, end);
  } else {
    skip_[ring] = end;
  }
}

void ProbeSession::Skip(uint32_t ring, uint64_t end) {
  // The records skipped are still in the ring (they were never committed):
  // read for their owner records, so that what follows them goes to the
  // right thread.
  SpanRingReader* reader = readers_[ring].get();
  if (end <= reader->position() || end > reader->published()) return;
  ProbeRecord records[kChunk];
  while (reader->position() < end) {
    const uint64_t first = reader->position();
    const size_t n = reader->Read(
        records, static_cast<size_t>(std::min<uint64_t>(kChunk, end - first)));
    if (n == 0) break;
    for (size_t i = 0; i < n; ++i) {
      if (records[i].flags & ProbeRecord::kOwner) {
        TakeOwner(ring, first + i, records[i]);
      }
    }
  }
  reader->Commit();
  Committed(ring, reader->position());
}

bool ProbeSession::TakeOwner(uint32_t ring, uint64_t index,
                             const ProbeRecord& r) {
  if (r.peer <= 0) return false;
  owners_[ring].tid = r.peer;
  owners_[ring].changes.emplace_back(index, r.peer);
  return true;
}

void ProbeSession::Committed(uint32_t ring, uint64_t end) {
  RingOwners& owners = owners_[ring];
  while (!owners.changes.empty() && owners.changes.front().first < end) {
    owners.committed = owners.changes.front().second;
    owners.changes.pop_front();
  }
  header()->slots[ring].tail_owner.store(owners.committed,
                                         std::memory_order_relaxed);
}

int ProbeSession::ProcessIn(BatchBuilder* builder) {
  if (builder_ != builder || builder_declarations_ != builder->declarations()) {
    builder_ = builder;
    builder_declarations_ = builder->declarations();
    // What its probe dropped so far travels with each batch's declaration.
    process_.dropped = std::min(dropped(), (uint64_t{1} << 62) - 1);
    process_handle_ = builder->DeclareProcess(process_);
    tracks_.clear();
    node_track_ = -1;
  }
  declared_ = true;
  return process_handle_;
}

void ProbeSession::AddNodeCounters(BatchBuilder* builder, int64_t node_ns,
                                   const std::vector<NodeCounter>& counters) {
  const int process = ProcessIn(builder);
  if (node_track_ < 0) {
    node_track_ = builder->DeclareTrack(process, v1::TRACK_KIND_QUEUE,
                                        kNodeCountersTrack, "node counters");
  }
  for (const NodeCounter& counter : counters) {
    const BatchBuilder::ColumnSpan span = builder->AddColumnSpan(
        node_track_, -1, 0, v1::CATEGORY_USER, counter.name, node_ns, 0);
    span.columns->kind[span.index] = v1::SPAN_KIND_COUNTER;
    span.columns->value[span.index] = counter.value;
  }
}

bool ProbeSession::MarkEnded(BatchBuilder* builder) {
  if (!declared_) return false;  // nothing of it was ever sent
  builder->MarkEnded(ProcessIn(builder));
  return true;
}

int ProbeSession::TrackFor(BatchBuilder* builder, int32_t tid, uint32_t queue,
                           bool gpu) {
  ProcessIn(builder);
  // A named track (queue or GPU stream) is one track whichever thread
  // records into it; a thread's own track is its thread id's, whichever
  // ring it used.
  auto [it, inserted] =
      tracks_.try_emplace(queue != 0 ? std::make_tuple(queue, gpu, int32_t{0})
                                     : std::make_tuple(uint32_t{0}, false, tid),
                          -1);
  if (!inserted) return it->second;
  if (queue != 0) {
    const char* data;
    uint32_t length;
    std::string name = StringAt(memory_, layout_, queue, &data, &length)
                           ? std::string(data, length)
                           : absl::StrCat(gpu ? "GPU track " : "queue ", queue);
    it->second = builder->DeclareTrack(
        process_handle_, gpu ? v1::TRACK_KIND_GPU_STREAM : v1::TRACK_KIND_QUEUE,
        queue, std::move(name));
  } else {
    it->second = builder->DeclareTrack(
        process_handle_, v1::TRACK_KIND_THREAD, tid,
        tid == process_.pid ? std::string("main")
                            : absl::StrCat("thread ", tid));
  }
  return it->second;
}

namespace {

// The fields of record `r` beyond AddColumnSpan's into row `at` of `c`
// (`value`: a counter's, read from its bytes).
inline void CopyFields(const ProbeRecord& r, double value, size_t at,
                       SpanColumns* c) {
  c->kind[at] = r.kind;
  if (r.kind == v1::SPAN_KIND_COUNTER) {
    c->value[at] = value;
  } else {
    c->bytes[at] = r.bytes;
  }
  c->comm[at] = r.comm;
  c->comm_size[at] = r.comm_size;
  c->correlation[at] = r.correlation;
  uint8_t flags = 0;
  if (r.flags & ProbeRecord::kHasPeer) {
    flags |= SpanColumns::kHasPeer;
    c->peer[at] = r.peer;
  }
  if (r.flags & ProbeRecord::kHasTag) {
    flags |= SpanColumns::kHasTag;
    c->tag[at] = r.tag;
  }
  if (r.flags & ProbeRecord::kHasSeq) {
    flags |= SpanColumns::kHasSeq;
    c->seq[at] = r.seq;
  }
  if (r.flags & ProbeRecord::kHasStep) {
    flags |= SpanColumns::kHasStep;
    c->step[at] = r.step;
  }
  if (r.flags & ProbeRecord::kHasPartition) {
    flags |= SpanColumns::kHasPartition;
    c->partition[at] = r.partition;
  }
  c->flags[at] = flags;
}

}  // namespace

size_t ProbeSession::Read(BatchBuilder* builder, const NodeTimeMap& time,
                          size_t max_records) {
  OpenReadyRings();
  ProbeRecord records[kChunk];
  size_t total = 0;
  for (uint32_t ring = 0; ring < readers_.size() && total < max_records;
       ++ring) {
    SpanRingReader* reader = readers_[ring].get();
    if (reader == nullptr) continue;
    int range = -1;  // the batch's ring range for what is read now
    while (total < max_records) {
      const size_t want = std::min(kChunk, max_records - total);
      const uint64_t first = reader->position();
      const size_t n = reader->Read(records, want);
      if (n > 0 && range < 0) {
        range = builder->AddRing(layout_.incarnation, ring, first);
      }
      total += n;
      for (size_t i = 0; i < n; ++i) {
        const ProbeRecord& r = records[i];
        if (r.flags & ProbeRecord::kOwner) {
          if (!TakeOwner(ring, first + i, r)) {
            Invalid(first + i, "an owner record names no thread");
          }
          continue;
        }
        const char* name;
        uint32_t length;
        double value = 0;
        if (r.kind == v1::SPAN_KIND_COUNTER) {
          memcpy(&value, &r.bytes, sizeof(value));
        }
        if (!StringAt(memory_, layout_, r.name, &name, &length)) {
          Invalid(first + i, "its name is not in the process's string area");
          continue;
        }
        // Both ends through the node's one map, never start plus length:
        // spans that end at the same raw time end at the same ns, and a span
        // that encloses another in raw time encloses it on the wall clock,
        // whichever drains read them.
        const bool in_ticks = (r.flags & ProbeRecord::kTicks) != 0;
        const int64_t wall_start = time.ToWallNs(r.start_ns, in_ticks);
        const int64_t dur = Minus(
            time.ToWallNs(Plus(r.start_ns, r.dur_ns), in_ticks), wall_start);
        // The collector's rules, one record at a time: what it would drop
        // is dropped here and costs no other record anything.
        const std::string problem =
            SpanProblem({length, r.category, r.kind, wall_start, dur,
                         r.kind == v1::SPAN_KIND_COUNTER ? 0 : r.bytes, value});
        if (!problem.empty()) {
          Invalid(first + i, problem);
          continue;
        }
        const BatchBuilder::ColumnSpan span = builder->AddColumnSpan(
            TrackFor(builder, owners_[ring].tid, r.queue,
                     (r.flags & ProbeRecord::kGpuTrack) != 0),
            range, first + i, static_cast<v1::Category>(r.category),
            absl::string_view(name, length), wall_start, dur);
        SpanColumns& c = *span.columns;
        CopyFields(r, value, span.index, &c);
        if (r.args != 0) AddArgs(builder, r.args, &c);
        if (r.flags & ProbeRecord::kHasCallsite) {
          AddCallsite(builder, r.callsite, &c);
        }
        AddExtra(builder, r, wall_start, dur, time, &c);
        if (r.flags & ProbeRecord::kHasStep) {
          // Its step's times (the probe's "step" span is the user one
          // named so).
          const bool marker = r.category == v1::CATEGORY_USER &&
                              absl::string_view(name, length) == "step";
          // A point-to-point call's peer: a peer and no collective
          // sequence number (a collective's peer is its root).
          const bool p2p = (r.flags & ProbeRecord::kHasPeer) &&
                           !(r.flags & ProbeRecord::kHasSeq);
          step_times_.Add(r.step, r.category, marker,
                          (r.flags & ProbeRecord::kGpuTrack) != 0, dur,
                          p2p ? r.peer : -1, p2p ? r.bytes : 0);
        }
        if ((r.flags & ProbeRecord::kRecvPeer) &&
            !(r.flags & ProbeRecord::kHasSeq)) {
          AddReceive(builder, r, &c);
        }
      }
      if (n < want) break;
    }
    if (range >= 0) builder->SetRingEnd(range, reader->position());
  }
  return total;
}

void ProbeSession::AddArgs(BatchBuilder* builder, uint32_t args,
                           SpanColumns* span) {
  auto [it, inserted] = args_.try_emplace(args);
  if (inserted) {
    const char* data;
    uint32_t length;
    if (!StringAt(memory_, layout_, args, &data, &length)) return;
    // Copied first, as the call sites are: parsed from bytes that stay put.
    it->second = ParseProbeArgs(std::string(data, length));
  }
  for (const ProbeArg& arg : it->second) {
    ChunkArg out;
    out.key = builder->String(arg.key);
    if (arg.is_number) {
      out.value = arg.number;
    } else {
      out.type = ChunkArg::Type::kString;
      out.value = builder->String(arg.text);
    }
    span->AddArg(out);
  }
}

void ProbeSession::AddCallsite(BatchBuilder* builder, uint32_t callsite,
                               SpanColumns* span) {
  if (symbolizer_ == nullptr) return;
  auto it = callsites_.find(callsite);
  if (it == callsites_.end()) {
    if (callsites_.size() >= kMaxCallsites) return;
    const char* data;
    uint32_t length;
    std::string site;
    if (StringAt(memory_, layout_, callsite, &data, &length)) {
      // Copied out of the shared memory first: the process may rewrite
      // the bytes while they are parsed.
      site = symbolizer_->Symbolize(std::string(data, length));
    }
    it = callsites_.emplace(callsite, std::move(site)).first;
  }
  if (it->second.empty()) return;
  ChunkArg arg;
  arg.key = builder->String("callsite");
  arg.type = ChunkArg::Type::kString;
  arg.value = builder->String(it->second);
  span->AddArg(arg);
}

// The record's `extra` as an integer arg, if it is in range: a call time
// within the span, sent bytes within its bytes. Out of range (a probe
// writing nonsense) it is left out; the span itself is still good.
void ProbeSession::AddExtra(BatchBuilder* builder, const ProbeRecord& r,
                            int64_t wall_start, int64_t dur,
                            const NodeTimeMap& time, SpanColumns* span) {
  ChunkArg arg;
  if (r.flags & ProbeRecord::kExtraCallTime) {
    if (r.extra < 0 || r.extra > r.dur_ns) return;
    arg.key = builder->String("call_ns");
    const bool in_ticks = (r.flags & ProbeRecord::kTicks) != 0;
    // Mapped as the span's ends are, so within them: the map is monotone.
    arg.value =
        Minus(time.ToWallNs(Plus(r.start_ns, r.extra), in_ticks), wall_start);
    arg.value = std::clamp<int64_t>(arg.value, 0, dur);
  } else if (r.flags & ProbeRecord::kExtraSendBytes) {
    if (r.extra < 0 || r.extra > r.bytes) return;
    arg.key = builder->String("send_bytes");
    arg.value = r.extra;
  } else {
    return;
  }
  span->AddArg(arg);
}

// A Sendrecv's receive (kRecvPeer) as the "recv_peer" and "recv_tag" integer
// args (query/ops/mpi_args.h), if both are ranks and tags can be (>= 0).
void ProbeSession::AddReceive(BatchBuilder* builder, const ProbeRecord& r,
                              SpanColumns* span) {
  const auto source = static_cast<int32_t>(static_cast<uint32_t>(r.seq));
  const auto tag = static_cast<int32_t>(static_cast<uint32_t>(r.seq >> 32));
  if (source < 0 || tag < 0) return;
  ChunkArg arg;
  arg.key = builder->String("recv_peer");
  arg.value = source;
  span->AddArg(arg);
  arg.key = builder->String("recv_tag");
  arg.value = tag;
  span->AddArg(arg);
}

void ProbeSession::Invalid(uint64_t record, const std::string& problem) {
  if (invalid_++ == 0) {
    first_invalid_ = absl::StrCat("record ", record, ": ", problem);
  }
}

void ProbeSession::Commit() {
  for (uint32_t ring = 0; ring < readers_.size(); ++ring) {
    if (readers_[ring] == nullptr) continue;
    readers_[ring]->Commit();
    Committed(ring, readers_[ring]->position());
  }
}

void ProbeSession::CommitTo(uint32_t ring, uint64_t end) {
  if (ring < readers_.size() && readers_[ring] != nullptr) {
    readers_[ring]->CommitTo(end);
    Committed(ring, std::min(end, readers_[ring]->position()));
  }
}

uint64_t ProbeSession::ReleaseOver(uint64_t max_held) {
  uint64_t released = 0;
  for (uint32_t ring = 0; ring < readers_.size(); ++ring) {
    SpanRingReader* reader = readers_[ring].get();
    if (reader == nullptr) continue;
    const uint64_t tail = reader->committed();
    if (reader->published() - tail <= max_held || reader->position() <= tail) {
      continue;
    }
    released += reader->position() - tail;
    reader->Commit();
    Committed(ring, reader->position());
  }
  return released;
}

void ProbeSession::Positions(std::vector<RingPosition>* out) const {
  for (uint32_t i = 0; i < readers_.size(); ++i) {
    if (readers_[i] != nullptr) {
      out->push_back({layout_.incarnation, i, readers_[i]->position()});
    }
  }
}

uint64_t ProbeSession::dropped() const {
  uint64_t total =
      header()->events_without_ring.load(std::memory_order_relaxed);
  for (const auto& reader : readers_) {
    if (reader != nullptr) total += reader->dropped();
  }
  return total;
}

void ProbeSession::RequestTrace(uint32_t steps, uint32_t seconds) {
  if (seconds > 0) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    header()->record_until_ns.store(
        ts.tv_sec * 1000000000LL + ts.tv_nsec + seconds * 1000000000LL,
        std::memory_order_relaxed);
  }
  if (steps > 0) {
    header()->trace_steps.store(steps, std::memory_order_relaxed);
    header()->trace_generation.fetch_add(1, std::memory_order_release);
  }
}

}  // namespace meridian
