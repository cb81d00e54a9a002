#include "testing/scenario_fixture.h"

#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "testing/scenario_job.h"
#include "testing/test_store.h"

namespace meridian {

std::unique_ptr<ScenarioFixture> ScenarioFixture::Load(
    const std::string& scenario, int64_t node1_offset_ns) {
  auto fixture = std::make_unique<ScenarioFixture>();
  auto location = NewStoreLocation(StoreKindFromEnvironment(), scenario);
  EXPECT_TRUE(location.ok()) << location.status();
  if (!location.ok()) return nullptr;
  StoreOptions options;
  options.full_sync = false;
  auto store = Store::Open(*location, options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return nullptr;
  fixture->store = std::move(*store);
  for (const auto& node :
       ScenarioBatches(scenario, scenario, node1_offset_ns)) {
    std::vector<const v1::Batch*> batches;
    for (const v1::Batch& b : node) batches.push_back(&b);
    auto written = fixture->store->Write(batches);
    EXPECT_TRUE(written.ok()) << written.status();
    if (!written.ok()) return nullptr;
  }
  auto catalog = fixture->store->LoadCatalog(scenario);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  if (!catalog.ok()) return nullptr;
  fixture->catalog = std::move(*catalog);
  auto spans =
      JobSpans::Load(*fixture->store, fixture->catalog, &fixture->clocks);
  EXPECT_TRUE(spans.ok()) << spans.status();
  if (!spans.ok()) return nullptr;
  fixture->spans.emplace(std::move(*spans));
  fixture->graph.emplace(*fixture->spans);
  return fixture;
}

}  // namespace meridian
