# Shared by start, stop and status (sourced, not run): option parsing, the cluster's paths, and
# finding the daemons (and job steps) that belong to one cluster folder.
# shellcheck shell=bash

export PATH="/usr/sbin:/sbin:$PATH"
umask 022

DIR=${HYBRIDTUNE_CLUSTER_DIR:-/tmp/hybridtune-cluster}
NODES=2
CORES=1

die() { echo "local-cluster: $*" >&2; exit 1; }

# parse_args [--nodes N] [--cores-per-node C] [--dir DIR]; the two shape options only where $1 is "shape".
parse_args() {
    local shape=$1; shift
    while (($#)); do
        case $1 in
            --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
            --nodes) [[ $shape == shape ]] || die "unknown option $1"; NODES=${2:?}; shift 2 ;;
            --cores-per-node) [[ $shape == shape ]] || die "unknown option $1"; CORES=${2:?}; shift 2 ;;
            -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
            *) die "unknown option $1" ;;
        esac
    done
    [[ $NODES =~ ^[1-9][0-9]*$ ]] || die "--nodes must be a positive integer"
    [[ $CORES =~ ^[1-9][0-9]*$ ]] || die "--cores-per-node must be a positive integer"
    [[ $shape != shape ]] || mkdir -p "$DIR"
    DIR=$(realpath -m "$DIR")
    CONF=$DIR/slurm.conf
    RUN=$DIR/run
    SOCKET=$DIR/munge/run/munge.socket
    export SLURM_CONF=$CONF
}

# alive PID: the process is a munged/slurmctld/slurmd started for this folder (its command line
# names $DIR).
alive() {
    [[ -n $1 ]] || return 1
    case $(cat "/proc/$1/comm" 2>/dev/null) in munged|slurmctld|slurmd) ;; *) return 1 ;; esac
    tr '\0' ' ' 2>/dev/null < "/proc/$1/cmdline" | grep -qF "$DIR/"
}

# daemon_pids: "name pid" for each pid file in $RUN whose process is alive.
daemon_pids() {
    local f pid
    for f in "$RUN"/*.pid; do
        [[ -e $f ]] || continue
        pid=$(tr -dc 0-9 < "$f")
        alive "$pid" && echo "$(basename "$f" .pid) $pid"
    done
    return 0
}

# strays: pids of processes started for this folder that no pid file names (a daemon that died
# before writing one, a double start), and of slurmstepd processes of this cluster's jobs.
strays() {
    local p known
    known=" $(daemon_pids | cut -d' ' -f2 | tr '\n' ' ') "
    for p in $(pgrep -x munged; pgrep -x slurmctld; pgrep -x slurmd); do
        [[ $known == *" $p "* ]] || ! alive "$p" || echo "$p"
    done
    for p in $(pgrep -x slurmstepd); do
        tr '\0' '\n' 2>/dev/null < "/proc/$p/environ" | grep -qxF "SLURM_CONF=$CONF" && echo "$p"
    done
    return 0
}

# descendants PID...: the given pids and all their descendants, one line.
descendants() {
    ps -e -o pid=,ppid= | awk -v roots="$*" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
        { parent[$1] = $2 }
        END {
            do { changed = 0
                 for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 }
            } while (changed)
            for (p in keep) printf " %s", p; print ""
        }'
}
