#!/bin/bash
# A fake bot that leaves a child in its process group (holding our stdout) and exits.
sleep 60 &
echo $!
exit 0
