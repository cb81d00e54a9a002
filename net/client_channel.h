// ClientChannel: how the agent and the CLI reach the collector. With TLS
// (the collector's certificate checked against a CA; a client certificate
// for mutual TLS) or without, and with a bearer token sent on every call
// as `authorization: Bearer TOKEN` metadata (docs/security.md).
//
// Settings come from flags or, for anything a flag does not give, the
// environment:
//   MERIDIAN_TLS_CA     PEM file of the CA that signed the collector's
//                       certificate; TLS is used when it is set
//   MERIDIAN_TLS_CERT   this client's certificate and key (PEM), for a
//   MERIDIAN_TLS_KEY    collector that requires them (mutual TLS)
//   MERIDIAN_TOKEN      the token itself, else
//   MERIDIAN_TOKEN_FILE a file whose first line is the token; it must be
//                       readable by its owner only
#ifndef MERIDIAN_NET_CLIENT_CHANNEL_H_
#define MERIDIAN_NET_CLIENT_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace meridian {

struct ClientSecurity {
  std::string tls_ca_file;  // empty: no TLS
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string token;  // empty: none sent
};

// Fills what `security` leaves empty from the environment.
absl::Status AddSecurityFromEnvironment(ClientSecurity* security);

// The contents of `path`, which must be a regular file that no other user
// may read: INVALID_ARGUMENT if it cannot be read, FAILED_PRECONDITION
// naming its mode otherwise. `name` says what it is in messages ("the token
// file PATH"), `holds` what others could read ("the token").
absl::StatusOr<std::string> ReadPrivateFile(const std::string& path,
                                            const std::string& name,
                                            const std::string& holds);

// The first line of `path`, a private file (ReadPrivateFile).
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

// A channel to `address` with `security`; INVALID_ARGUMENT if a named file
// cannot be read or only one of the certificate and its key is given.
// Replies larger than `max_reply_bytes` fail (gRPC's RESOURCE_EXHAUSTED):
// the agent keeps gRPC's 4 MiB; the CLI takes up to kCliMaxReplyBytes (a
// whole job's critical path lists every segment of the path).
inline constexpr int kCliMaxReplyBytes = 1 << 30;
absl::StatusOr<std::shared_ptr<grpc::Channel>> ClientChannel(
    const std::string& address, const ClientSecurity& security,
    int max_reply_bytes = 4 << 20);

// Reads a whole file (certificates, keys).
absl::StatusOr<std::string> ReadSmallFile(const std::string& path);

}  // namespace meridian

#endif  // MERIDIAN_NET_CLIENT_CHANNEL_H_
