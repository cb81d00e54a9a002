// chdb_front (tests): a current ClickHouse (the engine chDB ships as
// libchdb.so, 26.7) behind ClickHouse's HTTP interface, for running the
// ClickHouse store's tests against a current release where only Debian's
// 18.16 server can be installed (testing/clickhouse_server.h starts it when
// MERIDIAN_CLICKHOUSE_CHDB names the library).
//
//   chdb_front LIBCHDB DIR PORT   (user and password from the
//   environment: MERIDIAN_CHDB_FRONT_USER, MERIDIAN_CHDB_FRONT_PASSWORD)
//
// What is ClickHouse's own: parsing, planning and running every statement
// (the analyzer, MergeTree, mutations, formats, settings), its error
// messages, and the data on disk under DIR/data (kept across a SIGKILL).
// What is this front's, as ClickHouse's HTTP handler does it: a request is
// a POST of `/?database=D&query=Q&SETTING=V...` whose statement is Q, a
// newline and the body (or the body alone); settings apply to it; the
// result is TabSeparated unless it says FORMAT; an error is a non-200
// status with ClickHouse's message as the body (an insert's body is passed
// as a file under DIR/inserts, see Serve). HTTP Basic credentials are
// checked here (ClickHouse's user management is not exercised). One
// statement runs at a time (the URL's settings are set for it, then reset);
// each connection gets one request
// (`Connection: close`). Not here: the native (TCP) port, so no cluster.
// The HTTP is by hand, not civetweb's (the collector's web page server):
// civetweb in one process with libchdb accepted connections and never
// answered them (tried; not diagnosed).
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"

namespace {

// libchdb's C API (chdb.h), as it loads.
using Connect = void** (*)(int, char**);
using QueryN = void* (*)(void*, const char*, size_t, const char*, size_t);
using ResultError = const char* (*)(void*);
using ResultBuffer = char* (*)(void*);
using ResultLength = size_t (*)(void*);
using DestroyResult = void (*)(void*);

struct Chdb {
  void* connection = nullptr;
  QueryN query = nullptr;
  ResultError error = nullptr;
  ResultBuffer buffer = nullptr;
  ResultLength length = nullptr;
  DestroyResult destroy = nullptr;
  std::mutex mu;  // one statement at a time

  // Runs `sql`; true with its output, or false with ClickHouse's message.
  bool Run(const std::string& sql, std::string* out) {
    void* result =
        query(connection, sql.data(), sql.size(), "TabSeparated", 12);
    const char* message = error(result);
    if (message != nullptr) {
      *out = message;
      if (out->empty() || out->back() != '\n') out->push_back('\n');
      destroy(result);
      return false;
    }
    const char* data = buffer(result);
    out->assign(data != nullptr ? data : "",
                data != nullptr ? length(result) : 0);
    destroy(result);
    return true;
  }
};

std::string Decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() &&
               isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out.push_back(
          static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

bool WriteAll(int fd, const std::string& data) {
  size_t at = 0;
  while (at < data.size()) {
    const ssize_t n = write(fd, data.data() + at, data.size() - at);
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

void Reply(int fd, int status, const char* reason, const std::string& body) {
  char head[160];
  snprintf(head, sizeof head,
           "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nContent-Type: "
           "text/plain\r\nConnection: close\r\n\r\n",
           status, reason, body.size());
  if (WriteAll(fd, head)) WriteAll(fd, body);
}

// `text` as a ClickHouse identifier (quote '`') or string literal ('\'').
std::string Quoted(const std::string& text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back(quote);
  return out;
}

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(toupper(c));
  return text;
}

constexpr size_t kMaxHead = 64 << 10;
std::string insert_dir;  // bodies spooled for FROM INFILE
std::atomic<uint64_t> inserts{0};
constexpr size_t kMaxBody = size_t{1} << 31;

void Serve(int fd, Chdb* chdb, const std::string& authorization) {
  std::string data;
  char chunk[65536];
  size_t head_end = std::string::npos;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    if (data.size() > kMaxHead) return Reply(fd, 431, "Too Large", "");
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) return;
    data.append(chunk, static_cast<size_t>(n));
  }
  const std::string head = data.substr(0, head_end);
  std::string body = data.substr(head_end + 4);
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  size_t length = 0;
  bool authorized = false, expect = false;
  for (size_t at = line_end; at != std::string::npos && at < head.size();) {
    const size_t next = head.find("\r\n", at + 2);
    const std::string field = head.substr(at + 2, next - at - 2);
    at = next;
    const size_t colon = field.find(':');
    if (colon == std::string::npos) continue;
    std::string name = field.substr(0, colon);
    for (char& c : name) c = static_cast<char>(tolower(c));
    std::string value = field.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    if (name == "content-length") length = strtoull(value.c_str(), nullptr, 10);
    if (name == "authorization") authorized = value == authorization;
    if (name == "expect") expect = true;
    if (name == "transfer-encoding") {
      return Reply(fd, 411, "Length Required", "chunked bodies: not here\n");
    }
  }
  if (length > kMaxBody) return Reply(fd, 413, "Too Large", "");
  if (expect && body.size() < length) {
    if (!WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return;
  }
  while (body.size() < length) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) return;
    body.append(chunk, static_cast<size_t>(n));
  }
  body.resize(length);
  if (!authorized) {
    return Reply(fd, 401, "Unauthorized",
                 "Code: 516. DB::Exception: Authentication failed: password "
                 "is incorrect, or there is no user with such name.\n");
  }
  // "POST /?a=b&c=d HTTP/1.1"
  const size_t question = line.find('?');
  const size_t space = line.rfind(' ');
  std::map<std::string, std::string> parameters;
  if (question != std::string::npos && space > question) {
    const std::string query = line.substr(question + 1, space - question - 1);
    for (size_t at = 0; at <= query.size();) {
      size_t end = query.find('&', at);
      if (end == std::string::npos) end = query.size();
      const std::string pair = query.substr(at, end - at);
      const size_t equals = pair.find('=');
      if (equals != std::string::npos) {
        parameters[Decode(pair.substr(0, equals))] =
            Decode(pair.substr(equals + 1));
      }
      at = end + 1;
    }
  }
  // ClickHouse's HTTP handler reads "query, newline, body" as one text. The
  // local client chDB runs ends an INSERT's inline data at its first
  // newline byte, which binary rows contain, so an insert's body is handed
  // over as a file instead (`FROM INFILE`, read by the same format parser).
  std::string statement = parameters["query"];
  const std::string upper = Upper(statement);
  const size_t format = upper.rfind(" FORMAT ");
  std::string file;
  if (upper.rfind("INSERT ", 0) == 0 && format != std::string::npos) {
    file = insert_dir + "/" + std::to_string(inserts++);
    FILE* out = fopen(file.c_str(), "wb");
    const bool written = out != nullptr && fwrite(body.data(), 1, body.size(),
                                                  out) == body.size();
    if (out != nullptr) fclose(out);
    if (!written) {
      unlink(file.c_str());
      return Reply(fd, 500, "Internal Server Error", "cannot spool the body\n");
    }
    statement.insert(format, " FROM INFILE '" + file + "'");
  } else {
    if (!statement.empty() && !body.empty()) statement.push_back('\n');
    statement += body;
  }
  std::string out;
  bool ok = true;
  {
    std::lock_guard<std::mutex> lock(chdb->mu);
    const std::string database =
        parameters.count("database") ? parameters["database"] : "default";
    ok = chdb->Run("USE " + Quoted(database, '`'), &out);
    // The URL's settings hold for this statement only (one session serves
    // every request): set, then back to their defaults.
    std::vector<std::string> set;
    for (const auto& [name, value] : parameters) {
      if (!ok || name == "query" || name == "database") continue;
      ok = chdb->Run("SET " + Quoted(name, '`') + " = " + Quoted(value, '\''),
                     &out);
      if (ok) set.push_back(name);
    }
    if (ok) ok = chdb->Run(statement, &out);
    std::string reset_out;
    for (const std::string& name : set) {
      chdb->Run("SET " + Quoted(name, '`') + " = DEFAULT", &reset_out);
    }
  }
  if (!file.empty()) unlink(file.c_str());
  if (ok) return Reply(fd, 200, "OK", out);
  Reply(fd, 500, "Internal Server Error", out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: chdb_front LIBCHDB DIR PORT\n");
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    fprintf(stderr, "chdb_front: %s\n", dlerror());
    return 1;
  }
  Chdb chdb;
  auto connect = reinterpret_cast<Connect>(dlsym(library, "chdb_connect"));
  chdb.query = reinterpret_cast<QueryN>(dlsym(library, "chdb_query_n"));
  chdb.error =
      reinterpret_cast<ResultError>(dlsym(library, "chdb_result_error"));
  chdb.buffer =
      reinterpret_cast<ResultBuffer>(dlsym(library, "chdb_result_buffer"));
  chdb.length =
      reinterpret_cast<ResultLength>(dlsym(library, "chdb_result_length"));
  chdb.destroy = reinterpret_cast<DestroyResult>(
      dlsym(library, "chdb_destroy_query_result"));
  if (connect == nullptr || chdb.query == nullptr || chdb.error == nullptr ||
      chdb.buffer == nullptr || chdb.length == nullptr ||
      chdb.destroy == nullptr) {
    fprintf(stderr, "chdb_front: %s lacks chDB's C API\n", argv[1]);
    return 1;
  }
  const std::string dir = argv[2];
  insert_dir = dir + "/inserts";
  mkdir(insert_dir.c_str(), 0700);
  std::string path = "--path=" + dir + "/data/";
  char program[] = "clickhouse";
  char* connect_argv[] = {program, path.data(), nullptr};
  void** connection = connect(2, connect_argv);
  if (connection == nullptr || *connection == nullptr) {
    fprintf(stderr, "chdb_front: chDB did not open %s\n", path.c_str());
    return 1;
  }
  chdb.connection = *connection;
  const char* user = getenv("MERIDIAN_CHDB_FRONT_USER");
  const char* password = getenv("MERIDIAN_CHDB_FRONT_PASSWORD");
  const std::string authorization =
      "Basic " +
      absl::Base64Escape(std::string(user != nullptr ? user : "default") + ":" +
                         (password != nullptr ? password : ""));

  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(atoi(argv[3])));
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) !=
          0 ||
      listen(listener, 64) != 0) {
    fprintf(stderr, "chdb_front: cannot listen on 127.0.0.1:%s: %s\n", argv[3],
            strerror(errno));
    return 1;
  }
  for (;;) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    std::thread([fd, &chdb, &authorization] {
      Serve(fd, &chdb, authorization);
      close(fd);
    }).detach();
  }
}
