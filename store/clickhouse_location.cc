// Where a ClickHouse store is: clickhouse://HOST[:PORT][/DB][?cluster=...]
// read into an endpoint and a layout (clickhouse_store.h).
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "store/clickhouse_store.h"

namespace meridian {
namespace {

// A database, cluster or table name: letters, digits and _, 1 to 64.
bool IsName(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// The parameters after '?': cluster=NAME&shards=DATABASE, both or neither.
absl::Status ParseLayout(absl::string_view parameters,
                         ClickHouseLayout* layout) {
  for (absl::string_view pair : absl::StrSplit(parameters, '&')) {
    const size_t equals = pair.find('=');
    const absl::string_view key = pair.substr(0, equals);
    const std::string value = equals == absl::string_view::npos
                                  ? std::string()
                                  : std::string(pair.substr(equals + 1));
    if (!IsName(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClickHouse location: \"", pair,
                       "\": cluster=NAME and shards=DATABASE, names of "
                       "letters, digits and _"));
    }
    if (key == "cluster") {
      layout->cluster = value;
    } else if (key == "shards") {
      layout->shards = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "ClickHouse location: unknown parameter \"", key,
          "\" (cluster=NAME&shards=DATABASE make a Distributed store)"));
    }
  }
  if (layout->cluster.empty() != layout->shards.empty()) {
    return absl::InvalidArgumentError(
        "ClickHouse location: cluster= and shards= go together");
  }
  return absl::OkStatus();
}

// HOST[:PORT][/DATABASE], no user or password.
absl::Status ParseAddress(absl::string_view rest,
                          ClickHouseEndpoint* endpoint) {
  if (rest.find('@') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "a ClickHouse store's location carries no user or password (command "
        "lines are visible to every user of the machine): set "
        "MERIDIAN_CLICKHOUSE_CREDENTIALS to a file holding USER:PASSWORD, or "
        "MERIDIAN_CLICKHOUSE_USER and MERIDIAN_CLICKHOUSE_PASSWORD");
  }
  const size_t slash = rest.find('/');
  absl::string_view host_port = rest.substr(0, slash);
  if (slash != absl::string_view::npos && slash + 1 < rest.size()) {
    endpoint->database = std::string(rest.substr(slash + 1));
  }
  if (!IsName(endpoint->database)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClickHouse database \"", endpoint->database,
                     "\": letters, digits and _ only, at most 64"));
  }
  const size_t colon = host_port.rfind(':');
  endpoint->host = std::string(host_port.substr(0, colon));
  if (colon != absl::string_view::npos) {
    int port = 0;
    if (!absl::SimpleAtoi(host_port.substr(colon + 1), &port) || port < 1 ||
        port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClickHouse port \"", host_port.substr(colon + 1),
                       "\" is not 1 to 65535"));
    }
    endpoint->port = port;
  }
  if (endpoint->host.empty() ||
      !std::all_of(endpoint->host.begin(), endpoint->host.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '[' ||
               c == ']' || c == ':';
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClickHouse host \"", endpoint->host, "\" is not a name"));
  }
  return absl::OkStatus();
}

// The user and password: from MERIDIAN_CLICKHOUSE_CREDENTIALS's file
// (USER:PASSWORD, readable by its owner only) if set, else from
// MERIDIAN_CLICKHOUSE_USER and MERIDIAN_CLICKHOUSE_PASSWORD.
absl::Status ReadCredentials(ClickHouseEndpoint* endpoint) {
  if (const char* file = getenv("MERIDIAN_CLICKHOUSE_CREDENTIALS")) {
    struct stat st;
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MERIDIAN_CLICKHOUSE_CREDENTIALS: cannot read \"", file, "\""));
    }
    if ((st.st_mode & 077) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("MERIDIAN_CLICKHOUSE_CREDENTIALS: \"", file,
                       "\" may be read by other users (chmod 600 it)"));
    }
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    const size_t sep = line.find(':');
    if (!in || sep == std::string::npos || sep == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("MERIDIAN_CLICKHOUSE_CREDENTIALS: \"", file,
                       "\" does not start with a USER:PASSWORD line"));
    }
    endpoint->user = line.substr(0, sep);
    endpoint->password = line.substr(sep + 1);
    return absl::OkStatus();
  }
  if (const char* user = getenv("MERIDIAN_CLICKHOUSE_USER")) {
    endpoint->user = user;
  }
  if (const char* password = getenv("MERIDIAN_CLICKHOUSE_PASSWORD")) {
    endpoint->password = password;
  }
  return absl::OkStatus();
}

}  // namespace

bool IsClickHouseLocation(const std::string& location) {
  return absl::StartsWith(location, "clickhouse://");
}

absl::StatusOr<ClickHouseEndpoint> ParseClickHouseLocation(
    const std::string& location, ClickHouseLayout* layout) {
  if (!IsClickHouseLocation(location)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", location,
                     "\" is not a ClickHouse store (clickhouse://HOST"
                     "[:PORT][/DATABASE])"));
  }
  absl::string_view rest = absl::string_view(location).substr(13);
  ClickHouseLayout parsed_layout;
  if (const size_t question = rest.find('?');
      question != absl::string_view::npos) {
    absl::Status parsed =
        ParseLayout(rest.substr(question + 1), &parsed_layout);
    if (!parsed.ok()) return parsed;
    rest = rest.substr(0, question);
  }
  if (layout != nullptr) *layout = parsed_layout;
  ClickHouseEndpoint endpoint;
  endpoint.database = "meridian";
  absl::Status address = ParseAddress(rest, &endpoint);
  if (!address.ok()) return address;
  absl::Status credentials = ReadCredentials(&endpoint);
  if (!credentials.ok()) return credentials;
  return endpoint;
}

}  // namespace meridian
