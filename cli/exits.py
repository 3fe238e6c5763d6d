"""The exit statuses of every flowc command, in one place.

A command returns one of these from its ``run`` function; ``flowc.cli.main``
hands it to the shell.
"""

EXIT_OK = 0           # done (warnings allowed), or a run that completed
EXIT_FINDINGS = 1     # the workflow has errors, or a run failed
EXIT_FAILED = EXIT_FINDINGS   # the name the run commands use for it
EXIT_USAGE = 2        # a bad option, or an input that could not be read
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as shells report it
