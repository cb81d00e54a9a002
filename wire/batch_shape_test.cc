#include "wire/batch_shape.h"

#include <string>

#include "gtest/gtest.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

TEST(BatchShapeTest, CountsWhatTheBatchHolds) {
  BatchBuilder builder("node-a");
  int p = builder.DeclareProcess({"job", "host", 0, 0, 42});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 7, "main");
  for (int i = 0; i < 2; ++i) {
    v1::Span* span = builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Send",
                                     1700000000000000000, 9);
    v1::Arg* arg = span->add_args();
    arg->set_key(builder.String("bytes"));
    arg->set_int_(8);
  }
  const v1::Batch batch = builder.Take();
  auto shape = ScanBatchShape(batch.SerializeAsString());
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->strings, batch.strings_size());
  EXPECT_EQ(shape->processes, 1);
  EXPECT_EQ(shape->tracks, 1);
  EXPECT_EQ(shape->spans, 2);
  EXPECT_EQ(shape->args, 2);
  EXPECT_EQ(BatchShapeProblem(*shape), "");
}

TEST(BatchShapeTest, CountsTotalsAndTheirSizes) {
  v1::Batch batch;
  for (int i = 0; i < 3; ++i) {
    v1::ImportedOpTotals* op = batch.add_op_totals();
    op->set_calls(1);
    for (int k = 0; k < i; ++k) op->add_sizes()->set_log2(k);
  }
  batch.add_process_totals()->set_comm_ns(5);
  auto shape = ScanBatchShape(batch.SerializeAsString());
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->totals, 4);
  EXPECT_EQ(shape->sizes, 3);
  BatchShape over;
  over.sizes = kMaxBatchItems + 1;
  EXPECT_EQ(BatchShapeProblem(over),
            "the batch has 262145 size totals; at most 262144 are allowed");
}

// 16 MiB of empty strings is refused before anything is parsed (it used to
// cost gigabytes to parse).
TEST(BatchShapeTest, RefusesTooManyElementsBeforeParsing) {
  std::string empty_strings;
  for (int i = 0; i < (8 << 20); ++i)
    empty_strings += std::string("\x1a\x00", 2);
  auto shape = ScanBatchShape(empty_strings);
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->strings, 8 << 20);
  EXPECT_EQ(BatchShapeProblem(*shape),
            "the batch has 8388608 strings; at most 262144 are allowed");
}

TEST(BatchShapeTest, EachBoundIsTheLastCountAllowed) {
  BatchShape shape;
  shape.strings = kMaxBatchStrings;
  EXPECT_EQ(BatchShapeProblem(shape), "");
  shape.strings = kMaxBatchStrings + 1;
  EXPECT_EQ(BatchShapeProblem(shape),
            "the batch has 262145 strings; at most 262144 are allowed");
  shape = BatchShape();
  shape.spans = kMaxBatchItems;
  shape.chunks = 1;
  EXPECT_EQ(BatchShapeProblem(shape),
            "the batch has 262145 span messages and chunks; at most 262144 "
            "are allowed");
}

TEST(BatchShapeTest, RefusesMalformedBytes) {
  for (const std::string& bad :
       {std::string("\x1a\x05"
                    "ab",
                    4),          // length past the end
        std::string("\x1a", 1),  // no length
        std::string("\x0b", 1),  // a group (wire type 3)
        std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)}) {
    EXPECT_EQ(ScanBatchShape(bad).status().message(),
              "the batch is not a well-formed protocol buffer");
  }
}

}  // namespace
}  // namespace meridian
