"""words.py - the middle layer's wording: every figure, unit, ratio, CI and verdict as text, and
the one Markdown to HTML renderer (filled in by issue 44's split of compare.py)."""
import html
import re

from . import mbdata


# ---- Markdown to HTML: the one renderer (report --html, the dashboard's report page) ------
#
# The subset report.md uses: headings, lists, pipe tables, code spans and fences, **bold**, an
# image alone on its line, paragraphs.  One pass over each line: a token is a backslash escape,
# a code span or bold; everything else is text.  Every piece of text and every attribute is
# HTML-escaped as it is written out, last, so no input becomes markup.  The stricter of the two
# renderers it replaces wherever they differed: no link is made (its text shows as typed, as
# report.py had it), and an image only alone on its line (report.py) with a source that is
# relative and inside the page's tree (the dashboard's: no scheme, no / or //, no backslash or
# control character), so a page fetches nothing from outside; anything else is shown as text.

MD_TOKEN = re.compile(r"""
    \\(?P<esc>[!-/:-@\[-`{-~])
  | (?P<tick>`+)(?P<code>.+?)(?<!`)(?P=tick)(?!`)
  | \*\*(?P<strong>[^*]+)\*\*
""", re.X)
MD_IMAGE = re.compile(r"!\[(?P<alt>(?:\\.|[^\]\\])*)\]\((?P<src>[^()\s]+)\)\Z")  # a whole (stripped) line
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def html_text(s):
    """Text from the input as HTML text or an attribute: printable (mbdata.printable: no control
    or bidi-override character, which html.escape lets through), then escaped."""
    return html.escape(mbdata.printable("" if s is None else s), quote=True)


def safe_src(url):
    """url when an image may load it: relative and inside the page's tree, else None
    (javascript:, data:, http(s):, /x, //host, \\\\host, a control character)."""
    if "\\" in url or url.startswith("/") or _SCHEME.match(url) or any(
            ord(c) <= 0x20 or 0x7f <= ord(c) <= 0x9f for c in url):
        return None
    return url


def md_image(line):
    """The image a line of Markdown is, alone ((alt, src) as written), else None."""
    m = MD_IMAGE.match(line.strip())
    return (m.group("alt"), m.group("src")) if m else None


def _unescape_md(text):
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def md_inline(text):
    out, pos = [], 0
    for m in MD_TOKEN.finditer(text):
        out.append(html_text(text[pos:m.start()]))
        pos = m.end()
        if m.group("esc") is not None:
            out.append(html_text(m.group("esc")))
        elif m.group("tick") is not None:
            code = m.group("code")
            if len(code) > 2 and code[0] == code[-1] == " " and code.strip(" "):
                code = code[1:-1]
            out.append("<code>%s</code>" % html_text(code))
        else:
            out.append("<strong>%s</strong>" % md_inline(m.group("strong")))
    out.append(html_text(text[pos:]))
    return "".join(out)


def md_cells(line):
    """The cells of a pipe-table row; a backslash-escaped | stays in its cell."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    cells = re.findall(r"((?:\\.|[^|\\])*)(\||$)", body)
    return [c.strip() for c, _ in cells[:-1]]


def _md_block(lines, i, out):
    """Renders the table, list or fence that starts at lines[i] into out; the line after it."""
    if lines[i].startswith("```"):
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append("<pre>%s</pre>" % "\n".join(html_text(x) for x in lines[i + 1:j]))
        return j + 1
    if lines[i].startswith("|"):
        rows = []
        while i < len(lines) and lines[i].startswith("|"):
            rows.append(md_cells(lines[i]))
            i += 1
        body = [r for r in rows[1:] if not all(re.fullmatch(r":?-+:?", c) for c in r)]
        out.append("<table><tr>%s</tr>%s</table>" % (
            "".join("<th>%s</th>" % md_inline(c) for c in rows[0]),
            "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % md_inline(c) for c in r) for r in body)))
        return i
    items = []
    while i < len(lines) and re.match(r"\s*[-*]\s+", lines[i]):
        items.append(re.sub(r"^\s*[-*]\s+", "", lines[i]))
        i += 1
    out.append("<ul>%s</ul>" % "".join("<li>%s</li>" % md_inline(x) for x in items))
    return i


def markdown_html(md):
    """The HTML body of Markdown in the subset above (the page around it is the caller's)."""
    out, para, lines, i = [], [], md.splitlines(), 0

    def flush():
        if para:
            out.append("<p>%s</p>" % md_inline(" ".join(para)))
            para.clear()
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"(#{1,6})\s+(.*)", ln)
        img = md_image(ln)
        if ln.startswith(("```", "|")) or re.match(r"\s*[-*]\s+", ln):
            flush()
            i = _md_block(lines, i, out)
            continue
        if m:
            flush()
            out.append("<h%d>%s</h%d>" % (len(m.group(1)), md_inline(m.group(2)), len(m.group(1))))
        elif img and safe_src(img[1]):
            flush()
            out.append('<p><img src="%s" alt="%s"></p>' % (html_text(img[1]), html_text(_unescape_md(img[0]))))
        elif not ln.strip():
            flush()
        else:
            para.append(ln)
        i += 1
    flush()
    return "\n".join(out)
