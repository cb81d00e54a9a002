// TraceRelay against a real ControlService over loopback gRPC.
#include "agent/trace_relay.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <thread>

#include "collector/control_service.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

class TraceRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(port, 0);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Control::NewStub(channel_);
  }
  void TearDown() override {
    service_.Shutdown();
    server_->Shutdown();
  }

  v1::TraceReply Request(const std::string& job, uint32_t steps,
                         uint32_t timeout_ms = 0,
                         grpc::Status* status = nullptr) {
    grpc::ClientContext context;
    v1::TraceRequest request;
    request.set_job(job);
    request.set_steps(steps);
    request.set_timeout_ms(timeout_ms);
    v1::TraceReply reply;
    grpc::Status s = stub_->RequestTrace(&context, request, &reply);
    if (status != nullptr) *status = s;
    return reply;
  }

  v1::PollReply Poll(const std::string& agent, uint64_t after,
                     std::vector<std::pair<uint64_t, uint32_t>> applied = {}) {
    grpc::ClientContext context;
    v1::PollRequest request;
    request.set_agent_id(agent);
    request.set_node("node-" + agent);
    request.set_after(after);
    request.set_poll_ms(1000);
    for (const auto& [id, processes] : applied) {
      v1::PollRequest::Applied* a = request.add_applied();
      a->set_id(id);
      a->set_processes(processes);
    }
    v1::PollReply reply;
    EXPECT_TRUE(stub_->PollTrace(&context, request, &reply).ok());
    return reply;
  }

  ControlService service_{Authorizer::AllowAll()};
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Control::Stub> stub_;
};

// What the agent's loop does with a relay: wakes on the eventfd, applies
// each order to its `processes` processes of `job` (0 for other jobs).
class AgentLoop {
 public:
  AgentLoop(std::shared_ptr<grpc::Channel> channel, const std::string& node,
            const std::string& job, uint32_t processes)
      : wake_fd_(eventfd(0, EFD_CLOEXEC)),
        relay_(std::make_unique<TraceRelay>(channel, "agent-" + node, node, 50,
                                            wake_fd_)),
        thread_([this, job, processes] {
          uint64_t count;
          while (read(wake_fd_, &count, sizeof(count)) == sizeof(count) &&
                 !stop_) {
            for (const v1::TraceOrder& order : relay_->Take()) {
              steps_[order.id()] = order.steps();
              relay_->Applied(order.id(), order.job() == job ? processes : 0);
            }
          }
        }) {}
  ~AgentLoop() { Stop(); }
  // Stops the loop and the relay: the agent is gone.
  void Stop() {
    if (stop_.exchange(true)) return;
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    thread_.join();
    relay_.reset();
    close(wake_fd_);
  }
  uint32_t StepsOf(uint64_t id) {
    auto it = steps_.find(id);
    return it == steps_.end() ? 0 : it->second;
  }

 private:
  int wake_fd_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<TraceRelay> relay_;
  std::map<uint64_t, uint32_t> steps_;  // the loop thread's until Stop()
  std::thread thread_;
};

// Asks for a job nobody serves until `n` agents answer: each has polled
// the collector at least once, so it is waited for from then on.
void AwaitAgents(int n, const std::function<v1::TraceReply()>& ping) {
  while (ping().nodes_size() < n) {
  }
}

v1::ProcessActivity WithSteps(int64_t pid, int64_t first, int64_t last) {
  v1::ProcessActivity p;
  p.set_job("j");
  p.set_rank(0);
  p.set_pid(pid);
  for (int64_t step = first; step <= last; ++step) {
    p.add_steps()->set_step(step);
  }
  return p;
}

std::vector<int64_t> StepsOf(const v1::ProcessActivity& p) {
  std::vector<int64_t> steps;
  for (const v1::StepTime& s : p.steps()) steps.push_back(s.step());
  return steps;
}

TEST(TraceRelayStepsTest, StepsNotDeliveredAreCarriedIntoTheNextSample) {
  std::vector<v1::ProcessActivity> before = {
      WithSteps(1, 0, 1), WithSteps(2, 0, 1000), WithSteps(3, 5, 5)};
  std::vector<v1::ProcessActivity> now = {WithSteps(1, 2, 3),
                                          WithSteps(2, 1001, 1030)};
  TraceRelay::CarrySteps(&before, &now);
  EXPECT_EQ(StepsOf(now[0]), (std::vector<int64_t>{0, 1, 2, 3}));
  // The newest 1024 of 1,031.
  ASSERT_EQ(now[1].steps_size(), 1024);
  EXPECT_EQ(now[1].steps(0).step(), 7);
  EXPECT_EQ(now[1].steps(1023).step(), 1030);
  // Process 3 is gone: its steps with it.
}

TEST_F(TraceRelayTest, EveryLiveAgentAppliesAnOrderAndTheReplyNamesEach) {
  AgentLoop a(channel_, "a", "train", 4);
  AgentLoop b(channel_, "b", "other-job", 2);
  AwaitAgents(2, [&] { return Request("nobody", 1); });
  const v1::TraceReply reply = Request("train", 5);
  EXPECT_EQ(reply.unanswered(), 0u);
  ASSERT_EQ(reply.nodes_size(), 2);
  std::map<std::string, uint32_t> processes;
  for (const auto& node : reply.nodes())
    processes[node.node()] = node.processes();
  EXPECT_EQ(processes, (std::map<std::string, uint32_t>{{"a", 4}, {"b", 0}}));
  EXPECT_EQ(reply.nodes(0).agent_id(), "agent-" + reply.nodes(0).node());
  a.Stop();
  b.Stop();
  EXPECT_EQ(a.StepsOf(reply.id()), 5u);
  EXPECT_EQ(b.StepsOf(reply.id()), 5u);
}

TEST_F(TraceRelayTest, AnAgentThatStopsAnsweringIsCountedAndNothingElseWaits) {
  AgentLoop a(channel_, "a", "train", 4);
  AgentLoop b(channel_, "b", "train", 2);
  AwaitAgents(2, [&] { return Request("nobody", 1); });
  b.Stop();  // still live for 3 s after its last poll, but never answers
  const v1::TraceReply reply = Request("train", 1, /*timeout_ms=*/300);
  EXPECT_EQ(reply.unanswered(), 1u);
  ASSERT_EQ(reply.nodes_size(), 1);
  EXPECT_EQ(reply.nodes(0).node(), "a");
  EXPECT_EQ(reply.nodes(0).processes(), 4u);
  // The service goes on: the next request gets a's answer again.
  EXPECT_EQ(Request("train", 1, 300).nodes(0).processes(), 4u);
}

TEST_F(TraceRelayTest, WithNoAgentARequestAnswersAtOnceWithNoNodes) {
  const v1::TraceReply reply = Request("train", 2);
  EXPECT_EQ(reply.id(), 1u);
  EXPECT_EQ(reply.nodes_size(), 0);
  EXPECT_EQ(reply.unanswered(), 0u);
}

TEST_F(TraceRelayTest, AnAgentGetsOnlyOrdersMadeSinceItsFirstPoll) {
  Request("train", 2);  // order 1: before the agent
  const v1::PollReply first = Poll("x", 0);
  EXPECT_EQ(first.orders_size(), 0);
  EXPECT_EQ(first.latest(), 1u);
  auto pending =
      std::async(std::launch::async, [&] { return Request("train", 3); });
  v1::PollReply next;
  while ((next = Poll("x", 1)).orders_size() == 0) {
  }
  ASSERT_EQ(next.orders_size(), 1);
  EXPECT_EQ(next.orders(0).id(), 2u);
  EXPECT_EQ(next.orders(0).job(), "train");
  EXPECT_EQ(next.orders(0).steps(), 3u);
  EXPECT_EQ(next.latest(), 2u);
  EXPECT_EQ(Poll("x", 2, {{2, 7}}).orders_size(), 0);
  const v1::TraceReply reply = pending.get();
  ASSERT_EQ(reply.nodes_size(), 1);
  EXPECT_EQ(reply.nodes(0).node(), "node-x");
  EXPECT_EQ(reply.nodes(0).processes(), 7u);
  // An `after` from an earlier collector run (beyond latest) starts over.
  EXPECT_EQ(Poll("x", 99).orders_size(), 0);
}

TEST_F(TraceRelayTest, RefusesRequestsWithoutAJobOrWithoutOneWindow) {
  grpc::Status status;
  Request("", 2, 0, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "no job given");
  Request("train", 0, 0, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "give one of steps and seconds");
  grpc::ClientContext context;
  v1::PollRequest no_id;
  v1::PollReply reply;
  status = stub_->PollTrace(&context, no_id, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // Still serving.
  EXPECT_EQ(Request("train", 2).unanswered(), 0u);
}

// Bounds on what a client may ask: one huge job name in an order used to
// break every agent's polling.
TEST_F(TraceRelayTest, RefusesOversizedNamesAndWindows) {
  grpc::Status status;
  Request(std::string(1 << 20, 'j'), 1, 100, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "the job name is 1048576 bytes; at most 256 are allowed");
  Request("job", 2000000, 100, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "at most 1000000 steps or 86400 seconds");
  grpc::ClientContext context;
  v1::PollRequest request;
  request.set_agent_id(std::string(300, 'a'));
  request.set_poll_ms(UINT32_MAX);
  v1::PollReply reply;
  status = stub_->PollTrace(&context, request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "the agent id is 300 bytes; at most 256 are allowed");
  // The service still serves: no order was made by the refused requests.
  EXPECT_EQ(Poll("a", 0).latest(), 0u);
}

}  // namespace
}  // namespace meridian
