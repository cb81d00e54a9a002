#include "capture/probe/mpi_family_choice.h"

#include <cstring>

namespace meridian {
namespace mpi {

namespace {

constexpr char kOpenMpiLibrary[] = "libmeridian_mpi_openmpi.so";
constexpr char kMpichLibrary[] = "libmeridian_mpi_mpich.so";

}  // namespace

MpiFamily DetectFamily(bool (*defined)(const char* symbol, void* context),
                       void* context) {
  const bool open_mpi = defined("ompi_mpi_comm_world", context);
  const bool mpich = defined("MPIR_Err_create_code", context);
  if (open_mpi && mpich) return MpiFamily::kBoth;
  if (open_mpi) return MpiFamily::kOpenMpi;
  if (mpich) return MpiFamily::kMpich;
  return MpiFamily::kNone;
}

FamilyChoice ChooseFamilyLibrary(const char* override_value,
                                 MpiFamily detected) {
  if (override_value != nullptr && *override_value != '\0') {
    if (strcmp(override_value, "none") == 0) return {nullptr, nullptr};
    if (strcmp(override_value, "openmpi") == 0)
      return {kOpenMpiLibrary, nullptr};
    if (strcmp(override_value, "mpich") == 0) return {kMpichLibrary, nullptr};
    if (strchr(override_value, '/') != nullptr)
      return {override_value, nullptr};
    return {nullptr,
            "MERIDIAN_MPI_WRAPPERS is neither openmpi, mpich, none nor a path "
            "to a library"};
  }
  switch (detected) {
    case MpiFamily::kOpenMpi:
      return {kOpenMpiLibrary, nullptr};
    case MpiFamily::kMpich:
      return {kMpichLibrary, nullptr};
    case MpiFamily::kBoth:
      return {nullptr,
              "both Open MPI and an MPICH-family MPI are loaded; set "
              "MERIDIAN_MPI_WRAPPERS=openmpi or mpich to choose"};
    case MpiFamily::kNone:
      break;
  }
  return {nullptr,
          "its MPI library is neither Open MPI nor of the MPICH family (set "
          "MERIDIAN_MPI_WRAPPERS=openmpi or mpich if its ABI is one of "
          "theirs)"};
}

bool LibraryBesideProbe(const char* probe_path, const char* file, char* out,
                        size_t size) {
  const char* slash =
      probe_path == nullptr ? nullptr : strrchr(probe_path, '/');
  const size_t dir = slash == nullptr ? 0 : slash - probe_path + 1;
  const size_t name = strlen(file);
  if (dir + name + 1 > size) return false;
  memcpy(out, probe_path, dir);
  memcpy(out + dir, file, name + 1);
  return true;
}

}  // namespace mpi
}  // namespace meridian
