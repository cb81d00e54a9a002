#include "capture/torch/torch_callbacks.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>

#include <cstring>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

// The probe's C API, where the probe is loaded (weak symbols, null
// otherwise).
#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

namespace meridian {
namespace {

using Op = C10dRecorder::Op;

// Where a c10d op's schema has what the span needs (argument positions; -1:
// none). Read from torch 1.13's schemas; Start checks them in the torch
// in use.
struct OpSpec {
  const char* name;
  Op op;
  int group;  // the ProcessGroup
  int bytes;  // Tensor[] or Tensor[][]
  int peer;   // int: root or peer, a group rank
  int tag;    // int
  int key;    // Tensor[] or Tensor[][] whose first tensor the backend's work
              // lists first among its inputs
};

constexpr OpSpec kSpecs[] = {
    {"c10d::allreduce_", Op::kAllreduce, 1, 0, -1, -1, 0},
    {"c10d::broadcast_", Op::kBroadcast, 1, 0, 2, -1, 0},
    {"c10d::reduce_", Op::kReduce, 1, 0, 3, -1, 0},
    {"c10d::allgather_", Op::kAllgather, 2, 1, -1, -1, 1},
    {"c10d::gather_", Op::kGather, 2, 1, 3, -1, 1},
    {"c10d::scatter_", Op::kScatter, 2, 0, 3, -1, 1},
    {"c10d::reduce_scatter_", Op::kReduceScatter, 2, 1, -1, -1, 1},
    {"c10d::alltoall_", Op::kAlltoall, 2, 1, -1, -1, 1},
    {"c10d::barrier", Op::kBarrier, 0, -1, -1, -1, -1},
    {"c10d::send", Op::kSend, 1, 0, 2, 3, 0},
    {"c10d::recv_", Op::kRecv, 1, 0, 2, 3, 0},
};
constexpr int kOps = sizeof(kSpecs) / sizeof(kSpecs[0]);

C10dRecorder* g_recorder = nullptr;
bool g_usable[kOps] = {};
std::vector<at::CallbackHandle> g_handles;

// The calling thread's c10d op in progress (C10dRecorder::Begin's token),
// 0: none.
thread_local uint64_t t_op = 0;

bool IsTensors(const c10::TypePtr& type) {
  const std::string s = type->str();
  return s == "Tensor[]" || s == "Tensor[][]";
}

// Whether `schema` has the spec's arguments where it says.
bool Fits(const c10::FunctionSchema& schema, const OpSpec& spec) {
  const auto& args = schema.arguments();
  const auto has = [&args](int i) {
    return i < 0 || static_cast<size_t>(i) < args.size();
  };
  if (!has(spec.group) || !has(spec.bytes) || !has(spec.peer) ||
      !has(spec.tag) || !has(spec.key)) {
    return false;
  }
  if (args[spec.group].type()->str().find("c10d.ProcessGroup") ==
      std::string::npos) {
    return false;
  }
  for (int i : {spec.bytes, spec.key}) {
    if (i >= 0 && !IsTensors(args[i].type())) return false;
  }
  for (int i : {spec.peer, spec.tag}) {
    if (i >= 0 && args[i].type()->kind() != c10::TypeKind::IntType) {
      return false;
    }
  }
  return true;
}

// The bytes of the tensors in `v` (a Tensor[] or Tensor[][]), read in
// place.
int64_t Bytes(const c10::IValue& v) {
  if (v.isTensor()) return static_cast<int64_t>(v.toTensor().nbytes());
  int64_t bytes = 0;
  if (v.isList()) {
    for (const c10::IValue& inner : v.toListRef()) bytes += Bytes(inner);
  }
  return bytes;
}

// The identity of the first tensor in `v` (a Tensor or a list, nested),
// 0 if none.
uint64_t FirstTensor(const c10::IValue& v) {
  if (v.isTensor()) return TensorKey(v.toTensor());
  if (v.isList()) {
    for (const c10::IValue& inner : v.toListRef()) {
      if (const uint64_t key = FirstTensor(inner)) return key;
    }
  }
  return 0;
}

const OpSpec* SpecOf(const char* name) {
  for (int i = 0; i < kOps; ++i) {
    if (g_usable[i] && std::strcmp(name, kSpecs[i].name) == 0) {
      return &kSpecs[i];
    }
  }
  return nullptr;
}

std::unique_ptr<at::ObserverContext> OnFunctionStart(
    const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (std::strncmp(name, "c10d::", 6) != 0 || t_op != 0) return nullptr;
  const OpSpec* spec = SpecOf(name);
  if (spec == nullptr) return nullptr;
  const auto inputs = fn.inputs();
  if (inputs.size() <= static_cast<size_t>(spec->group)) return nullptr;
  C10dRecorder::Call call{spec->op, nullptr, 0, -1, 0, 0};
  try {
    call.group = inputs[spec->group].toCustomClass<c10d::ProcessGroup>().get();
    if (spec->bytes >= 0) call.bytes = Bytes(inputs[spec->bytes]);
    if (spec->key >= 0) call.key = FirstTensor(inputs[spec->key]);
    if (spec->peer >= 0) {
      call.group_peer = static_cast<int32_t>(inputs[spec->peer].toInt());
    }
    if (spec->tag >= 0) {
      call.tag = static_cast<int32_t>(inputs[spec->tag].toInt());
    }
  } catch (const std::exception&) {
    return nullptr;  // not what Start checked: left unrecorded
  }
  t_op = g_recorder->Begin(call);
  return nullptr;
}

void OnFunctionEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_op == 0 || std::strncmp(fn.name(), "c10d::", 6) != 0) return;
  g_recorder->CallEnd(t_op);
  t_op = 0;
}

// A backend's work ("gloo:all_reduce"), on whichever thread runs it: its
// inputs are the tensors the op gave the backend.
std::unique_ptr<at::ObserverContext> OnUserStart(const at::RecordFunction& fn) {
  const char* title = fn.name();
  if (!g_recorder->IsWorkTitle(title)) return nullptr;  // record_function's
  const auto inputs = fn.inputs();
  const uint64_t key = inputs.empty() ? 0 : FirstTensor(inputs[0]);
  g_recorder->WorkStart(fn.handle(), key, title);
  return nullptr;
}

void OnUserEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  g_recorder->WorkDone(fn.handle());
}

// Operators as phases (the c10d ops are spans of their own).
bool IsOperatorPhase(const at::RecordFunction& fn) {
  return std::strncmp(fn.name(), "c10d::", 6) != 0;
}

std::unique_ptr<at::ObserverContext> OnOperatorStart(
    const at::RecordFunction& fn) {
  if (IsOperatorPhase(fn)) MERIDIAN_CALL(meridian_phase_begin, fn.name());
  return nullptr;
}

void OnOperatorEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  if (IsOperatorPhase(fn)) MERIDIAN_CALL(meridian_phase_end);
}

}  // namespace

std::string StartTorchCallbacks(C10dRecorder* recorder, double ops,
                                std::string* skipped) {
  skipped->clear();
  if (!g_handles.empty()) return "";
  int usable = 0;
  for (int i = 0; i < kOps; ++i) {
    const auto op =
        c10::Dispatcher::singleton().findSchema({kSpecs[i].name, ""});
    g_usable[i] = op.has_value() && Fits(op->schema(), kSpecs[i]);
    if (g_usable[i]) {
      ++usable;
    } else {
      *skipped += (skipped->empty() ? "" : ", ") + std::string(kSpecs[i].name);
    }
  }
  if (usable == 0) {
    return "this torch's dispatcher has none of the c10d ops the capture "
           "reads (torch 1.13's c10d::allreduce_, c10d::broadcast_, ...)";
  }
  g_recorder = recorder;
  g_handles.push_back(at::addGlobalCallback(
      at::RecordFunctionCallback(&OnFunctionStart, &OnFunctionEnd)
          .needsInputs(true)
          .scopes({at::RecordScope::FUNCTION})));
  g_handles.push_back(
      at::addGlobalCallback(at::RecordFunctionCallback(&OnUserStart, &OnUserEnd)
                                .needsInputs(true)
                                .needsIds(true)
                                .scopes({at::RecordScope::USER_SCOPE})));
  if (ops > 0 && meridian_phase_begin != nullptr &&
      meridian_phase_end != nullptr) {
    g_handles.push_back(at::addGlobalCallback(
        at::RecordFunctionCallback(&OnOperatorStart, &OnOperatorEnd)
            .samplingProb(ops > 1 ? 1.0 : ops)
            .scopes({at::RecordScope::FUNCTION,
                     at::RecordScope::BACKWARD_FUNCTION})));
  }
  return "";
}

void StopTorchCallbacks() {
  for (at::CallbackHandle h : g_handles) at::removeCallback(h);
  g_handles.clear();
  if (g_recorder != nullptr) g_recorder->Flush();
}

}  // namespace meridian
