#include "cli/matrix_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"
#include "common/saturating.h"

namespace meridian {

std::string MatrixText(const v1::StatsReply& stats, bool collectives) {
  std::string out = absl::StrFormat(
      "Job %s: messages and bytes sent from rank to rank (MPI and c10d "
      "point-to-point, MPI one-sided%s; world ranks).\n",
      stats.job(), collectives ? ", collectives expanded" : "");
  if (stats.matrix().empty()) {
    out += "no traffic between the selected ranks\n";
    return out;
  }
  absl::StrAppendFormat(&out, "%6s %6s %12s %16s\n", "from", "to", "messages",
                        "bytes");
  int64_t messages = 0;
  int64_t bytes = 0;
  for (const v1::RankTraffic& t : stats.matrix()) {
    absl::StrAppendFormat(&out, "%6d %6d %12d %16d\n", t.from_rank(),
                          t.to_rank(), t.messages(), t.bytes());
    messages += t.messages();
    bytes = SaturatingAdd(bytes, t.bytes());
  }
  absl::StrAppendFormat(&out, "total: %d pairs, %d messages, %d bytes\n",
                        stats.matrix_size(), messages, bytes);
  return out;
}

std::string MatrixJson(const v1::StatsReply& stats) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, stats.job());
  out += ",\"matrix\":[";
  for (int i = 0; i < stats.matrix_size(); ++i) {
    const v1::RankTraffic& t = stats.matrix(i);
    absl::StrAppend(&out, i ? "," : "", "{\"from\":", t.from_rank(),
                    ",\"to\":", t.to_rank(), ",\"messages\":", t.messages(),
                    ",\"bytes\":", t.bytes(), "}");
  }
  out += "]}\n";
  return out;
}

std::string MatrixCsv(const v1::StatsReply& stats) {
  std::string out = "from,to,messages,bytes\n";
  for (const v1::RankTraffic& t : stats.matrix()) {
    absl::StrAppend(&out, t.from_rank(), ",", t.to_rank(), ",", t.messages(),
                    ",", t.bytes(), "\n");
  }
  return out;
}

}  // namespace meridian
