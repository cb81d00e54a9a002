// An error status for a failed system call: `what` and errno's message.
#ifndef MERIDIAN_AGENT_ERRNO_STATUS_H_
#define MERIDIAN_AGENT_ERRNO_STATUS_H_

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace meridian {

// INTERNAL "what: strerror(errno)", read now (call it before anything that
// may set errno).
inline absl::Status ErrnoStatus(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
}

}  // namespace meridian

#endif  // MERIDIAN_AGENT_ERRNO_STATUS_H_
