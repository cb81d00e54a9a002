#include "capture/probe/probe_runtime.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string_view>

#include "abi/agent_launch.h"
#include "abi/agent_protocol.h"
#include "abi/launch_env.h"
#include "abi/process_region.h"
#include "capture/probe/callsite.h"
#include "common/utf8.h"

namespace meridian {
namespace probe {

EventState g_event;
__thread SpanRingWriter* tls_writer = nullptr;
__thread InFlightCall* tls_in_flight = nullptr;
uint32_t g_name_cache[kNameSlots];

namespace {

// A thread without a ring: for good (tls_no_ring: no region could be made,
// or the thread is exiting), or while every ring is taken (tls_retry_ns
// set): until another thread gives one back (g_rings_released moves past
// tls_released_seen) or the time passes.
thread_local bool tls_no_ring = false;
thread_local int64_t tls_retry_ns = 0;  // 0: not waiting
thread_local uint64_t tls_released_seen = 0;
thread_local uint32_t tls_unrecorded = 0;
thread_local int tls_ring_releases = 0;  // ReleaseRing rounds at exit
std::atomic<uint64_t> g_rings_released{0};
// Gives a thread's ring back when the thread exits (ReleaseRing); its
// value is the ring's index + 1.
pthread_key_t g_ring_key;
bool g_ring_key_made = false;
void ReleaseRing(void* value);

// Everything below g_mutex is changed only with it held; the event path
// reads g_region (set once per process) and the step atomics.
std::mutex g_mutex;
ProcessRegionHeader* g_region = nullptr;
int g_memfd = -1;
int g_socket = -1;
bool g_watcher_started = false;
ProcessRegionGeometry g_geometry;
// Plain data only: LoadProbe may run before this file's C++ initializers.
char g_socket_path[108];
ProbeHello g_hello;  // identity as last known
// The agent to start if none answers (agent_launch.h), from the
// environment as the program started.
char g_agent_bin[4096];
char g_collector[256];
// Set once this process has started an agent: at exit it waits for it.
std::atomic<bool> g_started_agent{false};

// Names: open addressing over (hash32 << 32 | id); 0 is an empty slot.
constexpr uint32_t kNameTableSize = 4096;
std::atomic<uint64_t> g_names[kNameTableSize];

// Steps and windows.
std::atomic<int64_t> g_step_start_ns{0};
// Whether the open step was recorded from its beginning: a step a window
// (`meridian trace --seconds`) opened in, or closed in, is partial, and its
// "step" marker is not sent (so `meridian steps` leaves it out).
std::atomic<bool> g_step_recorded_from_start{false};
int64_t g_env_first_step = -1;  // MERIDIAN_START_STEP..MERIDIAN_END_STEP
int64_t g_env_last_step = -1;
// No step or on-demand window (record_always when not paused).
bool g_windowless = true;
std::atomic<bool> g_paused{false};  // by MPI_Pcontrol(0) (SetPcontrol)
std::atomic<int64_t> g_demand_first_step{-1};  // from `meridian trace`
std::atomic<int64_t> g_demand_last_step{-2};
uint64_t g_seen_generation = 0;

uint32_t Hash(const char* s, size_t n) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ static_cast<uint8_t>(s[i])) * 16777619u;
  }
  return h;
}

// Looks `name` up; 0 if absent.
uint32_t Find(const char* name, size_t n, uint32_t hash) {
  for (uint32_t i = 0; i < kNameTableSize; ++i) {
    const uint64_t entry =
        g_names[(hash + i) % kNameTableSize].load(std::memory_order_acquire);
    if (entry == 0) return 0;
    if (static_cast<uint32_t>(entry >> 32) != hash) continue;
    const char* data;
    uint32_t length;
    const uint32_t id = static_cast<uint32_t>(entry);
    if (StringAt(g_region, id, &data, &length) && length == n &&
        memcmp(data, name, n) == 0) {
      return id;
    }
  }
  return 0;
}

void SleepMs(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

// One line on stderr, in one write(2): the lines of ranks sharing a pipe
// do not interleave.
void Say(const std::string& text) {
  const std::string line = "meridian: " + text + "\n";
  (void)!write(2, line.data(), line.size());
}

// Connects to the agent and hands it the region. Called with g_mutex held.
bool ConnectLocked() {
  int fd = ConnectAgent(g_socket_path);
  if (fd < 0) {
    // Another user's socket where the agent should be: said once, and the
    // region is never handed to it.
    static bool warned = false;
    if (errno == EACCES && !warned) {
      warned = true;
      Say("not registering with " + std::string(g_socket_path) +
          ": it is served by another user (docs/security.md)");
    }
    return false;
  }
  if (!SendMessage(fd, &g_hello, sizeof(g_hello), g_memfd)) {
    close(fd);
    return false;
  }
  g_socket = fd;
  return true;
}

// An agent this process started when it found none (agent_launch.h): at
// most one try per process, and only before it ever reached an agent (an
// agent that goes away mid-job is restarted by whoever ran it, with its
// spool: docs/agent.md), said once on stderr.
class AgentStarter {
 public:
  // After a failed connection (`error`: its errno): starts an agent if none
  // listens on the socket, else reports how the one it started ended.
  void NotConnected(int error) {
    if (pid_ > 0) {
      Reap(false);
    } else if (!tried_ && !connected_ &&
               (error == ENOENT || error == ECONNREFUSED)) {
      tried_ = true;
      Start();
    }
  }
  // After a connection: says that the agent this process started serves.
  void Connected() {
    connected_ = true;
    if (pid_ > 0) Reap(true);
  }

 private:
  void Start() {
    const AgentLaunch launch{g_agent_bin, g_collector, g_socket_path};
    std::string error;
    pid_ = SpawnAgent(launch, ::environ, &error);
    if (pid_ < 0) {
      Say("no agent answers on " + launch.socket + " and none could be " +
          "started (" + error + "); this process's spans wait in its rings " +
          "until an agent serves that socket (docs/launchers.md)");
      return;
    }
    g_started_agent.store(true, std::memory_order_release);
    Say("no agent answers on " + launch.socket + ": starting " + launch.agent +
        " for collector " +
        (launch.collector.empty() ? "(its default)" : launch.collector) +
        "; its log: " + AgentLogPath(launch.socket));
  }
  // How the agent started here ended, if it did: exit 3 means that one
  // another process started serves, which is as good; anything else is
  // said. Once connected, a running one is left alone.
  void Reap(bool connected) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == 0) {
      if (connected) pid_ = 0;
      return;
    }
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == kAgentLostRace)) {
      Say("the agent this process started (" + std::string(g_agent_bin) +
          ") ended with status " + std::to_string(status) + "; see " +
          AgentLogPath(g_socket_path));
    }
    pid_ = 0;
  }

  bool tried_ = false;
  bool connected_ = false;
  pid_t pid_ = 0;
};

// Keeps the process registered with an agent: waits on the connection and,
// when the agent goes away, connects again (to its successor) with backoff.
void* WatchAgent(void*) {
  int backoff_ms = 20;
  AgentStarter starter;
  for (;;) {
    int fd;
    int error = 0;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_socket < 0 && !ConnectLocked()) {
        error = errno;
        fd = -1;
      } else {
        fd = g_socket;
      }
    }
    if (fd < 0) {
      starter.NotConnected(error);
      SleepMs(backoff_ms);
      if (backoff_ms < 1000) backoff_ms *= 2;
      continue;
    }
    starter.Connected();
    backoff_ms = 20;
    char buffer[64];
    while (ReceiveMessage(fd, buffer, sizeof(buffer), nullptr) > 0) {
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_socket == fd) {
      close(fd);
      g_socket = -1;
    }
  }
  return nullptr;
}

uint64_t Incarnation() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof(value), GRND_NONBLOCK) != sizeof(value)) {
    value = static_cast<uint64_t>(NowNs()) * 2654435761u ^ getpid();
  }
  return value | 1;
}

// Makes the region and starts registration. Called with g_mutex held.
bool EnsureRegionLocked() {
  if (g_region != nullptr) return true;
  if (!g_event.enabled) return false;
  const uint64_t bytes = ProcessRegionBytes(g_geometry);
  int fd = memfd_create("meridian-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return false;
  // Sealed at its size: the agent maps only a region that cannot shrink
  // under it (a read past the end would be SIGBUS in the agent).
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    close(fd);
    return false;
  }
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (memory == MAP_FAILED) {
    close(fd);
    return false;
  }
  if (!InitProcessRegion(memory, g_geometry, Incarnation())) {
    munmap(memory, bytes);
    close(fd);
    return false;
  }
  g_memfd = fd;
  g_hello.pid = getpid();
  g_hello.region_bytes = bytes;
  g_region = static_cast<ProcessRegionHeader*>(memory);
  ConnectLocked();  // the watcher retries if the agent is not there yet
  if (!g_watcher_started) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    g_watcher_started =
        pthread_create(&thread, &attr, WatchAgent, nullptr) == 0;
    pthread_attr_destroy(&attr);
  }
  return true;
}

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* value = getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  char* end;
  long long n = strtoll(value, &end, 10);
  return *end == '\0' ? n : fallback;
}

void ForkPrepare() { g_mutex.lock(); }
void ForkParent() { g_mutex.unlock(); }
// The child is a new process: it gets its own region and registration when
// it first records. The parent's region stays mapped but is never written.
void ForkChild() {
  if (g_socket >= 0) close(g_socket);
  if (g_memfd >= 0) close(g_memfd);
  g_socket = -1;
  g_memfd = -1;
  g_region = nullptr;
  g_watcher_started = false;
  for (auto& entry : g_names) entry.store(0, std::memory_order_relaxed);
  for (auto& id : g_name_cache) id = 0;
  tls_writer = nullptr;
  tls_in_flight = nullptr;
  tls_no_ring = false;
  tls_retry_ns = 0;
  // The forking thread's ring was in the parent's region.
  if (g_ring_key_made) pthread_setspecific(g_ring_key, nullptr);
  ResetCallsites();
  g_mutex.unlock();
}

// Whether the CPU's time-stamp counter runs at a constant rate in every
// power state and on every core (CPUID 0x80000007, EDX bit 8).
bool InvariantTsc() {
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000, &eax, &ebx, &ecx, &edx) || eax < 0x80000007) {
    return false;
  }
  __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

__attribute__((constructor)) void LoadProbe() {
  const char* socket = getenv("MERIDIAN_AGENT_SOCKET");
  if (socket == nullptr || *socket == '\0') return;
  CopyField(socket, g_socket_path, sizeof(g_socket_path));
  LaunchIdentity id = IdentityFromEnvironment();
  g_hello.rank = id.rank;
  g_hello.local_rank = id.local_rank;
  g_hello.world_size = id.world_size;
  CopyField(id.job.c_str(), g_hello.job, sizeof(g_hello.job));
  if (const char* agent = getenv("MERIDIAN_AGENT_BIN")) {
    CopyField(agent, g_agent_bin, sizeof(g_agent_bin));
  }
  if (const char* collector = getenv("MERIDIAN_COLLECTOR")) {
    CopyField(collector, g_collector, sizeof(g_collector));
  }
  const int64_t records = EnvInt("MERIDIAN_RING_RECORDS", 1 << 15);
  if (records >= 16 && records <= (1 << 24) && (records & (records - 1)) == 0) {
    g_geometry.ring_capacity = static_cast<uint64_t>(records);
  }
  g_env_first_step = EnvInt("MERIDIAN_START_STEP", -1);
  g_env_last_step = EnvInt("MERIDIAN_END_STEP", -1);
  if (g_env_first_step >= 0 && g_env_last_step < 0) {
    g_env_last_step = INT64_MAX;
  }
  if (g_env_last_step >= 0 && g_env_first_step < 0) g_env_first_step = 0;
  const char* mode = getenv("MERIDIAN_TRACE");
  const bool on_demand = mode != nullptr && strcmp(mode, "on-demand") == 0;
  g_windowless = g_env_first_step < 0 && !on_demand;
  const char* pcontrol = getenv("MERIDIAN_PCONTROL");
  g_paused.store(pcontrol != nullptr && strcmp(pcontrol, "windows") == 0,
                 std::memory_order_relaxed);
  g_event.record_always.store(g_windowless && !g_paused.load(),
                              std::memory_order_relaxed);
  const char* callsites = getenv("MERIDIAN_CALLSITES");
  g_event.callsites = callsites != nullptr && strcmp(callsites, "1") == 0;
  const char* clock = getenv("MERIDIAN_CLOCK");
  g_event.ticks = InvariantTsc() && !(clock && strcmp(clock, "monotonic") == 0);
  pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  g_ring_key_made = pthread_key_create(&g_ring_key, ReleaseRing) == 0;
  g_event.enabled = true;
}

// At exit, a process that is not connected (its agent restarting) tries
// once more, so that an agent which is up gets the region before the
// process's memory goes away.
//
// A process that started its node's agent itself (a short job on a node
// without one) gives that agent up to kStartedAgentWaitMs to come up: the
// process's spans are lost if no agent maps its region before it exits.
__attribute__((destructor)) void UnloadProbe() {
  if (!g_event.enabled) return;
  // Only a process that recorded something (it has a region) reports what
  // it used: mpirun and shells stay silent. Its ring may be full (a burst
  // just before exit): the agent, woken, gets up to a second to make room
  // rather than the counters being dropped.
  if (g_region != nullptr) {
    AwaitRoom(4, NowNs() + 1000000000);
    EmitResourceUse();
  }
  constexpr int kStartedAgentWaitMs = 5000;
  const bool started = g_started_agent.load(std::memory_order_acquire);
  for (int waited = 0;; waited += 10) {
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_region == nullptr || g_socket >= 0 || ConnectLocked()) return;
    }
    if (!started || waited >= kStartedAgentWaitMs) return;
    SleepMs(10);
  }
}

}  // namespace

bool RecordingInWindow() {
  if (g_paused.load(std::memory_order_relaxed)) return false;
  if (g_windowless) return true;
  const int64_t step = g_event.step.load(std::memory_order_relaxed);
  if (step >= g_env_first_step && step <= g_env_last_step &&
      g_env_first_step >= 0) {
    return true;
  }
  if (step >= g_demand_first_step.load(std::memory_order_relaxed) &&
      step <= g_demand_last_step.load(std::memory_order_relaxed)) {
    return true;
  }
  ProcessRegionHeader* region = g_region;
  if (region == nullptr) return false;
  // A clock read only while `meridian trace --seconds` asked for one.
  const int64_t until = region->record_until_ns.load(std::memory_order_relaxed);
  return until != 0 && NowNs() < until;
}

namespace {

// The ring whose thread exited with the most room, taken for this thread;
// -1 if none has room for the owner record, or, while unused rings are
// left, none is at least half empty (a new thread then records into a
// fresh ring rather than into the end of a full one). Called with g_mutex
// held.
int TakeRetiredRingLocked(SpanRingWriter** writer) {
  const uint32_t laid_out =
      std::min(g_region->claimed_rings.load(std::memory_order_relaxed),
               ProcessRegionHeader::kMaxRings);
  const size_t ring_bytes = SpanRingBytes(g_region->ring_capacity);
  int best = -1;
  uint64_t best_room = 0;
  for (uint32_t index = 0; index < laid_out; ++index) {
    if (g_region->slots[index].state.load(std::memory_order_acquire) !=
        kSlotRetired) {
      continue;
    }
    // The ring goes on where its last owner stopped: a new writer on the
    // same memory, never laid out again.
    SpanRingWriter probe(RingMemory(g_region, index), ring_bytes);
    if (probe.valid() && probe.Room() > best_room) {
      best = static_cast<int>(index);
      best_room = probe.Room();
    }
  }
  const bool unused_left = laid_out < ProcessRegionHeader::kMaxRings;
  if (best < 0 || (unused_left && best_room < g_region->ring_capacity / 2)) {
    return -1;
  }
  const uint32_t index = static_cast<uint32_t>(best);
  RingSlot& slot = g_region->slots[index];
  auto* taken = new (std::nothrow)
      SpanRingWriter(RingMemory(g_region, index), ring_bytes);
  if (taken == nullptr) return -1;
  const int32_t tid = static_cast<int32_t>(gettid());
  slot.tid = tid;
  slot.state.store(kSlotOwned, std::memory_order_release);
  // The owner record gets in: this thread is the ring's only producer now
  // and there was room.
  ProbeRecord owner{};
  owner.flags = ProbeRecord::kOwner;
  owner.peer = tid;
  taken->Push(owner);
  *writer = taken;
  return static_cast<int>(index);
}

// The next unused ring, laid out for this thread; -1 if every ring is
// taken. Called with g_mutex held.
int LayOutNewRingLocked(SpanRingWriter** writer) {
  const uint32_t index =
      g_region->claimed_rings.load(std::memory_order_relaxed);
  if (index >= ProcessRegionHeader::kMaxRings) return -1;
  g_region->claimed_rings.store(index + 1, std::memory_order_relaxed);
  void* memory = RingMemory(g_region, index);
  // Fault the ring's pages in now, once, rather than one page fault every
  // 46 records the first time round.
  const size_t ring_bytes = SpanRingBytes(g_region->ring_capacity);
  if (madvise(memory, ring_bytes, 23 /* MADV_POPULATE_WRITE */) != 0) {
    volatile char* page = static_cast<volatile char*>(memory);
    for (size_t at = 0; at < ring_bytes; at += 4096) page[at] = 0;
  }
  InitSpanRing(memory, g_region->ring_capacity);
  auto* laid_out = new (std::nothrow) SpanRingWriter(memory, ring_bytes);
  if (laid_out == nullptr || !laid_out->valid()) {
    delete laid_out;
    return -1;
  }
  const int32_t tid = static_cast<int32_t>(gettid());
  RingSlot& slot = g_region->slots[index];
  slot.tid = tid;
  slot.tail_owner.store(tid, std::memory_order_relaxed);
  slot.state.store(kSlotOwned, std::memory_order_release);
  *writer = laid_out;
  return static_cast<int>(index);
}

// pthread key destructor: the thread is exiting. Its records are all in the
// ring (pushed by this thread); the slot is marked retired after them
// (release), so the next owner's writer starts after them.
void ReleaseRing(void* value) {
  const uint32_t index =
      static_cast<uint32_t>(reinterpret_cast<uintptr_t>(value) - 1);
  // Later key destructors may still record (the MPI family library's ends
  // what it kept per thread): the thread takes a ring again and glibc runs
  // this destructor once more, up to PTHREAD_DESTRUCTOR_ITERATIONS (4)
  // rounds. From the third round on the thread records nothing, so that a
  // ring taken in the last round is not kept for good.
  if (++tls_ring_releases >= 3) tls_no_ring = true;
  SpanRingWriter* writer = tls_writer;
  tls_writer = nullptr;
  tls_in_flight = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_region != nullptr && index < ProcessRegionHeader::kMaxRings) {
    ClaimInFlight(&g_region->in_flight[index]);  // in nothing
    g_region->slots[index].state.store(kSlotRetired, std::memory_order_release);
  }
  delete writer;
  g_rings_released.fetch_add(1, std::memory_order_release);
}

}  // namespace

SpanRingWriter* ClaimRing() {
  if (!g_event.enabled) return nullptr;
  // A thread waiting for a ring tries again once another thread gave one
  // back, or, every 64th event, once 10 ms have passed (the agent may have
  // made room in a retired ring since).
  if (tls_no_ring ||
      (tls_retry_ns != 0 &&
       g_rings_released.load(std::memory_order_acquire) == tls_released_seen &&
       ((++tls_unrecorded & 63) != 0 || NowNs() < tls_retry_ns))) {
    if (g_region != nullptr) {
      g_region->events_without_ring.fetch_add(1, std::memory_order_relaxed);
    }
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!EnsureRegionLocked()) {
    tls_no_ring = true;
    return nullptr;
  }
  tls_released_seen = g_rings_released.load(std::memory_order_acquire);
  SpanRingWriter* writer = nullptr;
  int index = TakeRetiredRingLocked(&writer);
  if (index < 0) index = LayOutNewRingLocked(&writer);
  if (index < 0) {
    g_region->events_without_ring.fetch_add(1, std::memory_order_relaxed);
    tls_retry_ns = NowNs() + 10000000;
    return nullptr;
  }
  tls_retry_ns = 0;
  if (g_ring_key_made) {
    pthread_setspecific(
        g_ring_key, reinterpret_cast<void*>(static_cast<uintptr_t>(index) + 1));
  }
  tls_writer = writer;
  tls_in_flight = &g_region->in_flight[index];
  ClaimInFlight(tls_in_flight);
  return writer;
}

void WakeAgent() {
  std::unique_lock<std::mutex> lock(g_mutex, std::try_to_lock);
  if (!lock.owns_lock() || g_socket < 0) return;
  const DrainSoon message;
  (void)!send(g_socket, &message, sizeof(message), MSG_DONTWAIT | MSG_NOSIGNAL);
}

bool AwaitRoom(uint64_t records, int64_t deadline_ns) {
  SpanRingWriter* writer = tls_writer;
  if (writer == nullptr) writer = ClaimRing();
  if (writer == nullptr) return false;
  records = std::min(records, writer->capacity());
  // Waiting, this thread tells the agent so every 50 ms (a wake may be
  // lost, or come before the process is registered).
  for (int pauses = 0;; ++pauses) {
    if (writer->Room() >= records) return true;
    if (NowNs() >= deadline_ns) return false;
    if (pauses % 50 == 0) WakeAgent();
    const timespec pause = {0, 1000000};
    nanosleep(&pause, nullptr);
  }
}

uint32_t Intern(const char* name) {
  if (!g_event.enabled || name == nullptr) return 0;
  const size_t n = strlen(name);
  const uint32_t hash = Hash(name, n);
  if (g_region != nullptr) {
    if (uint32_t id = Find(name, n, hash)) return id;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!EnsureRegionLocked()) return 0;
  if (uint32_t id = Find(name, n, hash)) return id;
  // Long names are cut at 4 KiB, before a character rather than inside one.
  const uint32_t id = AppendString(
      g_region, name,
      static_cast<uint32_t>(Utf8Prefix(std::string_view(name, n), 4096)));
  if (id == 0) return 0;
  for (uint32_t i = 0; i < kNameTableSize; ++i) {
    std::atomic<uint64_t>& slot = g_names[(hash + i) % kNameTableSize];
    if (slot.load(std::memory_order_relaxed) == 0) {
      slot.store(static_cast<uint64_t>(hash) << 32 | id,
                 std::memory_order_release);
      break;
    }
  }
  return id;
}

uint32_t InternSlow(int slot, const char* name) {
  const uint32_t id = Intern(name);
  __atomic_store_n(&g_name_cache[slot], id, __ATOMIC_RELAXED);
  return id;
}

void SetWorldRank(int rank, int world_size) {
  if (!g_event.enabled) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  // The launcher's word comes first (launch_env.h); MPI's fills what it
  // left unknown.
  const bool changed = (g_hello.rank < 0 && rank >= 0) ||
                       (g_hello.world_size <= 0 && world_size > 0);
  const bool registered = g_region != nullptr;
  if (g_hello.rank < 0) g_hello.rank = rank;
  if (g_hello.world_size <= 0) g_hello.world_size = world_size;
  // A region made now is announced with the new rank in its hello; one the
  // agent already knows gets the rank in an identity message.
  if (!EnsureRegionLocked() || !changed || !registered || g_socket < 0) return;
  ProbeIdentity identity;
  identity.rank = g_hello.rank;
  identity.local_rank = g_hello.local_rank;
  identity.world_size = g_hello.world_size;
  SendMessage(g_socket, &identity, sizeof(identity), -1);
}

void SetPcontrol(int level) {
  if (!g_event.enabled) return;
  g_paused.store(level == 0, std::memory_order_relaxed);
  g_event.record_always.store(g_windowless && level != 0,
                              std::memory_order_relaxed);
}

void EmitResourceUse() {
  if (!g_event.enabled) return;
  struct rusage use;
  if (getrusage(RUSAGE_SELF, &use) != 0) return;
  auto ns = [](const timeval& t) {
    return static_cast<int64_t>(t.tv_sec) * 1000000000 +
           static_cast<int64_t>(t.tv_usec) * 1000;
  };
  // Linux reports ru_maxrss in KiB.
  const struct {
    int slot;
    const char* name;
    int64_t value;
  } counters[] = {
      {1, "rusage.user_ns", ns(use.ru_utime)},
      {2, "rusage.system_ns", ns(use.ru_stime)},
      {3, "rusage.max_rss_bytes", static_cast<int64_t>(use.ru_maxrss) * 1024},
      {4, "rusage.context_switches",
       static_cast<int64_t>(use.ru_nvcsw + use.ru_nivcsw)},
  };
  const int64_t now = Now();
  for (const auto& counter : counters) {
    ProbeRecord record{};
    record.start_ns = now;
    record.name = CachedName(counter.slot, counter.name);
    record.category = 1;  // v1::CATEGORY_MPI
    record.kind = 2;      // v1::SPAN_KIND_COUNTER
    record.flags = TimeFlags();
    const double value = static_cast<double>(counter.value);
    memcpy(&record.bytes, &value, sizeof(value));
    Emit(record);
  }
}

void StepBegin(int64_t step) {
  if (!g_event.enabled) return;
  g_event.step.store(step, std::memory_order_relaxed);
  g_event.in_step.store(true, std::memory_order_relaxed);
  g_step_start_ns.store(Now(), std::memory_order_relaxed);
  ProcessRegionHeader* region = g_region;
  if (region == nullptr && !g_windowless) {
    // On-demand tracing needs the agent to know this process already.
    std::lock_guard<std::mutex> lock(g_mutex);
    EnsureRegionLocked();
    region = g_region;
  }
  if (region != nullptr) {
    const uint64_t generation =
        region->trace_generation.load(std::memory_order_acquire);
    if (generation != g_seen_generation) {
      g_seen_generation = generation;
      const uint32_t steps =
          region->trace_steps.load(std::memory_order_relaxed);
      g_demand_last_step.store(step + static_cast<int64_t>(steps) - 1,
                               std::memory_order_relaxed);
      g_demand_first_step.store(step, std::memory_order_relaxed);
    }
  }
  g_step_recorded_from_start.store(Recording(), std::memory_order_relaxed);
}

void StepEnd() {
  if (!g_event.enabled || !g_event.in_step.load(std::memory_order_relaxed))
    return;
  const int64_t end = Now();
  if (Recording() &&
      g_step_recorded_from_start.load(std::memory_order_relaxed)) {
    ProbeRecord record{};
    record.start_ns = g_step_start_ns.load(std::memory_order_relaxed);
    record.dur_ns = end - record.start_ns;
    record.name = CachedName(0, "step");
    record.category = 9;  // v1::CATEGORY_USER
    record.flags = TimeFlags();
    StampStep(&record);
    Emit(record);
  }
  g_event.in_step.store(false, std::memory_order_relaxed);
}

}  // namespace probe
}  // namespace meridian
