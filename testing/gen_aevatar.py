"""Hypothesis strategies for valid aevatar documents.

A document is a ``name``, some ``roles`` and a list of steps run in document
order. The generator builds it from *blocks*: a plain step that falls
through to the next one, or a branch (conditional, switch) followed by its
arms, each arm routing with ``next`` to the join step after them, so no arm
falls through into a sibling (AEV303) and the last step never has ``next``
(AEV301). Parameters are strings (the engine reads every parameter as text)
with ``${}`` templates over ``input``, earlier steps' outputs, assigned
variables and the engine's functions; a step only reads steps that run
before it on every path.

Shrinking: blocks are drawn one at a time with a "one more?" choice first,
and every optional field shrinks away, towards one ``llm_call`` step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowc.testing.gen_workflowskill import sometimes
from flowc.testing.yamltext import dump
from hypothesis import strategies as st

DIALECT = "aevatar"

STEP_TYPES = ("llm_call", "tool_call", "assign", "transform", "conditional", "switch", "guard", "delay",
              "foreach", "parallel", "while", "emit", "checkpoint")
FEATURES = frozenset(STEP_TYPES) | frozenset({"roles", "retry", "on_error", "templates", "functions",
                                              "timeout"})
ROLE_IDS = ("analyst", "writer")
TOOL_NAMES = ("t0", "t1", "search")
VARIABLES = ("topic", "draft", "count")
TRANSFORM_OPS = ("identity", "uppercase", "lowercase", "trim", "count", "count_words", "take", "distinct",
                 "reverse_lines", "join", "split")
SWITCH_KEYS = ("urgent", "normal", "later")
ANSWERS = ("urgent", "normal", "true", "false", "3", "a,b", "", "hello world", "line one\nline two",
           '["x", "y"]', '{"k": "v"}')


@dataclass
class Model:
    features: frozenset
    roles: list[str] = field(default_factory=list)
    readable: list[str] = field(default_factory=list)      # steps that ran before, on every path
    variables: list[str] = field(default_factory=list)     # assigned before, on every path
    ids: set[str] = field(default_factory=set)
    count: int = 0

    def new_id(self, draw) -> str:
        sid = f"s{self.count}"
        self.count += 1
        self.ids.add(sid)
        return sid


# ------------------------------------------------------------------ templates
@st.composite
def template(draw, model: Model) -> str:
    """A parameter value: text, ``${input}``, a step output, a variable, or a function call."""
    f = model.features
    leaves = ["input"] + [f"steps.{s}.output" for s in model.readable] + list(model.variables)
    choices = ["text"] + (["ref", "mixed"] if "templates" in f else []) + (["call"] if "functions" in f else [])
    kind = draw(st.sampled_from(choices))
    if kind == "text":
        return draw(st.sampled_from(["Summarize:", "Reply with one word.", "ok", "a,b,c", "x y"]))
    leaf = draw(st.sampled_from(leaves))
    if kind == "ref":
        return "${" + leaf + "}"
    if kind == "mixed":
        return draw(st.sampled_from(["Topic: ", "Re: ", ""])) + "${" + leaf + "}" + draw(st.sampled_from(
            [" please", "!", ""]))
    other = draw(st.sampled_from(leaves))
    call = draw(st.sampled_from([
        "concat({a}, ' / ', {b})", "upper({a})", "lower({a})", "trim({a})", "length({a})",
        "if(isblank({a}), 'empty', {b})", "add(length({a}), 1)", "eq({a}, 'urgent')", "not(isblank({a}))",
        "json({a})", "and(gt(length({a}), 2), lt(length({b}), 50))",
    ]))
    return "${" + call.format(a=leaf, b=other) + "}"


# ------------------------------------------------------------------ steps
def _role(draw, model: Model, step: dict) -> None:
    if model.roles and sometimes(draw, 2):
        step["target_role"] = draw(st.sampled_from(model.roles))


@st.composite
def _plain_step(draw, model: Model, kind: str, sid: str) -> dict:
    f = model.features
    step: dict = {"id": sid, "type": kind}
    params: dict = {}
    if kind == "llm_call":
        _role(draw, model, step)
        if sometimes(draw, 2):
            params["prompt_prefix"] = draw(template(model))
    elif kind == "tool_call":
        params["tool"] = draw(st.sampled_from(TOOL_NAMES))
    elif kind == "assign":
        var = draw(st.sampled_from(VARIABLES))
        params["target"] = var
        params["value"] = draw(st.one_of(st.just("$input"), template(model)))
    elif kind == "transform":
        op = draw(st.sampled_from(TRANSFORM_OPS))
        params["op"] = op
        if op == "take" and sometimes(draw, 2):
            params["n"] = draw(st.sampled_from(["1", "2", "5"]))
        if op in ("join", "split") and sometimes(draw, 2):
            params["separator"] = draw(st.sampled_from([",", ";", "|"]))
    elif kind == "guard":
        params["check"] = draw(st.sampled_from(["not_empty", "contains", "max_length", "regex"]))
        if params["check"] == "contains":
            params["keyword"] = draw(st.sampled_from(["a", "urgent", "x"]))
        elif params["check"] == "max_length":
            params["max"] = draw(st.sampled_from(["3", "100"]))
        elif params["check"] == "regex":
            params["pattern"] = draw(st.sampled_from(["^[a-z]+$", "\\d", "."]))
    elif kind == "delay":
        params["duration_ms"] = draw(st.sampled_from(["0", "10", "250"]))
    elif kind == "foreach":
        params["delimiter"] = draw(st.sampled_from([",", ";", "|"]))
        params["sub_step_type"] = draw(st.sampled_from(["llm_call", "transform"]))
        if params["sub_step_type"] == "llm_call" and model.roles and sometimes(draw, 2):
            params["sub_target_role"] = draw(st.sampled_from(model.roles))
        if params["sub_step_type"] == "transform":
            params["sub_param_op"] = draw(st.sampled_from(["uppercase", "trim", "count"]))
    elif kind == "parallel":
        if model.roles and sometimes(draw, 2):
            params["workers"] = ",".join(draw(st.lists(st.sampled_from(model.roles), min_size=1, max_size=2,
                                                       unique=True)))
        else:
            params["parallel_count"] = draw(st.sampled_from(["1", "2"]))
    elif kind == "while":
        params["step"] = draw(st.sampled_from(["llm_call", "transform"]))
        params["max_iterations"] = draw(st.sampled_from(["1", "2", "3"]))
        params["condition"] = draw(st.sampled_from(["${lt(iteration, 2)}", "false", "${isblank(output)}",
                                                    "true"]))
        if params["step"] == "transform":
            params["sub_param_op"] = "uppercase"
    elif kind == "emit":
        params["event_type"] = draw(st.sampled_from(["done", "progress"]))
        if sometimes(draw, 2):
            params["payload"] = draw(template(model))
    elif kind == "checkpoint":
        params["name"] = draw(st.sampled_from(["cp", "after_fetch"]))
    if params:
        step["parameters"] = params
    if kind in ("llm_call", "tool_call", "foreach", "parallel") and "retry" in f and sometimes(draw, 4):
        step["retry"] = {"max_attempts": draw(st.integers(1, 3)),
                         "backoff": draw(st.sampled_from(["fixed", "exponential"])),
                         "delay_ms": draw(st.sampled_from([0, 10, 100]))}
    if kind in ("llm_call", "tool_call", "guard") and "on_error" in f and sometimes(draw, 4):
        step["on_error"] = draw(st.sampled_from([{"strategy": "skip"}, {"strategy": "fail"},
                                                 {"strategy": "skip", "default_output": "fallback"}]))
    if kind in ("llm_call", "tool_call") and "timeout" in f and sometimes(draw, 6):
        step["timeout_ms"] = draw(st.sampled_from([1000, 30000]))
    return step


@st.composite
def _block(draw, model: Model, kinds: list[str], room: int) -> list[dict]:
    """One plain step, or a branch with its arms and the join after them."""
    plain = [k for k in kinds if k not in ("conditional", "switch")] or ["llm_call"]
    branchy = [k for k in kinds if k in ("conditional", "switch")]
    kind = draw(st.sampled_from(plain + (branchy if room >= 3 else [])))
    if kind not in ("conditional", "switch"):
        sid = model.new_id(draw)
        step = draw(_plain_step(model, kind, sid))
        model.readable.append(sid)
        if kind == "assign":
            model.variables.append(step["parameters"]["target"])
        return [step]
    sid = model.new_id(draw)
    step: dict = {"id": sid, "type": kind}
    if kind == "conditional":
        step["parameters"] = {"condition": draw(st.sampled_from(["urgent", "true", "${input}", "a", "false"]))}
        keys = ["true", "false"]
    else:
        keys = draw(st.lists(st.sampled_from(SWITCH_KEYS), min_size=1, max_size=min(2, room - 2), unique=True))
        step["parameters"] = {"on": draw(st.sampled_from(["${input}", "${trim(input)}"]))}
        keys = keys + ["_default"]
    model.readable.append(sid)
    # Arms: a key routes to a fresh arm step, or straight to the join.
    arms: list[dict] = []
    routes: dict[str, str] = {}
    join_id = f"j{model.count}"   # renamed below once the join is drawn
    budget = max(1, room - 2)
    saved_readable, saved_vars = list(model.readable), list(model.variables)
    for key in keys:
        if len(arms) < budget and (key != "false" or sometimes(draw, 2)):
            arm_id = model.new_id(draw)
            arm_kind = draw(st.sampled_from(plain))
            if arm_kind == "assign":
                arm_kind = "llm_call"  # a variable assigned in one arm is not assigned on every path
            arm = draw(_plain_step(model, arm_kind, arm_id))
            arm["next"] = join_id
            arms.append(arm)
            routes[key] = arm_id
            model.readable, model.variables = list(saved_readable), list(saved_vars)
        else:
            routes[key] = join_id
    step["branches"] = routes
    join_kind = draw(st.sampled_from(plain))
    join = draw(_plain_step(model, join_kind, model.new_id(draw)))
    real_join = join["id"]
    for arm in arms:
        arm["next"] = real_join
    step["branches"] = {k: (real_join if v == join_id else v) for k, v in routes.items()}
    model.readable.append(real_join)
    if join_kind == "assign":
        model.variables.append(join["parameters"]["target"])
    return [step, *arms, join]


@st.composite
def documents(draw, max_steps: int = 6, features: frozenset | None = None) -> dict:
    """A valid aevatar workflow as plain data."""
    f = FEATURES if features is None else frozenset(features)
    kinds = [k for k in STEP_TYPES if k in f] or ["llm_call"]
    model = Model(f)
    doc: dict = {"name": "generated"}
    if "roles" in f:
        model.roles = draw(st.lists(st.sampled_from(ROLE_IDS), unique=True, max_size=2))
        if model.roles:
            doc["roles"] = [{"id": r, "system_prompt": f"You are the {r}."} for r in model.roles]
    steps: list[dict] = []
    max_steps = max(1, max_steps)
    while len(steps) < max_steps:
        if steps and draw(st.integers(0, 4)) == 0:
            break
        steps.extend(draw(_block(model, kinds, max_steps - len(steps))))
    doc["steps"] = steps
    return doc


def to_text(doc: dict, **_options) -> str:
    return dump(doc)


def file_name(text: str) -> str:
    return "workflow.yaml"


def text_options(draw, features: frozenset) -> dict:
    return {}


@st.composite
def texts(draw, max_steps: int = 6, features: frozenset | None = None) -> tuple[str, dict]:
    doc = draw(documents(max_steps, features))
    return to_text(doc), doc


# ------------------------------------------------------------------ running
ANSWER = st.one_of(
    st.sampled_from(ANSWERS).map(lambda a: {"output": a}),
    st.sampled_from(["down", "rate limited"]).map(lambda m: {"error": m}),
    st.just({"throw": "adapter exploded"}),
    st.just({"echo": True}),
)


def _callers(doc: dict) -> list[str]:
    keys = set()
    for step in doc.get("steps", []):
        params = step.get("parameters") or {}
        kind = step.get("type")
        if kind == "llm_call":
            keys.add(f"llm:{step.get('target_role', 'assistant')}")
        elif kind == "tool_call":
            keys.add(f"tool:{params.get('tool')}")
    return sorted(keys)


@st.composite
def host_scripts(draw, doc: dict) -> dict:
    """Answers for the workflow's LLM roles and tools (strings the branches
    route on, errors, failures, sequences), and a default for every other
    call (``*``)."""
    script = {}
    for key in _callers(doc):
        script[key] = draw(st.lists(ANSWER, min_size=2, max_size=4)) if sometimes(draw, 3) else draw(ANSWER)
    script["*"] = draw(st.sampled_from([{"output": "ok"}, {"echo": True}, {"output": "urgent"}]))
    return script


@st.composite
def run_inputs(draw, doc: dict) -> dict:
    """The run prompt (``input``), and sometimes run parameters."""
    out = {"input": draw(st.sampled_from(ANSWERS))}
    if sometimes(draw, 4):
        out[draw(st.sampled_from(VARIABLES))] = draw(st.sampled_from(ANSWERS))
    return out
