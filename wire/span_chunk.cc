#include "wire/span_chunk.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

// Blob: one format byte, then a zstd frame of the block:
//   varint version, varint count, varint column mask, zigzag base start,
//   then for each column in the mask, in Column order: varint length, bytes.
constexpr uint8_t kFormatZstd = 1;
constexpr uint64_t kBlockVersion = 1;
// Bounds the decompressed block: about 120 bytes per span and 30 per arg at
// the very worst, so this is never reached by an honest chunk.
constexpr size_t kMaxBlockBytes = 32u << 20;
// The largest block a thread's decoding buffer is kept for (a full chunk of
// honest spans is well under it).
constexpr size_t kKeptBlockBytes = 4u << 20;
constexpr int kZstdLevel = 1;

enum Column {
  kStart,
  kDur,
  kName,
  kCategory,
  kKind,
  kFlags,
  kBytes,
  kPeer,
  kTag,
  kComm,
  kCommSize,
  kSeq,
  kStep,
  kPartition,
  kCorrelation,
  kValue,
  kArgCount,
  kArgKey,
  kArgType,
  kArgInt,
  kArgStr,
  kArgReal,
  kRecord,
  kColumns,
};

constexpr const char* kColumnNames[kColumns] = {
    "start",    "dur",       "name",        "category", "kind",      "flags",
    "bytes",    "peer",      "tag",         "comm",     "comm_size", "seq",
    "step",     "partition", "correlation", "value",    "arg_count", "arg_key",
    "arg_type", "arg_int",   "arg_str",     "arg_real", "record"};

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
}

void PutVarint(std::string* out, uint64_t v) {
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

void PutDouble(std::string* out, double v) {
  char buf[8];
  std::memcpy(buf, &v, 8);  // little-endian hosts only (x86-64, aarch64)
  out->append(buf, 8);
}

// Appends up to `n` values to *out through a pointer: room for them is made
// once, not checked per value (the encoder's inner loops).
class ValueWriter {
 public:
  ValueWriter(std::string* out, size_t n) : out_(out), used_(out->size()) {
    out->resize(used_ + n * 10);
    p_ = out->data() + used_;
  }
  ~ValueWriter() { out_->resize(static_cast<size_t>(p_ - out_->data())); }
  ValueWriter(const ValueWriter&) = delete;
  ValueWriter& operator=(const ValueWriter&) = delete;

  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void Double(double v) {
    std::memcpy(p_, &v, 8);  // little-endian hosts only (x86-64, aarch64)
    p_ += 8;
  }
  void Byte(uint8_t v) { *p_++ = static_cast<char>(v); }

 private:
  std::string* out_;
  size_t used_;
  char* p_;
};

// Reads varints and doubles from one column; errors name the column.
class Reader {
 public:
  Reader(absl::string_view data, const char* column)
      : data_(data), column_(column) {}

  absl::Status Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return Error("ends inside a value");
      const uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
      if (shift == 63 && byte > 1) return Error("a value overflows 64 bits");
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return absl::OkStatus();
      }
    }
    return Error("a value overflows 64 bits");
  }
  absl::Status Double(double* v) {
    if (data_.size() - pos_ < 8) return Error("ends inside a value");
    std::memcpy(v, data_.data() + pos_, 8);
    pos_ += 8;
    return absl::OkStatus();
  }
  size_t pos() const { return pos_; }
  absl::Status Done() const {
    if (pos_ != data_.size()) {
      return Error(absl::StrCat(data_.size() - pos_, " bytes left over"));
    }
    return absl::OkStatus();
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("span chunk column '", column_, "': ", what));
  }

 private:
  absl::string_view data_;
  const char* column_;
  size_t pos_ = 0;
};

// Zstd contexts are reused per thread: creating one costs more than
// compressing a small chunk.
struct ZstdContexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
ZstdContexts& Contexts() {
  thread_local ZstdContexts contexts;
  return contexts;
}

// Builds the block column by column, in sorted order `order`.
class BlockWriter {
 public:
  BlockWriter(const SpanColumns& s, const std::vector<uint32_t>& order)
      : s_(s), order_(order) {}

  // A column whose values are all zero is left out; an optional one (flag
  // set) is kept whenever a span has the field, even if its value is 0.
  template <typename T, typename Get>
  void DeltaColumn(Column c, Get get, uint8_t flag = 0) {
    // Most columns are all zero, or have no span with their flag: look
    // before encoding.
    bool any = false;
    for (uint32_t i : order_) {
      if (flag != 0 ? (s_.flags[i] & flag) != 0 : static_cast<T>(get(i)) != 0) {
        any = true;
        break;
      }
    }
    if (!any) return;
    std::string& out = Begin();
    {
      ValueWriter w(&out, order_.size());
      uint64_t prev = 0;
      for (uint32_t i : order_) {
        if (flag != 0 && (s_.flags[i] & flag) == 0) continue;
        const uint64_t v = static_cast<uint64_t>(static_cast<T>(get(i)));
        w.Varint(ZigZag(static_cast<int64_t>(v - prev)));
        prev = v;
      }
    }
    End(c, true);
  }

  void Encode() {
    const auto& s = s_;
    {  // start: unsigned deltas from the base (the smallest start)
      std::string& out = Begin();
      uint64_t prev = static_cast<uint64_t>(s.start_ns[order_[0]]);
      bool any = false;
      {
        ValueWriter w(&out, order_.size());
        for (uint32_t i : order_) {
          const uint64_t v = static_cast<uint64_t>(s.start_ns[i]);
          any |= v != prev;
          w.Varint(v - prev);
          prev = v;
        }
      }
      End(kStart, any);
    }
    {  // dur: zigzag, not delta (durations vary more than they repeat)
      std::string& out = Begin();
      bool any = false;
      {
        ValueWriter w(&out, order_.size());
        for (uint32_t i : order_) {
          any |= s.dur_ns[i] != 0;
          w.Varint(ZigZag(s.dur_ns[i]));
        }
      }
      End(kDur, any);
    }
    DeltaColumn<uint32_t>(kName, [&](uint32_t i) { return s.name[i]; });
    DeltaColumn<uint32_t>(kCategory, [&](uint32_t i) { return s.category[i]; });
    DeltaColumn<uint32_t>(kKind, [&](uint32_t i) { return s.kind[i]; });
    {
      std::string& out = Begin();
      bool any = false;
      {
        ValueWriter w(&out, order_.size());
        for (uint32_t i : order_) {
          any |= s.flags[i] != 0;
          w.Byte(s.flags[i]);
        }
      }
      End(kFlags, any);
    }
    DeltaColumn<int64_t>(kBytes, [&](uint32_t i) { return s.bytes[i]; });
    DeltaColumn<int64_t>(
        kPeer, [&](uint32_t i) { return s.peer[i]; }, SpanColumns::kHasPeer);
    DeltaColumn<int64_t>(
        kTag, [&](uint32_t i) { return s.tag[i]; }, SpanColumns::kHasTag);
    DeltaColumn<uint64_t>(kComm, [&](uint32_t i) { return s.comm[i]; });
    DeltaColumn<uint32_t>(kCommSize,
                          [&](uint32_t i) { return s.comm_size[i]; });
    DeltaColumn<uint64_t>(
        kSeq, [&](uint32_t i) { return s.seq[i]; }, SpanColumns::kHasSeq);
    DeltaColumn<int64_t>(
        kStep, [&](uint32_t i) { return s.step[i]; }, SpanColumns::kHasStep);
    DeltaColumn<int64_t>(
        kPartition, [&](uint32_t i) { return s.partition[i]; },
        SpanColumns::kHasPartition);
    DeltaColumn<uint64_t>(kCorrelation,
                          [&](uint32_t i) { return s.correlation[i]; });
    {
      bool any = false;
      for (uint32_t i : order_) {
        uint64_t bits;
        std::memcpy(&bits, &s.value[i], 8);
        if (bits != 0) {
          any = true;
          break;
        }
      }
      if (any) {
        std::string& out = Begin();
        {
          ValueWriter w(&out, order_.size());
          for (uint32_t i : order_) w.Double(s.value[i]);
        }
        End(kValue, true);
      }
    }
    DeltaColumn<uint64_t>(kRecord, [&](uint32_t i) { return s.record[i]; });
    EncodeArgs();
  }

  std::string Finish(int64_t base, size_t count) {
    std::string block;
    PutVarint(&block, kBlockVersion);
    PutVarint(&block, count);
    PutVarint(&block, mask_);
    PutVarint(&block, ZigZag(base));
    for (int c = 0; c < kColumns; ++c) {
      if ((mask_ & (uint64_t{1} << c)) == 0) continue;
      PutVarint(&block, columns_[c].size());
      block += columns_[c];
    }
    return block;
  }

 private:
  std::string& Begin() {
    scratch_.clear();
    return scratch_;
  }
  void End(Column c, bool any) {
    if (!any) return;
    mask_ |= uint64_t{1} << c;
    columns_[c].swap(scratch_);
  }

  void EncodeArgs() {
    const auto& s = s_;
    std::string count, key, type, ints, strs, reals;
    bool any = false;
    for (uint32_t i : order_) {
      const uint32_t begin = i == 0 ? 0 : s.arg_end[i - 1];
      const uint32_t end = s.arg_end[i];
      PutVarint(&count, end - begin);
      for (uint32_t a = begin; a < end; ++a) {
        any = true;
        const ChunkArg& arg = s.args[a];
        PutVarint(&key, arg.key);
        PutVarint(&type, static_cast<uint8_t>(arg.type));
        switch (arg.type) {
          case ChunkArg::Type::kInt:
            PutVarint(&ints, ZigZag(arg.value));
            break;
          case ChunkArg::Type::kString:
            PutVarint(&strs, static_cast<uint64_t>(arg.value));
            break;
          case ChunkArg::Type::kReal:
            PutDouble(&reals, arg.real);
            break;
        }
      }
    }
    if (!any) return;
    Set(kArgCount, &count);
    Set(kArgKey, &key);
    Set(kArgType, &type);
    Set(kArgInt, &ints);
    Set(kArgStr, &strs);
    Set(kArgReal, &reals);
  }
  void Set(Column c, std::string* data) {
    if (data->empty()) return;
    mask_ |= uint64_t{1} << c;
    columns_[c].swap(*data);
  }

  const SpanColumns& s_;
  const std::vector<uint32_t>& order_;
  uint64_t mask_ = 0;
  std::string columns_[kColumns];
  std::string scratch_;
};

absl::Status CheckLengths(const SpanColumns& s) {
  const size_t n = s.size();
  const size_t lengths[] = {
      s.dur_ns.size(),    s.name.size(),        s.category.size(),
      s.kind.size(),      s.flags.size(),       s.bytes.size(),
      s.peer.size(),      s.tag.size(),         s.comm.size(),
      s.comm_size.size(), s.seq.size(),         s.step.size(),
      s.partition.size(), s.correlation.size(), s.value.size(),
      s.record.size(),    s.arg_end.size()};
  for (size_t len : lengths) {
    if (len != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "span columns of unequal length: ", len, " and ", n, " spans"));
    }
  }
  uint32_t prev = 0;
  for (uint32_t end : s.arg_end) {
    if (end < prev) return absl::InvalidArgumentError("arg_end decreases");
    prev = end;
  }
  if (prev != s.args.size()) {
    return absl::InvalidArgumentError("arg_end does not cover the args");
  }
  return absl::OkStatus();
}

// Decodes the block's columns into `out`, which has `n` default spans.
class BlockReader {
 public:
  BlockReader(absl::string_view columns[kColumns], SpanColumns* out)
      : columns_(columns), out_(out) {}

  absl::Status Decode(int64_t base) {
    SpanColumns& s = *out_;
    const size_t n = s.size();
    {
      Reader r(columns_[kStart], kColumnNames[kStart]);
      if (!columns_[kStart].empty()) {
        uint64_t prev = static_cast<uint64_t>(base);
        for (size_t i = 0; i < n; ++i) {
          uint64_t delta = 0;
          if (auto st = r.Varint(&delta); !st.ok()) return st;
          const uint64_t v = prev + delta;
          if (static_cast<int64_t>(v) < static_cast<int64_t>(prev)) {
            return r.Error("start times are not ascending");
          }
          s.start_ns[i] = static_cast<int64_t>(v);
          prev = v;
        }
      } else {
        std::fill(s.start_ns.begin(), s.start_ns.end(), base);
      }
      if (auto st = r.Done(); !st.ok()) return st;
    }
    if (auto st = Plain(kDur, &s.dur_ns); !st.ok()) return st;
    if (auto st = Delta(kName, &s.name, 0); !st.ok()) return st;
    if (auto st = Delta(kCategory, &s.category, 0); !st.ok()) return st;
    if (auto st = Delta(kKind, &s.kind, 0); !st.ok()) return st;
    {
      absl::string_view data = columns_[kFlags];
      Reader r(data, kColumnNames[kFlags]);
      if (!data.empty()) {
        if (data.size() != n) return r.Error("length is not the span count");
        for (size_t i = 0; i < n; ++i) {
          const uint8_t f = static_cast<uint8_t>(data[i]);
          if (f >= 32) return r.Error("unknown flag bits");
          s.flags[i] = f;
        }
      }
    }
    if (auto st = Delta(kBytes, &s.bytes, 0); !st.ok()) return st;
    if (auto st = Delta(kPeer, &s.peer, SpanColumns::kHasPeer); !st.ok()) {
      return st;
    }
    if (auto st = Delta(kTag, &s.tag, SpanColumns::kHasTag); !st.ok()) {
      return st;
    }
    if (auto st = Delta(kComm, &s.comm, 0); !st.ok()) return st;
    if (auto st = Delta(kCommSize, &s.comm_size, 0); !st.ok()) return st;
    if (auto st = Delta(kSeq, &s.seq, SpanColumns::kHasSeq); !st.ok()) {
      return st;
    }
    if (auto st = Delta(kStep, &s.step, SpanColumns::kHasStep); !st.ok()) {
      return st;
    }
    if (auto st = Delta(kPartition, &s.partition, SpanColumns::kHasPartition);
        !st.ok()) {
      return st;
    }
    if (auto st = Delta(kCorrelation, &s.correlation, 0); !st.ok()) return st;
    if (auto st = Delta(kRecord, &s.record, 0); !st.ok()) return st;
    if (!columns_[kValue].empty()) {
      Reader r(columns_[kValue], kColumnNames[kValue]);
      for (size_t i = 0; i < n; ++i) {
        if (auto st = r.Double(&s.value[i]); !st.ok()) return st;
      }
      if (auto st = r.Done(); !st.ok()) return st;
    }
    return DecodeArgs();
  }

 private:
  // Zigzag values, no delta.
  absl::Status Plain(Column c, std::vector<int64_t>* out) {
    if (columns_[c].empty()) return absl::OkStatus();
    Reader r(columns_[c], kColumnNames[c]);
    for (auto& v : *out) {
      uint64_t z = 0;
      if (auto st = r.Varint(&z); !st.ok()) return st;
      v = UnZigZag(z);
    }
    return r.Done();
  }

  // Zigzag deltas, over the spans with `flag` set (all if 0); each value
  // must fit T.
  template <typename T>
  absl::Status Delta(Column c, std::vector<T>* out, uint8_t flag) {
    const SpanColumns& s = *out_;
    Reader r(columns_[c], kColumnNames[c]);
    if (columns_[c].empty()) {
      if (flag == 0) return absl::OkStatus();
      for (uint8_t f : s.flags) {
        if (f & flag) return r.Error("missing, but a span's flags need it");
      }
      return absl::OkStatus();
    }
    uint64_t prev = 0;
    for (size_t i = 0; i < out->size(); ++i) {
      if (flag != 0 && (s.flags[i] & flag) == 0) continue;
      uint64_t z = 0;
      if (auto st = r.Varint(&z); !st.ok()) return st;
      const uint64_t v = prev + static_cast<uint64_t>(UnZigZag(z));
      prev = v;
      if (static_cast<uint64_t>(static_cast<T>(v)) != v) {
        return r.Error("a value is out of range");
      }
      (*out)[i] = static_cast<T>(v);
    }
    return r.Done();
  }

  absl::Status DecodeArgs() {
    SpanColumns& s = *out_;
    Reader count(columns_[kArgCount], kColumnNames[kArgCount]);
    Reader key(columns_[kArgKey], kColumnNames[kArgKey]);
    Reader type(columns_[kArgType], kColumnNames[kArgType]);
    Reader ints(columns_[kArgInt], kColumnNames[kArgInt]);
    Reader strs(columns_[kArgStr], kColumnNames[kArgStr]);
    Reader reals(columns_[kArgReal], kColumnNames[kArgReal]);
    if (columns_[kArgCount].empty()) {
      for (Column c : {kArgKey, kArgType, kArgInt, kArgStr, kArgReal}) {
        if (!columns_[c].empty()) {
          return Reader(columns_[c], kColumnNames[c])
              .Error("present without arg_count");
        }
      }
      return absl::OkStatus();
    }
    uint64_t total = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      uint64_t n;
      if (auto st = count.Varint(&n); !st.ok()) return st;
      if (n > static_cast<uint64_t>(kMaxChunkArgs) - total) {
        return count.Error(
            absl::StrCat("more than ", kMaxChunkArgs, " args in the chunk"));
      }
      total += n;
      for (uint64_t a = 0; a < n; ++a) {
        ChunkArg arg;
        uint64_t k = 0, t = 0;
        if (auto st = key.Varint(&k); !st.ok()) return st;
        if (k > UINT32_MAX) return key.Error("a value is out of range");
        arg.key = static_cast<uint32_t>(k);
        if (auto st = type.Varint(&t); !st.ok()) return st;
        if (t > 2) return type.Error("unknown arg type");
        arg.type = static_cast<ChunkArg::Type>(t);
        uint64_t v;
        switch (arg.type) {
          case ChunkArg::Type::kInt:
            if (auto st = ints.Varint(&v); !st.ok()) return st;
            arg.value = UnZigZag(v);
            break;
          case ChunkArg::Type::kString:
            if (auto st = strs.Varint(&v); !st.ok()) return st;
            if (v > UINT32_MAX) return strs.Error("a value is out of range");
            arg.value = static_cast<int64_t>(v);
            break;
          case ChunkArg::Type::kReal:
            if (auto st = reals.Double(&arg.real); !st.ok()) return st;
            break;
        }
        s.args.push_back(arg);
      }
      s.arg_end[i] = static_cast<uint32_t>(s.args.size());
    }
    for (Reader* r : {&count, &key, &type, &ints, &strs, &reals}) {
      if (auto st = r->Done(); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

  absl::string_view* columns_;
  SpanColumns* out_;
};

void Resize(SpanColumns* s, size_t n) {
  s->start_ns.assign(n, 0);
  s->dur_ns.assign(n, 0);
  s->name.assign(n, 0);
  s->category.assign(n, 0);
  s->kind.assign(n, 0);
  s->flags.assign(n, 0);
  s->bytes.assign(n, 0);
  s->peer.assign(n, 0);
  s->tag.assign(n, 0);
  s->comm.assign(n, 0);
  s->comm_size.assign(n, 0);
  s->seq.assign(n, 0);
  s->step.assign(n, 0);
  s->partition.assign(n, 0);
  s->correlation.assign(n, 0);
  s->value.assign(n, 0);
  s->record.assign(n, 0);
  s->arg_end.assign(n, 0);
  s->args.clear();
}

absl::Status ChunkError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("span chunk: ", what));
}

}  // namespace

void SpanColumns::Clear() { Resize(this, 0); }

size_t SpanColumns::Add(int64_t start, int64_t dur, uint32_t name_id,
                        uint32_t category_id, uint32_t kind_id) {
  start_ns.push_back(start);
  dur_ns.push_back(dur);
  name.push_back(name_id);
  category.push_back(category_id);
  kind.push_back(kind_id);
  flags.push_back(0);
  bytes.push_back(0);
  peer.push_back(0);
  tag.push_back(0);
  comm.push_back(0);
  comm_size.push_back(0);
  seq.push_back(0);
  step.push_back(0);
  partition.push_back(0);
  correlation.push_back(0);
  value.push_back(0);
  record.push_back(0);
  arg_end.push_back(static_cast<uint32_t>(args.size()));
  return start_ns.size() - 1;
}

void SpanColumns::AddArg(const ChunkArg& arg) {
  args.push_back(arg);
  arg_end.back() = static_cast<uint32_t>(args.size());
}

void SpanColumns::AppendFrom(const SpanColumns& from, size_t i) {
  Add(from.start_ns[i], from.dur_ns[i], from.name[i], from.category[i],
      from.kind[i]);
  flags.back() = from.flags[i];
  bytes.back() = from.bytes[i];
  peer.back() = from.peer[i];
  tag.back() = from.tag[i];
  comm.back() = from.comm[i];
  comm_size.back() = from.comm_size[i];
  seq.back() = from.seq[i];
  step.back() = from.step[i];
  partition.back() = from.partition[i];
  correlation.back() = from.correlation[i];
  value.back() = from.value[i];
  record.back() = from.record[i];
  const uint32_t begin = i == 0 ? 0 : from.arg_end[i - 1];
  for (uint32_t a = begin; a < from.arg_end[i]; ++a) AddArg(from.args[a]);
}

absl::StatusOr<std::string> EncodeSpanChunk(const SpanColumns& spans) {
  const size_t n = spans.size();
  if (n == 0 || n > static_cast<size_t>(kMaxChunkSpans)) {
    return ChunkError(absl::StrCat("holds ", n, " spans; 1 to ", kMaxChunkSpans,
                                   " are allowed"));
  }
  if (spans.args.size() > static_cast<size_t>(kMaxChunkArgs)) {
    return ChunkError(absl::StrCat("holds ", spans.args.size(),
                                   " args; at most ", kMaxChunkArgs));
  }
  if (auto st = CheckLengths(spans); !st.ok()) return st;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (!std::is_sorted(spans.start_ns.begin(), spans.start_ns.end())) {
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return spans.start_ns[a] < spans.start_ns[b];
    });
  }
  BlockWriter writer(spans, order);
  writer.Encode();
  const std::string block = writer.Finish(spans.start_ns[order[0]], n);

  std::string out(1 + ZSTD_compressBound(block.size()), '\0');
  out[0] = static_cast<char>(kFormatZstd);
  const size_t written =
      ZSTD_compressCCtx(Contexts().c, out.data() + 1, out.size() - 1,
                        block.data(), block.size(), kZstdLevel);
  if (ZSTD_isError(written)) {
    return absl::InternalError(
        absl::StrCat("compressing a span chunk: ", ZSTD_getErrorName(written)));
  }
  out.resize(1 + written);
  return out;
}

absl::Status DecodeSpanChunk(absl::string_view chunk, SpanColumns* out) {
  if (chunk.empty()) return ChunkError("empty");
  if (static_cast<uint8_t>(chunk[0]) != kFormatZstd) {
    return ChunkError(
        absl::StrCat("unknown format ", static_cast<uint8_t>(chunk[0])));
  }
  chunk.remove_prefix(1);
  const unsigned long long size =
      ZSTD_getFrameContentSize(chunk.data(), chunk.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return ChunkError("not a zstd frame with a known size");
  }
  if (size > kMaxBlockBytes) {
    return ChunkError(absl::StrCat("decompresses to ", size, " bytes; at most ",
                                   kMaxBlockBytes));
  }
  // Reused per thread, like the contexts: a scan decodes thousands of
  // chunks, and a fresh buffer each time is an allocation and its pages'
  // first touch each time. A block over kKeptBlockBytes (none honest) gets
  // its own, so that no thread keeps up to kMaxBlockBytes for good.
  thread_local std::string kept;
  std::string own;
  std::string& block = size <= kKeptBlockBytes ? kept : own;
  block.resize(size);
  const size_t got = ZSTD_decompressDCtx(
      Contexts().d, block.data(), block.size(), chunk.data(), chunk.size());
  if (ZSTD_isError(got) || got != size) {
    return ChunkError(
        absl::StrCat("corrupt zstd frame: ",
                     ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short"));
  }

  Reader header(block, "header");
  uint64_t version, count, mask, zbase;
  for (uint64_t* v : {&version, &count, &mask, &zbase}) {
    if (auto st = header.Varint(v); !st.ok()) return st;
  }
  if (version != kBlockVersion) {
    return ChunkError(absl::StrCat("unknown version ", version));
  }
  if (count == 0 || count > static_cast<uint64_t>(kMaxChunkSpans)) {
    return ChunkError(absl::StrCat("holds ", count, " spans; 1 to ",
                                   kMaxChunkSpans, " are allowed"));
  }
  if (mask >> kColumns) return ChunkError("unknown columns");
  absl::string_view rest(block);
  rest.remove_prefix(header.pos());
  absl::string_view columns[kColumns];
  for (int c = 0; c < kColumns; ++c) {
    if ((mask & (uint64_t{1} << c)) == 0) continue;
    Reader r(rest, kColumnNames[c]);
    uint64_t len;
    if (auto st = r.Varint(&len); !st.ok()) return st;
    rest.remove_prefix(r.pos());
    if (len == 0 || len > rest.size()) {
      return r.Error(absl::StrCat("length ", len, " does not fit the block"));
    }
    columns[c] = rest.substr(0, len);
    rest.remove_prefix(len);
  }
  if (!rest.empty()) {
    return ChunkError(absl::StrCat(rest.size(), " bytes after the columns"));
  }
  Resize(out, count);
  return BlockReader(columns, out).Decode(UnZigZag(zbase));
}

}  // namespace meridian
