"""``flowc fuzz``: fuzz flowc with generated workflows, mutants and malformed input (docs/fuzzing.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from flowc.cli.exits import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE
from flowc.cli.options import cluster_options


def add_parser(sub) -> None:
    fuzz = sub.add_parser("fuzz", help="fuzz flowc with generated workflows, mutants and malformed input")
    fuzz.add_argument("--dialect", required=True, metavar="D",
                      help="workflowskill, aevatar, instruction, or ir (mutants of the IR)")
    fuzz.add_argument("--examples", type=int, default=300, metavar="N",
                      help="examples in all: a third valid workflows, a third mutants, a third malformed "
                           "input (default: 300)")
    fuzz.add_argument("--seed", type=int, metavar="S", help="replay a campaign (default: a random seed)")
    fuzz.add_argument("-j", "--jobs", type=int, metavar="J",
                      help="split the campaign over J processes (0 = every core; default: 1; with "
                           "--workers/--scheduler: J shares, default one per worker thread)")
    fuzz.add_argument("--out", default="fuzz-crashes", metavar="DIR",
                      help="where minimal reproducers of failures go (default: fuzz-crashes)")
    fuzz.add_argument("--max-steps", type=int, default=6, metavar="K", help="steps per generated workflow")
    fuzz.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                      help="an example taking longer is a hang (default: 30; 0 = no limit)")
    fuzz.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="show progress on stderr (default: when stderr is a terminal)")
    fuzz.add_argument("--hostile", action="store_true",
                      help="only workflows with injection payloads in every text field and hostile file "
                           "names: no payload may run, compile both targets, run both backends, translate")
    fuzz.add_argument("--json", action="store_true", help="print the summary as JSON")
    cluster_options(fuzz, "fuzz")
    fuzz.set_defaults(func=run)


def run(args) -> int:
    if args.workers is not None or args.scheduler:
        from flowc.cluster.fuzzrun import fuzz_on_cluster

        return fuzz_command(args, fuzz_on_cluster)
    return fuzz_command(args)


def fuzz_command(args, elsewhere=None) -> int:
    """``flowc fuzz`` with the parsed ``args``. ``elsewhere(args, seed,
    progress, kinds)`` runs the campaign somewhere else (a cluster) and
    gives (result, shares), or None after saying why it could not."""
    from flowc.testing import strategies as wst
    from flowc.testing.campaign import HOSTILE_KINDS, KINDS, Progress, as_json, run_campaign, summary

    dialects = (*wst.dialects(), "ir")
    if args.dialect not in dialects:
        print(f"flowc: error: no generator for the {args.dialect} dialect yet (available: "
              f"{', '.join(dialects)})", file=sys.stderr)
        return EXIT_USAGE
    hostile = bool(getattr(args, "hostile", False))
    if hostile and args.dialect not in wst.dialects():
        print(f"flowc: error: --hostile needs a source dialect ({', '.join(wst.dialects())})", file=sys.stderr)
        return EXIT_USAGE
    if args.examples < 1:
        print("flowc: error: --examples must be at least 1", file=sys.stderr)
        return EXIT_USAGE
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
            return EXIT_USAGE
        result, jobs = ran
    else:
        result = run_campaign(args.dialect, args.examples, run_seed, jobs, args.out, args.max_steps,
                              args.timeout or None, progress, kinds)
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps(as_json(result, elapsed, run_seed, jobs), indent=2, sort_keys=True))
    else:
        print(summary(result, elapsed, run_seed, jobs))
    return EXIT_FINDINGS if result.failures else EXIT_OK
