#include "web/web_server.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/json.h"
#include "common/utf8.h"
#include "google/protobuf/util/json_util.h"
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

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
    default:
      return "Internal Server Error";
  }
}

// What every response carries: no caching of answers, no sniffing, and a
// page that loads only from here.
constexpr char kCommonHeaders[] =
    "X-Content-Type-Options: nosniff\r\n"
    "Content-Security-Policy: default-src 'self'; style-src 'self' "
    "'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'\r\n"
    "Connection: close\r\n";

void Respond(mg_connection* c, int status, absl::string_view type,
             absl::string_view body, absl::string_view extra = "") {
  mg_printf(c,
            "HTTP/1.1 %d %s\r\nContent-Type: %.*s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\n%s%.*s\r\n",
            status, Reason(status), static_cast<int>(type.size()), type.data(),
            body.size(), kCommonHeaders, static_cast<int>(extra.size()),
            extra.data());
  mg_write(c, body.data(), body.size());
}

int Error(mg_connection* c, int status, absl::string_view message) {
  std::string body = "{\"error\":";
  AppendJsonString(&body, message);
  body += "}\n";
  Respond(c, status, "application/json", body);
  return status;
}

int RpcError(mg_connection* c, const grpc::Status& status) {
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
template <typename Request, typename Reply>
int Answer(mg_connection* c, v1::Query::Stub& stub,
           grpc::Status (v1::Query::Stub::*rpc)(grpc::ClientContext*,
                                                const Request&, Reply*),
           grpc::ClientContext* context, const Request& request) {
  Reply reply;
  const grpc::Status status = (stub.*rpc)(context, request, &reply);
  if (!status.ok()) return RpcError(c, status);
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

// The query string's parameters (the last value of each name).
std::map<std::string, std::string> Params(const mg_request_info* info) {
  std::map<std::string, std::string> out;
  if (info->query_string == nullptr) return out;
  for (absl::string_view pair :
       absl::StrSplit(info->query_string, '&', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    const std::string name(pair.substr(0, eq));
    const std::string raw(eq == absl::string_view::npos ? ""
                                                        : pair.substr(eq + 1));
    std::string value(raw.size() + 1, '\0');
    const int n = mg_url_decode(raw.data(), static_cast<int>(raw.size()),
                                value.data(), static_cast<int>(value.size()),
                                /*is_form_url_encoded=*/1);
    value.resize(n < 0 ? 0 : n);
    out[name] = value;
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

}  // namespace

WaitHeatmap MakeWaitHeatmap(const v1::StragglersReply& reply, int max_rank_bins,
                            int max_step_bins) {
  WaitHeatmap map;
  // Per (rank, step): the waiting, and the ranges seen.
  std::map<std::pair<int32_t, int64_t>, int64_t> cells;
  int32_t max_rank = -1;
  int64_t min_step = 0, max_step = -1;
  bool any_step = false;
  for (const v1::RankWait& r : reply.ranks()) {
    max_rank = std::max(max_rank, r.rank());
  }
  for (const v1::CollectiveInstance& c : reply.collectives()) {
    if (!c.has_step()) continue;
    min_step = any_step ? std::min(min_step, c.step()) : c.step();
    max_step = any_step ? std::max(max_step, c.step()) : c.step();
    any_step = true;
    if (c.last_rank() < 0) continue;  // nobody waited
    max_rank = std::max(max_rank, c.last_rank());
    cells[{c.last_rank(), c.step()}] += c.wait_ns();
  }
  if (max_rank < 0 || !any_step) return map;
  const int64_t ranks = int64_t{max_rank} + 1;
  const int64_t steps = max_step - min_step + 1;
  const int64_t rank_bins =
      std::min<int64_t>(ranks, std::max(max_rank_bins, 1));
  const int64_t step_bins =
      std::min<int64_t>(steps, std::max(max_step_bins, 1));
  const int64_t ranks_per_bin = (ranks + rank_bins - 1) / rank_bins;
  const int64_t steps_per_bin = (steps + step_bins - 1) / step_bins;
  const int64_t rows = (ranks + ranks_per_bin - 1) / ranks_per_bin;
  const int64_t columns = (steps + steps_per_bin - 1) / steps_per_bin;
  for (int64_t r = 0; r < rows; ++r) {
    map.rank_starts.push_back(static_cast<int32_t>(r * ranks_per_bin));
  }
  for (int64_t s = 0; s < columns; ++s) {
    map.step_starts.push_back(min_step + s * steps_per_bin);
  }
  map.last_rank = max_rank;
  map.last_step = max_step;
  map.wait_ns.assign(static_cast<size_t>(rows * columns), 0);
  int64_t hottest = 0;
  for (const auto& [cell, wait] : cells) {
    const int64_t row = cell.first / ranks_per_bin;
    const int64_t column = (cell.second - min_step) / steps_per_bin;
    map.wait_ns[row * columns + column] += wait;
    if (wait > hottest) {
      hottest = wait;
      map.hottest_rank = cell.first;
      map.hottest_step = cell.second;
    }
  }
  return map;
}

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
  // civetweb takes "HOST:PORT" for IPv4 and "[HOST]:PORT" for IPv6 as its
  // listening_ports.
  const std::string threads = absl::StrCat(std::max(options.threads, 1));
  const std::string timeout =
      absl::StrCat(std::max(options.request_timeout_ms, 1));
  const char* civet_options[] = {"listening_ports",
                                 options.address.c_str(),
                                 "num_threads",
                                 threads.c_str(),
                                 "request_timeout_ms",
                                 timeout.c_str(),
                                 nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  mg_init_library(0);
  server->context_ = mg_start(&callbacks, nullptr, civet_options);
  if (server->context_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("--http ", options.address,
                     ": cannot listen there (in use, or not an address "
                     "of this host)"));
  }
  mg_set_request_handler(server->context_, "/", &WebServer::Handle,
                         server.get());
  mg_server_port ports[1];
  if (mg_get_server_ports(server->context_, 1, ports) >= 1) {
    server->port_ = ports[0].port;
  }
  return server;
}

WebServer::~WebServer() {
  if (context_ != nullptr) mg_stop(context_);
}

int WebServer::Handle(mg_connection* connection, void* self) {
  return static_cast<WebServer*>(self)->Serve(connection);
}

int WebServer::RefuseHost(mg_connection* connection) const {
  if (!loopback_) return 0;
  // Exactly one Host header: without one, or with two, which of them a
  // proxy or the browser meant is anyone's guess.
  const mg_request_info* info = mg_get_request_info(connection);
  const char* host = nullptr;
  int hosts = 0;
  for (int i = 0; i < info->num_headers; ++i) {
    if (absl::EqualsIgnoreCase(info->http_headers[i].name, "Host")) {
      host = info->http_headers[i].value;
      ++hosts;
    }
  }
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

int WebServer::Serve(mg_connection* c) {
  const mg_request_info* info = mg_get_request_info(c);
  if (const int refused = RefuseHost(c); refused != 0) return refused;
  if (std::strcmp(info->request_method, "GET") != 0) {
    Respond(c, 405, "application/json", "{\"error\":\"only GET is served\"}\n",
            "Allow: GET\r\n");
    return 405;
  }
  const std::string path = info->local_uri != nullptr ? info->local_uri : "/";
  if (!absl::StartsWith(path, "/api/")) {
    const WebAsset* asset = FindWebAsset(path == "/" ? "/index.html" : path);
    if (asset == nullptr) return Error(c, 404, "no such page");
    const char* accept = mg_get_header(c, "Accept-Encoding");
    const bool gzip = accept != nullptr && absl::StrContains(accept, "gzip");
    const absl::string_view body = gzip ? asset->gzip : asset->body;
    mg_printf(
        c,
        "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
        "Cache-Control: no-cache\r\n%s%s\r\n",
        asset->type, body.size(), kCommonHeaders,
        gzip ? "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n" : "");
    mg_write(c, body.data(), body.size());
    return 200;
  }
  const std::map<std::string, std::string> params = Params(info);
  // Parameters become the requests' strings, which must be UTF-8.
  for (const auto& [name, value] : params) {
    if (!IsValidUtf8(value)) {
      return Error(c, 400,
                   absl::StrCat("parameter ", RepairUtf8(name.substr(0, 64)),
                                " is not valid UTF-8 (percent-encode the "
                                "name's UTF-8 bytes)"));
    }
  }
  auto param = [&](const std::string& name) {
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second;
  };
  grpc::ClientContext context;
  if (const char* auth = mg_get_header(c, "Authorization")) {
    context.AddMetadata("authorization", auth);
  }
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::minutes(5));
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
  if (api == "stragglers") {
    v1::StragglersRequest request;
    request.set_job(param("job"));
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
    return Answer(c, *stub_, &v1::Query::Stub::GetStats, &context, request);
  }
  if (api == "compare") {
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
    return Answer(c, *stub_, &v1::Query::Stub::Compare, &context, request);
  }
  if (api == "trace") {
    v1::ExportRequest request;
    request.mutable_filter()->set_job(param("job"));
    const auto first = IntParam(params, "first_step", &bad);
    const auto last = IntParam(params, "last_step", &bad);
    if (bad) return Error(c, 400, "first_step and last_step are integers");
    if (first) request.mutable_filter()->set_first_step(*first);
    if (last) request.mutable_filter()->set_last_step(*last);
    auto reader = stub_->ExportTrace(&context, request);
    v1::TraceChunk chunk;
    // The first chunk decides between an answer and an error.
    if (!reader->Read(&chunk)) return RpcError(c, reader->Finish());
    std::string name = param("job");
    for (char& ch : name) {
      if (!absl::ascii_isalnum(ch) && ch != '-' && ch != '_' && ch != '.') {
        ch = '_';
      }
    }
    mg_printf(c,
              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
              "Content-Disposition: attachment; filename=\"%s.trace.json\"\r\n"
              "Transfer-Encoding: chunked\r\nCache-Control: no-store\r\n%s\r\n",
              name.c_str(), kCommonHeaders);
    do {
      if (mg_send_chunk(c, chunk.data().data(),
                        static_cast<unsigned>(chunk.data().size())) < 0) {
        context.TryCancel();
        break;
      }
    } while (reader->Read(&chunk));
    (void)reader->Finish();
    mg_send_chunk(c, "", 0);
    return 200;
  }
  return Error(c, 404, absl::StrCat("no API /api/", api));
}

}  // namespace meridian
