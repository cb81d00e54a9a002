#include "cli/filter_flags.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

absl::StatusOr<v1::SpanFilter> Filter(std::vector<std::string> args) {
  args.insert(args.begin(), "meridian");
  auto line = CommandLine::Parse(args, 1, kFilterFlags, {});
  if (!line.ok()) return line.status();
  return ParseFilter(*line);
}

TEST(FilterFlagsTest, ParsesEveryFilter) {
  auto filter = Filter({"--job", "j", "--ranks", "0,2-4", "--category",
                        "mpi,user", "--name", "MPI_*", "--from", "1.5ms",
                        "--to", "2", "--steps", "3:5"});
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(filter->job(), "j");
  EXPECT_EQ(
      std::vector<int32_t>(filter->ranks().begin(), filter->ranks().end()),
      (std::vector<int32_t>{0, 2, 3, 4}));
  ASSERT_EQ(filter->categories_size(), 2);
  EXPECT_EQ(filter->categories(0), v1::CATEGORY_MPI);
  EXPECT_EQ(filter->categories(1), v1::CATEGORY_USER);
  EXPECT_EQ(filter->name_glob(), "MPI_*");
  EXPECT_EQ(filter->from_ns(), 1500000);
  EXPECT_EQ(filter->to_ns(), 2000000000);
  EXPECT_EQ(filter->first_step(), 3);
  EXPECT_EQ(filter->last_step(), 5);
}

TEST(FilterFlagsTest, OpenAndSingleStepRanges) {
  auto open = Filter({"--steps", "4:"});
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->first_step(), 4);
  EXPECT_FALSE(open->has_last_step());
  auto one = Filter({"--steps", "9"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first_step(), 9);
  EXPECT_EQ(one->last_step(), 9);
}

TEST(FilterFlagsTest, NamesWhatIsWrong) {
  EXPECT_EQ(Filter({"--ranks", "3-1"}).status().message(),
            "--ranks \"3-1\": write ranks and ranges such as 0,2-5");
  EXPECT_EQ(
      Filter({"--category", "gpu"}).status().message(),
      "unknown category \"gpu\"; categories are: mpi, nccl, cuda_kernel, "
      "cuda_memcpy, cuda_memset, cuda_sync, cuda_runtime, nvtx, user, c10d");
  EXPECT_EQ(Filter({"--from", "soon"}).status().message(),
            "--from: \"soon\" is not a time; write e.g. 1.5s, 250ms, 10us, "
            "100ns");
  EXPECT_EQ(Filter({"--steps", "a:b"}).status().message(),
            "--steps \"a:b\": write FIRST:LAST, FIRST:, :LAST or N");
  EXPECT_EQ(Filter({"--steps", ":"}).status().message(),
            "--steps \":\": write FIRST:LAST, FIRST:, :LAST or N");
}

}  // namespace
}  // namespace meridian
