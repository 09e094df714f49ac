# Sourced by the scripts that run other projects' test suites. run_suite runs one `go test -v`
# of the current directory and writes each top-level test's result to a file, one line each:
# "PASS name", "FAIL name", "SKIP name" or "HANG name". A test that hangs makes go test's
# -timeout end the binary; run_suite then marks the tests it names as running HANG and runs the
# tests that had not finished again, without them, so that one hang neither stalls the run nor
# hides the results of the other tests. A test that panics (and so ends the binary) is FAIL and
# the rest runs again the same way.
#
#   run_suite RESULTS TIMEOUT SKIP [go test flags…]
#
# SKIP is a -skip regexp ("" for none); the flags go to go test (-ldflags, -run …). The raw output
# of every attempt is kept in RESULTS.log. Before each attempt after the first, the function
# suite_reset runs when the caller defines it.
run_suite() {
  local results=$1 timeout=$2 skip=$3
  shift 3
  : > "$results"
  : > "$results.log"
  local attempt
  for attempt in 1 2 3 4 5 6; do
    local skipflag=() done_re
    done_re=$(awk '{print $2}' "$results" | sed 's/[][\.*^$+?(){}|]/\\&/g; s/.*/^&$/' | paste -sd'|')
    local all_skip=$skip
    [ -n "$done_re" ] && all_skip=${all_skip:+$all_skip|}$done_re
    [ -n "$all_skip" ] && skipflag=(-skip "$all_skip")
    if [ "$attempt" -gt 1 ] && declare -F suite_reset >/dev/null; then
      suite_reset # what the ended binary left behind (its tables) must not fail the next attempt
    fi
    local out
    out=$(mktemp)
    go test -count=1 -v -timeout "$timeout" "${skipflag[@]}" "$@" . > "$out" 2>&1 || true
    cat "$out" >> "$results.log"
    grep -E '^--- (PASS|FAIL|SKIP): ' "$out" | sed -E 's/^--- (PASS|FAIL|SKIP): ([^ ]+).*/\1 \2/' >> "$results" || true
    if ! grep -q '^panic: ' "$out"; then
      rm -f "$out"
      return 0
    fi
    if grep -q '^panic: test timed out' "$out"; then
      # The tests go test names as running when its timeout struck.
      awk '/^panic: test timed out/ {p=1; next} p && /^\t\t[A-Za-z0-9_]+/ {sub(/^\t\t/, ""); sub(/[ \/].*/, ""); print "HANG", $0} p && /^$/ {exit}' "$out" \
        | sort -u >> "$results"
      echo "  a test hung; running the rest again without it: $(grep '^HANG' "$results" | awk '{print $2}' | paste -sd' ')" >&2
    elif ! grep -qE '^--- FAIL: ' "$out"; then
      echo "  the test binary panicked outside a test:" >&2
      grep -A 20 '^panic: ' "$out" | sed 's/^/    /' >&2
      rm -f "$out"
      return 1
    else
      echo "  $(grep -E '^--- FAIL: ' "$out" | tail -1 | awk '{print $3}') panicked and ended the binary; running the rest again" >&2
    fi
    rm -f "$out"
  done
  echo "  too many hangs or panics; giving up" >&2
  return 1
}

# suite_counts RESULTS: "N passed, N failed, N skipped, N hung".
suite_counts() {
  echo "$(grep -c '^PASS' "$1" || true) passed, $(grep -c '^FAIL' "$1" || true) failed, $(grep -c '^SKIP' "$1" || true) skipped, $(grep -c '^HANG' "$1" || true) hung"
}

# suite_lost BASELINE RESULTS EXPECTED: the tests that pass in BASELINE and not in RESULTS,
# except those matched by the regexp EXPECTED ("" for none).
suite_lost() {
  comm -23 <(grep '^PASS' "$1" | awk '{print $2}' | sort -u) <(grep '^PASS' "$2" | awk '{print $2}' | sort -u) \
    | { if [ -n "$3" ]; then grep -Ev "^($3)$" || true; else cat; fi; }
}

# suite_output LOG TEST: the first 40 lines of TEST's output in LOG, indented; for a test that
# never reported a result (it hung, or the binary ended during it), a line that says so.
suite_output() {
  awk -v t="$2" '
    $0 ~ "^=== RUN   "t"$" {p=1}
    p && n < 40 {buf[n++] = "    " $0}
    p && $0 ~ "^--- (PASS|FAIL|SKIP): "t" " {done=1; exit}
    END {
      if (!done) { print "    (no result: it hung until go test -timeout, or the binary ended during it)"; exit }
      for (i = 0; i < n; i++) print buf[i]
    }' "$1"
}

# suite_use_obroute REPO MODULE: makes the module in the current directory (a copy of MODULE)
# require obroute from REPO, with the requirements of obroute's go.mod (so shared dependencies
# are at obroute's versions) and its go version (a pruned module graph), and tidies it.
suite_use_obroute() {
  local repo=$1 own=$2 reqs
  reqs=$(cd "$repo" && go mod edit -json | sed -n 's/^\t\t\t"Path": "\(.*\)",$/\1/p; s/^\t\t\t"Version": "\([^"]*\)",\{0,1\}$/\1/p' |
    paste -d@ - - | grep -v "^$own@" | sed 's/^/-require=/')
  go mod edit -require=github.com/obroute/obroute@v0.0.0 -replace=github.com/obroute/obroute="$repo" $reqs
  go mod edit -go="$(cd "$repo" && go list -m -f '{{.GoVersion}}')"
  GOFLAGS=-mod=mod go mod tidy
}
