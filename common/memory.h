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
