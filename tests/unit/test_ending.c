/* test_ending.c - ending_describe (harness/verdict/ending.c): the status and message
 * of a sample's end.  The OOM killer cannot be provoked safely in a test, so
 * its classification (a SIGKILL while /proc/vmstat oom_kill rose) is tested
 * here, as a unit. */
#include "ending.h"
#include "../check.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

static char msg[512];

static ending_status_t describe(ending_facts_t f)
{
    if (!f.tail)
        f.tail = "";
    if (!f.fail)
        f.fail = "";
    return ending_describe(&f, msg, sizeof msg);
}

int main(void)
{
    /* exit 0: nothing to say */
    CHECK_INT(describe((ending_facts_t){.wstatus = 0, .oom_kills = 3}), ENDING_OK);
    CHECK_STR(msg, "");
    /* the OOM killer's SIGKILL */
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .oom_kills = 1}), ENDING_CRASHED);
    CHECK(strncmp(msg, "out of memory: killed by the OOM killer", 39) == 0);
    CHECK(strstr(msg, "rose by 1") != NULL);
    /* a SIGKILL without an OOM kill, or when the count is unknown */
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .oom_kills = 0, .tail = "bye"}), ENDING_CRASHED);
    CHECK_STR(msg, "killed by signal 9 (Killed): bye");
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .oom_kills = -1}), ENDING_CRASHED);
    CHECK(strstr(msg, "OOM") == NULL);
    /* another signal with the count risen is no OOM kill */
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGSEGV, .oom_kills = 2}), ENDING_CRASHED);
    CHECK(strncmp(msg, "killed by signal 11", 19) == 0);
    /* our own kills come first: time-out, interrupt, a stop */
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .timed_out = true, .timeout_s = 2, .oom_kills = 1}),
              ENDING_TIMEOUT);
    CHECK_STR(msg, "killed after 2 s (--timeout)");
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .interrupted = true}), ENDING_ERROR);
    CHECK_STR(msg, "interrupted");
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .stop_signal = SIGSTOP}), ENDING_ERROR);
    CHECK(strncmp(msg, "stopped (SIGSTOP)", 17) == 0);
    CHECK_INT(describe((ending_facts_t){.wstatus = SIGKILL, .stop_signal = SIGTSTP}), ENDING_ERROR);
    CHECK(strncmp(msg, "stopped (SIGTSTP)", 17) == 0);
    /* the child's own set-up failure: its errno, not "exit code 126" */
    CHECK_INT(describe((ending_facts_t){.wstatus = 126 << 8, .setup_errno = EMFILE,
                                        .setup_what = "set up its descriptors"}), ENDING_ERROR);
    CHECK_STR(msg, "the child could not set up its descriptors: Too many open files");
    /* a plain non-zero exit: its reason, its last line, or that there was none */
    CHECK_INT(describe((ending_facts_t){.wstatus = 3 << 8, .tail = "oops"}), ENDING_ERROR);
    CHECK_STR(msg, "exit code 3: oops");
    CHECK_INT(describe((ending_facts_t){.wstatus = 3 << 8, .tail = "oops", .fail = "bad"}), ENDING_ERROR);
    CHECK_STR(msg, "exit code 3: bad");
    CHECK_INT(describe((ending_facts_t){.wstatus = 1 << 8}), ENDING_ERROR);
    CHECK_STR(msg, "exit code 1: (no output)");
    CHECK_DONE();
}
