#include "import/stranger_sqlite.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace meridian {
namespace {

constexpr size_t kHeaderBytes = 100;      // SQLite's file header
constexpr int kMaxValueBytes = 16 << 20;  // any one string or blob

uint32_t Be16(const char* p) {
  return static_cast<uint32_t>(static_cast<unsigned char>(p[0])) << 8 |
         static_cast<unsigned char>(p[1]);
}

uint32_t Be32(const char* p) { return Be16(p) << 16 | Be16(p + 2); }

// What SQLite's header says about the file's size, checked against the
// size it has: a cut file is refused here with a clear message rather
// than read until SQLite meets a missing page.
absl::Status CheckHeader(std::string_view head, uint64_t size,
                         const std::string& file) {
  if (!LooksLikeSqlite(head)) {
    return absl::InvalidArgumentError(absl::StrCat(
        file,
        ": not an SQLite database (an Nsight Systems export is one: nsys "
        "export --type sqlite)"));
  }
  if (size < kHeaderBytes || head.size() < kHeaderBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": cut short: ", size,
                     " bytes, less than SQLite's 100-byte header"));
  }
  uint32_t page_size = Be16(head.data() + 16);
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || page_size > 65536 ||
      (page_size & (page_size - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": damaged SQLite header (page size ", page_size, ")"));
  }
  if (size % page_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": ", size, " bytes is not a whole number of its ",
                     page_size, "-byte pages: truncated or damaged"));
  }
  const uint32_t change_counter = Be32(head.data() + 24);
  const uint32_t pages = Be32(head.data() + 28);
  const uint32_t valid_for = Be32(head.data() + 92);
  // The page count is meaningful only when it was written with the
  // current change counter (SQLite's file format, section 1.3.8).
  if (pages != 0 && valid_for == change_counter &&
      uint64_t{pages} * page_size > size) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": truncated: its header says ", pages, " pages of ", page_size,
        " bytes (", uint64_t{pages} * page_size, " bytes) but it has ", size));
  }
  return absl::OkStatus();
}

}  // namespace

bool LooksLikeSqlite(std::string_view head) {
  static constexpr char kMagic[16] = "SQLite format 3";  // and its NUL
  return head.size() >= sizeof(kMagic) &&
         memcmp(head.data(), kMagic, sizeof(kMagic)) == 0;
}

namespace stranger_sqlite {

absl::Status SqliteError(sqlite3* db, const std::string& file,
                         const std::string& what) {
  const int code = sqlite3_errcode(db) & 0xFF;
  std::string hint;
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) {
    hint = " (a damaged or truncated file)";
  } else if (code == SQLITE_TOOBIG) {
    hint = " (a value over 16 MiB)";
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file, ": ", what, ": SQLite says \"", sqlite3_errmsg(db), "\"", hint));
}

absl::Status Harden(sqlite3* db, const std::string& file) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  if (sqlite3_exec(db, "PRAGMA cell_size_check = ON; PRAGMA query_only = ON",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqliteError(db, file, "cannot configure SQLite");
  }
  return absl::OkStatus();
}

absl::StatusOr<Db> OpenStrangerSqlite(const std::string& path,
                                      const std::string& file) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat(file, ": cannot open: ", strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not a regular file"));
  }
  char head[kHeaderBytes];
  size_t got = 0;
  if (FILE* f = fopen(path.c_str(), "rb")) {
    got = fread(head, 1, sizeof(head), f);
    fclose(f);
  } else {
    return absl::NotFoundError(
        absl::StrCat(file, ": cannot open: ", strerror(errno)));
  }
  absl::Status header = CheckHeader(std::string_view(head, got),
                                    static_cast<uint64_t>(st.st_size), file);
  if (!header.ok()) return header;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE,
      nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    if (db == nullptr) return absl::ResourceExhaustedError("SQLite: no memory");
    return SqliteError(db.get(), file, "cannot open");
  }
  return db;
}

absl::StatusOr<Db> OpenStrangerSqliteImage(std::string_view image,
                                           const std::string& file) {
  absl::Status header = CheckHeader(image, image.size(), file);
  if (!header.ok()) return header;
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(
      ":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    if (db == nullptr) return absl::ResourceExhaustedError("SQLite: no memory");
    return SqliteError(db.get(), file, "cannot open");
  }
  // Read-only and without FREEONCLOSE, SQLite neither writes nor frees the
  // image: the cast only meets the API's signature.
  auto* bytes =
      reinterpret_cast<unsigned char*>(const_cast<char*>(image.data()));
  if (sqlite3_deserialize(db.get(), "main", bytes, image.size(), image.size(),
                          SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
    return SqliteError(db.get(), file, "cannot open the image");
  }
  return db;
}

}  // namespace stranger_sqlite
}  // namespace meridian
