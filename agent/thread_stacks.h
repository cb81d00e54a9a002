// ThreadStack: the native call stack of one thread of a traced process, for
// `meridian health` (docs/health.md): innermost frame first, each
// "function (file:line)" where debug information exists, else
// "function+0xOFFSET (object)", else "0xADDRESS (object)".
//
// Read with elfutils' libdwfl (already the agent's, for call sites): it
// attaches to that one thread with ptrace, which stops it while its frames
// are unwound (milliseconds), and detaches; the process is never killed or
// left stopped, and its other threads run on. Why ptrace rather than a
// signal the probe answers: a thread stuck in a system call, a spin or a
// blocked signal mask still answers ptrace, and the traced process needs no
// unwinder, handler or memory of Meridian's for it; process_vm_readv alone
// cannot read a running thread's registers.
//
// Where ptrace is refused (another user's process, kernel.yama.ptrace_scope
// 2 or 3, a container without CAP_SYS_PTRACE), the error says so and why.
#ifndef MERIDIAN_AGENT_THREAD_STACKS_H_
#define MERIDIAN_AGENT_THREAD_STACKS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meridian {

absl::StatusOr<std::vector<std::string>> ThreadStack(pid_t pid, pid_t tid,
                                                     int max_frames = 32);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_THREAD_STACKS_H_
