// ScenarioFixture (tests): a scenario job (testing/scenario_job.h) written to
// a real store (SQLite under TEST_TMPDIR, or ClickHouse where
// MERIDIAN_TEST_STORE=clickhouse: testing/test_store.h) and loaded back the way
// the query service loads a job: catalog, JobClocks, JobSpans, DependencyGraph.
#ifndef MERIDIAN_QUERY_SCENARIO_FIXTURE_H_
#define MERIDIAN_QUERY_SCENARIO_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/clocks/job_clocks.h"
#include "store/store.h"

namespace meridian {

struct ScenarioFixture {
  // Fails the calling test (gtest ASSERT) on any error. With
  // `node1_offset_ns`, node-1's clock reads that much ahead, and its clock
  // model says so (ScenarioBatches).
  static std::unique_ptr<ScenarioFixture> Load(const std::string& scenario,
                                               int64_t node1_offset_ns = 0);

  std::unique_ptr<Store> store;
  JobCatalog catalog;
  std::optional<JobClocks> clocks;
  std::optional<JobSpans> spans;
  std::optional<DependencyGraph> graph;
};

inline constexpr int64_t kUs = 1000;
inline constexpr int64_t kMs = 1000 * kUs;

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SCENARIO_FIXTURE_H_
