#include "collector/authorizer.h"

#include <fnmatch.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/crc32c.h"
#include "net/client_channel.h"

namespace meridian {
namespace {

const char* ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kRead:
      return "read";
    case Scope::kWrite:
      return "write";
    case Scope::kTrace:
      return "trace";
    case Scope::kAgent:
      return "agent";
  }
  return "?";
}

// Compares without stopping at the first difference, so the time taken
// says nothing about how much of a guess was right.
bool SameSecret(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ |= a[i] ^ b[i];
  return differ == 0;
}

}  // namespace

std::shared_ptr<const Authorizer> Authorizer::AllowAll() {
  std::shared_ptr<Authorizer> all(new Authorizer());
  all->open_ = true;
  return all;
}

absl::StatusOr<std::shared_ptr<const Authorizer>> Authorizer::Load(
    const std::string& path) {
  auto text = ReadPrivateFile(path, "--auth-tokens " + path, "the tokens");
  if (!text.ok()) return text.status();
  return Parse(*text, path);
}

absl::StatusOr<std::shared_ptr<const Authorizer>> Authorizer::Parse(
    const std::string& text, const std::string& name) {
  std::shared_ptr<Authorizer> authorizer(new Authorizer());
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = line.substr(0, line.find('#'));
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (words.empty()) continue;
    auto fail = [&](const std::string& why) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " line ", number, ": ", why));
    };
    Token token;
    token.secret = std::string(words[0]);
    if (token.secret.size() < 16) {
      return fail("a token must be at least 16 characters");
    }
    for (const Token& other : authorizer->tokens_) {
      if (other.secret == token.secret) return fail("the token is repeated");
    }
    if (words.size() < 2) return fail("the token grants no scope");
    for (size_t i = 1; i < words.size(); ++i) {
      const size_t colon = words[i].find(':');
      const absl::string_view scope = words[i].substr(0, colon);
      Grant grant;
      if (scope == "read") {
        grant.scope = Scope::kRead;
      } else if (scope == "write") {
        grant.scope = Scope::kWrite;
      } else if (scope == "trace") {
        grant.scope = Scope::kTrace;
      } else if (scope == "agent") {
        grant.scope = Scope::kAgent;
      } else {
        return fail(absl::StrCat("\"", words[i],
                                 "\" is not read:GLOB, write:GLOB, "
                                 "trace:GLOB or agent:GLOB"));
      }
      if (colon == absl::string_view::npos || colon + 1 == words[i].size()) {
        return fail(absl::StrCat("\"", words[i], "\" names no job glob"));
      }
      grant.glob = std::string(words[i].substr(colon + 1));
      token.grants.push_back(std::move(grant));
    }
    authorizer->tokens_.push_back(std::move(token));
  }
  if (authorizer->tokens_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " holds no token: every call would be refused"));
  }
  return std::shared_ptr<const Authorizer>(authorizer);
}

const Authorizer::Token* Authorizer::Find(const grpc::ServerContext& context,
                                          grpc::Status* status) const {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    *status =
        grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                     "this collector needs a token: set MERIDIAN_TOKEN or "
                     "MERIDIAN_TOKEN_FILE (docs/security.md)");
    return nullptr;
  }
  absl::string_view header(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&header, "Bearer ")) {
    *status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                           "the authorization header is not \"Bearer TOKEN\"");
    return nullptr;
  }
  const Token* found = nullptr;
  for (const Token& token : tokens_) {
    if (SameSecret(token.secret, header)) found = &token;
  }
  if (found == nullptr) {
    *status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                           "the token is not one this collector knows");
  }
  return found;
}

grpc::Status Authorizer::Check(const grpc::ServerContext& context, Scope scope,
                               const std::string& job) const {
  if (open_) return grpc::Status::OK;
  grpc::Status status;
  const Token* token = Find(context, &status);
  if (token == nullptr) return status;
  for (const Grant& grant : token->grants) {
    if (grant.scope == scope &&
        fnmatch(grant.glob.c_str(), job.c_str(), 0) == 0) {
      return grpc::Status::OK;
    }
  }
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      absl::StrCat("the token may not ", ScopeName(scope),
                                   " job \"", job.substr(0, 256), "\""));
}

grpc::Status Authorizer::CheckAny(const grpc::ServerContext& context,
                                  Scope scope) const {
  if (open_) return grpc::Status::OK;
  grpc::Status status;
  const Token* token = Find(context, &status);
  if (token == nullptr) return status;
  for (const Grant& grant : token->grants) {
    if (grant.scope == scope) return grpc::Status::OK;
  }
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat("the token grants no ", ScopeName(scope), " scope"));
}

grpc::Status Authorizer::CheckAgent(const grpc::ServerContext& context,
                                    const std::string& agent_id) const {
  if (open_) return grpc::Status::OK;
  grpc::Status status;
  const Token* token = Find(context, &status);
  if (token == nullptr) return status;
  bool bound = false;
  for (const Grant& grant : token->grants) {
    if (grant.scope != Scope::kAgent) continue;
    bound = true;
    if (fnmatch(grant.glob.c_str(), agent_id.c_str(), 0) == 0) {
      return grpc::Status::OK;
    }
  }
  if (!bound) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      absl::StrCat("the token may not send as agent \"",
                                   agent_id.substr(0, 256), "\""));
}

std::string Authorizer::Identity(const grpc::ServerContext& context) const {
  if (open_) return "";
  grpc::Status status;
  const Token* token = Find(context, &status);
  if (token == nullptr) return "";
  return absl::StrFormat("token-%08x", Crc32c(token->secret));
}

bool Authorizer::Allows(const grpc::ServerContext& context, Scope scope,
                        const std::string& job) const {
  return Check(context, scope, job).ok();
}

}  // namespace meridian
