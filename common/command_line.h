// CommandLine: the flags and arguments of Meridian's programs.
//
// Accepts `--name VALUE`, `--name=VALUE` for value flags and `--name` for
// switches; a flag may repeat (GetAll). `-h` is `--help` where "help" is a
// switch. Everything after `--` is positional, as are words that do not
// start with `--`. An unknown flag or a value flag without a value is
// INVALID_ARGUMENT naming it.
//
// The `meridian` CLI parses with CLI11 (cli/command_parse.h) and hands its
// commands the result as a CommandLine made by FromValues.
#ifndef MERIDIAN_COMMON_COMMAND_LINE_H_
#define MERIDIAN_COMMON_COMMAND_LINE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meridian {

class CommandLine {
 public:
  // Parses args[first..]. `value_flags` and `switches` are names without
  // the leading dashes.
  static absl::StatusOr<CommandLine> Parse(
      const std::vector<std::string>& args, size_t first,
      const std::vector<std::string>& value_flags,
      const std::vector<std::string>& switches);

  // The flags given (name without dashes -> each value given, "" for a
  // switch) and the positional arguments, as another parser found them.
  static CommandLine FromValues(
      std::map<std::string, std::vector<std::string>> values,
      std::vector<std::string> positional);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given, or `fallback`.
  std::string Get(const std::string& name,
                  const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  // The last value as an integer; INVALID_ARGUMENT naming the flag if it is
  // not one.
  absl::StatusOr<int64_t> GetInt(const std::string& name,
                                 int64_t fallback) const;

  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace meridian

#endif  // MERIDIAN_COMMON_COMMAND_LINE_H_
