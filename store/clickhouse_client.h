// ClickHouseClient: statements to a ClickHouse server over its HTTP
// interface (libcurl, Debian's libcurl4-openssl-dev), for the ClickHouse
// store (issue 22). Works with Debian 12's ClickHouse 18.16 and current
// releases: only the HTTP interface's oldest features are used (the
// statement as the POST body or the `query` parameter with the data as the
// body, `database`, HTTP Basic authentication, errors as a non-200 status
// with the message as the body).
//
// Example:
//   auto client = ClickHouseClient::Connect({"127.0.0.1", 8123, "meridian",
//                                            "default", ""});
//   client->Execute("CREATE TABLE t (x Int64) ENGINE = MergeTree ORDER BY x");
//   RowBinaryWriter rows; rows.Int64(1); rows.Int64(2);   // row_binary.h
//   client->InsertRowBinary("t", rows.bytes());
//   client->Query("SELECT sum(x) FROM t");  // "3\n"
//
// Thread safety: one client per thread (a libcurl easy handle).
#ifndef MERIDIAN_STORE_CLICKHOUSE_CLIENT_H_
#define MERIDIAN_STORE_CLICKHOUSE_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace meridian {

struct ClickHouseEndpoint {
  std::string host = "127.0.0.1";
  int port = 8123;  // the HTTP interface's
  std::string database = "default";
  std::string user = "default";
  std::string password;  // from a file or the environment, never argv
};

class ClickHouseRows;

class ClickHouseClient {
 public:
  // A client for `endpoint`; nothing is sent yet.
  static absl::StatusOr<std::unique_ptr<ClickHouseClient>> Connect(
      const ClickHouseEndpoint& endpoint);
  ~ClickHouseClient();

  // A statement without a result (CREATE, DROP, ALTER...).
  absl::Status Execute(absl::string_view sql);
  // A statement's result as ClickHouse writes it (TabSeparated unless the
  // statement says FORMAT).
  absl::StatusOr<std::string> Query(absl::string_view sql);
  // `rows` (RowBinary, row_binary.h: the table's columns in order) into
  // `table`. ClickHouse stores one INSERT of fewer than a million rows as
  // one block: all of it or none.
  absl::Status InsertRowBinary(absl::string_view table, absl::string_view rows);
  // A SELECT's result read as it arrives (ClickHouseRows), for results too
  // large to hold: memory keeps only what the reader has not consumed. It
  // has its own connection; the client stays free for other statements.
  absl::StatusOr<std::unique_ptr<ClickHouseRows>> Stream(absl::string_view sql);

  // Errors: UNAVAILABLE naming the address if the server does not answer;
  // INVALID_ARGUMENT with ClickHouse's own message (its first line) if it
  // refuses the statement; UNAUTHENTICATED if it refuses the user.

 private:
  explicit ClickHouseClient(ClickHouseEndpoint endpoint);
  absl::StatusOr<std::string> Post(const std::string& url,
                                   absl::string_view body);
  std::string Url(absl::string_view query) const;
  // The error a transfer's libcurl code, HTTP status and body make, if any.
  absl::Status Outcome(int curl_code, long status,
                       const std::string& response) const;
  friend class ClickHouseRows;

  ClickHouseEndpoint endpoint_;
  void* curl_ = nullptr;  // CURL*
};

// A result being received (ClickHouseClient::Stream).
class ClickHouseRows {
 public:
  ~ClickHouseRows();
  // The bytes received and not consumed: at least `n` of them, unless the
  // result ends first (then all that is left: empty at its end). The errors
  // of ClickHouseClient's statements if the transfer fails.
  absl::StatusOr<absl::string_view> Fill(size_t n);
  void Consume(size_t n);
  // Whether the whole result has arrived.
  bool ended() const { return done_; }

 private:
  friend class ClickHouseClient;
  ClickHouseRows() = default;
  const ClickHouseClient* client_ = nullptr;
  std::string body_;  // the statement: libcurl reads it during the transfer
  std::string credentials_;
  std::string buffer_;
  size_t at_ = 0;
  bool done_ = false;
  void* easy_ = nullptr;   // CURL*
  void* multi_ = nullptr;  // CURLM*
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_CLICKHOUSE_CLIENT_H_
