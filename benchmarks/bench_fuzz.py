"""Fuzzing throughput: examples per second, per dialect.

    python benchmarks/bench_fuzz.py [--examples N] [--dialects D,D] [--max-steps K] [--seed S]

For each dialect (and the IR), two rows:

- **generation**: drawing examples with the strategies of
  flowc.testing.strategies and nothing else: runnable workflows (text,
  inputs, host script), mutants and malformed input, in the mix
  ``flowc fuzz`` uses (a third each).
- **properties**: the same examples with every property ``flowc fuzz``
  checks on them (``flowc.testing.campaign.run_campaign``, one process):
  compile, both backends and their run records, the round trips,
  determinism, translation, mutants caught, never crashing.

Each row is the rate of one run of N examples with a fixed seed (hypothesis
drives both, so the two rows see the same examples). Failures do not stop
the benchmark; they are counted in the last column.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from flowc.testing import campaign, mutants
from flowc.testing import strategies as wst


def _generate(dialect: str, n: int, seed: int, max_steps: int) -> int:
    """Draw n examples of the campaign's mix without checking anything."""
    counts = campaign.plan(n)
    kinds = {
        "valid": wst.runnable_workflows(dialect, max_steps=max_steps),
        "malformed": wst.malformed_texts(None if dialect == "ir" else dialect, max_steps=max_steps),
    }
    drawn = 0
    for kind, strategy in kinds.items():
        generated, _ = campaign._drive(strategy, lambda example, counter: None, counts[kind], seed, lambda: None,
                                       Counter())
        drawn += generated
    table = mutants.operators_for(dialect)
    if table:
        for i, (op, share) in enumerate(zip(table, campaign.split(counts["mutant"], len(table)))):
            if share:
                strategy = wst.invalid_workflows(dialect, max_steps=max_steps, operators=[op.name])
                generated, _ = campaign._drive(strategy, lambda example, counter: None, share, seed + i,
                                               lambda: None, Counter())
                drawn += generated
    return drawn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--dialects", default=",".join([*wst.dialects(), "ir"]))
    ap.add_argument("--max-steps", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = []
    for dialect in args.dialects.split(","):
        started = time.perf_counter()
        drawn = _generate(dialect, args.examples, args.seed, args.max_steps)
        gen_s = time.perf_counter() - started
        started = time.perf_counter()
        result = campaign.run_campaign(dialect, args.examples, args.seed, out_dir="benchmarks/results/fuzz",
                                       max_steps=args.max_steps)
        full_s = time.perf_counter() - started
        rows.append((dialect, drawn, drawn / gen_s, result.total, result.total / full_s, len(result.failures)))
    print(f"{'dialect':<14} {'generated':>9} {'gen ex/s':>9} {'checked':>8} {'full ex/s':>9} {'failed':>7}")
    for dialect, drawn, gen_rate, checked, full_rate, failed in rows:
        print(f"{dialect:<14} {drawn:>9} {gen_rate:>9.1f} {checked:>8} {full_rate:>9.1f} {failed:>7}")


if __name__ == "__main__":
    main()
