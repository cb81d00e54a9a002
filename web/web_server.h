// WebServer: `meridian-collector --http ADDR`, the web page (docs/web.md)
// and the JSON it reads, served by libmicrohttpd (Debian's
// libmicrohttpd-dev), a thread per connection: a slow client holds only its
// own connection, and each client (on loopback: each user, peer_uid.h) at
// most max_connections_per_client of them.
//
// The JSON is the Query service's answers, asked over `channel` (the
// collector's in-process channel) and written with protobuf's JSON mapping
// (field names as in query.proto; 64-bit integers as strings): no second
// query engine. An `Authorization: Bearer TOKEN` header is passed on as the
// gRPC call's metadata, so the collector's Authorizer decides exactly as it
// does for gRPC clients, and its status becomes the HTTP status (401, 403,
// 404, 400, 429, 500).
//
//   GET /                         the page (and /app.js, /app.css,
//                                 /echarts.min.js: the assets, gzip when
//                                 the browser accepts it)
//   GET /api/config               {"perfetto_ui": ORIGIN}
//   GET /api/jobs                 ListJobs
//   GET /api/job?job=J            ListJobs of J (ranks, steps)
//   GET /api/steps?job=J[&rank=R] GetSteps: each step's means, and only
//                                 rank R's own figures (1,000 steps of
//                                 1,024 ranks would be 30 MB)
//   GET /api/stragglers?job=J     GetStragglers, and `heatmap`: the time
//                                 others waited for each rank per step,
//                                 summed into at most 64 rank and 200 step
//                                 bins (WaitHeatmap)
//   GET /api/critical-path?job=J[&step=N]   GetCriticalPath
//   GET /api/health?job=J         GetHealth, with the collector's
//                                 --stall-after
//   GET /api/clocks?job=J         GetClocks
//   GET /api/stats?job=J          GetStats
//   GET /api/compare?a=J&b=K  or  ?a=J&ranks=R1,R2    Compare
//   GET /api/trace?job=J[&first_step=A&last_step=B]
//                                 ExportTrace (Chrome JSON), streamed as it
//                                 comes, as an attachment
// Anything else is 404; a method other than GET 405; a bad parameter 400
// naming it.
//
// On a loopback address (the default, and what Start accepts unless
// `insecure`), a request must have exactly one Host header (else 400), and
// one that names another host than localhost, a 127/8 IPv4 literal or
// [::1] is refused (403): a web page elsewhere cannot read the jobs by
// rebinding its DNS name (even "127.x.example") to 127.0.0.1.
#ifndef MERIDIAN_WEB_WEB_SERVER_H_
#define MERIDIAN_WEB_WEB_SERVER_H_

#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/query.grpc.pb.h"
#include "web/wait_heatmap.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace meridian {

struct WebServerOptions {
  std::string address = "127.0.0.1:7080";  // HOST:PORT; port 0 picks one
  // Listening beyond loopback is refused unless this is set.
  bool insecure = false;
  // Connections served at once (each its own thread), and of them at most
  // max_connections_per_client from one client: on loopback, one user
  // (whoever owns the connecting socket); beyond, one address. More are
  // closed as they come, unanswered.
  int max_connections = 128;
  int max_connections_per_client = 16;
  // The longest a connection may stay silent (rounded up to whole
  // seconds): one that sends half its headers and stops is closed then.
  int request_timeout_ms = 5000;
  // Where "Open in Perfetto" sends a trace: the Perfetto UI's origin (a
  // site may host its own copy, e.g. on a cluster without internet).
  std::string perfetto_ui = "https://ui.perfetto.dev";
};

class WebServer {
 public:
  // INVALID_ARGUMENT for an address beyond loopback without `insecure`, or
  // a perfetto_ui that is not an http(s) origin; UNAVAILABLE naming the
  // address if it cannot be bound.
  static absl::StatusOr<std::unique_ptr<WebServer>> Start(
      const WebServerOptions& options, std::shared_ptr<grpc::Channel> channel);
  ~WebServer();

  int port() const { return port_; }

  struct Exchange;  // one request being answered (web_server.cc)

 private:
  WebServer() = default;
  int Serve(Exchange* c);
  // Serve's answers (each returns the status it answered with): a page's
  // file, /api/compare, /api/stragglers (the stragglers and their heatmap)
  // and /api/trace (streamed as the collector sends it). `auth`: the
  // request's Authorization header, or null.
  int ServeAsset(Exchange* c);
  int ServeCompare(Exchange* c,
                   const std::map<std::string, std::string>& params,
                   const char* auth);
  int ServeStragglers(Exchange* c, const std::string& job, const char* auth);
  int ServeTrace(Exchange* c, const std::map<std::string, std::string>& params,
                 const char* auth);
  // On loopback: 0 if the request has one Host header naming a loopback
  // host, else the status of the refusal it was answered with (400: none
  // or several, 403: another host).
  int RefuseHost(Exchange* c) const;
  // The client a connection from `peer` counts under (max_connections_per_
  // client).
  std::string ClientOf(const sockaddr_storage& peer) const;
  friend struct WebServerCallbacks;  // web_server.cc

  MHD_Daemon* daemon_ = nullptr;
  sockaddr_storage address_{};  // where it listens
  int max_per_client_ = 16;
  absl::Mutex clients_mu_;
  std::map<std::string, int> clients_ ABSL_GUARDED_BY(clients_mu_);
  std::unique_ptr<v1::Query::Stub> stub_;
  bool loopback_ = true;
  int port_ = 0;
  std::string config_json_;  // /api/config
};

}  // namespace meridian

#endif  // MERIDIAN_WEB_WEB_SERVER_H_
