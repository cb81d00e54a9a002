#include "cli/output_file.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(OutputFileTest, WritesBesideTheNameAndRenamesOnCommit) {
  const std::string path = TempPath("plain.json");
  auto file = OutputFile::Create(path, "test");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Write("[1,").ok());
  ASSERT_TRUE((*file)->Write("2]").ok());
  EXPECT_TRUE(Exists(path + ".partial"));
  EXPECT_FALSE(Exists(path));
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(FileText(path), "[1,2]");
  EXPECT_EQ((*file)->bytes_out(), 5);
  EXPECT_FALSE(Exists(path + ".partial"));
}

TEST(OutputFileTest, AnUncommittedFileLeavesNothing) {
  const std::string path = TempPath("abandoned.json");
  {
    auto file = OutputFile::Create(path, "test");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Write("partial").ok());
  }
  EXPECT_FALSE(Exists(path + ".partial"));
  EXPECT_FALSE(Exists(path));
}

TEST(OutputFileTest, GzipByNameAndZlibReadsItBack) {
  const std::string path = TempPath("trace.json.gz");
  auto file = OutputFile::Create(path, "test");
  ASSERT_TRUE(file.ok());
  std::string data;
  for (int i = 0; i < 100000; ++i) data += "{\"ph\":\"X\"},";
  ASSERT_TRUE((*file)->Write(data).ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_TRUE((*file)->gzip());
  EXPECT_EQ((*file)->bytes_in(), static_cast<int64_t>(data.size()));
  EXPECT_LT((*file)->bytes_out(), (*file)->bytes_in() / 50);
  gzFile in = gzopen(path.c_str(), "rb");
  ASSERT_NE(in, nullptr);
  std::string back(data.size() + 10, '\0');
  const int n = gzread(in, back.data(), static_cast<unsigned>(back.size()));
  gzclose(in);
  back.resize(n);
  EXPECT_EQ(back, data);
}

TEST(OutputFileTest, RefusesToWriteThroughASymbolicLink) {
  const std::string victim = TempPath("victim.txt");
  { std::ofstream(victim) << "keep"; }
  const std::string path = TempPath("trap.json");
  std::remove((path + ".partial").c_str());
  ASSERT_EQ(symlink(victim.c_str(), (path + ".partial").c_str()), 0);
  auto file = OutputFile::Create(path, "test");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            "cannot write " + path +
                ".partial: Too many levels of symbolic links (it is a "
                "symbolic link; remove it)");
  EXPECT_EQ(FileText(victim), "keep");
}

TEST(OutputFileTest, AnUnwritableDirectoryIsAClearError) {
  auto file = OutputFile::Create("/nonexistent-dir/x.json", "test");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            "cannot write /nonexistent-dir/x.json.partial: No such file or "
            "directory");
}

}  // namespace
}  // namespace meridian
