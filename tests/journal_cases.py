"""Workflows of the three dialects, with inputs and a host script without
lists (every answer depends on the call only), for the journal's crash and
resume tests. The files are copies of the corpus (see each file's header)
and flowc's own examples."""

from __future__ import annotations

from pathlib import Path

from flowc.host import ScriptedHost
from flowc.pipeline import driver

DATA = Path(__file__).resolve().parent / "data"

_ANSWERS = {"human:approval": True, "human:input": "yes", "human:ask": {"approved": True},
            "*": {"output": {"k": "v", "items": ["a", "b"], "ok": True, "text": "fine", "version": "1.2.3"}}}

# (file under tests/data, inputs, extra script entries)
CASES = [
    ("instruction/06-instruction-md-deploy-runbook.workflows.md", {"release": "v2", "environment": "production"},
     {"llm:agent": "ok"}),
    ("instruction/03-agentd-e2e-control-flow.yaml", {}, {}),
    ("aevatar/aevatarAI__aevatar/workflows/marketing_campaign_orchestrator.yaml", {"input": "launch"}, {}),
    ("aevatar/aevatarAI__aevatar/apps/sisyphus/workflows/sisyphus_research.yaml", {"input": "topic"}, {}),
    ("aevatar/aevatarAI__aevatar/workflows/shared-research-iteration.yaml", {"input": "topic"}, {}),
    ("graph/release-train.md", {"repo": "flowc", "since_tag": "v1.0"}, {}),
    ("workflowskill/examples/summarize-hacker-news.md", {}, {}),
    ("workflowskill/fixtures/retry-backoff.md", {}, {"flaky_api": {"error": "try later"}}),
]


def compiled(rel: str):
    result = driver.compile_file(str(DATA / rel))
    assert result.ok and result.workflow is not None, rel
    return result.workflow


def script_for(workflow, extra: dict) -> dict:
    roles = {f"llm:{a.id}": "urgent" for a in workflow.actors}
    return {**_ANSWERS, **roles, **extra}


def program(workflow, backend: str):
    if backend == "vm":
        from flowc.backends import vm

        return vm.load(vm.compile_workflow(workflow))
    from flowc.backends.python import compile_workflow, load_module

    return load_module(compile_workflow(workflow))


def reference(rel: str, inputs: dict, extra: dict, backend: str = "python") -> dict:
    """The record of one uninterrupted run without a journal."""
    workflow = compiled(rel)
    return program(workflow, backend).run(dict(inputs), ScriptedHost(script_for(workflow, extra)))


def backends(workflow) -> tuple[str, ...]:
    """The backends whose program runs on the kernel (has ``new_run``): both,
    except for WorkflowSkill bytecode while its VM runs its own interpreter."""
    return ("python", "vm") if hasattr(program(workflow, "vm"), "new_run") else ("python",)
