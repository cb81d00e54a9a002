// How `meridian stats --matrix` prints the communication matrix of a
// v1::StatsReply (query/analysis/comm_matrix.h says what it counts), and
// nothing else of the reply:
//   text    a header line, then one row per pair with traffic, ascending
//           (from, to): "from to messages bytes", right-aligned, exact
//           integers; then the totals;
//   --json  {"job":"J","matrix":[{"from":0,"to":1,"messages":2,
//           "bytes":80},...]};
//   --csv   "from,to,messages,bytes", then one line per pair.
#ifndef MERIDIAN_CLI_MATRIX_REPORT_H_
#define MERIDIAN_CLI_MATRIX_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

// `collectives`: whether the matrix has collectives expanded
// (--expand-collectives), which the header says.
std::string MatrixText(const v1::StatsReply& stats, bool collectives);
std::string MatrixJson(const v1::StatsReply& stats);
std::string MatrixCsv(const v1::StatsReply& stats);

}  // namespace meridian

#endif  // MERIDIAN_CLI_MATRIX_REPORT_H_
