/* record.h - `mallocbench record` (a command's allocation calls into a .mbt
 * trace, through libmbrecord.so) and `mallocbench trace` (what a trace
 * holds).  The format: common/trace.h, docs/trace.md. */
#ifndef MB_RECORD_H
#define MB_RECORD_H

/* mallocbench record [-o FILE] [-a ALLOCATOR[=LIB]] [--force] -- CMD ARGS...:
 * the command's exit code (128+signal), 2 on bad usage or input. */
int cmd_record(int argc, char **argv);
/* mallocbench trace FILE: 0, or 2 (one line with the byte offset) on a bad trace. */
int cmd_trace(int argc, char **argv);

#endif
