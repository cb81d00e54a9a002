#include "capture/probe/mpi_family_choice.h"

#include <cstring>
#include <set>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace mpi {
namespace {

// The symbols a fake process defines.
bool Defines(const char* symbol, void* context) {
  return static_cast<std::set<std::string>*>(context)->count(symbol) > 0;
}

MpiFamily Detect(std::set<std::string> symbols) {
  return DetectFamily(&Defines, &symbols);
}

TEST(MpiFamilyChoiceTest, EachFamilyIsToldByItsOwnSymbol) {
  // As `nm -D --defined-only` lists them in Debian 12's libmpi.so.40
  // (Open MPI 4.1) and libmpich.so.12 (MPICH 4.0): both define the
  // standard's names, only one the marker.
  EXPECT_EQ(Detect({"MPI_Send", "PMPI_Send", "ompi_mpi_comm_world"}),
            MpiFamily::kOpenMpi);
  EXPECT_EQ(Detect({"MPI_Send", "PMPI_Send", "MPIR_Err_create_code"}),
            MpiFamily::kMpich);
  EXPECT_EQ(Detect({"MPI_Send", "PMPI_Send"}), MpiFamily::kNone);
  EXPECT_EQ(Detect({}), MpiFamily::kNone);
  EXPECT_EQ(Detect({"ompi_mpi_comm_world", "MPIR_Err_create_code"}),
            MpiFamily::kBoth);
}

TEST(MpiFamilyChoiceTest, TheDetectedFamilysLibraryIsLoaded) {
  FamilyChoice open_mpi = ChooseFamilyLibrary(nullptr, MpiFamily::kOpenMpi);
  EXPECT_STREQ(open_mpi.library, "libmeridian_mpi_openmpi.so");
  EXPECT_EQ(open_mpi.why, nullptr);
  FamilyChoice mpich = ChooseFamilyLibrary("", MpiFamily::kMpich);
  EXPECT_STREQ(mpich.library, "libmeridian_mpi_mpich.so");
  EXPECT_EQ(mpich.why, nullptr);
}

TEST(MpiFamilyChoiceTest, AnUnknownOrAmbiguousMpiIsNotRecordedAndSaysWhy) {
  FamilyChoice none = ChooseFamilyLibrary(nullptr, MpiFamily::kNone);
  EXPECT_EQ(none.library, nullptr);
  ASSERT_NE(none.why, nullptr);
  EXPECT_NE(strstr(none.why, "neither Open MPI nor of the MPICH family"),
            nullptr);
  FamilyChoice both = ChooseFamilyLibrary(nullptr, MpiFamily::kBoth);
  EXPECT_EQ(both.library, nullptr);
  ASSERT_NE(both.why, nullptr);
  EXPECT_NE(strstr(both.why, "MERIDIAN_MPI_WRAPPERS=openmpi or mpich"),
            nullptr);
}

TEST(MpiFamilyChoiceTest, TheEnvironmentOverridesDetection) {
  EXPECT_STREQ(ChooseFamilyLibrary("mpich", MpiFamily::kOpenMpi).library,
               "libmeridian_mpi_mpich.so");
  EXPECT_STREQ(ChooseFamilyLibrary("openmpi", MpiFamily::kNone).library,
               "libmeridian_mpi_openmpi.so");
  EXPECT_STREQ(ChooseFamilyLibrary("/opt/m/libx.so", MpiFamily::kMpich).library,
               "/opt/m/libx.so");
  // "none": untraced, silently (the user asked for it).
  FamilyChoice none = ChooseFamilyLibrary("none", MpiFamily::kOpenMpi);
  EXPECT_EQ(none.library, nullptr);
  EXPECT_EQ(none.why, nullptr);
  // A value that is none of those: untraced, and said.
  FamilyChoice typo = ChooseFamilyLibrary("open-mpi", MpiFamily::kOpenMpi);
  EXPECT_EQ(typo.library, nullptr);
  ASSERT_NE(typo.why, nullptr);
  EXPECT_NE(strstr(typo.why, "MERIDIAN_MPI_WRAPPERS"), nullptr);
}

TEST(MpiFamilyChoiceTest, TheLibraryIsLookedForBesideTheProbe) {
  char out[64];
  ASSERT_TRUE(LibraryBesideProbe("/usr/local/lib/libmeridian_probe.so",
                                 "libmeridian_mpi_mpich.so", out, sizeof(out)));
  EXPECT_STREQ(out, "/usr/local/lib/libmeridian_mpi_mpich.so");
  ASSERT_TRUE(
      LibraryBesideProbe("libmeridian_probe.so", "libx.so", out, sizeof(out)));
  EXPECT_STREQ(out, "libx.so");
  ASSERT_TRUE(LibraryBesideProbe(nullptr, "libx.so", out, sizeof(out)));
  EXPECT_STREQ(out, "libx.so");
  // "/a/" + "libx.so" + NUL is 11 bytes: 10 is too few.
  EXPECT_TRUE(LibraryBesideProbe("/a/p.so", "libx.so", out, 11));
  EXPECT_STREQ(out, "/a/libx.so");
  EXPECT_FALSE(LibraryBesideProbe("/a/p.so", "libx.so", out, 10));
}

}  // namespace
}  // namespace mpi
}  // namespace meridian
