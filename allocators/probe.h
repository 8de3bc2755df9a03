/* probe.h - the contract between the harness and libmbprobe.so.
 *
 * libmbprobe.so is preloaded behind the allocator under test
 * (LD_PRELOAD="<allocator.so>:<libmbprobe.so>").  When MB_PROBE_FD names a
 * writable descriptor it writes "key=value\n" lines to it just before main
 * (after every library constructor: tcmalloc's flags exist only then),
 * describing what really serves malloc in this process:
 *
 *   malloc_so=<path>     shared object that resolves `malloc` (dladdr)
 *   family=<name>        glibc | jemalloc | tcmalloc | mimalloc | unknown,
 *                        from the allocator API found in that same object
 *                        (mallctl, tc_version, mi_version; glibc: libc.so)
 *   version=<string>     the allocator's own version string
 *   je_prefixed=1        a je_-prefixed jemalloc is loaded (reads JE_MALLOC_CONF)
 *   env:<NAME>=<value>   the allocator environment as the child saw it
 *   tun:<key>=<value>    an effective setting read back from the allocator
 *   tun:<key>=!<reason>  a setting that could not be read back
 *   probe=done           last line of the start-up report
 *   stat:<name>=<value>  allocator statistics at exit, then probe=end
 *
 * MB_PROBE_READ lists what to read back, comma separated, each entry
 * "<key>" whose meaning depends on the family found:
 *   jemalloc  "opt.dirty_decay_ms/ssize" : mallctl name / type, type one of
 *             bool, unsigned, size, ssize, u64, string
 *   mimalloc  "decommit_delay/15"         : option name / mi_option_t index
 *   tcmalloc  "tcmalloc.max_total_thread_cache_bytes" : numeric property
 *   glibc     (nothing: the harness checks GLIBC_TUNABLES with the loader)
 * The probe never allocates through a path that could change the figures
 * beyond a few pages, and does nothing when MB_PROBE_FD is unset, so a
 * hand-run command under `perf stat` counts the same work. */
#ifndef MB_PROBE_H
#define MB_PROBE_H
#define MB_PROBE_FD_ENV "MB_PROBE_FD"
#define MB_PROBE_READ_ENV "MB_PROBE_READ"
#endif
