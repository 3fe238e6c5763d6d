"""aevatar -> dialect 3: constructs the translation writes exactly.

Each case runs the aevatar source and its translation with the same
scripted host (flowc.testing.translation.cross_dialect: the same outcome,
outputs and host calls, an ``llm_call`` and its ``agent`` step compared as
one request) and checks that the translation claims to be exact.
"""

from __future__ import annotations

import textwrap

from flowc import driver, translate
from flowc.testing.translation import cross_dialect

PROMPTS = ("", "urgent: the server is down", "  BUG  ")
# An LLM may answer text, JSON data, nothing, or fail.
ANSWERS = ("fine", {"k": [1, 2.5, "é"]}, [1, True], None, 7, True)


def _workflow(text: str):
    result = driver.compile_text(textwrap.dedent(text), "flow.yaml", "aevatar")
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics if d.is_error]
    return result.workflow


def _exact_and_same(text: str, scripts: list[dict]) -> str:
    wf = _workflow(text)
    emission = translate.emit(wf, "instruction")
    assert emission.verdict != "approximate", [d.message for d in emission.diagnostics]
    for script in scripts:
        for prompt in PROMPTS:
            assert cross_dialect(wf, "instruction", {"input": prompt}, script)
    return emission.text


def test_an_llm_answer_of_any_shape_becomes_text():
    """aevatar makes every answer text (data as compact JSON, null as '');
    the translation passes the agent's answer through a template's text."""
    text = _exact_and_same("""\
        name: chain
        steps:
          - id: first
            type: llm_call
          - id: second
            type: llm_call
        """, [{"llm:assistant": [{"output": a}, {"output": "done"}]} for a in ANSWERS]
        + [{"llm:assistant": {"echo": True}}, {"llm:assistant": {"error": "down"}}])
    assert "text: \"{{ steps.first_answer.output }}\"" in text
