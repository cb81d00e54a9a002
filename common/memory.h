// Returning freed memory to the system.
//
// glibc keeps what a program frees in its heaps for later allocations, one
// heap ("arena") per group of threads. A server whose requests run on many
// threads, each freeing a large analysis in its own arena, so holds the
// peak of every thread at once: the collector's one-step critical path of
// a 100M-span job peaked at 121 MB alone and at 208 MB by the third
// request (docs/PERFORMANCE.md). Calling ReturnFreedMemory after freeing
// something large keeps each request's peak its own.
#ifndef MERIDIAN_COMMON_MEMORY_H_
#define MERIDIAN_COMMON_MEMORY_H_

namespace meridian {

// Gives the whole free pages of every heap back to the system
// (malloc_trim(0)). Costs a walk of the free lists: call it after freeing
// megabytes, not per allocation.
void ReturnFreedMemory();

// Heap limits for a daemon that handles the same sizes over and over (a
// collector's batches, chunks and clock solves): blocks up to
// kReuseMmapThreshold come from the heaps rather than from mmap, and a heap
// keeps up to kReuseTrimThreshold free at its top rather than giving it
// back at every free. With glibc's defaults the collector faulted the same
// pages in again batch after batch: these cut its page faults by a fifth
// and its CPU by 5-10 % in `./bench/run.sh probe`, for about 25 % more peak
// memory (docs/PERFORMANCE.md). ReturnFreedMemory still gives everything
// free back after a large analysis. Call once, at start, before other
// threads run; false if glibc refused a value (its defaults then stay).
inline constexpr int kReuseMmapThreshold = 32 << 20;
inline constexpr int kReuseTrimThreshold = 16 << 20;
bool ReuseFreedMemory();

// Calls ReturnFreedMemory when destroyed. As a struct's first member it is
// destroyed after all the others, so the struct's whole memory is returned.
struct ReturnsFreedMemory {
  ReturnsFreedMemory() = default;
  ReturnsFreedMemory(const ReturnsFreedMemory&) = delete;
  ReturnsFreedMemory& operator=(const ReturnsFreedMemory&) = delete;
  ~ReturnsFreedMemory() { ReturnFreedMemory(); }
};

}  // namespace meridian

#endif  // MERIDIAN_COMMON_MEMORY_H_
