#!/usr/bin/env bash
# Builds the Linux soft-iWARP (siw) interop peer for the conformance tests, from Debian 12 packages
# only, and caches it outside the repository:
#
#   - the kernel: Debian 12's linux-image-<abi>-amd64 (the 6.1 ABI that linux-image-amd64 points at);
#   - siw.ko, built out of tree from linux-source-6.1 (drivers/infiniband/sw/siw) against the
#     matching linux-headers-<abi>-amd64, because Debian ships without CONFIG_RDMA_SIW;
#   - a busybox initramfs holding ib_core, iw_cm, rdma_cm, ib_uverbs, rdma_ucm, virtio_net,
#     virtio_console (the command channel's virtio-serial port) and their
#     dependencies from the stock image, rdma-core user space (rping, perftest, the siw provider,
#     iproute2's rdma) with its shared libraries, and guest-init.sh as /init.
#
# The cache is keyed on the package versions and on this script and guest-init.sh, so a second run
# prints "up to date" and returns at once; it rebuilds only when one of them changes.
#
# Usage: build-peer.sh [--force] [--update] [--print-dir]
#   --force      rebuild even when the cache is up to date
#   --update     run apt-get update first (otherwise only when apt knows no linux-image-amd64)
#   --print-dir  print the cache directory on the last line of stdout (for callers)
# Environment:
#   JIWARP_SIW_CACHE       cache directory (default ~/.cache/jiwarp-siw-peer)
#   JIWARP_SIW_KERNEL_ABI  kernel ABI to use instead of linux-image-amd64's, e.g. 6.1.0-56-amd64
#   JIWARP_SIW_KEEP_WORK   keep the work tree (unpacked packages, initramfs) for inspection
#
# Cache layout: vmlinuz, initrd.img, versions.txt (package=version, the kernel ABI), key, build.log.
# Installing missing build tools with apt needs root; everything else runs as any user.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${JIWARP_SIW_CACHE:-${HOME:-/tmp}/.cache/jiwarp-siw-peer}
FORCE=0 UPDATE=0 PRINT_DIR=0
for arg in "$@"; do
  case $arg in
    --force) FORCE=1 ;;
    --update) UPDATE=1 ;;
    --print-dir) PRINT_DIR=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-peer.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

log() { echo "siw-peer: $*" >&2; }
die() { echo "siw-peer: error: $*" >&2; exit 1; }
done_msg() { [ "$PRINT_DIR" = 1 ] && echo "$CACHE"; return 0; }

# User space that goes into the guest, and the libraries it links against. Any library not found
# in these packages is taken from the host (a Debian 12 system) with a warning.
USER_PACKAGES=(busybox-static rdmacm-utils perftest ibverbs-providers libibverbs1 librdmacm1 iproute2)
LIB_PACKAGES=(libc6 libgcc-s1 libibumad3 libnl-3-200 libnl-route-3-200 libpci3 libudev1 zlib1g libmnl0 libbsd0 libmd0 libcap2)
GUEST_PROGRAMS=(usr/bin/rping usr/bin/rdma
  usr/bin/ib_write_bw usr/bin/ib_read_bw usr/bin/ib_send_bw usr/bin/ib_atomic_bw
  usr/bin/ib_write_lat usr/bin/ib_read_lat usr/bin/ib_send_lat usr/bin/ib_atomic_lat
  usr/bin/ucmatose usr/bin/rdma_server usr/bin/rdma_client)
# Libraries that are dlopen()ed rather than linked: glibc needs libgcc_s for pthread_exit/cancel.
DLOPENED_LIBS=(libgcc_s.so.1)
# Kernel modules to load, in this order (each after its dependencies); '?' marks a module whose
# load may fail (crc32c-intel needs SSE4.2, which TCG's default CPU may lack).
WANTED_MODULES=(crc32c_generic ?crc32c_intel libcrc32c virtio_pci virtio_net virtio_console
  ib_core iw_cm ib_cm rdma_cm ib_uverbs rdma_ucm siw)

# ---------------------------------------------------------------------------------------------
# Which versions would we build from?

# apt-cache rebuilds its package cache on every call where Debian's docker-style configs switch
# that cache off (~0.7 s a call); keep one beside ours so an up-to-date check stays fast.
mkdir -p "$CACHE/apt"
apt_cache() {
  apt-cache -o Dir::Cache::pkgcache="$CACHE/apt/pkgcache.bin" \
    -o Dir::Cache::srcpkgcache="$CACHE/apt/srcpkgcache.bin" "$@"
}

apt_candidate() { # prints "pkg=version" for each package, fails when one has no candidate
  apt_cache policy "$@" | awk '
    /^[^ ]/ { pkg = $1; sub(/:$/, "", pkg) }
    /^  Candidate:/ { if ($2 == "(none)") { print "missing " pkg > "/dev/stderr"; bad = 1 } else print pkg "=" $2 }
    END { exit bad }'
}

have_apt_lists() { [[ $(apt_cache policy linux-image-amd64 2>/dev/null) == *"Candidate: "[0-9]* ]]; }

kernel_abi() {
  if [ -n "${JIWARP_SIW_KERNEL_ABI:-}" ]; then echo "$JIWARP_SIW_KERNEL_ABI"; return; fi
  local abi
  abi=$(apt_cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: linux-image-\(6\.1\.0-[0-9]*-amd64\)$/\1/p' | sort -V | tail -n1)
  if [ -z "$abi" ]; then # linux-image-amd64 moved past 6.1 (e.g. a backport): take the newest 6.1
    abi=$(apt_cache pkgnames linux-image-6.1.0- | sed -n 's/^linux-image-\(6\.1\.0-[0-9]*-amd64\)$/\1/p' |
          sort -V | tail -n1)
  fi
  [ -n "$abi" ] || die "apt knows no linux-image-6.1.0-*-amd64 (is this Debian 12 with apt lists?)"
  echo "$abi"
}

if ! command -v apt-cache >/dev/null; then
  [ -f "$CACHE/key" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/initrd.img" ] || die "no apt-cache and no cached peer in $CACHE"
  log "up to date (apt-cache missing: package versions not checked) in $CACHE"; done_msg; exit 0
fi
if [ "$UPDATE" = 1 ] || ! have_apt_lists; then
  if [ "$(id -u)" = 0 ]; then
    log "apt-get update"; apt-get update -qq >&2 || die "apt-get update failed"
  elif [ "$UPDATE" = 1 ]; then
    die "--update needs root"
  fi
fi
if ! have_apt_lists; then
  if [ -f "$CACHE/key" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/initrd.img" ]; then
    log "up to date (apt lists missing: package versions not checked) in $CACHE"; done_msg; exit 0
  fi
  die "apt knows no linux-image-amd64: run 'apt-get update' as root"
fi

ABI=$(kernel_abi)
COMMON=${ABI%-amd64}-common
KERNEL_PACKAGES=("linux-image-$ABI" "linux-headers-$ABI" "linux-headers-$COMMON" linux-kbuild-6.1)
VERSIONS=$(apt_candidate "${KERNEL_PACKAGES[@]}" "${USER_PACKAGES[@]}" "${LIB_PACKAGES[@]}") ||
  die "a package has no installation candidate"
IMAGE_VERSION=$(sed -n "s/^linux-image-$ABI=//p" <<<"$VERSIONS")
# The source must be the image's own version, whatever linux-source-6.1's candidate is.
VERSIONS=$(printf '%s\nlinux-source-6.1=%s\nkernel-abi=%s\n' "$VERSIONS" "$IMAGE_VERSION" "$ABI" | sort)
KEY=$( { echo "$VERSIONS"; sha256sum "$HERE/build-peer.sh" "$HERE/guest-init.sh" | cut -d' ' -f1; } |
       sha256sum | cut -c1-16)

is_current() {
  [ -f "$CACHE/key" ] && [ "$(cat "$CACHE/key")" = "$KEY" ] && [ -f "$CACHE/vmlinuz" ] && [ -f "$CACHE/initrd.img" ]
}
if [ "$FORCE" = 0 ] && is_current; then
  log "up to date ($ABI, key $KEY) in $CACHE"; done_msg; exit 0
fi

# ---------------------------------------------------------------------------------------------
# Build, one builder at a time (tests in parallel JVMs may all call this).

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
if [ "$FORCE" = 0 ] && is_current; then
  log "up to date ($ABI, key $KEY) in $CACHE (built by a concurrent run)"; done_msg; exit 0
fi
START=$(date +%s)
WORK="$CACHE/work"
rm -rf "$WORK" "$CACHE/new"
mkdir -p "$WORK/debs" "$WORK/root" "$CACHE/new"
BUILD_LOG="$CACHE/new/build.log"
log "building ($ABI, key $KEY) in $CACHE; log in $CACHE/build.log"

run() { # run a step with its output in the build log; show the log's tail when it fails
  echo "+ $*" >>"$BUILD_LOG"
  if ! "$@" >>"$BUILD_LOG" 2>&1; then
    tail -n 40 "$BUILD_LOG" >&2
    cp "$BUILD_LOG" "$CACHE/build.log" 2>/dev/null || true
    die "step failed: $*"
  fi
}

# Build and run tools. Only installed when missing, and only root can.
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v make >/dev/null || need+=(make)
command -v gcc-12 >/dev/null || need+=(gcc-12 build-essential)
[ -e /usr/include/stdio.h ] || need+=(libc6-dev)
command -v depmod >/dev/null || need+=(kmod)
command -v cpio >/dev/null || need+=(cpio)
command -v readelf >/dev/null || need+=(binutils)
command -v xz >/dev/null || need+=(xz-utils)
command -v flock >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing build tools; as root run: apt-get install ${need[*]}"
  log "installing ${need[*]}"
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
fi

log "downloading $(wc -l <<<"$VERSIONS") packages"
cd "$WORK/debs"
sandbox=()
[ "$(id -u)" = 0 ] && sandbox=(-o APT::Sandbox::User=root) # _apt cannot write into root's cache
# shellcheck disable=SC2046
run apt-get "${sandbox[@]}" download $(grep -v '^kernel-abi=' <<<"$VERSIONS")

log "unpacking"
for deb in *.deb; do
  case $deb in linux-source-*) continue ;; esac
  run dpkg-deb -x "$deb" "$WORK/root"
done
R="$WORK/root"
MODDIR="$R/lib/modules/$ABI"
[ -f "$R/boot/vmlinuz-$ABI" ] || die "no /boot/vmlinuz-$ABI in linux-image-$ABI"

# --- siw.ko, out of tree ----------------------------------------------------------------------
log "building siw.ko from linux-source-6.1 $IMAGE_VERSION"
SRC_DEB=$(ls linux-source-6.1_*.deb)
echo "+ extract drivers/infiniband/sw/siw from $SRC_DEB" >>"$BUILD_LOG"
dpkg-deb --fsys-tarfile "$SRC_DEB" | tar -xO ./usr/src/linux-source-6.1.tar.xz |
  xz -dc -T0 | tar -x -C "$WORK" linux-source-6.1/drivers/infiniband/sw/siw
mv "$WORK/linux-source-6.1/drivers/infiniband/sw/siw" "$WORK/siw"
HDR="$R/usr/src/linux-headers-$ABI"
# The arch headers' Makefile includes the common tree by absolute path; point it at our copy.
sed -i "s#^include /usr/src/#include $R/usr/src/#" "$HDR/Makefile"
run make -C "$HDR" M="$WORK/siw" CONFIG_RDMA_SIW=m -j"$(nproc)" modules
want_magic=$(modinfo -F vermagic "$MODDIR/kernel/drivers/infiniband/core/ib_core.ko")
have_magic=$(modinfo -F vermagic "$WORK/siw/siw.ko")
[ "$want_magic" = "$have_magic" ] || die "siw.ko vermagic '$have_magic' != ib_core's '$want_magic'"
mkdir -p "$MODDIR/extra"
cp "$WORK/siw/siw.ko" "$MODDIR/extra/siw.ko"
run depmod -b "$R" "$ABI"

# --- initramfs --------------------------------------------------------------------------------
log "assembling the initramfs"
I="$WORK/initramfs"
mkdir -p "$I"/usr/{bin,sbin,lib/x86_64-linux-gnu,lib64} "$I"/{proc,sys,dev,tmp,run,root,etc/siw-peer}
ln -s usr/bin "$I/bin"; ln -s usr/sbin "$I/sbin"; ln -s usr/lib "$I/lib"; ln -s usr/lib64 "$I/lib64"

# Kernel modules: the wanted ones and their dependencies, in load order.
declare -A MOD_PATH=() LOADED=()
while IFS=: read -r path _; do
  name=$(basename "$path" .ko); MOD_PATH[${name//-/_}]=$path
done <"$MODDIR/modules.dep"
ORDER=()
add_module() { # $1 = module name; appends it after its dependencies
  local name=${1//-/_} path dep
  [ -n "${LOADED[$name]:-}" ] && return 0
  path=${MOD_PATH[$name]:-}
  [ -n "$path" ] || die "module $1 is not in linux-image-$ABI"
  for dep in $(grep "^$path:" "$MODDIR/modules.dep" | cut -d: -f2-); do
    add_module "$(basename "$dep" .ko)"
  done
  LOADED[$name]=1
  ORDER+=("$path")
}
: >"$I/etc/siw-peer/modules"
for m in "${WANTED_MODULES[@]}"; do
  opt=""; case $m in \?*) opt="?"; m=${m#\?} ;; esac
  before=${#ORDER[@]}
  add_module "$m"
  for path in "${ORDER[@]:$before}"; do
    mkdir -p "$I/usr/lib/modules/$ABI/$(dirname "$path")"
    cp "$MODDIR/$path" "$I/usr/lib/modules/$ABI/$path"
    if [ "$path" = "${ORDER[-1]}" ]; then echo "$opt$path"; else echo "$path"; fi >>"$I/etc/siw-peer/modules"
  done
done
cp "$MODDIR"/modules.{order,builtin,builtin.modinfo} "$I/usr/lib/modules/$ABI/"
run depmod -b "$I" "$ABI"  # for busybox modprobe, which the kernel's request_module calls

# busybox and its applets (never over a real program from the packages).
cp "$R/bin/busybox" "$I/usr/bin/busybox"
for applet in $("$I/usr/bin/busybox" --list-full); do
  case $applet in bin/*|sbin/*) applet=usr/$applet ;; esac
  [ -e "$I/$applet" ] || [ -L "$I/$applet" ] || ln -s /usr/bin/busybox "$I/$applet"
done

# Programs, then the closure of their shared libraries (DT_NEEDED), looked up in the unpacked
# packages first and on the host (Debian 12) second.
LIBDIRS=("$R/usr/lib/x86_64-linux-gnu" "$R/lib/x86_64-linux-gnu" "$R/lib64")
HOST_LIBDIRS=(/usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)
ELF_QUEUE=()
for prog in "${GUEST_PROGRAMS[@]}"; do
  [ -f "$R/$prog" ] || die "$prog is missing from the packages"
  install -m 0755 "$R/$prog" "$I/$prog"; ELF_QUEUE+=("$I/$prog")
done
install -m 0755 "$R/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so" -D \
  "$I/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so"
ELF_QUEUE+=("$I/usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav34.so")
for lib in "${DLOPENED_LIBS[@]}"; do
  found=$(ls "$R"/{usr/,}lib/x86_64-linux-gnu/"$lib" 2>/dev/null | head -n1 || true)
  [ -n "$found" ] || die "no $lib in LIB_PACKAGES"
  cp -L "$found" "$I/usr/lib/x86_64-linux-gnu/$lib"; ELF_QUEUE+=("$I/usr/lib/x86_64-linux-gnu/$lib")
done
mkdir -p "$I/etc/libibverbs.d"
cp "$R/etc/libibverbs.d/siw.driver" "$I/etc/libibverbs.d/"
cp -L "$R/lib64/ld-linux-x86-64.so.2" "$I/usr/lib64/ld-linux-x86-64.so.2"
declare -A HAVE_LIB=([ld-linux-x86-64.so.2]=1)
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
    [ -n "$found" ] || die "no $lib for $(basename "$elf"): add its Debian package to LIB_PACKAGES"
    cp -L "$found" "$I/usr/lib/x86_64-linux-gnu/$lib"
    HAVE_LIB[$lib]=1
    ELF_QUEUE+=("$I/usr/lib/x86_64-linux-gnu/$lib")
  done
done
[ ${#HOST_LIBS[@]} -eq 0 ] || log "warning: taken from the host, not a package: ${HOST_LIBS[*]}"

cat >"$I/etc/nsswitch.conf" <<'EOF'
hosts: files
EOF
printf '127.0.0.1 localhost\n10.0.2.15 siw-peer\n10.0.2.2 host\n' >"$I/etc/hosts"
echo 'root:x:0:0:root:/root:/bin/sh' >"$I/etc/passwd"
echo 'root:x:0:' >"$I/etc/group"
echo "$VERSIONS" >"$I/etc/siw-peer/versions"
install -m 0755 "$HERE/guest-init.sh" "$I/init"

(cd "$I" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip -6 >"$CACHE/new/initrd.img"
cp "$R/boot/vmlinuz-$ABI" "$CACHE/new/vmlinuz"
echo "$VERSIONS" >"$CACHE/new/versions.txt"
echo "$KEY" >"$CACHE/new/key"

# Publish: the key goes last, so a half-written cache never looks current.
rm -f "$CACHE/key"
for f in vmlinuz initrd.img versions.txt build.log key; do mv -f "$CACHE/new/$f" "$CACHE/$f"; done
rmdir "$CACHE/new"
[ -n "${JIWARP_SIW_KEEP_WORK:-}" ] || rm -rf "$WORK"
log "built in $(( $(date +%s) - START ))s: $(du -h "$CACHE/initrd.img" | cut -f1) initramfs, kernel $ABI"
done_msg
