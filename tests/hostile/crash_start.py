"""crash_start (crash): every process exits with status 1 as it starts, before its
hello."""

import sys

print("crash_start: dying at start on purpose", file=sys.stderr, flush=True)
sys.exit(1)
