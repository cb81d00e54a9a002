// How `meridian trace` (through the collector) prints the collector's
// v1::TraceReply to a trace order: as text, the total and each node that
// has processes of the job; as JSON (--json), every agent that answered:
//   {"job":"train","steps":5,"seconds":0,"processes":8,"unanswered":0,
//    "nodes":[{"node":"node-a","agent_id":"...","processes":4},...]}
// Which agents did not answer, and a job no agent serves, are said on
// stderr by the caller.
#ifndef MERIDIAN_CLI_TRACE_REPORT_H_
#define MERIDIAN_CLI_TRACE_REPORT_H_

#include <cstdint>
#include <string>

#include "meridian/v1/control.pb.h"

namespace meridian {

// The processes of the job that were told to record, on every node.
uint32_t TracedProcesses(const v1::TraceReply& reply);

std::string TraceText(const std::string& job, uint32_t steps, uint32_t seconds,
                      const v1::TraceReply& reply);
std::string TraceJson(const std::string& job, uint32_t steps, uint32_t seconds,
                      const v1::TraceReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_CLI_TRACE_REPORT_H_
