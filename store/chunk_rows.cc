#include "store/chunk_rows.h"

#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "store/row_binary.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// A row starts with its id, track and first start.
constexpr size_t kRowHead = 24;

// ClickHouse reports an error met while streaming as text after the rows.
absl::Status Broken(absl::string_view rest) {
  return absl::DataLossError(absl::StrCat(
      "ClickHouse's scan result broke off: ",
      absl::CHexEscape(rest.substr(0, std::min<size_t>(rest.size(), 200)))));
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> ChunkRowSource::PeekFirstStart() {
  auto view = stream_.fill(kRowHead);
  if (!view.ok()) return view.status();
  if (view->empty()) return std::nullopt;
  RowBinaryReader r(*view);
  int64_t id, track, first;
  if (!r.Int64(&id) || !r.Int64(&track) || !r.Int64(&first)) {
    return Broken(*view);
  }
  return first;
}

absl::StatusOr<bool> ChunkRowSource::Take(MergeChunk* out) {
  size_t want = kRowHead;
  while (true) {
    auto view = stream_.fill(want);
    if (!view.ok()) return view.status();
    RowBinaryReader r(*view);
    uint64_t n = 0;
    int64_t first;
    bool ok = r.Int64(&out->id) && r.Int64(&out->track) && r.Int64(&first) &&
              r.ArraySize(&n);
    // Each element takes at least a byte: a count beyond what is left is
    // either truncation or garbage, never an allocation.
    ok = ok && n <= view->size() - r.offset();
    if (ok) {
      out->op_ids.resize(n);
      for (uint64_t i = 0; ok && i < n; ++i) ok = r.Int64(&out->op_ids[i]);
    }
    ok = ok && r.ArraySize(&n) && n <= view->size() - r.offset();
    if (ok) {
      out->strings.resize(n);
      absl::string_view s;
      for (uint64_t i = 0; ok && i < n; ++i) {
        ok = r.String(&s);
        if (ok) out->strings[i].assign(s.data(), s.size());
      }
    }
    absl::string_view data;
    ok = ok && r.String(&data);
    if (!ok) {
      if (stream_.ended()) return Broken(*view);
      want = view->size() + 1;
      continue;
    }
    absl::Status status = DecodeSpanChunk(data, &out->spans);
    if (!status.ok()) {
      return absl::DataLossError(
          absl::StrCat("chunk ", out->id, ": ", status.message()));
    }
    stream_.consume(r.offset());
    return true;
  }
}

absl::StatusOr<std::string> ChunkRowSource::LookupString(int64_t) {
  return absl::DataLossError("a ClickHouse chunk without its strings");
}

}  // namespace meridian
