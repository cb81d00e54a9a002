// CountOf (tests): how many times `what` occurs in `text`, overlaps
// included: what a test of a written file counts (events, edges).
#ifndef MERIDIAN_TESTING_TEXT_COUNT_H_
#define MERIDIAN_TESTING_TEXT_COUNT_H_

#include <string>

namespace meridian {

inline int CountOf(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace meridian

#endif  // MERIDIAN_TESTING_TEXT_COUNT_H_
