#include "agent/callsite_symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace meridian {

namespace {

const Dwfl_Callbacks kOfflineCallbacks = {
    nullptr,                       // find_elf: the module's fd is given
    dwfl_standard_find_debuginfo,  // separate debug files (/usr/lib/debug)
    dwfl_offline_section_address,  // section_address
    nullptr,                       // debuginfo_path: the default
};

std::string Demangled(const char* name) {
  int status = -1;
  char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || plain == nullptr) return name;
  std::string out(plain);
  free(plain);
  return out;
}

// The function inlined at `at`, if any: the innermost inlined scope's
// demangled linkage name, else its name. "" when `at` is in no inlined code
// (the symbol table then names the function, qualified) or without debug
// information.
std::string InlinedFunction(Dwfl_Module* module, Dwarf_Addr at) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(module, at, &bias);
  if (cu == nullptr) return "";
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes(cu, at - bias, &scopes);
  std::string out;
  for (int i = 0; i < n && out.empty(); ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_subprogram) break;  // not inlined
    if (tag != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute attribute;
    for (int name : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
      const char* linkage =
          dwarf_formstring(dwarf_attr_integrate(&scopes[i], name, &attribute));
      if (linkage != nullptr) {
        out = Demangled(linkage);
        break;
      }
    }
    if (out.empty()) {
      const char* plain = dwarf_formstring(
          dwarf_attr_integrate(&scopes[i], DW_AT_name, &attribute));
      if (plain != nullptr) out = plain;
    }
  }
  free(scopes);
  return out;
}

absl::string_view Basename(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

// One object file reported to its own libdwfl session, at its file
// addresses (bias 0).
struct CallsiteSymbolizer::Object {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  ~Object() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

CallsiteSymbolizer::CallsiteSymbolizer() = default;
CallsiteSymbolizer::~CallsiteSymbolizer() = default;

CallsiteSymbolizer::Object* CallsiteSymbolizer::ObjectFor(
    const Identity& identity) {
  auto it = objects_.find(identity);
  if (it != objects_.end()) return it->second.get();
  if (objects_.size() >= kMaxObjects) objects_.clear();
  auto object = std::make_unique<Object>();
  const std::string& path = std::get<4>(identity);
  // O_NONBLOCK: checked to be a regular file below, but it may have been
  // swapped for a FIFO since the stat; opening one must not hang the agent.
  const int fd =
      open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_ino) == std::get<1>(identity)) {
    ++objects_read_;
    object->dwfl = dwfl_begin(&kOfflineCallbacks);
    if (object->dwfl != nullptr) {
      dwfl_report_begin(object->dwfl);
      // Takes the fd on success. Base 0 added to the first segment's
      // p_vaddr: the module sits at its file addresses, whether the file
      // is an executable or a shared object.
      object->module = dwfl_report_elf(object->dwfl, path.c_str(), path.c_str(),
                                       fd, 0, true);
      dwfl_report_end(object->dwfl, nullptr, nullptr);
      if (object->module == nullptr) close(fd);
    } else {
      close(fd);
    }
  } else if (fd >= 0) {
    close(fd);
  }
  Object* out = object.get();
  objects_.emplace(identity, std::move(object));
  return out;
}

std::string CallsiteSymbolizer::Symbolize(absl::string_view raw) {
  const size_t plus = raw.rfind("+0x");
  if (plus == absl::string_view::npos || plus == 0 || raw[0] != '/' ||
      raw.find('\0') != absl::string_view::npos) {
    return "";
  }
  const absl::string_view hex = raw.substr(plus + 3);
  uint64_t address = 0;
  if (hex.empty() || hex.size() > 16 || !absl::SimpleHexAtoi(hex, &address) ||
      address == 0) {
    return "";
  }
  const std::string path(raw.substr(0, plus));
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return std::string(raw);
  }
  Identity identity{
      static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
      static_cast<int64_t>(st.st_size),
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
      path};
  auto key = std::make_pair(identity, address);
  auto found = results_.find(key);
  if (found != results_.end()) return found->second;
  if (results_.size() >= kMaxResults) results_.clear();

  std::string out(raw);
  Object* object = ObjectFor(identity);
  if (object->module != nullptr) {
    // The call instruction ends at the return address: look up its last
    // byte, as addr2line users do with return addresses.
    const Dwarf_Addr at = address - 1;
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char* name = dwfl_module_addrinfo(object->module, at, &offset,
                                            &symbol, nullptr, nullptr, nullptr);
    Dwfl_Line* line = dwfl_module_getsrc(object->module, at);
    int line_number = 0;
    const char* file = line == nullptr
                           ? nullptr
                           : dwfl_lineinfo(line, nullptr, &line_number, nullptr,
                                           nullptr, nullptr);
    if (file != nullptr && line_number > 0) {
      std::string function = InlinedFunction(object->module, at);
      if (function.empty() && name != nullptr) function = Demangled(name);
      out = function.empty()
                ? absl::StrCat(file, ":", line_number)
                : absl::StrCat(function, " at ", file, ":", line_number);
    } else if (name != nullptr) {
      out = absl::StrCat(Demangled(name), "+0x", absl::Hex(offset + 1), " in ",
                         Basename(path));
    }
  }
  results_.emplace(std::move(key), out);
  return out;
}

}  // namespace meridian
