"""The WorkflowSkill front end's finding codes (WFS): WFS1xx the document,
WFS2xx expressions and references. Examples: code_examples.py."""

from __future__ import annotations

from flowc.compiler.code_types import CodeInfo, code_table

from .code_examples import EXAMPLES

__all__ = ["CODES"]

CODES: dict[str, CodeInfo] = code_table(
    EXAMPLES,
    ("WFS101", "no workflow block",
     "A SKILL.md must contain a fenced block opened with ```workflow."),
    ("WFS102", "empty workflow", "The workflow block is empty or holds no mapping."),
    ("WFS103", "wrong shape", ("A field holds a value of the wrong shape (e.g. a list where a "
     "mapping is required).")),
    ("WFS104", "missing field", "A required field is absent."),
    ("WFS105", "unknown key",
     ("The key is not part of WorkflowSkill. The reference runtime silently drops it, so a "
     "typo such as `on_eror` would change nothing at run time; flowc reports it.")),
    ("WFS106", "invalid value", "A field holds a value outside its allowed set."),
    ("WFS107", "default on a step input",
     "Step inputs take `value`; `default` is only valid on workflow inputs."),
    ("WFS108", "bare step input", "A step input must be a mapping with `type` (and `value`)."),
    ("WFS109", "no steps", "A workflow must have at least one step."),
    ("WFS110", "frontmatter problem",
     ("The SKILL.md frontmatter is missing or lacks `name`/`description`; the workflow is "
     "named after its file.")),
    ("WFS111", "invalid duration", 'Durations are written like "500ms" or "2s".'),
    ("WFS112", "invalid retry policy",
     "`retry` needs `max` (an integer > 0), `delay` (a duration) and `backoff` (a number > 0)."),
    ("WFS113", "each/delay misuse",
     "`each` is valid only on tool and transform steps; `delay` requires `each`."),
    ("WFS201", "expression syntax error", "The `$`-expression or `${}` template does not parse."),
    ("WFS202", "unknown reference",
     "Expressions may reference $inputs, $steps, $item, $index and $result only."),
    ("WFS203", "$result outside a step output",
     ("`$result` is the raw result of the step being mapped; it exists only in a step "
     "output's `value`.")),
    ("WFS204", "reference to an undeclared step", "The referenced step id is not declared."),
    ("WFS205", "reference to a later step",
     ("A step may only reference steps that have run before it: steps declared earlier, or "
     "for a branch step, steps that run before its conditional.")),
    ("WFS206", "$steps in a step output",
     ("Step output values map the raw result with `$result`; use `$steps` in step inputs and "
     "workflow outputs.")),
    ("WFS208", "undeclared input", "`$inputs.<name>` names an input the workflow does not declare."),
    ("WFS209", "unknown branch target", "A conditional's then/else names an undeclared step."),
    ("WFS210", "branch target before its conditional",
     "Branch targets must be declared after the conditional that selects them."),
    ("WFS211", "unknown exit output key", "An exit's output keys must be declared workflow outputs."),
    ("WFS212", "$inputs reference in iteration-free context",
     "`$item` and `$index` exist only inside `each`, `where` and map expressions."),
)
