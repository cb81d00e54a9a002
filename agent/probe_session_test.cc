#include "agent/probe_session.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// The batch's chunks as span messages, in ring record order (the order the
// probe recorded them), so tests can read them field by field. Also checks
// that every chunk's ring range holds its records.
v1::Batch Spans(v1::Batch batch) {
  struct Entry {
    uint64_t ring, record;
    v1::Span span;
  };
  std::vector<Entry> entries;
  for (const v1::SpanChunk& chunk : batch.chunks()) {
    SpanColumns c;
    EXPECT_TRUE(DecodeSpanChunk(chunk.data(), &c).ok());
    EXPECT_GT(chunk.ring(), 0u);
    const v1::RingRange& range = batch.rings(chunk.ring() - 1);
    for (size_t i = 0; i < c.size(); ++i) {
      EXPECT_GE(c.record[i], range.begin());
      EXPECT_LT(c.record[i], range.end());
      v1::Span span;
      span.set_track(chunk.track());
      span.set_category(static_cast<v1::Category>(c.category[i]));
      span.set_name(c.name[i]);
      span.set_start_ns(c.start_ns[i]);
      span.set_dur_ns(c.dur_ns[i]);
      span.set_kind(static_cast<v1::SpanKind>(c.kind[i]));
      span.set_bytes(c.bytes[i]);
      span.set_value(c.value[i]);
      span.set_comm(c.comm[i]);
      span.set_comm_size(c.comm_size[i]);
      span.set_correlation(c.correlation[i]);
      if (c.flags[i] & SpanColumns::kHasPeer) span.set_peer(c.peer[i]);
      if (c.flags[i] & SpanColumns::kHasTag) span.set_tag(c.tag[i]);
      if (c.flags[i] & SpanColumns::kHasSeq) span.set_seq(c.seq[i]);
      if (c.flags[i] & SpanColumns::kHasStep) span.set_step(c.step[i]);
      const uint32_t begin = i == 0 ? 0 : c.arg_end[i - 1];
      for (uint32_t a = begin; a < c.arg_end[i]; ++a) {
        v1::Arg* arg = span.add_args();
        arg->set_key(c.args[a].key);
        if (c.args[a].type == ChunkArg::Type::kString) {
          arg->set_str(static_cast<uint32_t>(c.args[a].value));
        } else {
          arg->set_int_(c.args[a].value);
        }
      }
      entries.push_back({range.ring(), c.record[i], std::move(span)});
    }
  }
  std::stable_sort(
      entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.ring, a.record) < std::tie(b.ring, b.record);
      });
  batch.clear_chunks();
  for (Entry& e : entries) *batch.add_spans() = std::move(e.span);
  return batch;
}

// A probe's region in a memfd, as the probe makes it.
struct FakeProbe {
  explicit FakeProbe(bool seal = true) {
    geometry.ring_capacity = 16;
    geometry.strings_capacity = 256;
    bytes = ProcessRegionBytes(geometry);
    fd = memfd_create("test-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_EQ(ftruncate(fd, bytes), 0);
    if (seal) {
      EXPECT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    }
    memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_TRUE(InitProcessRegion(memory, geometry, 1234));
    header = static_cast<ProcessRegionHeader*>(memory);
  }
  ~FakeProbe() {
    munmap(memory, bytes);
    close(fd);
  }
  SpanRingWriter Ring(uint32_t index, int32_t tid) {
    InitSpanRing(RingMemory(header, index), geometry.ring_capacity);
    header->slots[index].tid = tid;
    header->slots[index].tail_owner.store(tid);
    header->slots[index].state.store(kSlotOwned);
    return SpanRingWriter(RingMemory(header, index),
                          SpanRingBytes(geometry.ring_capacity));
  }
  ProbeHello Hello() const {
    ProbeHello hello;
    hello.pid = 77;
    hello.rank = 3;
    hello.region_bytes = bytes;
    strcpy(hello.job, "job-a");
    return hello;
  }
  ProcessRegionGeometry geometry;
  uint64_t bytes;
  int fd;
  void* memory;
  ProcessRegionHeader* header;
};

// The node's clock minus CLOCK_MONOTONIC in FakeTime: November 2023.
constexpr int64_t kWall = 1700000000000000000;

ProbeRecord Record(uint32_t name, int64_t start) {
  ProbeRecord r{};
  r.start_ns = start;
  r.dur_ns = 10;
  r.name = name;
  r.category = v1::CATEGORY_MPI;
  return r;
}

// Returns samples[0], samples[1], ... and then the last one again; more
// can be pushed to `samples` as the test goes.
std::function<TimeSample()> Replay(
    std::shared_ptr<std::vector<TimeSample>> samples) {
  auto next = std::make_shared<size_t>(0);
  return [samples, next] {
    const size_t i = std::min(*next, samples->size() - 1);
    *next = i + 1;
    return (*samples)[i];
  };
}

// Ticks of 2 ns: tick 0 is 100 ns, tick 1000 is 2100 ns (CLOCK_MONOTONIC);
// the node's clock is `wall_minus_monotonic` ahead of CLOCK_MONOTONIC.
NodeTimeMap FakeTime(int64_t wall_minus_monotonic) {
  return NodeTimeMap(Replay(std::make_shared<std::vector<TimeSample>>(
      std::vector<TimeSample>{{0, 100, 100 + wall_minus_monotonic, 50},
                              {1000, 2100, 2100 + wall_minus_monotonic, 50}})));
}

TEST(ProbeSessionTest, TurnsRecordsIntoSpansAndSkipsWhatTheCollectorRefuses) {
  FakeProbe probe;
  const uint32_t allreduce = AppendString(probe.header, "MPI_Allreduce", 13);
  const uint32_t loss = AppendString(probe.header, "loss", 4);
  SpanRingWriter main = probe.Ring(0, 77);
  ProbeRecord a = Record(allreduce, 1000);
  a.bytes = 8;
  a.seq = 4;
  a.peer = 2;
  a.flags = ProbeRecord::kHasSeq | ProbeRecord::kHasPeer;
  main.Push(a);
  main.Push(Record(999, 1100));  // a name that was never published
  ProbeRecord nan = Record(loss, 1200);
  nan.kind = v1::SPAN_KIND_COUNTER;
  nan.category = v1::CATEGORY_USER;
  const double bad = std::numeric_limits<double>::quiet_NaN();
  memcpy(&nan.bytes, &bad, sizeof(bad));
  main.Push(nan);
  ProbeRecord good = nan;
  const double half = 0.5;
  memcpy(&good.bytes, &half, sizeof(half));
  main.Push(good);
  ProbeRecord timed = Record(allreduce, 1500);  // in ticks
  timed.flags = ProbeRecord::kTicks;
  main.Push(timed);

  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "node-1");
  ASSERT_TRUE(session.ok()) << session.status();
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall + 5000), 100), 5u);
  EXPECT_EQ((*session)->invalid_records(), 2u);
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 3);
  EXPECT_EQ(batch.spans(2).start_ns(), kWall + 2100 + 500 * 2 + 5000);
  EXPECT_EQ(batch.spans(2).dur_ns(), 20);
  EXPECT_EQ(batch.strings(batch.spans(0).name()), "MPI_Allreduce");
  EXPECT_EQ(batch.spans(0).start_ns(), kWall + 6000);  // + wall - monotonic
  EXPECT_EQ(batch.spans(0).bytes(), 8);
  EXPECT_EQ(batch.spans(0).seq(), 4u);
  EXPECT_EQ(batch.spans(0).peer(), 2);
  EXPECT_FALSE(batch.spans(0).has_tag());
  EXPECT_EQ(batch.spans(1).value(), 0.5);
  ASSERT_EQ(batch.processes_size(), 1);
  EXPECT_EQ(batch.strings(batch.processes(0).job()), "job-a");
  EXPECT_EQ(batch.processes(0).rank(), 3);
  EXPECT_EQ(batch.strings(batch.tracks(0).name()), "main");

  std::vector<RingPosition> positions;
  (*session)->Positions(&positions);
  ASSERT_EQ(positions.size(), 1u);
  EXPECT_EQ(positions[0].incarnation, 1234u);
  EXPECT_EQ(positions[0].end, 5u);
}

TEST(ProbeSessionTest, GpuTracksAndArguments) {
  FakeProbe probe;
  const uint32_t kernel = AppendString(probe.header, "gemm", 4);
  const uint32_t stream = AppendString(probe.header, "GPU 0 stream 7", 14);
  const char kArgs[] = "grid=4,1,1;;smem=0;registers=32;bad;=x;dir=-12";
  const uint32_t args = AppendString(probe.header, kArgs, sizeof(kArgs) - 1);
  SpanRingWriter cupti = probe.Ring(0, 80);
  SpanRingWriter proxy = probe.Ring(1, 81);
  ProbeRecord a = Record(kernel, 1000);
  a.category = v1::CATEGORY_CUDA_KERNEL;
  a.queue = stream;
  a.flags = ProbeRecord::kGpuTrack;
  a.args = args;
  a.correlation = 42;
  cupti.Push(a);
  cupti.Push(a);
  proxy.Push(a);  // the same GPU track, from another thread's ring

  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "node-1");
  ASSERT_TRUE(session.ok()) << session.status();
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 3u);
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 3);
  ASSERT_EQ(batch.tracks_size(), 1);  // one track, from both rings
  EXPECT_EQ(batch.tracks(0).kind(), v1::TRACK_KIND_GPU_STREAM);
  EXPECT_EQ(batch.tracks(0).id(), stream);
  EXPECT_EQ(batch.strings(batch.tracks(0).name()), "GPU 0 stream 7");
  for (const v1::Span& span : batch.spans()) {
    EXPECT_EQ(span.track(), 0u);
    EXPECT_EQ(span.correlation(), 42u);
    ASSERT_EQ(span.args_size(), 4);
    EXPECT_EQ(batch.strings(span.args(0).key()), "grid");
    EXPECT_EQ(batch.strings(span.args(0).str()), "4,1,1");
    EXPECT_EQ(batch.strings(span.args(1).key()), "smem");
    EXPECT_EQ(span.args(1).int_(), 0);
    EXPECT_EQ(span.args(2).int_(), 32);
    EXPECT_EQ(batch.strings(span.args(3).key()), "dir");
    EXPECT_EQ(span.args(3).int_(), -12);
  }
}

// A non-blocking call's time inside its issuing call and a Sendrecv's sent
// bytes become integer args; values outside the span are left out, the
// span kept.
TEST(ProbeSessionTest, CallTimeAndSentBytesBecomeArgs) {
  FakeProbe probe;
  const uint32_t isend = AppendString(probe.header, "MPI_Isend", 9);
  SpanRingWriter main = probe.Ring(0, 77);
  ProbeRecord a = Record(isend, 1000);  // 10 ns, 4 of them in the call
  a.extra = 4;
  a.flags = ProbeRecord::kExtraCallTime;
  main.Push(a);
  ProbeRecord timed = Record(isend, 1500);  // ticks: 10 ticks, 3 in the call
  timed.extra = 3;
  timed.flags = ProbeRecord::kTicks | ProbeRecord::kExtraCallTime;
  main.Push(timed);
  ProbeRecord sendrecv = Record(isend, 1600);
  sendrecv.bytes = 24;
  sendrecv.extra = 12;
  sendrecv.flags = ProbeRecord::kExtraSendBytes;
  main.Push(sendrecv);
  ProbeRecord too_long = a;  // more time in the call than in the span
  too_long.extra = 11;
  main.Push(too_long);
  ProbeRecord too_many = sendrecv;
  too_many.extra = 25;
  main.Push(too_many);

  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "node-1");
  ASSERT_TRUE(session.ok()) << session.status();
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 5u);
  EXPECT_EQ((*session)->invalid_records(), 0u);
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 5);
  auto only_arg = [&batch](const v1::Span& span, const std::string& key) {
    EXPECT_EQ(span.args_size(), 1);
    if (span.args_size() != 1) return int64_t{-1};
    EXPECT_EQ(batch.strings(span.args(0).key()), key);
    return span.args(0).int_();
  };
  EXPECT_EQ(only_arg(batch.spans(0), "call_ns"), 4);
  EXPECT_EQ(batch.spans(1).dur_ns(), 20);             // 10 ticks of 2 ns
  EXPECT_EQ(only_arg(batch.spans(1), "call_ns"), 6);  // 3 ticks
  EXPECT_EQ(only_arg(batch.spans(2), "send_bytes"), 12);
  EXPECT_EQ(batch.spans(3).args_size(), 0);  // too_long
  EXPECT_EQ(batch.spans(4).args_size(), 0);  // too_many
}

TEST(ProbeSessionTest, ASendrecvsReceiveBecomesArgs) {
  FakeProbe probe;
  const uint32_t sendrecv = AppendString(probe.header, "MPI_Sendrecv", 12);
  SpanRingWriter main = probe.Ring(0, 77);
  ProbeRecord a = Record(sendrecv, 1000);
  a.peer = 1;
  a.tag = 7;
  a.seq = uint64_t{9} << 32 | 3;  // from rank 3, tag 9
  a.flags =
      ProbeRecord::kHasPeer | ProbeRecord::kHasTag | ProbeRecord::kRecvPeer;
  main.Push(a);
  ProbeRecord negative = a;  // a source or tag no MPI gives: no args
  negative.seq = uint64_t{9} << 32 | 0xffffffffu;
  main.Push(negative);
  ProbeRecord negative_tag = a;
  negative_tag.seq = uint64_t{0x80000000u} << 32 | 3;
  main.Push(negative_tag);
  ProbeRecord with_seq = a;  // a collective's seq is no receive
  with_seq.flags |= ProbeRecord::kHasSeq;
  main.Push(with_seq);

  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "node-1");
  ASSERT_TRUE(session.ok()) << session.status();
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 4u);
  EXPECT_EQ((*session)->invalid_records(), 0u);
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 4);
  const v1::Span& first = batch.spans(0);
  EXPECT_EQ(first.peer(), 1);
  EXPECT_EQ(first.tag(), 7);
  EXPECT_FALSE(first.has_seq());
  ASSERT_EQ(first.args_size(), 2);
  EXPECT_EQ(batch.strings(first.args(0).key()), "recv_peer");
  EXPECT_EQ(first.args(0).int_(), 3);
  EXPECT_EQ(batch.strings(first.args(1).key()), "recv_tag");
  EXPECT_EQ(first.args(1).int_(), 9);
  EXPECT_EQ(batch.spans(1).args_size(), 0);
  EXPECT_EQ(batch.spans(2).args_size(), 0);
  EXPECT_EQ(batch.spans(3).args_size(), 0);
  EXPECT_EQ(batch.spans(3).seq(), a.seq);
}

TEST(ProbeSessionTest, CallSitesBecomeNamedArgs) {
  FakeProbe probe;
  const uint32_t send = AppendString(probe.header, "MPI_Send", 8);
  // Call sites the symbolizer cannot read are named as recorded; what is no
  // call site (not a path, or no string) gives no arg.
  const uint32_t device = AppendString(probe.header, "/dev/zero+0x10", 14);
  const uint32_t garbage = AppendString(probe.header, "zero", 4);
  SpanRingWriter main = probe.Ring(0, 77);
  for (uint32_t callsite : {device, garbage, 9999u, device, 0u}) {
    ProbeRecord r = Record(send, 1000);
    r.callsite = callsite;
    if (callsite != 0) r.flags |= ProbeRecord::kHasCallsite;
    main.Push(r);
  }

  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "node-1");
  ASSERT_TRUE(session.ok()) << session.status();
  CallsiteSymbolizer symbolizer;
  (*session)->set_symbolizer(&symbolizer);
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 5u);
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 5);
  for (int i : {0, 3}) {
    const v1::Span& span = batch.spans(i);
    ASSERT_EQ(span.args_size(), 1);
    EXPECT_EQ(batch.strings(span.args(0).key()), "callsite");
    EXPECT_EQ(batch.strings(span.args(0).str()), "/dev/zero+0x10");
  }
  for (int i : {1, 2, 4}) EXPECT_EQ(batch.spans(i).args_size(), 0) << i;
  EXPECT_EQ((*session)->invalid_records(), 0u);  // the spans themselves stand

  // Without a symbolizer, call sites are left out.
  auto plain = ProbeSession::Open(probe.Hello(), dup(probe.fd), "node-1");
  ASSERT_TRUE(plain.ok()) << plain.status();
  BatchBuilder plain_builder("agent");
  ASSERT_EQ((*plain)->Read(&plain_builder, FakeTime(kWall), 100), 5u);
  v1::Batch plain_batch = Spans(plain_builder.Take());
  for (const v1::Span& span : plain_batch.spans()) {
    EXPECT_EQ(span.args_size(), 0);
  }
}

TEST(ProbeSessionTest, ANewSessionResumesAtTheCommitOrWhereTheSpoolSays) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "MPI_Send", 8);
  SpanRingWriter ring = probe.Ring(5, 80);
  for (int i = 0; i < 6; ++i) ring.Push(Record(name, 100 + i));
  BatchBuilder builder("agent");
  {
    auto first = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
    ASSERT_EQ((*first)->Read(&builder, FakeTime(kWall), 2), 2u);
    (*first)->Commit();
    ASSERT_EQ((*first)->Read(&builder, FakeTime(kWall), 2),
              2u);  // never committed
  }
  builder.Take();
  auto second = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  (*second)->SkipTo(5, 3);  // the spool holds records 0..2
  ASSERT_EQ((*second)->Read(&builder, FakeTime(kWall), 100), 3u);
  v1::Batch batch = Spans(builder.Take());
  EXPECT_EQ(batch.spans(0).start_ns(), kWall + 103);
  EXPECT_EQ(batch.strings(batch.tracks(0).name()), "thread 80");
  // A skip beyond what the process published, or behind the reader, is
  // ignored.
  ring.Push(Record(name, 106));
  ring.Push(Record(name, 107));
  (*second)->SkipTo(5, 20);
  (*second)->SkipTo(5, 1);
  ASSERT_EQ((*second)->Read(&builder, FakeTime(kWall), 100), 2u);
  std::vector<RingPosition> positions;
  (*second)->Positions(&positions);
  ASSERT_EQ(positions.size(), 1u);
  EXPECT_EQ(positions[0].end, 8u);
}

// A ring over a threshold of unreleased records gives up what was read
// (the agent holds it in memory) without waiting for the acknowledgement;
// below it, the slots stay taken. The fake's rings hold 16 records.
TEST(ProbeSessionTest, ARingOverItsThresholdReleasesWhatWasReadAtOnce) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "MPI_Allreduce", 13);
  SpanRingWriter ring = probe.Ring(2, 80);
  for (int i = 0; i < 6; ++i) ring.Push(Record(name, 100 + i));
  BatchBuilder builder("agent");
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  ASSERT_TRUE(session.ok());
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 4), 4u);
  // 6 records not released (4 read): at most 8 may wait, so none goes.
  EXPECT_EQ((*session)->ReleaseOver(8), 0u);
  EXPECT_EQ(ring.Room(), 10u);
  // Over 5: the 4 read are released, the 2 unread stay.
  EXPECT_EQ((*session)->ReleaseOver(5), 4u);
  EXPECT_EQ(ring.Room(), 14u);
  // Nothing read since: nothing more to release.
  EXPECT_EQ((*session)->ReleaseOver(0), 0u);
  // A later acknowledgement of the same records moves nothing back.
  (*session)->CommitTo(2, 3);
  EXPECT_EQ(ring.Room(), 14u);
  // A successor agent starts after what was released.
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 2u);
  builder.Take();
  auto successor = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  ASSERT_TRUE(successor.ok());
  ASSERT_EQ((*successor)->Read(&builder, FakeTime(kWall), 100), 2u);
  v1::Batch batch = Spans(builder.Take());
  EXPECT_EQ(batch.spans(0).start_ns(), kWall + 104);
}

// A ring handed from an exited thread to the next (process_region.h): the
// records after the owner record are the new thread's, also for an agent
// that starts at the committed tail or skips past the owner record.
ProbeRecord Owner(int32_t tid) {
  ProbeRecord r{};
  r.flags = ProbeRecord::kOwner;
  r.peer = tid;
  return r;
}

std::vector<std::string> TrackOfEachSpan(const v1::Batch& batch) {
  std::vector<std::string> names;
  for (const v1::Span& span : batch.spans()) {
    names.push_back(batch.strings(batch.tracks(span.track()).name()));
  }
  return names;
}

TEST(ProbeSessionTest,
     ARingHandedToAnotherThreadFilesItsRecordsUnderThatThread) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "work", 4);
  SpanRingWriter ring = probe.Ring(0, 80);
  ring.Push(Record(name, 100));
  ring.Push(Record(name, 101));
  ring.Push(Owner(81));  // thread 80 exited, 81 took the ring
  ring.Push(Record(name, 102));
  ring.Push(Owner(0));  // names no thread: counted, skipped
  ring.Push(Owner(82));
  ring.Push(Record(name, 103));
  BatchBuilder builder("agent");
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  ASSERT_TRUE(session.ok());
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 7u);
  EXPECT_EQ((*session)->invalid_records(), 1u);
  EXPECT_EQ((*session)->first_invalid(),
            "record 4: an owner record names no thread");
  v1::Batch batch = Spans(builder.Take());
  EXPECT_EQ(TrackOfEachSpan(batch),
            (std::vector<std::string>{"thread 80", "thread 80", "thread 81",
                                      "thread 82"}));
  for (const v1::Track& track : batch.tracks()) {
    EXPECT_EQ(track.kind(), v1::TRACK_KIND_THREAD);
  }
  EXPECT_EQ(batch.tracks_size(), 3);

  // Committed past the first owner record only: the tail's owner is 81.
  (*session)->CommitTo(0, 3);
  EXPECT_EQ(probe.header->slots[0].tail_owner.load(), 81);
}

TEST(ProbeSessionTest, ARestartedAgentKnowsTheOwnerAtTheTailAndPastASkip) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "work", 4);
  SpanRingWriter ring = probe.Ring(2, 80);
  ring.Push(Record(name, 100));
  ring.Push(Owner(81));
  ring.Push(Record(name, 101));
  ring.Push(Owner(82));
  ring.Push(Record(name, 102));
  ring.Push(Record(name, 103));
  BatchBuilder builder("agent");
  {
    auto first = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
    ASSERT_EQ((*first)->Read(&builder, FakeTime(kWall), 3), 3u);
    (*first)->Commit();  // records 0..2: the tail is 81's
    ASSERT_EQ((*first)->Read(&builder, FakeTime(kWall), 100), 3u);
  }
  builder.Take();
  EXPECT_EQ(probe.header->slots[2].tail_owner.load(), 81);
  {
    auto second = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
    ASSERT_EQ((*second)->Read(&builder, FakeTime(kWall), 1), 1u);  // owner
    ASSERT_EQ((*second)->Read(&builder, FakeTime(kWall), 100), 2u);
    EXPECT_EQ(TrackOfEachSpan(Spans(builder.Take())),
              (std::vector<std::string>{"thread 82", "thread 82"}));
  }
  // Another agent, whose spool says it holds records up to 5: the skip
  // passes the owner record at 3, so record 5 is 82's.
  auto third = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  (*third)->SkipTo(2, 5);
  ASSERT_EQ((*third)->Read(&builder, FakeTime(kWall), 100), 1u);
  v1::Batch batch = Spans(builder.Take());
  EXPECT_EQ(batch.spans(0).start_ns(), kWall + 103);
  EXPECT_EQ(TrackOfEachSpan(batch), (std::vector<std::string>{"thread 82"}));
  EXPECT_EQ(probe.header->slots[2].tail_owner.load(), 82);
}

// The agent forgets every declaration after each batch
// (BatchBuilder::ForgetDeclarations): a session declares its process and
// tracks again in the next.
TEST(ProbeSessionTest, DeclaresAgainInEachBatchOfAForgetfulBuilder) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "work", 4);
  SpanRingWriter ring = probe.Ring(0, 80);
  ring.Push(Record(name, 100));
  BatchBuilder builder("agent");
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 1u);
  builder.Take();
  builder.ForgetDeclarations();
  ring.Push(Record(name, 101));
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 1u);
  EXPECT_EQ(builder.declared(), 2u);  // the process and its thread
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.processes_size(), 1);
  EXPECT_EQ(batch.processes(0).pid(), 77);
  EXPECT_EQ(TrackOfEachSpan(batch), (std::vector<std::string>{"thread 80"}));
}

TEST(ProbeSessionTest, AnEndedProcessIsMarkedOnlyIfItWasEverSent) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "work", 4);
  SpanRingWriter ring = probe.Ring(0, 80);
  BatchBuilder builder("agent");
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  // Nothing read yet: the collector never heard of it, nothing to end.
  EXPECT_FALSE((*session)->MarkEnded(&builder));
  EXPECT_EQ(builder.processes(), 0u);
  ring.Push(Record(name, 100));
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 1u);
  v1::Batch first = builder.Take();
  ASSERT_EQ(first.processes_size(), 1);
  EXPECT_FALSE(first.processes(0).ended());
  EXPECT_EQ(first.processes(0).incarnation(), 1234u);
  // The agent forgets declarations between batches, and MPI_Init's rank
  // comes after the first spans: the end batch declares the process again,
  // as it is now, with no track and no span.
  builder.ForgetDeclarations();
  (*session)->SetIdentity(3, 1, 4);
  EXPECT_TRUE((*session)->MarkEnded(&builder));
  v1::Batch last = builder.Take();
  ASSERT_EQ(last.processes_size(), 1);
  EXPECT_TRUE(last.processes(0).ended());
  EXPECT_EQ(last.processes(0).pid(), 77);
  EXPECT_EQ(last.processes(0).rank(), 3);
  EXPECT_EQ(last.processes(0).incarnation(), 1234u);
  EXPECT_EQ(last.strings(last.processes(0).job()),
            first.strings(first.processes(0).job()));
  EXPECT_EQ(last.tracks_size(), 0);
  EXPECT_EQ(last.chunks_size(), 0);
}

TEST(ProbeSessionTest, RefusesMemoryThatIsNotARegion) {
  FakeProbe probe;
  ProbeHello hello = probe.Hello();
  hello.region_bytes = probe.bytes * 2;  // more than was sent
  auto too_big = ProbeSession::Open(hello, dup(probe.fd), "n");
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kInvalidArgument);
  probe.header->magic = 0;
  auto corrupt = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  EXPECT_EQ(corrupt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(corrupt.status().message().find("not a Meridian probe region"),
            std::string::npos);
  auto none = ProbeSession::Open(probe.Hello(), -1, "n");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

// The traced process is input: it may cut its memory or rewrite its header
// at any moment. Each attack below used to kill or crash the agent.
TEST(ProbeSessionTest, RefusesMemoryThatCouldShrinkUnderIt) {
  FakeProbe unsealed(/*seal=*/false);
  auto session = ProbeSession::Open(unsealed.Hello(), dup(unsealed.fd), "n");
  ASSERT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session.status().message(),
            "process 77 sent shared memory that is not a memfd sealed against "
            "shrinking (F_SEAL_SHRINK): refused, since it could be cut under "
            "the agent; is its probe older than this agent?");
  // A plain file has no seals at all.
  FILE* file = tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(ftruncate(fileno(file), unsealed.bytes), 0);
  auto from_file = ProbeSession::Open(unsealed.Hello(), dup(fileno(file)), "n");
  fclose(file);
  EXPECT_EQ(from_file.status().code(), absl::StatusCode::kInvalidArgument);

  // Sealed: the process cannot shrink it any more (before: SIGBUS).
  FakeProbe sealed;
  SpanRingWriter ring = sealed.Ring(0, 80);
  auto opened = ProbeSession::Open(sealed.Hello(), dup(sealed.fd), "n");
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(ftruncate(sealed.fd, 4096), -1);
  EXPECT_EQ(errno, EPERM);
  ASSERT_TRUE(ring.Push(Record(0, 5)));
  BatchBuilder builder("agent");
  EXPECT_EQ((*opened)->Read(&builder, FakeTime(kWall), 100), 1u);
}

TEST(ProbeSessionTest, AHeaderRewrittenAfterOpenMovesNothing) {
  FakeProbe probe;
  const uint32_t name = AppendString(probe.header, "step", 4);
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  ASSERT_TRUE(session.ok()) << session.status();
  // Laid out before the attack, where the region says.
  SpanRingWriter ring = probe.Ring(2, 80);
  ASSERT_TRUE(ring.Push(Record(name, 7)));
  // Then the geometry points far outside the mapping (before: SIGSEGV when
  // the agent opened the ring or looked the name up).
  probe.header->rings_offset = 1ULL << 60;
  probe.header->ring_stride = 1ULL << 50;
  probe.header->strings_offset = ~0ULL - 63;
  probe.header->strings_capacity = 1ULL << 40;
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 1u);
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 1);
  EXPECT_EQ(batch.strings(batch.spans(0).name()), "step");
  EXPECT_EQ(batch.spans(0).start_ns(), kWall + 7);
  EXPECT_EQ((*session)->ring_capacity(), 16u);
  // Published string ends past the area: the name is refused, not read.
  probe.header->strings_end.store(1ULL << 40);
  ASSERT_TRUE(ring.Push(Record(name, 8)));
  EXPECT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 1u);
  EXPECT_EQ((*session)->invalid_records(), 1u);
}

TEST(ProbeSessionTest, RefusesOffsetsThatWrapAround) {
  FakeProbe probe;
  // strings_offset + strings_capacity wraps to 64: it used to pass the
  // bounds check.
  probe.header->strings_offset = ~0ULL - 63;
  probe.header->strings_capacity = 128;
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  EXPECT_EQ(session.status().code(), absl::StatusCode::kInvalidArgument);
}

// The collector's rules, per record, in the agent: each bad record is
// dropped and counted, its neighbours go on; a name cut inside a character
// is repaired rather than making the batch unparseable.
TEST(ProbeSessionTest, DropsBadRecordsOneByOneAndRepairsNames) {
  FakeProbe probe;
  const uint32_t send = AppendString(probe.header, "MPI_Send", 8);
  const uint32_t cut = AppendString(probe.header, "all\xE2\x82", 5);
  SpanRingWriter ring = probe.Ring(0, 77);
  ProbeRecord negative = Record(send, 10);
  negative.bytes = -8;
  ring.Push(negative);
  ring.Push(Record(send, 20));
  ProbeRecord month = Record(send, 30);
  month.dur_ns = 31LL * 86400 * 1000000000;
  ring.Push(month);
  ring.Push(Record(0, 40));  // no name
  ring.Push(Record(cut, 50));
  auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
  ASSERT_TRUE(session.ok()) << session.status();
  BatchBuilder builder("agent");
  ASSERT_EQ((*session)->Read(&builder, FakeTime(kWall), 100), 5u);
  EXPECT_EQ((*session)->invalid_records(), 3u);
  EXPECT_EQ((*session)->first_invalid(), "record 0: bytes is -8; must be >= 0");
  v1::Batch batch = Spans(builder.Take());
  ASSERT_EQ(batch.spans_size(), 2);
  EXPECT_EQ(batch.strings(batch.spans(0).name()), "MPI_Send");
  EXPECT_EQ(batch.spans(0).start_ns(), kWall + 20);
  EXPECT_EQ(batch.strings(batch.spans(1).name()), "all\xEF\xBF\xBD");
  // Without a wall clock the times are 1970: every record is refused.
  ring.Push(Record(send, 60));
  EXPECT_EQ((*session)->Read(&builder, FakeTime(0), 100), 1u);
  EXPECT_EQ((*session)->invalid_records(), 4u);
}

// A step span is recorded at its end, so it is read drains after the calls
// inside it. Between those drains the node's clock is sampled 300 us off
// the map (either way). Mapped with each drain's own clock reading, as the
// agent once did, the step began 300 us after its first call (or the call
// ended 300 us after the phase that follows it began); through the one map
// the spans nest and follow each other exactly, in ticks and in
// CLOCK_MONOTONIC ns alike.
TEST(ProbeSessionTest, ASpanReadDrainsLaterStillEnclosesItsCalls) {
  constexpr int64_t kS = 1000000000;
  for (const bool ticks : {true, false}) {
    for (const int64_t off : {300000, -300000}) {
      SCOPED_TRACE(::testing::Message() << "ticks " << ticks << " off " << off);
      FakeProbe probe;
      const uint32_t step = AppendString(probe.header, "step", 4);
      const uint32_t send = AppendString(probe.header, "MPI_Send", 8);
      const uint32_t phase = AppendString(probe.header, "compute", 7);
      SpanRingWriter ring = probe.Ring(0, 77);
      // Ticks of 2 ns, tick 0 at monotonic 0; the node's clock kWall ahead.
      auto samples =
          std::make_shared<std::vector<TimeSample>>(std::vector<TimeSample>{
              {0, 0, kWall, 50}, {kS / 2, kS, kWall + kS, 50}});
      NodeTimeMap time(Replay(samples));
      // A record from monotonic `start` to `end`, in the probe's clock.
      auto at = [ticks](uint32_t name, int64_t start, int64_t end) {
        ProbeRecord r = Record(name, ticks ? start / 2 : start);
        r.dur_ns = ticks ? (end - start) / 2 : end - start;
        r.flags = ticks ? ProbeRecord::kTicks : 0;
        return r;
      };
      auto session = ProbeSession::Open(probe.Hello(), dup(probe.fd), "n");
      ASSERT_TRUE(session.ok()) << session.status();

      // Drain 1: the step's first call, 1.2 s to 1.2 s + 2 us.
      ring.Push(at(send, 1200000000, 1200002000));
      BatchBuilder builder("agent");
      ASSERT_EQ((*session)->Read(&builder, time, 100), 1u);
      const v1::Batch first = Spans(builder.Take());

      // Drain 2, after a sample at 2.5 s that reads the node's clock `off`
      // from the map: the phase that begins as the call ends, and the step
      // (from 2 us before the call to past the sample).
      samples->push_back(
          {5 * kS / 4, 5 * kS / 2, kWall + 5 * kS / 2 + off, 50});
      time.Update();
      ring.Push(at(phase, 1200002000, 1300000000));
      ring.Push(at(step, 1199998000, 2500001000));
      ASSERT_EQ((*session)->Read(&builder, time, 100), 2u);
      const v1::Batch second = Spans(builder.Take());

      const v1::Span& call = first.spans(0);
      const v1::Span& next = second.spans(0);
      const v1::Span& whole = second.spans(1);
      EXPECT_EQ(call.start_ns(), kWall + 1200000000);
      EXPECT_EQ(call.start_ns() + call.dur_ns(), kWall + 1200002000);
      EXPECT_EQ(next.start_ns(), kWall + 1200002000);  // as the call ends
      EXPECT_EQ(whole.start_ns(), kWall + 1199998000);
      // Past the sample, 1 us at 1 +- 150 ppm: the offset is slewed to.
      EXPECT_EQ(whole.start_ns() + whole.dur_ns(), kWall + 2500001000);
      EXPECT_LE(whole.start_ns(), call.start_ns());
      EXPECT_GE(whole.start_ns() + whole.dur_ns(),
                next.start_ns() + next.dur_ns());
    }
  }
}

}  // namespace
}  // namespace meridian
