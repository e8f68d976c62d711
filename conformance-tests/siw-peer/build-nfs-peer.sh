#!/usr/bin/env bash
# Builds the NFS-over-RDMA variant of the siw peer: the kernel NFS server (nfsd with svcrdma) and
# the NFS client modules, on top of the rping/perftest peer that build-peer.sh builds, in a cache
# of its own so that peer's cache, key and image stay exactly as they are.
#
# The variant is the base peer's kernel and initramfs plus a second, appended cpio archive (the
# kernel unpacks concatenated archives in order, later files replacing earlier ones) holding:
#
#   - sunrpc, rpcrdma (xprtrdma and svcrdma), nfsd, the NFSv3/v4 client and their dependencies,
#     from the same linux-image package as the base, with modules.dep rebuilt over both sets;
#   - /etc/siw-peer/modules: the base's load list followed by the NFS modules, so the base's
#     guest-init.sh loads them at boot with everything else;
#   - rpcbind, rpc.mountd, rpc.nfsd, exportfs, mount.nfs, showmount, rpcinfo, fio and their
#     libraries (libtirpc, libnsl, Kerberos, and fio's I/O engines' ...), /etc/netconfig;
#   - /usr/sbin/jw-nfs-serve (nfs-serve.sh), which a test runs in the booted guest to export a
#     tmpfs at /srv/nfs over RDMA on port 20049, with MOUNT on TCP port 20048.
#
# Usage: build-nfs-peer.sh [--force] [--print-dir]
# Environment:
#   JIWARP_SIW_NFS_CACHE  cache directory (default ~/.cache/jiwarp-siw-nfs-peer)
#   JIWARP_SIW_CACHE      the base peer's cache, passed on to build-peer.sh
#
# Cache layout: vmlinuz, initrd.img (base + overlay), versions.txt, key, build.log.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${JIWARP_SIW_NFS_CACHE:-${HOME:-/tmp}/.cache/jiwarp-siw-nfs-peer}
FORCE=0 PRINT_DIR=0
for arg in "$@"; do
  case $arg in
    --force) FORCE=1 ;;
    --print-dir) PRINT_DIR=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-nfs-peer.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

log() { echo "siw-nfs-peer: $*" >&2; }
die() { echo "siw-nfs-peer: error: $*" >&2; exit 1; }
done_msg() { [ "$PRINT_DIR" = 1 ] && echo "$CACHE"; return 0; }

NFS_PACKAGES=(libc6 nfs-kernel-server nfs-common rpcbind keyutils libtirpc3 libtirpc-common libnsl2
  libkrb5-3 libgssapi-krb5-2 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1 libblkid1
  libevent-core-2.1-7 libsqlite3-0 libwrap0 libmount1 libuuid1 libdevmapper1.02.1 libselinux1
  libpcre2-8-0 libcap2 libsystemd0 liblz4-1 liblzma5 libzstd1 libgcrypt20 libgpg-error0
  fio libaio1 libnuma1 zlib1g libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200
  libgfapi0 libgfrpc0 libgfxdr0 libglusterfs0 libacl1 libnbd0 libgnutls30 libgmp10 libhogweed6
  libnettle8 libidn2-0 libp11-kit0 libffi8 libtasn1-6 libunistring2 libxml2 libicu72
  librados2 librbd1 libboost-iostreams1.74.0 libboost-thread1.74.0 libbz2-1.0 libfmt9 libgcc-s1
  libstdc++6 libssl3 libudev1 libcryptsetup12 libargon2-1 libjson-c5 libpmem1 libpmemblk1
  libdaxctl1 libndctl6 libkmod2)
# fio (the kernel client's load in SiwNfsServeTest) links every I/O engine Debian builds, Ceph's
# and Gluster's among them, so their libraries come along although only its psync engine runs.
NFS_PROGRAMS=(sbin/rpcbind usr/sbin/rpcinfo usr/sbin/rpc.mountd usr/sbin/rpc.nfsd usr/sbin/exportfs
  sbin/mount.nfs sbin/showmount usr/bin/fio)
NFS_MODULES=(sunrpc rpcrdma nfsd nfs nfsv3 nfsv4)

# The base peer, built or checked by its own script (its cache and key are untouched by us).
BASE=$(bash "$HERE/build-peer.sh" --print-dir | tail -n1)
[ -f "$BASE/key" ] && [ -f "$BASE/initrd.img" ] || die "the base siw peer is not built in $BASE"
ABI=$(sed -n 's/^kernel-abi=//p' "$BASE/versions.txt")
IMAGE_VERSION=$(sed -n "s/^linux-image-$ABI=//p" "$BASE/versions.txt")
[ -n "$ABI" ] && [ -n "$IMAGE_VERSION" ] || die "no kernel in $BASE/versions.txt"

mkdir -p "$CACHE/apt"
apt_cache() {
  apt-cache -o Dir::Cache::pkgcache="$CACHE/apt/pkgcache.bin" \
    -o Dir::Cache::srcpkgcache="$CACHE/apt/srcpkgcache.bin" "$@"
}
versions_of() {
  apt_cache policy "$@" | awk '
    /^[^ ]/ { pkg = $1; sub(/:$/, "", pkg) }
    /^  Candidate:/ { if ($2 == "(none)") { print "missing " pkg > "/dev/stderr"; bad = 1 } else print pkg "=" $2 }
    END { exit bad }'
}
if command -v apt-cache >/dev/null; then
  VERSIONS=$( { versions_of "${NFS_PACKAGES[@]}" || die "an NFS package has no installation candidate"
                echo "linux-image-$ABI=$IMAGE_VERSION"; echo "base-key=$(cat "$BASE/key")"; } | sort)
else
  [ -f "$CACHE/key" ] || die "no apt-cache and no cached NFS peer in $CACHE"
  log "up to date (apt-cache missing: package versions not checked) in $CACHE"; done_msg; exit 0
fi
KEY=$( { echo "$VERSIONS"; sha256sum "$HERE/build-nfs-peer.sh" "$HERE/nfs-serve.sh" | cut -d' ' -f1; } |
       sha256sum | cut -c1-16)
is_current() {
  [ -f "$CACHE/key" ] && [ "$(cat "$CACHE/key")" = "$KEY" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/initrd.img" ]
}
if [ "$FORCE" = 0 ] && is_current; then
  log "up to date ($ABI, key $KEY) in $CACHE"; done_msg; exit 0
fi

exec 9>"$CACHE/.lock"
flock 9
if [ "$FORCE" = 0 ] && is_current; then
  log "up to date ($ABI, key $KEY) in $CACHE (built by a concurrent run)"; done_msg; exit 0
fi
START=$(date +%s)
WORK="$CACHE/work"
rm -rf "$WORK" "$CACHE/new"
mkdir -p "$WORK/debs" "$WORK/root" "$WORK/base" "$CACHE/new"
BUILD_LOG="$CACHE/new/build.log"
log "building ($ABI, key $KEY) in $CACHE; log in $CACHE/build.log"
run() {
  echo "+ $*" >>"$BUILD_LOG"
  if ! "$@" >>"$BUILD_LOG" 2>&1; then
    tail -n 40 "$BUILD_LOG" >&2
    cp "$BUILD_LOG" "$CACHE/build.log" 2>/dev/null || true
    die "step failed: $*"
  fi
}

log "downloading $(grep -vc '^base-key=' <<<"$VERSIONS") packages"
cd "$WORK/debs"
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root)
# shellcheck disable=SC2046
run apt-get "${sandbox[@]}" download $(grep -v '^base-key=' <<<"$VERSIONS")
for deb in *.deb; do run dpkg-deb -x "$deb" "$WORK/root"; done
R="$WORK/root"
MODDIR="$R/lib/modules/$ABI"
run depmod -b "$R" "$ABI"

log "unpacking the base initramfs"
(cd "$WORK/base" && gzip -dc "$BASE/initrd.img" | cpio -i -d --quiet --no-absolute-filenames) ||
  die "cannot unpack $BASE/initrd.img"
B="$WORK/base"
I="$WORK/overlay"
mkdir -p "$I"/usr/{bin,sbin,lib/x86_64-linux-gnu} "$I"/etc/siw-peer "$I"/var/lib/nfs/{rpc_pipefs,v4recovery} \
  "$I"/srv/nfs "$I"/run

# --- modules: the NFS ones and their dependencies not already in the base --------------------
declare -A HAVE_MOD=() MOD_PATH=()
while read -r m; do HAVE_MOD[${m#\?}]=1; done <"$B/etc/siw-peer/modules"
while IFS=: read -r path _; do name=$(basename "$path" .ko); MOD_PATH[${name//-/_}]=$path; done <"$MODDIR/modules.dep"
cp "$B/etc/siw-peer/modules" "$I/etc/siw-peer/modules"
add_module() {
  local name=${1//-/_} path dep
  path=${MOD_PATH[$name]:-}
  [ -n "$path" ] || die "module $1 is not in linux-image-$ABI"
  [ -n "${HAVE_MOD[$path]:-}" ] && return 0
  for dep in $(grep "^$path:" "$MODDIR/modules.dep" | cut -d: -f2-); do add_module "$(basename "$dep" .ko)"; done
  HAVE_MOD[$path]=1
  mkdir -p "$I/usr/lib/modules/$ABI/$(dirname "$path")" "$B/usr/lib/modules/$ABI/$(dirname "$path")"
  cp "$MODDIR/$path" "$I/usr/lib/modules/$ABI/$path"
  cp "$MODDIR/$path" "$B/usr/lib/modules/$ABI/$path"
  echo "$path" >>"$I/etc/siw-peer/modules"
}
for m in "${NFS_MODULES[@]}"; do add_module "$m"; done
run depmod -b "$B" "$ABI"
cp "$B/usr/lib/modules/$ABI"/modules.{dep,dep.bin,alias,alias.bin,symbols,symbols.bin,softdep,devname} \
  "$I/usr/lib/modules/$ABI/" 2>/dev/null || true

# --- programs and the libraries they need that the base lacks --------------------------------
LIBDIRS=("$R/usr/lib/x86_64-linux-gnu" "$R/lib/x86_64-linux-gnu" "$R/lib64" "$R/usr/lib/x86_64-linux-gnu/ceph")
HOST_LIBDIRS=(/usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)
ELF_QUEUE=()
for prog in "${NFS_PROGRAMS[@]}"; do
  [ -f "$R/$prog" ] || die "$prog is missing from the packages"
  dest=usr/$(sed 's#^usr/##' <<<"$prog")
  install -m 0755 "$R/$prog" "$I/$dest"; ELF_QUEUE+=("$I/$dest")
done
declare -A HAVE_LIB=()
for lib in "$B"/usr/lib/x86_64-linux-gnu/*.so* "$B"/usr/lib64/*.so*; do HAVE_LIB[$(basename "$lib")]=1; done
HOST_LIBS=()
while [ ${#ELF_QUEUE[@]} -gt 0 ]; do
  elf=${ELF_QUEUE[0]}; ELF_QUEUE=("${ELF_QUEUE[@]:1}")
  for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    [ -n "${HAVE_LIB[$lib]:-}" ] && continue
    found=""
    for d in "${LIBDIRS[@]}"; do [ -e "$d/$lib" ] && { found="$d/$lib"; break; }; done
    if [ -z "$found" ]; then
      for d in "${HOST_LIBDIRS[@]}"; do [ -e "$d/$lib" ] && { found="$d/$lib"; HOST_LIBS+=("$lib"); break; }; done
    fi
    [ -n "$found" ] || die "no $lib for $(basename "$elf"): add its Debian package to NFS_PACKAGES"
    cp -L "$found" "$I/usr/lib/x86_64-linux-gnu/$lib"
    HAVE_LIB[$lib]=1
    ELF_QUEUE+=("$I/usr/lib/x86_64-linux-gnu/$lib")
  done
done
[ ${#HOST_LIBS[@]} -eq 0 ] || log "warning: taken from the host, not a package: ${HOST_LIBS[*]}"
cp "$R/etc/netconfig" "$I/etc/netconfig"
printf 'rpcbind\t\t111/tcp\t\tportmapper sunrpc\nrpcbind\t\t111/udp\t\tportmapper sunrpc\nnfs\t\t2049/tcp\nmountd\t\t20048/tcp\n' >"$I/etc/services"
printf 'ip\t0\tIP\ntcp\t6\tTCP\nudp\t17\tUDP\n' >"$I/etc/protocols"
printf 'rpcbind\t\t100000\tportmap sunrpc\nnfs\t\t100003\tnfsprog\nmountd\t\t100005\tmount showmount\nnlockmgr\t100021\nstatus\t\t100024\n' >"$I/etc/rpc"
cp "$B/etc/passwd" "$I/etc/passwd"; echo '_rpc:x:107:65534::/run/rpcbind:/usr/sbin/nologin' >>"$I/etc/passwd"
echo 'nogroup:x:65534:' | cat "$B/etc/group" - >"$I/etc/group"
install -m 0755 "$HERE/nfs-serve.sh" "$I/usr/sbin/jw-nfs-serve"
echo "$VERSIONS" >"$I/etc/siw-peer/nfs-versions"

# The overlay is appended to the base archive: the kernel reads them one after the other.
{ cat "$BASE/initrd.img"
  (cd "$I" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -6
} >"$CACHE/new/initrd.img"
cp "$BASE/vmlinuz" "$CACHE/new/vmlinuz"
{ cat "$BASE/versions.txt"; echo "$VERSIONS"; } | sort -u >"$CACHE/new/versions.txt"
echo "$KEY" >"$CACHE/new/key"
rm -f "$CACHE/key"
for f in vmlinuz initrd.img versions.txt build.log key; do mv -f "$CACHE/new/$f" "$CACHE/$f"; done
rmdir "$CACHE/new"
rm -rf "$WORK"
log "built in $(( $(date +%s) - START ))s: $(du -h "$CACHE/initrd.img" | cut -f1) initramfs"
done_msg
