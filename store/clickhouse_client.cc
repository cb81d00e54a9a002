#include "store/clickhouse_client.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

size_t Append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

std::string Escaped(CURL* curl, absl::string_view text) {
  char* escaped =
      curl_easy_escape(curl, text.data(), static_cast<int>(text.size()));
  std::string out = escaped != nullptr ? escaped : "";
  curl_free(escaped);
  return out;
}

}  // namespace

std::string TabSeparatedEscape(absl::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (char c : field) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out += c;
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ClickHouseClient>> ClickHouseClient::Connect(
    const ClickHouseEndpoint& endpoint) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::unique_ptr<ClickHouseClient> client(new ClickHouseClient(endpoint));
  client->curl_ = curl_easy_init();
  if (client->curl_ == nullptr) {
    return absl::InternalError("libcurl could not make a handle");
  }
  return client;
}

ClickHouseClient::ClickHouseClient(ClickHouseEndpoint endpoint)
    : endpoint_(std::move(endpoint)) {}

ClickHouseClient::~ClickHouseClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

std::string ClickHouseClient::Url(absl::string_view query) const {
  CURL* curl = static_cast<CURL*>(curl_);
  std::string url =
      absl::StrCat("http://", endpoint_.host, ":", endpoint_.port,
                   "/?database=", Escaped(curl, endpoint_.database));
  if (!query.empty()) absl::StrAppend(&url, "&query=", Escaped(curl, query));
  return url;
}

absl::StatusOr<std::string> ClickHouseClient::Post(const std::string& url,
                                                   absl::string_view body) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  std::string response;
  const std::string credentials =
      absl::StrCat(endpoint_.user, ":", endpoint_.password);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
  curl_easy_setopt(curl, CURLOPT_USERPWD, credentials.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 600L);
  const CURLcode rc = curl_easy_perform(curl);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("ClickHouse at ", endpoint_.host, ":", endpoint_.port,
                     " does not answer: ", curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (status == 200) return response;
  const std::string message = response.substr(0, response.find('\n'));
  // 192: unknown user, 193: wrong password, 516: authentication failed.
  if (status == 401 || status == 403 ||
      absl::StartsWith(message, "Code: 192") ||
      absl::StartsWith(message, "Code: 193") ||
      absl::StartsWith(message, "Code: 516")) {
    return absl::UnauthenticatedError(absl::StrCat(
        "ClickHouse refused user ", endpoint_.user, ": ", message));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("ClickHouse (HTTP ", status, "): ", message));
}

absl::Status ClickHouseClient::Execute(absl::string_view sql) {
  return Post(Url(""), sql).status();
}

absl::StatusOr<std::string> ClickHouseClient::Query(absl::string_view sql) {
  return Post(Url(""), sql);
}

absl::Status ClickHouseClient::Insert(absl::string_view table,
                                      absl::string_view rows) {
  return Post(Url(absl::StrCat("INSERT INTO ", table, " FORMAT TabSeparated")),
              rows)
      .status();
}

}  // namespace meridian
