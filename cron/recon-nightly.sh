#!/usr/bin/env bash
# recon-nightly.sh: `recon run` from cron (systemd runs recon itself: recon-nightly.service),
# which first imports the payouts RECON_IMPORT_FILE or RECON_IMPORT_SQL name (a failed import is a
# failed night, named in the one line below).
# Loads the env file ($RECON_ENV_FILE, default /etc/recon/recon.env; mode 600 or 400, never
# executed), takes an flock so two nightly runs never overlap on this host, appends the run's
# output with a timestamp per line to $RECON_LOG_FILE (rotated above $RECON_LOG_MAX_BYTES), and
# exits with recon's exit code, printing one line to stderr when it is not 0 (cron mails it): the
# failed night's line recon logged ("recon: night of D failed: CAUSE"), else what the code means.
# `--check` runs `recon config check`, `--status` runs `recon status`, with the same environment;
# other arguments go to `recon run`. Variables and exit codes: docs/operations.md, "The nightly
# run (cron)". Nothing read from the env file is ever printed.

set -u

readonly EXIT_USAGE=2 EXIT_LOCKED=4
readonly ME="recon-nightly"

die() { # die CODE MESSAGE: before the log file is known, errors go to stderr only
    printf '%s: %s\n' "$ME" "$2" >&2
    fail_ping "$2"
    exit "$1"
}

fail_ping() { # fail_ping MESSAGE: tell RECON_HEARTBEAT_URL/fail when recon itself could not
    # (it was never started, or it was killed). Only for a nightly run, only with curl; the URL
    # holds the check's id, so it goes to curl on stdin (not in the process list) and curl's
    # own messages, which would name it, are discarded. A ping that fails changes nothing.
    local url=${RECON_HEARTBEAT_URL:-}
    [[ -n "$url" && -n "${NIGHTLY:-}" ]] || return 0
    command -v curl >/dev/null || return 0
    printf 'url = "%s/fail"\n' "${url%/}" \
        | curl -K - -fsS -m 10 --retry 2 -o /dev/null --data-raw "$ME: $1" >/dev/null 2>&1 || true
}

stamp() { # prefix every line of stdin with an ISO 8601 local time (bash builtin: no fork per line)
    local line
    while IFS= read -r line || [[ -n "$line" ]]; do
        printf '%(%Y-%m-%dT%H:%M:%S%z)T %s\n' -1 "$line"
    done
}

log() { # log MESSAGE: one timestamped line in the log file
    printf '%s: %s\n' "$ME" "$1" | stamp >>"$LOG_FILE"
}

file_mode() { # octal permission bits of a file, through symlinks (GNU stat, then BSD stat)
    stat -L -c '%a' -- "$1" 2>/dev/null || stat -L -f '%Lp' -- "$1" 2>/dev/null
}

load_env_file() { # NAME=value lines, as systemd's EnvironmentFile reads them; never executed
    local file=$1 line key value number=0
    [[ -e "$file" ]] \
        || die "$EXIT_USAGE" "environment file $file does not exist (set RECON_ENV_FILE)"
    [[ -f "$file" && -r "$file" ]] \
        || die "$EXIT_USAGE" "environment file $file is not a readable file"
    local mode
    mode=$(file_mode "$file") || die "$EXIT_USAGE" "cannot read the permissions of $file"
    if (( (8#$mode & 8#077) != 0 )); then
        local advice="it holds secrets: chmod 600 $file"
        die "$EXIT_USAGE" "environment file $file is open to group or others (mode $mode); $advice"
    fi
    local -A preset=()
    while IFS= read -r key; do
        preset[$key]=1
    done < <(compgen -e)
    while IFS= read -r line || [[ -n "$line" ]]; do
        number=$((number + 1))
        line=${line%$'\r'}
        [[ "$line" =~ ^[[:space:]]*(#.*)?$ ]] && continue
        if [[ ! "$line" =~ ^[[:space:]]*(export[[:space:]]+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then
            # The line itself may hold a secret: name its number only.
            die "$EXIT_USAGE" "$file line $number: expected NAME=value"
        fi
        key=${BASH_REMATCH[2]}
        value=${BASH_REMATCH[3]}
        if [[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]]; then
            value=${BASH_REMATCH[1]}
        fi
        # A variable set before the wrapper started wins (a crontab line, systemd's Environment=),
        # as RECON_* variables win over recon's TOML file; within the file the last line wins.
        if [[ -z "${preset[$key]:-}" ]]; then
            export "$key=$value"
        fi
    done <"$file"
}

rotate_log() { # recon.log -> recon.log.1 -> ... -> recon.log.$KEEP (optionally gzipped)
    local max=$1 keep=$2 size i suffix=""
    if [[ ! -f "$LOG_FILE" ]] || (( max == 0 )); then
        return 0
    fi
    size=$(wc -c <"$LOG_FILE")
    if (( size <= max )); then
        return 0
    fi
    if [[ "${RECON_LOG_GZIP:-0}" == 1 ]]; then
        suffix=".gz"
    fi
    rm -f -- "$LOG_FILE.$keep" "$LOG_FILE.$keep.gz"
    for (( i = keep - 1; i >= 1; i-- )); do
        if [[ -f "$LOG_FILE.$i" ]]; then
            mv -f -- "$LOG_FILE.$i" "$LOG_FILE.$((i + 1))"
        fi
        if [[ -f "$LOG_FILE.$i.gz" ]]; then
            mv -f -- "$LOG_FILE.$i.gz" "$LOG_FILE.$((i + 1)).gz"
        fi
    done
    if (( keep >= 1 )); then
        mv -f -- "$LOG_FILE" "$LOG_FILE.1"
        if [[ -n "$suffix" ]]; then
            gzip -f -- "$LOG_FILE.1"
        fi
    else
        rm -f -- "$LOG_FILE"
    fi
    : >>"$LOG_FILE"
    log "log rotated (it was $size bytes; keeping $keep old files)"
}

default_lock_file() {
    if [[ -d /var/lock && -w /var/lock ]]; then
        printf '%s\n' /var/lock/recon-nightly.lock
    elif [[ -n "${XDG_RUNTIME_DIR:-}" && -d "$XDG_RUNTIME_DIR" ]]; then
        printf '%s\n' "$XDG_RUNTIME_DIR/recon-nightly.lock"
    else
        return 1
    fi
}

meaning() { # what an exit code of `recon run` means, for the one-line summary
    case $1 in
        1) printf 'failed (unexpected error, database or provider unavailable, or the import failed)' ;;
        2) printf 'bad configuration, option or input' ;;
        3) printf 'incomplete: some payouts could not be fetched; reports written' ;;
        4) printf 'another run holds the lock' ;;
        5) printf 'reports written, but the email could not be sent' ;;
        127) printf 'recon could not be started' ;;
        *)
            if (( $1 > 128 )); then
                printf 'killed by signal %d' $(( $1 - 128 ))
            else
                printf 'failed'
            fi
            ;;
    esac
}

find_recon() { # sets bin: RECON_BIN, or recon on PATH
    bin=${RECON_BIN:-recon}
    command -v -- "$bin" >/dev/null \
        || die "$EXIT_USAGE" "$bin not found (cron's PATH is short: set RECON_BIN to its full path)"
}

main() {
    local bin
    umask 077
    command -v flock >/dev/null || die "$EXIT_USAGE" "flock(1) not found (install util-linux)"

    load_env_file "${RECON_ENV_FILE:-/etc/recon/recon.env}"
    if [[ "${1:-}" == "--check" ]]; then # the configuration as the nightly run sees it
        shift
        find_recon
        exec "$bin" config check "$@"
    fi
    if [[ "${1:-}" == "--status" ]]; then # the last complete run's age, as a monitor asks
        shift
        find_recon
        exec "$bin" status "$@"
    fi

    NIGHTLY=1 # from here on a failure of the wrapper is a failed night (fail_ping)
    LOG_FILE=${RECON_LOG_FILE:-/var/log/recon/recon.log}
    local max=${RECON_LOG_MAX_BYTES:-10485760} keep=${RECON_LOG_KEEP:-7}
    [[ "$max" =~ ^[0-9]+$ ]] || die "$EXIT_USAGE" "RECON_LOG_MAX_BYTES must be a number of bytes"
    [[ "$keep" =~ ^[0-9]+$ ]] || die "$EXIT_USAGE" "RECON_LOG_KEEP must be a whole number"
    if ! { mkdir -p -- "$(dirname -- "$LOG_FILE")" && : >>"$LOG_FILE"; }; then
        die "$EXIT_USAGE" "cannot write the log file $LOG_FILE (set RECON_LOG_FILE)"
    fi

    local lock_file=${RECON_LOCK_FILE:-}
    if [[ -z "$lock_file" ]]; then
        lock_file=$(default_lock_file) \
            || die "$EXIT_USAGE" "no writable /var/lock or \$XDG_RUNTIME_DIR: set RECON_LOCK_FILE"
    fi
    # fd 9 stays open in `recon run` too: if this script is killed, the lock lasts until recon ends.
    exec 9>>"$lock_file" \
        || die "$EXIT_USAGE" "cannot open the lock file $lock_file (set RECON_LOCK_FILE)"
    if ! flock -n 9; then
        log "another recon run is in progress (lock $lock_file held); not starting"
        die "$EXIT_LOCKED" "another recon run is in progress (lock $lock_file held); not starting"
    fi

    rotate_log "$max" "$keep"

    find_recon
    local verbose=()
    case ${RECON_VERBOSE:-0} in
        0) ;;
        1) verbose=(-v) ;;
        2) verbose=(-vv) ;;
        *) die "$EXIT_USAGE" "RECON_VERBOSE must be 0, 1 or 2" ;;
    esac

    local code night before
    before=$(wc -c <"$LOG_FILE")
    log "starting: $bin ${verbose[*]:+${verbose[*]} }run $*"
    # Unbuffered, so stdout and stderr lines reach the log in order and with the right time.
    PYTHONUNBUFFERED=1 "$bin" "${verbose[@]}" run "$@" 2>&1 </dev/null | stamp >>"$LOG_FILE"
    code=${PIPESTATUS[0]}
    # The run's duration is recon's own (its summary line above, `recon runs`, the metrics): one
    # figure per run, so the wrapper does not time the process again.
    log "finished with exit code $code"

    # recon names a failed night in one line ("recon: night of 2026-11-22 failed: cannot reach
    # the provider (merchant.authorize)"): that line, from this run's part of the log, leads.
    night=$(tail -c +"$((before + 1))" -- "$LOG_FILE" \
        | grep -o 'recon: night of [0-9-]* failed: [^"]*' | tail -n 1)
    if (( code != 0 )) && [[ -n "$night" ]]; then
        printf '%s (recon run exited %d; see %s)\n' "$night" "$code" "$LOG_FILE" >&2
    elif (( code != 0 )); then
        printf '%s: recon run exited %d: %s; see %s\n' \
            "$ME" "$code" "$(meaning "$code")" "$LOG_FILE" >&2
    fi
    if [[ -z "$night" ]] && (( code == 126 || code == 127 || code > 128 )); then # recon could not ping
        fail_ping "recon run exited $code: $(meaning "$code")"
    fi
    return "$code"
}

LOG_FILE=/dev/null # until main() knows the real one
main "$@"
