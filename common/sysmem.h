/* sysmem.h - where common/'s containers (the trace reader, the hash map) and
 * the replay's plan take their memory: libc's malloc by default, or, once a
 * process calls sysmem_use_kernel(), the kernel directly (mmap, mremap,
 * munmap), one mapping per block.
 *
 * The worker calls it first thing: it is the process being measured, under
 * the allocator being measured, and its own bookkeeping must not pass
 * through that allocator.  A replay reads a trace of tens of MiB, grows and
 * frees arrays of that size and builds a map of every object before its
 * region starts; through malloc, that left tcmalloc, mimalloc and the
 * allocators told to keep memory holding tens of MiB of touched free pages,
 * which the region then reused with no faults (a replay of train.py under
 * tcmalloc faulted twice where the program faults 13k times), and it moved
 * glibc's dynamic mmap threshold before the region began.
 *
 * The switch is one-way and must come before any block is taken: a block is
 * freed by the source it came from.  Functions behave as their libc names;
 * sysmem_free(NULL) does nothing. */
#ifndef MB_SYSMEM_H
#define MB_SYSMEM_H
#include <stddef.h>

/* From now on, blocks come from the kernel. */
void sysmem_use_kernel(void);
void *sysmem_malloc(size_t n);
void *sysmem_calloc(size_t nmemb, size_t size);
void *sysmem_realloc(void *p, size_t n);
void sysmem_free(void *p);
/* A block of n bytes aligned to 64 (a cache line): aligned_alloc from libc,
 * any kernel block. */
void *sysmem_aligned64(size_t n);
/* Writes every page of [p, p + n) once (keeping its bytes), so that the
 * block's first writes later, inside a measured region, do not fault. */
void sysmem_prefault(void *p, size_t n);

#endif
