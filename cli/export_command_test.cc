#include "cli/export_command.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::JobSummary Job() {
  v1::JobSummary job;
  job.set_job("train/run 1");
  for (int32_t rank : {0, 1, 2, 3, 5}) job.add_rank_ids(rank);
  job.set_first_step(1);
  job.set_last_step(25);
  return job;
}

std::vector<std::string> Paths(const std::vector<ExportPart>& parts) {
  std::vector<std::string> out;
  for (const ExportPart& p : parts) out.push_back(p.path);
  return out;
}

TEST(ExportCommandTest, FormatFromTheFlagElseTheName) {
  ExportOptions o;
  o.output = "t.json.gz";
  EXPECT_EQ(*ExportFormatOf(o), v1::EXPORT_FORMAT_CHROME);
  o.output = "t.pftrace.gz";
  EXPECT_EQ(*ExportFormatOf(o), v1::EXPORT_FORMAT_PERFETTO);
  o.output = "t.perfetto-trace";
  EXPECT_EQ(*ExportFormatOf(o), v1::EXPORT_FORMAT_PERFETTO);
  o.format = "kineto";
  EXPECT_EQ(*ExportFormatOf(o), v1::EXPORT_FORMAT_KINETO);
  o.format = "otf2";
  EXPECT_EQ(ExportFormatOf(o).status().message(),
            "unknown export format \"otf2\"; use chrome, perfetto or kineto");
}

TEST(ExportCommandTest, PerRankFilesAreNamedForHtaAndTensorBoard) {
  ExportOptions o;
  o.filter.set_job("train/run 1");
  o.filter.add_ranks(1);
  o.filter.add_ranks(5);
  o.filter.add_ranks(7);  // not in the job
  o.per_rank_dir = "out";
  auto parts = PlanExport(o, v1::EXPORT_FORMAT_KINETO, Job());
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(Paths(*parts),
            (std::vector<std::string>{"out/train_run_1_1.pt.trace.json",
                                      "out/train_run_1_5.pt.trace.json"}));
  ASSERT_EQ((*parts)[1].filter.ranks_size(), 1);
  EXPECT_EQ((*parts)[1].filter.ranks(0), 5);
  EXPECT_EQ((*parts)[1].filter.job(), "train/run 1");
  parts = PlanExport(o, v1::EXPORT_FORMAT_PERFETTO, Job());
  EXPECT_EQ((*parts)[0].path, "out/train_run_1_rank_1.pftrace");
}

TEST(ExportCommandTest, SplitsByStepsAndRanksWithTagsBeforeTheExtension) {
  ExportOptions o;
  o.filter.set_job("j");
  o.output = "dir.v2/t.json.gz";
  o.split_by = "step";
  o.split_every = 10;
  auto parts = PlanExport(o, v1::EXPORT_FORMAT_CHROME, Job());
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(Paths(*parts),
            (std::vector<std::string>{"dir.v2/t.steps-1-10.json.gz",
                                      "dir.v2/t.steps-11-20.json.gz",
                                      "dir.v2/t.steps-21-25.json.gz"}));
  EXPECT_EQ((*parts)[2].filter.first_step(), 21);
  EXPECT_EQ((*parts)[2].filter.last_step(), 25);
  o.filter.set_first_step(5);
  o.filter.set_last_step(12);
  parts = PlanExport(o, v1::EXPORT_FORMAT_CHROME, Job());
  EXPECT_EQ(Paths(*parts),
            (std::vector<std::string>{"dir.v2/t.steps-5-12.json.gz"}));
  EXPECT_EQ((*parts)[0].filter.last_step(), 12);

  ExportOptions r;
  r.filter.set_job("j");
  r.output = "trace";
  r.split_by = "rank";
  r.split_every = 2;
  parts = PlanExport(r, v1::EXPORT_FORMAT_PERFETTO, Job());
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(Paths(*parts),
            (std::vector<std::string>{"trace.ranks-0-1", "trace.ranks-2-3",
                                      "trace.ranks-5-5"}));
  EXPECT_EQ((*parts)[1].filter.ranks_size(), 2);
}

TEST(ExportCommandTest, RefusesOptionsThatDoNotFit) {
  const auto message = [](const ExportOptions& o, v1::ExportFormat format,
                          const v1::JobSummary& job) {
    return std::string(PlanExport(o, format, job).status().message());
  };
  ExportOptions o;
  o.filter.set_job("j");
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_CHROME, Job()),
            "export needs -o FILE (or --per-rank DIR)");
  o.output = "t.json";
  o.per_rank_dir = "d";
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_CHROME, Job()),
            "give -o FILE or --per-rank DIR, not both");
  o.per_rank_dir.clear();
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_KINETO, Job()),
            "a kineto file holds one rank: use --per-rank DIR, or --ranks N");
  o.filter.add_ranks(3);
  EXPECT_TRUE(PlanExport(o, v1::EXPORT_FORMAT_KINETO, Job()).ok());
  o.split_by = "node";
  o.split_every = 2;
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_CHROME, Job()),
            "--split-by takes step or rank, not \"node\"");
  o.split_by = "step";
  o.split_every = 0;
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_CHROME, Job()),
            "--split-by needs a count: --split-by step 10, --split-by rank 8");
  o.split_every = 5;
  v1::JobSummary no_steps = Job();
  no_steps.clear_first_step();
  no_steps.clear_last_step();
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_CHROME, no_steps),
            "job train/run 1 has no steps to split by (its spans carry "
            "none): use --split-by rank N");
  v1::JobSummary wide = Job();
  wide.set_first_step(0);
  wide.set_last_step(int64_t{1} << 40);
  EXPECT_EQ(message(o, v1::EXPORT_FORMAT_CHROME, wide),
            "steps 0..1099511627776 in files of 5 would be more than 10000 "
            "files: give a larger N, or --steps A:B");
  // The last step of int64 and a huge N: one file, no overflow.
  wide.set_first_step(INT64_MAX - 3);
  wide.set_last_step(INT64_MAX);
  o.split_every = INT64_MAX;
  auto parts = PlanExport(o, v1::EXPORT_FORMAT_CHROME, wide);
  ASSERT_TRUE(parts.ok()) << parts.status();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].filter.last_step(), INT64_MAX);
}

}  // namespace
}  // namespace meridian
