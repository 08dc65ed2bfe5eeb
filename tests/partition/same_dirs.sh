# Shell helpers of the partition scripts (partition_mpi.sh, edge_split_repeated_pairs.sh),
# sourced with `. "$(dirname "$0")/same_dirs.sh"` after `cd` into their work directory.

# fail MESSAGE [LOG]: prints FAIL and the log (when it exists), then exits 1.
fail() { echo "FAIL: $1"; [ -f "$2" ] && cat "$2"; exit 1; }

# partita.json without the fields that may differ between runs.
stable() { grep -v -e '"phase_seconds"' -e 'peak_rss_bytes' "$1/partita.json"; }

# same DIR_A DIR_B: every file byte-identical, partita.json apart from timing/peaks.
same() {
  (cd "$1" && find . -name '*.npy' | sort) >files_a
  (cd "$2" && find . -name '*.npy' | sort) >files_b
  diff files_a files_b >diff.log 2>&1 || fail "$1 and $2 hold different files" diff.log
  while read -r f; do cmp -s "$1/$f" "$2/$f" || fail "$f differs between $1 and $2" /dev/null; done <files_a
  stable "$1" >meta_a
  stable "$2" >meta_b
  diff meta_a meta_b >diff.log 2>&1 || fail "partita.json of $1 and $2 differ" diff.log
}
