// FileText: a file's whole content, read as bytes: "" if it cannot be read
// (a test says what it expects of that). For tests, which read test data,
// documents and the files a program under test wrote.
#ifndef MERIDIAN_TESTING_FILE_TEXT_H_
#define MERIDIAN_TESTING_FILE_TEXT_H_

#include <fstream>
#include <sstream>
#include <string>

namespace meridian {

inline std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace meridian

#endif  // MERIDIAN_TESTING_FILE_TEXT_H_
