// Call sites of MPI calls (MERIDIAN_CALLSITES=1): where in the program each
// recorded MPI call was made, as a string the node agent symbolizes.
//
// The exported MPI stubs of libmeridian_probe.so (mpi_dispatch_stubs.cc) are
// what the program calls, C and Fortran alike: with MERIDIAN_CALLSITES=1
// (and only then: otherwise a stub is a tail call), the outermost one on a
// thread keeps its return address in tls_caller for the duration of the
// call (OutermostMpiCall), so a Fortran binding that calls a C function, or
// an MPI function that calls another, still names the program's call.
//
// CallsiteId turns that address into the id of an interned string
//   "<object path>+0x<hex file address>"
// where the object is the executable or shared library holding the address
// (its absolute path, the executable's from /proc/self/exe) and the file
// address is the return address minus the object's load bias: the virtual
// address in the ELF file, as addr2line takes it. The agent looks up the
// call instruction (the byte before). Each distinct address costs one
// dladdr1 and one interned string, once per process; afterwards a lookup is
// a hash-table probe with no lock. The table holds kMaxCallsites addresses:
// beyond that (or for code in no loaded object) calls carry no call site.
//
// Part of libmeridian_probe.so (the family libraries reach it through
// MERIDIAN_PROBE_SHARED).
#ifndef MERIDIAN_CAPTURE_PROBE_CALLSITE_H_
#define MERIDIAN_CAPTURE_PROBE_CALLSITE_H_

#include <cstdint>

#include "capture/probe/probe_runtime.h"

namespace meridian {
namespace probe {

constexpr uint32_t kMaxCallsites = 4096;

// The return address of the program's current MPI call on this thread;
// nullptr outside MPI calls.
extern MERIDIAN_PROBE_SHARED __thread const void* tls_caller
    __attribute__((tls_model("initial-exec")));

// Keeps `caller` in tls_caller unless an outer MPI call already did.
class OutermostMpiCall {
 public:
  explicit OutermostMpiCall(const void* caller)
      : owner_(tls_caller == nullptr) {
    if (owner_) tls_caller = caller;
  }
  ~OutermostMpiCall() {
    if (owner_) tls_caller = nullptr;
  }
  OutermostMpiCall(const OutermostMpiCall&) = delete;
  OutermostMpiCall& operator=(const OutermostMpiCall&) = delete;

 private:
  const bool owner_;
};

// The string id of the call site at return address `pc` (see above), or 0.
MERIDIAN_PROBE_SHARED uint32_t CallsiteId(const void* pc);

// The current MPI call's call site if MERIDIAN_CALLSITES=1, else 0.
inline uint32_t CurrentCallsite() {
  return __builtin_expect(g_event.callsites, 0) ? CallsiteId(tls_caller) : 0;
}

// A forked child's table starts empty (its string ids are its own).
void ResetCallsites();

}  // namespace probe
}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_CALLSITE_H_
