// How `meridian jobs` prints a v1::ListJobsReply: a table for people, or
// JSON (--json) for scripts.
//
// Text: one line per job; RANKS is the ranks seen, "seen/expected" where
// the launcher's world size is known, and a job with ranks missing ends
// with "incomplete":
//   JOB                       RANKS  NODES        SPANS  START (UTC) ...
//   train                       3/4      2         1200
//   2023-11-14T22:13:19.999Z ...  incomplete: 3 of 4 ranks seen
// JSON: {"jobs":[{"job":"train","ranks_seen":3,"world_size":4,
// "incomplete":true,"nodes":2,"spans":1200,"start_ns":...,"end_ns":...}]};
// world_size 0: not known.
#ifndef MERIDIAN_CLI_JOBS_REPORT_H_
#define MERIDIAN_CLI_JOBS_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string JobsText(const v1::ListJobsReply& reply);
std::string JobsJson(const v1::ListJobsReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_CLI_JOBS_REPORT_H_
