#include "query/export/perfetto_trace.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "query/export/testdata/perfetto_subset.pb.h"

namespace meridian {
namespace {

namespace pb = perfetto_subset;

constexpr int64_t kT = 1700000000000000000;
constexpr uint32_t kSeq = PerfettoTraceWriter::kSequenceId;

// Fails on fields the subset does not know (a wrong number or wire type).
void ExpectNoUnknownFields(const google::protobuf::Message& m) {
  const google::protobuf::Reflection* r = m.GetReflection();
  EXPECT_EQ(r->GetUnknownFields(m).field_count(), 0) << m.GetTypeName();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      continue;
    }
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        ExpectNoUnknownFields(r->GetRepeatedMessage(m, f, i));
      }
    } else {
      ExpectNoUnknownFields(r->GetMessage(m, f));
    }
  }
}

pb::Trace Parse(const std::string& bytes) {
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  ExpectNoUnknownFields(trace);
  return trace;
}

// The trace as a reader sees it: interned strings resolved, each checked to
// be defined (once, iids from 1) in the packet that first uses it.
class Reader {
 public:
  explicit Reader(const pb::Trace& trace) {
    for (int i = 0; i < trace.packet_size(); ++i) {
      packet_ = i;
      const pb::TracePacket& p = trace.packet(i);
      const pb::InternedData& d = p.interned_data();
      for (const auto& e : d.event_names()) Define(&names_, e.iid(), e.name());
      for (const auto& e : d.event_categories()) {
        Define(&categories_, e.iid(), e.name());
      }
      for (const auto& e : d.debug_annotation_names()) {
        Define(&keys_, e.iid(), e.name());
      }
      const pb::TrackEvent& e = p.track_event();
      if (e.has_name_iid()) Use(names_, e.name_iid(), i);
      for (uint64_t c : e.category_iids()) Use(categories_, c, i);
      for (const auto& a : e.debug_annotations()) {
        if (a.has_name_iid()) Use(keys_, a.name_iid(), i);
      }
    }
  }

  std::string Name(const pb::TrackEvent& e) const {
    return e.has_name() ? e.name() : names_.at(e.name_iid()).name;
  }
  std::string Category(const pb::TrackEvent& e) const {
    std::string out;
    for (uint64_t c : e.category_iids()) out += categories_.at(c).name;
    return out;
  }
  // "key=value" per annotation, in order.
  std::vector<std::string> Annotations(const pb::TrackEvent& e) const {
    std::vector<std::string> out;
    for (const pb::DebugAnnotation& a : e.debug_annotations()) {
      std::string s = a.has_name() ? a.name() : keys_.at(a.name_iid()).name;
      s += "=";
      if (a.has_int_value()) s += "i" + std::to_string(a.int_value());
      if (a.has_uint_value()) s += "u" + std::to_string(a.uint_value());
      if (a.has_pointer_value()) s += "p" + std::to_string(a.pointer_value());
      if (a.has_string_value()) s += "s" + a.string_value();
      if (a.has_double_value()) s += "d" + std::to_string(a.double_value());
      out.push_back(s);
    }
    return out;
  }

 private:
  struct Entry {
    std::string name;
    int packet;  // where defined
    bool used = false;
  };
  using Table = std::map<uint64_t, Entry>;
  void Define(Table* table, uint64_t iid, const std::string& name) {
    EXPECT_EQ(iid, table->size() + 1) << name;  // from 1, in order, once
    (*table)[iid] = {name, packet_};
  }
  void Use(Table& table, uint64_t iid, int packet) {
    auto it = table.find(iid);
    ASSERT_NE(it, table.end()) << "iid " << iid << " used undefined";
    if (!it->second.used) {
      EXPECT_EQ(it->second.packet, packet) << it->second.name;
      it->second.used = true;
    }
  }
  Table names_, categories_, keys_;
  int packet_ = 0;  // being read
};

// One slice as Perfetto rebuilds it: the packets sorted by timestamp (a
// stable sort, as trace_processor's), each SLICE_END closing the innermost
// open slice of its track.
struct Slice {
  std::string name;
  uint64_t track;
  int64_t start;
  int64_t end;
  bool operator<(const Slice& o) const {
    return std::tie(start, name, track, end) <
           std::tie(o.start, o.name, o.track, o.end);
  }
};

std::vector<Slice> Rebuild(const pb::Trace& trace, const Reader& reader) {
  std::vector<const pb::TracePacket*> events;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.has_track_event()) events.push_back(&p);
  }
  std::stable_sort(events.begin(), events.end(), [](auto* a, auto* b) {
    return a->timestamp() < b->timestamp();
  });
  std::map<uint64_t, std::vector<Slice>> open;
  std::vector<Slice> out;
  for (const pb::TracePacket* p : events) {
    const pb::TrackEvent& e = p->track_event();
    const int64_t ts = static_cast<int64_t>(p->timestamp());
    std::vector<Slice>& stack = open[e.track_uuid()];
    if (e.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      stack.push_back({reader.Name(e), e.track_uuid(), ts, -1});
    } else if (e.type() == pb::TrackEvent::TYPE_SLICE_END) {
      EXPECT_FALSE(stack.empty()) << "END at " << ts << " on an empty track";
      if (stack.empty()) continue;
      out.push_back(stack.back());
      out.back().end = ts;
      stack.pop_back();
    }
  }
  for (const auto& [uuid, stack] : open) {
    EXPECT_TRUE(stack.empty()) << "track " << uuid << " left open";
  }
  std::sort(out.begin(), out.end());
  return out;
}

JobCatalog Catalog() {
  JobCatalog catalog;
  catalog.job.id = 1;
  catalog.job.name = "job";
  catalog.job.min_start_ns = kT;
  catalog.processes = {{1, "h0", 0, 0, 100}, {2, "h1", 1, 0, 101}};
  catalog.tracks = {{1, 1, v1::TRACK_KIND_THREAD, 55, "main"},
                    {2, 1, v1::TRACK_KIND_GPU_STREAM, 7, ""},
                    {3, 2, v1::TRACK_KIND_THREAD, 56, "main"}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_CUDA_KERNEL, "k"},
                 {3, v1::CATEGORY_USER, "loss"},
                 {4, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"},
                 {5, v1::CATEGORY_USER, "f"},
                 {6, v1::CATEGORY_MPI, "MPI_Isend"},
                 {7, v1::CATEGORY_MPI, "MPI_Send"},
                 {8, v1::CATEGORY_MPI, "MPI_Recv"},
                 {9, v1::CATEGORY_NVTX, "mark"}};
  return catalog;
}

StoredSpan Span(int64_t track, int64_t op, int64_t start, int64_t dur) {
  StoredSpan s;
  s.track_id = track;
  s.op_id = op;
  s.start_ns = kT + start;
  s.dur_ns = dur;
  return s;
}

// Writes `spans` through a writer over Catalog(), whole-job selection.
struct Export {
  explicit Export(size_t chunk_bytes = 64 * 1024) : catalog(Catalog()) {
    v1::SpanFilter filter;
    auto made = SpanSelection::Make(catalog, filter);
    EXPECT_TRUE(made.ok());
    selection = *made;
    writer = std::make_unique<PerfettoTraceWriter>(
        catalog, selection,
        [this](absl::string_view data) {
          chunks.emplace_back(data.data(), data.size());
          out.append(data.data(), data.size());
          return true;
        },
        chunk_bytes);
  }
  JobCatalog catalog;
  SpanSelection selection;
  std::unique_ptr<PerfettoTraceWriter> writer;
  std::string out;
  std::vector<std::string> chunks;
};

TEST(PerfettoTraceTest, WritesDescriptorsThenEventsWithExactFields) {
  Export x(/*chunk_bytes=*/1);
  PerfettoTraceWriter& writer = *x.writer;
  writer.Begin();
  StoredSpan mpi = Span(3, 1, 1500, 2001);
  mpi.bytes = 8;
  mpi.comm = 0xabc;
  mpi.comm_size = 2;
  mpi.seq = 4;
  mpi.step = 1;
  writer.Add(mpi);
  StoredSpan launch = Span(1, 4, 1900, 50);
  launch.correlation = 0x10;
  writer.Add(launch);
  StoredSpan kernel = Span(2, 2, 2000, 5);
  kernel.correlation = 0x10;
  StoredArg grid;
  grid.key = "grid";
  grid.type = StoredArg::Type::kString;
  grid.str = "[1,1,1]";
  kernel.args.push_back(grid);
  // Its times on the merged axis, not the stored ones.
  writer.Add(kernel, kT + 2001, 4);
  StoredSpan loss = Span(1, 3, 3000, 0);
  loss.kind = v1::SPAN_KIND_COUNTER;
  loss.value = 0.5;
  writer.Add(loss);
  ASSERT_TRUE(writer.End());
  EXPECT_EQ(writer.events(), 4);

  // Every piece is whole packets: a trace of its own.
  EXPECT_EQ(x.chunks.size(), 8u);  // Begin, one per span, one per lane
  for (const std::string& chunk : x.chunks) Parse(chunk);

  const pb::Trace trace = Parse(x.out);
  const Reader reader(trace);
  ASSERT_EQ(trace.packet_size(), 14);
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    EXPECT_EQ(p.trusted_packet_sequence_id(), kSeq);
    EXPECT_EQ(p.sequence_flags(), i == 0 ? 3u : 2u);
    EXPECT_FALSE(p.has_timestamp_clock_id());  // BOOTTIME, the default
    EXPECT_TRUE(p.has_timestamp());
  }

  const pb::TracePacket& clock = trace.packet(0);
  EXPECT_TRUE(clock.first_packet_on_sequence());
  EXPECT_EQ(clock.timestamp(), static_cast<uint64_t>(kT));
  ASSERT_EQ(clock.clock_snapshot().clocks_size(), 2);
  EXPECT_EQ(clock.clock_snapshot().clocks(0).clock_id(), 6u);
  EXPECT_EQ(clock.clock_snapshot().clocks(0).timestamp(),
            static_cast<uint64_t>(kT));
  EXPECT_EQ(clock.clock_snapshot().clocks(1).clock_id(), 1u);
  EXPECT_EQ(clock.clock_snapshot().clocks(1).timestamp(),
            static_cast<uint64_t>(kT));
  EXPECT_EQ(clock.clock_snapshot().primary_trace_clock(), 6u);

  // Processes, then their tracks.
  const pb::TrackDescriptor& rank0 = trace.packet(1).track_descriptor();
  EXPECT_EQ(rank0.uuid(), 1u);
  EXPECT_FALSE(rank0.has_parent_uuid());
  EXPECT_EQ(rank0.process().pid(), 1);
  EXPECT_EQ(rank0.process().process_name(), "rank 0 (h0)");
  EXPECT_EQ(rank0.child_ordering(), pb::TrackDescriptor::EXPLICIT);
  const pb::TrackDescriptor& rank1 = trace.packet(2).track_descriptor();
  EXPECT_EQ(rank1.uuid(), 2u);
  EXPECT_EQ(rank1.process().pid(), 2);
  EXPECT_EQ(rank1.process().process_name(), "rank 1 (h1)");
  const pb::TrackDescriptor& main0 = trace.packet(3).track_descriptor();
  EXPECT_EQ(main0.uuid(), 3u);
  EXPECT_EQ(main0.parent_uuid(), 1u);
  EXPECT_EQ(main0.thread().pid(), 1);
  EXPECT_EQ(main0.thread().tid(), 55);
  EXPECT_EQ(main0.thread().thread_name(), "main");
  EXPECT_EQ(main0.sibling_order_rank(), 1);
  const pb::TrackDescriptor& stream = trace.packet(4).track_descriptor();
  EXPECT_EQ(stream.uuid(), 4u);
  EXPECT_EQ(stream.parent_uuid(), 1u);
  EXPECT_FALSE(stream.has_thread());
  EXPECT_EQ(stream.name(), "stream 7");
  EXPECT_EQ(stream.sibling_order_rank(), 1000002);
  const pb::TrackDescriptor& main1 = trace.packet(5).track_descriptor();
  EXPECT_EQ(main1.uuid(), 5u);
  EXPECT_EQ(main1.parent_uuid(), 2u);
  EXPECT_EQ(main1.thread().pid(), 2);
  EXPECT_EQ(main1.thread().tid(), 56);

  // The MPI call: names and keys interned in its packet.
  const pb::TracePacket& p6 = trace.packet(6);
  EXPECT_EQ(p6.timestamp(), static_cast<uint64_t>(kT + 1500));
  EXPECT_EQ(p6.interned_data().event_names_size(), 1);
  EXPECT_EQ(p6.interned_data().event_categories_size(), 1);
  EXPECT_EQ(p6.interned_data().debug_annotation_names_size(), 5);
  const pb::TrackEvent& e6 = p6.track_event();
  EXPECT_EQ(e6.type(), pb::TrackEvent::TYPE_SLICE_BEGIN);
  EXPECT_EQ(e6.track_uuid(), 5u);
  EXPECT_EQ(e6.name_iid(), 1u);
  EXPECT_EQ(reader.Name(e6), "MPI_Allreduce");
  EXPECT_EQ(reader.Category(e6), "mpi");
  EXPECT_EQ(reader.Annotations(e6),
            (std::vector<std::string>{"bytes=i8", "comm=p2748", "comm_size=u2",
                                      "seq=u4", "step=i1"}));
  ASSERT_EQ(e6.flow_ids_size(), 1);
  EXPECT_EQ(e6.flow_ids(0), PerfettoTraceWriter::CollectiveFlowId(0xabc, 4));

  // The launch and its kernel share a flow id.
  const pb::TrackEvent& e7 = trace.packet(7).track_event();
  EXPECT_EQ(trace.packet(7).timestamp(), static_cast<uint64_t>(kT + 1900));
  EXPECT_EQ(e7.track_uuid(), 3u);
  EXPECT_EQ(reader.Name(e7), "cudaLaunchKernel");
  EXPECT_EQ(reader.Category(e7), "cuda_runtime");
  EXPECT_EQ(reader.Annotations(e7),
            (std::vector<std::string>{"correlation=p16"}));
  ASSERT_EQ(e7.flow_ids_size(), 1);
  EXPECT_EQ(e7.flow_ids(0), PerfettoTraceWriter::LaunchFlowId(1, 0x10));
  EXPECT_EQ(e7.terminating_flow_ids_size(), 0);
  const pb::TrackEvent& e8 = trace.packet(8).track_event();
  EXPECT_EQ(trace.packet(8).timestamp(), static_cast<uint64_t>(kT + 2001));
  EXPECT_EQ(e8.track_uuid(), 4u);
  EXPECT_EQ(e8.name_iid(), 3u);
  EXPECT_EQ(reader.Name(e8), "k");
  EXPECT_EQ(reader.Category(e8), "cuda_kernel");
  EXPECT_EQ(reader.Annotations(e8),
            (std::vector<std::string>{"correlation=p16", "grid=s[1,1,1]"}));
  ASSERT_EQ(e8.flow_ids_size(), 1);
  EXPECT_EQ(e8.flow_ids(0), e7.flow_ids(0));

  // The counter's track is described when first used.
  const pb::TracePacket& p9 = trace.packet(9);
  EXPECT_EQ(p9.timestamp(), static_cast<uint64_t>(kT + 3000));
  EXPECT_EQ(p9.track_descriptor().uuid(), 6u);
  EXPECT_EQ(p9.track_descriptor().parent_uuid(), 1u);
  EXPECT_EQ(p9.track_descriptor().name(), "loss");
  EXPECT_TRUE(p9.track_descriptor().has_counter());
  EXPECT_EQ(p9.track_descriptor().sibling_order_rank(), 3000001);
  const pb::TrackEvent& e10 = trace.packet(10).track_event();
  EXPECT_EQ(e10.type(), pb::TrackEvent::TYPE_COUNTER);
  EXPECT_EQ(e10.track_uuid(), 6u);
  EXPECT_EQ(e10.double_counter_value(), 0.5);
  EXPECT_FALSE(e10.has_name_iid());

  // End closes what is open, track by track.
  const std::vector<std::pair<uint64_t, int64_t>> ends = {
      {3, kT + 1950}, {4, kT + 2005}, {5, kT + 3501}};
  for (int i = 0; i < 3; ++i) {
    const pb::TracePacket& p = trace.packet(11 + i);
    EXPECT_EQ(p.track_event().type(), pb::TrackEvent::TYPE_SLICE_END);
    EXPECT_EQ(p.track_event().track_uuid(), ends[i].first);
    EXPECT_EQ(p.timestamp(), static_cast<uint64_t>(ends[i].second));
    EXPECT_FALSE(p.has_interned_data());
  }
}

TEST(PerfettoTraceTest, OverlappingSpansGoToLanesAndKeepEveryStackConsistent) {
  Export x;
  PerfettoTraceWriter& writer = *x.writer;
  writer.Begin();
  writer.Add(Span(1, 5, 0, 100), kT, 100);  // A
  StoredSpan b = Span(1, 5, 10, 10);        // B inside A
  writer.Add(b);
  writer.Add(Span(1, 5, 50, 100));   // C: ends after A, does not nest
  writer.Add(Span(1, 5, 50, 20));    // inside A and C: the first lane
  writer.Add(Span(1, 5, 120, 10));   // D: A has ended
  writer.Add(Span(1, 5, 110, 5));    // out of order (a clock correction)
  writer.Add(Span(1, 6, 200, 100));  // MPI_Isend: nonblocking, lane 1
  writer.Add(Span(1, 5, 210, 10));   // inside nothing: lane 0
  writer.Add(Span(1, 5, 300, 0));    // zero length, at the Isend's end
  StoredSpan mark = Span(1, 9, 100, 0);
  mark.kind = v1::SPAN_KIND_INSTANT;  // instants never move to a lane
  writer.Add(mark);
  ASSERT_TRUE(writer.End());
  EXPECT_EQ(writer.events(), 10);

  const pb::Trace trace = Parse(x.out);
  const Reader reader(trace);
  // Lane 1 of "main" (uuid 3) is described once, as its child.
  std::vector<const pb::TrackDescriptor*> lanes;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.has_track_descriptor() && p.track_descriptor().parent_uuid() == 3) {
      lanes.push_back(&p.track_descriptor());
    }
  }
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(lanes[0]->uuid(), 6u);
  EXPECT_EQ(lanes[0]->name(), "main (lane 1)");
  EXPECT_EQ(lanes[0]->sibling_order_rank(), 1);

  const std::vector<Slice> slices = Rebuild(trace, reader);
  const std::vector<Slice> want = {
      {"f", 3, kT, kT + 100},        // A
      {"f", 3, kT + 10, kT + 20},    // B
      {"f", 6, kT + 50, kT + 150},   // C
      {"f", 3, kT + 50, kT + 70},    // inside A
      {"f", 6, kT + 110, kT + 115},  // late, inside C
      {"f", 3, kT + 120, kT + 130},  // D
      {"MPI_Isend", 6, kT + 200, kT + 300},
      {"f", 3, kT + 210, kT + 220},
      {"f", 3, kT + 300, kT + 300},
  };
  ASSERT_EQ(slices.size(), want.size());
  std::vector<Slice> sorted_want = want;
  std::sort(sorted_want.begin(), sorted_want.end());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(slices[i].name, sorted_want[i].name);
    EXPECT_EQ(slices[i].track, sorted_want[i].track);
    EXPECT_EQ(slices[i].start, sorted_want[i].start);
    EXPECT_EQ(slices[i].end, sorted_want[i].end);
  }
  // The instant sits on the thread itself.
  int instants = 0;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.track_event().type() != pb::TrackEvent::TYPE_INSTANT) continue;
    ++instants;
    EXPECT_EQ(p.track_event().track_uuid(), 3u);
    EXPECT_EQ(reader.Name(p.track_event()), "mark");
    EXPECT_EQ(reader.Category(p.track_event()), "nvtx");
  }
  EXPECT_EQ(instants, 1);
}

// 100 spans that all overlap and none nests in another ([i, 1000 + i)):
// the first 64 get a lane each, the other 36 become instants on the thread,
// and nothing is lost.
TEST(PerfettoTraceTest, OverlappingSpansBeyondTheLaneCapBecomeInstants) {
  Export x;
  PerfettoTraceWriter& writer = *x.writer;
  writer.Begin();
  for (int i = 0; i < 100; ++i) writer.Add(Span(1, 5, i, 1000));
  ASSERT_TRUE(writer.End());
  EXPECT_EQ(writer.events(), 100);
  EXPECT_EQ(writer.spans_as_instants(), 100 - 64);
  const pb::Trace trace = Parse(x.out);
  const Reader reader(trace);
  EXPECT_EQ(Rebuild(trace, reader).size(), 64u);
  int instants = 0;
  for (const pb::TracePacket& p : trace.packet()) {
    if (p.track_event().type() != pb::TrackEvent::TYPE_INSTANT) continue;
    ++instants;
    EXPECT_EQ(p.track_event().track_uuid(), 3u);
  }
  EXPECT_EQ(instants, 36);
}

TEST(PerfettoTraceTest, LinksMatchedMessagesAndCollectiveMembers) {
  for (bool messages : {true, false}) {
    SCOPED_TRACE(messages);
    Export x;
    PerfettoTraceWriter& writer = *x.writer;
    writer.set_message_flows(messages);
    writer.Begin();
    auto p2p = [](int64_t track, int64_t op, int64_t start, int32_t peer) {
      StoredSpan s = Span(track, op, start, 10);
      s.comm = 7;
      s.peer = peer;
      s.tag = 5;
      return s;
    };
    // Rank 1 posts its first receive before rank 0 sends.
    writer.Add(p2p(3, 8, 0, 0));   // rank 1 receive #0 from 0
    writer.Add(p2p(1, 7, 20, 1));  // rank 0 send #0 to 1
    writer.Add(p2p(1, 7, 40, 1));  // rank 0 send #1 to 1
    writer.Add(p2p(3, 8, 45, 0));  // rank 1 receive #1 from 0
    StoredSpan other = p2p(3, 8, 60, 0);
    other.tag = 6;  // another channel: nothing to match
    writer.Add(other);
    for (int64_t track : {1, 3}) {
      StoredSpan all = Span(track, 1, 100 + track, 10);
      all.comm = 7;
      all.comm_size = 2;
      all.seq = 1;
      writer.Add(all);
    }
    ASSERT_TRUE(writer.End());

    const pb::Trace trace = Parse(x.out);
    std::vector<std::vector<uint64_t>> flows;
    for (const pb::TracePacket& p : trace.packet()) {
      if (p.track_event().type() != pb::TrackEvent::TYPE_SLICE_BEGIN) continue;
      flows.emplace_back(p.track_event().flow_ids().begin(),
                         p.track_event().flow_ids().end());
    }
    ASSERT_EQ(flows.size(), 7u);
    const uint64_t m0 = PerfettoTraceWriter::MessageFlowId(7, 0, 1, 5, 0);
    const uint64_t m1 = PerfettoTraceWriter::MessageFlowId(7, 0, 1, 5, 1);
    const uint64_t c = PerfettoTraceWriter::CollectiveFlowId(7, 1);
    EXPECT_NE(m0, m1);
    using V = std::vector<uint64_t>;
    EXPECT_EQ(flows[0], messages ? V{m0} : V{});
    EXPECT_EQ(flows[1], messages ? V{m0} : V{});
    EXPECT_EQ(flows[2], messages ? V{m1} : V{});
    EXPECT_EQ(flows[3], messages ? V{m1} : V{});
    EXPECT_EQ(
        flows[4],
        messages ? V{PerfettoTraceWriter::MessageFlowId(7, 0, 1, 6, 0)} : V{});
    EXPECT_EQ(flows[5], V{c});
    EXPECT_EQ(flows[6], V{c});
  }
}

TEST(PerfettoTraceTest, ShowsTheCriticalPathAsItsOwnProcess) {
  Export x;
  PerfettoTraceWriter& writer = *x.writer;
  writer.Begin();
  v1::CriticalPathReply path;
  v1::PathSegment* s = path.add_segments();
  s->set_rank(1);
  s->set_time_class(v1::TIME_CLASS_COMMUNICATION);
  s->set_category(v1::CATEGORY_MPI);
  s->set_name("MPI_Recv");
  s->set_start_ns(kT);
  s->set_dur_ns(10);
  s->set_peer(0);
  s = path.add_segments();
  s->set_rank(0);
  s->set_time_class(v1::TIME_CLASS_UNTRACED);
  s->set_start_ns(kT + 10);
  s->set_dur_ns(5);
  writer.AddCriticalPath(path);
  ASSERT_TRUE(writer.End());
  EXPECT_EQ(writer.events(), 2);

  const pb::Trace trace = Parse(x.out);
  const Reader reader(trace);
  // After the two ranks (uuids 1, 2) and their three tracks (3 to 5).
  const pb::TrackDescriptor& process = trace.packet(6).track_descriptor();
  EXPECT_EQ(process.uuid(), 6u);
  EXPECT_EQ(process.process().pid(), PerfettoTraceWriter::kCriticalPathPid);
  EXPECT_EQ(process.process().process_name(), "critical path");
  const pb::TrackDescriptor& track = trace.packet(7).track_descriptor();
  EXPECT_EQ(track.uuid(), 7u);
  EXPECT_EQ(track.parent_uuid(), 6u);
  EXPECT_EQ(track.name(), "critical path");

  const pb::TrackEvent& first = trace.packet(8).track_event();
  EXPECT_EQ(first.track_uuid(), 7u);
  EXPECT_EQ(first.name(), "rank 1: MPI_Recv");
  EXPECT_EQ(reader.Category(first), "critical_path");
  EXPECT_EQ(reader.Annotations(first),
            (std::vector<std::string>{"rank=i1", "class=scommunication",
                                      "category=smpi", "peer=i0"}));
  const std::vector<Slice> slices = Rebuild(trace, reader);
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].name, "rank 1: MPI_Recv");
  EXPECT_EQ(slices[0].end, kT + 10);
  EXPECT_EQ(slices[1].name, "rank 0: (untraced)");
  EXPECT_EQ(slices[1].start, kT + 10);
  EXPECT_EQ(slices[1].end, kT + 15);
}

TEST(PerfettoTraceTest, OmitsUnselectedRanksAndStopsWhenTheSinkDoes) {
  JobCatalog catalog = Catalog();
  v1::SpanFilter filter;
  filter.add_ranks(1);
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  std::string out;
  PerfettoTraceWriter writer(catalog, *selection, [&](absl::string_view data) {
    out.append(data.data(), data.size());
    return false;  // the reader went away after the first piece
  });
  writer.Begin();
  const pb::Trace trace = Parse(out);
  ASSERT_EQ(trace.packet_size(), 3);  // the clock, rank 1, its thread
  EXPECT_EQ(trace.packet(1).track_descriptor().process().process_name(),
            "rank 1 (h1)");
  EXPECT_EQ(trace.packet(2).track_descriptor().thread().tid(), 56);
  EXPECT_FALSE(writer.ok());
  writer.Add(Span(3, 5, 0, 10));
  EXPECT_EQ(writer.events(), 0);
  EXPECT_FALSE(writer.End());
  EXPECT_EQ(out.size(), trace.ByteSizeLong());  // nothing after the stop
}

}  // namespace
}  // namespace meridian
