"""cli.py - what the package's entry points share (`python3 -m mallocbench.MODULE`, the
scripts/MODULE.py shims, and the harness's compare and tune): modules never exit, they raise
Fail with the one line to print and the exit status; run() calls an entry's main(), prints a
Fail and returns its status, which the module's `if __name__ == "__main__"` block alone turns
into the process's exit. Every line it prints for the package starts `mallocbench: NAME: `
(NAME the entry's module: compare, detect, ...), as prefix() writes it: an error (a Fail's
line), a warning (warn(): `mallocbench: NAME: warning: ...`) and ^C's `interrupted`.

run() also takes the package's directory back out of PYTHONPATH where the harness put it
there for this interpreter only (MB_PYTHONPATH, harness/sample/tools.c), and PYTHONSAFEPATH
where the harness set it (MB_PYTHONSAFEPATH: no module from the user's current directory
shadows one of ours): the imports are done by then, and the programs a script starts (tune's
runs, their workloads) get the environment the user gave."""
import os
import sys


class Fail(Exception):
    """The end of a script with one line, what failed (run() puts the program's name in front:
    `mallocbench: NAME: `), and an exit status: 1 a failure, 2 bad usage or input, 3 a finding
    (detect's unresolved regression)."""

    def __init__(self, line, status=1):
        super().__init__(line)
        self.line = line
        self.status = status


ENTRY = None  # the NAME of the entry run() runs: the module of its main()


def prefix():
    """`mallocbench: NAME: `, the start of every line the package prints on stderr for the entry
    running (`mallocbench: ` outside one: a module used as a library)."""
    return f"mallocbench: {ENTRY}: " if ENTRY else "mallocbench: "


def warn(line):
    """A warning on stderr, printable (it may quote a file's name): `mallocbench: NAME: warning: LINE`."""
    from . import mbdata  # standard library only; imported late: cli comes first of all
    print(prefix() + "warning: " + mbdata.printable(str(line)), file=sys.stderr)


def _forget_package_path():
    if os.environ.pop("MB_PYTHONSAFEPATH", None):
        os.environ.pop("PYTHONSAFEPATH", None)  # the harness set it for this interpreter only
    added = os.environ.pop("MB_PYTHONPATH", None)
    if not added:
        return
    parts = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if parts and parts[0] == added:
        parts = parts[1:]
    if any(parts):
        os.environ["PYTHONPATH"] = os.pathsep.join(parts)
    else:
        os.environ.pop("PYTHONPATH", None)


def run(main, *args):
    """The exit status of the entry main(*args) (NAME its module's file name: the entry `compare`
    for mallocbench/compare.py, however it was started): the int main() returns (anything else,
    such as the result compare's main hands its callers, is 0), or the status of the Fail it
    raised, after printing `mallocbench: NAME: ` and the Fail's line on stderr; 130 after one line
    on ^C (docs/output.md, *Signals*: the entries that only read write every file whole, so
    nothing is half-written)."""
    global ENTRY
    _forget_package_path()
    outer, ENTRY = ENTRY, os.path.splitext(os.path.basename(main.__code__.co_filename))[0]
    try:
        rc = main(*args)
    except Fail as e:  # its line may quote other people's text (a sidecar's name): made printable here
        from . import mbdata  # standard library only; imported late: cli comes first of all
        print("\n".join(mbdata.printable(part) for part in (prefix() + str(e.line)).split("\n")), file=sys.stderr)
        return e.status
    except KeyboardInterrupt:  # ^C (SIGINT at its default): one line, no traceback, the shell's status
        print(prefix() + "interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (| head): no traceback, the shell's status
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    finally:
        ENTRY = outer
    return rc if isinstance(rc, int) and not isinstance(rc, bool) else 0
