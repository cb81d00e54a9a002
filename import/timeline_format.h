// DetectTimelineFormat: which training framework wrote a JSON timeline,
// from its first bytes (meridian import reads the first few KB and picks
// the reader; the Chrome reader takes every other JSON trace).
//
// Fingerprints, white space aside:
//   "byteps"   an event with "pid":"Comm.<tensor>" (BytePS's comm.json);
//   "horovod"  an array holding Horovod's epoch header
//              (start_time_since_epoch_in_micros), or records written as
//              Horovod writes them ({"name":"process_name","ph":"M",...
//              first) with one of its phases (NEGOTIATE_*, CYCLE_START);
//              no "tid" anywhere (Horovod never writes one);
//   "bluefog"  the same writer's records (Bluefog's timeline is Horovod's,
//              grown) with a "tid" and one of Bluefog's phases
//              (ENQUEUE_*, PROC_*, COMMUNICATE).
// A name-first metadata record alone is not enough: other tools write
// that order too.
// A head cut in the middle of a record is fine: fingerprints are looked
// for, never parsed.
#ifndef MERIDIAN_IMPORT_TIMELINE_FORMAT_H_
#define MERIDIAN_IMPORT_TIMELINE_FORMAT_H_

#include <string>
#include <string_view>

namespace meridian {

// "horovod", "byteps", "bluefog", or "" for none of them.
std::string DetectTimelineFormat(std::string_view head);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_TIMELINE_FORMAT_H_
