// libmeridian_nvtx.so: NVTX capture for unmodified programs. `meridian run`
// sets NVTX_INJECTION64_PATH to it; each copy of NVTX in the process (the
// program's, PyTorch's, NCCL's...) loads it on its first NVTX call and
// calls InitializeInjectionNvtx2, which points NVTX's core and domain
// callback slots at NvtxCapture. Slots left alone (wide-character calls,
// categories, resources) stay NVTX's no-ops.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <mutex>

#include "capture/nvtx/nvtx_capture.h"
#include "capture/probe/capture_sink.h"

namespace {

using meridian::NvtxCapture;

NvtxCapture* g_capture = nullptr;

void MarkEx(const nvtxEventAttributes_t* a) { g_capture->Mark(nullptr, a); }
void MarkA(const char* message) { g_capture->MarkMessage(message); }
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* a) {
  return g_capture->Start(nullptr, a);
}
nvtxRangeId_t RangeStartA(const char* message) {
  return g_capture->StartMessage(message);
}
void RangeEnd(nvtxRangeId_t id) { g_capture->End(nullptr, id); }
int RangePushEx(const nvtxEventAttributes_t* a) {
  return g_capture->Push(nullptr, a);
}
int RangePushA(const char* message) { return g_capture->PushMessage(message); }
int RangePop() { return g_capture->Pop(nullptr); }
void NameOsThreadA(uint32_t tid, const char* name) {
  g_capture->NameThread(tid, name);
}

void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  g_capture->Mark(d, a);
}
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d,
                                 const nvtxEventAttributes_t* a) {
  return g_capture->Start(d, a);
}
void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  g_capture->End(d, id);
}
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return g_capture->Push(d, a);
}
int DomainRangePop(nvtxDomainHandle_t d) { return g_capture->Pop(d); }
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t d,
                                         const char* text) {
  return g_capture->RegisterString(d, text);
}
nvtxDomainHandle_t DomainCreateA(const char* name) {
  return g_capture->DomainCreate(name);
}
void DomainDestroy(nvtxDomainHandle_t) {}

template <typename F>
void Set(NvtxFunctionTable table, unsigned int size, unsigned int id, F fn) {
  if (table != nullptr && id < size && table[id] != nullptr) {
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  static std::once_flag once;
  std::call_once(once, [] {
    meridian::CaptureSink* sink = meridian::ProbeCaptureSink();
    if (sink == nullptr) {
      fprintf(stderr,
              "meridian: NVTX injection loaded without libmeridian_probe.so "
              "(run under `meridian run`): NVTX ranges are not recorded\n");
      return;
    }
    g_capture = new NvtxCapture(sink);  // never destroyed: NVTX keeps calling
  });
  if (g_capture == nullptr || get_export_table == nullptr) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(
      get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->GetModuleFunctionTable == nullptr) {
    return 0;
  }
  NvtxFunctionTable core = nullptr;
  unsigned int core_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core,
                                        &core_size) == 0) {
    return 0;
  }
  Set(core, core_size, NVTX_CBID_CORE_MarkEx, MarkEx);
  Set(core, core_size, NVTX_CBID_CORE_MarkA, MarkA);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
  Set(core, core_size, NVTX_CBID_CORE_RangeStartA, RangeStartA);
  Set(core, core_size, NVTX_CBID_CORE_RangeEnd, RangeEnd);
  Set(core, core_size, NVTX_CBID_CORE_RangePushEx, RangePushEx);
  Set(core, core_size, NVTX_CBID_CORE_RangePushA, RangePushA);
  Set(core, core_size, NVTX_CBID_CORE_RangePop, RangePop);
  Set(core, core_size, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA);
  NvtxFunctionTable core2 = nullptr;
  unsigned int core2_size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2,
                                        &core2_size) != 0) {
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx,
        DomainRangeStartEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx,
        DomainRangePushEx);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA,
        DomainRegisterStringA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA);
    Set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy);
  }
  return 1;
}
