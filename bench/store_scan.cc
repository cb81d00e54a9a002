// store_scan STORE JOB: the store's own read rate, the figure `./bench/run.sh
// sql` sets the SQL tables' against: one Store::Scan of the whole job (the
// merge every query's read goes through), counting its spans and summing
// their raw durations. Prints one JSON line: spans, dur_ns, seconds.
#include <chrono>
#include <cstdio>
#include <string>

#include "store/store.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: store_scan STORE JOB\n");
    return 2;
  }
  meridian::StoreOptions options;
  options.read_only = true;
  auto store = meridian::Store::Open(argv[1], options);
  if (!store.ok()) {
    fprintf(stderr, "store_scan: %s\n", store.status().ToString().c_str());
    return 1;
  }
  const auto begin = std::chrono::steady_clock::now();
  auto catalog = (*store)->LoadCatalog(argv[2]);
  if (!catalog.ok()) {
    fprintf(stderr, "store_scan: %s\n", catalog.status().ToString().c_str());
    return 1;
  }
  int64_t spans = 0, dur = 0;
  absl::Status scanned = (*store)->Scan(catalog->job, meridian::ScanRange{},
                                        [&](const meridian::StoredSpan& span) {
                                          ++spans;
                                          dur += span.dur_ns;
                                          return true;
                                        });
  if (!scanned.ok()) {
    fprintf(stderr, "store_scan: %s\n", scanned.ToString().c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  printf("{\"spans\": %lld, \"dur_ns\": %lld, \"seconds\": %.3f}\n",
         static_cast<long long>(spans), static_cast<long long>(dur), seconds);
  return 0;
}
