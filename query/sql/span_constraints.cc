#include "query/sql/span_constraints.h"

#include <algorithm>

namespace meridian {

void IntRange::Narrow(SpanOp op, int64_t value) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (op) {
    case SpanOp::kEq:
      lo = std::max(lo, value);
      hi = std::min(hi, value);
      break;
    case SpanOp::kGt:
      if (value == kMax) {
        lo = kMax;
        hi = kMin;  // nothing is greater
      } else {
        lo = std::max(lo, value + 1);
      }
      break;
    case SpanOp::kGe:
      lo = std::max(lo, value);
      break;
    case SpanOp::kLt:
      if (value == kMin) {
        lo = kMax;
        hi = kMin;
      } else {
        hi = std::min(hi, value - 1);
      }
      break;
    case SpanOp::kLe:
      hi = std::min(hi, value);
      break;
  }
}

bool SpanConstraints::Usable(int column, SpanOp op) {
  switch (column) {
    case kSpanJob:
    case kSpanTrack:
    case kSpanName:
    case kSpanPid:
      return op == SpanOp::kEq;
    case kSpanRank:
    case kSpanStep:
    case kSpanStart:
    case kSpanRawStart:
      return true;
    default:
      return false;
  }
}

double SpanConstraints::Selectivity(int column, SpanOp op) {
  const bool eq = op == SpanOp::kEq;
  switch (column) {
    case kSpanJob:
      return 100;
    case kSpanRank:
    case kSpanTrack:
    case kSpanPid:
      return eq ? 100 : 2;
    case kSpanStep:
    case kSpanStart:
    case kSpanRawStart:
      return eq ? 1000 : 3;
    case kSpanName:
      return 10;
    default:
      return 1;
  }
}

void SpanConstraints::Add(int column, SpanOp op,
                          const std::optional<std::string>& text,
                          std::optional<int64_t> integer) {
  // Two different values for one `=` column: no row has both.
  auto equal_text = [this](std::optional<std::string>* slot,
                           const std::optional<std::string>& value) {
    if (!value) return;
    if (*slot && **slot != *value) none = true;
    *slot = value;
  };
  switch (column) {
    case kSpanJob:
      equal_text(&job, text);
      return;
    case kSpanTrack:
      equal_text(&track, text);
      return;
    case kSpanName:
      equal_text(&name, text);
      return;
    case kSpanPid:
      if (integer) {
        if (pid && *pid != *integer) none = true;
        pid = integer;
      }
      return;
    default:
      break;
  }
  if (!integer) return;
  IntRange* range = column == kSpanRank       ? &rank
                    : column == kSpanStep     ? &step
                    : column == kSpanStart    ? &start
                    : column == kSpanRawStart ? &raw_start
                                              : nullptr;
  if (range == nullptr) return;
  range->Narrow(op, *integer);
  if (range->empty()) none = true;
}

}  // namespace meridian
