// A stand-in for CUPTI's buffer completion
// (tests/mpi_capture_recording_test.cc): under `meridian run`, records ROUNDS
// bursts of CHUNK spans named "burst" through the capture ABI, waiting before
// each burst for room in its ring (CaptureSink::AwaitRoom) as capture/cupti's
// BufferCompleted does. With a ring of CHUNK records, every burst but the
// first fills it: only the waiting keeps them from being dropped. Exits 1 if
// a wait times out.
//
//   capture_burst_job ROUNDS CHUNK
#include <cstdio>
#include <cstdlib>

#include "capture/probe/capture_sink.h"
#include "proto/meridian/v1/span.pb.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int rounds = atoi(argv[1]);
  const int chunk = atoi(argv[2]);
  meridian::CaptureSink* sink = meridian::ProbeCaptureSink();
  if (sink == nullptr) {
    fprintf(stderr, "capture_burst_job: not under meridian run\n");
    return 2;
  }
  meridian::ProbeRecord record{};
  record.name = sink->Name("burst");
  record.category = meridian::v1::CATEGORY_USER;
  record.kind = meridian::v1::SPAN_KIND_COMPLETE;
  record.dur_ns = 1;
  for (int round = 0; round < rounds; ++round) {
    if (!sink->AwaitRoom(chunk, 30000)) {
      fprintf(stderr, "capture_burst_job: no room after 30 s\n");
      return 1;
    }
    for (int i = 0; i < chunk; ++i) {
      record.start_ns = sink->NowNs();
      sink->Emit(record, false);
    }
  }
  printf("capture_burst_job: %d spans\n", rounds * chunk);
  return 0;
}
