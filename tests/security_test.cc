// The collector's port as a hostile network sees it: TLS, mutual TLS, and
// tokens with per-job read/write/trace scopes, over real gRPC.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "collector/collector.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "meridian/v1/control.grpc.pb.h"
#include "meridian/v1/query.grpc.pb.h"
#include "net/client_channel.h"
#include "wire/batch_builder.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

constexpr char kAgentToken[] = "agent-token-0123456789";
constexpr char kAliceToken[] = "alice-token-0123456789";
constexpr char kAliceAgentToken[] = "alice-agent-token-0123";
constexpr char kNodeToken[] = "node-7-token-0123456789";
constexpr char kOtherAgentToken[] = "other-agent-token-0123";
constexpr char kAliceOwnerToken[] = "alice-owner-token-0123";

std::string Tls(const std::string& name) {
  return std::string(getenv("TEST_SRCDIR")) + "/meridian/tests/testdata/tls/" +
         name;
}

std::string Temp(const std::string& name) {
  return std::string(getenv("TEST_TMPDIR")) + "/" + name;
}

std::string TokenFile(int mode) {
  const std::string path = Temp("tokens-" + std::to_string(mode));
  std::ofstream(path) << "# the agents\n"
                      << kAgentToken << "  write:* trace:*\n"
                      << kAliceToken << "  read:alice-* trace:alice-*\n"
                      << kAliceAgentToken << "  write:alice-*\n"
                      << kNodeToken << "  write:* agent:node-7/*\n"
                      << kOtherAgentToken << "  write:*\n"
                      << kAliceOwnerToken << "  read:alice-* write:alice-*\n";
  chmod(path.c_str(), mode);
  return path;
}

v1::Batch Batch(const std::string& agent, uint64_t seq,
                const std::string& job) {
  BatchBuilder builder(agent, seq);
  int p = builder.DeclareProcess({job, "host", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "step", 1700000000000000000, 10);
  return builder.Take();
}

TEST(SecurityTest, BeyondLoopbackOnlyWithTlsAndTokensOrInsecure) {
  CollectorOptions options;
  options.listen = "0.0.0.0:0";
  options.db_path = Temp("open.db");
  auto refused = Collector::Start(options);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "refusing to listen on 0.0.0.0:0 without TLS and tokens: anyone "
            "who reaches it could write into and read every job. Give "
            "--tls-cert, --tls-key and --auth-tokens (docs/security.md), or "
            "--insecure on a network where every client is trusted");
  options.insecure = true;
  EXPECT_TRUE(Collector::Start(options).ok());
  // A token file other users could read is refused.
  options.insecure = false;
  options.tls_cert = Tls("collector.crt");
  options.tls_key = Tls("collector.key");
  options.auth_tokens = TokenFile(0644);
  auto readable = Collector::Start(options);
  EXPECT_EQ(readable.status().message(),
            "--auth-tokens " + options.auth_tokens +
                " has mode 0644: other users could read the tokens; chmod "
                "600 it");
}

class SecuredCollector : public ::testing::Test {
 protected:
  void SetUp() override {
    CollectorOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = Temp("secured.db");
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((options.db_path + suffix).c_str());
    }
    options.tls_cert = Tls("collector.crt");
    options.tls_key = Tls("collector.key");
    options.tls_ca = Tls("ca.crt");
    options.auth_tokens = TokenFile(0600);
    auto collector = Collector::Start(options);
    ASSERT_TRUE(collector.ok()) << collector.status();
    collector_ = std::move(*collector);
  }

  // A channel with the agent's certificate and `token`.
  std::shared_ptr<grpc::Channel> Channel(const std::string& token,
                                         const std::string& cert = "agent") {
    ClientSecurity security;
    security.tls_ca_file = Tls("ca.crt");
    security.tls_cert_file = Tls(cert + ".crt");
    security.tls_key_file = Tls(cert + ".key");
    security.token = token;
    auto channel = ClientChannel(collector_->address(), security);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return *channel;
  }

  static grpc::Status ListJobs(const std::shared_ptr<grpc::Channel>& channel,
                               v1::ListJobsReply* reply) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(10));
    return v1::Query::NewStub(channel)->ListJobs(&context, {}, reply);
  }

  std::unique_ptr<Collector> collector_;
};

// One HTTP GET of the web page's JSON with `token` ("": none): the status
// line and the body.
std::pair<std::string, std::string> HttpGet(int port, const std::string& path,
                                            const std::string& token) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address))) {
    close(fd);
    return {};
  }
  std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "Connection: close\r\n\r\n";
  (void)!write(fd, request.data(), request.size());
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
  close(fd);
  const size_t line = response.find("\r\n");
  const size_t body = response.find("\r\n\r\n");
  return {response.substr(0, line),
          body == std::string::npos ? "" : response.substr(body + 4)};
}

// The web page asks the Query service with the browser's token: the same
// answers, job by job, as a gRPC client with that token gets.
TEST(SecurityTest, TheWebPageAsksWithTheBrowsersToken) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp("web.db");
  options.auth_tokens = TokenFile(0600);
  options.http = "127.0.0.1:0";
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  ClientSecurity agent;
  agent.token = kAgentToken;
  IngestClient ingest(*ClientChannel((*collector)->address(), agent));
  auto sent = ingest.SendAll(
      {Batch("agent-1", 1, "alice-1"), Batch("agent-1", 2, "bob-1")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  const int port = (*collector)->http_port();
  ASSERT_GT(port, 0);
  auto none = HttpGet(port, "/api/jobs", "");
  EXPECT_EQ(none.first, "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(none.second,
            "{\"error\":\"this collector needs a token: set MERIDIAN_TOKEN or "
            "MERIDIAN_TOKEN_FILE (docs/security.md)\"}\n");
  auto alice = HttpGet(port, "/api/jobs", kAliceToken);
  EXPECT_EQ(alice.first, "HTTP/1.1 200 OK");
  EXPECT_NE(alice.second.find("\"job\":\"alice-1\""), std::string::npos);
  EXPECT_EQ(alice.second.find("bob-1"), std::string::npos) << alice.second;
  auto bob = HttpGet(port, "/api/steps?job=bob-1", kAliceToken);
  EXPECT_EQ(bob.first, "HTTP/1.1 403 Forbidden");
  EXPECT_EQ(bob.second,
            "{\"error\":\"the token may not read job \\\"bob-1\\\"\"}\n");
  EXPECT_EQ(HttpGet(port, "/api/trace?job=bob-1", kAliceToken).first,
            "HTTP/1.1 403 Forbidden");
  EXPECT_EQ(HttpGet(port, "/api/trace?job=alice-1", kAliceToken).first,
            "HTTP/1.1 200 OK");
  // An error names no path of the collector's.
  auto missing = HttpGet(port, "/api/job?job=alice-nosuch", kAliceToken);
  EXPECT_EQ(missing.first, "HTTP/1.1 404 Not Found");
  EXPECT_EQ(missing.second,
            "{\"error\":\"no job \\\"alice-nosuch\\\" in the collector's store "
            "(`meridian jobs` lists the stored jobs)\"}\n");
  (*collector)->Shutdown();

  // Clients known by certificate alone: the page could not tell them apart.
  CollectorOptions mutual;
  mutual.listen = "127.0.0.1:0";
  mutual.db_path = Temp("web-mutual.db");
  mutual.tls_cert = Tls("collector.crt");
  mutual.tls_key = Tls("collector.key");
  mutual.tls_ca = Tls("ca.crt");
  mutual.http = "127.0.0.1:0";
  auto refused = Collector::Start(mutual);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "--http with --tls-ca and no --auth-tokens: clients are known by "
            "their certificates, which the web page's requests cannot carry; "
            "give --auth-tokens (the page sends a token) or drop --http");
}

TEST_F(SecuredCollector, RefusesClientsWithoutAValidCertificate) {
  v1::ListJobsReply reply;
  // No TLS at all.
  EXPECT_EQ(ListJobs(grpc::CreateChannel(collector_->address(),
                                         grpc::InsecureChannelCredentials()),
                     &reply)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // TLS but no client certificate.
  ClientSecurity no_cert;
  no_cert.tls_ca_file = Tls("ca.crt");
  no_cert.token = kAgentToken;
  EXPECT_EQ(ListJobs(*ClientChannel(collector_->address(), no_cert), &reply)
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // A certificate another CA signed.
  EXPECT_EQ(ListJobs(Channel(kAgentToken, "stranger"), &reply).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // The right certificate: then the token decides.
  grpc::Status status = ListJobs(Channel(""), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(),
            "this collector needs a token: set MERIDIAN_TOKEN or "
            "MERIDIAN_TOKEN_FILE (docs/security.md)");
  status = ListJobs(Channel("not-a-known-token-at-all"), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(),
            "the token is not one this collector knows");
}

TEST_F(SecuredCollector, EachTokenReachesOnlyItsJobs) {
  // The agents' token writes any job.
  IngestClient agent(Channel(kAgentToken));
  auto sent = agent.SendAll(
      {Batch("agent-1", 1, "alice-1"), Batch("agent-1", 2, "bob-1")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->stored, 2);
  // An agent token for alice's jobs cannot write bob's.
  IngestClient alice_agent(Channel(kAliceAgentToken));
  sent = alice_agent.SendAll(
      {Batch("agent-2", 1, "alice-2"), Batch("agent-2", 2, "bob-2")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->stored, 1);
  ASSERT_EQ(sent->rejections.size(), 1u);
  EXPECT_EQ(sent->rejections[0], "the token may not write job \"bob-2\"");

  // Alice reads alice's jobs only, and learns of no other.
  auto alice = Channel(kAliceToken);
  v1::ListJobsReply jobs;
  ASSERT_TRUE(ListJobs(alice, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 2);
  EXPECT_EQ(jobs.jobs(0).job(), "alice-1");
  EXPECT_EQ(jobs.jobs(1).job(), "alice-2");
  auto query = v1::Query::NewStub(alice);
  for (const char* job : {"alice-1", "bob-1"}) {
    grpc::ClientContext context;
    v1::StatsRequest request;
    request.mutable_filter()->set_job(job);
    v1::StatsReply stats;
    grpc::Status status = query->GetStats(&context, request, &stats);
    if (std::string(job) == "alice-1") {
      EXPECT_TRUE(status.ok()) << status.error_message();
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
      EXPECT_EQ(status.error_message(), "the token may not read job \"bob-1\"");
    }
  }
  // The agents' token may not read; alice may not order bob's job traced.
  EXPECT_EQ(ListJobs(Channel(kAgentToken), &jobs).error_message(),
            "the token grants no read scope");
  grpc::ClientContext context;
  v1::TraceRequest order;
  order.set_job("bob-1");
  order.set_steps(1);
  v1::TraceReply reply;
  grpc::Status status =
      v1::Control::NewStub(alice)->RequestTrace(&context, order, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "the token may not trace job \"bob-1\"");
}

// A refusal no resend can change ends the send at once, with its code and
// reason, instead of retrying and calling it temporary.
TEST_F(SecuredCollector, AStreamRefusedForGoodIsNotRetried) {
  IngestClient reader(Channel(kAliceToken));
  auto sent = reader.SendAll({Batch("agent-3", 1, "alice-3")});
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(sent.status().message(),
            "the collector refused the stream: the token grants no write "
            "scope; 1 of 1 batches unsent (sending again cannot help)");
  IngestClient nobody(Channel(""));
  sent = nobody.SendAll({Batch("agent-3", 1, "alice-3")});
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.status().code(), absl::StatusCode::kUnauthenticated);
}

// What stores needs write: a read-only token reads the clock solution but
// may not solve and store a new one (`clocks --resolve`).
TEST_F(SecuredCollector, AReadOnlyTokenCannotStoreANewClockSolution) {
  IngestClient agent(Channel(kAgentToken));
  auto sent = agent.SendAll({Batch("agent-1", 1, "alice-1")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  auto clocks = [&](const char* token, bool resolve, v1::ClocksReply* reply) {
    grpc::ClientContext context;
    v1::ClocksRequest request;
    request.set_job("alice-1");
    request.set_resolve(resolve);
    return v1::Query::NewStub(Channel(token))
        ->GetClocks(&context, request, reply);
  };
  v1::ClocksReply reply;
  grpc::Status status = clocks(kAliceToken, true, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(),
            "the token may not write job \"alice-1\": clocks --resolve stores "
            "a new solution (without --resolve, the stored one is read)");
  status = clocks(kAliceToken, false, &reply);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.nodes_size(), 1);
  // Read and write: solved again.
  status = clocks(kAliceOwnerToken, true, &reply);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(reply.stored());
  // A writer without read learns nothing of it.
  status = clocks(kAgentToken, true, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "the token may not read job \"alice-1\"");
}

// A token bound to its agent ids: it cannot send as another agent, whose
// batches it could otherwise make look like duplicates (they are
// deduplicated by agent id and sequence) or whose clock models it could
// replace.
TEST_F(SecuredCollector, ATokenBoundToItsAgentsCannotPoseAsAnother) {
  IngestClient node7(Channel(kNodeToken));
  auto sent = node7.SendAll({Batch("node-7/agent-1", 1, "alice-9"),
                             Batch("node-8/agent-1", 1, "alice-9")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->stored, 1);
  ASSERT_EQ(sent->rejections.size(), 1u);
  EXPECT_EQ(sent->rejections[0],
            "the token may not send as agent \"node-8/agent-1\"");
}

// Two clients with write scope, one sending first as the other's agent id
// and sequence numbers: the real agent's batch is still stored (before:
// answered as a duplicate, and lost), because batches are kept under the
// token that sent them.
TEST_F(SecuredCollector, APoseCannotMakeARealBatchADuplicate) {
  IngestClient intruder(Channel(kOtherAgentToken));
  auto sent = intruder.SendAll({Batch("node-1/agent-1", 1, "alice-5")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->stored, 1);
  IngestClient real(Channel(kAgentToken));
  sent = real.SendAll({Batch("node-1/agent-1", 1, "alice-5")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->stored, 1);
  EXPECT_EQ(sent->duplicate, 0);
  // Resent by the real agent: now a duplicate, of its own batch.
  sent = real.SendAll({Batch("node-1/agent-1", 1, "alice-5")});
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->duplicate, 1);
}

}  // namespace
}  // namespace meridian
