#include "testing/clickhouse_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace meridian {
namespace {

// A loopback port nobody listens on now (the kernel's pick; another
// process could take it before the server does, which the start reports).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

// The front that serves chDB's engine (testing/chdb_front_main.cc), from
// the test's runfiles.
std::string FrontBinary() {
  const char* runfiles = getenv("TEST_SRCDIR");
  const std::string path = absl::StrCat(runfiles != nullptr ? runfiles : ".",
                                        "/meridian/testing/chdb_front");
  return access(path.c_str(), X_OK) == 0 ? path : "";
}

std::string Find() {
  for (const char* path :
       {"/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<ClickHouseServer>> ClickHouseServer::Start(
    const std::string& config) {
  std::unique_ptr<ClickHouseServer> server(new ClickHouseServer());
  const char* chdb = getenv("MERIDIAN_CLICKHOUSE_CHDB");
  if (chdb != nullptr && *chdb != '\0') {
    if (!config.empty()) {
      return absl::FailedPreconditionError(
          "a ClickHouse cluster needs clickhouse-server's native port; the "
          "current ClickHouse (chDB, MERIDIAN_CLICKHOUSE_CHDB) is served over "
          "HTTP only");
    }
    if (access(chdb, R_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "MERIDIAN_CLICKHOUSE_CHDB names ", chdb,
          ", which is not there (deploy/dependencies.sh installs it)"));
    }
    server->chdb_library_ = chdb;
    server->binary_ = FrontBinary();
    if (server->binary_.empty()) {
      return absl::FailedPreconditionError(
          "testing/chdb_front is not in this test's runfiles");
    }
  } else {
    server->binary_ = Find();
  }
  if (server->binary_.empty()) {
    return absl::FailedPreconditionError(
        "clickhouse-server is not installed (deploy/dependencies.sh installs "
        "Debian's clickhouse-server)");
  }
  char dir[] = "/tmp/meridian-clickhouse-XXXXXX";
  if (mkdtemp(dir) == nullptr) return absl::InternalError("mkdtemp failed");
  server->dir_ = dir;
  const int http = FreePort(), tcp = FreePort(), interserver = FreePort();
  server->endpoint_.port = http;
  server->tcp_port_ = tcp;
  server->endpoint_.user = "meridian";
  server->endpoint_.password = "test-password-7f3a";
  std::ofstream(server->dir_ + "/config.xml")
      << "<?xml version=\"1.0\"?>\n<yandex>\n"
      << "  <logger><level>warning</level><log>" << server->dir_
      << "/server.log</log><errorlog>" << server->dir_
      << "/error.log</errorlog><console>0</console></logger>\n"
      << "  <listen_host>127.0.0.1</listen_host>\n"
      << "  <http_port>" << http << "</http_port>\n"
      << "  <tcp_port>" << tcp << "</tcp_port>\n"
      << "  <interserver_http_port>" << interserver
      << "</interserver_http_port>\n"
      << "  <path>" << server->dir_ << "/data/</path>\n"
      << "  <tmp_path>" << server->dir_ << "/tmp/</tmp_path>\n"
      << "  <users_config>" << server->dir_ << "/users.xml</users_config>\n"
      << "  <default_profile>default</default_profile>\n"
      << "  <default_database>default</default_database>\n"
      << "  <mark_cache_size>268435456</mark_cache_size>\n"
      << absl::StrReplaceAll(config, {{"{tcp_port}", std::to_string(tcp)}})
      << "</yandex>\n";
  std::ofstream(server->dir_ + "/users.xml")
      << "<?xml version=\"1.0\"?>\n<yandex>\n"
      << "  <profiles><default></default></profiles>\n"
      << "  <users><meridian><password>" << server->endpoint_.password
      << "</password><networks><ip>127.0.0.1</ip></networks>"
      << "<profile>default</profile><quota>default</quota></meridian></users>\n"
      << "  <quotas><default></default></quotas>\n</yandex>\n";
  absl::Status launched = server->Launch();
  if (!launched.ok()) return launched;
  return server;
}

absl::Status ClickHouseServer::Launch() {
  const std::string config = "--config-file=" + dir_ + "/config.xml";
  const std::string log = dir_ + "/stdout.log";
  const std::string port = std::to_string(endpoint_.port);
  // Everything the child needs is made before fork (only async-signal-safe
  // calls between fork and exec): the front's environment, its output.
  std::vector<std::string> environment = {
      "MERIDIAN_CHDB_FRONT_USER=" + endpoint_.user,
      "MERIDIAN_CHDB_FRONT_PASSWORD=" + endpoint_.password};
  for (char** e = environ; *e != nullptr; ++e) environment.push_back(*e);
  std::vector<char*> envp;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (out < 0) return absl::InternalError("cannot open " + log);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out, STDOUT_FILENO);
    dup2(out, STDERR_FILENO);
    if (!chdb_library_.empty()) {
      const char* argv[] = {binary_.c_str(), chdb_library_.c_str(),
                            dir_.c_str(), port.c_str(), nullptr};
      execve(binary_.c_str(), const_cast<char* const*>(argv), envp.data());
    } else {
      execl(binary_.c_str(), binary_.c_str(), config.c_str(),
            static_cast<char*>(nullptr));
    }
    _exit(127);
  }
  close(out);
  if (pid_ < 0) return absl::InternalError("fork failed");
  // Ready when it answers a query (polled; the first start creates its
  // system tables and takes a few seconds).
  auto client = ClickHouseClient::Connect(endpoint_);
  if (!client.ok()) return client.status();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto answer = (*client)->Query("SELECT 1");
    if (answer.ok() && *answer == "1\n") return absl::OkStatus();
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::ifstream in(dir_ +
                   (chdb_library_.empty() ? "/error.log" : "/stdout.log"));
  std::stringstream text;
  text << in.rdbuf();
  return absl::UnavailableError(
      absl::StrCat(binary_, " did not answer on port ", endpoint_.port, ": ",
                   text.str().substr(0, 2000)));
}

absl::Status ClickHouseServer::Restart() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  return Launch();
}

ClickHouseServer::~ClickHouseServer() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (!dir_.empty()) {
    const std::string command = "rm -rf " + dir_;
    (void)!system(command.c_str());
  }
}

}  // namespace meridian
