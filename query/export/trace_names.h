// How every trace export names and numbers a job's processes and tracks,
// so that a rank looks the same in the Chrome, Perfetto and Kineto files.
#ifndef MERIDIAN_QUERY_EXPORT_TRACE_NAMES_H_
#define MERIDIAN_QUERY_EXPORT_TRACE_NAMES_H_

#include <cstdint>
#include <string>

#include "store/store.h"

namespace meridian {

// Rank r is process id r + 1 (some viewers treat process id 0 specially);
// 1000000 + the stored process id when the rank is unknown.
int64_t TracePid(const ProcessInfo& process);

// "rank N (host)", or "pid P (host)" when the rank is unknown.
std::string TraceProcessName(const ProcessInfo& process);

// The track's stored name, else "thread N", "stream N" or "queue N" by its
// kind and external id.
std::string TraceTrackName(const TrackInfo& track);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_TRACE_NAMES_H_
