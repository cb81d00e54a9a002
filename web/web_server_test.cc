#include "web/web_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "web/web_assets.h"

namespace meridian {
namespace {

// A connection to 127.0.0.1:`port` with `sent` written on it; -1 if it
// could not connect.
int Send(int port, const std::string& sent) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return -1;
  }
  (void)!write(fd, sent.data(), sent.size());
  return fd;
}

// What the server sends on `fd` until it closes it.
std::string ReadAll(int fd) {
  std::string got;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) got.append(buffer, n);
  return got;
}

// One request over a socket; the whole response.
std::string Get(int port, const std::string& request) {
  const int fd = Send(port, request);
  if (fd < 0) return "";
  const std::string response = ReadAll(fd);
  close(fd);
  return response;
}

std::string Request(const std::string& method, const std::string& path,
                    const std::string& host = "127.0.0.1") {
  return absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: ", host,
                      "\r\nConnection: close\r\n\r\n");
}

class WebServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WebServerOptions options;
    options.address = "127.0.0.1:0";
    // No collector behind it: the API answers 503, the page still loads.
    auto server = WebServer::Start(
        options,
        grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
  }
  std::unique_ptr<WebServer> server_;
};

TEST_F(WebServerTest, ServesThePageAndItsAssets) {
  const std::string page = Get(server_->port(), Request("GET", "/"));
  EXPECT_TRUE(absl::StartsWith(page, "HTTP/1.1 200 OK\r\n")) << page;
  EXPECT_TRUE(absl::StrContains(page, "Content-Type: text/html"));
  EXPECT_TRUE(absl::StrContains(page, "<script src=\"/app.js\"></script>"));
  EXPECT_TRUE(absl::StrContains(page, "Content-Security-Policy: default-src"));
  const WebAsset* charts = FindWebAsset("/echarts.min.js");
  ASSERT_NE(charts, nullptr);
  EXPECT_GT(charts->body.size(), 500000u);
  EXPECT_LT(charts->gzip.size(), charts->body.size() / 2);
  const std::string gzipped =
      Get(server_->port(),
          "GET /echarts.min.js HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: "
          "gzip, br\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(absl::StrContains(gzipped, "Content-Encoding: gzip\r\n"));
  EXPECT_TRUE(absl::StrContains(
      gzipped, absl::StrCat("Content-Length: ", charts->gzip.size(), "\r\n")));
}

TEST_F(WebServerTest, RefusesWhatItDoesNotServe) {
  const int port = server_->port();
  EXPECT_TRUE(absl::StartsWith(Get(port, Request("GET", "/nope.html")),
                               "HTTP/1.1 404 Not Found"));
  const std::string post = Get(port, Request("POST", "/api/jobs"));
  EXPECT_TRUE(absl::StartsWith(post, "HTTP/1.1 405")) << post;
  EXPECT_TRUE(absl::StrContains(post, "Allow: GET"));
  // DNS rebinding: a page of another site that resolves to 127.0.0.1.
  const std::string rebound =
      Get(port, Request("GET", "/api/jobs", "evil.example:8080"));
  EXPECT_TRUE(absl::StartsWith(rebound, "HTTP/1.1 403 Forbidden")) << rebound;
  // The collector is not there: the API says so as JSON.
  const std::string down = Get(port, Request("GET", "/api/jobs"));
  EXPECT_TRUE(absl::StartsWith(down, "HTTP/1.1 503")) << down;
  EXPECT_TRUE(absl::StrContains(down, "{\"error\":"));
  const std::string bad =
      Get(port, Request("GET", "/api/critical-path?job=j&step=x"));
  EXPECT_TRUE(absl::StartsWith(bad, "HTTP/1.1 400")) << bad;
  EXPECT_TRUE(absl::StrContains(bad, "step must be an integer"));
  EXPECT_TRUE(
      absl::StartsWith(Get(port, Request("GET", "/api/what")), "HTTP/1.1 404"));
}

// DNS rebinding with names that look like loopback addresses, and Host
// headers absent or repeated (docs/security.md).
TEST_F(WebServerTest, AnswersOnlyOneHostHeaderNamingLoopback) {
  const int port = server_->port();
  for (const char* host :
       {"127.0.0.1", "127.0.0.1:8080", "127.1.2.3", "localhost", "LocalHost:80",
        "[::1]", "[::1]:8080", "[::ffff:127.0.0.1]:80"}) {
    const std::string reply = Get(port, Request("GET", "/", host));
    EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 200 OK")) << host;
  }
  for (const char* host :
       {"127.rebind.attacker.example", "127.rebind.attacker.example:8080",
        "127.0.0.1.evil.com", "127.0.0.1.evil.com:80", "127.1", "0177.0.0.1",
        "localhost.evil.com", "[::2]", "[::ffff:10.0.0.1]", "evil.example", "",
        "[]"}) {
    const std::string reply = Get(port, Request("GET", "/api/jobs", host));
    EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 403 Forbidden"))
        << host << ": " << reply;
    EXPECT_TRUE(
        absl::StrContains(reply, "only requests addressed to a loopback host"));
  }
  const std::string none =
      Get(port, "GET /api/jobs HTTP/1.0\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(none, "HTTP/1.1 400")) << none;
  EXPECT_TRUE(absl::StrContains(none, "a request needs a Host header"));
  for (const char* second : {"evil.example", "127.0.0.1"}) {
    const std::string two =
        Get(port, absl::StrCat("GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               "Host: ",
                               second, "\r\nConnection: close\r\n\r\n"));
    EXPECT_TRUE(absl::StartsWith(two, "HTTP/1.1 400")) << two;
    EXPECT_TRUE(
        absl::StrContains(two, "a request needs exactly one Host header"));
  }
}

TEST_F(WebServerTest, AParameterThatIsNotUtf8IsRefusedNamingIt) {
  const std::string reply =
      Get(server_->port(), Request("GET", "/api/job?job=bad%FF%FEname"));
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 400")) << reply;
  EXPECT_TRUE(absl::StrContains(
      reply,
      "{\"error\":\"parameter job is not valid UTF-8 (percent-encode the "
      "name's UTF-8 bytes)\"}"))
      << reply;
  // Percent-encoded UTF-8 passes (to a collector that is not there).
  EXPECT_TRUE(absl::StartsWith(
      Get(server_->port(), Request("GET", "/api/job?job=caf%C3%A9")),
      "HTTP/1.1 503"));
}

// A connection to the page's port with half its headers sent; -1 if the
// connection failed.
int HalfSent(int port) {
  return Send(port, "GET /api/jobs HTTP/1.1\r\nHost: 127.0");
}

std::unique_ptr<WebServer> SlowClientServer(int per_client) {
  WebServerOptions options;
  options.address = "127.0.0.1:0";
  options.max_connections_per_client = per_client;
  // Longer than the test: no slow connection is closed by the timeout.
  options.request_timeout_ms = 600000;
  auto server = WebServer::Start(
      options,
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  EXPECT_TRUE(server.ok()) << server.status();
  return std::move(*server);
}

// Slowloris: 8 connections with half their headers sent held every one of
// civetweb's 8 threads (for 30 s, renewable). Each connection has its own
// thread now: a request beside them is answered at once.
TEST(WebServerSlowClientTest, HalfSentHeadersHoldOnlyTheirOwnConnection) {
  std::unique_ptr<WebServer> server = SlowClientServer(16);
  std::vector<int> slow;
  for (int i = 0; i < 8; ++i) slow.push_back(HalfSent(server->port()));
  EXPECT_TRUE(absl::StartsWith(
      Get(server->port(), Request("GET", "/index.html")), "HTTP/1.1 200"));
  for (int fd : slow) close(fd);
}

// One client (on loopback: one user) holds at most
// max_connections_per_client connections: more are closed unanswered as
// they come, and once its connections end it is served again.
TEST(WebServerSlowClientTest, AClientHoldsAtMostItsShareOfConnections) {
  std::unique_ptr<WebServer> server = SlowClientServer(4);
  std::vector<int> slow;
  for (int i = 0; i < 4; ++i) slow.push_back(HalfSent(server->port()));
  // The fifth is closed at once, though none of the four timed out.
  const int fifth = HalfSent(server->port());
  ASSERT_GE(fifth, 0);
  EXPECT_EQ(ReadAll(fifth), "");
  close(fifth);
  EXPECT_EQ(Get(server->port(), Request("GET", "/index.html")), "");
  for (int fd : slow) close(fd);
  // Served again once the server has seen them close (it counts each as
  // its connection ends).
  std::string page;
  for (int i = 0; i < 100000 && page.empty(); ++i) {
    page = Get(server->port(), Request("GET", "/index.html"));
  }
  EXPECT_TRUE(absl::StartsWith(page, "HTTP/1.1 200")) << page;
}

TEST(WebServerStartTest, RefusesAnAddressBeyondLoopbackUnlessInsecure) {
  WebServerOptions options;
  options.address = "0.0.0.0:0";
  auto server = WebServer::Start(
      options,
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().message(),
            "--http 0.0.0.0:0: the web page is served without TLS; serve it "
            "on loopback (and reach it through an SSH tunnel) or pass "
            "--insecure");
}

}  // namespace
}  // namespace meridian
