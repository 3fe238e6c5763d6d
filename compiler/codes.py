"""Every finding code flowc reports: stable, documented, explainable.

Codes never change meaning once published. ``flowc explain CODE`` prints
the entry. Prefixes: FLC driver and I/O, YAML reading, ANA and LIM
dialect-independent analyses and limits, TRN translation, HST host config;
each dialect package exports its own codes (``compiler/<dialect>/codes.py``:
WFS, INS and CEL, AEV) and their examples (``code_examples.py``).

This module is the one registry: it lists the shared codes and each
dialect's, and combines the examples, in new tables (it changes none of
the tables it reads).
"""

from __future__ import annotations

from flowc.compiler import codes_examples as shared_examples
from flowc.compiler.aevatar import code_examples as aevatar_examples
from flowc.compiler.aevatar import codes as aevatar_codes
from flowc.compiler.code_types import CodeInfo, Example, code_table, combined
from flowc.compiler.instruction import code_examples as instruction_examples
from flowc.compiler.instruction import codes as instruction_codes
from flowc.compiler.workflowskill import code_examples as workflowskill_examples
from flowc.compiler.workflowskill import codes as workflowskill_codes

__all__ = ["CODES", "EXAMPLES", "NOT_STANDALONE", "CodeInfo", "Example", "explain"]

_EXAMPLE_MODULES = (shared_examples, workflowskill_examples, instruction_examples, aevatar_examples)
# Every code's wrong and right example (tests/test_explain.py checks them).
EXAMPLES: dict[str, Example] = {code: ex for m in _EXAMPLE_MODULES for code, ex in m.EXAMPLES.items()}
# Codes a file's text alone cannot produce, with the reason.
NOT_STANDALONE: dict[str, str] = {code: why for m in _EXAMPLE_MODULES for code, why in m.NOT_STANDALONE.items()}

# --- the driver and reading YAML -------------------------------------------------
_INPUT = code_table(
    shared_examples.EXAMPLES,
    ("FLC001", "unrecognised dialect",
     ("flowc could not tell which dialect the file is written in. A WorkflowSkill file is a "
     "Markdown file with a ```workflow block or a YAML mapping with a `steps` list of typed "
     "steps. Use --dialect to say which one it is.")),
    ("FLC002", "dialect not supported yet",
     "The file is in a dialect this version of flowc recognises but cannot compile yet."),
    ("FLC003", "file cannot be read",
     "The file does not exist, is not readable, or is not UTF-8 text."),
    ("YAML001", "invalid YAML", "The text is not well-formed YAML."),
    ("YAML002", "duplicate key",
     ("A mapping defines the same key twice. YAML 1.2 forbids it; the second value would "
     "silently win in many tools.")),
    ("YAML003", "non-string key", "Mapping keys must be plain scalars."),
    ("YAML004", "unsupported YAML feature", "Merge keys (<<) are not part of YAML 1.2."),
    ("YAML005", "document too large",
     "The document expands (through aliases or nesting) beyond flowc's limits."),
    ("YAML006", "unsupported YAML tag",
     ("A node carries a tag other than the YAML 1.2 core schema's (`!!str`, `!!int`, `!!float`, "
      "`!!bool`, `!!null`, `!!seq`, `!!map`), such as `!!python/object/apply:...`, `!!binary` or a "
      "local `!tag`, or a core tag its value does not fit (`!!int notanint`). flowc never constructs "
      "objects from tags; it reports the tag and reads the value as plain data.")),
)

# --- analyses and limits (every dialect) -----------------------------------------
_ANALYSES = code_table(
    shared_examples.EXAMPLES,
    ("ANA401", "duplicate id", "Two nodes have the same id."),
    ("ANA402", "unreachable step", "No path from the entry reaches this step."),
    ("ANA403", "cycle", "The steps depend on each other in a cycle."),
    ("ANA404", "no single terminal", "Every path must end at the workflow's one terminal."),
    ("ANA405", "edge to unknown node", "An edge names a node that does not exist."),
    ("ANA406", "limit exceeded", "The workflow exceeds one of flowc's size limits."),
    ("LIM001", "file too large",
     ("The file is larger than flowc reads (docs/limits.md). flowc refuses it before parsing so "
      "that a hostile file cannot exhaust memory or time.")),
    ("LIM002", "too many steps",
     "The workflow has more steps (nested steps included) than flowc compiles (docs/limits.md)."),
    ("LIM101", "nests too deeply",
     ("An expression, template or constant nests deeper than flowc compiles (docs/limits.md). "
      "Every backend must run what compiles, so the limit is checked where the text is read.")),
    ("LIM102", "expression too large",
     ("A call has too many arguments, a list or map too many entries, or a path too many "
      "segments (docs/limits.md).")),
    ("LIM103", "number out of range",
     ("A number is larger than the field can hold: an integer literal outside int64/uint64, a "
      "non-finite number where a count is expected, or more digits than flowc reads.")),
    ("LIM104", "too many retries",
     "A retry policy asks for more attempts than flowc runs (docs/limits.md)."),
    ("LIM105", "duration too long",
     "A delay, timeout or backoff is longer than flowc schedules (docs/limits.md)."),
    ("LIM106", "loop bound too large",
     "A declared loop bound is larger than flowc runs (docs/limits.md)."),
    ("ANA501", "type mismatch", "The value wired into a field does not have the declared type."),
    ("ANA502", "not an array",
     "This value must be an array (a transform's input, an `each` target)."),
    ("ANA503", "undeclared field",
     ("The reference selects a field the producing step does not declare; it always resolves "
     "to nothing. `$steps.<id>.output.<field>` must name a declared output of the step.")),
    ("ANA504", "field of an array",
     ("The value is an array (e.g. the output of a step with `each`); selecting a named field "
     "of it always resolves to nothing. Index it or use a transform.")),
)

# --- translation (flowc translate, translation/) ----------------------------
_TRANSLATION = code_table(
    shared_examples.EXAMPLES,
    ("TRN001", "one workflow of several translated",
     ("The document holds several workflows (a `workflows:` list, or several blocks of an "
      "instruction.md) and the target holds one workflow per document: the first is translated. "
      "A note, not a finding.")),
    ("TRN101", "no equivalent in the target dialect",
     ("The construct has no form in the target dialect, and no lowering to one it has (for example "
      "WorkflowSkill has no variables, functions or parallel branches; aevatar has no guards or typed "
      "values). The closest form is written with a `# flowc:` comment; with --strict the translation "
      "fails here. See docs/translation.md for the table of constructs by target.")),
    ("TRN102", "meaning differs in the target dialect",
     ("The construct exists in the target but means something else for some values, and flowc cannot "
      "rule those values out: WorkflowSkill's `==` finds 1 equal to \"1\" and CEL's does not, `<` "
      "compares numbers only in WorkflowSkill, `contains` is case-insensitive in WorkflowSkill, aevatar "
      "values are text. Declaring the operands' types (step outputs, workflow inputs) and defaults for "
      "inputs (an absent input is null) often lets flowc prove the meaning is the same.")),
    ("TRN103", "a policy works differently in the target",
     ("Retry, per-item failure and pacing rules differ between the dialects (WorkflowSkill retries tool "
      "errors only and has no jitter; dialect 3 retries every failure with +-20% jitter; aevatar retries "
      "every failure but a timeout). The policy is written in the target's terms.")),
    ("TRN104", "the host is asked differently",
     ("The step becomes a host call of another capability, name or argument shape in the target (an "
      "aevatar llm_call asks the host for `llm`/<role> with the role's prompt; WorkflowSkill can only "
      "call tools). The host must answer the translated workflow under the new name.")),
    ("TRN201", "placeholder text",
     ("A note: dialect-3 templates write a value as JSON and WorkflowSkill templates with JavaScript's "
      "String(); they agree on every JSON value.")),
    ("TRN202", "concurrency written sequentially",
     ("A note: the source runs items or branches on several lanes; the target runs them one after "
      "another, which is one order the source may run them in.")),
)

# --- host config (flowc check --config, flowc/hosts) -----------------------------
_HOST = code_table(
    shared_examples.EXAMPLES,
    ("HST001", "host call the config does not grant",
     ("`flowc check --config host.toml`: the step calls the host for a name no provider of the host "
      "config answers: no MCP server has the tool (`tool: X`, an aevatar tool_call or connector_call, a "
      "dialect-3 `mcp.tool` or `tool`), the server or the LLM profile is not configured, or an `http` "
      "step has no [http] section. A run would fail at this call; add the server, list the tool, or "
      "route the name in [routes] (docs/hosts.md).")),
    ("HST002", "tool name on several MCP servers",
     ("`flowc check --config host.toml`: two or more MCP servers of the host config have a tool of this "
      "name, so the bare name does not say which one to call. Name it `<server>.<tool>` in the workflow, "
      "or route the name in the config's [routes] table.")),
)

# In the order docs/codes.md and `flowc explain` list them.
CODES: dict[str, CodeInfo] = combined(_INPUT, workflowskill_codes.CODES, _ANALYSES, instruction_codes.CODES,
                                      aevatar_codes.CODES, _TRANSLATION, _HOST)


def explain(code: str) -> CodeInfo | None:
    return CODES.get(code.upper())
