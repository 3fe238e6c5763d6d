"""The flowc container reader (docs/bytecode.md section 1): what every
scheduling model's loader shares. ``open_container(data)`` checks a
program's magic, version, checksum, header and section table and decodes
its string table; ``read_section`` decodes one section (one msgpack
document, its string references resolved); ``guarded(fn, *args)`` makes
every failure of a loader a ``VerifyError``. ``unpackb`` is their msgpack
decoder (``msgpack`` on CPython when installed, a minimal one built in).

The loader of every model (plan_vm.py), the device entry (device.py) and
the disassembler import it.
MicroPython style, no typing, standard library only.
"""

# MicroPython style on purpose: %-formatting and explicit `object` bases
# read the same on both interpreters.
# ruff: noqa: UP004, UP031

import sys

try:
    from collections import OrderedDict as _OrderedDict
except ImportError:  # pragma: no cover
    _OrderedDict = dict

try:
    import msgpack as _msgpack
except ImportError:  # pragma: no cover - MicroPython
    _msgpack = None

try:
    from zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - MicroPython
    try:
        from binascii import crc32 as _crc32
    except ImportError:
        _crc32 = None

try:
    import gc as _gc
except ImportError:  # pragma: no cover
    _gc = None

try:
    from flowc.backends.vm.errors import VerifyError, VMError
except ImportError:  # pragma: no cover - copies side by side on MicroPython
    from errors import VerifyError, VMError

_MICRO = sys.implementation.name == "micropython"
# Objects must keep insertion order (JSON key order, "the first array input").
_Obj = _OrderedDict if _MICRO else dict

# The container (docs/bytecode.md section 1): must equal flowc.backends.vm.format's (a test checks).
MAGIC = b"FLWC"
FORMAT_VERSION = 8
SUPPORTED_VERSIONS = (8,)
MODELS = ("sequential", "kernel", "dataflow")
SECTIONS = ("consts", "names", "keys", "exprs", "plan", "code", "srcmap")
STRING_REF = 0
# model -> (sections it must hold, sections it may hold)
MODEL_SECTIONS = {
    "sequential": (("consts", "names", "plan", "code"), ("srcmap",)),
    "kernel": (("consts", "names", "plan", "code"), ()),
    "dataflow": (("consts", "names", "keys", "exprs", "plan", "code"), ()),
}

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 65535
MAX_NESTING = 100


# ================================================================ decoding

def _crc(data):
    if _crc32 is not None:
        return _crc32(data) & 0xFFFFFFFF
    return _crc_py(data)


_CRC_TABLE = None


def _crc_py(data):
    global _CRC_TABLE
    if _CRC_TABLE is None:
        table = []
        for n in range(256):
            c = n
            for _ in range(8):
                c = (0xEDB88320 ^ (c >> 1)) if c & 1 else (c >> 1)
            table.append(c)
        _CRC_TABLE = table
    t = _CRC_TABLE
    c = 0xFFFFFFFF
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


class _Reader(object):
    """A minimal msgpack decoder: nil, bool, int, float, str, bin, array, map."""

    def __init__(self, data, strings=None):
        self.data = data
        self.pos = 0
        self.n = len(data)
        self.strings = strings

    def need(self, k):
        if k < 0 or self.pos + k > self.n:
            raise VerifyError("truncated msgpack data at byte %d" % self.pos)

    def uint(self, k):
        self.need(k)
        d = self.data
        p = self.pos
        v = 0
        for i in range(k):
            v = (v << 8) | d[p + i]
        self.pos = p + k
        return v

    def value(self, depth):
        if depth > MAX_NESTING:
            raise VerifyError("msgpack data nests deeper than %d" % MAX_NESTING)
        self.need(1)
        b = self.data[self.pos]
        self.pos += 1
        if b <= 0x7F:
            return b
        if b >= 0xE0:
            return b - 0x100
        if 0xA0 <= b <= 0xBF:
            return self.str_(b & 0x1F)
        if 0x90 <= b <= 0x9F:
            return self.array(b & 0x0F, depth)
        if 0x80 <= b <= 0x8F:
            return self.map(b & 0x0F, depth)
        if b == 0xC0:
            return None
        if b == 0xC2:
            return False
        if b == 0xC3:
            return True
        if b == 0xCC:
            return self.uint(1)
        if b == 0xCD:
            return self.uint(2)
        if b == 0xCE:
            return self.uint(4)
        if b == 0xCF:
            return self.uint(8)
        if b == 0xD0:
            v = self.uint(1)
            return v - 0x100 if v & 0x80 else v
        if b == 0xD1:
            v = self.uint(2)
            return v - 0x10000 if v & 0x8000 else v
        if b == 0xD2:
            v = self.uint(4)
            return v - 0x100000000 if v & 0x80000000 else v
        if b == 0xD3:
            v = self.uint(8)
            return v - 0x10000000000000000 if v & 0x8000000000000000 else v
        if b == 0xCA:
            return self.float_(4, ">f")
        if b == 0xCB:
            return self.float_(8, ">d")
        if b == 0xD9:
            return self.str_(self.uint(1))
        if b == 0xDA:
            return self.str_(self.uint(2))
        if b == 0xDB:
            return self.str_(self.uint(4))
        if b == 0xC4:
            return self.bin_(self.uint(1))
        if b == 0xC5:
            return self.bin_(self.uint(2))
        if b == 0xC6:
            return self.bin_(self.uint(4))
        if b == 0xDC:
            return self.array(self.uint(2), depth)
        if b == 0xDD:
            return self.array(self.uint(4), depth)
        if b == 0xDE:
            return self.map(self.uint(2), depth)
        if b == 0xDF:
            return self.map(self.uint(4), depth)
        if 0xD4 <= b <= 0xD6 or b == 0xC7:   # fixext 1, 2, 4 or ext 8: a string reference
            k = 1 << (b - 0xD4) if b != 0xC7 else self.uint(1)
            if k != 1 and k != 2 and k != 4:
                raise VerifyError("a string reference must be an ext of 1, 2 or 4 bytes")
            kind = self.uint(1)
            return _string_ref(self.strings, kind, self.uint(k))
        raise VerifyError("unsupported msgpack type byte 0x%02x at byte %d" % (b, self.pos - 1))

    def float_(self, k, fmt):
        import struct
        self.need(k)
        v = struct.unpack(fmt, bytes(self.data[self.pos:self.pos + k]))[0]
        self.pos += k
        return v

    def str_(self, k):
        self.need(k)
        raw = bytes(self.data[self.pos:self.pos + k])
        self.pos += k
        try:
            return raw.decode("utf-8")
        except Exception:  # noqa: BLE001 - UnicodeError on MicroPython
            raise VerifyError("invalid UTF-8 in a msgpack string at byte %d" % (self.pos - k))

    def bin_(self, k):
        self.need(k)
        raw = bytes(self.data[self.pos:self.pos + k])
        self.pos += k
        return raw

    def array(self, k, depth):
        # Every element takes at least one byte: a length beyond the data is a lie.
        self.need(k)
        return [self.value(depth + 1) for _ in range(k)]

    def map(self, k, depth):
        self.need(2 * k)
        out = _Obj()
        for _ in range(k):
            key = self.value(depth + 1)
            if type(key) is not str:
                raise VerifyError("a msgpack map key is not a string at byte %d" % self.pos)
            out[key] = self.value(depth + 1)
        return out


def _string_ref(strings, kind, i):
    """Entry i of the string table, which an ext of type STRING_REF stands for."""
    if kind != STRING_REF:
        raise VerifyError("unsupported msgpack ext type %d" % kind)
    if strings is None or i >= len(strings):
        raise VerifyError("string reference %d outside the string table" % i)
    return strings[i]


def unpackb(data, strings=None):
    """Decode one msgpack document (all of data); ``strings`` the string
    table its references index (None: it may have none)."""
    if _msgpack is not None and not _MICRO:
        known = {}   # raw -> its string: a program names the same few strings again and again

        def ext(kind, raw):
            s = known.get(raw) if kind == STRING_REF else None
            if s is None:
                if len(raw) not in (1, 2, 4):
                    raise VerifyError("a string reference must be an ext of 1, 2 or 4 bytes")
                s = known[raw] = _string_ref(strings, kind, int.from_bytes(raw, "big"))
            return s
        try:
            return _msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True, ext_hook=ext)
        except VerifyError:
            raise
        except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds
            raise VerifyError("malformed msgpack data: " + (str(exc) or type(exc).__name__))
    r = _Reader(data, strings)
    v = r.value(0)
    if r.pos != r.n:
        raise VerifyError("%d bytes of extra data after the msgpack document" % (r.n - r.pos))
    return v



def _int(v, what, lo=0, hi=0xFFFFFFFF):
    if type(v) is not int or v < lo or v > hi:
        raise VerifyError("%s must be an integer in [%d, %d], not %r" % (what, lo, hi, _short(v)))
    return v


def _short(v):
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def open_container(data):
    """The header of a flowc program, checked: ``(model, name, table)``, the
    table mapping each section's name to ``(start, end)`` in data (section
    names, the string table, to ``(start, end, its list of str)``). Magic,
    version, the checksum of everything after the fixed part (so no
    corrupted byte loads, also in a section this loader skips), the header
    and the section table's bounds are checked here, once; a section is
    decoded only when it is read (:func:`read_section`)."""
    if not isinstance(data, (bytes, bytearray)):
        raise VerifyError("a flowc program must be bytes")
    n = len(data)
    if n > MAX_FILE_BYTES:
        raise VerifyError("a program of %d bytes exceeds the limit of %d" % (n, MAX_FILE_BYTES))
    if n < 10 or bytes(data[0:4]) != MAGIC:
        raise VerifyError("not a flowc program (bad magic)")
    version = data[4]
    if version not in SUPPORTED_VERSIONS:
        raise VerifyError("unsupported format version %d (this VM runs %s)"
                          % (version, ", ".join([str(v) for v in SUPPORTED_VERSIONS])))
    hlen, start = _read_varint(data, 9, min(n, 12))
    if hlen > MAX_HEADER_BYTES or start + hlen > n:
        raise VerifyError("a header of %d bytes does not fit (%d bytes left)" % (hlen, n - start))
    if _crc(bytes(data[9:])) != _u32(data, 5):
        raise VerifyError("checksum mismatch: the program is corrupt")
    header = unpackb(bytes(data[start:start + hlen]))
    if type(header) is not list or len(header) < 3:
        raise VerifyError("the header must be an array: model, name, sections, lengths")
    code, name, mask = header[0], header[1], header[2]
    rows = header[3:]
    if type(code) is not int or not 0 <= code < len(MODELS):
        raise VerifyError("unknown scheduling model %s (known: 0 to %d)" % (_short(code), len(MODELS) - 1))
    model = MODELS[code]
    if name is not None and type(name) is not str:
        raise VerifyError("the program name must be a string or nil")
    table = _section_table(model, mask, rows, start + hlen, n)
    where = table["names"]      # every model has one: the string table
    names = unpackb(bytes(data[where[0]:where[1]]))
    if type(names) is not list or [1 for s in names if type(s) is not str]:
        raise VerifyError("section names must be an array of strings")
    table["names"] = (where[0], where[1], names)
    return model, name, table


def _section_table(model, mask, lengths, pos, n):
    """{section name: (start, end)} of a section table: ``mask`` has bit i
    set when the program has section id i; the sections follow in id
    order from offset pos on, each of its length in ``lengths`` but the
    last, which runs to the file's end n. Checked: known ids, the model's
    sections, every section within the file and not empty."""
    if type(mask) is not int or mask < 0:
        raise VerifyError("the section mask must be a non-negative int")
    required, optional = MODEL_SECTIONS[model]
    ids = [i for i in range(len(SECTIONS)) if mask >> i & 1]
    if mask >> len(SECTIONS):
        sid = len(SECTIONS)
        while not mask >> sid & 1:
            sid += 1
        raise VerifyError("a %s program has no section %d" % (model, sid))
    if len(lengths) != len(ids) - 1:
        raise VerifyError("the section table must give the lengths of all but the last of %d sections" % len(ids))
    table = {}
    for k in range(len(ids)):
        sname = SECTIONS[ids[k]]
        if sname not in required and sname not in optional:
            raise VerifyError("a %s program has no section %s" % (model, sname))
        length = n - pos if k == len(ids) - 1 else _int(lengths[k], "the length of section " + sname, 0, n)
        if length < 1:
            raise VerifyError("section %s is empty" % sname)
        if pos + length > n:
            raise VerifyError("section %s runs past the end of the program" % sname)
        table[sname] = (pos, pos + length)
        pos += length
    for sname in required:
        if sname not in table:
            raise VerifyError("a %s program needs a section %s" % (model, sname))
    return table


def _u32(data, at):
    return (data[at] << 24) | (data[at + 1] << 16) | (data[at + 2] << 8) | data[at + 3]


def read_section(data, table, name):
    """Section ``name`` of an opened container, decoded (one msgpack
    document, its string references resolved); None when the program has
    no such section. (open_container decoded section names already.)"""
    where = table.get(name)
    if where is None:
        return None
    if name == "names":
        return where[2]
    return unpackb(bytes(data[where[0]:where[1]]), table["names"][2])


def copy_json(v):
    """A deep copy of a JSON value, objects in their key order: what the VM
    hands out of a constant, and a helper for a device's host (every
    bundle has it: docs/embedding.md)."""
    if isinstance(v, dict):
        out = _Obj()
        for k in v:
            out[k] = copy_json(v[k])
        return out
    if isinstance(v, (list, tuple)):
        return [copy_json(x) for x in v]
    return v


def guarded(fn, *args):
    """fn(*args), every failure a VerifyError: a loader bug or an exhausted
    interpreter must not escape as anything else. The cyclic collector is
    paused meanwhile (loading allocates many small acyclic objects)."""
    # Pausing CPython's cyclic collector saves a third of the time.
    # MicroPython has one collector, the only one that frees memory:
    # paused, a load on a small heap fails with garbage of earlier runs.
    paused = not _MICRO and _gc is not None and _gc.isenabled()
    if paused:
        _gc.disable()
    try:
        return fn(*args)
    except VerifyError:
        raise
    except VMError as exc:
        raise VerifyError(str(exc))
    except _RecursionError:
        raise VerifyError("the program nests too deeply")
    except MemoryError:
        raise VerifyError("the program is too large to load")
    except Exception as exc:  # noqa: BLE001 - a decoder bug must not escape as anything else
        raise VerifyError("malformed program: " + type(exc).__name__ + ": " + str(exc))
    finally:
        if paused:
            _gc.enable()


try:
    _RecursionError = RecursionError
except NameError:  # pragma: no cover - MicroPython
    _RecursionError = RuntimeError


def _read_varint(code, p, end):
    if p >= end:
        raise VerifyError("truncated instruction at offset %d" % p)
    b = code[p]
    if b < 0x80:
        return b, p + 1
    v = b & 0x7F
    shift = 7
    p += 1
    while True:
        if p >= end:
            raise VerifyError("truncated operand at offset %d" % p)
        b = code[p]
        p += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, p
        shift += 7
        if shift > 28:
            raise VerifyError("operand varint longer than 5 bytes at offset %d" % p)
