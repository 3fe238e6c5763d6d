"""A readable listing of expression code (``flowc disasm``), and the opcode
table of docs/bytecode.md section 9, both from the machine's own tables
(:mod:`flowc.backends.vm.expr_vm`)."""

from __future__ import annotations

from collections.abc import Callable

# every dialect's builtins, registered with the machine on import
from flowc.backends.vm import expr_aevatar, expr_cel, expr_wfs  # noqa: F401
from flowc.backends.vm import expr_vm as V

__all__ = ["disassemble_block", "doc_table"]

_KINDS = {"c": "const", "a": "access", "n": "name", "s": "slot", "k": "key", "i": "count",
          "y": "stringify", "m": "map", "t": "target", "h": "truthiness", "b": "block", "p": "params"}
_RULES = {"a": V.ACCESS, "h": V.TRUTHINESS, "y": V.STRINGIFY, "m": V.MAPS}

# name -> (stack effect, meaning); a test keeps this in step with OPCODES
_MEANINGS = {
    "CONST": ("0 → 1", "push consts[c]"),
    "LOAD": ("0 → 1", ("push the variable names[n] read by the access rule: `cel` the environment's "
                      "binding (a missing one: the longest qualified name `n.f1...fk` bound, the fields "
                      "taken from the `FIELD cel` instructions that follow, else an error); `flat_keys` "
                      "the aevatar variable (aevatar_text.var); `flat_keys_ci` the same ignoring case "
                      "(aevatar_text.var_ci); `wfs` the WorkflowSkill root (missing when unset; `@final` "
                      "the run's final value, for the workflow outputs; a name "
                      "that is no root fails: 'Unknown reference: $name')")),
    "LOCAL": ("0 → 1", "push frame slot s (a parameter or a lambda's variable)"),
    "FIELD": ("1 → 1", ("v → v.names[n] by the access rule (`cel`: cel.select, a missing key is an "
                       "error; `wfs`: the property, missing when absent)")),
    "INDEX": ("2 → 1", "v i → v[i] by the access rule (`cel`: cel.index; `wfs`: missing when absent)"),
    "CALL": ("k → 1", "pop k arguments (the first pushed first) and push BUILTINS[keys[f]] of them"),
    "LIST": ("k → 1", "pop k values, push them as a list"),
    "MAP": ("2k → 1", ("pop k key/value pairs, push a map by the map rule (`cel`: cel.make_map; "
                       "`wfs`: keys as JavaScript strings, a later duplicate replaces the value in place; "
                       "`wfs_compact`: as `wfs`, then without the keys whose value is missing, wfs.compact)")),
    "TEMPLATE": ("k → 1", ("pop k parts, push them joined by the stringify rule (`json`: "
                          "cel.template_json; `aevatar`: the strings concatenated; `wfs`: each "
                          "part as stringify wfs)")),
    "JUMP": ("0 → 0", "continue at t"),
    "JUMP_IF_NOT": ("1 → 0", ("pop v; continue at t when v is false by the truthiness rule "
                             "(`cel_bool`: a non-bool is an error; `aevatar_truthy`; `js_boolean`; "
                             "`wfs_truthy`)")),
    "JUMP_IF_FALSE_KEEP": ("1 → 1", "continue at t when the top is the bool false (kept)"),
    "JUMP_IF_TRUE_KEEP": ("1 → 1", "continue at t when the top is the bool true (kept)"),
    "TRY": ("0 → 0 (at t: +1)", ("until the matching END_TRY, a CEL error drops the stack to its "
                                "depth here, pushes the error as a value and continues at t")),
    "END_TRY": ("0 → 0", "close the innermost TRY"),
    "POP": ("1 → 0", "drop the top"),
    "LAMBDA": ("0 → 1", ("push a lambda of p parameters: called, it stores them in slots s..s+p-1 and "
                        "evaluates block b; only an argument of the CALL right after its run of LAMBDAs")),
    "RETURN": ("1 → (end)", "end the block; its value is the one value on the stack"),
}


def doc_table() -> str:
    """The opcode table of docs/bytecode.md section 9 (a test keeps them equal)."""
    out = ["| code | name | operands | stack | meaning |", "|---|---|---|---|---|"]
    for code in sorted(V.OPCODES):
        name, kinds = V.OPCODES[code]
        operands = ", ".join(f"{k} {_KINDS[k]}" for k in kinds) or "—"
        effect, meaning = _MEANINGS[name]
        out.append(f"| `0x{code:02X}` | `{name}` | {operands} | {effect} | {meaning} |")
    return "\n".join(out) + "\n"


def builtin_table() -> str:
    """The builtins by key (docs/bytecode.md section 9)."""
    out = ["| key | arguments | lambdas |", "|---|---|---|"]
    for key in sorted(V.BUILTINS):
        _fn, low, high, first, params = V.BUILTINS[key]
        arity = str(low) if high == low else (f"{low} or more" if high < 0 else f"{low}..{high}")
        lambdas = "—" if first < 0 else f"from argument {first + 1}, {params} parameters each"
        out.append(f"| `{key}` | {arity} | {lambdas} |")
    return "\n".join(out) + "\n"


def disassemble_block(code: bytes | list, const: Callable[[int], str], name: Callable[[int], str],
                      key: Callable[[int], str]) -> list[str]:
    """One line per instruction: offset, opcode, operands shown with what
    they name. ``code`` is a block's bytes or its decoded instructions
    ``[(offset, opcode, operands)]`` (a sequential program's blocks, whose
    offsets and targets count instructions)."""
    lines = []
    for pc, op, operands in V.decode(code) if isinstance(code, bytes) else code:
        opname, kinds = V.OPCODES[op]
        shown = []
        for kind, value in zip(kinds, operands, strict=True):
            if kind == "c":
                shown.append(f"{value} ({const(value)})")
            elif kind == "n":
                shown.append(f"{value} ({name(value)})")
            elif kind == "k":
                shown.append(f"{value} ({key(value)})")
            elif kind in _RULES:
                rules = _RULES[kind]
                shown.append(rules[value] if value < len(rules) else str(value))
            elif kind == "b":
                shown.append(f"block {value}")
            elif kind == "s":
                shown.append(f"slot {value}")
            elif kind == "t":
                shown.append(f"-> {value}")
            else:
                shown.append(str(value))
        lines.append(f"{pc:5d}  {opname:<18} {', '.join(shown)}".rstrip())
    return lines
