#!/usr/bin/env bash
# bash_random.sh: a Coup bot for the arena protocol (version 1), in plain bash.
#
# It answers the handshake with its name, and every request with one of the legal
# answers the request lists (the fields after ":"), chosen at random with $RANDOM,
# seeded from the `seed` line of each game so that a game replays the same.
# Every other line is ignored; it plays any number of games and exits on `quit` or at
# the end of its input.  `read -a` splits a line into fields without expanding the
# `?` of hidden cards as a file pattern, and echo is a single write, so each answer
# leaves at once.  Run: bash bash_random.sh
RANDOM=$$
while read -r -a fields; do
  case "${fields[0]}" in
    arena)
      echo "hello random-sh"
      ;;
    seed)
      RANDOM=${fields[1]}  # bash keeps the low 32 bits of the number
      ;;
    request)
      first=${#fields[@]}
      for i in "${!fields[@]}"; do
        if [[ ${fields[i]} == ":" ]]; then first=$((i + 1)); break; fi
      done
      count=$((${#fields[@]} - first))
      if ((count > 0)); then
        echo "${fields[1]} ${fields[first + RANDOM % count]}"
      fi
      ;;
    quit)
      exit 0
      ;;
  esac
done
