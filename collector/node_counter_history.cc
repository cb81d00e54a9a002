#include "collector/node_counter_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

bool IsName(const std::string& name) {
  if (name.empty() || name.size() > NodeCounterHistory::kMaxNameBytes) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' ||
           c == '-';
  });
}

// The least change that counts, in the counter's unit (its name's end).
double Floor(const std::string& name) {
  struct Unit {
    const char* suffix;
    double floor;
  };
  static constexpr Unit kUnits[] = {
      {"_percent", 10},
      {"errors_per_s", 1},
      {"_bytes_per_s", 1e6},
      {"_bytes", 256.0 * (1 << 20)},
      {"_mhz", 100},
      {"_c", 5},
      {"_w", 25},
      {"throttle_reasons", 0.5},
  };
  for (const Unit& u : kUnits) {
    if (absl::EndsWith(name, u.suffix)) return u.floor;
  }
  return 0;
}

// The median of the finite values at `at` of `samples`; NaN with fewer
// than kMinSamples of them.
template <typename It>
double Median(It first, It last, size_t at) {
  std::vector<double> v;
  for (It it = first; it != last; ++it) {
    if (at < it->values.size() && !std::isnan(it->values[at])) {
      v.push_back(it->values[at]);
    }
  }
  if (v.size() < NodeCounterHistory::kMinSamples) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

absl::Status NodeCounterHistory::Check(const Counters& counters) {
  if (counters.size() > kMaxCounters) {
    return absl::InvalidArgumentError(absl::StrCat(
        counters.size(), " node counters, more than ", kMaxCounters));
  }
  for (const v1::NodeCounterValue& c : counters) {
    if (!IsName(c.name())) {
      return absl::InvalidArgumentError(
          "a node counter's name is not 1 to 64 bytes of [A-Za-z0-9_.:-]");
    }
    if (!std::isfinite(c.value())) {
      return absl::InvalidArgumentError(
          absl::StrCat("node counter ", c.name(), " is not finite"));
    }
  }
  return absl::OkStatus();
}

size_t NodeCounterHistory::ValuesOf(const Node& node) const {
  size_t n = 0;
  for (const Sample& s : node.samples) n += s.values.size();
  return n;
}

void NodeCounterHistory::Add(const std::string& node, const Counters& counters,
                             int64_t node_ns, absl::Time at) {
  if (counters.empty()) return;
  absl::MutexLock lock(&mutex_);
  if (at - swept_ > absl::Minutes(1)) {  // forget the silent, now and then
    swept_ = at;
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      if (at - it->second.last > kForget) {
        values_ -= ValuesOf(it->second);
        it = nodes_.erase(it);
      } else {
        ++it;
      }
    }
  }
  auto it = nodes_.find(node);
  if (it != nodes_.end() && !it->second.samples.empty() &&
      it->second.samples.back().node_ns >= node_ns) {
    it->second.last = at;
    return;  // kept already (or older)
  }
  // The sample's values: one per name the node has or gets.
  size_t grows = it == nodes_.end() ? 0 : it->second.names.size();
  for (const v1::NodeCounterValue& c : counters) {
    grows += it == nodes_.end() || it->second.index.count(c.name()) == 0;
  }
  if (values_ + grows > kMaxValues &&
      (it == nodes_.end() || it->second.samples.size() < kSamples)) {
    ++refused_;
    return;
  }
  if (it == nodes_.end()) it = nodes_.emplace(node, Node{}).first;
  Node& n = it->second;
  n.last = at;
  Sample sample{at, node_ns, {}};
  for (const v1::NodeCounterValue& c : counters) {
    auto [name, added] = n.index.try_emplace(c.name(), n.names.size());
    if (added) n.names.push_back(c.name());
    if (sample.values.size() <= name->second) {
      sample.values.resize(name->second + 1,
                           std::numeric_limits<double>::quiet_NaN());
    }
    sample.values[name->second] = c.value();
  }
  values_ += sample.values.size();
  n.samples.push_back(std::move(sample));
  while (n.samples.size() > kSamples) {
    values_ -= n.samples.front().values.size();
    n.samples.pop_front();
  }
}

std::vector<v1::HealthCounterChange> NodeCounterHistory::Changed(
    const std::string& node, absl::Time from) const {
  std::vector<v1::HealthCounterChange> out;
  absl::MutexLock lock(&mutex_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return out;
  const std::deque<Sample>& samples = it->second.samples;
  // [before_first, before_end): the last kWindow received before
  // from - kMargin; [since_first, end): the last kWindow from `from` on.
  const auto received_before = [](const Sample& s, absl::Time t) {
    return s.at < t;
  };
  const auto before_end = std::lower_bound(samples.begin(), samples.end(),
                                           from - kMargin, received_before);
  const auto since =
      std::lower_bound(samples.begin(), samples.end(), from, received_before);
  const auto before_first =
      before_end - std::min<ptrdiff_t>(before_end - samples.begin(), kWindow);
  const auto since_first =
      samples.end() - std::min<ptrdiff_t>(samples.end() - since, kWindow);
  struct Change {
    double score;
    v1::HealthCounterChange change;
  };
  std::vector<Change> changes;
  const std::vector<std::string>& names = it->second.names;
  for (size_t i = 0; i < names.size(); ++i) {
    const double before = Median(before_first, before_end, i);
    const double now = Median(since_first, samples.end(), i);
    if (std::isnan(before) || std::isnan(now)) continue;
    const double floor = Floor(names[i]);
    const double d = std::fabs(now - before);
    if (d == 0 || d < floor || d < 0.25 * std::fabs(before)) continue;
    Change& c = changes.emplace_back();
    c.score = d / std::max(std::fabs(before), floor);
    c.change.set_name(names[i]);
    c.change.set_baseline(before);
    c.change.set_now(now);
  }
  std::stable_sort(
      changes.begin(), changes.end(),
      [](const Change& a, const Change& b) { return a.score > b.score; });
  for (Change& c : changes) {
    if (out.size() == kMaxChanges) break;
    out.push_back(std::move(c.change));
  }
  return out;
}

uint64_t NodeCounterHistory::refused() const {
  absl::MutexLock lock(&mutex_);
  return refused_;
}

}  // namespace meridian
