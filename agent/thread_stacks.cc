#include "agent/thread_stacks.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

const Dwfl_Callbacks kProcessCallbacks = {
    dwfl_linux_proc_find_elf,
    dwfl_standard_find_debuginfo,  // separate debug files (/usr/lib/debug)
    nullptr,
    nullptr,
};

std::string Demangled(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string out = demangled;
  free(demangled);
  return out;
}

std::string Basename(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

std::string Frame(Dwfl* dwfl, Dwarf_Addr pc) {
  Dwfl_Module* module = dwfl_addrmodule(dwfl, pc);
  if (module == nullptr) return absl::StrCat("0x", absl::Hex(pc));
  const char* object = dwfl_module_info(module, nullptr, nullptr, nullptr,
                                        nullptr, nullptr, nullptr, nullptr);
  const std::string where = object == nullptr ? "?" : Basename(object);
  GElf_Off offset = 0;
  GElf_Sym symbol;
  const char* name = dwfl_module_addrinfo(module, pc, &offset, &symbol, nullptr,
                                          nullptr, nullptr);
  Dwfl_Line* line = dwfl_module_getsrc(module, pc);
  int line_number = 0;
  const char* file = line == nullptr
                         ? nullptr
                         : dwfl_lineinfo(line, nullptr, &line_number, nullptr,
                                         nullptr, nullptr);
  if (name != nullptr && file != nullptr && line_number > 0) {
    return absl::StrCat(Demangled(name), " (", file, ":", line_number, ")");
  }
  if (name != nullptr) {
    return absl::StrCat(Demangled(name), "+0x", absl::Hex(offset), " (", where,
                        ")");
  }
  return absl::StrCat("0x", absl::Hex(pc), " (", where, ")");
}

struct Frames {
  std::vector<Dwarf_Addr> pcs;
  size_t max;
};

int OneFrame(Dwfl_Frame* frame, void* arg) {
  auto* frames = static_cast<Frames*>(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;
  if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_ABORT;
  // A return address points after its call: look up the call itself.
  frames->pcs.push_back(activation ? pc : pc - 1);
  return frames->pcs.size() >= frames->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

// Why ptrace may be refused here, for the error.
std::string PtraceScope() {
  std::ifstream file("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(file >> scope)) return "";
  return absl::StrCat(" (kernel.yama.ptrace_scope is ", scope, ")");
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ThreadStack(pid_t pid, pid_t tid,
                                                     int max_frames) {
  Dwfl* dwfl = dwfl_begin(&kProcessCallbacks);
  if (dwfl == nullptr) {
    return absl::InternalError(
        absl::StrCat("libdwfl: ", dwfl_errmsg(dwfl_errno())));
  }
  struct End {
    Dwfl* dwfl;
    ~End() { dwfl_end(dwfl); }  // detaches from the thread
  } end{dwfl};
  if (int err = dwfl_linux_proc_report(dwfl, pid); err != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot read the memory map of process ", pid, ": ",
                     err > 0 ? strerror(err) : dwfl_errmsg(dwfl_errno())));
  }
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (int err = dwfl_linux_proc_attach(dwfl, pid, false); err != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot attach to process ", pid, ": ",
                     err > 0 ? strerror(err) : dwfl_errmsg(dwfl_errno())));
  }
  Frames frames{{}, static_cast<size_t>(max_frames > 0 ? max_frames : 1)};
  errno = 0;
  if (dwfl_getthread_frames(dwfl, tid, OneFrame, &frames) != 0 &&
      frames.pcs.empty()) {
    const int saved = errno;
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot unwind thread ", tid, " of process ", pid, ": ",
        dwfl_errmsg(dwfl_errno()),
        saved == EPERM ? absl::StrCat(": ptrace not allowed", PtraceScope())
                       : ""));
  }
  std::vector<std::string> out;
  out.reserve(frames.pcs.size());
  for (Dwarf_Addr pc : frames.pcs) out.push_back(Frame(dwfl, pc));
  return out;
}

}  // namespace meridian
