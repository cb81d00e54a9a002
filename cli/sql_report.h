// How `meridian sql` prints a v1::SqlReply (docs/sql.md):
//   text (default): a header line of the column names, then one line per
//     row, values separated by '|' as the sqlite3 shell prints them (NULL
//     empty, reals with up to 17 significant digits, blobs as x'hex');
//   --csv: RFC 4180, a header line, fields quoted where they hold a comma,
//     quote or line break;
//   --json: {"columns":["rank","calls"],"rows":[[0,3],[1,3]]}: integers and
//     reals as numbers, text as strings, NULL as null, blobs as "x'hex'".
#ifndef MERIDIAN_CLI_SQL_REPORT_H_
#define MERIDIAN_CLI_SQL_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string SqlText(const v1::SqlReply& reply);
std::string SqlCsv(const v1::SqlReply& reply);
std::string SqlJson(const v1::SqlReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_CLI_SQL_REPORT_H_
