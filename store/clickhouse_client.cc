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

// Sets up `curl` to POST `body` (kept alive by the caller) to `url`, with
// the response appended to *response.
void SetUp(CURL* curl, const std::string& url, absl::string_view body,
           const std::string& credentials, std::string* response) {
  curl_easy_reset(curl);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
  curl_easy_setopt(curl, CURLOPT_USERPWD, credentials.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, response);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 600L);
}

}  // namespace

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
  // Inserts into a Distributed table reach the shards before they return
  // (the ClickHouse store's commit record must come after its rows); no
  // effect on other tables.
  std::string url =
      absl::StrCat("http://", endpoint_.host, ":", endpoint_.port,
                   "/?database=", Escaped(curl, endpoint_.database),
                   "&insert_distributed_sync=1");
  if (!query.empty()) absl::StrAppend(&url, "&query=", Escaped(curl, query));
  return url;
}

absl::StatusOr<std::string> ClickHouseClient::Post(const std::string& url,
                                                   absl::string_view body) {
  CURL* curl = static_cast<CURL*>(curl_);
  std::string response;
  const std::string credentials =
      absl::StrCat(endpoint_.user, ":", endpoint_.password);
  SetUp(curl, url, body, credentials, &response);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  absl::Status outcome = Outcome(rc, status, response);
  if (!outcome.ok()) return outcome;
  return response;
}

absl::Status ClickHouseClient::Outcome(int curl_code, long status,
                                       const std::string& response) const {
  const CURLcode rc = static_cast<CURLcode>(curl_code);
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("ClickHouse at ", endpoint_.host, ":", endpoint_.port,
                     " does not answer: ", curl_easy_strerror(rc)));
  }
  if (status == 200) return absl::OkStatus();
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

absl::Status ClickHouseClient::InsertRowBinary(absl::string_view table,
                                               absl::string_view rows) {
  return Post(Url(absl::StrCat("INSERT INTO ", table, " FORMAT RowBinary")),
              rows)
      .status();
}

absl::StatusOr<std::unique_ptr<ClickHouseRows>> ClickHouseClient::Stream(
    absl::string_view sql) {
  std::unique_ptr<ClickHouseRows> rows(new ClickHouseRows());
  rows->client_ = this;
  rows->body_ = std::string(sql);
  rows->credentials_ = absl::StrCat(endpoint_.user, ":", endpoint_.password);
  rows->easy_ = curl_easy_init();
  rows->multi_ = curl_multi_init();
  if (rows->easy_ == nullptr || rows->multi_ == nullptr) {
    return absl::InternalError("libcurl could not make a handle");
  }
  const std::string url = Url("");
  SetUp(static_cast<CURL*>(rows->easy_), url, rows->body_, rows->credentials_,
        &rows->buffer_);
  curl_multi_add_handle(static_cast<CURLM*>(rows->multi_),
                        static_cast<CURL*>(rows->easy_));
  return rows;
}

ClickHouseRows::~ClickHouseRows() {
  if (multi_ != nullptr && easy_ != nullptr) {
    curl_multi_remove_handle(static_cast<CURLM*>(multi_),
                             static_cast<CURL*>(easy_));
  }
  if (easy_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(easy_));
  if (multi_ != nullptr) curl_multi_cleanup(static_cast<CURLM*>(multi_));
}

absl::StatusOr<absl::string_view> ClickHouseRows::Fill(size_t n) {
  CURLM* multi = static_cast<CURLM*>(multi_);
  CURL* easy = static_cast<CURL*>(easy_);
  long status = 0;
  while (!done_) {
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    // An error's body is its message: it is read whole.
    const bool error = status != 0 && status != 200;
    if (!error && buffer_.size() - at_ >= n) break;
    int running = 0;
    if (curl_multi_perform(multi, &running) != CURLM_OK) {
      return absl::InternalError("libcurl failed to receive a result");
    }
    if (running == 0) {
      done_ = true;
      int left = 0;
      CURLcode rc = CURLE_OK;
      while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
        if (message->msg == CURLMSG_DONE) rc = message->data.result;
      }
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      absl::Status outcome = client_->Outcome(rc, status, buffer_);
      if (!outcome.ok()) return outcome;
      break;
    }
    if (buffer_.size() - at_ < n || error) {
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
  }
  return absl::string_view(buffer_).substr(at_);
}

void ClickHouseRows::Consume(size_t n) {
  at_ += n;
  // What was read is dropped once it is most of the buffer.
  if (at_ > (1 << 20) && at_ > buffer_.size() / 2) {
    buffer_.erase(0, at_);
    at_ = 0;
  }
}

}  // namespace meridian
