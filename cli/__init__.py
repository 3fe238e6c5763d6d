"""The flowc command line: ``flowc COMMAND ...``.

One module per command, each with ``add_parser(sub)`` (its options) and
``run(args)`` (what it does, returning an exit status of
:mod:`flowc.cli.exits`): check, eval, compile, run, resume, runs, disasm,
graph, translate, schema, explain, fuzz, bundle and exec. :mod:`flowc.cli.app`
assembles the parser and runs the command. What several commands share:

- :mod:`~flowc.cli.options`: the parser class, dialect choices, budgets, cluster options;
- :mod:`~flowc.cli.output`: errors and results on stderr, stdout or a file;
- :mod:`~flowc.cli.reporting`: findings for people (text), machines (JSON) and dashboards (SARIF);
- :mod:`~flowc.cli.programs`: a workflow file compiled and loaded on a backend;
- :mod:`~flowc.cli.record`, :mod:`~flowc.cli.watch`, :mod:`~flowc.cli.hosting`,
  :mod:`~flowc.cli.durable`, :mod:`~flowc.cli.journaled`, :mod:`~flowc.cli.run_batch`:
  a run's record, its trace and live display, real tools, journals, batches.

The work itself (compiling, checking many files, translating, evaluating)
is :mod:`flowc.pipeline`, which the commands call.
"""

from flowc.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
