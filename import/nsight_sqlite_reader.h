// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`) into
// an ImportedTrace, whole or not at all (format "nsight"). The file comes
// from a user and is hostile until checked: it must start with SQLite's
// header, its header's page count must fit its size (a cut file is refused
// before SQLite sees it), it is opened read-only with SQLite's defensive
// settings (no triggers, no views, an untrusted schema, cell size checks,
// a 16 MiB limit on any one value), and it must hold a table of Nsight's.
// Every column is looked up before it is read and every value's type
// checked as it is read. The schema is NVIDIA's "SQLite Schema Reference"
// (Nsight Systems Analysis Guide, export schema 3.28.1).
//
// Tables read (nsys creates tables lazily: each may be missing):
//   CUPTI_ACTIVITY_KIND_KERNEL  -> CUDA_KERNEL named by demangledName (as
//       Meridian's CUPTI capture names kernels; else shortName, else
//       mangledName), with args grid "X,Y,Z", block "X,Y,Z", registers and
//       smem (static + dynamic shared memory bytes) when the columns exist;
//   CUPTI_ACTIVITY_KIND_MEMCPY  -> CUDA_MEMCPY named by copyKind as the
//       capture names copies ("Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD",
//       "Memcpy HtoH", "Memcpy PtoP", ... CUPTI's numbering; 11-13, the
//       unified-memory copies, "Memcpy UVM"), bytes, args src and dst
//       (memory kinds "pageable", "pinned", "device"... in CUPTI's
//       numbering) and, for PtoP, src_device and dst_device;
//   CUPTI_ACTIVITY_KIND_MEMSET  -> CUDA_MEMSET "Memset", bytes;
//   CUPTI_ACTIVITY_KIND_RUNTIME -> CUDA_RUNTIME on the calling thread (or
//       CUDA_SYNC for a *Synchronize* call, as the capture does), named
//       without the callback's version suffix as the capture names them
//       ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; driver names such
//       as "cuMemcpyHtoD_v2" are real symbol names and kept);
//   NVTX_EVENTS -> NVTX: push/pop ranges (59) on their thread, start/end
//       ranges (60) on the thread that ended them (endGlobalTid, as the
//       capture does), marks (34) as instants; named by text, else textId;
//       arg domain (the name its DomainCreate row gave) and arg payload
//       (int64Value, else doubleValue). Ranges without an end and other
//       event types are counted in a note and skipped.
// GPU activity (the first three) keeps CUPTI's correlationId, as the
// runtime call that launched it does, so launch -> kernel flows work.
//
// Processes and tracks: processes are told apart by globalPid / globalTid
// without its thread bits (bits 24 and up: the PID in bits 24-47, a
// hardware id above), in PID order; their rank from MPI_RANKS when it
// names them, else options.rank and the next free ones. A report of
// several hardware ids (machines) gives each its own node, "NODE#ID".
// Thread tracks have the TID (bits 0-23) as id and ThreadNames' name (the
// highest priority; else "thread TID"). GPU stream tracks have id
// deviceId << 32 | streamId, unique per process across devices, and are
// named "GPU D stream S" as the capture names them.
//
// Times: SessionNs integers. Absolute = TARGET_INFO_SESSION_START_TIME's
// utcEpochNs + start when that table exists (the common convention;
// NVIDIA does not state it); else options.epoch_ns + start; else the
// trace is placed to end at options.fallback_end_ns (the file's
// modification time) and a note says so. Every span must then lie in
// 2000..2100 and last at most 30 days (wire/span_rules.h).
//
// Errors (INVALID_ARGUMENT; NOT_FOUND for a missing file) name the file,
// the table, the row (counted from 1 in the table's order) and the column.
// META_DATA_EXPORT's EXPORT_SCHEMA_VERSION, when present, must be 3.x.y;
// a column renamed by a minor version shows as a missing column, named in
// the error.
//
// Thread-compatible: calls share nothing.
#ifndef MERIDIAN_IMPORT_NSIGHT_SQLITE_READER_H_
#define MERIDIAN_IMPORT_NSIGHT_SQLITE_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "import/import_options.h"
#include "import/imported_trace.h"
#include "import/stranger_sqlite.h"  // LooksLikeSqlite

namespace meridian {

// How they read `options` (import_options.h): `file`, for messages ("":
// the path); `node`, the node every process ran on ("": `file`'s base
// name, so that files of different machines keep their clocks apart);
// `rank`, the rank of the first process MPI_RANKS does not name, the next
// ones following (-1: from 0); `epoch_ns`, what SessionNs 0 is if no table
// says. `format` is not read.

// Reads the export at `path`, opened read-only.
absl::StatusOr<ImportedTrace> ReadNsightSqlite(const std::string& path,
                                               const ImportOptions& options);

// The same for a database image already in memory (a file read whole,
// perhaps decompressed; the fuzz target), read in place without a copy:
// `image` must outlive the call only.
absl::StatusOr<ImportedTrace> ReadNsightSqliteImage(
    std::string_view image, const ImportOptions& options);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_NSIGHT_SQLITE_READER_H_
