#include "net/metrics_endpoint.h"

#include <exception>

#include "absl/strings/str_cat.h"
#include "prometheus/collectable.h"
#include "prometheus/exposer.h"

namespace meridian {

class MetricsEndpoint::Collectable : public prometheus::Collectable {
 public:
  explicit Collectable(MetricsEndpoint::CollectFn collect)
      : collect_(std::move(collect)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    return collect_();
  }

 private:
  const MetricsEndpoint::CollectFn collect_;
};

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address, CollectFn collect) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint());
  // prometheus-cpp reports a failed bind by throwing: caught here, at the
  // library's boundary.
  try {
    endpoint->exposer_ = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  const std::vector<int> ports = endpoint->exposer_->GetListeningPorts();
  endpoint->port_ = ports.empty() ? 0 : ports.front();
  endpoint->collectable_ = std::make_shared<Collectable>(std::move(collect));
  endpoint->exposer_->RegisterCollectable(endpoint->collectable_);
  return endpoint;
}

MetricsEndpoint::~MetricsEndpoint() = default;

namespace {

prometheus::MetricFamily One(const std::string& name, const std::string& help,
                             bool counter, double value) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type =
      counter ? prometheus::MetricType::Counter : prometheus::MetricType::Gauge;
  prometheus::ClientMetric metric;
  if (counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(metric);
  return family;
}

}  // namespace

prometheus::MetricFamily CounterFamily(const std::string& name,
                                       const std::string& help, double value) {
  return One(name, help, true, value);
}

prometheus::MetricFamily GaugeFamily(const std::string& name,
                                     const std::string& help, double value) {
  return One(name, help, false, value);
}

prometheus::MetricFamily LabeledFamily(
    const std::string& name, const std::string& help, bool counter,
    const std::string& label,
    const std::vector<std::pair<std::string, double>>& values) {
  prometheus::MetricFamily family = One(name, help, counter, 0);
  family.metric.clear();
  for (const auto& [label_value, value] : values) {
    prometheus::ClientMetric metric;
    metric.label.push_back({label, label_value});
    if (counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(metric);
  }
  return family;
}

}  // namespace meridian
