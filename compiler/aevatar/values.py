"""How the aevatar parser turns YAML values into parameter strings.

The engine deserialises ``parameters`` into ``Dictionary<string, object?>``
with YamlDotNet, which keeps every scalar as its text (``true`` stays
"true", ``1.50`` stays "1.50", ``010`` stays "010"); plain ``~``, ``null``
and empty are null. ``ConvertValueToString`` then makes null "" and a
nested mapping or list its System.Text.Json serialisation, in which every
scalar is a JSON string (or null) and the default encoder escapes
non-ASCII and HTML-sensitive characters as \\uXXXX.
"""

from __future__ import annotations

from flowc.compiler.yamlsrc import YMap, YNode, YScalar, YSeq

_NULL_TEXTS = ("", "~", "null", "Null", "NULL")


def scalar_text(node: YScalar) -> str | None:
    """The text YamlDotNet gives an untyped scalar; None for a null."""
    if not node.quoted and node.text in _NULL_TEXTS:
        return None
    return node.text


def param_text(node: YNode | None) -> str:
    """ConvertValueToString of a parameter value."""
    if node is None:
        return ""
    if isinstance(node, YScalar):
        text = scalar_text(node)
        return "" if text is None else text
    return dotnet_json(node)


def _escape_char(ch: str) -> str:
    o = ord(ch)
    if ch == "\\":
        return "\\\\"
    if ch in "\b\f\n\r\t":
        return {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch]
    # JavaScriptEncoder.Default: Basic Latin only, minus controls and the
    # HTML-sensitive " & ' + < > `.
    if o < 0x20 or o > 0x7E or ch in "\"&'+<>`":
        if o > 0xFFFF:
            o -= 0x10000
            return f"\\u{0xD800 + (o >> 10):04X}\\u{0xDC00 + (o & 0x3FF):04X}"
        return f"\\u{o:04X}"
    return ch


def _json_string(text: str) -> str:
    return '"' + "".join(_escape_char(ch) for ch in text) + '"'


def dotnet_json(node: YNode) -> str:
    """JsonSerializer.Serialize of the YamlDotNet object graph (compact)."""
    if isinstance(node, YMap):
        items = []
        for key, value in node.items:
            items.append(_json_string(param_text(key)) + ":" + dotnet_json(value))
        return "{" + ",".join(items) + "}"
    if isinstance(node, YSeq):
        return "[" + ",".join(dotnet_json(item) for item in node.items) + "]"
    text = scalar_text(node)  # type: ignore[arg-type]
    return "null" if text is None else _json_string(text)


def looks_typed(node: YScalar) -> str | None:
    """For a plain scalar that YAML tools read as a number or a boolean,
    what they read it as ("a number", "a boolean"); else None."""
    if node.quoted:
        return None
    value = node.value
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str) and value.lower() in ("yes", "no", "on", "off"):
        return "a boolean (in YAML 1.1)"
    return None
