// A Fortran CHARACTER(*) argument as a C string, for the Fortran wrappers
// of both MPI families (mpi_fortran.cc, mpi_fortran_f08_mpich.cc).
// gfortran passes the text blank-padded, without a NUL, and its length as
// a hidden argument after the last parameter. The trailing blanks are cut,
// as the MPIs' own bindings do; the copy lives in the caller's buffer, so
// nothing is allocated. Text of `size` bytes or more is cut at size - 1
// (for a file name of PATH_MAX bytes or more MPI then refuses it).
//
// Example: "data.bin   " with length 11 -> "data.bin".
#ifndef MERIDIAN_CAPTURE_PROBE_FORTRAN_STRING_H_
#define MERIDIAN_CAPTURE_PROBE_FORTRAN_STRING_H_

#include <cstddef>
#include <cstring>

namespace meridian {

// `out` (of `size` > 0 bytes) holds `text` trimmed; returns out.
inline const char* FortranString(const char* text, size_t length, char* out,
                                 size_t size) {
  size_t n = text == nullptr ? 0 : length;
  while (n > 0 && text[n - 1] == ' ') --n;
  if (n >= size) n = size - 1;
  if (n > 0) memcpy(out, text, n);
  out[n] = '\0';
  return out;
}

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_FORTRAN_STRING_H_
