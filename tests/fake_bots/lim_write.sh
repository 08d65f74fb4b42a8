#!/bin/bash
# A fake bot for tests/test_limits.py: at its first line, becomes `head` writing
# 4 MiB to the file "big"; head keeps SIGXFSZ as it finds it, as C programs do.
read -r _
exec head -c 4194304 /dev/zero > big
