"""stderr_crash (crash): writes 2 MiB to stderr, then exits with status 1 before
its hello, in every process it starts."""

import sys

sys.stderr.write(("stderr_crash " * 80 + "\n") * (2 * 1024 * 1024 // 1041))
sys.stderr.flush()
sys.exit(1)
