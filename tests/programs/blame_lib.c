/* blame_lib.c - a library that runs once, when it is loaded, as a framework's libraries run
 * their constructors at import: it writes 4 MiB of fresh pages (MADV_NOHUGEPAGE: 1024 faults,
 * a few ms of the fault path, in this library's own code) and gives them back.  The test loads
 * copies of it into tests/programs/blame_prog.c, each a library of its own. */
#include <stddef.h>
#include <sys/mman.h>

#define PAGE 4096ul
#define LEN (4ul << 20)

__attribute__((constructor)) static void blame_lib_start(void)
{
    volatile char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    madvise((void *)p, LEN, MADV_NOHUGEPAGE);
    for (size_t off = 0; off < LEN; off += PAGE)
        p[off] = 1;
    munmap((void *)p, LEN);
}
