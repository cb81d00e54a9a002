#include "agent/spool.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crc32c.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/meridian-spool-XXXXXX";
    dir_ = mkdtemp(dir);
  }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }
  static v1::Batch Batch(uint64_t seq, int spans) {
    v1::Batch batch;
    batch.set_agent_id("node/agent-1");
    batch.set_batch_seq(seq);
    batch.add_strings("");
    for (int i = 0; i < spans; ++i) batch.add_spans()->set_start_ns(i);
    return batch;
  }
  std::string dir_;
};

TEST_F(SpoolTest, WhatIsNotRemovedIsFoundAgainInOrderWithItsRingPositions) {
  {
    auto spool = Spool::Open(dir_ + "/a/b", 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    auto first = (*spool)->Append(Batch(1, 3), {{77, 0, 10}, {77, 1, 4}});
    auto second = (*spool)->Append(Batch(2, 5), {{77, 0, 15}});
    auto third = (*spool)->Append(Batch(3, 1), {{99, 2, 1}});
    ASSERT_TRUE(first.ok() && second.ok() && third.ok());
    EXPECT_EQ(*first, 1u);
    EXPECT_EQ(*third, 3u);
    ASSERT_TRUE((*spool)->Remove(*second).ok());
    EXPECT_EQ((*spool)->Remove(*second).code(), absl::StatusCode::kNotFound);
  }
  auto again = Spool::Open(dir_ + "/a/b", 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status();
  const std::vector<Spool::Recovered>& recovered = (*again)->recovered();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].id, 1u);
  EXPECT_EQ(recovered[0].spans, 3u);
  EXPECT_EQ(recovered[1].id, 3u);
  EXPECT_EQ(recovered[1].spans, 1u);
  auto first = (*again)->Read(1);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->batch_seq(), 1u);
  EXPECT_EQ(first->spans_size(), 3);
  const auto& positions = (*again)->recovered_positions();
  EXPECT_EQ(positions.size(), 3u);
  EXPECT_EQ(positions.at({77, 0}), 10u);  // batch 2 (to 15) was acknowledged
  EXPECT_EQ(positions.at({77, 1}), 4u);
  EXPECT_EQ(positions.at({99, 2}), 1u);
  auto next = (*again)->Append(Batch(4, 1), {});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, 4u);  // ids keep increasing across agents
}

// The real calls, but call number `fail_at` (from 0, of all the calls made
// through it) fails with `error`; with `short_writes`, a write writes at
// most 7 bytes (the spool must finish the rest).
class FaultyFiles final : public SpoolFiles {
 public:
  int64_t fail_at = -1;
  int error = EIO;
  bool short_writes = false;
  int64_t calls = 0;
  std::vector<std::string> log;  // each call's name, in order

  int OpenAt(int dir_fd, const char* name, int flags, mode_t mode) override {
    return Fails("open") ? -1 : real_->OpenAt(dir_fd, name, flags, mode);
  }
  ssize_t Write(int fd, const void* data, size_t n) override {
    if (Fails("write")) return -1;
    return real_->Write(fd, data, short_writes ? std::min<size_t>(n, 7) : n);
  }
  int Fdatasync(int fd) override {
    return Fails("fdatasync") ? -1 : real_->Fdatasync(fd);
  }
  int Close(int fd) override {
    // A failed close still closes (as Linux's does).
    const bool fail = Fails("close");
    const int rc = real_->Close(fd);
    if (fail) errno = error;
    return fail ? -1 : rc;
  }
  int RenameAt(int dir_fd, const char* from, const char* to) override {
    return Fails("rename") ? -1 : real_->RenameAt(dir_fd, from, to);
  }
  int Fsync(int fd) override { return Fails("fsync") ? -1 : real_->Fsync(fd); }
  int UnlinkAt(int dir_fd, const char* name) override {
    return Fails("unlink") ? -1 : real_->UnlinkAt(dir_fd, name);
  }

 private:
  bool Fails(const char* call) {
    log.push_back(call);
    if (calls++ != fail_at) return false;
    errno = error;
    return true;
  }
  SpoolFiles* real_ = SpoolFiles::Posix();
};

// The names in `dir`, sorted.
std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  closedir(d);
  return names;
}

std::string FileName(uint64_t id) {
  char name[32];
  snprintf(name, sizeof(name), "%020llu.batch",
           static_cast<unsigned long long>(id));
  return name;
}

// Each call of an Append failing in turn (with writes cut short, so each of
// several writes fails once too): the Append fails naming its file, the
// call and errno's message; no file of it is left, named or temporary;
// the spool's bytes are as before and its next Append succeeds; and a new
// agent's Open finds exactly the batches whose Append succeeded, whole.
TEST_F(SpoolTest, AnAppendFailingAtAnyCallLeavesTheSpoolAsItWas) {
  FaultyFiles files;
  files.short_writes = true;
  std::set<std::string> expected = {"spool.lock"};
  std::vector<uint64_t> stored;  // ids whose Append succeeded
  {
    auto spool = Spool::Open(dir_, 1 << 20, &files);
    ASSERT_TRUE(spool.ok()) << spool.status();
    const int64_t before = files.calls;
    auto first = (*spool)->Append(Batch(1, 3), {{7, 0, 3}});
    ASSERT_TRUE(first.ok()) << first.status();
    stored.push_back(*first);
    expected.insert(FileName(*first));
    const int64_t per_append = files.calls - before;
    // open, the writes of a file cut into 7-byte pieces, fdatasync, close,
    // rename, the directory's fsync.
    ASSERT_GT(per_append, 6);
    EXPECT_EQ(files.log[before], "open");
    EXPECT_EQ(files.log[before + 1], "write");
    EXPECT_EQ(
        std::vector<std::string>(files.log.end() - 4, files.log.end()),
        (std::vector<std::string>{"fdatasync", "close", "rename", "fsync"}));
    for (int64_t k = 0; k < per_append; ++k) {
      const uint64_t bytes = (*spool)->bytes();
      files.fail_at = files.calls + k;
      const size_t logged = files.log.size();
      auto failed = (*spool)->Append(Batch(1, 3), {{7, 0, 3}});
      ASSERT_FALSE(failed.ok()) << "call " << k;
      const std::string call = files.log[logged + k];
      EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
      EXPECT_TRUE(
          absl::StartsWith(failed.status().message(), "writing " + dir_ + "/"))
          << failed.status();
      EXPECT_TRUE(absl::EndsWith(
          failed.status().message(),
          absl::StrCat(": ", call == "fsync" ? "fsync of the directory" : call,
                       ": ", strerror(EIO))))
          << "call " << k << " (" << call << "): " << failed.status();
      EXPECT_EQ((*spool)->bytes(), bytes) << "call " << k;
      EXPECT_EQ(Listing(dir_), expected) << "call " << k << " (" << call << ")";
      files.fail_at = -1;
      auto next = (*spool)->Append(Batch(2, 2), {{7, 0, 5}});
      ASSERT_TRUE(next.ok()) << next.status();
      stored.push_back(*next);
      expected.insert(FileName(*next));
    }
  }
  auto again = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->corrupt_files().empty());
  std::vector<uint64_t> found;
  for (const Spool::Recovered& r : (*again)->recovered()) {
    found.push_back(r.id);
    EXPECT_EQ(r.spans, r.id == stored[0] ? 3u : 2u);
    auto batch = (*again)->Read(r.id);
    ASSERT_TRUE(batch.ok()) << batch.status();
    EXPECT_EQ(batch->batch_seq(), r.id == stored[0] ? 1u : 2u);
  }
  EXPECT_EQ(found, stored);
}

// A Remove whose unlink fails keeps the batch: still counted, its file
// still there and found again by a new agent; the next Remove succeeds.
TEST_F(SpoolTest, ARemoveThatFailsKeepsTheBatch) {
  FaultyFiles files;
  auto spool = Spool::Open(dir_, 1 << 20, &files);
  ASSERT_TRUE(spool.ok()) << spool.status();
  auto id = (*spool)->Append(Batch(1, 4), {});
  ASSERT_TRUE(id.ok()) << id.status();
  const uint64_t bytes = (*spool)->bytes();
  files.fail_at = files.calls;
  files.error = EROFS;
  const absl::Status failed = (*spool)->Remove(*id);
  EXPECT_EQ(failed.message(),
            absl::StrCat("removing ", dir_, "/", FileName(*id), ": ",
                         strerror(EROFS)));
  EXPECT_EQ((*spool)->bytes(), bytes);
  EXPECT_EQ(Listing(dir_),
            (std::set<std::string>{"spool.lock", FileName(*id)}));
  EXPECT_TRUE((*spool)->Remove(*id).ok());
  EXPECT_EQ((*spool)->bytes(), 0u);
  EXPECT_EQ(Listing(dir_), (std::set<std::string>{"spool.lock"}));
  // A file someone removed by hand: its batch is removed, not held.
  auto gone = (*spool)->Append(Batch(2, 4), {});
  ASSERT_TRUE(gone.ok()) << gone.status();
  ASSERT_EQ(unlink((dir_ + "/" + FileName(*gone)).c_str()), 0);
  EXPECT_TRUE((*spool)->Remove(*gone).ok());
  EXPECT_EQ((*spool)->bytes(), 0u);
  EXPECT_EQ((*spool)->Remove(*gone).code(), absl::StatusCode::kNotFound);
}

TEST_F(SpoolTest, AFullSpoolRefusesAndSaysHowToFixIt) {
  auto spool = Spool::Open(dir_, 600);
  ASSERT_TRUE(spool.ok());
  ASSERT_TRUE((*spool)->Append(Batch(1, 20), {}).ok());
  auto full = (*spool)->Append(Batch(2, 200), {});
  ASSERT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("--spool-max-bytes"),
            std::string::npos);
  EXPECT_LE((*spool)->bytes(), 600u);
}

TEST_F(SpoolTest, AnUnreadableFileIsSetAsideAndTheRestLoads) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE((*spool)->Append(Batch(1, 2), {}).ok());
    ASSERT_TRUE((*spool)->Append(Batch(2, 2), {}).ok());
  }
  const std::string broken = dir_ + "/00000000000000000001.batch";
  std::ofstream(broken, std::ios::trunc) << "MSPLgarbage";
  auto again = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->corrupt_files(),
            std::vector<std::string>{broken +
                                     ": not a spool file of version 1 to 3"});
  EXPECT_EQ(access((broken + ".corrupt").c_str(), F_OK), 0);
  ASSERT_EQ((*again)->recovered().size(), 1u);
  EXPECT_EQ((*again)->Read(2)->batch_seq(), 2u);
}

void Write(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// Before: a file cut on a span boundary still parsed (one span fewer) and a
// flipped sequence number went unnoticed, while the agent reported every
// span delivered. Now each is caught, set aside and reported.
TEST_F(SpoolTest, AFileCutShortOrChangedIsCaughtNotResent) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE((*spool)->Append(Batch(1, 4), {}).ok());
    ASSERT_TRUE((*spool)->Append(Batch(2, 4), {}).ok());
    ASSERT_TRUE((*spool)->Append(Batch(3, 4), {}).ok());
  }
  const std::string cut = dir_ + "/00000000000000000001.batch";
  const std::string flipped = dir_ + "/00000000000000000002.batch";
  std::string data = FileText(cut);
  // The last span is 4 bytes on the wire (field 6, length 2, start_ns 3):
  // without it
  // the batch still parses, with 3 spans.
  data.resize(data.size() - 4);
  v1::Batch shorter;
  // Header 28, identity 36 (id, seq, agent 4 + 12, no job), positions 4.
  ASSERT_TRUE(shorter.ParseFromString(data.substr(28 + 36 + 4)));
  EXPECT_EQ(shorter.spans_size(), 3);
  Write(cut, data);
  data = FileText(flipped);
  // The batch's batch_seq (after its agent_id, the identity's is first).
  const size_t seq = data.rfind("node/agent-1") + 12 + 1;
  ASSERT_EQ(data[seq], 2);
  data[seq] = 7;
  Write(flipped, data);

  auto again = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->corrupt_files(),
            (std::vector<std::string>{
                cut + ": it holds 68 bytes of batch where its header says 72",
                flipped + ": its checksum does not match (CRC-32C)"}));
  ASSERT_EQ((*again)->recovered().size(), 1u);
  EXPECT_EQ((*again)->recovered()[0].id, 3u);
}

// Whole files moved about with the agent stopped (the checksums all hold):
// two swapped, one copied over another. Before, each was resent as the
// batch its name said, the agent reported every span delivered, and one
// job lost 542 of its 552 spans. Now each such file is set aside, named.
TEST_F(SpoolTest, AFileRenamedSwappedOrCopiedOverAnotherIsCaught) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    for (uint64_t seq = 1; seq <= 4; ++seq) {
      ASSERT_TRUE((*spool)->Append(Batch(seq, 2), {}).ok());
    }
  }
  const auto file = [&](int id) {
    return dir_ + "/0000000000000000000" + std::to_string(id) + ".batch";
  };
  ASSERT_EQ(rename(file(1).c_str(), (file(1) + ".x").c_str()), 0);
  ASSERT_EQ(rename(file(3).c_str(), file(1).c_str()), 0);
  ASSERT_EQ(rename((file(1) + ".x").c_str(), file(3).c_str()), 0);
  Write(file(4), FileText(file(2)));
  auto again = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->corrupt_files(),
            (std::vector<std::string>{
                file(1) + ": it says it is spool file 3 (renamed, swapped or "
                          "copied over another)",
                file(3) + ": it says it is spool file 1 (renamed, swapped or "
                          "copied over another)",
                file(4) + ": it says it is spool file 2 (renamed, swapped or "
                          "copied over another)"}));
  ASSERT_EQ((*again)->recovered().size(), 1u);
  EXPECT_EQ((*again)->recovered()[0].id, 2u);
  EXPECT_EQ((*again)->Read(2)->batch_seq(), 2u);
}

// A file whose identity was rewritten, checksum and all, to name another
// batch than the one it holds: caught when the batch is read.
TEST_F(SpoolTest, ABatchThatIsNotTheOneItsHeaderNamesIsRefusedOnRead) {
  {
    auto spool = Spool::Open(dir_, 1 << 20);
    ASSERT_TRUE((*spool)->Append(Batch(1, 2), {}).ok());
  }
  const std::string path = dir_ + "/00000000000000000001.batch";
  std::string data = FileText(path);
  data[28 + 8] = 9;  // the identity's batch_seq: 1 -> 9
  const std::string_view all(data);
  const uint32_t crc = Crc32c(all.substr(28), Crc32c(all.substr(8, 16)));
  memcpy(&data[24], &crc, 4);
  Write(path, data);
  auto again = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ((*again)->recovered().size(), 1u);  // Open reads no batch
  auto read = (*again)->Read(1);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(read.status().message(),
            path +
                ": its batch is not the one its header names (sequence, "
                "agent, jobs or span count differ)");
}

TEST_F(SpoolTest, OneAgentPerSpool) {
  auto first = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Spool::Open(dir_, 1 << 20);
  ASSERT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "the spool " + dir_ +
                " is in use by another agent; give each agent its own "
                "--spool-dir");
  first->reset();
  EXPECT_TRUE(Spool::Open(dir_, 1 << 20).ok());
}

TEST_F(SpoolTest, LeftoverTemporariesGoAndOldFilesStillRead) {
  Write(dir_ + "/00000000000000000005.batch.tmp", "half written");
  // A version 1 file: magic, version, no ring positions, the batch.
  std::string v1_file("MSPL\x01\0\0\0\0\0\0\0", 12);
  ASSERT_TRUE(Batch(9, 2).AppendToString(&v1_file));
  Write(dir_ + "/00000000000000000004.batch", v1_file);
  // A version 2 file: length and checksum, no identity.
  std::string v2_file("MSPL\x02\0\0\0", 8);
  std::string payload(4, '\0');  // no ring positions
  ASSERT_TRUE(Batch(8, 3).AppendToString(&payload));
  const uint64_t spans = 3, length = payload.size();
  v2_file.append(reinterpret_cast<const char*>(&spans), 8);
  v2_file.append(reinterpret_cast<const char*>(&length), 8);
  const uint32_t crc =
      Crc32c(payload, Crc32c(std::string_view(v2_file).substr(8, 16)));
  v2_file.append(reinterpret_cast<const char*>(&crc), 4);
  v2_file += payload;
  Write(dir_ + "/00000000000000000003.batch", v2_file);
  auto spool = Spool::Open(dir_, 1 << 20);
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_NE(access((dir_ + "/00000000000000000005.batch.tmp").c_str(), F_OK),
            0);
  EXPECT_TRUE((*spool)->corrupt_files().empty());
  ASSERT_EQ((*spool)->recovered().size(), 2u);
  EXPECT_EQ((*spool)->recovered()[0].spans, 3u);
  EXPECT_EQ((*spool)->recovered()[1].spans, 2u);
  EXPECT_EQ((*spool)->Read(3)->batch_seq(), 8u);
  EXPECT_EQ((*spool)->Read(4)->batch_seq(), 9u);
  EXPECT_EQ(*(*spool)->Append(Batch(10, 1), {}), 5u);
}

}  // namespace
}  // namespace meridian
