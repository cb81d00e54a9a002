// How `meridian health` prints a job's health (docs/health.md), and the
// collector's --on-stall hook reads it: text for
// people, or one JSON object a line (--json; with --watch, one a poll).
// JSON names are the ones docs/health.md lists and scripts use: "job",
// "state", "stalled_for_ns", "stall_after_ns", "stalls" (each "kind",
// "comm" as a hex string, "seq", "op", "waiting_ranks", "suspect_ranks",
// "ranks"), "ranks" (each "rank", "node", "pid", "tid", "in", "in_for_ns",
// "category", "comm", "seq" where the call has one, "bytes", "peer" and
// "tag" where known, "phase", "idle_ns", "sampled_ago_ns", "stack",
// "python_stack", and "stack_error" where a stack could not be read) and
// "slowdowns".
#ifndef MERIDIAN_QUERY_HEALTH_REPORT_H_
#define MERIDIAN_QUERY_HEALTH_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string HealthJson(const v1::HealthReply& reply);
std::string HealthText(const v1::HealthReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_HEALTH_REPORT_H_
