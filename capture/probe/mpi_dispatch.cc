#include "capture/probe/mpi_dispatch.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "capture/probe/mpi_family_choice.h"
#include "capture/probe/probe_runtime.h"

namespace meridian {
namespace mpi {

std::atomic<void*> g_mpi_targets[kMpiSymbolCount];

namespace {

const char* const kSymbolNames[kMpiSymbolCount] = {
#define MERIDIAN_C_NAME(name, count) #name,
#define MERIDIAN_F_NAME(name, lower, UPPER, count) #name,
#define MERIDIAN_F_NAMES(lower, UPPER, count) \
  MERIDIAN_MPI_FORTRAN_NAMES(MERIDIAN_F_NAME, lower, UPPER, count)
    MERIDIAN_MPI_C_FUNCTIONS(MERIDIAN_C_NAME)
        MERIDIAN_MPI_FORTRAN_FUNCTIONS(MERIDIAN_F_NAMES)
#undef MERIDIAN_F_NAMES
#undef MERIDIAN_F_NAME
#undef MERIDIAN_C_NAME
};

pthread_once_t g_once = PTHREAD_ONCE_INIT;

// One write(2), so that the lines of ranks sharing a stderr pipe do not
// interleave (a pipe keeps writes of up to PIPE_BUF bytes whole).
void Say(const char* a, const char* b = "", const char* c = "") {
  char line[1024];
  size_t n = 0;
  for (const char* part : {a, b, c}) {
    const size_t length = std::min(strlen(part), sizeof(line) - n);
    memcpy(line + n, part, length);
    n += length;
  }
  (void)!write(2, line, n);
}

// What an entry is when no loaded library defines its name. Only reached
// if the program calls a function its own MPI library lacks (without the
// probe, the dynamic loader would have stopped it the same way).
[[noreturn]] void MissingMpiFunction() {
  Say("meridian: an MPI function was called that no library in this "
      "process defines\n");
  abort();
}

bool DefinedGlobally(const char* symbol, void*) {
  return dlsym(RTLD_DEFAULT, symbol) != nullptr;
}

// Makes the object that defines `symbol` global, if a loaded object's
// dependencies hold one (step 1 of mpi_dispatch.h). Its handle is kept:
// the library stays as loaded as the program made it.
void MakeGlobal(const char* symbol) {
  if (dlsym(RTLD_DEFAULT, symbol) != nullptr) return;
  void* program = dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
  link_map* map = nullptr;
  if (program == nullptr || dlinfo(program, RTLD_DI_LINKMAP, &map) != 0) {
    return;
  }
  for (; map != nullptr; map = map->l_next) {
    if (map->l_name == nullptr || map->l_name[0] == '\0') continue;
    void* object = dlopen(map->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (object == nullptr) continue;
    void* address = dlsym(object, symbol);
    Dl_info definer;
    const bool found = address != nullptr && dladdr(address, &definer) != 0 &&
                       definer.dli_fname != nullptr;
    if (found) dlopen(definer.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL);
    dlclose(object);
    if (found) return;
  }
}

// Opens `file` beside this library: in its directory as loaded, else in
// the directory its links resolve to (bazel's runfiles, an install with
// symbolic links).
void* OpenBesideProbe(const char* file) {
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&ResolveMpiTarget), &self) == 0) {
    return nullptr;
  }
  char path[PATH_MAX];
  if (LibraryBesideProbe(self.dli_fname, file, path, sizeof(path))) {
    if (void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return library;
  }
  char resolved[PATH_MAX];
  if (self.dli_fname == nullptr ||
      realpath(self.dli_fname, resolved) == nullptr ||
      !LibraryBesideProbe(resolved, file, path, sizeof(path))) {
    return nullptr;
  }
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

// The family library's table, or null with the reason in `*why`.
const MpiFamilyTable* LoadFamily(const char* library, const char** why) {
  void* handle = strchr(library, '/') != nullptr
                     ? dlopen(library, RTLD_NOW | RTLD_LOCAL)
                     : OpenBesideProbe(library);
  if (handle == nullptr) {
    const char* error = dlerror();
    *why = error != nullptr ? error : library;
    return nullptr;
  }
  using EntryPoint = const MpiFamilyTable* (*)();
  auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, kFamilyEntryPoint));
  const MpiFamilyTable* table = entry == nullptr ? nullptr : entry();
  if (table == nullptr || table->list_hash != kMpiSymbolListHash ||
      table->count != kMpiSymbolCount) {
    *why = "its MPI family library is not from this build of the probe";
    dlclose(handle);
    return nullptr;
  }
  return table;
}

void FillTargets() {
  // Also when the probe is disabled: the MPI functions it passes calls on
  // to are found in the global scope.
  MakeGlobal("PMPI_Init");   // C
  MakeGlobal("pmpi_init_");  // the MPI library's Fortran bindings
  const MpiFamilyTable* table = nullptr;
  if (probe::g_event.enabled) {
    const FamilyChoice choice =
        ChooseFamilyLibrary(getenv("MERIDIAN_MPI_WRAPPERS"),
                            DetectFamily(&DefinedGlobally, nullptr));
    const char* why = choice.why;
    if (choice.library != nullptr) table = LoadFamily(choice.library, &why);
    if (table == nullptr && why != nullptr) {
      Say("meridian: MPI calls of this process are not recorded: ", why,
          " (docs/agent.md, MPI libraries)\n");
    }
  }
  for (int i = 0; i < kMpiSymbolCount; ++i) {
    void* target = table != nullptr ? table->entries[i] : nullptr;
    if (target == nullptr) target = dlsym(RTLD_NEXT, kSymbolNames[i]);
    if (target == nullptr)
      target = reinterpret_cast<void*>(&MissingMpiFunction);
    g_mpi_targets[i].store(target, std::memory_order_release);
  }
}

}  // namespace

void* ResolveMpiTarget(int index) {
  pthread_once(&g_once, FillTargets);
  return g_mpi_targets[index].load(std::memory_order_acquire);
}

}  // namespace mpi
}  // namespace meridian
