// Authorizer: who may do what on the collector (docs/security.md).
//
// `--auth-tokens FILE` gives the tokens, one per line, each with the
// scopes it grants; blank lines and `#` comments are ignored:
//
//   # TOKEN                           SCOPE:JOB-GLOB ...
//   4b1f0c2e9d7a4e3f8a61b2c3d4e5f607  write:* trace:*      # the agents
//   9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a  read:alice-* trace:alice-*
//
// Scopes: `read` (queries, exports, the job list), `write` (ingest: every
// job a batch names; clock probes and trace polling need write on some
// job), `trace` (`meridian trace` orders). Globs are fnmatch(3) patterns
// over job names. `agent:GLOB` binds a token to the agent ids it may send
// as (batches and polls name their agent; its batches are deduplicated and
// its clock models kept under that id): a token with any `agent:` grant
// may use only matching ids, one with none any id. Clients send
// `authorization: Bearer TOKEN`.
//
// The file must be a regular file readable by its owner only; each line is
// checked once at load (INVALID_ARGUMENT naming the line). Without a file
// every caller may do everything: the collector then listens on loopback
// only, or wherever `--insecure` lets it.
//
// Check() answers UNAUTHENTICATED (no token, unknown token) or
// PERMISSION_DENIED (naming the scope and the job asked for, never any
// other job). Thread-safe: immutable after Load.
#ifndef MERIDIAN_COLLECTOR_AUTHORIZER_H_
#define MERIDIAN_COLLECTOR_AUTHORIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace meridian {

enum class Scope { kRead, kWrite, kTrace, kAgent };

class Authorizer {
 public:
  // Everyone may do everything.
  static std::shared_ptr<const Authorizer> AllowAll();
  static absl::StatusOr<std::shared_ptr<const Authorizer>> Load(
      const std::string& path);
  // From the file's text (for tests); `name` is used in messages.
  static absl::StatusOr<std::shared_ptr<const Authorizer>> Parse(
      const std::string& text, const std::string& name);

  // May the caller `scope` job `job`?
  grpc::Status Check(const grpc::ServerContext& context, Scope scope,
                     const std::string& job) const;
  // May the caller `scope` some job?
  grpc::Status CheckAny(const grpc::ServerContext& context, Scope scope) const;
  // May the caller send as agent `agent_id` (agent: grants)?
  grpc::Status CheckAgent(const grpc::ServerContext& context,
                          const std::string& agent_id) const;
  // The caller's identity, for keying what it stores: "" for an open
  // collector, else "token-" and 8 hex digits of the token's CRC-32C (the
  // token itself is never stored). Call after a Check has passed.
  std::string Identity(const grpc::ServerContext& context) const;
  // Check(...).ok(), for filtering lists.
  bool Allows(const grpc::ServerContext& context, Scope scope,
              const std::string& job) const;

  bool open() const { return open_; }

 private:
  struct Grant {
    Scope scope;
    std::string glob;
  };
  struct Token {
    std::string secret;
    std::vector<Grant> grants;
  };
  Authorizer() = default;
  // The caller's token, or an error status.
  const Token* Find(const grpc::ServerContext& context,
                    grpc::Status* status) const;

  bool open_ = false;
  std::vector<Token> tokens_;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_AUTHORIZER_H_
