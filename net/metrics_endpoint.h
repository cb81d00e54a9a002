// MetricsEndpoint: Prometheus metrics on http://ADDRESS/metrics, served by
// prometheus-cpp's pull Exposer (Debian's prometheus-cpp-dev), for
// `meridian-collector --metrics` and `meridian-agent --metrics`.
//
// At each scrape the endpoint calls `collect` (on the exposer's thread) and
// serves what it returns in the text format, so the daemons keep their own
// counters and pay nothing between scrapes. Metric names and labels:
// docs/operations.md. The address should be loopback or a monitoring
// network: the samples name jobs.
#ifndef MERIDIAN_NET_METRICS_ENDPOINT_H_
#define MERIDIAN_NET_METRICS_ENDPOINT_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/metric_family.h"

namespace prometheus {
class Exposer;
}

namespace meridian {

class MetricsEndpoint {
 public:
  using CollectFn = std::function<std::vector<prometheus::MetricFamily>()>;

  // Listens on `address` (HOST:PORT; port 0 picks one); UNAVAILABLE naming
  // the address if it cannot.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address, CollectFn collect);
  ~MetricsEndpoint();

  int port() const { return port_; }

 private:
  MetricsEndpoint() = default;
  class Collectable;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<Collectable> collectable_;
  int port_ = 0;
};

// One-sample families, for `collect`.
prometheus::MetricFamily CounterFamily(const std::string& name,
                                       const std::string& help, double value);
prometheus::MetricFamily GaugeFamily(const std::string& name,
                                     const std::string& help, double value);
// A family with one sample per label value of `label`.
prometheus::MetricFamily LabeledFamily(
    const std::string& name, const std::string& help, bool counter,
    const std::string& label,
    const std::vector<std::pair<std::string, double>>& values);

}  // namespace meridian

#endif  // MERIDIAN_NET_METRICS_ENDPOINT_H_
