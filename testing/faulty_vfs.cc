#include "testing/faulty_vfs.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>

namespace meridian {
namespace {

sqlite3_vfs* g_real = nullptr;

// An open file: ours first, the default VFS's right after it.
struct FaultyFile {
  sqlite3_file base;
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
FaultyFile* Of(sqlite3_file* f) { return reinterpret_cast<FaultyFile*>(f); }
sqlite3_file* Real(sqlite3_file* f) { return Of(f)->real(); }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* data, int n, sqlite3_int64 at) {
  return Real(f)->pMethods->xRead(Real(f), data, n, at);
}
int Write(sqlite3_file* f, const void* data, int n, sqlite3_int64 at) {
  if (FaultyVfs::Install().Fails("write")) return SQLITE_IOERR_WRITE;
  return Real(f)->pMethods->xWrite(Real(f), data, n, at);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (FaultyVfs::Install().Fails("truncate")) return SQLITE_IOERR_TRUNCATE;
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (FaultyVfs::Install().Fails("sync")) return SQLITE_IOERR_FSYNC;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) {
  return Real(f)->pMethods->xLock(Real(f), level);
}
int Unlock(sqlite3_file* f, int level) {
  return Real(f)->pMethods->xUnlock(Real(f), level);
}
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) {
  return Real(f)->pMethods->xSectorSize(Real(f));
}
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend,
           void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int remove) {
  return Real(f)->pMethods->xShmUnmap(Real(f), remove);
}
int Fetch(sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), at, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), at, p);
}

// The methods of a file, at the version of the real file's (1: the basic
// calls, 2: shared memory, 3: memory maps): SQLite calls no method the
// real file lacks.
#define MERIDIAN_FAULTY_METHODS(version)                                   \
  {                                                                        \
    version, Close, Read, Write, Truncate, Sync, FileSize, Lock, Unlock,   \
        CheckReservedLock, FileControl, SectorSize, DeviceCharacteristics, \
        ShmMap, ShmLock, ShmBarrier, ShmUnmap, Fetch, Unfetch              \
  }
const sqlite3_io_methods kMethods[] = {MERIDIAN_FAULTY_METHODS(1),
                                       MERIDIAN_FAULTY_METHODS(2),
                                       MERIDIAN_FAULTY_METHODS(3)};
#undef MERIDIAN_FAULTY_METHODS

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags,
         int* out_flags) {
  FaultyFile* f = Of(file);
  f->base.pMethods = nullptr;
  f->real()->pMethods = nullptr;
  const int rc = g_real->xOpen(g_real, name, f->real(), flags, out_flags);
  // Where the real file has methods, even after a failed open, SQLite
  // closes it through ours.
  if (const sqlite3_io_methods* real = f->real()->pMethods) {
    f->base.pMethods = &kMethods[std::clamp(real->iVersion, 1, 3) - 1];
  }
  return rc;
}
int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) {
  return g_real->xDlOpen(g_real, name);
}
void DlError(sqlite3_vfs*, int n, char* out) {
  g_real->xDlError(g_real, n, out);
}
void (*DlSym(sqlite3_vfs*, void* handle, const char* name))(void) {
  return g_real->xDlSym(g_real, handle, name);
}
void DlClose(sqlite3_vfs*, void* handle) { g_real->xDlClose(g_real, handle); }
int Randomness(sqlite3_vfs*, int n, char* out) {
  return g_real->xRandomness(g_real, n, out);
}
int Sleep(sqlite3_vfs*, int us) { return g_real->xSleep(g_real, us); }
int CurrentTime(sqlite3_vfs*, double* out) {
  return g_real->xCurrentTime(g_real, out);
}
int GetLastError(sqlite3_vfs*, int n, char* out) {
  return g_real->xGetLastError(g_real, n, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}

}  // namespace

FaultyVfs& FaultyVfs::Install() {
  static FaultyVfs* faulty = [] {
    g_real = sqlite3_vfs_find(nullptr);
    static sqlite3_vfs vfs;
    std::memset(&vfs, 0, sizeof(vfs));
    vfs.iVersion = 2;
    vfs.szOsFile = static_cast<int>(sizeof(FaultyFile)) + g_real->szOsFile;
    vfs.mxPathname = g_real->mxPathname;
    vfs.zName = "meridian-faulty";
    vfs.xOpen = Open;
    vfs.xDelete = Delete;
    vfs.xAccess = Access;
    vfs.xFullPathname = FullPathname;
    vfs.xDlOpen = DlOpen;
    vfs.xDlError = DlError;
    vfs.xDlSym = DlSym;
    vfs.xDlClose = DlClose;
    vfs.xRandomness = Randomness;
    vfs.xSleep = Sleep;
    vfs.xCurrentTime = CurrentTime;
    vfs.xGetLastError = GetLastError;
    vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    sqlite3_vfs_register(&vfs, 1);
    return new FaultyVfs();
  }();
  return *faulty;
}

bool FaultyVfs::Fails(const char* kind) {
  kinds_.push_back(kind);
  return calls_++ == fail_at_;
}

}  // namespace meridian
