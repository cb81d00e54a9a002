// SpanConstraints: what the constraints SQLite hands the `spans` table
// (span_table.h) leave of it, as a scan can use them: a job, ranges of
// rank, step and start time, a track, an operation name and a pid.
//
// xBestIndex picks the constraints it can use and writes each as two
// characters of the plan (the column's letter, the operator's), in the
// order of their values; xFilter reads the values back in that order.
// Example: `WHERE job = 'j' AND step BETWEEN 10 AND 19` plans "a=qgql"
// (job =, step >=, step <=) and gives job "j", step [10, 19].
//
// Only integers narrow an integer column (rank = 2.5, or = '2', narrow
// nothing): SQLite checks every constraint again on the rows given, so a
// value left unused costs time, never a wrong row.
#ifndef MERIDIAN_QUERY_SQL_SPAN_CONSTRAINTS_H_
#define MERIDIAN_QUERY_SQL_SPAN_CONSTRAINTS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace meridian {

// The columns of `spans`, in order.
enum SpanColumn {
  kSpanJob,
  kSpanRank,
  kSpanNode,
  kSpanPid,
  kSpanTid,
  kSpanTrack,
  kSpanCategory,
  kSpanName,
  kSpanStart,
  kSpanDur,
  kSpanEnd,
  kSpanBytes,
  kSpanPeer,
  kSpanTag,
  kSpanComm,
  kSpanSeq,
  kSpanStep,
  kSpanArgs,
  kSpanRawStart,
  kSpanKind,
  kSpanValue,
  kSpanColumns
};

// The operators a plan names.
enum class SpanOp : char {
  kEq = '=',
  kGt = '>',
  kGe = 'g',
  kLt = '<',
  kLe = 'l',
};

// An inclusive range of integers; whole when no constraint narrowed it.
struct IntRange {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();

  void Narrow(SpanOp op, int64_t value);
  bool whole() const {
    return lo == std::numeric_limits<int64_t>::min() &&
           hi == std::numeric_limits<int64_t>::max();
  }
  bool empty() const { return lo > hi; }
  bool Contains(int64_t v) const { return v >= lo && v <= hi; }
};

struct SpanConstraints {
  std::optional<std::string> job;
  std::optional<std::string> track;
  std::optional<std::string> name;
  std::optional<int64_t> pid;
  IntRange rank, step, start, raw_start;
  bool none = false;  // two constraints that no row meets at once

  // Whether the plan may hand down `op` on `column`.
  static bool Usable(int column, SpanOp op);
  // The factor by which a constraint cuts the rows (xBestIndex's costs).
  static double Selectivity(int column, SpanOp op);

  // Adds one planned constraint's value; `text` for job, track and name,
  // `integer` (nullopt where the value is not an integer) for the others.
  void Add(int column, SpanOp op, const std::optional<std::string>& text,
           std::optional<int64_t> integer);
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_SPAN_CONSTRAINTS_H_
