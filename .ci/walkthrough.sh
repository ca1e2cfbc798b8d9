#!/usr/bin/env bash
# A newcomer's first session, scripted against the installed `swarmmem` console script in a
# fresh temporary folder: init, propose (text from stdin), pending, curate add, list, show,
# recall, forget (then forget --purge and audit-verify), status. Every step's output is
# checked; the first surprise stops the walk-through with what was expected and what came.
set -euo pipefail

command -v swarmmem >/dev/null || { echo "walkthrough: no swarmmem command on PATH" >&2; exit 1; }
command -v python >/dev/null || { echo "walkthrough: no python on PATH" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
project="$work/project"
mkdir -p "$project"
cd "$work"

FACT="Run the unit tests with make test."

sm() { swarmmem --root "$project" "$@"; }
step() { printf '\n--> %s\n' "$*"; }
fail() { printf '\nwalkthrough FAILED: %s\n' "$*" >&2; exit 1; }

# expect WHAT NEEDLE OUTPUT: OUTPUT must contain NEEDLE (a fixed string)
expect() {
    grep -qF -- "$2" <<<"$3" || { printf '%s\n' "$3" >&2; fail "$1: expected to see '$2'"; }
}

# check WHAT EXPRESSION: the JSON document on stdin, as d, must make EXPRESSION true
check() {
    local doc
    doc=$(cat)
    python -c 'import json, sys; d = json.loads(sys.argv[2]); sys.exit(0 if eval(sys.argv[1]) else 1)' \
        "$2" "$doc" || { printf '%s\n' "$doc" >&2; fail "$1: expected $2"; }
}

# field EXPRESSION: print EXPRESSION over the JSON document on stdin (as d)
field() { python -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

step "init turns memory on"
out=$(sm init)
printf '%s\n' "$out"
expect "init" "Project id: proj_" "$out"
[ -f "$project/.opencode/opencode-swarm.json" ] || fail "init: no .opencode/opencode-swarm.json"

step "an agent proposes a fact (text from standard input)"
out=$(printf '%s\n' "$FACT" | sm --role coder propose --kind test_pattern --text - \
    --rationale "how CI runs the tests" --evidence Makefile)
printf '%s\n' "$out"
expect "propose" "status: pending" "$out"
proposal=$(sed -n 's/^proposal_id: //p' <<<"$out")
[ -n "$proposal" ] || fail "propose: no proposal_id line"

step "the curator sees it pending"
out=$(sm pending)
printf '%s\n' "$out"
expect "pending" "$proposal" "$out"
expect "pending" "$FACT" "$out"
sm pending --json | check "pending --json" "[p['id'] for p in d['pending']] == ['$proposal']"

step "the curator adds it"
out=$(sm curate "$proposal" add --reason "concise and sourced")
printf '%s\n' "$out"
expect "curate" "Applied add to $proposal -> mem_" "$out"
memory=${out##* -> }

step "list shows one active memory"
out=$(sm list)
printf '%s\n' "$out"
expect "list" "$memory  test_pattern" "$out"
expect "list" "active" "$out"
expect "list" "$FACT" "$out"
sm list --json | check "list --json" \
    "d['count'] == 1 and d['memories'][0]['memory_id'] == '$memory' and d['memories'][0]['state'] == 'active'"

step "show tells where it came from and what happened to it"
out=$(sm show "$memory")
printf '%s\n' "$out"
expect "show" "$FACT" "$out"
expect "show" "Makefile" "$(grep -F -- "- Source:" <<<"$out")"
expect "show" "curator_decision $proposal (concise and sourced)" "$out"
sm show "$memory" --json | check "show --json" \
    "d['state'] == 'active' and d['provenance']['producer_agent_role'] == 'coder' and '$proposal' in d['proposals']"

step "a later agent recalls it"
out=$(sm recall "how do I run the unit tests")
printf '%s\n' "$out"
expect "recall" "$FACT" "$out"
sm recall "how do I run the unit tests" --json | check "recall --json" "'$memory' in d['memory_ids']"

step "forget tombstones it (audited) and recall no longer returns it"
out=$(sm forget "$memory" --reason "the build moved to just")
printf '%s\n' "$out"
expect "forget" "Forgot $memory" "$out"
sm list --json | check "list after forget" "d['count'] == 0"
sm list --state deleted --json | check "list --state deleted" "[m['memory_id'] for m in d['memories']] == ['$memory']"
sm recall "how do I run the unit tests" --json | check "recall after forget" "'$memory' not in d['memory_ids']"

step "forget --purge erases it; the audit log still verifies"
out=$(sm forget "$memory" --reason "erase it" --purge)
printf '%s\n' "$out"
expect "forget --purge" "Purged $memory" "$out"
if sm show "$memory" >/dev/null 2>&1; then fail "show after purge: expected exit code 2"; fi
sm list --state all --json | check "list after purge" "d['count'] == 0"
sm audit-verify --json | check "audit-verify" "d['verified'] is True and d['headMatch'] is True"
db="$project/.swarm/memory/memory.db"
for file in "$db" "$db-wal"; do
    if [ -f "$file" ] && grep -qaF "$FACT" "$file"; then fail "purge: the fact is still in $file"; fi
done

step "status"
out=$(sm status)
printf '%s\n' "$out"
expect "status" "Enabled: \`true\`" "$out"
expect "status" "Memories: 0" "$out"
sm status --json | check "status --json" "d['memory_count'] == 0 and d['pending_proposals'] == 0"

printf '\nwalkthrough passed\n'
