#include "store/store.h"

#include "store/clickhouse_store.h"
#include "store/sqlite_store.h"

namespace meridian {

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& location,
                                                   StoreOptions options) {
  if (IsClickHouseLocation(location)) {
    auto store = ClickHouseStore::Open(location, std::move(options));
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(std::move(*store));
  }
  auto store = SqliteStore::Open(location, std::move(options));
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(*store));
}

}  // namespace meridian
