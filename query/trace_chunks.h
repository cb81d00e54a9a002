// Streams of v1::TraceChunk: what a writer hands over at once, sent as
// chunks of at most 64 KiB (a trace's metadata for 16,384 ranks is
// megabytes, beyond gRPC's 4 MiB message limit).
#ifndef MERIDIAN_QUERY_TRACE_CHUNKS_H_
#define MERIDIAN_QUERY_TRACE_CHUNKS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/sync_stream.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

// Sends `data` as chunks; false if the client stopped reading.
bool SendChunks(grpc::ServerContext* context, absl::string_view data,
                grpc::ServerWriter<v1::TraceChunk>* writer);
// The same, as the call's status: CANCELLED if the client stopped reading.
grpc::Status WriteChunks(grpc::ServerContext* context, const std::string& data,
                         grpc::ServerWriter<v1::TraceChunk>* writer);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_TRACE_CHUNKS_H_
