"""Every finding code flowc reports: stable, documented, explainable.

Codes never change meaning once published. ``flowc explain CODE`` prints
the entry. Prefixes: FLC driver and I/O, YAML reading, WFS WorkflowSkill
front end, ANA dialect-independent analyses.
"""

from __future__ import annotations

import attrs

from flowc.compiler.codes_examples import EXAMPLES


@attrs.frozen
class CodeInfo:
    code: str
    title: str
    explanation: str
    # A file that produces the code and the same file fixed (see
    # codes_examples.py, where they live; a row may also give them inline).
    wrong: str = ""
    right: str = ""
    example_file: str = "workflow.yaml"


def _table(*rows: tuple[str, ...]) -> dict[str, CodeInfo]:
    table = {}
    for code, title, text, *inline in rows:
        ex = EXAMPLES.get(code)
        if inline:
            table[code] = CodeInfo(code, title, text, *inline)
        elif ex is not None:
            table[code] = CodeInfo(code, title, text, ex.wrong, ex.right, ex.file)
        else:
            table[code] = CodeInfo(code, title, text)
    return table


CODES: dict[str, CodeInfo] = _table(
    ("FLC001", "unrecognised dialect",
     "flowc could not tell which dialect the file is written in. A WorkflowSkill file is a "
     "Markdown file with a ```workflow block or a YAML mapping with a `steps` list of typed "
     "steps. Use --dialect to say which one it is."),
    ("FLC002", "dialect not supported yet",
     "The file is in a dialect this version of flowc recognises but cannot compile yet."),
    ("FLC003", "file cannot be read",
     "The file does not exist, is not readable, or is not UTF-8 text."),
    ("YAML001", "invalid YAML", "The text is not well-formed YAML."),
    ("YAML002", "duplicate key",
     "A mapping defines the same key twice. YAML 1.2 forbids it; the second value would "
     "silently win in many tools."),
    ("YAML003", "non-string key", "Mapping keys must be plain scalars."),
    ("YAML004", "unsupported YAML feature", "Merge keys (<<) are not part of YAML 1.2."),
    ("YAML005", "document too large",
     "The document expands (through aliases or nesting) beyond flowc's limits."),
    ("WFS101", "no workflow block",
     "A SKILL.md must contain a fenced block opened with ```workflow."),
    ("WFS102", "empty workflow", "The workflow block is empty or holds no mapping."),
    ("WFS103", "wrong shape", "A field holds a value of the wrong shape (e.g. a list where a "
     "mapping is required)."),
    ("WFS104", "missing field", "A required field is absent."),
    ("WFS105", "unknown key",
     "The key is not part of WorkflowSkill. The reference runtime silently drops it, so a "
     "typo such as `on_eror` would change nothing at run time; flowc reports it."),
    ("WFS106", "invalid value", "A field holds a value outside its allowed set."),
    ("WFS107", "default on a step input",
     "Step inputs take `value`; `default` is only valid on workflow inputs."),
    ("WFS108", "bare step input", "A step input must be a mapping with `type` (and `value`)."),
    ("WFS109", "no steps", "A workflow must have at least one step."),
    ("WFS110", "frontmatter problem",
     "The SKILL.md frontmatter is missing or lacks `name`/`description`; the workflow is "
     "named after its file."),
    ("WFS111", "invalid duration", 'Durations are written like "500ms" or "2s".'),
    ("WFS112", "invalid retry policy",
     "`retry` needs `max` (an integer > 0), `delay` (a duration) and `backoff` (a number > 0)."),
    ("WFS113", "each/delay misuse",
     "`each` is valid only on tool and transform steps; `delay` requires `each`."),
    ("WFS201", "expression syntax error", "The `$`-expression or `${}` template does not parse."),
    ("WFS202", "unknown reference",
     "Expressions may reference $inputs, $steps, $item, $index and $result only."),
    ("WFS203", "$result outside a step output",
     "`$result` is the raw result of the step being mapped; it exists only in a step "
     "output's `value`."),
    ("WFS204", "reference to an undeclared step", "The referenced step id is not declared."),
    ("WFS205", "reference to a later step",
     "A step may only reference steps that have run before it: steps declared earlier, or "
     "for a branch step, steps that run before its conditional."),
    ("WFS206", "$steps in a step output",
     "Step output values map the raw result with `$result`; use `$steps` in step inputs and "
     "workflow outputs."),
    ("WFS208", "undeclared input", "`$inputs.<name>` names an input the workflow does not declare."),
    ("WFS209", "unknown branch target", "A conditional's then/else names an undeclared step."),
    ("WFS210", "branch target before its conditional",
     "Branch targets must be declared after the conditional that selects them."),
    ("WFS211", "unknown exit output key", "An exit's output keys must be declared workflow outputs."),
    ("WFS212", "$inputs reference in iteration-free context",
     "`$item` and `$index` exist only inside `each`, `where` and map expressions."),
    ("ANA401", "duplicate id", "Two nodes have the same id."),
    ("ANA402", "unreachable step", "No path from the entry reaches this step."),
    ("ANA403", "cycle", "The steps depend on each other in a cycle."),
    ("ANA404", "no single terminal", "Every path must end at the workflow's one terminal."),
    ("ANA405", "edge to unknown node", "An edge names a node that does not exist."),
    ("ANA406", "limit exceeded", "The workflow exceeds one of flowc's size limits."),
    ("ANA501", "type mismatch", "The value wired into a field does not have the declared type."),
    ("ANA502", "not an array",
     "This value must be an array (a transform's input, an `each` target)."),
    ("ANA503", "undeclared field",
     "The reference selects a field the producing step does not declare; it always resolves "
     "to nothing. `$steps.<id>.output.<field>` must name a declared output of the step."),
    ("ANA504", "field of an array",
     "The value is an array (e.g. the output of a step with `each`); selecting a named field "
     "of it always resolves to nothing. Index it or use a transform."),
)


def explain(code: str) -> CodeInfo | None:
    return CODES.get(code.upper())
