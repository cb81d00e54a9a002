// A program that starts and ends many threads over its life, as PyTorch's
// data loaders and thread pools do (tests/mpi_capture_recording_test.cc and,
// for full rings, tests/mpi_capture_agents_test.cc): under
// `meridian run`, THREADS threads, at most CONCURRENT alive at once, each
// record SPANS spans named "churn" (bytes = the thread's number, seq = the
// span's) through the capture ABI and exit. Then it prints one line per
// thread, "thread NUMBER TID", and "thread_churn_job: N spans".
//
//   thread_churn_job THREADS CONCURRENT SPANS
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "capture/probe/capture_sink.h"
#include "proto/meridian/v1/span.pb.h"

namespace {

struct Work {
  int number = 0;
  int spans = 0;
  pid_t tid = 0;
};

meridian::CaptureSink* g_sink = nullptr;
uint32_t g_name = 0;

void* Run(void* arg) {
  Work* work = static_cast<Work*>(arg);
  work->tid = gettid();
  meridian::ProbeRecord record{};
  record.name = g_name;
  record.category = meridian::v1::CATEGORY_USER;
  record.kind = meridian::v1::SPAN_KIND_COMPLETE;
  record.dur_ns = 1;
  record.bytes = work->number;
  record.flags = meridian::ProbeRecord::kHasSeq;
  for (int i = 0; i < work->spans; ++i) {
    record.start_ns = g_sink->NowNs();
    record.seq = static_cast<uint64_t>(i);
    g_sink->Emit(record, false);
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const int threads = atoi(argv[1]);
  const int concurrent = atoi(argv[2]);
  const int spans = atoi(argv[3]);
  if (threads <= 0 || concurrent <= 0 || spans <= 0) return 2;
  g_sink = meridian::ProbeCaptureSink();
  if (g_sink == nullptr) {
    fprintf(stderr, "thread_churn_job: not under meridian run\n");
    return 2;
  }
  g_name = g_sink->Name("churn");
  std::vector<Work> work(threads);
  for (int first = 0; first < threads; first += concurrent) {
    const int last = std::min(threads, first + concurrent);
    std::vector<pthread_t> wave;
    for (int n = first; n < last; ++n) {
      work[n].number = n;
      work[n].spans = spans;
      pthread_t thread;
      if (pthread_create(&thread, nullptr, Run, &work[n]) != 0) {
        fprintf(stderr, "thread_churn_job: pthread_create failed\n");
        return 1;
      }
      wave.push_back(thread);
    }
    for (pthread_t thread : wave) pthread_join(thread, nullptr);
  }
  for (const Work& w : work) printf("thread %d %d\n", w.number, w.tid);
  printf("thread_churn_job: %d spans\n", threads * spans);
  return 0;
}
