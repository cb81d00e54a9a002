#include "abi/span_ring.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// 64-byte aligned memory for a ring, as mmap gives it.
struct Memory {
  explicit Memory(uint64_t capacity) : bytes(SpanRingBytes(capacity)) {
    data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  ~Memory() { std::free(data); }
  size_t bytes;
  void* data;
};

ProbeRecord Record(int64_t i) {
  ProbeRecord r{};
  r.start_ns = i;
  r.dur_ns = 2 * i;
  r.name = static_cast<uint32_t>(i % 7);
  return r;
}

TEST(SpanRingTest, DeliversRecordsInOrder) {
  Memory memory(8);
  ASSERT_TRUE(InitSpanRing(memory.data, 8));
  SpanRingWriter writer(memory.data, memory.bytes);
  SpanRingReader reader(memory.data, memory.bytes);
  ASSERT_TRUE(writer.valid() && reader.valid());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer.Push(Record(i)));
  ProbeRecord out[16];
  ASSERT_EQ(reader.Drain(out, 3), 3u);
  EXPECT_EQ(out[2].start_ns, 2);
  ASSERT_EQ(reader.Drain(out, 16), 2u);
  EXPECT_EQ(out[0].start_ns, 3);
  EXPECT_EQ(out[1].dur_ns, 8);
  EXPECT_EQ(reader.Drain(out, 16), 0u);
}

// The agent's pattern: read, make it durable, then commit. A reader that
// dies before committing leaves the records to the next reader.
TEST(SpanRingTest, UncommittedReadsAreReadAgainByTheNextReader) {
  Memory memory(4);
  ASSERT_TRUE(InitSpanRing(memory.data, 4));
  SpanRingWriter writer(memory.data, memory.bytes);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(writer.Push(Record(i)));
  ProbeRecord out[4];
  {
    SpanRingReader reader(memory.data, memory.bytes);
    ASSERT_EQ(reader.Read(out, 2), 2u);
    reader.Commit();
    ASSERT_EQ(reader.Read(out, 4), 2u);  // never committed
    EXPECT_EQ(reader.position(), 4u);
    EXPECT_TRUE(writer.Push(Record(4)));  // into a committed slot
    EXPECT_TRUE(writer.Push(Record(5)));
    EXPECT_FALSE(writer.Push(Record(6)));  // slots of 2 and 3 are still held
  }
  SpanRingReader next(memory.data, memory.bytes);
  EXPECT_EQ(next.position(), 2u);
  ASSERT_EQ(next.Read(out, 4), 4u);
  EXPECT_EQ(out[0].start_ns, 2);
  EXPECT_EQ(out[1].start_ns, 3);
  EXPECT_EQ(out[3].start_ns, 5);
}

TEST(SpanRingTest, PublishedIsWhatTheProducerPushed) {
  Memory memory(8);
  ASSERT_TRUE(InitSpanRing(memory.data, 8));
  SpanRingWriter writer(memory.data, memory.bytes);
  SpanRingReader reader(memory.data, memory.bytes);
  EXPECT_EQ(reader.published(), 0u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer.Push(Record(i)));
  EXPECT_EQ(reader.published(), 5u);
  EXPECT_EQ(reader.position(), 0u);
}

// The worked example of the header: capacity 4.
TEST(SpanRingTest, AFullRingDropsAndCountsInsteadOfBlocking) {
  Memory memory(4);
  ASSERT_TRUE(InitSpanRing(memory.data, 4));
  SpanRingWriter writer(memory.data, memory.bytes);
  SpanRingReader reader(memory.data, memory.bytes);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(writer.Push(Record(i)));
  EXPECT_FALSE(writer.Push(Record(4)));
  EXPECT_EQ(reader.dropped(), 1u);
  ProbeRecord out[4];
  ASSERT_EQ(reader.Drain(out, 3), 3u);
  EXPECT_TRUE(writer.Push(Record(5)));
  EXPECT_TRUE(writer.Push(Record(6)));
  EXPECT_TRUE(writer.Push(Record(7)));
  EXPECT_FALSE(writer.Push(Record(8)));
  EXPECT_EQ(reader.dropped(), 2u);
  ASSERT_EQ(reader.Drain(out, 4), 4u);
  EXPECT_EQ(out[0].start_ns, 3);
  EXPECT_EQ(out[3].start_ns, 7);
}

// The producer learns when to wake the consumer: once per half lap, only
// if the ring really is half full; and how much room is left.
TEST(SpanRingTest, ReachedHalfOncePerHalfLapAndRoomCountsFreeSlots) {
  Memory memory(8);
  ASSERT_TRUE(InitSpanRing(memory.data, 8));
  SpanRingWriter writer(memory.data, memory.bytes);
  SpanRingReader reader(memory.data, memory.bytes);
  EXPECT_EQ(writer.Room(), 8u);
  std::vector<bool> reached;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(writer.Push(Record(i)));
    reached.push_back(writer.ReachedHalf());
  }
  EXPECT_EQ(reached,
            (std::vector<bool>{false, false, false, true, false, false}));
  EXPECT_EQ(writer.Room(), 2u);
  ProbeRecord out[8];
  ASSERT_EQ(reader.Drain(out, 8), 6u);
  EXPECT_EQ(writer.Room(), 8u);
  // Tail now 6: half again after 4 more pushes (head 10).
  reached.clear();
  for (int i = 6; i < 10; ++i) {
    ASSERT_TRUE(writer.Push(Record(i)));
    reached.push_back(writer.ReachedHalf());
  }
  EXPECT_EQ(reached, (std::vector<bool>{false, false, false, true}));
  // A stale view that looks half full but was read meanwhile: no wake.
  ASSERT_EQ(reader.Drain(out, 8), 4u);
  Memory other(8);
  ASSERT_TRUE(InitSpanRing(other.data, 8));
  SpanRingWriter w2(other.data, other.bytes);
  SpanRingReader r2(other.data, other.bytes);
  ASSERT_TRUE(w2.Push(Record(0)) && w2.Push(Record(1)) && w2.Push(Record(2)));
  ASSERT_EQ(r2.Drain(out, 8), 3u);
  ASSERT_TRUE(w2.Push(Record(3)));
  EXPECT_FALSE(w2.ReachedHalf());  // 4 pushed, but 3 of them read
}

TEST(SpanRingTest, RefusesMemoryThatIsNotARing) {
  Memory memory(8);
  EXPECT_FALSE(InitSpanRing(memory.data, 6));  // not a power of two
  ASSERT_TRUE(InitSpanRing(memory.data, 8));
  EXPECT_FALSE(SpanRingWriter(memory.data, SpanRingBytes(4)).valid());
  EXPECT_FALSE(SpanRingReader(nullptr, 0).valid());
  static_cast<RingHeader*>(memory.data)->magic = 1;
  EXPECT_FALSE(SpanRingReader(memory.data, memory.bytes).valid());
}

TEST(SpanRingTest, ACorruptHeadNeverReadsPastTheRing) {
  Memory memory(4);
  ASSERT_TRUE(InitSpanRing(memory.data, 4));
  SpanRingReader reader(memory.data, memory.bytes);
  static_cast<RingHeader*>(memory.data)->head.store(1000);
  ProbeRecord out[16];
  EXPECT_EQ(reader.Drain(out, 16), 4u);
}

TEST(SpanRingTest, ConcurrentProducerAndConsumerLoseNothingUncounted) {
  constexpr int64_t kRecords = 2000000;
  Memory memory(1024);
  ASSERT_TRUE(InitSpanRing(memory.data, 1024));
  SpanRingReader reader(memory.data, memory.bytes);
  int64_t pushed = 0;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    SpanRingWriter writer(memory.data, memory.bytes);
    for (int64_t i = 0; i < kRecords; ++i) pushed += writer.Push(Record(i));
    done.store(true, std::memory_order_release);
  });
  std::vector<ProbeRecord> out(256);
  int64_t received = 0, last = -1;
  bool ordered = true;
  while (true) {
    bool finished = done.load(std::memory_order_acquire);
    size_t n;
    while ((n = reader.Drain(out.data(), out.size())) > 0) {
      for (size_t i = 0; i < n; ++i) {
        ordered &=
            out[i].start_ns > last && out[i].dur_ns == 2 * out[i].start_ns;
        last = out[i].start_ns;
      }
      received += n;
    }
    if (finished) break;
  }
  producer.join();
  EXPECT_TRUE(ordered);
  EXPECT_EQ(received, pushed);
  EXPECT_EQ(received + static_cast<int64_t>(reader.dropped()), kRecords);
}

TEST(SpanRingTest, RecordsOfAKilledProducerProcessAreDrained) {
  const uint64_t capacity = 64;
  const size_t bytes = SpanRingBytes(capacity);
  int fd = memfd_create("meridian-ring-test", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, bytes), 0);
  void* memory =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(memory, MAP_FAILED);
  ASSERT_TRUE(InitSpanRing(memory, capacity));
  pid_t child = fork();
  if (child == 0) {
    void* mine =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    SpanRingWriter writer(mine, bytes);
    for (int i = 0; i < 10; ++i) writer.Push(Record(i));
    raise(SIGKILL);  // no cleanup, no flush
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  SpanRingReader reader(memory, bytes);
  ProbeRecord out[64];
  ASSERT_EQ(reader.Drain(out, 64), 10u);
  EXPECT_EQ(out[9].start_ns, 9);
  munmap(memory, bytes);
  close(fd);
}

}  // namespace
}  // namespace meridian
