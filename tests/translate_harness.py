"""Running a workflow and its translation side by side (translation tests).

A run is compared by what the outside world sees: the outcome (success /
failure), the workflow outputs of a successful run, and the host calls in
order. Two conventions differ between the dialects and are compared as
the same thing, not hidden:

- a dialect-3 ``tool`` step hands the host its arguments as the field
  ``args`` (``{"args": {...}}``); a WorkflowSkill tool step hands them as
  they are. :class:`ArgsHost` unwraps them before the script sees them;
- WorkflowSkill ends a run ``success``, dialect 3 ``completed``;
- a dialect-3 run that finishes without an output has outputs ``null``, a
  WorkflowSkill run of a workflow that declares no outputs ``{}``;
- an aevatar ``llm_call`` asks ``llm:<role>`` with ``{prompt, role: {id,
  system_prompt, model, ...}}``, a dialect-3 ``agent`` step ``llm:agent``
  with ``{instruction, system, model}`` (docs/host.md, "LLM requests"):
  :class:`RoleHost` presents the second as the first, for the role with
  that system prompt and model.
"""

from __future__ import annotations

import json

from flowc.backends.python import compile_workflow, load_module
from flowc.host import ScriptedHost
from flowc.pipeline import driver, translate

OUTCOME = {"success": "ok", "completed": "ok", "failed": "failed"}


class ArgsHost:
    """A scripted host that sees a dialect-3 tool's ``args`` as the arguments."""

    def __init__(self, script: dict) -> None:
        self.inner = ScriptedHost(script)

    @property
    def calls(self):
        return self.inner.calls

    @property
    def sleeps(self):
        return self.inner.sleeps

    def call(self, capability, name, args):
        if capability == "tool" and isinstance(args, dict) and set(args) == {"args"} \
                and isinstance(args["args"], dict):
            args = args["args"]
        return self.inner.call(capability, name, args)

    def sleep(self, ms):
        self.inner.sleep(ms)


class RoleHost(ArgsHost):
    """Answers a dialect-3 ``agent`` call as the aevatar ``llm_call`` of the
    role (of ``source``, an aevatar workflow) with its system prompt and model."""

    def __init__(self, script: dict, source) -> None:
        super().__init__(script)
        from flowc.ir import expr as E

        self.roles = {}
        for actor in source.actors:   # what the aevatar kernel hands the host under `role`
            config = {"id": actor.id}
            for a in actor.attrs:
                if isinstance(a.value, E.Literal) and isinstance(a.value.value, str):
                    config[a.name] = a.value.value
                elif isinstance(a.value, E.ListExpr):
                    config[a.name] = [i.value for i in a.value.items if isinstance(i, E.Literal)]
            self.roles.setdefault((config.get("system_prompt"), config.get("model")), (actor.id, config))

    def call(self, capability, name, args):
        if capability == "llm" and name == "agent" and set(args) <= {"instruction", "system", "model"}:
            role, config = self.roles.get((args.get("system"), args.get("model")), ("assistant", None))
            args = {"prompt": args["instruction"]} | ({"role": config} if config else {})
            return self.inner.call("llm", role, args)
        return super().call(capability, name, args)


def run(workflow, inputs: dict, script: dict, source=None) -> dict:
    """``source``: the aevatar workflow ``workflow`` was translated from."""
    if source is not None:
        host = RoleHost(script, source)
    else:
        host = ArgsHost(script) if workflow.semantics == "instruction" else ScriptedHost(script)
    record = load_module(compile_workflow(workflow)).run(dict(inputs), host)
    calls = [(c["capability"], c["name"], json.dumps(c["args"], sort_keys=True)) for c in host.calls]
    outputs = record["outputs"] if record["status"] in ("success", "completed") else None
    if record["status"] == "completed" and outputs is None:
        outputs = {}  # a dialect-3 finish without an output: no outputs
    return {"outcome": OUTCOME.get(record["status"], record["status"]),
            "outputs": outputs,
            "calls": calls, "error": record.get("error")}


def translated(workflow, target: str):
    """(emission, the translation compiled back) for ``workflow`` in ``target``."""
    emission = translate.emit(workflow, target)
    name = "workflow" + translate.output_suffix(target, None)
    back = driver.compile_text(emission.text, name, target)
    return emission, back


def same_runs(a: dict, b: dict) -> list[str]:
    """What differs between two compared runs (empty: nothing)."""
    problems = []
    if a["outcome"] != b["outcome"]:
        problems.append(f"outcome {a['outcome']} != {b['outcome']} ({a['error']} / {b['error']})")
    if a["calls"] != b["calls"]:
        problems.append(f"calls {a['calls']} != {b['calls']}")
    if a["outputs"] != b["outputs"]:
        problems.append(f"outputs {a['outputs']} != {b['outputs']}")
    return problems
