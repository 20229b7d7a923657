#!/bin/bash
# The first program of every host of a compose site (installed as
# /usr/local/sbin/site-init): the site's configuration and munge key from
# /site, then the host's role in the foreground. Compute hosts first get
# cgroup hierarchies of their own (see mount_own_cgroups).
set -euo pipefail
role=${1:?usage: site-init mariadb|slurmdbd|slurmctld|slurmd|slurmrestd|login}

# Wait up to $3 seconds for host $1 to take connections on port $2.
wait_for_port() {
    local deadline=$((SECONDS + $3))
    until (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; do
        if ((SECONDS > deadline)); then
            echo "site-init: $1:$2 did not answer within $3 s" >&2
            exit 1
        fi
        sleep 0.2
    done
}

# Run "$@", a daemon in the foreground named $1, as systemd runs its unit:
# `touch /run/$1.held` and SIGTERM stop it and keep it stopped, its host up
# (an admin's `systemctl stop`: its port refuses at once, its name still
# resolves); removing the file starts it again. A daemon that ends while not
# held ends the container, as when it was the container's first process, so
# a crash is seen. SIGTERM to this script (docker stop) is passed on.
supervise() {
    local held="/run/$1.held" pid st
    trap 'kill -TERM "$pid" 2>/dev/null || true' TERM INT
    while :; do
        "$@" &
        pid=$!
        # wait returns early when a trapped signal comes: again until it ends.
        while :; do
            wait "$pid" && st=0 || st=$?
            kill -0 "$pid" 2>/dev/null || break
        done
        [ -e "$held" ] || exit "$st"
        while [ -e "$held" ]; do sleep 0.2; done
    done
}

# docker-compose 1.29 (Debian's) cannot ask for a private cgroup namespace,
# and docker mounts a container's hierarchies read-only. The entrypoint runs
# this script under `unshare --cgroup`, so this process's cgroup (the
# container's) is the root of a namespace of its own; mounting each
# hierarchy again, read-write, shows that root at /sys/fs/cgroup/*, and
# slurmd's cgroups land under the container's, apart from every other host's.
mount_own_cgroups() {
    local dev dir type opts rest
    while read -r dev dir type opts rest; do
        case "$type" in cgroup | cgroup2) ;; *) continue ;; esac
        umount "$dir"
        mount -t "$type" -o "rw,${opts#ro,}" "$dev" "$dir"
    done < <(grep -E '^cgroup2? /sys/fs/cgroup/' /proc/mounts)
}

# Slurm's configuration (slurmdbd.conf readable by SlurmUser only) and the
# site's munge key, as Debian's packages expect them.
install_config() {
    install -d -m 755 /etc/slurm
    install -m 644 /site/etc/*.conf /etc/slurm/
    install -d -o munge -g munge -m 700 /etc/munge
    install -o munge -g munge -m 400 /site/munge.key /etc/munge/munge.key
    install -d -o munge -g munge -m 755 /run/munge
    install -d -o slurm -g slurm -m 755 /var/log/slurm /var/lib/slurm
    # The JWT key, where slurmrestd runs: slurmctld and slurmdbd only see it.
    if [ -f /site/jwt/jwt_hs256.key ]; then
        install -o slurm -g slurm -m 600 /site/jwt/jwt_hs256.key /etc/slurm/jwt_hs256.key
    fi
    runuser -u munge -- /usr/sbin/munged
}

# The test users' homes, on the /home every login and compute host shares.
make_homes() {
    local user
    for user in alice bob; do
        install -d -o "$user" -g "$user" -m 755 "/home/$user"
    done
}

case "$role" in
mariadb)
    install -d -o mysql -g mysql /run/mysqld /var/log/slurm
    if [ ! -d /var/lib/mysql/mysql ]; then
        mariadb-install-db --user=mysql --skip-test-db >/var/log/slurm/mariadb-install.log 2>&1
    fi
    # Slurm's accounting schema wants a long lock wait and a big log; and
    # MariaDB 11.8 (trixie) isolates transactions by snapshot, on which
    # slurmdbd 26.05 says it dies at a write conflict: off, where it exists.
    snapshot=()
    if mariadbd --verbose --help 2>/dev/null | grep -q -- '--innodb-snapshot-isolation'; then
        snapshot=(--innodb-snapshot-isolation=OFF)
    fi
    exec mariadbd --user=mysql --bind-address=0.0.0.0 --skip-name-resolve \
        --innodb-lock-wait-timeout=900 --innodb-log-file-size=64M "${snapshot[@]}" \
        --init-file=/site/dbd/mariadb-init.sql --log-error=/var/log/slurm/mariadb.log
    ;;
slurmdbd)
    install_config
    # Only this host and mariadb see /site/dbd (the database's password).
    install -o slurm -g slurm -m 600 /site/dbd/slurmdbd.conf /etc/slurm/slurmdbd.conf
    wait_for_port mariadb 3306 120
    # Supervised: a campaign stops the daemon as an admin does, its host up.
    supervise slurmdbd -D
    ;;
slurmctld)
    install_config
    install -d -o slurm -g slurm -m 755 /var/lib/slurm/slurmctld
    wait_for_port slurmdbd 6819 120
    # The cluster, its accounts, users and QOS, before slurmctld first asks.
    bash /site/etc/accounts.sh >/var/log/slurm/accounts.log 2>&1
    exec slurmctld -D
    ;;
slurmd)
    mount_own_cgroups
    install_config
    make_homes
    install -d -m 755 /var/lib/slurm/slurmd
    # GPUs for gres.conf: character devices with no driver behind them.
    for ((i = 0; i < ${SITE_GPUS:-0}; i++)); do
        [ -e "/dev/nvidia$i" ] || mknod -m 666 "/dev/nvidia$i" c 195 "$i"
    done
    wait_for_port slurmctld 6817 180
    exec slurmd -D
    ;;
slurmrestd)
    install_config
    # slurmrestd refuses to run as root or SlurmUser: a user of its own.
    id slurmrestd >/dev/null 2>&1 || useradd --system -U -M slurmrestd
    wait_for_port slurmctld 6817 180
    # rest_auth/jwt: each request carries its user's token (scontrol token).
    # slurmrestd unshares the System V IPC namespace and its file table
    # (unshare(2)), which docker's seccomp profile refuses without
    # SYS_ADMIN: the container has an IPC namespace of its own already, and
    # nothing but this script and runuser share its files.
    export SLURMRESTD_SECURITY=disable_unshare_sysv,disable_unshare_files
    # Its own connections to slurmctld are auth/jwt too, each with the
    # requester's token (Slurm's REST guide: SLURM_JWT=daemon).
    export SLURM_JWT=daemon
    exec runuser -u slurmrestd -- slurmrestd -a rest_auth/jwt 0.0.0.0:6820
    ;;
login)
    install_config
    make_homes
    exec sleep infinity
    ;;
*)
    echo "site-init: unknown role '$role'" >&2
    exit 2
    ;;
esac
