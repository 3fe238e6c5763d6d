"""``flowc schema``: the JSON Schema of a dialect or of the host config (for editors)."""

from __future__ import annotations

from flowc.cli.exits import EXIT_OK
from flowc.cli.output import fail, write


def add_parser(sub) -> None:
    schema = sub.add_parser("schema", help="print the JSON Schema of a dialect or of the host config (for editors)")
    schema.add_argument("dialect", choices=("workflowskill", "aevatar", "instruction", "host"),
                        help="a dialect, or host: the host config of run/check --config (docs/hosts.md)")
    schema.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    schema.set_defaults(func=run)


def run(args) -> int:
    from flowc.compiler import schema

    if args.dialect == "host":
        from flowc.hosts.schema import schema_text

        write(args.output, schema_text())
        return EXIT_OK
    available = schema.available()
    if args.dialect not in available:
        return fail(f"no schema for the {args.dialect} dialect in this version of flowc "
                    f"(available: {', '.join(available)})")
    write(args.output, schema.schema_text(args.dialect))
    return EXIT_OK
