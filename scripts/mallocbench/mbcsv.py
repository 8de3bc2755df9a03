"""mbcsv.py - the one reader of mallocbench run CSVs for every script; the columns, their
types and the schema version come from the harness (schema(): `mallocbench schema --json`).

read() is strict: UTF-8, a schema_version column equal to SCHEMA (or one of OLDER) in
every row, every schema column present (an OLDER file's lacking ones filled in), as many fields in a row as in the header, no field
over FIELD_MAX characters, no control character outside `message`, every number
column empty or a finite number of magnitude 0 or NUM_MIN..NUM_MAX.  Any
other input raises CsvError, whose text names the file and the row ('run.csv:
row 17: 12 fields, the header has 72'); scripts print it in one line and exit
EXIT_BAD_INPUT.  Rows are numbered from 1, the header not counted.  An empty
field means "not measured": num() gives None, never 0.  The harness puts a ' before
a cell of a "guarded" column that a spreadsheet would read as a formula; parse()
takes it off again (unguard), so rows hold the values as given.  Also the one line
the scripts print for a missing Debian package (missing_dependency), and the one way a
script reads an input file or a sidecar (read_bytes, read_json): a FIFO or device is never
opened for reading (a reader would wait for a writer forever), and JSON nested too deeply
is bad JSON, not a traceback.  A block measured again whole (the harness's `attempt`: a
sample of it was disturbed from outside) is read here, once for every script: only each
block's last attempt is kept (last_attempts), and remeasured() counts such blocks.
"""
import csv
import io
import json
import math
import os
import re
import sys

from . import mbout

EXIT_BAD_INPUT = 2
FIELD_MAX = 128 * 1024  # the csv module's own default limit; the harness writes at most 2 KiB

NUM, TEXT = "number", "text"
# schema versions read besides the harness's own: {version: {column it lacks: the value its rows
# get}}.  7 had no `attempt` (no block was measured again: every row is its block's attempt 0);
# 8 had none of the huge-page columns (not measured: empty, the condition the kernel's own).
_HUGE_COLUMNS = {"huge": "system", "huge_proof": "", "anon_huge_peak_kib": "", "huge_share_peak": "",
                 "thp_faults": "", "thp_fallbacks": "", "thp_pmd_splits": "", "thp_page_splits": "",
                 "others_cpu_s": ""}
OLDER = {"7": {"attempt": "0", **_HUGE_COLUMNS}, "8": dict(_HUGE_COLUMNS)}
# the one column that may hold several lines (a child's stderr); scripts show it through
# mbdata.printable.  Any other field with a control character (C0, DEL, C1) is refused.
FREE_TEXT = ("message",)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# a tab is text in a command or regex (WLP_TEXT parameters: the harness accepts it there)
_CONTROL_BUT_TAB = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
TAB_TEXT = ("workload_params",)
HERE = os.path.dirname(os.path.abspath(__file__))


def schema_places():
    """Where the schema (`mallocbench schema --json`) is looked for, in order: $MB_SCHEMA (a
    file; where set, the only place), schema.json beside this module (installed: meson puts it there), the default build
    tree's build/schema.json (scripts run from the source tree), and last the output of
    `$MB_HARNESS schema --json` (a harness binary)."""
    if os.environ.get("MB_SCHEMA"):
        return [os.environ["MB_SCHEMA"]]  # named: that one or none
    return [os.path.join(HERE, "schema.json"), os.path.join(HERE, "..", "..", "build", "schema.json")]


def _load_schema():
    import json
    import subprocess
    looked = []
    for p in schema_places():
        looked.append(p)
        try:
            with open(p) as f:
                return json.load(f), p
        except OSError:
            continue
        except ValueError as e:
            raise CsvError(f"schema '{p}' is not JSON: {e}") from None
    harness = os.environ.get("MB_HARNESS")
    if harness and not os.environ.get("MB_SCHEMA"):
        looked.append(f"{harness} schema --json")
        try:
            out = subprocess.run([harness, "schema", "--json"], capture_output=True, text=True, check=True).stdout
            return json.loads(out), harness
        except (OSError, subprocess.CalledProcessError, ValueError) as e:
            raise CsvError(f"cannot get the schema from '{harness} schema --json': {e}") from None
    raise CsvError("no CSV schema: build the harness (meson compile -C build writes build/schema.json) or set "
                   "MB_SCHEMA to the output of `mallocbench schema --json` (looked in " + ", ".join(looked) + ")")


_SCHEMA = None
_GUARDED = frozenset()
FORMULA_START = "=+-@\t\r"


def unguard(text):
    """A guarded column's cell as the harness was given it: one leading ' dropped when the
    quotes it starts with are followed by a formula character (harness/output/csv.h
    csv_column_guarded, common/text.h text_needs_guard; docs/output.md)."""
    if text.startswith("'") and text.lstrip("'")[:1] in tuple(FORMULA_START):
        return text[1:]
    return text


_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # common/text.c text_is_number


def guard(text):
    """The inverse of unguard, as the harness writes a guarded column (common/text.c
    text_needs_guard): a leading ' before text a spreadsheet would read as a formula
    (=, +, -, @, tab, CR, not a plain number), and before text that already starts with
    quotes followed by one."""
    text = "" if text is None else str(text)
    if text.startswith("'"):
        return "'" + text if text.lstrip("'")[:1] in tuple(FORMULA_START) else text
    if text[:1] in tuple(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def schema():
    """(schema_version, [(column, NUM or TEXT)] in the header's order), as the harness's
    CSV_COLUMNS table gives them (harness/output/csv.h, through `mallocbench schema --json`);
    CsvError when no schema can be found or it is malformed."""
    global _SCHEMA, _GUARDED
    if _SCHEMA is None:
        data, where_from = _load_schema()
        try:
            cols = [(c["name"], NUM if c["type"] == "number" else TEXT) for c in data["columns"]]
            _GUARDED = frozenset(c["name"] for c in data["columns"] if c.get("guarded"))
            _SCHEMA = (str(data["schema_version"]), cols)
        except (KeyError, TypeError) as e:
            raise CsvError(f"schema '{where_from}' lacks {e}") from None
    return _SCHEMA


def __getattr__(name):
    """SCHEMA (the version), COLUMNS ([(name, kind)]) and NUMBERS, from schema(); CsvError
    when no schema can be found."""
    if name not in ("SCHEMA", "COLUMNS", "NUMBERS"):
        raise AttributeError(name)
    version, cols = schema()
    return {"SCHEMA": version, "COLUMNS": cols, "NUMBERS": [n for n, k in cols if k == NUM]}[name]


class CsvError(Exception):
    """Input that is not a mallocbench CSV of this schema; the text says where and why."""


class Row(dict):
    """One data row by column name, knowing where it came from (for messages)."""
    __slots__ = ("path", "row")

    def __init__(self, fields, path, row):
        super().__init__(fields)
        self.path, self.row = path, row


def where(path, row):
    return f"{path}: header" if row == 0 else f"{path}: row {row}"


# A measurement's magnitude: 0 or within [1e-100, 1e100].  Beyond it a ratio, product or sum of
# two values could leave the range of a double and print as inf or nan; no counter, time or
# rate comes near it, so a value outside is refused like one that is not a number.
NUM_MAX, NUM_MIN = 1e100, 1e-100


def parse_number(text):
    """A CSV cell as a finite float within the NUM_MIN..NUM_MAX magnitude (or 0), None when
    empty; ValueError for anything else."""
    if text == "":
        return None
    v = float(text)  # ValueError for junk, '1.5x', '1,5'
    if not math.isfinite(v) or not parse_number_ok(v):
        raise ValueError(text)
    return v


def _out_of_range(text):
    """Is text a finite number whose magnitude is outside the range?"""
    try:
        v = float(text)
    except ValueError:
        return False
    return math.isfinite(v) and not parse_number_ok(v)


def parse_number_ok(v):
    return v == 0 or NUM_MIN <= abs(v) <= NUM_MAX


def num(r, col):
    """Column col of row r as a finite float; None when empty or absent (not measured).
    CsvError, naming file and row where r is a Row, for a value that is not one."""
    v = r.get(col)
    if v is None:
        return None
    try:
        return parse_number(v)
    except ValueError:
        at = where(r.path, r.row) + ": " if isinstance(r, Row) else ""
        raise CsvError(f"{at}{col} {_quote(v)} is not a finite number of magnitude 0 or "
                       f"{NUM_MIN:g}..{NUM_MAX:g}") from None


def _quote(text, limit=40):
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _record_of(text):
    """Index of the record a prefix of the file ends in (0 = the header)."""
    n = sum(1 for _ in csv.reader(io.StringIO(text, newline="")))
    return n if text == "" or text.endswith(("\n", "\r")) else n - 1


def decode(data, path):
    """The file's bytes as text; CsvError naming the row of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        prefix = data[:e.start].decode("utf-8-sig")
        csv.field_size_limit(max(csv.field_size_limit(), len(prefix) + 1))
        raise CsvError(f"{where(path, _record_of(prefix))}: not UTF-8 (byte 0x{data[e.start]:02x} at "
                       f"offset {e.start})") from None


def parse(text, path):
    """(header, [Row]) of a CSV's text, checked as the module docstring says."""
    SCHEMA, COLUMNS = schema()
    NUMBERS = [n for n, k in COLUMNS if k == NUM]
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))  # measured below, per field
    reader = csv.reader(io.StringIO(text, newline=""))
    record = 0
    try:
        header = next(reader, None)
        if not header or "schema_version" not in header:
            raise CsvError(f"{path}: not a mallocbench CSV (no schema_version column)")
        rows = []
        for fields in reader:
            record += 1
            if not fields:
                continue  # a blank line, as csv.DictReader skips it
            at = where(path, record)
            if len(fields) != len(header):
                raise CsvError(f"{at}: {len(fields)} fields, the header has {len(header)}")
            r = Row(((c, unguard(v) if c in _GUARDED else v) for c, v in zip(header, fields)), path, record)
            if r["schema_version"] != SCHEMA and r["schema_version"] not in OLDER:
                raise CsvError(f"{at}: schema_version {r['schema_version'] or '(empty)'}; these scripts read "
                               f"{SCHEMA}")
            for col, v in zip(header, fields):
                if len(v) > FIELD_MAX:
                    raise CsvError(f"{at}: {col} is {len(v)} characters long, more than {FIELD_MAX}")
                if col not in FREE_TEXT:
                    bad = (_CONTROL_BUT_TAB if col in TAB_TEXT else _CONTROL).search(v)
                    if bad:
                        raise CsvError(f"{at}: {col} holds control character 0x{ord(bad.group(0)):02x} at "
                                       f"offset {bad.start()}; a label, unit or parameter is one line of text")
            for col in NUMBERS:
                try:
                    num(r, col)
                except CsvError:
                    if not _out_of_range(r[col]):
                        raise
                    # finite but outside the range: this row's error, never the file's (the harness
                    # refuses such a figure as it measures; an older file may hold one)
                    r["message"] = (f"{col} {r[col]} is outside the magnitude 0 or {NUM_MIN:g}..{NUM_MAX:g} "
                                    f"these scripts read")
                    r["status"], r[col] = "error", ""
            for col, value in OLDER.get(r["schema_version"], {}).items():
                r.setdefault(col, value)
            rows.append(r)
    except csv.Error as e:
        raise CsvError(f"{where(path, record + 1)}: {e}") from None
    # a column an older schema lacks is no loss where every row is of one that lacks it
    versions = {r["schema_version"] for r in rows} or set(OLDER)
    # rows name their versions; a header alone may be any known one: a column some older version lacks is not missing
    lacks = all if rows else any
    missing = [c for c, _ in COLUMNS if c not in header and not lacks(c in OLDER.get(v, {}) for v in versions)]
    if missing:
        raise CsvError(f"{path}: header: no column {missing[0]} (schema_version {SCHEMA} has it)")
    return header, last_attempts(rows)


def _block(r):
    """(matrix_id, block) of a row: its block of the plan; None where either is empty."""
    m, b = r.get("matrix_id"), r.get("block")
    return (m, b) if m and b else None


def _attempt(r):
    return num(r, "attempt") or 0


def last_attempts(rows):
    """The rows of each block's last attempt, in their order: a block measured again whole
    (attempt 1, 2: a sample of it was disturbed from outside) is read as its last
    measurement, and the rows of its earlier attempts, kept in the file (nothing measured is
    lost), are left out here, the one place every reader passes.  Only a whole attempt counts:
    the last one holding every position the block's first attempt held; a later attempt cut
    short (a run interrupted while it measured the block again, never resumed) is ignored, its
    rows left out and the block not counted as measured again (remeasured)."""
    held = {}  # block -> {attempt: the positions its rows hold}
    for r in rows:
        k = _block(r)
        if k is not None:
            held.setdefault(k, {}).setdefault(_attempt(r), set()).add(r.get("position", ""))
    if all(len(att) == 1 for att in held.values()):
        return rows
    last = {}
    for k, att in held.items():
        first = att[min(att)]
        last[k] = max(a for a, pos in att.items() if pos >= first)
    return [r for r in rows if _block(r) is None or _attempt(r) == last.get(_block(r), 0)]


def remeasured(rows):
    """How many blocks (of each plan, counted together) these rows measured again whole: the
    blocks whose last attempt (last_attempts) is not the first."""
    return len({_block(r) for r in rows if _attempt(r) > 0 and _block(r) is not None})


def read_bytes(path):
    """The bytes of the regular file at path (mbout.read_regular: opened without blocking and
    checked with fstat before a byte is read): a FIFO, device or socket, given or planted as a
    sidecar, raises CsvError naming it, where reading would wait for a writer forever.
    OSError where it cannot be opened or read."""
    try:
        return mbout.read_regular(path)
    except mbout.NotRegular as e:
        raise CsvError(str(e)) from None


def read_json(path):
    """The JSON value of the regular file at path (read_bytes: CsvError for a FIFO or a
    device); OSError where unreadable, ValueError where not JSON, nested too deeply included
    (json raises RecursionError past a thousand levels: a traceback otherwise)."""
    data = read_bytes(path)
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def read(path):
    """(header, [Row]) of a run CSV, every row whatever its status; CsvError for anything else."""
    try:
        data = read_bytes(path)
    except OSError as e:
        raise CsvError(f"cannot read '{path}': {e.strerror}") from None
    return parse(decode(data, path), path)


DEBIAN_PACKAGE = {"matplotlib": "python3-matplotlib", "numpy": "python3-numpy", "scipy": "python3-scipy"}
DEBIAN_PYTHON = "/usr/bin/python3"


def missing_dependency(err):
    """An ImportError of matplotlib or numpy as one line: the Debian package to install, and
    Debian's interpreter where this one is another (pyenv's does not see Debian's packages)."""
    name = (err.name or "matplotlib").split(".")[0]
    text = f"{name} is missing: apt-get install {DEBIAN_PACKAGE.get(name, 'python3-' + name)}"
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        text += f" and run {DEBIAN_PYTHON} (this is {sys.executable})"
    return text


def sidecar(path, suffix):
    """<name>.meta.json / <name>.rss.csv beside <name>.csv."""
    return (path[:-4] if path.endswith(".csv") else path) + suffix


def read_meta(path):
    """A run's sidecar as a dict: the .meta.json beside a run CSV (or that file itself, a path
    ending in .json); None where there is none.  The one reader of a sidecar, for every script,
    with one policy: a sidecar that is there but is no JSON object (a FIFO or device, unreadable,
    not JSON, nested too deeply, a list) is refused, CsvError in one line naming it, never taken
    for no sidecar (that would silently change the run's baseline and its machine)."""
    p = path if path.endswith(".json") else sidecar(path, ".meta.json")
    try:
        meta = read_json(p)  # CsvError for a FIFO or a device
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CsvError(f"cannot read '{p}': {e.strerror}") from None
    except ValueError as e:
        raise CsvError(f"'{p}': not JSON: {e}") from None
    if not isinstance(meta, dict):
        raise CsvError(f"'{p}': not a JSON object")
    return meta


def sidecar_configs(paths):
    """The entries of the `configs` lists of the CSVs' .meta.json sidecars, in order (dicts
    with at least a `config`); none from a CSV without a sidecar (read_meta)."""
    out = []
    for path in paths:
        configs = (read_meta(path) or {}).get("configs")
        out += [c for c in configs or [] if isinstance(c, dict) and isinstance(c.get("config"), str) and c["config"]]
    return out


def config_order(paths, rows):
    """The configurations in the order the run was asked for: the `configs` list of
    each CSV's .meta.json sidecar (a merged file keeps its first shard's), then any
    other in order of first appearance.  No family order is written into a script.  The
    first is the default baseline of compare, summary and report, as hyperfine's reference
    is its first command."""
    order = []
    for c in sidecar_configs(paths):
        if c["config"] not in order:
            order.append(c["config"])
    for r in rows:
        if r["config"] not in order:
            order.append(r["config"])
    return order


def family_order(paths, rows):
    """Allocator families in the order of config_order (the first configuration of each)."""
    fam = {}
    for r in rows:
        fam.setdefault(r["config"], r["allocator"])
    out = []
    for c in config_order(paths, rows):
        f = fam.get(c)
        if f and f not in out:
            out.append(f)
    return out


# Colour-blind-safe colours (Okabe-Ito, then grey) for a family whose sidecar gives none (an
# old sidecar, no sidecar): handed out in family order, skipping those the sidecars use, so
# the same run always gets the same colours.
FALLBACK_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#777777"]


def valid_colour(text):
    """True for '#RRGGBB' (what the harness writes); anything else is taken as no colour."""
    return (isinstance(text, str) and len(text) == 7 and text[0] == "#"
            and all(ch in "0123456789abcdefABCDEF" for ch in text[1:]))


def assign_colours(families, known):
    """{family: '#RRGGBB'} for every family of `families` (in that order): its colour in
    `known` ({family: colour}, from sidecars) when valid, else the next FALLBACK_COLOURS entry
    that no family of `known` uses (cycling when there are more families than colours)."""
    got = {f: known[f].upper() for f in families if valid_colour(known.get(f))}
    free = [c for c in FALLBACK_COLOURS if c not in got.values()] or FALLBACK_COLOURS
    out, i = {}, 0
    for f in families:
        if f in out:
            continue
        if f in got:
            out[f] = got[f]
        else:
            out[f], i = free[i % len(free)], i + 1
    return out


def family_colours(paths, rows, families=None):
    """{family: '#RRGGBB'}, one fixed colour per allocator family: the `colour` the harness
    wrote for it in the sidecars' `configs` (the first sidecar naming one wins), else a
    fallback (assign_colours).  families: the families to colour, in the order fallbacks are
    given (default family_order(paths, rows)).  No family is named in a script."""
    known = {}
    for c in sidecar_configs(paths):
        if isinstance(c.get("allocator"), str) and valid_colour(c.get("colour")):
            known.setdefault(c["allocator"], c["colour"])
    return assign_colours(family_order(paths, rows) if families is None else families, known)


def better(r):
    """'higher' or 'lower': which way the row's primary figure (throughput) is better."""
    return "lower" if r.get("metric_better") == "lower" else "higher"
