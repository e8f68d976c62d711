#!/usr/bin/env bash
# The release tarball as a user gets it: unpacked outside the source tree, with only Java on PATH
# beside the shell's basic tools, bin/jiwarp (called directly and through a symlink) prints the
# version the pom gives, the tarball holds exactly what the README promises, and its bash
# completion parses. cli/pom.xml runs this at integration-test (mvn verify); -DskipTests skips it.
# Usage: check-release.sh TARBALL VERSION
set -euo pipefail
tarball=$1
version=$2
fail() { echo "check-release: $*" >&2; exit 1; }

[ -f "$tarball" ] || fail "$tarball not found"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expected="jiwarp-$version/LICENSE
jiwarp-$version/README.md
jiwarp-$version/bin/jiwarp
jiwarp-$version/completion/jiwarp.bash
jiwarp-$version/lib/jiwarp.jar"
listing=$(tar -tzf "$tarball" | grep -v '/$' | LC_ALL=C sort)
[ "$listing" = "$expected" ] || fail "$tarball holds
$listing
instead of
$expected"

tar -xzf "$tarball" -C "$work"
home="$work/jiwarp-$version"
[ -x "$home/bin/jiwarp" ] || fail "bin/jiwarp is not executable"
bash -n "$home/completion/jiwarp.bash" || fail "completion/jiwarp.bash is not valid bash"

# Only Java: a PATH of the system's tools and a directory holding nothing but a link to java.
java_bin=$(command -v java) || fail "no java on PATH"
mkdir "$work/java-only"
ln -s "$(readlink -f "$java_bin")" "$work/java-only/java"
mkdir "$work/elsewhere"
ln -s "$home/bin/jiwarp" "$work/elsewhere/jiwarp"
for launcher in "$home/bin/jiwarp" "$work/elsewhere/jiwarp"; do
  for args in "-V" "--version" "bench -V" "check --version"; do
    # shellcheck disable=SC2086
    out=$(cd "$work" && env -i HOME="$work" PATH="$work/java-only:/usr/bin:/bin" "$launcher" $args 2>&1) \
      || fail "$launcher $args failed: $out"
    [ "$out" = "jiwarp $version" ] || fail "$launcher $args printed '$out', not 'jiwarp $version'"
  done
done
echo "check-release: $(basename "$tarball") unpacks to bin/jiwarp, lib/jiwarp.jar, LICENSE, README.md and completion/jiwarp.bash; bin/jiwarp -V prints 'jiwarp $version' with Java alone"
