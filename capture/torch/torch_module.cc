// meridian._torch_capture: the Python module of Meridian's torch.distributed
// capture (meridian/collectives.py loads it). One recorder per process,
// feeding the probe of libmeridian_probe.so when it is loaded.
#include <torch/extension.h>

#include <cstring>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

#include "capture/probe/capture_sink.h"
#include "capture/torch/c10d_recorder.h"
#include "capture/torch/torch_callbacks.h"

namespace {

// Never destroyed: torch may call the callbacks during exit.
meridian::C10dRecorder* Recorder() {
  static auto* recorder =
      new meridian::C10dRecorder(meridian::ProbeCaptureSink());
  return recorder;
}

// start(ops) -> (error, skipped): error "" once recording; `ops` as
// StartTorchCallbacks'.
std::pair<std::string, std::string> Start(double ops) {
  if (meridian::ProbeCaptureSink() == nullptr) {
    return {"libmeridian_probe.so is not loaded in this process", ""};
  }
  std::string skipped;
  std::string error = meridian::StartTorchCallbacks(Recorder(), ops, &skipped);
  return {error, skipped};
}

bool RegisterGroup(const c10::intrusive_ptr<c10d::ProcessGroup>& group,
                   const std::string& name, const std::string& backend,
                   const std::vector<int>& world_ranks) {
  return Recorder()->RegisterGroup(group.get(), name, backend, world_ranks);
}

void UnregisterGroup(const c10::intrusive_ptr<c10d::ProcessGroup>& group) {
  Recorder()->UnregisterGroup(group.get());
}

// begin(op, group, input) -> token (0: not recorded): an operation torch
// calls on the process group directly, not through the dispatcher
// (all_gather_into_tensor, reduce_scatter_tensor, all_to_all_single),
// begun by collectives.py's wrapper of its Python function. `op`:
// "allgather", "reduce_scatter" or "alltoall"; `input` the tensor its
// backend's work takes first. An unknown `op`: 0.
uint64_t Begin(const std::string& op,
               const c10::intrusive_ptr<c10d::ProcessGroup>& group,
               const at::Tensor& input) {
  meridian::C10dRecorder::Op kind;
  if (!meridian::C10dRecorder::OpNamed(op, &kind)) return 0;
  return Recorder()->Begin({kind, group.get(),
                            static_cast<int64_t>(input.nbytes()), -1, 0,
                            meridian::TensorKey(input)});
}

// last_begun() -> bytes or None: the record of the operation this thread
// began last (C10dRecorder::TakeLastBegun), for its later wait.
pybind11::object LastBegun() {
  meridian::ProbeRecord record;
  if (!meridian::C10dRecorder::TakeLastBegun(&record)) return pybind11::none();
  return pybind11::bytes(reinterpret_cast<const char*>(&record),
                         sizeof(record));
}

// wait_begin(record): `record` (last_begun's) in flight again until
// python_call_end(); anything but last_begun's size is refused.
void WaitBegin(const pybind11::bytes& record) {
  const std::string data = record;
  if (data.size() != sizeof(meridian::ProbeRecord)) {
    throw pybind11::value_error("wait_begin: not a record of last_begun()");
  }
  meridian::ProbeRecord r;
  memcpy(&r, data.data(), sizeof(r));
  Recorder()->WaitBegin(r);
}

pybind11::dict Counters() {
  const auto c = Recorder()->counters();
  pybind11::dict d;
  d["recorded"] = c.recorded;
  d["enqueue_only"] = c.enqueue_only;
  d["unregistered"] = c.unregistered;
  d["untracked"] = c.untracked;
  return d;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Meridian's torch.distributed capture (meridian/collectives.py)";
  m.def("start", &Start, pybind11::arg("ops") = 0.0);
  m.def("stop", &meridian::StopTorchCallbacks);
  m.def("register_group", &RegisterGroup);
  m.def("unregister_group", &UnregisterGroup);
  m.def("begin", &Begin);
  m.def("call_end", [](uint64_t token) { Recorder()->CallEnd(token); });
  m.def("counters", &Counters);
  // Around a Python function that waits for its operations (calls in
  // flight: C10dRecorder::PythonCallBegin).
  m.def("python_call_begin", &meridian::C10dRecorder::PythonCallBegin);
  m.def("python_call_end", [] { Recorder()->PythonCallEnd(); });
  // An asynchronous operation's wait (C10dRecorder::WaitBegin): its record
  // taken as its call returns, in flight again while it is waited for.
  m.def("last_begun", &LastBegun);
  m.def("wait_begin", &WaitBegin);
}
