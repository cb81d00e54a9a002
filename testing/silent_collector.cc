#include "testing/silent_collector.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace meridian {
namespace {

// The calls (or connections) seen, and waiting for them.
class CallLog {
 public:
  void Add(const std::string& method) {
    absl::MutexLock lock(&mu_);
    calls_.push_back(method);
  }
  bool WaitFor(const std::string& method, int count, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto seen = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      int n = 0;
      for (const std::string& call : calls_) n += call == method ? 1 : 0;
      return n >= count;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), timeout);
  }
  std::vector<std::string> calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
};

// What both kinds answer from: the calls seen, and where they listen.
class LoggedSilentCollector : public SilentCollector {
 public:
  const std::string& address() const override { return address_; }
  bool WaitFor(const std::string& method, int count,
               absl::Duration timeout) override {
    return log_.WaitFor(method, count, timeout);
  }
  std::vector<std::string> calls() const override { return log_.calls(); }

 protected:
  CallLog log_;
  std::string address_;
};

class TcpSilentCollector : public LoggedSilentCollector {
 public:
  ~TcpSilentCollector() override {
    if (thread_.joinable()) {
      const uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof(one));
      thread_.join();
    }
    for (int fd : {listen_fd_, wake_fd_}) {
      if (fd >= 0) close(fd);
    }
  }

  absl::Status Listen() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    wake_fd_ = eventfd(0, EFD_CLOEXEC);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listen_fd_ < 0 || wake_fd_ < 0 ||
        bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(listen_fd_, 64) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
      return absl::InternalError(
          absl::StrCat("silent TCP listener: ", strerror(errno)));
    }
    address_ = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
    thread_ = std::thread([this] { Serve(); });
    return absl::OkStatus();
  }

 private:
  // Accepts, reads and discards until woken; never writes.
  void Serve() {
    std::vector<pollfd> fds = {{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (;;) {
      if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
      if (fds[0].revents != 0) break;
      if (fds[1].revents & POLLIN) {
        const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          fds.push_back({fd, POLLIN, 0});
          log_.Add("");
        }
      }
      for (size_t i = 2; i < fds.size();) {
        char discard[4096];
        if (fds[i].revents != 0 &&
            read(fds[i].fd, discard, sizeof(discard)) <= 0) {
          close(fds[i].fd);
          fds.erase(fds.begin() + i);
          continue;
        }
        fds[i].revents = 0;
        ++i;
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) close(fds[i].fd);
  }

  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;
};

// Holds a call open: reads nothing, writes nothing, finishes only when the
// call is cancelled (by the client, its deadline, or the server's shutdown).
class SilentReactor : public grpc::ServerGenericBidiReactor {
 public:
  void OnCancel() override {
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }
  void OnDone() override { delete this; }
};

class SilentService : public grpc::CallbackGenericService {
 public:
  explicit SilentService(CallLog* log) : log_(log) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    log_->Add(context->method());
    return new SilentReactor;
  }

 private:
  CallLog* const log_;
};

class GrpcSilentCollector : public LoggedSilentCollector {
 public:
  GrpcSilentCollector() : service_(&log_) {}
  ~GrpcSilentCollector() override {
    // Every call held open is cancelled now, and so ends.
    if (server_ != nullptr) server_->Shutdown(gpr_now(GPR_CLOCK_MONOTONIC));
  }

  absl::Status Listen() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterCallbackGenericService(&service_);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port == 0) {
      return absl::InternalError("silent gRPC server: cannot listen");
    }
    address_ = absl::StrCat("127.0.0.1:", port);
    return absl::OkStatus();
  }

 private:
  SilentService service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SilentCollector>> SilentCollector::Start(
    Kind kind) {
  if (kind == Kind::kTcp) {
    auto collector = std::make_unique<TcpSilentCollector>();
    if (absl::Status s = collector->Listen(); !s.ok()) return s;
    return std::unique_ptr<SilentCollector>(std::move(collector));
  }
  auto collector = std::make_unique<GrpcSilentCollector>();
  if (absl::Status s = collector->Listen(); !s.ok()) return s;
  return std::unique_ptr<SilentCollector>(std::move(collector));
}

const char* KindName(SilentCollector::Kind kind) {
  return kind == SilentCollector::Kind::kTcp ? "Tcp" : "Grpc";
}

}  // namespace meridian
