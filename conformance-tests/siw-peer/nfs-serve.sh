#!/bin/sh
# /usr/sbin/jw-nfs-serve in the NFS variant of the siw peer (build-nfs-peer.sh puts it there):
# exports a tmpfs at /srv/nfs with the kernel NFS server, over RDMA on port 20049 (svcrdma, on
# siw0) and TCP 2049, with MOUNT (rpc.mountd) on TCP port 20048 so the host can forward it.
#
# Usage: jw-nfs-serve [max block size in octets, default 1048576]
# The export is insecure (a user-space client's source port is not privileged) and
# no_root_squash (AUTH_SYS uid 0 writes as root). Prints the portlist and exports at the end.
set -e
BLOCK=${1:-1048576}
mkdir -p /srv/nfs /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /run/rpcbind /proc/fs/nfsd
grep -q " /srv/nfs " /proc/mounts || mount -t tmpfs -o size=200m,mode=0777 tmpfs /srv/nfs
grep -q " /proc/fs/nfsd " /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd
: >/var/lib/nfs/etab
: >/var/lib/nfs/rmtab
echo '/srv/nfs *(rw,insecure,no_root_squash,no_subtree_check,fsid=0,sync)' >/etc/exports
pidof rpcbind >/dev/null || rpcbind -w
# nfsd takes its block size before its threads start (a 512 MiB guest defaults to 64 KiB).
echo "$BLOCK" >/proc/fs/nfsd/max_block_size
exportfs -ra
pidof rpc.mountd >/dev/null || rpc.mountd -p 20048
rpc.nfsd 4
grep -q '^rdma 20049' /proc/fs/nfsd/portlist || echo 'rdma 20049' >/proc/fs/nfsd/portlist
echo "portlist:"; cat /proc/fs/nfsd/portlist
echo "max_block_size: $(cat /proc/fs/nfsd/max_block_size)"
echo "exports:"; exportfs -v
