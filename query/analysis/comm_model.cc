#include "query/analysis/comm_model.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace meridian {
namespace {

// The rows of the header's table.
enum class Shape {
  kNone,
  kMessage,
  kAllreduce,
  kBlocks,  // n: one member's block
  kTotal,   // n: a total over members
  kRooted,
  kPrefix,
  kBarrier,
  kNeighbor,
};

Shape ShapeOfName(absl::string_view name) {
  struct Row {
    absl::string_view name;
    Shape shape;
  };
  static constexpr Row kRows[] = {
      {"allreduce", Shape::kAllreduce},
      {"allgather", Shape::kBlocks},
      {"alltoall", Shape::kBlocks},
      {"reduce_scatter_block", Shape::kBlocks},
      {"reducescatter", Shape::kBlocks},  // NCCL
      {"allgatherv", Shape::kTotal},
      {"alltoallv", Shape::kTotal},
      {"alltoallw", Shape::kTotal},
      {"reduce_scatter", Shape::kTotal},
      {"bcast", Shape::kRooted},
      {"broadcast", Shape::kRooted},  // NCCL
      {"scatter", Shape::kRooted},
      {"scatterv", Shape::kRooted},
      {"gather", Shape::kRooted},
      {"gatherv", Shape::kRooted},
      {"reduce", Shape::kRooted},
      {"scan", Shape::kPrefix},
      {"exscan", Shape::kPrefix},
      {"barrier", Shape::kBarrier},
      {"send", Shape::kMessage},  // NCCL
      {"recv", Shape::kMessage},  // NCCL
  };
  for (const Row& row : kRows) {
    if (row.name == name) return row.shape;
  }
  return Shape::kNone;
}

Shape ShapeOf(v1::Category category, const std::string& name, SpanRole role) {
  if (category != v1::CATEGORY_MPI && category != v1::CATEGORY_NCCL &&
      category != v1::CATEGORY_C10D) {
    return Shape::kNone;
  }
  if (IsMessage(role)) return Shape::kMessage;
  // torch.distributed's alltoall records the bytes of all its inputs.
  if (category == v1::CATEGORY_C10D && name == "alltoall") return Shape::kTotal;
  if (role == SpanRole::kNeighbor) return Shape::kNeighbor;
  std::string s = absl::AsciiStrToLower(name);
  absl::string_view v = s;
  absl::ConsumePrefix(&v, "mpi_");
  absl::ConsumeSuffix(&v, "_init");  // persistent collectives
  Shape shape = ShapeOfName(v);
  if (shape == Shape::kNone && absl::ConsumePrefix(&v, "i")) {
    shape = ShapeOfName(v);  // nonblocking forms
  }
  // A Send or Recv without a role (NCCL's) is a message; MPI's have one.
  return shape;
}

}  // namespace

std::optional<int64_t> ModelTimeNs(const CommModel& model,
                                   v1::Category category,
                                   const std::string& name, SpanRole role,
                                   int64_t bytes, int32_t ranks,
                                   int32_t neighbors) {
  const Shape shape = ShapeOf(category, name, role);
  if (shape == Shape::kNone) return std::nullopt;
  const double a = static_cast<double>(model.latency_ns);
  const double nb = static_cast<double>(std::max<int64_t>(bytes, 0)) * 1e9 /
                    model.bytes_per_s;  // ns
  // A Sendrecv's bytes are both directions' (mpi_wrappers.cc), which move
  // at once: the time of one direction's, half of them (exact for the
  // symmetric exchange of a halo).
  if (shape == Shape::kMessage) {
    return std::llround(
        std::min(a + (role == SpanRole::kSendRecv ? nb / 2 : nb), 9e18));
  }
  const double p = std::max(ranks, 1);
  const double log = p > 1 ? std::ceil(std::log2(p)) : 0;
  const bool ring = model.algorithm == CommModel::Algorithm::kRing;
  double t = 0;
  switch (shape) {
    case Shape::kAllreduce:
      t = ring ? 2 * (p - 1) * (a + nb / p) : 2 * log * (a + nb);
      break;
    case Shape::kBlocks:
      t = ring ? (p - 1) * (a + nb) : log * a + (p - 1) * nb;
      break;
    case Shape::kTotal:
      t = ring ? (p - 1) * (a + nb / p) : log * a + (p - 1) * nb / p;
      break;
    case Shape::kRooted:
      t = p <= 1 ? 0 : ring ? (p - 1) * a + nb : log * (a + nb);
      break;
    case Shape::kPrefix:
      t = ring ? (p - 1) * (a + nb) : log * (a + nb);
      break;
    case Shape::kBarrier:
      t = ring ? 2 * (p - 1) * a : 2 * log * a;
      break;
    case Shape::kNeighbor:
      t = std::max(neighbors, 1) * (a + nb);
      break;
    default:
      return std::nullopt;
  }
  return std::llround(std::min(t, 9e18));
}

}  // namespace meridian
