// Runfile: the absolute path of a file of the build that a test depends on
// (its `data`), for a test run by `bazel test`: it runs in its runfiles
// tree, the workspace's files below its working directory. Tests.
//
//   Runfile("agent/meridian-agent") -> ".../meridian/agent/meridian-agent"
#ifndef MERIDIAN_TESTING_RUNFILE_H_
#define MERIDIAN_TESTING_RUNFILE_H_

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace meridian {

inline std::string Runfile(const std::string& path) {
  char* cwd = getcwd(nullptr, 0);
  std::string full = std::string(cwd != nullptr ? cwd : ".") + "/" + path;
  free(cwd);
  return full;
}

}  // namespace meridian

#endif  // MERIDIAN_TESTING_RUNFILE_H_
