#include "net/client_channel.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "grpcpp/support/client_interceptor.h"

namespace meridian {
namespace {

// Adds the token to every call's initial metadata.
class TokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(const std::string* header) : header_(header) {}
  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::
                PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class TokenInterceptorFactory
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(std::string token)
      : header_("Bearer " + std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(&header_);
  }

 private:
  const std::string header_;  // lives as long as the channel
};

void FromEnvironment(const char* name, std::string* value) {
  const char* set = getenv(name);
  if (value->empty() && set != nullptr) *value = set;
}

}  // namespace

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  }
  std::string data;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0 &&
         data.size() < (1 << 20)) {
    data.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (n < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", path, ": ", strerror(errno)));
  }
  return data;
}

absl::StatusOr<std::string> ReadPrivateFile(const std::string& path,
                                            const std::string& name,
                                            const std::string& holds) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read ", name, ": ", strerror(errno)));
  }
  if (!S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has mode %04o: other users could read %s; chmod 600 it", name,
        st.st_mode & 07777, holds));
  }
  return ReadSmallFile(path);
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  auto data = ReadPrivateFile(path, "the token file " + path, "the token");
  if (!data.ok()) return data.status();
  absl::string_view line = *data;
  line = line.substr(0, line.find('\n'));
  line = absl::StripAsciiWhitespace(line);
  if (line.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the token file ", path, " holds no token"));
  }
  return std::string(line);
}

absl::Status AddSecurityFromEnvironment(ClientSecurity* security) {
  FromEnvironment("MERIDIAN_TLS_CA", &security->tls_ca_file);
  FromEnvironment("MERIDIAN_TLS_CERT", &security->tls_cert_file);
  FromEnvironment("MERIDIAN_TLS_KEY", &security->tls_key_file);
  FromEnvironment("MERIDIAN_TOKEN", &security->token);
  const char* file = getenv("MERIDIAN_TOKEN_FILE");
  if (security->token.empty() && file != nullptr && *file != '\0') {
    auto token = ReadTokenFile(file);
    if (!token.ok()) return token.status();
    security->token = *token;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ClientChannel(
    const std::string& address, const ClientSecurity& security,
    int max_reply_bytes) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.tls_cert_file.empty() != security.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "give both a client certificate and its key (MERIDIAN_TLS_CERT and "
        "MERIDIAN_TLS_KEY), or neither");
  }
  if (security.tls_ca_file.empty()) {
    if (!security.tls_cert_file.empty()) {
      return absl::InvalidArgumentError(
          "a client certificate needs TLS: give the collector's CA too "
          "(MERIDIAN_TLS_CA)");
    }
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions options;
    auto ca = ReadSmallFile(security.tls_ca_file);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
    if (!security.tls_cert_file.empty()) {
      auto cert = ReadSmallFile(security.tls_cert_file);
      if (!cert.ok()) return cert.status();
      auto key = ReadSmallFile(security.tls_key_file);
      if (!key.ok()) return key.status();
      options.pem_cert_chain = *cert;
      options.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(max_reply_bytes);
  if (security.token.empty()) {
    return grpc::CreateCustomChannel(address, credentials, arguments);
  }
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<TokenInterceptorFactory>(security.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, credentials, arguments, std::move(interceptors));
}

}  // namespace meridian
