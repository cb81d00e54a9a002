// CallsiteSymbolizer: turns a call site as the probe records it
// ("<object path>+0x<hex file address of the return address>",
// capture/probe/callsite.h) into what addr2line -f would say of the call
// instruction, using the system's libdw (elfutils) on the object file on
// this node:
//   "solve at src/solver.c:142"         symbol and line (DWARF)
//   "solve+0x2c in libsolver.so"        symbol only (no debug information)
//   "/opt/app/bin/prog+0x11c9"          neither, or the object cannot be
//                                       read (the raw call site)
// C++ symbols are demangled. Function and line are the innermost at the
// call, as addr2line -f -i prints first: a call inlined from solve() into
// main() is "solve() at ...", with solve's line.
//
// The raw string comes from a traced process (another program, untrusted):
// the path must be absolute and name a regular file (a FIFO or device is
// never opened), the address must be hex; otherwise Symbolize returns "".
// Objects are opened as the agent's user, which is the traced process's
// (the agent serves its own user only).
//
// Costs: an object is read once (libdw maps it and parses its DWARF on the
// first lookup); results are cached by the object's identity (device,
// inode, size, modification time: a rebuilt program is read again) and
// address. Both caches are bounded (kMaxObjects, kMaxResults; when full,
// emptied). Not thread-safe: the agent's loop owns it.
#ifndef MERIDIAN_AGENT_CALLSITE_SYMBOLIZER_H_
#define MERIDIAN_AGENT_CALLSITE_SYMBOLIZER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "absl/strings/string_view.h"

namespace meridian {

class CallsiteSymbolizer {
 public:
  static constexpr size_t kMaxObjects = 64;
  static constexpr size_t kMaxResults = 1 << 16;

  CallsiteSymbolizer();
  ~CallsiteSymbolizer();
  CallsiteSymbolizer(const CallsiteSymbolizer&) = delete;
  CallsiteSymbolizer& operator=(const CallsiteSymbolizer&) = delete;

  // See above; "" if `raw` is not a call site.
  std::string Symbolize(absl::string_view raw);

  // Objects read so far (each read costs a parse): for tests.
  uint64_t objects_read() const { return objects_read_; }

 private:
  // (device, inode, size, mtime ns, path).
  using Identity =
      std::tuple<uint64_t, uint64_t, int64_t, int64_t, std::string>;
  struct Object;

  Object* ObjectFor(const Identity& identity);

  std::map<Identity, std::unique_ptr<Object>> objects_;
  std::map<std::pair<Identity, uint64_t>, std::string> results_;
  uint64_t objects_read_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_CALLSITE_SYMBOLIZER_H_
