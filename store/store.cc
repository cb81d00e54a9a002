#include "store/store.h"

#include "store/sqlite_store.h"

namespace meridian {

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   StoreOptions options) {
  auto store = SqliteStore::Open(path, std::move(options));
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(*store));
}

}  // namespace meridian
