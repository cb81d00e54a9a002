#include "common/command_line.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace meridian {

absl::StatusOr<CommandLine> CommandLine::Parse(
    const std::vector<std::string>& args, size_t first,
    const std::vector<std::string>& value_flags,
    const std::vector<std::string>& switches) {
  auto known = [](const std::vector<std::string>& names,
                  const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  CommandLine line;
  for (size_t i = first; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      line.positional_.insert(line.positional_.end(), args.begin() + i + 1,
                              args.end());
      break;
    }
    if (arg == "-h" && known(switches, "help")) {
      line.values_["help"].push_back("");
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      line.positional_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (known(switches, name)) {
      if (value) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " takes no value"));
      }
      line.values_[name].push_back("");
    } else if (known(value_flags, name)) {
      if (!value) {
        if (i + 1 >= args.size()) {
          return absl::InvalidArgumentError(
              absl::StrCat("--", name, " needs a value"));
        }
        value = args[++i];
      }
      line.values_[name].push_back(*value);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, "; see --help"));
    }
  }
  return line;
}

CommandLine CommandLine::FromValues(
    std::map<std::string, std::vector<std::string>> values,
    std::vector<std::string> positional) {
  CommandLine line;
  line.values_ = std::move(values);
  line.positional_ = std::move(positional);
  return line;
}

std::string CommandLine::Get(const std::string& name,
                             const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> CommandLine::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

absl::StatusOr<int64_t> CommandLine::GetInt(const std::string& name,
                                            int64_t fallback) const {
  if (!Has(name)) return fallback;
  int64_t value;
  if (!absl::SimpleAtoi(Get(name), &value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " wants an integer, not \"", Get(name), "\""));
  }
  return value;
}

}  // namespace meridian
