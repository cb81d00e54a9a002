// PythonStack: the Python stack of one thread of a traced process, for
// `meridian health` (docs/health.md): innermost frame first, each
// "function (file:line)", as ThreadStack's native frames read.
//
// A traced Python process that imported the meridian package registered
// faulthandler for a real-time signal, writing into an anonymous file named
// "meridian-python-stacks-SIGNAL" (capture/probe/python/meridian/stacks.py).
// PythonStack finds that file among /proc/PID/fd, sends the one thread the
// signal (tgkill), waits until the thread has handled it (the signal
// neither pending nor blocked in /proc/PID/task/TID/status, and the file
// grown; at most 1 s) and reads what it wrote (at most 1 MiB). The
// handler is faulthandler's, in C: it answers while the thread blocks in C
// (a collective's wait), and it neither stops nor ends the process.
// Why a signal the process answers rather than reading its memory, as
// py-spy does: CPython's frame layout changes with every minor version,
// and faulthandler already walks it safely from a signal handler.
//
// Contract:
//   - A process that registered nothing (not Python, no meridian package,
//     MERIDIAN_PYTHON_STACKS=0) gives an empty stack, no error; so does a
//     thread that runs no Python.
//   - The file's name, size and bytes are the traced process's, untrusted:
//     only a real-time signal is ever sent, at most 1 MiB is read, the
//     frames are parsed by ParseFaulthandlerDump.
//   - Where the file cannot be read or the signal sent (another user's
//     process), or the thread does not answer (it blocks the signal), the
//     error says so.
#ifndef MERIDIAN_AGENT_PYTHON_STACKS_H_
#define MERIDIAN_AGENT_PYTHON_STACKS_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace meridian {

absl::StatusOr<std::vector<std::string>> PythonStack(pid_t pid, pid_t tid,
                                                     int max_frames = 32);

// The frames of the "Current thread" block of a faulthandler dump (the
// thread that took the signal), innermost first, at most max_frames, each
// "function (file:line)" of at most 512 bytes, valid UTF-8. Any text: no
// such block gives none.
std::vector<std::string> ParseFaulthandlerDump(std::string_view dump,
                                               int max_frames = 32);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PYTHON_STACKS_H_
