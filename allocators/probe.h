/* probe.h - the contract between the harness and libmbprobe.so.
 *
 * libmbprobe.so is preloaded behind the allocator under test
 * (LD_PRELOAD="<allocator.so>:<libmbprobe.so>").  When MB_PROBE_FD names a
 * writable descriptor it writes "key=value\n" lines to it just before main
 * (after every library constructor: tcmalloc's flags exist only then),
 * describing what really serves malloc in this process:
 *
 *   malloc_so=<path>     shared object that resolves `malloc` (dladdr)
 *   family=<name>        a family of allocators/families.c, or unknown: the
 *                        first whose `ident` symbol (mallctl, tc_version,
 *                        mi_version, gnu_get_libc_version, ...) is defined by
 *                        that same object
 *   version=<string>     the allocator's own version string (its probe_version)
 *   api:<sym>=<path>     every family's ident and report symbols found, and
 *                        where (e.g. api:je_malloc: a je_-prefixed jemalloc)
 *   env:<NAME>=<value>   the allocator environment as the child saw it
 *   tun:<key>=<value>    an effective setting read back from the allocator
 *   tun:<key>=!<reason>  a setting that could not be read back
 *   settings_digest=<16 hex> the sum of the FNV-1a hashes of the env: lines
 *                        above (less env:LD_PRELOAD; in any order), so each
 *                        image's allocator variables compare in a word
 *   probe=done           last line of the start-up report
 *   stat:<name>=<value>  allocator statistics at exit, then probe=end
 *   proc:<pid>=...       from each descendant process (MB_PROBE_PARENT below)
 *
 * MB_PROBE_READ lists what to read back, comma separated: each entry a
 * tunable's `readback` key, whose meaning is the family's (its
 * probe_read hook), e.g. jemalloc "opt.dirty_decay_ms/ssize" (mallctl name
 * / type), mimalloc "decommit_delay/15" (option name / mi_option_t index),
 * tcmalloc "tcmalloc.max_total_thread_cache_bytes" (numeric property).
 * The probe never allocates through a path that could change the figures
 * beyond a few pages, and does nothing when MB_PROBE_FD is unset, so a
 * hand-run command under `perf stat` counts the same work. */
#ifndef MB_PROBE_H
#define MB_PROBE_H
#define MB_PROBE_FD_ENV "MB_PROBE_FD"
#define MB_PROBE_READ_ENV "MB_PROBE_READ"
/* The harness's pid: a process whose parent it is not (one the command
 * started, which inherited the preload and the descriptor) writes only
 *   proc:<pid>=<family>|<malloc_so>|<settings_digest>|<exe>
 * in one write, and no statistics; each image of a process reports once
 * (the harness holds the count to the kernel's count of execs). */
#define MB_PROBE_PARENT_ENV "MB_PROBE_PARENT"
/* "0000000000" from the harness: the first image of the process it started
 * writes its pid there in place; a process with another pid is a
 * descendant, even one adopted by the harness (a subreaper) as an orphan. */
#define MB_PROBE_ROOT_ENV "MB_PROBE_ROOT"
/* "<harness fd>:<inode>": the probe pipe's read end in the harness and its
 * inode.  A descendant whose MB_PROBE_FD is not that pipe (a parent that
 * closed its descriptors before exec, as Python's subprocess does) opens
 * /proc/<MB_PROBE_PARENT>/fd/<harness fd> for writing instead, once fstat
 * gives the same inode. */
#define MB_PROBE_PIPE_ENV "MB_PROBE_PIPE"
/* Every line the probe writes starts with "<token> ": the secret of the
 * sample (MB_PROBE_TOKEN, moved by the first image of the process started
 * into a memfd, its value overwritten with "@<fd>" before main, so that a
 * later image after exec reads it back), or in a descendant MB_PROBE_DTOKEN,
 * which descendants pass on.  A line without it is a forgery (docs/proof.md). */
#define MB_PROBE_TOKEN_ENV "MB_PROBE_TOKEN"
#define MB_PROBE_DTOKEN_ENV "MB_PROBE_DTOKEN"
#endif
