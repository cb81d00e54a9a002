// What an Nsight Systems SQLite export holds that its reader reads: the
// tables (and others only an export has, to tell one), NVTX_EVENTS' event
// types, the columns of every GPU activity table, and how CUPTI's copy,
// memory and runtime names read as Meridian's capture names them.
#ifndef MERIDIAN_IMPORT_NSIGHT_SCHEMA_H_
#define MERIDIAN_IMPORT_NSIGHT_SCHEMA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "import/stranger_sqlite.h"

namespace meridian {
namespace nsight {

// The tables read, and others only an Nsight export has (to tell one).
constexpr char kKernel[] = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr char kMemcpy[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
constexpr char kMemset[] = "CUPTI_ACTIVITY_KIND_MEMSET";
constexpr char kRuntime[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
constexpr char kNvtx[] = "NVTX_EVENTS";
constexpr char kStrings[] = "StringIds";
constexpr char kThreadNames[] = "ThreadNames";
constexpr char kRanks[] = "MPI_RANKS";
constexpr char kSession[] = "TARGET_INFO_SESSION_START_TIME";
constexpr char kMeta[] = "META_DATA_EXPORT";
constexpr const char* kEventTables[] = {kKernel, kMemcpy, kMemset, kRuntime,
                                        kNvtx};
constexpr const char* kNsightTables[] = {kKernel,
                                         kMemcpy,
                                         kMemset,
                                         kRuntime,
                                         kNvtx,
                                         kStrings,
                                         kThreadNames,
                                         kRanks,
                                         kSession,
                                         kMeta,
                                         "META_DATA_CAPTURE",
                                         "TARGET_INFO_GPU",
                                         "TARGET_INFO_CUDA_DEVICE",
                                         "ENUM_NSYS_EVENT_TYPE"};

// NVTX_EVENTS.eventType (ENUM_NSYS_EVENT_TYPE).
constexpr int64_t kNvtxMark = 34;
constexpr int64_t kNvtxPushPop = 59;
constexpr int64_t kNvtxStartEnd = 60;
constexpr int64_t kNvtxDomainCreate = 75;

// The columns every GPU activity table has, at these indexes.
enum GpuColumn { kStart, kEnd, kDevice, kStream, kCorrelation, kGlobalPid };
constexpr stranger_sqlite::Column kGpuColumns[] = {
    {"start", true},    {"end", true},           {"deviceId", true},
    {"streamId", true}, {"correlationId", true}, {"globalPid", true}};

// kGpuColumns, then `more`.
std::vector<stranger_sqlite::Column> GpuColumns(
    const std::vector<stranger_sqlite::Column>& more);

// CUPTI's CUpti_ActivityMemcpyKind, named as the capture names copies.
std::string CopyName(int64_t kind);

// CUPTI's CUpti_ActivityMemoryKind, named as the capture names them.
std::string MemoryName(int64_t kind);

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": the capture names a
// runtime call by its function, Nsight by its callback id.
std::string RuntimeName(std::string name);

}  // namespace nsight
}  // namespace meridian

#endif  // MERIDIAN_IMPORT_NSIGHT_SCHEMA_H_
