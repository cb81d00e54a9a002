// ControlService over real loopback gRPC, with real tokens (Authorizer).
// Agents are played by the test thread: each poll is one PollTrace call,
// and a RequestTrace runs on its own thread until its reply comes.
#include "collector/control_service.h"

#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr char kAgents[] = "agents-token-0123456789";  // write:* trace:*
constexpr char kAliceAgent[] = "alice-agent-0123456789";
constexpr char kAlice[] = "alice-token-0123456789";
constexpr char kTokens[] = R"(agents-token-0123456789  write:* trace:*
alice-agent-0123456789   write:alice-*
alice-token-0123456789   read:alice-* trace:alice-*
)";

using Applied = std::vector<std::pair<uint64_t, uint32_t>>;

class ControlServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto auth = Authorizer::Parse(kTokens, "tokens");
    ASSERT_TRUE(auth.ok()) << auth.status();
    service_ = std::make_unique<ControlService>(
        *auth, [this](const std::string& job) -> absl::StatusOr<int64_t> {
          absl::MutexLock lock(&mu_);
          deleted_.push_back(job);
          return delete_result_;
        });
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    stub_ = v1::Control::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    service_->Shutdown();
    server_->Shutdown();
  }

  static void Authorize(grpc::ClientContext* context, const char* token) {
    if (token != nullptr) {
      context->AddMetadata("authorization", std::string("Bearer ") + token);
    }
  }

  grpc::Status Request(const char* token, const std::string& job,
                       uint32_t steps, uint32_t seconds, uint32_t timeout_ms,
                       v1::TraceReply* reply) {
    grpc::ClientContext context;
    Authorize(&context, token);
    v1::TraceRequest request;
    request.set_job(job);
    request.set_steps(steps);
    request.set_seconds(seconds);
    request.set_timeout_ms(timeout_ms);
    return stub_->RequestTrace(&context, request, reply);
  }
  // RequestTrace on its own thread: the reply once it comes.
  std::future<v1::TraceReply> RequestLater(const char* token,
                                           const std::string& job,
                                           uint32_t steps,
                                           uint32_t timeout_ms) {
    return std::async(std::launch::async, [=] {
      v1::TraceReply reply;
      EXPECT_TRUE(Request(token, job, steps, 0, timeout_ms, &reply).ok());
      return reply;
    });
  }

  grpc::Status Poll(const char* token, const std::string& agent, uint64_t after,
                    const Applied& applied, v1::PollReply* reply,
                    const std::string& node = "") {
    grpc::ClientContext context;
    Authorize(&context, token);
    v1::PollRequest request;
    request.set_agent_id(agent);
    request.set_node(node.empty() ? "node-" + agent : node);
    request.set_after(after);
    request.set_poll_ms(1000);
    for (const auto& [id, processes] : applied) {
      v1::PollRequest::Applied* a = request.add_applied();
      a->set_id(id);
      a->set_processes(processes);
    }
    return stub_->PollTrace(&context, request, reply);
  }
  // An agent's first poll: it is known, and waited for, from now on.
  void Register(const char* token, const std::string& agent) {
    v1::PollReply reply;
    ASSERT_TRUE(Poll(token, agent, 0, {}, &reply).ok());
    EXPECT_EQ(reply.orders_size(), 0);
  }
  // Polls (reporting nothing) until order `id` has been made.
  v1::PollReply AwaitOrder(const char* token, const std::string& agent,
                           uint64_t id) {
    v1::PollReply reply;
    do {
      reply.Clear();
      const grpc::Status status = Poll(token, agent, 0, {}, &reply);
      if (!status.ok()) {
        ADD_FAILURE() << status.error_message();
        break;
      }
    } while (reply.latest() < id);
    return reply;
  }

  absl::Mutex mu_;
  absl::StatusOr<int64_t> delete_result_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> deleted_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ControlService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Control::Stub> stub_;
};

std::string Nodes(const v1::TraceReply& reply) {
  std::string out;
  for (const v1::TraceReply::Node& n : reply.nodes()) {
    out += n.node() + "(" + n.agent_id() +
           "):" + std::to_string(n.processes()) + " ";
  }
  return out;
}

TEST_F(ControlServiceTest, AnOrderReachesTwoAgentsAndTheReplyNamesEach) {
  Register(kAgents, "a");
  Register(kAgents, "b");
  auto reply = RequestLater(kAgents, "train", 5, 60000);
  for (const char* agent : {"a", "b"}) {
    const v1::PollReply poll = AwaitOrder(kAgents, agent, 1);
    ASSERT_EQ(poll.orders_size(), 1);
    EXPECT_EQ(poll.orders(0).id(), 1u);
    EXPECT_EQ(poll.orders(0).job(), "train");
    EXPECT_EQ(poll.orders(0).steps(), 5u);
    EXPECT_EQ(poll.orders(0).seconds(), 0u);
  }
  v1::PollReply poll;
  ASSERT_TRUE(Poll(kAgents, "a", 1, {{1, 4}}, &poll).ok());
  EXPECT_EQ(poll.orders_size(), 0);
  ASSERT_TRUE(Poll(kAgents, "b", 1, {{1, 0}}, &poll).ok());
  const v1::TraceReply got = reply.get();
  EXPECT_EQ(got.id(), 1u);
  EXPECT_EQ(Nodes(got), "node-a(a):4 node-b(b):0 ");
  EXPECT_EQ(got.unanswered(), 0u);
}

TEST_F(ControlServiceTest, AnAgentThatNeverAnswersIsUnansweredAtTheTimeout) {
  Register(kAgents, "a");
  Register(kAgents, "b");  // live, but never polls again
  const absl::Time began = absl::Now();
  auto reply = RequestLater(kAgents, "train", 2, 200);
  AwaitOrder(kAgents, "a", 1);
  v1::PollReply poll;
  ASSERT_TRUE(Poll(kAgents, "a", 1, {{1, 3}}, &poll).ok());
  const v1::TraceReply got = reply.get();
  EXPECT_GE(absl::Now() - began, absl::Milliseconds(200));
  EXPECT_EQ(got.id(), 1u);
  EXPECT_EQ(Nodes(got), "node-a(a):3 ");
  EXPECT_EQ(got.unanswered(), 1u);
}

TEST_F(ControlServiceTest, RefusesCallersWithoutTheScope) {
  v1::TraceReply reply;
  grpc::Status status = Request(kAliceAgent, "alice-1", 1, 0, 100, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "the token may not trace job \"alice-1\"");
  status = Request(kAlice, "bob-1", 1, 0, 100, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "the token may not trace job \"bob-1\"");
  status = Request(nullptr, "alice-1", 1, 0, 100, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(status.error_message(),
            "this collector needs a token: set MERIDIAN_TOKEN or "
            "MERIDIAN_TOKEN_FILE (docs/security.md)");
  v1::PollReply poll;
  status = Poll(kAlice, "a", 0, {}, &poll);  // polling needs write
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "the token grants no write scope");
  // No refused request made an order.
  ASSERT_TRUE(Poll(kAgents, "a", 0, {}, &poll).ok());
  EXPECT_EQ(poll.latest(), 0u);
}

TEST_F(ControlServiceTest, PollHandsOutOnlyOrdersOfJobsTheTokenMayWrite) {
  Register(kAliceAgent, "x");
  auto bob = RequestLater(kAgents, "bob-1", 1, 100);
  v1::PollReply poll = AwaitOrder(kAliceAgent, "x", 1);
  EXPECT_EQ(poll.orders_size(), 0);
  auto alice = RequestLater(kAlice, "alice-1", 3, 60000);
  poll = AwaitOrder(kAliceAgent, "x", 2);
  EXPECT_EQ(poll.latest(), 2u);
  ASSERT_EQ(poll.orders_size(), 1);
  EXPECT_EQ(poll.orders(0).id(), 2u);
  EXPECT_EQ(poll.orders(0).job(), "alice-1");
  ASSERT_TRUE(Poll(kAliceAgent, "x", 2, {{2, 6}}, &poll).ok());
  EXPECT_EQ(bob.get().id(), 1u);
  const v1::TraceReply got = alice.get();
  EXPECT_EQ(got.id(), 2u);
  EXPECT_EQ(Nodes(got), "node-x(x):6 ");
  EXPECT_EQ(got.unanswered(), 0u);
}

// An agent is never sent an order of a job its token may not write, so the
// order is not waited for there: bob's trace used to wait for alice's agent
// until its timeout, and to count it unanswered.
TEST_F(ControlServiceTest, ATraceDoesNotWaitForAgentsThatMayNotWriteTheJob) {
  Register(kAgents, "w");
  Register(kAliceAgent, "x");
  const absl::Time began = absl::Now();
  auto reply = RequestLater(kAgents, "bob-1", 1, 5000);
  AwaitOrder(kAgents, "w", 1);
  v1::PollReply poll;
  ASSERT_TRUE(Poll(kAgents, "w", 1, {{1, 5}}, &poll).ok());
  EXPECT_EQ(AwaitOrder(kAliceAgent, "x", 1).orders_size(), 0);
  const v1::TraceReply got = reply.get();
  EXPECT_LT(absl::Now() - began, absl::Seconds(5));
  EXPECT_EQ(got.id(), 1u);
  EXPECT_EQ(Nodes(got), "node-w(w):5 ");
  EXPECT_EQ(got.unanswered(), 0u);
}

TEST_F(ControlServiceTest, ShutdownAnswersAWaitingRequestAndLaterOnesAtOnce) {
  Register(kAgents, "a");
  const absl::Time began = absl::Now();
  auto reply = RequestLater(kAgents, "train", 1, 600000);
  AwaitOrder(kAgents, "a", 1);  // the request is waiting for a
  service_->Shutdown();
  v1::TraceReply got = reply.get();
  EXPECT_EQ(got.id(), 1u);
  EXPECT_EQ(got.nodes_size(), 0);
  EXPECT_EQ(got.unanswered(), 1u);
  got.Clear();
  ASSERT_TRUE(Request(kAgents, "train", 1, 0, 600000, &got).ok());
  EXPECT_EQ(got.id(), 2u);
  EXPECT_EQ(got.unanswered(), 1u);
  EXPECT_LT(absl::Now() - began, absl::Seconds(60));
}

TEST_F(ControlServiceTest, RefusesBadRequestsWithTheirReason) {
  auto refusal = [this](const std::string& job, uint32_t steps,
                        uint32_t seconds) {
    v1::TraceReply reply;
    const grpc::Status status =
        Request(kAgents, job, steps, seconds, 100, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  EXPECT_EQ(refusal("", 1, 0), "no job given");
  EXPECT_EQ(refusal(std::string(257, 'j'), 1, 0),
            "the job name is 257 bytes; at most 256 are allowed");
  EXPECT_EQ(refusal("train", 0, 0), "give one of steps and seconds");
  EXPECT_EQ(refusal("train", 2, 3), "give one of steps and seconds");
  EXPECT_EQ(refusal("train", 1000001, 0),
            "at most 1000000 steps or 86400 seconds");
  EXPECT_EQ(refusal("train", 0, 86401),
            "at most 1000000 steps or 86400 seconds");
  auto poll_refusal = [this](const std::string& agent,
                             const std::string& node) {
    v1::PollReply reply;
    const grpc::Status status = Poll(kAgents, agent, 0, {}, &reply, node);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    return status.error_message();
  };
  EXPECT_EQ(poll_refusal("", "n"), "no agent id");
  EXPECT_EQ(poll_refusal(std::string(257, 'a'), "n"),
            "the agent id is 257 bytes; at most 256 are allowed");
  EXPECT_EQ(poll_refusal("a", std::string(300, 'n')),
            "the node name is 300 bytes; at most 256 are allowed");
  // The limits themselves are allowed; nothing refused made an order.
  v1::TraceReply reply;
  ASSERT_TRUE(
      Request(kAgents, std::string(256, 'j'), 1000000, 0, 100, &reply).ok());
  EXPECT_EQ(reply.id(), 1u);
  ASSERT_TRUE(Request(kAgents, "train", 0, 86400, 100, &reply).ok());
  EXPECT_EQ(reply.id(), 2u);
}

TEST_F(ControlServiceTest, DeleteJobReturnsTheStoresCountOrWhyNot) {
  auto delete_job = [this](const char* token, const std::string& job,
                           int64_t* spans) {
    grpc::ClientContext context;
    Authorize(&context, token);
    v1::DeleteJobRequest request;
    request.set_job(job);
    v1::DeleteJobReply reply;
    const grpc::Status status = stub_->DeleteJob(&context, request, &reply);
    *spans = reply.spans();
    return status;
  };
  int64_t spans = -1;
  {
    absl::MutexLock lock(&mu_);
    delete_result_ = 42;
  }
  ASSERT_TRUE(delete_job(kAliceAgent, "alice-1", &spans).ok());
  EXPECT_EQ(spans, 42);
  grpc::Status status = delete_job(kAlice, "alice-1", &spans);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "the token may not write job \"alice-1\"");
  status = delete_job(kAgents, "", &spans);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "no job given");
  {
    absl::MutexLock lock(&mu_);
    delete_result_ = absl::NotFoundError("store /x/meridian.db: no job gone");
  }
  status = delete_job(kAgents, "gone", &spans);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "no job \"gone\" in the collector's store");
  {
    absl::MutexLock lock(&mu_);
    delete_result_ = absl::DataLossError("store /x/meridian.db: disk I/O");
  }
  status = delete_job(kAgents, "train", &spans);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  // The store's path stays in the collector's log.
  EXPECT_EQ(status.error_message(),
            "deleting job \"train\" failed: the collector's log says why");
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(deleted_, (std::vector<std::string>{"alice-1", "gone", "train"}));
}

TEST(ControlServiceAloneTest, WithoutADeleteFunctionDeleteIsUnimplemented) {
  ControlService service(Authorizer::AllowAll());
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto stub =
      v1::Control::NewStub(server->InProcessChannel(grpc::ChannelArguments()));
  grpc::ClientContext context;
  v1::DeleteJobRequest request;
  request.set_job("train");
  v1::DeleteJobReply reply;
  const grpc::Status status = stub->DeleteJob(&context, request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_EQ(status.error_message(), "this collector cannot delete jobs");
  server->Shutdown();
}

}  // namespace
}  // namespace meridian
