#include "collector/collector.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace meridian {

absl::StatusOr<std::unique_ptr<Collector>> Collector::Start(
    const CollectorOptions& options) {
  StoreOptions store_options;
  store_options.full_sync = options.full_sync;
  auto store = Store::Open(options.db_path, store_options);
  if (!store.ok()) return store.status();

  std::unique_ptr<Collector> collector(new Collector());
  collector->writer_ = std::make_unique<BatchWriter>(std::move(*store), 200000,
                                                     options.max_queue_bytes);
  collector->ingest_ =
      std::make_unique<IngestService>(collector->writer_.get(), options.ingest);
  collector->clock_ = std::make_unique<ClockService>();
  collector->control_ = std::make_unique<ControlService>();
  collector->query_ = std::make_unique<QueryService>(options.db_path);

  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &collector->port_);
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
