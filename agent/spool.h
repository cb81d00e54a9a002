// Spool: the node agent's write-ahead store of batches on local disk.
//
// Every batch the agent builds is written here before its records are
// released from the probes' rings, and removed only when the collector has
// acknowledged it. So a batch survives the collector being down, and the
// agent being killed: the next agent (same directory) resends what it finds
// and, from the ring positions stored with each batch, skips the records
// that are already in the spool. Resending is safe because the collector
// stores each (agent_id, batch_seq) once.
//
// One file per batch, `<id>.batch` with id increasing, written to a
// temporary name (O_EXCL), flushed (fdatasync), renamed, and the rename
// made durable (fsync of the directory), so a file is either whole or
// absent. File (version 3, little-endian):
//   "MSPL"  u32 version  u64 spans  u64 payload_bytes  u32 crc32c
//   payload: u64 file id  u64 batch_seq  str agent_id  u32 n  n x str job
//            (the identity; str: u32 length, bytes),
//            u32 count, count x (u64 incarnation, u32 ring, u64 end),
//            then the v1::Batch
// crc32c covers spans, payload_bytes and the payload: a file cut short (on
// a span boundary or not) or with any bit changed is caught at Open, set
// aside as `<name>.corrupt` and reported, never resent as if whole. The
// identity catches what a checksum cannot: a whole file renamed, swapped
// with another or copied over one (its id is not its name's, checked at
// Open) or a batch that is not the one named (its sequence, agent, jobs
// and span count, checked at Read); such files are set aside too.
// Version 1 (no length or checksum) and 2 (no identity) files, from older
// agents, are still read.
// The spool holds at most `max_bytes`; Append beyond that is
// RESOURCE_EXHAUSTED (the agent counts the spans as dropped). Temporary
// files an agent left when it died are removed at Open.
//
// Recovery streams: Open reads one file at a time to check it and keeps
// only its id, span count and ring positions; Read loads a batch when the
// sender gets to it. A spool of 1 GiB costs the agent no 1 GiB of memory.
//
// One agent per spool: Open holds an exclusive lock (flock on `spool.lock`
// in the directory) until the Spool is destroyed; a second Open of the
// same directory fails with FAILED_PRECONDITION (two agents used to
// overwrite each other's files).
//
// The directory must be private (agent_dir.h: OpenPrivateDir: this user's,
// writable by no other; made 0700 if absent, FAILED_PRECONDITION
// otherwise), and every file is opened relative to it without following
// links, so no other user can redirect a write.
//
// Append and Remove may be called from different threads.
#ifndef MERIDIAN_AGENT_SPOOL_H_
#define MERIDIAN_AGENT_SPOOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/probe_session.h"
#include "agent/spool_files.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

// A spool file's contents, checked: its ring positions and batch, and its
// span count. `batch` may be null (checking only; version 1 files are then
// parsed anyway, to count their spans). DATA_LOSS says what is wrong. For
// Spool and its fuzz target (spool_fuzz.cc).
// `file_id`, if given, is the id the file's name says (checked against a
// version 3 file's own).
absl::Status DecodeSpoolFile(const std::string& data,
                             std::optional<uint64_t> file_id,
                             std::vector<RingPosition>* positions,
                             v1::Batch* batch, uint64_t* spans);

class Spool {
 public:
  // A batch an earlier agent left, checked but not loaded (Read loads it).
  struct Recovered {
    uint64_t id;
    uint64_t spans;
  };

  // Creates `dir` if needed, locks it and checks what an earlier agent
  // left. Its writes go through `files` (tests fail them), which outlives
  // the spool.
  ~Spool();
  static absl::StatusOr<std::unique_ptr<Spool>> Open(
      const std::string& dir, uint64_t max_bytes,
      SpoolFiles* files = SpoolFiles::Posix());

  // Writes `batch` with the ring positions it covers; returns its id. A
  // failed write (any of its calls: open, write, fdatasync, close, rename,
  // the directory's fsync) leaves no file of it behind, named or
  // temporary, and the spool as it was: INTERNAL naming the file, the call
  // and errno's message.
  absl::StatusOr<uint64_t> Append(const v1::Batch& batch,
                                  const std::vector<RingPosition>& positions);
  // Loads batch `id`, checking it again (DATA_LOSS if it no longer checks,
  // NOT_FOUND if it is gone).
  absl::StatusOr<v1::Batch> Read(uint64_t id) const;
  // Deletes batch `id`'s file; if the unlink fails (but for the file
  // being gone already), the batch is still held, counted in bytes(), and
  // its file is resent by the next agent (the collector stores it once).
  absl::Status Remove(uint64_t id);

  // The batches found at Open, oldest first.
  const std::vector<Recovered>& recovered() const { return recovered_; }
  // For each (incarnation, ring), the furthest position a recovered file
  // covers.
  const std::map<std::pair<uint64_t, uint32_t>, uint64_t>& recovered_positions()
      const {
    return positions_;
  }
  // Files found unreadable at Open (renamed *.corrupt), and why.
  const std::vector<std::string>& corrupt_files() const { return corrupt_; }

  uint64_t bytes() const;
  // Batches Append has begun to write since Open (disk round trips).
  uint64_t writes() const {
    absl::MutexLock lock(&mu_);
    return writes_;
  }
  const std::string& dir() const { return dir_; }

 private:
  Spool(std::string dir, int dir_fd, int lock_fd, uint64_t max_bytes,
        SpoolFiles* files)
      : dir_(std::move(dir)),
        dir_fd_(dir_fd),
        lock_fd_(lock_fd),
        max_bytes_(max_bytes),
        files_(files) {}
  std::string NameOf(uint64_t id) const;  // in the directory
  std::string PathOf(uint64_t id) const;  // for messages
  // Writes `data` to batch `id`'s file durably: to a temporary name,
  // flushed, renamed, the directory flushed. On failure, removes what it
  // wrote.
  absl::Status WriteFile(uint64_t id, const std::string& data);

  const std::string dir_;
  const int dir_fd_;   // verified private; every file is opened relative to it
  const int lock_fd_;  // holds the spool's flock
  const uint64_t max_bytes_;
  SpoolFiles* const files_;
  mutable absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, uint64_t> sizes_ ABSL_GUARDED_BY(mu_);  // id -> bytes
  std::vector<Recovered> recovered_;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> positions_;
  std::vector<std::string> corrupt_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_SPOOL_H_
