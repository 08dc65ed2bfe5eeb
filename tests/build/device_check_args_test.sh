#!/usr/bin/env bash
# scripts/device-check.sh on a machine without a GPU: --help explains itself, and every
# argument error is one `error:` line and exit status 2, before any phase starts.
set -uo pipefail
script=$1
fail() { echo "device_check_args_test: $*" >&2; exit 1; }

out=$(bash "$script" --help) || fail "--help exited $?"
for word in Usage: build kernels cora synth200k gpu-sampling python KernelEquality \
            DeviceSamplerCuda "--sample-on device" 2400000 --only --report-dir JSON "9 minutes" \
            device-deps.sh DEVELOPERS.md; do
  grep -q -- "$word" <<< "$out" || fail "--help does not mention '$word'"
done
[ "$(bash "$script" -h)" = "$out" ] || fail "-h and --help differ"

# expect_usage_error ARGS...: exit 2, an error line on stderr, nothing on stdout.
expect_usage_error() {
  local stdout stderr rc
  stderr=$(mktemp)
  stdout=$(bash "$script" "$@" --work "$tmp/work" 2> "$stderr")
  rc=$?
  grep -q '^device-check.sh: error: ' "$stderr" || fail "'$*': no error line (got: $(cat "$stderr"))"
  [ $rc -eq 2 ] || fail "'$*': exit status $rc, not 2"
  [ -z "$stdout" ] || fail "'$*': wrote to stdout: $stdout"
  echo "ok: '$*' -> $(head -n 1 "$stderr")"
  rm -f "$stderr"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect_usage_error --bogus
expect_usage_error --only
expect_usage_error --only nosuch
expect_usage_error --only build,gpu
expect_usage_error --only gpu_sampling
expect_usage_error --only --jobs 4
expect_usage_error --jobs zero
expect_usage_error --jobs 0
expect_usage_error --runs -1
expect_usage_error stray
[ ! -e "$tmp/work" ] || fail "a usage error created the work directory"

# A phase that cannot run here fails cleanly: JSON lines on stdout, exit status 1.
out=$(bash "$script" --only cora --build-dir "$tmp/no-build" --work "$tmp/work" 2> /dev/null)
rc=$?
[ $rc -eq 1 ] || fail "--only cora without a build: exit status $rc, not 1"
grep -q '^{"phase":"cora","event":"phase_done","ok":false,"seconds":[0-9.]*}$' <<< "$out" ||
  fail "--only cora without a build: no failed phase_done line in: $out"
grep -q '^{"phase":"all","event":"done","ok":false,' <<< "$out" || fail "no final line in: $out"

# The GPU sampling phase alone, as after a fresh build elsewhere: it needs the build too,
# fails cleanly, and (a hyphenated phase) is found and run, not refused.
out=$(bash "$script" --only gpu-sampling --build-dir "$tmp/no-build" --work "$tmp/work" 2> /dev/null)
rc=$?
[ $rc -eq 1 ] || fail "--only gpu-sampling without a build: exit status $rc, not 1"
grep -q '^{"phase":"gpu-sampling","event":"phase_done","ok":false,"seconds":[0-9.]*}$' <<< "$out" ||
  fail "--only gpu-sampling without a build: no failed phase_done line in: $out"
[ "$(grep -c '"event":"phase_done"' <<< "$out")" -eq 1 ] || fail "--only gpu-sampling ran other phases: $out"
echo "device_check_args_test: ok"
