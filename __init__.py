"""flowc: a compiler for agent workflows.

Three YAML dialects (WorkflowSkill, aevatar, the instruction node catalog)
compile to one typed DAG IR (:mod:`flowc.ir`), are checked by analyze, and
are emitted as Python modules or bytecode.
"""

__version__ = "0.1.0"
