// An MPI program as Python runs one: the program itself links no MPI; it
// loads a library that does (tests/mpi_local_ext.cc) with RTLD_LOCAL, as
// Python loads extensions, so the MPI library is not in the global scope.
//
//   mpi_local_job LIBRARY    prints "mpi_local_job: N" (run_mpi's result)
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mpi_local_job LIBRARY\n");
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    fprintf(stderr, "mpi_local_job: %s\n", dlerror());
    return 1;
  }
  auto run_mpi = reinterpret_cast<double (*)()>(dlsym(library, "run_mpi"));
  if (run_mpi == nullptr) {
    fprintf(stderr, "mpi_local_job: %s\n", dlerror());
    return 1;
  }
  printf("mpi_local_job: %g\n", run_mpi());
  return 0;
}
