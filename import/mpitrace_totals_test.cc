#include "import/mpitrace_totals.h"

#include <fstream>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

MpitraceProfile Read(const std::string& name) {
  const std::string path = "import/testdata/" + name;
  auto profile = ReadMpitraceProfile(FileText(path), path);
  EXPECT_TRUE(profile.ok()) << profile.status();
  return profile.ok() ? *profile : MpitraceProfile();
}

const ImportedOpTotals* Find(const ImportedTrace& t, const std::string& name) {
  for (const ImportedOpTotals& op : t.op_totals) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

TEST(MpitraceTotalsTest, RankZeroGivesItsRoutinesAndEveryRanksTimes) {
  const ImportedTrace t =
      MpitraceTotals(Read("mpi_profile.1234.0"), "", "mpi_profile.1234.0", -1);
  EXPECT_EQ(t.format, "mpitrace");
  EXPECT_TRUE(t.spans.empty());
  ASSERT_EQ(t.processes.size(), 4u);
  EXPECT_EQ(t.processes[0].rank, 0);
  EXPECT_EQ(t.processes[0].node, "nid00102");
  EXPECT_EQ(t.processes[3].rank, 3);
  EXPECT_EQ(t.processes[3].node, "nid00103");
  // Routines with calls, as MPI operations of rank 0.
  EXPECT_EQ(t.op_totals.size(), 7u);
  const ImportedOpTotals* allreduce = Find(t, "MPI_Allreduce");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->process, 0);
  EXPECT_EQ(allreduce->category, v1::CATEGORY_MPI);
  EXPECT_EQ(allreduce->calls, 1000);
  EXPECT_EQ(allreduce->bytes, 671096600);
  EXPECT_EQ(allreduce->dur_ns, 3750000000);
  ASSERT_EQ(allreduce->sizes.size(), 2u);
  EXPECT_EQ(allreduce->sizes[0].log2, 3);
  EXPECT_EQ(allreduce->sizes[0].calls, 990);
  EXPECT_EQ(allreduce->sizes[0].dur_ns, 2500000000);
  EXPECT_EQ(allreduce->sizes[1].log2, 26);
  EXPECT_EQ(allreduce->sizes[1].bytes, 671088640);
  // Rank 0's own times, then the table's for ranks 1-3.
  ASSERT_EQ(t.process_totals.size(), 4u);
  EXPECT_EQ(t.process_totals[0].process, 0);
  EXPECT_EQ(t.process_totals[0].comm_ns, 3900000000);
  EXPECT_EQ(t.process_totals[0].elapsed_ns, 12345000000);
  EXPECT_EQ(t.process_totals[0].source, "mpitrace");
  // Resource use: rank 0's summary lines (to the ms and 1/1000 MiB), its
  // switches from its row of the table; the other ranks' rows.
  EXPECT_EQ(t.process_totals[0].user_ns, 11002000000);
  EXPECT_EQ(t.process_totals[0].system_ns, 250000000);
  EXPECT_EQ(t.process_totals[0].max_rss_bytes, 512 * 1048576 + 262144);
  EXPECT_EQ(t.process_totals[0].context_switches, 1201);
  EXPECT_EQ(t.process_totals[3].process, 3);
  EXPECT_EQ(t.process_totals[3].comm_ns, 5820000000);
  EXPECT_EQ(t.process_totals[3].elapsed_ns, 12400000000);
  EXPECT_EQ(t.process_totals[3].user_ns, 11500000000);
  EXPECT_EQ(t.process_totals[3].system_ns, 300000000);
  EXPECT_EQ(t.process_totals[3].max_rss_bytes, 498 * 1048576);
  EXPECT_EQ(t.process_totals[3].context_switches, 1305);
}

TEST(MpitraceTotalsTest, AnotherRanksProfileAndTheOptions) {
  const MpitraceProfile p = Read("mpi_profile.1234.3");
  ImportedTrace t = MpitraceTotals(p, "", "mpi_profile.1234.3", -1);
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].rank, 3);
  EXPECT_EQ(t.processes[0].node, "mpi_profile.1234.3");  // no host given
  ASSERT_EQ(t.process_totals.size(), 1u);
  EXPECT_EQ(t.process_totals[0].comm_ns, 5823000000);
  EXPECT_EQ(t.process_totals[0].elapsed_ns, 12401000000);
  EXPECT_EQ(t.process_totals[0].user_ns, 11500000000);
  EXPECT_EQ(t.process_totals[0].context_switches, std::nullopt);  // no table
  t = MpitraceTotals(Read("mpi_profile.1234.0"), "n7", "f", 9);
  ASSERT_EQ(t.processes.size(), 1u);  // --rank: the table is left out
  EXPECT_EQ(t.processes[0].rank, 9);
  EXPECT_EQ(t.processes[0].node, "n7");
}

// Rank 0's and rank 3's profiles imported together: rank 3 is on the host
// rank 0's table names, with its own times (to the ms, not the table's
// 10 ms) and the table's switches; rank 0's file leaves rank 3's row out.
TEST(MpitraceTotalsTest, ARunsProfilesTogetherGiveEachRankOnceOnItsHost) {
  const MpitraceProfile zero = Read("mpi_profile.1234.0");
  const MpitraceProfile three = Read("mpi_profile.1234.3");
  const MpitraceRun run = MpitraceRunOf({&zero, &three});
  EXPECT_EQ(run.own_profiles, (std::set<int32_t>{0, 3}));
  EXPECT_EQ(run.rows.size(), 4u);
  const ImportedTrace t3 =
      MpitraceTotals(three, "", "mpi_profile.1234.3", -1, &run);
  ASSERT_EQ(t3.processes.size(), 1u);
  EXPECT_EQ(t3.processes[0].node, "nid00103");
  ASSERT_EQ(t3.process_totals.size(), 1u);
  EXPECT_EQ(t3.process_totals[0].comm_ns, 5823000000);      // table: 5.82
  EXPECT_EQ(t3.process_totals[0].elapsed_ns, 12401000000);  // table: 12.40
  EXPECT_EQ(t3.process_totals[0].user_ns, 11500000000);
  EXPECT_EQ(t3.process_totals[0].context_switches, 1305);
  const ImportedTrace t0 =
      MpitraceTotals(zero, "", "mpi_profile.1234.0", -1, &run);
  ASSERT_EQ(t0.processes.size(), 3u);
  EXPECT_EQ(t0.processes[2].rank, 2);
  EXPECT_EQ(t0.process_totals.size(), 3u);
  // With --rank the run is not used: the file's ranks are not the job's.
  const ImportedTrace ranked =
      MpitraceTotals(three, "", "mpi_profile.1234.3", 7, &run);
  EXPECT_EQ(ranked.processes[0].node, "mpi_profile.1234.3");
}

}  // namespace
}  // namespace meridian
