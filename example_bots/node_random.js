#!/usr/bin/env node
// node_random.js: a Coup bot for the arena protocol (version 1), in Node.js with no packages.
//
// It answers the handshake with its name, and every request with one of the legal
// answers the request lists (the fields after ":"), chosen at random from the `seed`
// line of each game (Math.random cannot be seeded), so that a game replays the same.
// Every other line is ignored; it plays any number of games and exits on `quit` or at
// the end of its input.  Writes to a pipe are synchronous in Node on Linux, so each
// answer leaves at once.  Run: node node_random.js
"use strict";

const readline = require("readline");

const input = readline.createInterface({ input: process.stdin, terminal: false });

// A 64-bit linear congruential generator, random enough to pick answers.
let state = BigInt(Math.floor(Math.random() * 2 ** 53)); // until a `seed` line comes

function pick(count) {
  state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
  return Number((state >> 32n) % BigInt(count));
}

function say(line) {
  process.stdout.write(line + "\n");
}

input.on("line", (line) => {
  const fields = line.trim().split(/\s+/);
  if (fields[0] === "arena") {
    say("hello random-js");
  } else if (fields[0] === "seed") {
    state = BigInt(fields[1]);
  } else if (fields[0] === "request") {
    const legal = fields.slice(fields.indexOf(":") + 1);
    say(fields[1] + " " + legal[pick(legal.length)]);
  } else if (fields[0] === "quit") {
    process.exit(0);
  }
});

input.on("close", () => process.exit(0));
