#include "query/trace_chunks.h"

namespace meridian {

bool SendChunks(grpc::ServerContext* context, absl::string_view data,
                grpc::ServerWriter<v1::TraceChunk>* writer) {
  constexpr size_t kChunk = 64 * 1024;
  v1::TraceChunk chunk;
  for (size_t at = 0; at < data.size(); at += kChunk) {
    const absl::string_view piece = data.substr(at, kChunk);
    chunk.set_data(piece.data(), piece.size());
    if (context->IsCancelled() || !writer->Write(chunk)) return false;
  }
  return true;
}

grpc::Status WriteChunks(grpc::ServerContext* context, const std::string& data,
                         grpc::ServerWriter<v1::TraceChunk>* writer) {
  if (!SendChunks(context, data, writer)) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the client stopped reading");
  }
  return grpc::Status::OK;
}

}  // namespace meridian
