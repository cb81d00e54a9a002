#include "cli/filter_flags.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "query/ops/category.h"

namespace meridian {

absl::StatusOr<std::vector<int32_t>> ParseRanks(absl::string_view text) {
  std::vector<int32_t> ranks;
  auto bad = [&text]() {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ranks \"", text, "\": write ranks and ranges such as 0,2-5"));
  };
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(part, '-');
    int32_t first, last;
    if (ends.size() == 1 && absl::SimpleAtoi(ends[0], &first)) {
      last = first;
    } else if (ends.size() == 2 && absl::SimpleAtoi(ends[0], &first) &&
               absl::SimpleAtoi(ends[1], &last)) {
    } else {
      return bad();
    }
    if (first < 0 || last < first || last - first > 1000000) return bad();
    for (int32_t r = first; r <= last; ++r) ranks.push_back(r);
  }
  return ranks;
}

absl::StatusOr<int64_t> ParseDurationNs(absl::string_view text) {
  static constexpr struct {
    absl::string_view suffix;
    double ns;
  } kUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  double scale = 1e9;
  absl::string_view number = text;
  for (const auto& unit : kUnits) {
    if (text.size() > unit.suffix.size() &&
        text.substr(text.size() - unit.suffix.size()) == unit.suffix) {
      scale = unit.ns;
      number = text.substr(0, text.size() - unit.suffix.size());
      break;
    }
  }
  double value;
  if (!absl::SimpleAtod(number, &value) || !std::isfinite(value) ||
      std::fabs(value * scale) > 9e18) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text, "\" is not a time; write e.g. 1.5s, 250ms, 10us, 100ns"));
  }
  return static_cast<int64_t>(std::llround(value * scale));
}

absl::StatusOr<v1::SpanFilter> ParseFilter(const CommandLine& line) {
  v1::SpanFilter filter;
  filter.set_job(line.Get("job"));
  if (line.Has("ranks")) {
    auto ranks = ParseRanks(line.Get("ranks"));
    if (!ranks.ok()) return ranks.status();
    for (int32_t r : *ranks) filter.add_ranks(r);
  }
  if (line.Has("category")) {
    for (absl::string_view name : absl::StrSplit(line.Get("category"), ',')) {
      auto category = ParseCategory(name);
      if (!category.ok()) return category.status();
      filter.add_categories(*category);
    }
  }
  filter.set_name_glob(line.Get("name"));
  for (const char* flag : {"from", "to"}) {
    if (!line.Has(flag)) continue;
    auto ns = ParseDurationNs(line.Get(flag));
    if (!ns.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": ", ns.status().message()));
    }
    if (absl::string_view(flag) == "from") {
      filter.set_from_ns(*ns);
    } else {
      filter.set_to_ns(*ns);
    }
  }
  if (line.Has("steps")) {
    std::string text = line.Get("steps");
    std::vector<absl::string_view> ends = absl::StrSplit(text, ':');
    int64_t first, last;
    bool ok = true;
    if (ends.size() == 1) {
      ok = absl::SimpleAtoi(ends[0], &first);
      if (ok) filter.set_first_step(first), filter.set_last_step(first);
    } else if (ends.size() == 2) {
      if (!ends[0].empty()) {
        ok = ok && absl::SimpleAtoi(ends[0], &first);
        if (ok) filter.set_first_step(first);
      }
      if (!ends[1].empty()) {
        ok = ok && absl::SimpleAtoi(ends[1], &last);
        if (ok) filter.set_last_step(last);
      }
      ok = ok && !(ends[0].empty() && ends[1].empty());
    } else {
      ok = false;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--steps \"", text, "\": write FIRST:LAST, FIRST:, :LAST or N"));
    }
  }
  return filter;
}

absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> ParseStepFlags(
    const CommandLine& line) {
  if (line.Has("step") && line.Has("steps")) {
    return absl::InvalidArgumentError("give --step N or --steps A:B, not both");
  }
  if (line.Has("step")) {
    auto step = line.GetInt("step", 0);
    if (!step.ok()) return step.status();
    return std::make_pair(*step, *step);
  }
  if (!line.Has("steps")) return std::nullopt;
  const std::string text = line.Get("steps");
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  int64_t first = 0, last = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &first) ||
      !absl::SimpleAtoi(parts[1], &last) || first > last) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--steps \"", text, "\": write FIRST:LAST, FIRST <= LAST"));
  }
  return std::make_pair(first, last);
}

}  // namespace meridian
