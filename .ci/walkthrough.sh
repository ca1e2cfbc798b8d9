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
printf "test:\n\tpytest -q\n" > "$project/Makefile"  # the file the proposal cites
cd "$work"

FACT="Run the unit tests with make test."
out=""

sm() { swarmmem --root "$project" "$@"; }
fail() { printf '\nwalkthrough FAILED: %s\n' "$*" >&2; exit 1; }

# step TITLE ARGS...: run `swarmmem ARGS`, print its output and keep it in $out
step() {
    printf '\n--> %s\n' "$1"
    shift
    out=$(sm "$@") || fail "swarmmem $* exited with $?"
    printf '%s\n' "$out"
}

# expect NEEDLE...: the last step's output contains every NEEDLE (fixed strings)
expect() {
    local needle
    for needle in "$@"; do
        grep -qF -- "$needle" <<<"$out" || fail "expected '$needle' in the output above"
    done
}

# check ARGS... -- EXPRESSION: `swarmmem ARGS --json` must make EXPRESSION (over d) true
check() {
    local args=() doc
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    doc=$(sm "${args[@]}" --json) || fail "swarmmem ${args[*]} --json exited with $?"
    python -c 'import json, sys; d = json.loads(sys.argv[2]); sys.exit(0 if eval(sys.argv[1]) else 1)' \
        "$2" "$doc" || { printf '%s\n' "$doc" >&2; fail "swarmmem ${args[*]} --json: expected $2"; }
}

step "init turns memory on" init
expect "Project id: proj_"
[ -f "$project/.opencode/opencode-swarm.json" ] || fail "init wrote no .opencode/opencode-swarm.json"

printf '\n--> %s\n' "an agent proposes a fact (text from standard input)"
out=$(printf '%s\n' "$FACT" | sm --role coder propose --kind test_pattern --text - \
    --rationale "how CI runs the tests" --evidence Makefile) || fail "propose exited with $?"
printf '%s\n' "$out"
expect "status: pending"
proposal=$(sed -n 's/^proposal_id: //p' <<<"$out")
[ -n "$proposal" ] || fail "propose printed no proposal_id line"

step "the curator sees it pending" pending
expect "$proposal" "$FACT"
check pending -- "[p['id'] for p in d['pending']] == ['$proposal']"

step "the curator adds it" curate "$proposal" add --reason "concise and sourced"
expect "Applied add to $proposal -> mem_"
memory=${out##* -> }

step "list shows one active memory" list
expect "$memory  test_pattern" "active" "$FACT"
check list -- "[(m['memory_id'], m['state']) for m in d['memories']] == [('$memory', 'active')]"

step "show tells where it came from and what happened to it" show "$memory"
expect "$FACT" "curator_decision $proposal (concise and sourced)"
grep -F -- "- Source:" <<<"$out" | grep -qF Makefile || fail "show: no Makefile in the Source line"
check show "$memory" -- "d['provenance']['producer_agent_role'] == 'coder' and '$proposal' in d['proposals']"

step "a later agent recalls it" recall "how do I run the unit tests"
expect "$FACT"
check recall "how do I run the unit tests" -- "'$memory' in d['memory_ids']"

step "forget tombstones it (audited)" forget "$memory" --reason "the build moved to just"
expect "Forgot $memory"
check list -- "d['count'] == 0"
check list --state deleted -- "[m['memory_id'] for m in d['memories']] == ['$memory']"
check recall "how do I run the unit tests" -- "'$memory' not in d['memory_ids']"

step "forget --purge erases it; the audit log still verifies" forget "$memory" --reason "erase" --purge
expect "Purged $memory"
if sm show "$memory" >/dev/null 2>&1; then fail "show after the purge: expected exit code 2"; fi
check list --state all -- "d['count'] == 0"
check audit-verify -- "d['verified'] is True and d['headMatch'] is True"
db="$project/.swarm/memory/memory.db"
for file in "$db" "$db-wal"; do
    if [ -f "$file" ] && grep -qaF "$FACT" "$file"; then fail "the purged fact is still in $file"; fi
done

step "status" status
expect "Enabled: \`true\`" "Memories: 0"
check status -- "d['memory_count'] == 0 and d['pending_proposals'] == 0"

printf '\nwalkthrough passed\n'
