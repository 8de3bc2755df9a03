/* serve.h - the `serve` pseudo-workload: a user's server, run by the harness
 * under the allocator in place of the worker, and a client the harness runs
 * beside it without the allocator (`mallocbench serve ... --client 'CLIENT'
 * -- SERVER`, or `serve:cmd=...,client=...,ready=...` in a matrix).  The
 * harness starts, watches and stops both (harness/sample/server.h and the
 * launcher table of harness/sample/sample.c). */
#ifndef MB_SERVE_H
#define MB_SERVE_H
#include "workload.h"

extern const wl_t wl_serve;

#endif
