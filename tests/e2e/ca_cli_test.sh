#!/usr/bin/env bash
# End to end: `benchlab ca issue --days` takes what is written. 0 is refused with one line that
# names the range (it was once read as "the default" and issued a 365-day certificate), and
# without --days a certificate is valid for 365 days, with 30 for 30.
# Usage: ca_cli_test.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
bin=$(cd "$1" && pwd)

"$bin/benchlab" ca init --dir "$work/ca" > /dev/null || fail "ca init exited $?"
status=0
"$bin/benchlab" ca issue --dir "$work/ca" --name zero --role viewer --days 0 \
  > "$work/zero.out" 2> "$work/zero.err" || status=$?
[ "$status" -eq 2 ] || fail "--days 0 should exit 2, got $status"
[ "$(wc -l < "$work/zero.err")" -eq 1 ] || { cat "$work/zero.err"; fail "one line for --days 0"; }
grep -q '^benchlab ca issue: --days: expected 1 to [0-9]* .*got 0$' "$work/zero.err" ||
  { cat "$work/zero.err"; fail "the --days 0 error names the range and the value"; }
[ ! -e "$work/ca/zero.pem" ] || fail "--days 0 left a certificate behind"
check "ca issue --days 0 is refused with the range, and issues nothing"

# until DAYS NAME: the certificate's "valid until" date is DAYS days from now (or the day after,
# across midnight).
until_in() {
  local got want next
  got=$(sed -n 's/.*valid until \([0-9-]*\)T.*/\1/p' "$work/$2.out")
  want=$(date -u -d "+$1 days" +%F)
  next=$(date -u -d "+$(($1 + 1)) days" +%F)
  [ "$got" = "$want" ] || [ "$got" = "$next" ] || fail "$2: valid until $got, expected $want"
}
"$bin/benchlab" ca issue --dir "$work/ca" --name plain --role viewer > "$work/plain.out" ||
  fail "ca issue exited $?"
until_in 365 plain
"$bin/benchlab" ca issue --dir "$work/ca" --name month --role viewer --days 30 \
  > "$work/month.out" || fail "ca issue --days 30 exited $?"
until_in 30 month
check "ca issue: 365 days by default, 30 with --days 30"
echo "$passed checks passed"
