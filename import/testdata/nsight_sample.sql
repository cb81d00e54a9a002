-- A small Nsight Systems SQLite export, written by hand from NVIDIA's
-- SQLite Schema Reference (export schema 3.28.1): two processes of an
-- MPI job on one machine, pid 14944 (rank 0, threads 9596 "main" and 9600
-- "dataloader", GPUs 0 and 1) and pid 14950 (rank 1), with kernels, copies,
-- a memset, runtime calls and NVTX events. nsight_sqlite_reader_test.cc
-- builds a database from it and checks every span read back.
--
-- globalTid = (hardware id 1) << 56 | PID << 24 | TID; globalPid the same
-- with TID 0 (NVIDIA's example 72057844756653436 is PID 14944, TID 9596).
-- Session start 2025-11-24 16:00:00 UTC; event times are SessionNs.

CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES
  (1, 'cudaLaunchKernel_v7000'),
  (2, 'cudaMemcpyAsync_v3020'),
  (3, 'cudaStreamSynchronize_v3020'),
  (4, 'void gemm<float>(float*, int)'),
  (5, 'gemm'),
  (6, '_Z4gemmIfEvPfi'),
  (7, 'main'),
  (8, 'dataloader'),
  (9, 'forward'),
  (10, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),
  (11, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (12, 'python3'),
  (13, 'cuLaunchKernel'),
  (14, 'cudaMemsetAsync_v3020');

CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES
  ('EXPORT_SCHEMA_VERSION', '3.28.1'),
  ('EXPORT_PROGRAM_NAME', 'nsys');

CREATE TABLE TARGET_INFO_SESSION_START_TIME (
  utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES
  (1764000000000000000, '2025-11-24T16:00:00.000Z',
   '2025-11-24T17:00:00.000+01:00', 5000000000);

CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER,
                          globalTid INTEGER);
INSERT INTO ThreadNames VALUES
  (12, 5, 72057844756653436),   -- "python3", lower priority than "main"
  (7, 10, 72057844756653436),
  (8, 10, 72057844756653440),
  (7, 10, 72057844857322086);

CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER NOT NULL);
INSERT INTO MPI_RANKS VALUES
  (72057844756653436, 0),
  (72057844857322086, 1);

CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
  cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (2000000, 2150000, 0, 1, 7, 101, 72057844756643840, 4, 5, 6, 0, 0, 32,
   128, 1, 1, 256, 1, 1, 0, 4096, 0, 0, 1, 0, NULL, 0, NULL),
  (2100000, 2400000, 1, 2, 7, 102, 72057844756643840, 10, 11, NULL, 0, 0, 96,
   4, 1, 1, 512, 1, 1, 1024, 0, 0, 0, 2, 0, NULL, 0, NULL),
  (3000000, 3050000, 0, 1, 13, 7, 72057844857307136, 4, 5, 6, 0, 0, 32,
   128, 1, 1, 256, 1, 1, 0, 4096, 0, 0, 3, 0, NULL, 0, NULL);

CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER,
  dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER,
  dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
  (1500000, 1600000, 0, 1, 7, 100, 72057844756643840, 4194304, 1, NULL,
   1, 3, NULL, NULL, 0, 1, NULL, NULL, NULL, NULL),
  (2500000, 2520000, 0, 1, 14, 103, 72057844756643840, 65536, 10, NULL,
   3, 3, 0, 1, 1, 2, NULL, NULL, NULL, NULL);

CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,
  bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER,
  graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES
  (1400000, 1410000, 0, 1, 7, 99, 72057844756643840, 0, 1024, NULL, 3, NULL);

CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1390000, 1395000, 1, 72057844756653436, 99, 14, 0, NULL),
  (1490000, 1500500, 1, 72057844756653436, 100, 2, 0, NULL),
  (1990000, 1999000, 1, 72057844756653436, 101, 1, 0, NULL),
  (2090000, 2095000, 1, 72057844756653440, 102, 13, 0, NULL),
  (2600000, 2700000, 1, 72057844756653436, 104, 3, 0, NULL),
  (2990000, 2995000, 1, 72057844857322086, 7, 1, 0, NULL);

CREATE TABLE NVTX_EVENTS (
  start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT,
  globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL,
  uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
  jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS VALUES
  -- DomainCreate: domain 1 is "Megatron".
  (1000000, NULL, 75, NULL, NULL, NULL, 'Megatron', 72057844756653436, NULL,
   NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  -- A category (skipped).
  (1000000, NULL, 33, NULL, 1, NULL, 'io', 72057844756653436, NULL,
   NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1300000, 2800000, 59, NULL, NULL, NULL, 'step 1', 72057844756653436, NULL,
   NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  -- Started on "main", ended on "dataloader"; a registered string.
  (1350000, 2450000, 60, 1, NULL, NULL, NULL, 72057844756653436,
   72057844756653440, 9, 1, NULL, 42, NULL, NULL, NULL, NULL, NULL, NULL),
  (2550000, NULL, 34, NULL, NULL, NULL, 'checkpoint', 72057844756653436, NULL,
   NULL, 0, NULL, NULL, 0.5, NULL, NULL, NULL, NULL, NULL),
  -- Never ended (skipped).
  (2900000, NULL, 59, NULL, NULL, NULL, 'unfinished', 72057844756653436, NULL,
   NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (2980000, 3100000, 59, NULL, NULL, NULL, 'step 1', 72057844857322086, NULL,
   NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
