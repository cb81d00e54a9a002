// `meridian replay`: its flags as a ReplayRequest, and its reply as text or
// JSON (docs/analysis.md, "Replay").
//
//   --step N | --steps A:B      the window (default: the whole job)
//   --scale NAME_GLOB=F         repeatable; a category name (mpi, nccl,
//   --scale CATEGORY=F          cuda_kernel...) or a glob over op names
//   --rank-like R=S             repeatable
//   --comm-model ring|tree --bandwidth B [--latency L]
//                               B: bytes per second with a unit, decimal
//                               (KB/s MB/s GB/s TB/s), binary (KiB/s MiB/s
//                               GiB/s) or bits (Kbit/s Mbit/s Gbit/s
//                               Tbit/s); bare numbers are bytes/s. L: a
//                               duration (5us; bare numbers are seconds),
//                               default 0
//   --no-wait
// Each error is INVALID_ARGUMENT naming the flag and what it accepts.
#ifndef MERIDIAN_CLI_REPLAY_COMMAND_H_
#define MERIDIAN_CLI_REPLAY_COMMAND_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/command_line.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

absl::StatusOr<double> ParseBandwidth(absl::string_view text);
absl::StatusOr<v1::ReplayRequest> ReplayRequestOf(const CommandLine& line);

// The window's times, per step (and rank) and per rank, the saving, and
// both critical paths' breakdowns.
std::string ReplayText(const v1::ReplayReply& reply);
// One object: job, first_step/last_step, measured_ns, predicted_ns,
// saving_ns, saving_share, spans, scaled_spans, broken_dependencies,
// steps [{step, measured_ns, predicted_ns, ranks [{rank, measured_ns,
// predicted_ns}]}], ranks [...], measured_path and predicted_path (as
// `critical-path --json` prints them).
std::string ReplayJson(const v1::ReplayReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_CLI_REPLAY_COMMAND_H_
