# Sourced (not run) by the GPU scripts: an MPS control daemon of their own, with its pipe and
# log directories under one folder, and a stop that leaves nothing of it running. Callers never
# export CUDA_MPS_PIPE_DIRECTORY themselves (they pass mps_env to the commands that need it), so
# mps_stop can find the daemon and its servers by that entry without finding the caller.

# PIDs whose environment holds the exact entry $1 (root reads every /proc/PID/environ).
pids_with_env() {
  grep -lzxF -- "$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
}

# mps_env BASE: the environment a client of the daemon under BASE needs (the array MPS_ENV).
mps_env() {
  MPS_ENV=("CUDA_MPS_PIPE_DIRECTORY=$1/pipe" "CUDA_MPS_LOG_DIRECTORY=$1/log")
}

# mps_start BASE LOGFILE: starts the daemon and waits (10 s at most) for its control pipe.
mps_start() {
  local base=$1 logfile=$2
  mkdir -p "$base/pipe" "$base/log"
  mps_env "$base"
  env "${MPS_ENV[@]}" timeout 30 nvidia-cuda-mps-control -d >>"$logfile" 2>&1 || return 1
  # mgbd starts a second control daemon unless this one's pipe is already there.
  for _ in $(seq 50); do [ -e "$base/pipe/control" ] && return 0; sleep 0.2; done
  echo "no $base/pipe/control 10 s after nvidia-cuda-mps-control -d" >>"$logfile"
  return 1
}

# mps_stop BASE LOGFILE: asks the daemon to quit, waits 20 s for it and its servers (they carry
# BASE/pipe in their environment), then kills what is left; prints the PIDs it had to kill.
mps_stop() {
  local base=$1 logfile=$2 pids=""
  mps_env "$base"
  echo quit | env "${MPS_ENV[@]}" timeout 30 nvidia-cuda-mps-control >>"$logfile" 2>&1
  for _ in $(seq 40); do
    pids=$(pids_with_env "CUDA_MPS_PIPE_DIRECTORY=$base/pipe")
    [ -z "$pids" ] && break
    sleep 0.5
  done
  if [ -n "$pids" ]; then
    kill -KILL $pids 2>/dev/null
    echo $pids
  fi
}
