"""HTML to readable Markdown or plain text, with the standard library's parser.

What ``web_fetch`` returns for an HTML page: the page's main content
(``<main>`` or ``<article>`` when the page has one, else ``<body>``),
without scripts, styles, navigation, forms or page chrome, as Markdown
(ATX headings, ``-`` / ``1.`` lists, fenced code, ``[text](url)`` links
made absolute, ``**bold**``, ``*em*``, `` `code` ``) or as plain text with
whitespace collapsed. It is linear in the page's size and never runs the
page's scripts.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

# Elements whose content is never readable text.
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object",
                   "head", "nav", "footer", "aside", "form", "button", "select", "dialog"})
# Elements that start and end a block of text.
_BLOCKS = frozenset({"p", "div", "section", "article", "main", "header", "figure", "figcaption",
                     "table", "thead", "tbody", "dl", "dt", "dd", "address", "details", "summary",
                     "ul", "ol", "li", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "body"})
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col", "embed",
                   "source", "track", "param"})
_MAIN = frozenset({"main", "article"})
_INLINE_MARKS = {"strong": "**", "b": "**", "em": "*", "i": "*"}
_SPACE = re.compile(r"[ \t\r\n\f\v]+")


class _Collector(HTMLParser):
    """Writes Markdown pieces for the whole body and, apart, for the first
    ``<main>``/``<article>``; both linear in the input."""

    def __init__(self, base_url: str, markup: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.markup = markup  # False: plain text, blocks separated by line breaks
        self.title: list[str] = []
        self.body: list[str] = []
        self.main: list[str] = []
        self.in_title = False
        self.skip_depth = 0      # inside elements of _SKIP (counted, they nest)
        self.main_depth = 0      # inside the first <main>/<article>
        self.main_done = False
        self.pre_depth = 0
        self.lists: list[list] = []  # per open list: [ordered, next number]
        self.links: list[tuple[int, int, str | None]] = []  # (body mark, main mark, href)
        self.stack: list[str] = []
        self.open_tags: dict[str, int] = {}  # tag -> how many are open (the stack, counted)

    # ------------------------------------------------------------ writing
    def emit(self, text: str) -> None:
        self.body.append(text)
        if self.main_depth:
            self.main.append(text)

    def block(self) -> None:
        self.emit("\n\n")

    def mark(self, markdown: str, text: str = "") -> None:
        """Markdown syntax, or what stands for it in plain text."""
        self.emit(markdown if self.markup else text)

    # ------------------------------------------------------------ parser callbacks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
            return
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag == "a" and self.open_tags.get("a"):
            self.handle_endtag("a")  # links do not nest: a new one ends the last
        if tag not in _VOID:
            self.stack.append(tag)
            self.open_tags[tag] = self.open_tags.get(tag, 0) + 1
        if tag in _MAIN and not self.main_done:
            self.main_depth += 1
        self.open_element(tag, dict(attrs))

    def open_element(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag == "br":
            self.emit("\n")
        elif tag == "hr":
            self.mark("\n\n---\n\n", "\n\n")
        elif tag in _HEADINGS:
            self.mark("\n\n" + "#" * _HEADINGS[tag] + " ", "\n\n")
        elif tag in ("ul", "ol"):
            if not self.lists:  # a nested list continues its item's lines
                self.block()
            self.lists.append([tag == "ol", 1])
        elif tag == "li":
            self.list_item()
        elif tag == "pre":
            self.pre_depth += 1
            self.mark("\n\n```\n", "\n\n")
        elif tag == "blockquote":
            self.mark("\n\n> ", "\n\n")
        elif tag == "a":
            self.links.append((len(self.body), len(self.main), attrs.get("href")))
        elif tag == "code" and not self.pre_depth:
            self.mark("`")
        elif tag in _INLINE_MARKS:
            self.mark(_INLINE_MARKS[tag])
        elif tag in ("td", "th"):
            self.mark("| " if self.body and self.body[-1].endswith("\n") else " | ", " ")
        elif tag in _BLOCKS:
            self.block()

    def list_item(self) -> None:
        depth = max(len(self.lists), 1)
        marker = "- "
        if self.lists and self.lists[-1][0]:
            marker = f"{self.lists[-1][1]}. "
            self.lists[-1][1] += 1
        self.mark("\n" + "  " * (depth - 1) + marker, "\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag in _SKIP:
            if tag not in _VOID and self.skip_depth:
                self.skip_depth -= 1
            return
        if self.skip_depth or not self.open_tags.get(tag):
            return
        # close what was left open inside it (HTML allows unclosed <p>, <li>)
        while self.stack:
            top = self.stack.pop()
            self.open_tags[top] -= 1
            self.close_element(top)
            if top == tag:
                break

    def close_element(self, tag: str) -> None:
        if tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            if not self.lists:
                self.block()
        elif tag == "tr":
            self.mark(" |\n", "\n")
        elif tag == "pre":
            self.pre_depth = max(self.pre_depth - 1, 0)
            self.mark("\n```\n\n", "\n\n")
        elif tag == "a":
            self.close_link()
        elif tag == "code" and not self.pre_depth:
            self.mark("`")
        elif tag in _INLINE_MARKS:
            self.mark(_INLINE_MARKS[tag])
        elif tag in _BLOCKS and tag != "li":
            self.block()
        if tag in _MAIN and self.main_depth:
            self.main_depth -= 1
            if not self.main_depth:
                self.main_done = True

    def close_link(self) -> None:
        if not self.links:
            return
        body_mark, main_mark, href = self.links.pop()
        if not self.markup or not href or href.startswith(("#", "javascript:")):
            return
        url = urljoin(self.base_url, href.strip())
        self._wrap(self.body, body_mark, url)
        if self.main_depth or main_mark < len(self.main):
            self._wrap(self.main, main_mark, url)

    @staticmethod
    def _wrap(pieces: list[str], mark: int, url: str) -> None:
        text = _SPACE.sub(" ", "".join(pieces[mark:])).strip()
        del pieces[mark:]
        if text:
            pieces.append(f"[{text}]({url})")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skip_depth:
            return
        self.emit(data if self.pre_depth else _SPACE.sub(" ", data))


def _tidy(markdown: str) -> str:
    """Collapse the blank lines and spaces the block markers left."""
    out: list[str] = []
    fenced = False
    blank = 0
    for line in markdown.split("\n"):
        if line.strip() == "```":
            fenced = not fenced
            line = "```"
        if not fenced:
            line = line.rstrip()
            indent = len(line) - len(line.lstrip(" "))
            line = line[:indent] + re.sub(r" {2,}", " ", line[indent:])
            if line.strip() in ("", ">"):
                blank += 1
                continue
            if indent and not line.lstrip().startswith("- ") and not line.lstrip()[:1].isdigit():
                line = line.lstrip()
        if blank and out:
            out.append("")
        blank = 0
        out.append(line)
    return "\n".join(out).strip("\n")


def readable(html: str, base_url: str, extract: str = "markdown") -> tuple[str | None, str]:
    """``(title, content)`` of an HTML page; ``extract`` is ``markdown`` or ``text``."""
    parser = _Collector(base_url, markup=extract != "text")
    parser.feed(html)
    parser.close()
    pieces = parser.main if "".join(parser.main).strip() else parser.body
    title = _SPACE.sub(" ", "".join(parser.title)).strip() or None
    if extract == "text":  # as the reference's textContent: whitespace collapsed
        return title, _SPACE.sub(" ", "".join(pieces)).strip()
    return title, _tidy("".join(pieces))
