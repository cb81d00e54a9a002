// How `meridian clocks` prints a v1::ClocksReply: a table per node, or
// JSON (--json) with integer ns fields.
#ifndef MERIDIAN_CLI_CLOCKS_REPORT_H_
#define MERIDIAN_CLI_CLOCKS_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string ClocksText(const v1::ClocksReply& clocks);
std::string ClocksJson(const v1::ClocksReply& clocks);

}  // namespace meridian

#endif  // MERIDIAN_CLI_CLOCKS_REPORT_H_
