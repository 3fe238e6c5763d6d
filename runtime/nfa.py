"""Regular expressions from workflows, in linear time.

A workflow may carry any pattern (CEL ``matches``, an aevatar ``guard``
with ``check: regex``), and Python's ``re`` backtracks: ``^(a+)+$`` on a
few dozen characters never ends. CEL's patterns are RE2's, and RE2 matches
in time linear in the text. So a pattern runs on RE2 (the ``google-re2``
package, import name ``re2``) where it is installed, and otherwise on the
small automaton below: a Thompson NFA simulated over the text once (no
backtracking), so its work is at most (length of the text + 1) x (size of
the compiled pattern), and the pattern's size is capped.

The automaton implements RE2's syntax except what it cannot do in linear
time or without tables (these are errors, never a fall back to ``re``):
backreferences and lookaround (RE2 refuses them too), Unicode classes
(``\\pL``), ``\\Q...\\E`` and ``\\C``. ``\\d``, ``\\w``, ``\\s`` and ``\\b``
are ASCII as in RE2. Only whether the pattern matches is computed, never
groups.

Standard library only, MicroPython-compatible (the VM runs it standalone):
``re2`` is tried and missing is fine.
"""

try:
    import re2 as _re2
except ImportError:  # MicroPython, or a CPython without the wheel
    _re2 = None

MAX_PROGRAM = 20000      # instructions of one compiled pattern (RE2 caps its programs too)
MAX_REPEAT = 1000        # the largest {n,m} count (RE2's limit)


class RegexError(Exception):
    """The pattern is invalid, or outside what can run in linear time here."""


def has_re2():
    return _re2 is not None


_RE2_OPTIONS = None


def _re2_compile(pattern):
    global _RE2_OPTIONS
    if _RE2_OPTIONS is None:
        _RE2_OPTIONS = _re2.Options()
        _RE2_OPTIONS.log_errors = False  # a bad pattern is our error to report, not a log line
    try:
        return _re2.compile(pattern, _RE2_OPTIONS)
    except _re2.error as e:  # its text is bytes on some versions
        msg = e.args[0] if e.args else str(e)
        if isinstance(msg, bytes):
            msg = msg.decode("utf-8", "replace")
        raise RegexError(str(msg))


class _Re2Pattern:
    def __init__(self, rx):
        self.rx = rx

    def search(self, text):
        return self.rx.search(text) is not None


def compile(pattern, use_re2=True, dotnet=False):
    """A compiled pattern whose ``search(text)`` says whether it matches
    somewhere in ``text``. ``use_re2=False`` forces the built-in automaton
    (tests); ``dotnet=True`` also accepts ``(?!)`` (a pattern that never
    matches, which .NET writes that way) when RE2 refuses it."""
    if use_re2 and _re2 is not None:
        try:
            return _Re2Pattern(_re2_compile(pattern))
        except RegexError:
            if not (dotnet and "(?!)" in pattern):
                raise
    return _Linear(pattern, dotnet)


_CACHE = {}


def search(pattern, text, dotnet=False):
    """Whether ``pattern`` matches somewhere in ``text`` (compiled patterns are cached)."""
    key = (pattern, dotnet)
    rx = _CACHE.get(key)
    if rx is None:
        rx = compile(pattern, True, dotnet)
        if len(_CACHE) > 256:
            _CACHE.clear()
        _CACHE[key] = rx
    return rx.search(text)


# ------------------------------------------------------------------ the automaton
# AST nodes are tuples: ("char", test), ("cat", [..]), ("alt", [..]),
# ("rep", node, min, max or -1), ("assert", kind), ("empty",), ("fail",).
# A test is a function of one character.

_CHAR, _SPLIT, _JMP, _ASSERT, _MATCH, _FAIL = 0, 1, 2, 3, 4, 5

_DIGIT = ((48, 57),)
_WORD = ((48, 57), (65, 90), (95, 95), (97, 122))
_SPACE = ((9, 10), (12, 13), (32, 32))
_POSIX = {
    "alnum": ((48, 57), (65, 90), (97, 122)), "alpha": ((65, 90), (97, 122)), "ascii": ((0, 127),),
    "blank": ((9, 9), (32, 32)), "cntrl": ((0, 31), (127, 127)), "digit": _DIGIT,
    "graph": ((33, 126),), "lower": ((97, 122),), "print": ((32, 126),),
    "punct": ((33, 47), (58, 64), (91, 96), (123, 126)), "space": ((9, 13), (32, 32)),
    "upper": ((65, 90),), "word": _WORD, "xdigit": ((48, 57), (65, 70), (97, 102)),
}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


def _in(ranges, o):
    for lo, hi in ranges:
        if lo <= o <= hi:
            return True
    return False


def _is_word(c):
    return c is not None and _in(_WORD, ord(c))


class _Parser:
    def __init__(self, pattern, dotnet):
        self.p = pattern
        self.i = 0
        self.dotnet = dotnet

    def error(self, what):
        raise RegexError(what + " at offset " + str(self.i) + " of the pattern")

    def peek(self):
        return self.p[self.i] if self.i < len(self.p) else None

    def take(self):
        c = self.p[self.i]
        self.i += 1
        return c

    def parse(self, flags):
        node = self.alternation(flags)
        if self.i < len(self.p):
            self.error("unmatched )")
        return node

    def alternation(self, flags):
        branches = [self.concat(flags)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat(flags))
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def concat(self, flags):
        items = []
        while True:
            c = self.peek()
            if c is None or c == "|" or c == ")":
                break
            if c == "(" and self.p.startswith("(?", self.i) and self._flag_group(flags):
                continue  # (?i) changes the flags of what follows
            atom = self.atom(flags)
            items.append(self.quantified(atom))
        if not items:
            return ("empty",)
        return items[0] if len(items) == 1 else ("cat", items)

    def _flag_group(self, flags):
        """``(?flags)``: applied to the rest of the group; True when it was one."""
        j = self.i + 2
        while j < len(self.p) and self.p[j] in "imsU-":
            j += 1
        if j >= len(self.p) or self.p[j] != ")" or j == self.i + 2:
            return False
        self._set_flags(flags, self.p[self.i + 2:j])
        self.i = j + 1
        return True

    def _set_flags(self, flags, text):
        on = True
        for ch in text:
            if ch == "-":
                on = False
            elif ch in "ims":
                flags[ch] = on
            elif ch != "U":
                self.error("unknown flag")

    def quantified(self, atom):
        while True:
            c = self.peek()
            if c == "*":
                lo, hi = 0, -1
            elif c == "+":
                lo, hi = 1, -1
            elif c == "?":
                lo, hi = 0, 1
            elif c == "{":
                counted = self.counts()
                if counted is None:
                    return atom
                lo, hi = counted
            else:
                return atom
            if c != "{":
                self.i += 1
            if self.peek() == "?":
                self.i += 1  # lazy: the same language, and only "matches or not" is asked
            elif self.peek() in ("*", "+", "?") and c != "{":
                self.error("bad repetition operator")
            atom = ("rep", atom, lo, hi)

    def counts(self):
        """``{n}``, ``{n,}``, ``{n,m}`` (else ``{`` is a literal, as in RE2)."""
        j = self.i + 1
        k = j
        while k < len(self.p) and self.p[k].isdigit():
            k += 1
        if k == j:
            return None
        lo = int(self.p[j:k])
        hi = lo
        if k < len(self.p) and self.p[k] == ",":
            k += 1
            m = k
            while k < len(self.p) and self.p[k].isdigit():
                k += 1
            hi = int(self.p[m:k]) if k > m else -1
        if k >= len(self.p) or self.p[k] != "}":
            return None
        if lo > MAX_REPEAT or hi > MAX_REPEAT or (hi != -1 and hi < lo):
            self.error("bad repetition count")
        self.i = k + 1
        return lo, hi

    def atom(self, flags):
        c = self.take()
        if c == "(":
            return self.group(flags)
        if c == "[":
            return self.char_class(flags)
        if c == ".":
            dotall = flags["s"]
            return ("char", (lambda ch: True) if dotall else (lambda ch: ch != "\n"))
        if c == "^":
            return ("assert", "^" if flags["m"] else "A")
        if c == "$":
            return ("assert", "$" if flags["m"] else "z")
        if c in "*+?":
            self.error("missing argument to repetition operator")
        if c == "\\":
            return self.escape(flags, False)
        return self.literal(c, flags)

    def literal(self, c, flags):
        if flags["i"] and c.lower() != c.upper():
            lo, up = c.lower(), c.upper()
            return ("char", lambda ch: ch == lo or ch == up or ch.lower() == lo)
        return ("char", lambda ch: ch == c)

    def group(self, flags):
        inner = dict(flags)
        if self.p.startswith("?", self.i):
            rest = self.p[self.i:]
            # (no tuple arguments to startswith: MicroPython lacks them)
            lookbehind = rest.startswith("?<=") or rest.startswith("?<!")  # noqa: PIE810
            if rest.startswith("?P<") or (rest.startswith("?<") and not lookbehind):
                end = self.p.find(">", self.i)
                if end < 0:
                    self.error("invalid named group")
                self.i = end + 1
            elif rest.startswith("?!)") and self.dotnet:
                self.i += 3
                return ("fail",)
            elif rest.startswith("?=") or rest.startswith("?!") or rest.startswith("?<"):  # noqa: PIE810
                self.error("lookaround is not supported (RE2 has none)")
            else:
                j = self.i + 1
                while j < len(self.p) and self.p[j] in "imsU-":
                    j += 1
                if j >= len(self.p) or self.p[j] != ":":
                    self.error("invalid or unsupported group")
                self._set_flags(inner, self.p[self.i + 1:j])
                self.i = j + 1
        node = self.alternation(inner)
        if self.peek() != ")":
            self.error("missing )")
        self.i += 1
        return node

    def escape(self, flags, in_class):
        if self.i >= len(self.p):
            self.error("trailing backslash")
        c = self.take()
        if c in "dDwWsS":
            ranges = _DIGIT if c in "dD" else _WORD if c in "wW" else _SPACE
            return ("ranges", ranges, c.isupper()) if in_class else _ranges_node(ranges, c.isupper(), False)
        if not in_class:
            if c == "b":
                return ("assert", "b")
            if c == "B":
                return ("assert", "B")
            if c == "A":
                return ("assert", "A")
            if c == "z":
                return ("assert", "z")
        if c in _ESCAPES:
            ch = _ESCAPES[c]
        elif c == "x":
            ch = self.hex_escape()
        elif c in "01234567":
            if c != "0" and (self.peek() is None or self.peek() not in "01234567"):
                self.error("backreferences are not supported (RE2 has none)")
            j = self.i
            while j < len(self.p) and j < self.i + 2 and self.p[j] in "01234567":
                j += 1
            ch = chr(int(c + self.p[self.i:j], 8))
            self.i = j
        elif c.isalpha() or c.isdigit():
            self.error("unsupported escape \\" + c)
        else:
            ch = c
        if in_class:
            return ("ranges", ((ord(ch), ord(ch)),), False)
        return self.literal(ch, flags)

    def hex_escape(self):
        if self.peek() == "{":
            end = self.p.find("}", self.i)
            digits = self.p[self.i + 1:end] if end > 0 else ""
            self.i = end + 1
        else:
            digits = self.p[self.i:self.i + 2]
            self.i += 2
        try:
            code = int(digits, 16)
            if not digits or code > 0x10FFFF:
                raise ValueError
        except ValueError:
            self.error("invalid \\x escape")
        return chr(code)

    def char_class(self, flags):
        negated = False
        if self.peek() == "^":
            negated = True
            self.i += 1
        ranges = []
        subs = []   # (ranges, negated) of \D, \W, \S inside the class
        first = True
        while True:
            c = self.peek()
            if c is None:
                self.error("missing ]")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if self.p.startswith("[:", self.i):
                end = self.p.find(":]", self.i + 2)
                name = self.p[self.i + 2:end] if end > 0 else ""
                neg = name.startswith("^")
                if neg:
                    name = name[1:]
                if name not in _POSIX:
                    self.error("invalid character class")
                self.i = end + 2
                subs.append((_POSIX[name], neg))
                continue
            lo = self.class_char(flags)
            if lo[0] == "ranges" and lo[2]:
                subs.append((lo[1], True))
                continue
            if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]" \
                    and len(lo[1]) == 1 and lo[1][0][0] == lo[1][0][1]:
                self.i += 1
                hi = self.class_char(flags)
                if len(hi[1]) != 1 or hi[1][0][0] != hi[1][0][1] or hi[2] or hi[1][0][0] < lo[1][0][0]:
                    self.error("invalid character class range")
                ranges.append((lo[1][0][0], hi[1][0][0]))
            else:
                ranges.extend(lo[1])
        return _class_node(tuple(ranges), tuple(subs), negated, flags["i"])

    def class_char(self, flags):
        c = self.take()
        if c == "\\":
            return self.escape(flags, True)
        return ("ranges", ((ord(c), ord(c)),), False)


def _ranges_node(ranges, negated, icase):
    return _class_node(ranges, (), negated, icase)


def _class_node(ranges, subs, negated, icase):
    def test(ch):
        o = ord(ch)
        hit = _in(ranges, o)
        if not hit and icase:
            hit = _in(ranges, ord(ch.lower()[0])) or _in(ranges, ord(ch.upper()[0]))
        if not hit:
            for sub, neg in subs:
                if _in(sub, o) != neg:
                    hit = True
                    break
        return hit != negated
    return ("char", test)


class _Linear:
    """A pattern compiled to a Thompson NFA (see the module docstring)."""

    def __init__(self, pattern, dotnet=False):
        if not isinstance(pattern, str):
            raise RegexError("the pattern is not a string")
        ast = _Parser(pattern, dotnet).parse({"i": False, "m": False, "s": False})
        self.prog = []
        self.emit(ast)
        self.prog.append((_MATCH,))

    def add(self, instr):
        if len(self.prog) >= MAX_PROGRAM:
            raise RegexError("the pattern is too large (more than " + str(MAX_PROGRAM) + " instructions)")
        self.prog.append(instr)
        return len(self.prog) - 1

    def patch(self, at, instr):
        self.prog[at] = instr

    def emit(self, node):
        kind = node[0]
        if kind == "char":
            self.add((_CHAR, node[1]))
        elif kind == "assert":
            self.add((_ASSERT, node[1]))
        elif kind == "fail":
            self.add((_FAIL,))
        elif kind == "cat":
            for item in node[1]:
                self.emit(item)
        elif kind == "alt":
            jumps = []
            branches = node[1]
            for k in range(len(branches) - 1):
                split = self.add(None)
                self.emit(branches[k])
                jumps.append(self.add(None))
                self.patch(split, (_SPLIT, split + 1, len(self.prog)))
            self.emit(branches[-1])
            for j in jumps:
                self.patch(j, (_JMP, len(self.prog)))
        elif kind == "rep":
            self.repeat(node[1], node[2], node[3])
        # "empty" emits nothing

    def repeat(self, sub, lo, hi):
        for _ in range(lo):
            self.emit(sub)
        if hi == -1:
            split = self.add(None)
            self.emit(sub)
            self.add((_JMP, split))
            self.patch(split, (_SPLIT, split + 1, len(self.prog)))
            return
        splits = []
        for _ in range(hi - lo):
            splits.append(self.add(None))
            self.emit(sub)
        for s in splits:
            self.patch(s, (_SPLIT, s + 1, len(self.prog)))

    def search(self, text):
        prog = self.prog
        n = len(text)
        mark = [-1] * len(prog)
        current = []
        for pos in range(n + 1):
            prev = text[pos - 1] if pos > 0 else None
            ch = text[pos] if pos < n else None
            # Threads continuing from the last character, then a new one
            # starting here (an unanchored search); each state once per position.
            stack = [pc for pc in reversed(current)]
            stack.insert(0, 0)
            nxt = []
            while stack:
                pc = stack.pop()
                if mark[pc] == pos:
                    continue
                mark[pc] = pos
                op = prog[pc]
                code = op[0]
                if code == _CHAR:
                    if ch is not None and op[1](ch):
                        nxt.append(pc + 1)
                elif code == _SPLIT:
                    stack.append(op[2])
                    stack.append(op[1])
                elif code == _JMP:
                    stack.append(op[1])
                elif code == _ASSERT:
                    if _holds(op[1], prev, ch):
                        stack.append(pc + 1)
                elif code == _MATCH:
                    return True
            current = nxt
        return False


def _holds(kind, prev, ch):
    if kind == "A":
        return prev is None
    if kind == "z":
        return ch is None
    if kind == "^":
        return prev is None or prev == "\n"
    if kind == "$":
        return ch is None or ch == "\n"
    boundary = _is_word(prev) != _is_word(ch)
    return boundary if kind == "b" else not boundary
