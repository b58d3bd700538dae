#!/usr/bin/env bash
# The Debian package that package.build (CPack) made: its file list, owners and modes, Depends
# (every library the binary needs, by Debian package name), conffiles, the changelog's version,
# lintian's verdict (each remaining tag allowed below with its reason), the maintainer scripts'
# syntax, `systemd-analyze verify` of each unit, the packaged binary's --version, and the example
# agent configurations read by the packaged binary's own agent. Every failure is reported, then
# the test fails. Usage: deb_test.sh BUILD_DIR SOURCE_DIR (docs/packaging.md).
set -uo pipefail

build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
for tool in dpkg-deb lintian systemd-analyze readelf; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is missing (make deps-package installs lintian)"
    exit 77
  fi
done

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

version=$(sed -n 's/^project(benchlab VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
deb=$build/package/benchlab_${version}_amd64.deb
if [ ! -f "$deb" ]; then
  echo "FAIL: no $deb (package.build makes it; the version is CMakeLists.txt's)" >&2
  exit 1
fi
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] ||
  fail "Version: $(dpkg-deb -f "$deb" Version), expected $version (CMakeLists.txt)"

work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-deb-test.XXXXXX")
agent_pid=
cleanup() {
  [ -z "$agent_pid" ] || kill -9 "$agent_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
dpkg-deb -x "$deb" "$root"
dpkg-deb -e "$deb" "$work/control"

# --- files: exactly these, owned by root, with Debian's modes --------------------------------
expected=(
  ./etc/benchlab/agent-load-1.toml
  ./etc/benchlab/agent-server-1.toml
  ./etc/default/benchlab-coordinator
  ./lib/systemd/system/benchlab-agent@.service
  ./lib/systemd/system/benchlab-coordinator.service
  ./usr/bin/benchlab
  ./usr/lib/benchlab/hello-server
  ./usr/share/bash-completion/completions/benchlab
  ./usr/share/fish/vendor_completions.d/benchlab.fish
  ./usr/share/zsh/vendor-completions/_benchlab
  ./usr/share/benchlab/examples/hello.toml
  ./usr/share/benchlab/grafana/benchlab.json
  ./usr/share/benchlab/examples/nginx.conf.in
  ./usr/share/benchlab/web/assets/app.css
  ./usr/share/benchlab/web/assets/app.js
  ./usr/share/benchlab/web/index.html
  ./usr/share/doc/benchlab/README.md
  ./usr/share/doc/benchlab/changelog.gz
  ./usr/share/doc/benchlab/copyright
  ./usr/share/man/man1/benchlab.1.gz
)
# A manual page per subcommand: those the packaged binary writes (`benchlab man --output-dir`).
"$root/usr/bin/benchlab" man --output-dir "$work/man" ||
  fail "the packaged benchlab man --output-dir exited $?"
pages=0
for page in "$work"/man/benchlab-*.1; do
  [ -e "$page" ] || continue
  expected+=("./usr/share/man/man1/$(basename "$page").gz")
  pages=$((pages + 1))
done
[ "$pages" -ge 20 ] || fail "benchlab man --output-dir wrote $pages pages, expected one per subcommand"
for doc in "$src"/docs/*.md; do expected+=("./usr/share/doc/benchlab/docs/$(basename "$doc")"); done
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sort > "$work/files"
printf '%s\n' "${expected[@]}" | sort > "$work/files.expected"
diff -u "$work/files.expected" "$work/files" > "$work/files.diff" ||
  fail "file list (- expected, + in the package):$(printf '\n')$(cat "$work/files.diff")"
dpkg-deb -c "$deb" | awk '$2 != "root/root" {print "  " $6 " is " $2}' > "$work/owners"
[ ! -s "$work/owners" ] || fail "files not owned by root/root:$(printf '\n')$(cat "$work/owners")"
dpkg-deb -c "$deb" | awk '
  $1 ~ /^d/ && $1 != "drwxr-xr-x" {print "  " $6 " " $1}
  $1 ~ /^-/ && $6 ~ /^\.\/usr\/(bin|lib\/benchlab)\// && $1 != "-rwxr-xr-x" {print "  " $6 " " $1}
  $1 ~ /^-/ && $6 !~ /^\.\/usr\/(bin|lib\/benchlab)\// && $1 != "-rw-r--r--" {print "  " $6 " " $1}
' > "$work/modes"
[ ! -s "$work/modes" ] || fail "modes (0755 directories and programs, 0644 the rest):$(printf '\n')$(cat "$work/modes")"
for program in usr/bin/benchlab usr/lib/benchlab/hello-server; do
  if readelf -S "$root/$program" | grep -q '\.debug_info'; then fail "$program is not stripped"; fi
done

# --- Depends: adduser, and the package of every library the programs link directly ------------
# (what dpkg-shlibdeps computed; a dependency may name a package or a name that package Provides).
depends=$(dpkg-deb -f "$deb" Depends)
has_dependency() { tr ',|' '\n\n' <<< "$depends" | sed 's/(.*//; s/ //g' | grep -qxF "$1"; }
has_dependency adduser || fail "Depends lacks adduser (postinst runs it): $depends"
for program in usr/bin/benchlab usr/lib/benchlab/hello-server; do
  ldd "$root/$program" | awk '$2 == "=>" {print $1, $3}' > "$work/ldd"
  for library in $(readelf -d "$root/$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    path=$(awk -v lib="$library" '$1 == lib {print $2}' "$work/ldd")
    if [ -z "$path" ] || [ "$path" = "not" ]; then
      fail "$program: $library is not found on this machine"
      continue
    fi
    owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null)
    package=${owner%%:*}
    if [ -z "$package" ]; then
      fail "$program: no Debian package owns $path ($library)"
      continue
    fi
    provided=$(dpkg-query -W -f='${Provides}' "$package" | tr ',' '\n' | sed 's/(.*//; s/ //g')
    satisfied=no
    for name in "$package" $provided; do
      if has_dependency "$name"; then satisfied=yes; fi
    done
    [ $satisfied = yes ] ||
      fail "$program needs $library from $package, which Depends lacks: $depends"
  done
done

# --- control files ------------------------------------------------------------------------------
printf '%s\n' /etc/benchlab/agent-load-1.toml /etc/benchlab/agent-server-1.toml \
  /etc/default/benchlab-coordinator > "$work/conffiles.expected"
sort "$work/control/conffiles" | diff -u "$work/conffiles.expected" - > "$work/conffiles.diff" ||
  fail "conffiles (- expected, + in the package):$(printf '\n')$(cat "$work/conffiles.diff")"
for script in postinst prerm postrm; do
  [ -x "$work/control/$script" ] || fail "$script is missing or not executable"
  head -n 1 "$work/control/$script" | grep -qx '#!/bin/sh' || fail "$script does not start #!/bin/sh"
  sh -n "$work/control/$script" || fail "$script: sh -n"
  bash -n "$work/control/$script" || fail "$script: bash -n"
done
changelog_version=$(zcat "$root/usr/share/doc/benchlab/changelog.gz" | sed -n '1s/^benchlab (\([^)]*\)).*/\1/p')
[ "$changelog_version" = "$version" ] ||
  fail "packaging/deb/changelog's first entry is ($changelog_version), the package $version"

# --- lintian: clean, but for the tags below, each with why it stays -----------------------------
declare -A allowed=(
  [binary-has-unneeded-section]="CPack strips with plain strip(1), which keeps .comment (the compiler's version string)"
  [package-contains-documentation-outside-usr-share-doc]="usr/share/benchlab/web/index.html is the dashboard's page, not documentation"
  [package-supports-alternative-init-but-no-init.d-script]="the daemons are started by systemd units only; without systemd, start them by hand (docs/packaging.md)"
)
lintian --display-info --tag-display-limit 0 "$deb" > "$work/lintian" 2> "$work/lintian.err"
# Exit 1 is lintian's own error; 2 (an error tag, --fail-on's default) is reported tag by tag.
if [ $? -eq 1 ]; then fail "lintian failed:$(printf '\n')$(cat "$work/lintian.err")"; fi
while read -r line; do
  [[ "$line" =~ ^[EWIPXC]:\ benchlab[^:]*:\ ([a-z0-9.+-]+) ]] || {
    [[ "$line" =~ ^N: ]] || [ -z "$line" ] || fail "lintian said: $line"
    continue
  }
  tag=${BASH_REMATCH[1]}
  # lintian reads spelling from every run of printable bytes in the binary, machine code and
  # linked libraries included (" mor" was once an instruction sequence). A misspelling is
  # benchlab's only if the word is in its own C++ sources; then it fails like any other tag.
  if [ "$tag" = spelling-error-in-binary ]; then
    word=$(sed -n 's/.*spelling-error-in-binary \([^ ]*\) .*/\1/p' <<< "$line")
    if [ -n "$word" ] && ! grep -rqiw --include='*.cc' --include='*.h' --include='*.proto' -- "$word" \
      "$src"/{agent,analysis,cli,common,coordinator,loadgen,rpc,tls,proto}; then
      echo "lintian (allowed: \"$word\" is not in benchlab's sources): $line"
      continue
    fi
  fi
  if [ -n "${allowed[$tag]:-}" ]; then
    echo "lintian (allowed: ${allowed[$tag]}): $line"
  else
    fail "lintian: $line"
  fi
done < "$work/lintian"

# --- units: systemd-analyze verify, with the packaged binary where /usr/bin/benchlab is ---------
# (verify checks that ExecStart= is executable; --root=DIR does not serve: it wants the whole
# system's units under DIR); MANPATH lets it find Documentation='s man:benchlab(1) there too.
# Any output, warnings included, fails.
mkdir -p "$work/units"
for unit in "$root"/lib/systemd/system/*.service; do
  name=$(basename "$unit")
  [ "$name" != "benchlab-agent@.service" ] || name=benchlab-agent@test.service
  sed "s|/usr/bin/benchlab|$root/usr/bin/benchlab|g" "$unit" > "$work/units/$name"
  out=$(cd "$work/units" && MANPATH=$root/usr/share/man systemd-analyze verify "$work/units/$name" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || [ -n "$out" ]; then
    fail "systemd-analyze verify $(basename "$unit") (rc $rc):$(printf '\n')$out"
  fi
done

# --- the packaged binary ----------------------------------------------------------------------
out=$("$root/usr/bin/benchlab" --version 2>&1)
[ "$out" = "benchlab $version" ] || fail "benchlab --version said '$out', expected 'benchlab $version'"

# The packaged bash completion, loaded in bash and asked to complete "benchlab rep".
out=$(bash --norc --noprofile -c 'source "$1"; COMP_WORDS=(benchlab rep); COMP_CWORD=1; _benchlab
  printf "%s\n" "${COMPREPLY[@]}"' _ "$root/usr/share/bash-completion/completions/benchlab" 2>&1)
[ "$out" = "report" ] || fail "the bash completion offered '$out' for 'benchlab rep', expected 'report'"

# The example campaign, run as an installed package runs it: /usr/bin/benchlab run
# /usr/share/benchlab/examples/hello.toml, in a mount namespace of its own where the package's
# usr/ is laid over the machine's /usr (overlayfs), so every path in the file is the installed
# one and nothing is installed on this machine. Without the privilege for that (not root), the
# file's /usr/ paths are moved into the extracted tree instead, as the agents' below are. It
# must exit 0 with each of its 24 windows measured (none failed or skipped: a target that cannot
# start fails its windows), both targets serving requests in every one, and each window valid or
# refused only by the gates that judge this machine rather than the targets (another process's
# CPU, the self-test's drift, steal, ...): on a machine busy with other work, such as builds
# beside this test, those refuse every window, as they should, and the test says so.
example=/usr/share/benchlab/examples/hello.toml
overlay='mount -t overlay benchlab-deb-test -o "lowerdir=$1/usr:/usr" /usr'
if unshare --mount sh -c "$overlay" _ "$root" 2>/dev/null; then
  unshare --mount bash -c "$overlay"' && exec /usr/bin/benchlab run "$2" --db "$3" --progress plain' \
    _ "$root" "$example" "$work/example.db" > "$work/example.out" 2>&1
  rc=$?
else
  echo "note: $example runs with its paths moved into the extracted tree (no overlay mount here)"
  sed "s|\"/usr/|\"$root/usr/|g" "$root$example" > "$root$example.moved"
  "$root/usr/bin/benchlab" run "$root$example.moved" --db "$work/example.db" --progress plain \
    > "$work/example.out" 2>&1
  rc=$?
fi
summary=$(grep -E '^[0-9]+ windows: ' "$work/example.out" | tail -n 1)
if [ $rc -ne 0 ]; then
  fail "benchlab run $example exited $rc:$(printf '\n')$(tail -n 20 "$work/example.out")"
elif ! [[ "$summary" =~ ^24\ windows:\ ([0-9]+)\ valid,\ [0-9]+\ invalid,\ 0\ failed\ or\ skipped ]]; then
  fail "$example: expected 24 windows, none failed or skipped; it said:$(printf '\n')$(tail -n 8 "$work/example.out")"
elif ! command -v sqlite3 >/dev/null; then
  echo "$example: $summary (no sqlite3 to read its windows)"
else
  valid=${BASH_REMATCH[1]}
  # Each window's newest attempt: per target, how many served requests; and every reason a
  # window was refused for that is not one of the machine's gates (docs/gates.md).
  newest="select * from windows w where attempt = (select max(attempt) from windows n
    where n.campaign_id = w.campaign_id and n.target = w.target and n.scenario = w.scenario
      and n.connections = w.connections and n.round = w.round)"
  served=$(sqlite3 "$work/example.db" "select target || ' ' || count(*) from ($newest)
    where verdict in ('valid', 'invalid') and requests > 0 and rps > 0 group by target order by target")
  target_reasons=$(sqlite3 "$work/example.db" "select distinct r.value from ($newest) w,
    json_each(w.reasons) r where w.verdict != 'valid' and substr(r.value, 1, instr(r.value, ':') - 1)
    not in ('foreign_cpu', 'selftest_drift', 'steal', 'background_scheduling', 'on_battery',
            'throttling', 'frequency', 'swap')")
  if [ "$served" != "$(printf 'hello-server 12\nnginx 12')" ]; then
    fail "$example: windows with requests served, per target (expected 12 each):$(printf '\n')$served"
  elif [ -n "$target_reasons" ]; then
    fail "$example: windows refused for their targets:$(printf '\n')$target_reasons"
  elif [ "$valid" -eq 0 ]; then
    echo "$example: $summary; every window served, all refused by this machine's gates:"
    sqlite3 "$work/example.db" "select distinct substr(r.value, 1, instr(r.value, ':') - 1)
      from windows w, json_each(w.reasons) r" | sed 's/^/  /'
  else
    echo "$example: $summary"
  fi
fi

# Each example agent configuration, read and started by the packaged agent: its paths moved into
# the extracted tree and its coordinator to a closed port (the agent keeps retrying it). It must
# be listening within 10 s, still running, and stop cleanly on SIGTERM.
for config in "$root"/etc/benchlab/agent-*.toml; do
  name=$(basename "$config")
  state=$work/state-$name
  mkdir -m 0700 "$state"
  sed -e "s|\"/usr/|\"$root/usr/|g" -e 's|^coordinator = .*|coordinator = "127.0.0.1:9"|' \
    "$config" > "$work/$name"
  STATE_DIRECTORY=$state "$root/usr/bin/benchlab" agent --config "$work/$name" \
    2> "$work/$name.log" &
  agent_pid=$!
  for _ in $(seq 100); do
    grep -qs 'listening on' "$work/$name.log" && break
    kill -0 "$agent_pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q 'listening on' "$work/$name.log" || ! kill -0 "$agent_pid" 2>/dev/null; then
    fail "/etc/benchlab/$name: the packaged agent did not start:$(printf '\n')$(cat "$work/$name.log")"
    kill -9 "$agent_pid" 2>/dev/null
    wait "$agent_pid" 2>/dev/null
  else
    kill -TERM "$agent_pid"
    wait "$agent_pid" || fail "/etc/benchlab/$name: the agent exited $? on SIGTERM"
  fi
  agent_pid=
done

if [ $failures -ne 0 ]; then
  echo "package.check: $failures failure(s) in $(basename "$deb")" >&2
  exit 1
fi
echo "package.check: $(basename "$deb") passes ($(stat -c %s "$deb") bytes)"
