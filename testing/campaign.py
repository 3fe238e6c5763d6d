"""``flowc fuzz``: a property-based fuzzing campaign against flowc itself.

A campaign draws three kinds of examples with the strategies of
:mod:`flowc.testing.strategies` and checks the properties of
:mod:`flowc.testing.properties` on each:

- *valid* runnable workflows: they check clean, both backends give the
  same run record, the IR and bytecode round-trip, compilation is
  deterministic (and, where flowc translates, translation round-trips);
- *mutants*: each mutation operator in turn, each mutant must be reported
  with exactly its code (the mutation score);
- *malformed* input: random bytes, random YAML, damaged workflows; flowc
  must report findings, never raise and never hang;
- with ``--hostile``, only *hostile* workflows: generated workflows with
  injection payloads in every text field and a hostile file name
  (:mod:`flowc.testing.hostile`); no payload may run, no generated module
  may be anything but Python, nothing may raise.

Hypothesis drives each kind with a fixed seed, so a campaign replays
exactly with the same ``--seed`` and ``--jobs``. When a property fails,
hypothesis shrinks the example; the minimal one is written to the output
directory as a file of its dialect (with the inputs and host script for a
run), the property is retired for the rest of that kind, and the campaign
goes on.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import queue as queue_module
import signal
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

from flowc.testing import mutants, properties, translation
from flowc.testing import strategies as wst
from flowc.testing.properties import PROPERTIES, PropertyFailure
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

KINDS = ("valid", "mutant", "malformed")
HOSTILE_KINDS = ("hostile",)
VALID_PROPERTIES = ("valid", "backend-equivalence", "ir-round-trip", "bytecode-round-trip", "determinism",
                    "translate-round-trip", "cross-dialect")
DEFAULT_TIMEOUT = 30.0


@dataclass
class Failure:
    prop: str
    kind: str
    message: str
    crash: bool
    reproducer: str | None = None
    operator: str | None = None

    def as_json(self) -> dict:
        return {"property": self.prop, "kind": self.kind, "message": self.message, "crash": self.crash,
                "reproducer": self.reproducer, "operator": self.operator}


@dataclass
class Result:
    """What a campaign (or one worker's share of it) found."""

    dialect: str
    examples: Counter = field(default_factory=Counter)            # kind -> examples tried
    checked: Counter = field(default_factory=Counter)             # property -> examples it held for
    mutants: dict = field(default_factory=dict)                   # operator -> [caught, tried]
    failures: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)                   # property -> why

    def merge(self, other: Result) -> None:
        self.examples.update(other.examples)
        self.checked.update(other.checked)
        for op, (caught, tried) in other.mutants.items():
            c, t = self.mutants.get(op, (0, 0))
            self.mutants[op] = (c + caught, t + tried)
        # Workers with different seeds may shrink to the same reproducer.
        seen = {(f.prop, f.reproducer) for f in self.failures}
        self.failures.extend(f for f in other.failures if (f.prop, f.reproducer) not in seen)
        self.skipped.update(other.skipped)

    @property
    def total(self) -> int:
        return sum(self.examples.values())

    def mutation_score(self) -> tuple[int, int]:
        caught = sum(c for c, _ in self.mutants.values())
        tried = sum(t for _, t in self.mutants.values())
        return caught, tried


# ------------------------------------------------------------------ time limit
class Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float | None):
    """Raise :class:`Hang` in the block after ``seconds`` (main thread only)."""
    if not seconds or threading.current_thread() is not threading.main_thread() or not hasattr(signal,
                                                                                                "setitimer"):
        yield
        return

    def alarm(signum, frame):
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _limited(fn, timeout: float | None, what: str):
    try:
        with time_limit(timeout):
            return fn()
    except Hang:
        raise PropertyFailure("never-crash", f"{what} did not finish within {timeout:g}s (a hang)",
                              crash=True) from None


# ------------------------------------------------------------------ checks per kind
def _source_dialect(dialect: str) -> str | None:
    return None if dialect == "ir" else dialect


def check_valid_case(case: wst.Runnable, enabled: set[str], checked: Counter,
                     skipped: dict | None = None) -> None:
    """Every valid-workflow property that is still enabled. A property that
    does not apply to the dialect (the VM does not run it) is retired with
    its reason in ``skipped``."""
    text, name, dialect = str(case.text), case.file_name, case.dialect
    result = properties.check_valid(text, name, dialect)
    checked["valid"] += 1
    workflow = result.workflow

    def run(prop, fn, *args):
        if prop not in enabled:
            return None
        try:
            value = fn(*args)
        except properties.Unsupported as why:
            if skipped is not None:
                skipped[prop] = why.reason
            return None
        checked[prop] += 1
        return value

    if properties.vm_unsupported(workflow) is not None:
        # The Python module must still run without raising.
        properties.python_runs(workflow, case.inputs, case.host_script)
        checked["never-crash"] += 1
    run("backend-equivalence", properties.backend_equivalence, workflow, case.inputs, case.host_script)
    run("ir-round-trip", properties.ir_round_trip, workflow)
    run("bytecode-round-trip", properties.bytecode_round_trip, workflow)
    run("determinism", properties.determinism, text, name, dialect)
    run("translate-round-trip", properties.translate_round_trip, workflow, dialect, name)
    if "cross-dialect" in enabled and translation.inputs_have_declared_shapes(workflow, case.inputs):
        compared = [properties.cross_dialect(workflow, target, case.inputs, case.host_script)
                    for target in properties.translation_targets(workflow)]
        if any(compared):
            checked["cross-dialect"] += 1


def check_malformed_case(text: wst.WorkflowText, checked: Counter) -> None:
    """Never crash: with the dialect detected, and with it given."""
    properties.check_never_crashes(str(text), text.file_name, None)
    properties.check_never_crashes(str(text), text.file_name, text.dialect)
    checked["never-crash"] += 1


# ------------------------------------------------------------------ reproducers
def _extension(name: str) -> str:
    ext = os.path.splitext(name)[1]
    return ext if ext else ".txt"


def write_reproducer(out_dir: str, dialect: str, failure: PropertyFailure, example) -> str:
    """Write the (shrunk) example; return the path of the main file."""
    os.makedirs(out_dir, exist_ok=True)
    if example is None:
        example = ""
    source = getattr(getattr(example, "text", example), "dialect", None) or dialect
    text = str(getattr(example, "text", example))
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    name = getattr(example, "file_name", None) or getattr(getattr(example, "text", None), "file_name", "f.yaml")
    base = os.path.join(out_dir, f"{source}-{failure.prop}-{digest}")
    path = base + _extension(name)
    with open(path, "w", encoding="utf-8", errors="surrogatepass", newline="") as fh:
        fh.write(text)
    if isinstance(example, wst.Runnable) or hasattr(example, "host_script"):
        with open(base + ".inputs.json", "w", encoding="utf-8") as fh:
            json.dump(example.inputs, fh, indent=2, sort_keys=True, default=repr)
            fh.write("\n")
        with open(base + ".host.json", "w", encoding="utf-8") as fh:
            json.dump(example.host_script, fh, indent=2, sort_keys=True, default=repr)
            fh.write("\n")
    with open(base + ".failure.txt", "w", encoding="utf-8") as fh:
        fh.write(f"property: {failure.prop}\n")
        if isinstance(example, wst.Mutant):
            fh.write(f"mutant: {example.operator} (expects {example.code}): {example.description}\n")
        fh.write(f"dialect: {getattr(example, 'dialect', dialect)}\n\n{failure.message}\n")
    return path


# ------------------------------------------------------------------ one kind
def _settings(n: int):
    return settings(max_examples=max(1, n), database=None, deadline=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False, print_blob=False)


def _drive(strategy, check, n: int, run_seed: int, tick, checked: Counter) -> tuple[int, tuple | None]:
    """Run ``check(example, counter)`` on up to ``n`` examples. Returns
    (examples generated, (failure, shrunk example) or None). Properties
    counted by ``check`` while hypothesis generates (not while it shrinks)
    are added to ``checked``."""
    state = {"generated": 0, "failing": False, "last": None}

    def test(example):
        generating = not state["failing"]
        if generating:
            state["generated"] += 1
            tick()
        counter: Counter = Counter()
        try:
            check(example, counter)
        except PropertyFailure as failure:
            state["failing"] = True
            state["last"] = (failure, example)
            raise
        except Exception as exc:
            state["failing"] = True
            wrapped = PropertyFailure("never-crash", f"unexpected {type(exc).__name__}: {exc}", crash=True)
            state["last"] = (wrapped, example)
            raise wrapped from exc
        finally:
            if generating:
                checked.update(counter)

    runner = seed(run_seed)(_settings(n)(given(strategy)(test)))
    try:
        runner()
    except PropertyFailure:
        pass
    except Exception:
        if state["last"] is None:
            raise
    return state["generated"], state["last"]


def run_kind(dialect: str, kind: str, n: int, run_seed: int, out_dir: str, max_steps: int = 6,
             timeout: float | None = DEFAULT_TIMEOUT, tick=lambda: None) -> Result:
    """Run ``n`` examples of one kind; the share of one worker."""
    result = Result(dialect)
    if n <= 0:
        return result
    if kind == "valid":
        _run_valid(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick)
    elif kind == "hostile":
        _run_hostile(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick)
    elif kind == "mutant":
        _run_mutants(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick)
    else:
        _run_malformed(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick)
    return result


def enabled_valid_properties(dialect: str) -> tuple[set[str], dict[str, str]]:
    enabled = set(VALID_PROPERTIES)
    skipped = {}
    why = properties.translation_unavailable(dialect)
    if why:
        enabled -= {"translate-round-trip", "cross-dialect"}
        skipped = {"translate-round-trip": why, "cross-dialect": why}
    return enabled, skipped


def _record(result: Result, kind: str, dialect: str, out_dir: str, failure: PropertyFailure, example,
            operator: str | None = None) -> None:
    path = write_reproducer(out_dir, dialect, failure, example)
    result.failures.append(Failure(failure.prop, kind, failure.message, failure.crash, path, operator))


def _run_valid(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick) -> None:
    enabled, skipped = enabled_valid_properties(dialect)
    result.skipped.update(skipped)
    strategy = wst.runnable_workflows(dialect, max_steps=max_steps)
    remaining, attempt = n, 0
    while remaining > 0 and enabled:
        def check(case, counter):
            _limited(lambda: check_valid_case(case, enabled, counter, result.skipped), timeout,
                     "checking a workflow")

        generated, failed = _drive(strategy, check, remaining, run_seed + attempt, tick, result.checked)
        result.examples["valid"] += generated
        remaining -= generated
        attempt += 1
        if failed is None:
            break
        failure, example = failed
        _record(result, "valid", dialect, out_dir, failure, example)
        if failure.prop == "valid" or failure.prop not in enabled:
            break  # nothing else can be checked on invalid generated workflows
        enabled.discard(failure.prop)
    if "cross-dialect" in enabled and not result.checked.get("cross-dialect"):
        result.skipped["cross-dialect"] = "no translation of these workflows claimed to be exact"


def _run_mutants(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick) -> None:
    """Every operator in turn. All its mutants are checked (the mutation
    score counts each one); when some escape, a second pass with the same
    seed lets hypothesis shrink one and that one is written out."""
    table = mutants.operators_for(dialect)
    if not table:
        result.skipped["mutant-caught"] = f"no mutation operators for {dialect}"
        return
    for i, (op, share) in enumerate(zip(table, split(n, len(table)))):
        if share == 0:
            continue
        strategy = wst.invalid_workflows(dialect, max_steps=max_steps, operators=[op.name])
        op_seed = run_seed + 7919 * (i + 1)
        escaped: list[PropertyFailure] = []

        def check(mutant, counter, escaped=escaped):
            try:
                _limited(lambda: properties.mutant_caught(mutant), timeout, "checking a mutant")
            except PropertyFailure as failure:
                escaped.append(failure)
                if failure.crash:
                    raise  # a crash is shrunk at once
                return
            counter["mutant-caught"] += 1
            counter["never-crash"] += 1

        generated, failed = _drive(strategy, check, share, op_seed, tick, result.checked)
        result.examples["mutant"] += generated
        caught = generated - len(escaped)
        c, t = result.mutants.get(op.name, (0, 0))
        result.mutants[op.name] = (c + caught, t + generated)
        if failed is None and escaped:
            def strict(mutant, counter):
                _limited(lambda: properties.mutant_caught(mutant), timeout, "checking a mutant")

            _, failed = _drive(strategy, strict, share, op_seed, lambda: None, Counter())
            if failed is None:  # not reproduced (it depended on state): report it unshrunk
                failed = (escaped[0], None)
        if failed is not None:
            _record(result, "mutant", dialect, out_dir, failed[0], failed[1], op.name)


def _run_malformed(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick) -> None:
    strategy = wst.malformed_texts(_source_dialect(dialect), max_steps=max_steps)

    def check(text, counter):
        _limited(lambda: check_malformed_case(text, counter), timeout, "compiling malformed input")

    _drive_with_reseeds(result, "malformed", dialect, out_dir, strategy, check, n,
                        seeds=(run_seed + 104729 * k for k in range(1, 4)), tick=tick)


def _run_hostile(result, dialect, n, run_seed, out_dir, max_steps, timeout, tick) -> None:
    from flowc.testing import hostile

    strategy = hostile.hostile_workflows(dialect, max_steps=max_steps)

    def check(case, counter):
        counts: Counter = Counter()
        try:
            _limited(lambda: hostile.check_hostile(case, counts), timeout, "checking a hostile workflow")
        finally:
            counter.update({f"hostile:{k}": v for k, v in counts.items()})
        counter["hostile-text"] += 1

    _drive_with_reseeds(result, "hostile", dialect, out_dir, strategy, check, n,
                        seeds=(run_seed + 15485863 * k for k in range(1, 6)), tick=tick)


def _drive_with_reseeds(result, kind, dialect, out_dir, strategy, check, n, seeds, tick) -> None:
    """Run ``n`` examples of ``strategy``; after a failure go on under the
    next seed, reporting each distinct failure once."""
    remaining, seen = n, set()
    for attempt_seed in seeds:
        if remaining <= 0:
            break
        generated, failed = _drive(strategy, check, remaining, attempt_seed, tick, result.checked)
        result.examples[kind] += generated
        remaining -= generated
        if failed is None:
            break
        key = _first_line(failed[0].message)
        if key not in seen:
            seen.add(key)
            _record(result, kind, dialect, out_dir, failed[0], failed[1])


# ------------------------------------------------------------------ the campaign
def split(n: int, parts: int) -> list[int]:
    return [n // parts + (1 if i < n % parts else 0) for i in range(parts)]


def plan(examples: int, hostile: bool = False) -> dict[str, int]:
    """How many examples of each kind: a third each, the rest valid (or,
    for a hostile campaign, all hostile)."""
    if hostile:
        return {"hostile": examples}
    third = examples // 3
    return {"valid": examples - 2 * third, "mutant": third, "malformed": third}


_QUEUE = None


def _init_worker(queue) -> None:
    global _QUEUE
    _QUEUE = queue


def _tick_queue() -> None:
    if _QUEUE is not None:
        _QUEUE.put(1)


def _worker(args) -> Result:
    dialect, kind, n, run_seed, out_dir, max_steps, timeout = args
    return run_kind(dialect, kind, n, run_seed, out_dir, max_steps, timeout, _tick_queue)


class Progress:
    """``fuzz: 1234/3000 examples, 0 failures, 45.1/s`` on stderr."""

    def __init__(self, total: int, stream=None, interval: float = 0.5) -> None:
        self.total = total
        self.done = 0
        self.failures = 0
        self.stream = stream or sys.stderr
        self.started = time.perf_counter()
        self.interval = interval
        self.last = 0.0
        self.tty = getattr(self.stream, "isatty", lambda: False)()
        self.shown = False

    def advance(self, k: int = 1) -> None:
        self.done += k
        now = time.perf_counter()
        if now - self.last >= (self.interval if self.tty else 5.0) and now - self.started >= 1.0:
            self.last = now
            self._show(now)

    def _show(self, now: float) -> None:
        rate = self.done / max(now - self.started, 1e-9)
        line = f"fuzz: {self.done}/{self.total} examples, {rate:.1f}/s"
        if self.tty:
            self.stream.write("\r" + line.ljust(60))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()


def campaign_tasks(dialect: str, examples: int, run_seed: int, jobs: int, out_dir: str, max_steps: int,
                   timeout: float | None, kinds: tuple[str, ...] = KINDS) -> list[tuple]:
    """The campaign's shares, in the order their results are merged: each
    kind split into ``jobs`` parts, part j drawn with its own seed. The seeds
    depend on ``run_seed`` and ``jobs`` only, never on where a share runs."""
    counts = plan(examples, kinds == HOSTILE_KINDS)
    tasks = []
    for kind in kinds:
        for j, share in enumerate(split(counts[kind], max(1, jobs))):
            if share:
                tasks.append((dialect, kind, share, run_seed * 1_000_003 + 97 * j, out_dir, max_steps, timeout))
    return tasks


def run_campaign(dialect: str, examples: int, run_seed: int, jobs: int = 1, out_dir: str = "fuzz-crashes",
                 max_steps: int = 6, timeout: float | None = DEFAULT_TIMEOUT, progress: Progress | None = None,
                 kinds: tuple[str, ...] = KINDS) -> Result:
    tasks = campaign_tasks(dialect, examples, run_seed, jobs, out_dir, max_steps, timeout, kinds)
    total = Result(dialect)
    tick = progress.advance if progress is not None else (lambda: None)
    if jobs <= 1:
        for task in tasks:
            total.merge(run_kind(*task, tick=tick))
    else:
        import multiprocessing

        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        queue = ctx.Queue()
        stop = threading.Event()

        def pump():
            while not stop.is_set() or not queue.empty():
                try:
                    queue.get(timeout=0.1)
                except queue_module.Empty:
                    continue
                tick()

        pumper = threading.Thread(target=pump, daemon=True)
        pumper.start()
        try:
            with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=(queue,)) as pool:
                for part in pool.map(_worker, tasks):
                    total.merge(part)
        finally:
            stop.set()
            pumper.join(timeout=2)
    if progress is not None:
        progress.finish()
    return total


# ------------------------------------------------------------------ the summary
def summary(result: Result, elapsed: float, run_seed: int, jobs: int) -> str:
    rate = result.total / elapsed if elapsed > 0 else math.inf
    jobs_text = f"{jobs} job{'s' if jobs != 1 else ''}"
    head = (f"flowc fuzz: {result.dialect}, {result.total} examples in {elapsed:.1f}s ({rate:.1f}/s), "
            f"seed {run_seed}, {jobs_text}")
    out = [head]
    labels = {"valid": "valid workflows", "mutant": "mutants", "malformed": "malformed inputs",
              "hostile": "hostile workflows"}
    for kind in HOSTILE_KINDS if result.examples.get("hostile") else KINDS:
        out.append(f"  {labels[kind]:<17} {result.examples.get(kind, 0)}")
    if result.examples.get("hostile"):
        c = result.checked
        out.append(f"hostile text: {c.get('hostile:tried', 0)} workflows tried, "
                   f"{c.get('hostile:refused', 0)} refused with findings, {c.get('hostile:compiled', 0)} "
                   f"compiled to Python ({c.get('hostile:bytecode', 0)} to bytecode too), run "
                   f"{c.get('hostile:run:python', 0)} on the Python backend and {c.get('hostile:run:vm', 0)} "
                   f"on the VM, {c.get('hostile:translated', 0)} translations")
    failed = {f.prop for f in result.failures}
    out.append("properties checked:")
    for prop, meaning in PROPERTIES.items():
        reason = result.skipped.get(prop)
        if prop in failed:
            status = "FAIL"
        elif result.checked.get(prop):
            status = "ok"
        elif prop in result.skipped:
            status = "skip"
        else:
            continue
        # Backends that run some dialects only: say so even when some ran.
        show = reason and (status == "skip" or prop in ("backend-equivalence", "bytecode-round-trip"))
        note = f"  ({reason})" if show else ""
        count = result.checked.get(prop, 0)
        out.append(f"  {status:<4}  {prop:<21} {count:>6}  {meaning}{note}")
    caught, tried = result.mutation_score()
    if tried:
        missed = sorted(op for op, (c, t) in result.mutants.items() if c < t)
        out.append(f"mutation score: {caught}/{tried} mutants caught ({100.0 * caught / tried:.1f}%), "
                   f"{len(result.mutants)} operators" + (f"; missed by: {', '.join(missed)}" if missed else ""))
    crashes = [f for f in result.failures if f.crash]
    findings = [f for f in result.failures if not f.crash]
    out.append(f"findings: {len(findings)}")
    for f in findings:
        out.append(f"  [{f.prop}] {_first_line(f.message)}")
        out.append(f"    reproducer: {f.reproducer}")
    out.append(f"crashes: {len(crashes)}")
    for f in crashes:
        out.append(f"  [{f.prop}] {_first_line(f.message)}")
        out.append(f"    reproducer: {f.reproducer}")
    if result.failures:
        hostile = " --hostile" if result.examples.get("hostile") else ""
        out.append(f"replay with: flowc fuzz --dialect {result.dialect}{hostile} --seed {run_seed} --jobs {jobs}")
    return "\n".join(out)


def _first_line(text: str) -> str:
    """The first line of a failure's message for the summary (a hostile
    example's text shown with flowc.termtext escapes)."""
    from flowc.termtext import shown

    line = shown(text.strip().splitlines()[0]) if text.strip() else ""
    return line if len(line) <= 160 else line[:157] + "..."


def as_json(result: Result, elapsed: float, run_seed: int, jobs: int) -> dict:
    caught, tried = result.mutation_score()
    return {
        "dialect": result.dialect, "seed": run_seed, "jobs": jobs, "elapsed_s": round(elapsed, 3),
        "examples": dict(result.examples), "checked": dict(result.checked), "skipped": result.skipped,
        "mutation_score": {"caught": caught, "tried": tried,
                           "operators": {op: {"caught": c, "tried": t} for op, (c, t) in result.mutants.items()}},
        "failures": [f.as_json() for f in result.failures],
    }


def fuzz_command(args, elsewhere=None) -> int:
    """The ``flowc fuzz`` subcommand (see cli.py for the options).
    ``elsewhere(args, seed, progress, kinds)`` runs the campaign somewhere
    else (a cluster) and gives (result, shares), or None after saying why
    it could not."""
    dialects = (*wst.dialects(), "ir")
    if args.dialect not in dialects:
        print(f"flowc: error: no generator for the {args.dialect} dialect yet (available: "
              f"{', '.join(dialects)})", file=sys.stderr)
        return 2
    hostile = bool(getattr(args, "hostile", False))
    if hostile and args.dialect not in wst.dialects():
        print(f"flowc: error: --hostile needs a source dialect ({', '.join(wst.dialects())})", file=sys.stderr)
        return 2
    if args.examples < 1:
        print("flowc: error: --examples must be at least 1", file=sys.stderr)
        return 2
    jobs = args.jobs if args.jobs and args.jobs > 0 else (os.cpu_count() or 1) if args.jobs == 0 else 1
    run_seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big") % 1_000_000
    show = sys.stderr.isatty() if args.progress is None else args.progress
    progress = Progress(args.examples) if show else None
    if progress is not None and not progress.tty:
        progress.interval = 5.0
    started = time.perf_counter()
    kinds = HOSTILE_KINDS if hostile else KINDS
    if elsewhere is not None:
        ran = elsewhere(args, run_seed, progress, kinds)
        if ran is None:
            return 2
        result, jobs = ran
    else:
        result = run_campaign(args.dialect, args.examples, run_seed, jobs, args.out, args.max_steps,
                              args.timeout or None, progress, kinds)
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(as_json(result, elapsed, run_seed, jobs), indent=2, sort_keys=True))
    else:
        print(summary(result, elapsed, run_seed, jobs))
    return 1 if result.failures else 0
