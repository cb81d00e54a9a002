#include "web/web_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/json.h"
#include "common/utf8.h"
#include "google/protobuf/util/json_util.h"
#include "web/peer_uid.h"
#include "web/web_assets.h"

namespace meridian {
namespace {

// Whether `host` (no port) names this host's loopback: "localhost" (any
// case), an IPv4 literal in 127.0.0.0/8 (four decimal parts, as inet_pton
// reads them: "127.rebind.example" is a name, not an address), or the IPv6
// loopback or an IPv4-mapped 127/8 address, bracketed or not.
bool IsLoopbackHost(absl::string_view host) {
  if (absl::EqualsIgnoreCase(host, "localhost")) return true;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string text(host);
  in_addr v4;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

// HOST of "HOST:PORT" ("[::1]:80" -> "[::1]").
absl::string_view HostOf(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return address;
  if (address.find(']') != absl::string_view::npos &&
      colon < address.find(']')) {
    return address;
  }
  return address.substr(0, colon);
}

int HttpStatus(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

}  // namespace

// One request being answered: its connection, and its path and query as
// the client sent them.
struct WebServer::Exchange {
  MHD_Connection* connection;
  const char* method;
  std::string path;   // decoded
  std::string query;  // raw: after '?'
};

namespace {

using Exchange = WebServer::Exchange;

// What every response carries: no caching of answers, no sniffing, and a
// page that loads only from here.
void AddCommonHeaders(MHD_Response* response) {
  MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(response, "Content-Security-Policy",
                          "default-src 'self'; style-src 'self' "
                          "'unsafe-inline'; img-src 'self' data:; "
                          "frame-ancestors 'none'");
  MHD_add_response_header(response, "Connection", "close");
}

// Queues `response` as the answer (`status`), with `headers`, and lets go of
// it.
int Queue(Exchange* c, int status, MHD_Response* response,
          const std::vector<std::pair<const char*, std::string>>& headers) {
  AddCommonHeaders(response);
  for (const auto& [name, value] : headers) {
    MHD_add_response_header(response, name, value.c_str());
  }
  MHD_queue_response(c->connection, static_cast<unsigned>(status), response);
  MHD_destroy_response(response);
  return status;
}

void Respond(Exchange* c, int status, absl::string_view type,
             absl::string_view body,
             std::vector<std::pair<const char*, std::string>> extra = {}) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  extra.emplace_back("Content-Type", std::string(type));
  extra.emplace_back("Cache-Control", "no-store");
  Queue(c, status, response, extra);
}

int Error(Exchange* c, int status, absl::string_view message) {
  std::string body = "{\"error\":";
  AppendJsonString(&body, message);
  body += "}\n";
  Respond(c, status, "application/json", body);
  return status;
}

int RpcError(Exchange* c, const grpc::Status& status) {
  return Error(c, HttpStatus(status.error_code()), status.error_message());
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

// One unary Query call answered as its reply's JSON, or as its error.
// `edit` may change the reply before it is written.
template <typename Request, typename Reply>
int Answer(
    Exchange* c, v1::Query::Stub& stub,
    grpc::Status (v1::Query::Stub::*rpc)(grpc::ClientContext*, const Request&,
                                         Reply*),
    grpc::ClientContext* context, const Request& request,
    absl::FunctionRef<void(Reply*)> edit = [](Reply*) {}) {
  Reply reply;
  const grpc::Status status = (stub.*rpc)(context, request, &reply);
  if (!status.ok()) return RpcError(c, status);
  edit(&reply);
  Respond(c, 200, "application/json", ToJson(reply));
  return 200;
}

template <typename T>
void AppendJsonArray(std::string* out, const std::vector<T>& values) {
  *out += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(out, i ? "," : "", values[i]);
  }
  *out += "]";
}

// /api/trace's answer: an ExportTrace stream, handed to the client a chunk
// at a time (libmicrohttpd sends it chunked, as it comes).
struct TraceStream {
  grpc::ClientContext context;  // outlives the reader
  std::unique_ptr<grpc::ClientReader<v1::TraceChunk>> reader;
  v1::TraceChunk chunk;  // read, not yet all handed on
  size_t at = 0;         // of chunk.data() handed on

  bool finished = false;  // Finish() called

  static ssize_t Read(void* cls, uint64_t /*pos*/, char* buffer, size_t max) {
    auto* s = static_cast<TraceStream*>(cls);
    while (s->at >= s->chunk.data().size()) {
      if (!s->reader->Read(&s->chunk)) {
        // A stream that failed midway ends as an error (the connection is
        // cut), not as a complete trace.
        s->finished = true;
        return s->reader->Finish().ok() ? MHD_CONTENT_READER_END_OF_STREAM
                                        : MHD_CONTENT_READER_END_WITH_ERROR;
      }
      s->at = 0;
    }
    const size_t n = std::min(max, s->chunk.data().size() - s->at);
    std::memcpy(buffer, s->chunk.data().data() + s->at, n);
    s->at += n;
    return static_cast<ssize_t>(n);
  }
  // The response is done (sent, or the client went away): the stream is
  // cancelled if still open.
  static void Free(void* cls) {
    auto* s = static_cast<TraceStream*>(cls);
    if (!s->finished) {
      s->context.TryCancel();
      (void)s->reader->Finish();
    }
    delete s;
  }
};

// `text` percent-decoded; with `form`, '+' is a space too.
std::string UrlDecode(absl::string_view text, bool form) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    int hi, lo;
    const auto hex = [](char ch) {
      return absl::ascii_isdigit(ch)    ? ch - '0'
             : absl::ascii_isxdigit(ch) ? absl::ascii_tolower(ch) - 'a' + 10
                                        : -1;
    };
    if (text[i] == '%' && i + 2 < text.size() && (hi = hex(text[i + 1])) >= 0 &&
        (lo = hex(text[i + 2])) >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += form && text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

// Parameters become the requests' strings, which must be UTF-8: the error
// naming the first that is not, or empty.
std::string NotUtf8(const std::map<std::string, std::string>& params) {
  for (const auto& [name, value] : params) {
    if (!IsValidUtf8(value)) {
      return absl::StrCat("parameter ", RepairUtf8(name.substr(0, 64)),
                          " is not valid UTF-8 (percent-encode the "
                          "name's UTF-8 bytes)");
    }
  }
  return "";
}

// The browser's token, passed on; five minutes for any answer.
void Prepare(grpc::ClientContext* context, const char* auth) {
  if (auth != nullptr) context->AddMetadata("authorization", auth);
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::minutes(5));
}

// The query string's parameters (the last value of each name).
std::map<std::string, std::string> Params(absl::string_view query) {
  std::map<std::string, std::string> out;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    const std::string name(pair.substr(0, eq));
    out[name] = UrlDecode(
        eq == absl::string_view::npos ? "" : pair.substr(eq + 1), true);
  }
  return out;
}

std::optional<int64_t> IntParam(const std::map<std::string, std::string>& p,
                                const std::string& name, bool* bad) {
  auto it = p.find(name);
  if (it == p.end()) return std::nullopt;
  int64_t value;
  if (!absl::SimpleAtoi(it->second, &value)) {
    *bad = true;
    return std::nullopt;
  }
  return value;
}

// HOST (an IP literal, [IPv6] or localhost) and `port` as a socket address.
bool ParseAddress(absl::string_view host, uint16_t port,
                  sockaddr_storage* out) {
  *out = sockaddr_storage{};
  std::string text(host);
  if (absl::EqualsIgnoreCase(text, "localhost")) text = "127.0.0.1";
  auto& v4 = reinterpret_cast<sockaddr_in&>(*out);
  if (inet_pton(AF_INET, text.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    return true;
  }
  if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  auto& v6 = reinterpret_cast<sockaddr_in6&>(*out);
  if (inet_pton(AF_INET6, text.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(port);
    return true;
  }
  return false;
}

}  // namespace

// libmicrohttpd's callbacks, each with the WebServer as its `cls`.
struct WebServerCallbacks {
  static WebServer& Of(void* cls) { return *static_cast<WebServer*>(cls); }

  static sockaddr_storage Copy(const sockaddr* address, socklen_t length) {
    sockaddr_storage out{};
    std::memcpy(&out, address,
                std::min<size_t>(length, sizeof(sockaddr_storage)));
    return out;
  }

  // A new connection: refused (closed unanswered) if its client holds
  // max_connections_per_client already.
  static MHD_Result Accept(void* cls, const sockaddr* address,
                           socklen_t length) {
    WebServer& server = Of(cls);
    const std::string client = server.ClientOf(Copy(address, length));
    absl::MutexLock lock(&server.clients_mu_);
    auto it = server.clients_.find(client);
    return it != server.clients_.end() && it->second >= server.max_per_client_
               ? MHD_NO
               : MHD_YES;
  }

  // A connection accepted, or closed: its client's count.
  static void Connection(void* cls, MHD_Connection* connection,
                         void** socket_context,
                         MHD_ConnectionNotificationCode code) {
    WebServer& server = Of(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info = MHD_get_connection_info(
          connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
      sockaddr_storage peer{};
      if (info != nullptr && info->client_addr != nullptr) {
        // The address is as long as its family's (libmicrohttpd keeps no
        // more).
        peer = Copy(info->client_addr, info->client_addr->sa_family == AF_INET6
                                           ? sizeof(sockaddr_in6)
                                           : sizeof(sockaddr_in));
      }
      auto* client = new std::string(server.ClientOf(peer));
      *socket_context = client;
      absl::MutexLock lock(&server.clients_mu_);
      ++server.clients_[*client];
      return;
    }
    auto* client = static_cast<std::string*>(*socket_context);
    if (client == nullptr) return;
    {
      absl::MutexLock lock(&server.clients_mu_);
      if (--server.clients_[*client] <= 0) server.clients_.erase(*client);
    }
    delete client;
    *socket_context = nullptr;
  }

  // Each request's state, from its raw URI: the query as sent.
  struct Request {
    std::string uri;
    bool answered = false;
  };
  static void* Uri(void*, const char* uri, MHD_Connection*) {
    return new Request{uri != nullptr ? uri : "/"};
  }
  static void Completed(void*, MHD_Connection*, void** request_cls,
                        MHD_RequestTerminationCode) {
    delete static_cast<Request*>(*request_cls);
    *request_cls = nullptr;
  }

  static MHD_Result Handle(void* cls, MHD_Connection* connection,
                           const char* url, const char* method,
                           const char* /*version*/, const char* /*upload*/,
                           size_t* upload_size, void** request_cls) {
    auto* request = static_cast<Request*>(*request_cls);
    if (request == nullptr || request->answered) {
      *upload_size = 0;  // a body after the answer: not read
      return MHD_YES;
    }
    request->answered = true;
    const size_t question = request->uri.find('?');
    WebServer::Exchange exchange{
        connection, method, url != nullptr ? url : "/",
        question == std::string::npos ? "" : request->uri.substr(question + 1)};
    Of(cls).Serve(&exchange);
    *upload_size = 0;
    return MHD_YES;
  }
};

absl::StatusOr<std::unique_ptr<WebServer>> WebServer::Start(
    const WebServerOptions& options, std::shared_ptr<grpc::Channel> channel) {
  const bool loopback = IsLoopbackHost(HostOf(options.address));
  if (!loopback && !options.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http ", options.address,
        ": the web page is served without TLS; serve it on loopback (and "
        "reach it through an SSH tunnel) or pass --insecure"));
  }
  // An origin: scheme and host (and port), nothing after.
  const absl::string_view ui = options.perfetto_ui;
  const bool https = absl::StartsWith(ui, "https://");
  const absl::string_view host = ui.substr(https ? 8 : 7);
  if ((!https && !absl::StartsWith(ui, "http://")) || host.empty() ||
      host.find_first_of("/?#\"' <>") != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--perfetto-ui ", ui,
        ": give the Perfetto UI's origin, e.g. https://ui.perfetto.dev or "
        "http://perfetto.example.org:10000 (no path)"));
  }
  std::unique_ptr<WebServer> server(new WebServer());
  server->config_json_ = "{\"perfetto_ui\":";
  AppendJsonString(&server->config_json_, ui);
  server->config_json_ += "}\n";
  server->stub_ = v1::Query::NewStub(std::move(channel));
  server->loopback_ = loopback;
  const absl::string_view address_host = HostOf(options.address);
  uint32_t port = 0;
  if (address_host.size() == options.address.size() ||
      !absl::SimpleAtoi(
          absl::string_view(options.address).substr(address_host.size() + 1),
          &port) ||
      port > 65535 ||
      !ParseAddress(address_host, static_cast<uint16_t>(port),
                    &server->address_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http ", options.address,
                     ": give HOST:PORT, HOST an IP address or localhost "
                     "([::1] for IPv6)"));
  }
  server->max_per_client_ = std::max(options.max_connections_per_client, 1);
  const bool v6 = server->address_.ss_family == AF_INET6;
  const unsigned timeout_s = static_cast<unsigned>(
      (std::max(options.request_timeout_ms, 1) + 999) / 1000);
  // The socket bound and listening here, so that its address (the port
  // picked for 0) is known before the first connection is counted.
  const socklen_t length = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const int listener =
      socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  socklen_t bound = length;
  if (listener < 0 ||
      setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
      bind(listener, reinterpret_cast<const sockaddr*>(&server->address_),
           length) != 0 ||
      listen(listener, 64) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&server->address_),
                  &bound) != 0) {
    if (listener >= 0) close(listener);
    return absl::UnavailableError(
        absl::StrCat("--http ", options.address,
                     ": cannot listen there (in use, or not an address "
                     "of this host)"));
  }
  server->daemon_ = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
          (v6 ? MHD_USE_IPv6 : 0),
      0, &WebServerCallbacks::Accept, server.get(), &WebServerCallbacks::Handle,
      server.get(), MHD_OPTION_LISTEN_SOCKET, listener,
      MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned>(std::max(options.max_connections, 1)),
      MHD_OPTION_NOTIFY_CONNECTION, &WebServerCallbacks::Connection,
      server.get(), MHD_OPTION_URI_LOG_CALLBACK, &WebServerCallbacks::Uri,
      server.get(), MHD_OPTION_NOTIFY_COMPLETED, &WebServerCallbacks::Completed,
      server.get(), MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    close(listener);
    return absl::UnavailableError(
        absl::StrCat("--http ", options.address,
                     ": cannot serve there (libmicrohttpd did not start)"));
  }
  server->port_ =
      v6 ? ntohs(reinterpret_cast<sockaddr_in6&>(server->address_).sin6_port)
         : ntohs(reinterpret_cast<sockaddr_in&>(server->address_).sin_port);
  return server;
}

WebServer::~WebServer() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
}

std::string WebServer::ClientOf(const sockaddr_storage& peer) const {
  if (loopback_) {
    // Every client's address is loopback: the user at the other end.
    if (auto uid = LoopbackPeerUid(peer, address_)) {
      return absl::StrCat("uid ", *uid);
    }
  }
  char text[INET6_ADDRSTRLEN] = "";
  if (peer.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr,
              text, sizeof(text));
  } else {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr,
              text, sizeof(text));
  }
  return text;
}

int WebServer::RefuseHost(Exchange* connection) const {
  if (!loopback_) return 0;
  // Exactly one Host header: without one, or with two, which of them a
  // proxy or the browser meant is anyone's guess.
  struct Hosts {
    const char* host = nullptr;
    int count = 0;
  } hosts_seen;
  MHD_get_connection_values(
      connection->connection, MHD_HEADER_KIND,
      [](void* cls, MHD_ValueKind, const char* key, const char* value) {
        auto* seen = static_cast<Hosts*>(cls);
        if (key != nullptr && absl::EqualsIgnoreCase(key, "Host")) {
          seen->host = value != nullptr ? value : "";
          ++seen->count;
        }
        return MHD_YES;
      },
      &hosts_seen);
  const int hosts = hosts_seen.count;
  const char* host = hosts_seen.host;
  if (hosts != 1) {
    return Error(connection, 400,
                 hosts == 0 ? "a request needs a Host header"
                            : "a request needs exactly one Host header");
  }
  if (!IsLoopbackHost(HostOf(host))) {
    return Error(connection, 403,
                 "this page answers only requests addressed to a loopback "
                 "host (127.0.0.1, localhost, [::1])");
  }
  return 0;
}

int WebServer::ServeAsset(Exchange* c) {
  const std::string& path = c->path;
  const WebAsset* asset = FindWebAsset(path == "/" ? "/index.html" : path);
  if (asset == nullptr) return Error(c, 404, "no such page");
  const char* accept = MHD_lookup_connection_value(
      c->connection, MHD_HEADER_KIND, "Accept-Encoding");
  const bool gzip = accept != nullptr && absl::StrContains(accept, "gzip");
  const absl::string_view body = gzip ? asset->gzip : asset->body;
  std::vector<std::pair<const char*, std::string>> headers = {
      {"Content-Type", asset->type}, {"Cache-Control", "no-cache"}};
  if (gzip) {
    headers.emplace_back("Content-Encoding", "gzip");
    headers.emplace_back("Vary", "Accept-Encoding");
  }
  return Queue(
      c, 200,
      MHD_create_response_from_buffer(
          body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_PERSISTENT),
      headers);
}

int WebServer::ServeCompare(Exchange* c,
                            const std::map<std::string, std::string>& params,
                            const char* auth) {
  auto param = [&](const std::string& name) {
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second;
  };
  v1::CompareRequest request;
  request.set_job_a(param("a"));
  request.set_job_b(param("b"));
  if (!param("ranks").empty()) {
    for (absl::string_view r : absl::StrSplit(param("ranks"), ',')) {
      int32_t rank;
      if (!absl::SimpleAtoi(r, &rank)) {
        return Error(c, 400, "ranks must be R1,R2");
      }
      request.add_ranks(rank);
    }
  }
  request.set_head(50);
  grpc::ClientContext context;
  Prepare(&context, auth);
  return Answer(c, *stub_, &v1::Query::Stub::Compare, &context, request);
}

int WebServer::ServeStragglers(Exchange* c, const std::string& job,
                               const char* auth) {
  grpc::ClientContext context;
  Prepare(&context, auth);
  v1::StragglersRequest request;
  request.set_job(job);
  request.set_head(0);
  v1::StragglersReply reply;
  grpc::Status s = stub_->GetStragglers(&context, request, &reply);
  if (!s.ok()) return RpcError(c, s);
  const WaitHeatmap map = MakeWaitHeatmap(reply, 64, 200);
  // The page lists the most skewed instances, not all of them.
  v1::StragglersReply head = reply;
  if (head.collectives_size() > 20) {
    head.mutable_collectives()->DeleteSubrange(20,
                                               head.collectives_size() - 20);
  }
  std::string out = absl::StrCat("{\"stragglers\":", ToJson(head),
                                 ",\"heatmap\":{\"rank_starts\":");
  AppendJsonArray(&out, map.rank_starts);
  out += ",\"step_starts\":";
  AppendJsonArray(&out, map.step_starts);
  absl::StrAppend(&out, ",\"last_rank\":", map.last_rank,
                  ",\"last_step\":", map.last_step,
                  ",\"hottest_rank\":", map.hottest_rank,
                  ",\"hottest_step\":", map.hottest_step, ",\"wait_ns\":");
  AppendJsonArray(&out, map.wait_ns);
  out += "}}";
  Respond(c, 200, "application/json", out);
  return 200;
}

int WebServer::ServeTrace(Exchange* c,
                          const std::map<std::string, std::string>& params,
                          const char* auth) {
  bool bad = false;
  v1::ExportRequest request;
  auto job = params.find("job");
  const std::string name_given = job == params.end() ? "" : job->second;
  request.mutable_filter()->set_job(name_given);
  const auto first = IntParam(params, "first_step", &bad);
  const auto last = IntParam(params, "last_step", &bad);
  if (bad) return Error(c, 400, "first_step and last_step are integers");
  if (first) request.mutable_filter()->set_first_step(*first);
  if (last) request.mutable_filter()->set_last_step(*last);
  // Streamed as it comes: the response's reader takes the next chunk
  // when the client has taken the last.
  auto stream = std::make_unique<TraceStream>();
  Prepare(&stream->context, auth);
  stream->reader = stub_->ExportTrace(&stream->context, request);
  // The first chunk decides between an answer and an error.
  if (!stream->reader->Read(&stream->chunk)) {
    return RpcError(c, stream->reader->Finish());
  }
  std::string name = name_given;
  for (char& ch : name) {
    if (!absl::ascii_isalnum(ch) && ch != '-' && ch != '_' && ch != '.') {
      ch = '_';
    }
  }
  MHD_Response* response = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 64 * 1024, &TraceStream::Read, stream.get(),
      &TraceStream::Free);
  if (response == nullptr) return Error(c, 500, "cannot stream the trace");
  stream.release();  // the response's now
  // The collector may take longer than the idle timeout between chunks
  // (a window over a large job): the stream's own deadline bounds it.
  MHD_set_connection_option(c->connection, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
  return Queue(c, 200, response,
               {{"Content-Type", "application/json"},
                {"Content-Disposition", absl::StrCat("attachment; filename=\"",
                                                     name, ".trace.json\"")},
                {"Cache-Control", "no-store"}});
}

int WebServer::Serve(Exchange* c) {
  if (const int refused = RefuseHost(c); refused != 0) return refused;
  if (std::strcmp(c->method, "GET") != 0) {
    Respond(c, 405, "application/json", "{\"error\":\"only GET is served\"}\n",
            {{"Allow", "GET"}});
    return 405;
  }
  const std::string& path = c->path;
  const auto header = [&](const char* name) {
    return MHD_lookup_connection_value(c->connection, MHD_HEADER_KIND, name);
  };
  if (!absl::StartsWith(path, "/api/")) return ServeAsset(c);
  const std::map<std::string, std::string> params = Params(c->query);
  if (std::string bad_text = NotUtf8(params); !bad_text.empty()) {
    return Error(c, 400, bad_text);
  }
  auto param = [&](const std::string& name) {
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second;
  };
  const char* auth = header("Authorization");
  grpc::ClientContext context;
  Prepare(&context, auth);
  bool bad = false;
  const std::string api = path.substr(5);
  if (api == "config") {
    Respond(c, 200, "application/json", config_json_);
    return 200;
  }
  if (api == "jobs" || api == "job") {
    v1::ListJobsRequest request;
    if (api == "job") {
      if (param("job").empty()) return Error(c, 400, "give ?job=NAME");
      request.set_job(param("job"));
    }
    return Answer(c, *stub_, &v1::Query::Stub::ListJobs, &context, request);
  }
  if (api == "steps") {
    v1::StepsRequest request;
    request.set_job(param("job"));
    const std::optional<int64_t> rank = IntParam(params, "rank", &bad);
    if (bad || (rank && (*rank < 0 || *rank > INT32_MAX))) {
      return Error(c, 400, "rank must be a rank (an integer >= 0)");
    }
    if (rank) {
      request.set_rank(static_cast<int32_t>(*rank));
    } else {
      request.set_means_only(true);
    }
    return Answer(c, *stub_, &v1::Query::Stub::GetSteps, &context, request);
  }
  if (api == "stragglers") return ServeStragglers(c, param("job"), auth);
  if (api == "health") {
    v1::HealthRequest request;  // the collector's --stall-after
    request.set_job(param("job"));
    return Answer(c, *stub_, &v1::Query::Stub::GetHealth, &context, request);
  }
  if (api == "critical-path") {
    v1::CriticalPathRequest request;
    request.set_job(param("job"));
    if (auto step = IntParam(params, "step", &bad)) request.set_step(*step);
    if (bad) return Error(c, 400, "step must be an integer");
    return Answer(c, *stub_, &v1::Query::Stub::GetCriticalPath, &context,
                  request);
  }
  if (api == "clocks") {
    v1::ClocksRequest request;
    request.set_job(param("job"));
    return Answer(c, *stub_, &v1::Query::Stub::GetClocks, &context, request);
  }
  if (api == "stats") {
    v1::StatsRequest request;
    request.mutable_filter()->set_job(param("job"));
    // A rank's figures from spans alone: "spans", as `meridian stats` says.
    return Answer(
        c, *stub_, &v1::Query::Stub::GetStats, &context, request,
        absl::FunctionRef<void(v1::StatsReply*)>([](v1::StatsReply* reply) {
          for (v1::RankStats& r : *reply->mutable_ranks()) {
            if (r.source().empty()) r.set_source("spans");
          }
        }));
  }
  if (api == "compare") return ServeCompare(c, params, auth);
  if (api == "trace") return ServeTrace(c, params, auth);
  return Error(c, 404, absl::StrCat("no API /api/", api));
}

}  // namespace meridian
