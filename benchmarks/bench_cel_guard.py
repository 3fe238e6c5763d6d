"""A `when` guard, per evaluation: the generated Python module, the VM, and a
hand-written Python lambda, side by side.

    python benchmarks/bench_cel_guard.py [--number N] [--repeat K]

The guards are those of a small instruction workflow, compiled the way
`flowc run` compiles them: the Python backend's generated function (CEL
compiled to Python over cel) and the VM's closure over its expression code
(decoded and verified at load, run by the fuel-bounded expression machine). Each
is taken out of the compiled plan and called on the same environment; the
hand-written lambda does the same work in plain Python (without CEL's
checks: int64 overflow, error absorption, strict types). Every variant is
first checked to give the same answer. Reported per guard: the median and
the minimum over K runs of N evaluations, in nanoseconds per evaluation,
and the ratio of each median to the lambda's.
"""

from __future__ import annotations

import argparse
import statistics
import time

from flowc.backends.python import compile_workflow, load_module
from flowc.backends.vm import compile_workflow as compile_bytecode
from flowc.backends.vm import load as load_program
from flowc.pipeline import driver

WORKFLOW = """\
name: release
steps:
  start: { kind: manual }
  fetch: { kind: tool, depends_on: start, name: scores }
  simple:
    kind: noop
    depends_on: fetch
    when: "inputs.environment == 'production'"
  compound:
    kind: noop
    depends_on: fetch
    when: >-
      inputs.environment == 'production' && size(steps.fetch.output.items) > 3
      && steps.fetch.output.items.exists(i, i.score >= 90)
  done: { kind: finish, depends_on: [simple, compound] }
"""

ENV = {
    "inputs": {"environment": "production"},
    "steps": {"fetch": {"status": "done", "error": None, "attempt": 1, "output": {
        "items": [{"name": f"c{i}", "score": 40 + 5 * i} for i in range(12)]}}},
    "vars": {},
}

LAMBDAS = {
    "simple": lambda env: env["inputs"]["environment"] == "production",
    "compound": lambda env: (env["inputs"]["environment"] == "production"
                             and len(env["steps"]["fetch"]["output"]["items"]) > 3
                             and any(i["score"] >= 90 for i in env["steps"]["fetch"]["output"]["items"])),
}


def guards():
    result = driver.compile_text(WORKFLOW, "release.yaml", "instruction")
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]
    module = load_module(compile_workflow(result.workflow))
    program = load_program(compile_bytecode(result.workflow))

    def by_id(plan):
        return {n["id"]: n for n in plan["nodes"]}

    py_nodes, vm_nodes = by_id(module.PLAN), by_id(program.plan)
    out = {}
    for name, hand_written in LAMBDAS.items():
        out[name] = {"generated module": py_nodes[name]["guard"], "VM": vm_nodes[name]["guard"],
                     "hand-written lambda": hand_written}
    return out


def per_evaluation(fn, env, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn(env)
    return (time.perf_counter() - start) / number * 1e9


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--number", type=int, default=20000, help="evaluations per run (default 20000)")
    parser.add_argument("--repeat", type=int, default=15, help="runs per variant (default 15)")
    args = parser.parse_args(argv)
    for guard, variants in guards().items():
        answers = {name: fn(ENV) for name, fn in variants.items()}
        assert len(set(answers.values())) == 1 and answers["VM"] is True, answers
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.repeat):   # interleaved, so drift hits every variant alike
            for name, fn in variants.items():
                times[name].append(per_evaluation(fn, ENV, args.number))
        base = statistics.median(times["hand-written lambda"])
        print(f"guard {guard!r} ({args.repeat} runs x {args.number} evaluations)")
        print(f"  {'variant':<22} {'median ns':>10} {'min ns':>10} {'x lambda':>9}")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"  {name:<22} {med:>10.0f} {min(ts):>10.0f} {med / base:>9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
