"""What the commands do, as a library: compile, check many files, translate, evaluate.

- :mod:`flowc.pipeline.driver`: source text -> dialect front end -> IR -> analysis
  (``compile_text``, ``read_source``, ``expand_paths``);
- :mod:`flowc.pipeline.batch`: checking many files, in order, on one or more processes;
- :mod:`flowc.pipeline.translate`: a workflow written in another dialect;
- :mod:`flowc.pipeline.evaluate`: one expression evaluated through the compiler.

The command line (:mod:`flowc.cli`) calls these, and so do the tests, the
fuzzer and the benchmarks; none of them reads the command line or exits.
"""
