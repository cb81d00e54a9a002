#include "collector/collector.h"

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/client_channel.h"

namespace meridian {

namespace {

// Whether HOST:PORT is a loopback address (nobody else can reach it).
bool Loopback(const std::string& listen) {
  std::string host = listen.substr(0, listen.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" ||
         absl::StartsWith(host, "127.") || absl::StartsWith(listen, "unix:");
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const CollectorOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "give both --tls-cert and --tls-key, or neither");
  }
  if (options.tls_cert.empty()) {
    if (!options.tls_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls-ca (client certificates) needs --tls-cert and --tls-key");
    }
    return grpc::InsecureServerCredentials();
  }
  auto cert = ReadSmallFile(options.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadSmallFile(options.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(
      options.tls_ca.empty()
          ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  if (!options.tls_ca.empty()) {
    auto ca = ReadSmallFile(options.tls_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Collector>> Collector::Start(
    const CollectorOptions& options) {
  if (!Loopback(options.listen) && !options.insecure &&
      (options.tls_cert.empty() || options.auth_tokens.empty())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "refusing to listen on ", options.listen,
        " without TLS and tokens: anyone who reaches it could write into "
        "and read every job. Give --tls-cert, --tls-key and --auth-tokens "
        "(docs/security.md), or --insecure on a network where every client "
        "is trusted"));
  }
  auto credentials = ServerCredentials(options);
  if (!credentials.ok()) return credentials.status();
  std::shared_ptr<const Authorizer> auth = Authorizer::AllowAll();
  if (!options.auth_tokens.empty()) {
    auto loaded = Authorizer::Load(options.auth_tokens);
    if (!loaded.ok()) return loaded.status();
    auth = *loaded;
  }
  StoreOptions store_options;
  store_options.full_sync = options.full_sync;
  auto store = Store::Open(options.db_path, store_options);
  if (!store.ok()) return store.status();

  std::unique_ptr<Collector> collector(new Collector());
  collector->writer_ = std::make_unique<BatchWriter>(std::move(*store), 200000,
                                                     options.max_queue_bytes);
  collector->auth_ = auth;
  collector->ingest_ = std::make_unique<IngestService>(collector->writer_.get(),
                                                       auth, options.ingest);
  collector->clock_ = std::make_unique<ClockService>(auth);
  collector->control_ = std::make_unique<ControlService>(auth);
  collector->query_ = std::make_unique<QueryService>(
      options.db_path,
      [auth](const grpc::ServerContext& context, const std::string& job) {
        return job.empty() ? auth->CheckAny(context, Scope::kRead)
                           : auth->Check(context, Scope::kRead, job);
      });

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, *credentials, &collector->port_);
  // gRPC shares ports (SO_REUSEPORT) by default: a second collector on the
  // same port would silently take half the agents. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  grpc::ResourceQuota quota("meridian-collector");
  quota.SetMaxThreads(2 * options.ingest.max_streams + 64);
  builder.SetResourceQuota(quota);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterService(collector->ingest_.get());
  builder.RegisterService(collector->clock_.get());
  builder.RegisterService(collector->control_.get());
  builder.RegisterService(collector->query_.get());
  collector->server_ = builder.BuildAndStart();
  if (!collector->server_ || collector->port_ == 0) {
    collector->Shutdown();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (in use, or not an address of this machine?)"));
  }
  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  collector->address_ = absl::StrCat(host, ":", collector->port_);
  return collector;
}

Collector::~Collector() { Shutdown(); }

void Collector::Shutdown(absl::Duration grace) {
  if (shut_down_) return;
  shut_down_ = true;
  control_->Shutdown();  // a waiting `meridian trace` answers now
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() +
                      absl::ToChronoNanoseconds(grace));
    server_->Wait();
  }
  writer_->Shutdown();
}

}  // namespace meridian
