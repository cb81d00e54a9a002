#include "testing/fake_capture_abi.h"

#include <mutex>

#include "capture/probe/capture_sink.h"

namespace meridian {
namespace fake_capture {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_names;
std::vector<ProbeRecord> g_records;
int64_t g_now = 0;
int64_t g_tick = 0;

}  // namespace

std::vector<ProbeRecord> Records() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_records;
}

void Clear() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_records.clear();
}

std::string NameOf(uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return id == 0 || id > g_names.size() ? "" : g_names[id - 1];
}

void SetClock(int64_t now_ns, int64_t tick_ns) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_now = now_ns;
  g_tick = tick_ns;
}

}  // namespace fake_capture
}  // namespace meridian

namespace fake = meridian::fake_capture;

extern "C" {

int meridian_capture_recording(void) { return 1; }

uint32_t meridian_capture_name(const char* name) {
  std::lock_guard<std::mutex> lock(fake::g_mutex);
  for (size_t i = 0; i < fake::g_names.size(); ++i) {
    if (fake::g_names[i] == name) return static_cast<uint32_t>(i + 1);
  }
  fake::g_names.push_back(name);
  return static_cast<uint32_t>(fake::g_names.size());
}

void meridian_capture_emit(const meridian::ProbeRecord* record, int) {
  std::lock_guard<std::mutex> lock(fake::g_mutex);
  fake::g_records.push_back(*record);
}

int64_t meridian_capture_now_ns(void) {
  std::lock_guard<std::mutex> lock(fake::g_mutex);
  return fake::g_now += fake::g_tick;
}

int meridian_capture_step(int64_t*) { return 0; }

}  // extern "C"
