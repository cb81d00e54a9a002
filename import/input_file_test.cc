#include "import/input_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/meridian-input-XXXXXX";
    dir_ = mkdtemp(dir);
  }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& data) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }
  static std::string Gzip(const std::string& data) {
    z_stream z{};
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(data.size() + 1024, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = data.size();
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = out.size();
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  }
  std::string dir_;
};

TEST_F(InputFileTest, ReadsPlainAndGzipByContent) {
  const std::string text(100000, 'x');
  auto plain = ReadInputFile(Write("a.json", text), 1 << 20);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->content, text);
  EXPECT_FALSE(plain->gzip);
  EXPECT_GT(plain->mtime_ns, 0);
  // Named .json, compressed all the same; two members in a row.
  auto gz = ReadInputFile(Write("b.json", Gzip(text) + Gzip("yz")), 1 << 20);
  ASSERT_TRUE(gz.ok()) << gz.status();
  EXPECT_TRUE(gz->gzip);
  EXPECT_EQ(gz->content, text + "yz");
}

TEST_F(InputFileTest, RefusesDamagedTruncatedAndOversizedFiles) {
  const std::string gz = Gzip(std::string(100000, 'x'));
  auto cut =
      ReadInputFile(Write("cut.gz", gz.substr(0, gz.size() / 2)), 1 << 20);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(),
            dir_ +
                "/cut.gz: the gzip data is cut short (a truncated .gz); "
                "nothing imported");
  std::string bad = gz;
  bad[12] ^= 0x55;
  bad[13] ^= 0x55;
  auto damaged = ReadInputFile(Write("bad.gz", bad), 1 << 20);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().message().substr(0, dir_.size() + 28),
            dir_ + "/bad.gz: damaged gzip data (");
  auto bomb = ReadInputFile(Write("bomb.gz", gz), 1000);
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.status().message(),
            dir_ + "/bomb.gz: decompresses to more than 1000 bytes");
  EXPECT_EQ(ReadInputFile(dir_ + "/none", 10).status().code(),
            absl::StatusCode::kNotFound);
}

// A gzip bomb (4 MB that expand to 4 GiB grew the import past 6 GB): a
// .gz is read to at most kMaxGzipRatio times its size (above a floor).
TEST_F(InputFileTest, AGzipBombStopsAtAHundredTimesItsSize) {
  const std::string spaces(1 << 20, ' ');
  const std::string bomb = Gzip(spaces);  // about 1,000 to 1
  ASSERT_LT(bomb.size() * kMaxGzipRatio, spaces.size());
  auto refused = ReadInputFile(Write("bomb.gz", bomb), size_t{8} << 30,
                               /*gzip_floor_bytes=*/1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            absl::StrCat(dir_, "/bomb.gz: decompresses to more than ",
                         bomb.size() * kMaxGzipRatio, " bytes, 100 times its ",
                         bomb.size(),
                         " (a gzip bomb? a trace that really compresses that "
                         "well is read once gunzipped); nothing imported"));
  // Under the floor, or compressed as traces are, it is read.
  auto floor = ReadInputFile(Write("small.gz", bomb), size_t{8} << 30,
                             /*gzip_floor_bytes=*/2 << 20);
  ASSERT_TRUE(floor.ok()) << floor.status();
  EXPECT_EQ(floor->content, spaces);
  std::string trace;
  for (int i = 0; i < 20000; ++i) {
    trace +=
        absl::StrCat("{\"ts\":", i * 7919 % 100003, ",\"dur\":", i % 97, "},");
  }
  auto read = ReadInputFile(Write("trace.gz", Gzip(trace)), size_t{8} << 30,
                            /*gzip_floor_bytes=*/1000);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->content, trace);
}

TEST_F(InputFileTest, DirectoriesExpandSortedWithoutHiddenFiles) {
  mkdir((dir_ + "/d").c_str(), 0700);
  mkdir((dir_ + "/d/sub").c_str(), 0700);
  Write("d/b.json", "");
  Write("d/a.json", "");
  Write("d/.hidden", "");
  Write("d/sub/c.json", "");
  auto paths = ExpandPaths({dir_ + "/d", dir_ + "/d/a.json"});
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_EQ(*paths, (std::vector<std::string>{
                        dir_ + "/d/a.json", dir_ + "/d/b.json",
                        dir_ + "/d/sub/c.json", dir_ + "/d/a.json"}));
  EXPECT_EQ(ExpandPaths({dir_ + "/missing"}).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace meridian
