#!/usr/bin/env bash
# One PutURLs stream of a Python grpcio client into `crawlrank frontier serve` (release build)
# on loopback: N distinct discovered URLs on H hosts, one URL a message, in ONE call (as a
# crawler's scheduler that keeps one stream open). Reports, every EVERY acks and at the end,
# the URLs/s so far and the service's resident memory (VmRSS, VmHWM from /proc), so that the
# memory per URL can be read off; and fails if the stream ends before every URL is acked (a
# connection the service dropped, say).
#
#   scripts/bench-puturls.sh [N] [H]
#       defaults 10000000 1000
#
# Other settings (environment): EVERY (a line every EVERY acks, default 1000000), OUT (state
# and logs, default target/bench-puturls), COMMIT_MS (the service's --commit-interval; default:
# the service's own), POLICY (fica), HOT (the service's --frontier-hot; default: its own), RAW (1: the client encodes its messages by hand rather than
# through protobuf objects, and reads its acks from their bytes, to tell the client's cost from
# the service's), AIO (1: the stream through grpcio's asyncio API), BATCH (B: B URLs a
# message through PutDiscovered, URLFrontier's batched put, instead of PutURLs), SINK (1: no service,
# the client alone building and serialising its messages), RUN_TIMEOUT (seconds for the stream,
# default 3600), LIST (S: once every URL is put, the time of one `ListURLs` page of S URLs at the
# crawl's end asked cold — what every page of a listing cost when each skipped `start` URLs —
# then of paging through the whole crawl S at a time, each page going on from the last).
# Needs python3 with grpcio and grpcio-tools (python3 -m pip install grpcio
# grpcio-tools); the client is scripts/puturls-client.py.
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
. scripts/common.sh
ROOT=$PWD

N="${1:-10000000}"
H="${2:-1000}"
EVERY="${EVERY:-1000000}"
OUT="${OUT:-$ROOT/target/bench-puturls}"
POLICY="${POLICY:-fica}"
RUN_TIMEOUT="${RUN_TIMEOUT:-3600}"

die() {
    echo "bench-puturls: $*" >&2
    exit 1
}
for v in N H EVERY RUN_TIMEOUT; do
    [[ "${!v}" =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((N > 0 && H > 0 && EVERY > 0)) || die "N, H and EVERY must be positive"
[[ -z "${BATCH:-}" || "$BATCH" =~ ^[1-9][0-9]*$ ]] || die "BATCH must be a positive whole number, not '$BATCH'"
[[ -z "${COMMIT_MS:-}" || "$COMMIT_MS" =~ ^[0-9]+$ ]] || die "COMMIT_MS must be a whole number, not '$COMMIT_MS'"
[[ -z "${HOT:-}" || "$HOT" =~ ^[0-9]+$ ]] || die "HOT must be a whole number, not '$HOT'"
python3 -c 'import grpc, grpc_tools' 2>/dev/null ||
    die "needs python3 with grpcio and grpcio-tools (python3 -m pip install grpcio grpcio-tools)"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CLIENT_ARGS=(--every "$EVERY")
[[ "${RAW:-0}" == 1 ]] && CLIENT_ARGS+=(--raw)
[[ "${AIO:-0}" == 1 ]] && CLIENT_ARGS+=(--aio)
[[ -n "${BATCH:-}" ]] && CLIENT_ARGS+=(--batch "$BATCH")

# The client's stubs, generated from the service's own .proto.
rm -rf "$OUT/stubs"
mkdir -p "$OUT/stubs"
python3 -m grpc_tools.protoc -I crates/urlfrontier/proto --python_out "$OUT/stubs" \
    --grpc_python_out "$OUT/stubs" urlfrontier.proto crawlrank_frontier.proto

echo "== bench-puturls: $N URLs on $H hosts, one PutURLs stream of a Python grpcio client$([[ "${RAW:-0}" == 1 ]] && echo ', raw messages')"
echo "   $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), grpcio $(python3 -c 'import grpc; print(grpc.__version__)')"

if [[ "${SINK:-0}" == 1 ]]; then
    python3 scripts/puturls-client.py - "$OUT/stubs" "$N" "$H" --no-grpc "${CLIENT_ARGS[@]}"
    exit 0
fi

# Everything this script starts is killed however it ends.
PIDS=()
kill_pids_on_exit
# BIN, when set, is the binary measured (another build to compare with); else built here.
[[ -n "${BIN:-}" ]] || release_bin_in_target

rm -rf "$OUT/state"
"$BIN" frontier serve --state "$OUT/state" --addr 127.0.0.1:0 --policy "$POLICY" \
    ${COMMIT_MS:+--commit-interval "$COMMIT_MS"} ${HOT:+--frontier-hot "$HOT"} >"$OUT/serve.log" 2>&1 &
SERVER=$!
PIDS+=("$SERVER")
ADDR=
deadline=$((SECONDS + 120))
while [[ -z "$ADDR" ]]; do
    kill -0 "$SERVER" 2>/dev/null || { cat "$OUT/serve.log" >&2; die "the service exited before listening"; }
    ((SECONDS < deadline)) || die "the service did not listen within 120 s; see $OUT/serve.log"
    ADDR=$(sed -n 's|.* API on \([0-9.:]*\).*|\1|p' "$OUT/serve.log" | head -n 1)
    [[ -n "$ADDR" ]] || sleep 0.1
done
echo "   service on $ADDR (pid $SERVER), state $OUT/state, VmRSS $(awk '/VmRSS/{print $2}' "/proc/$SERVER/status") KiB before the stream"

rc=0
timeout "$RUN_TIMEOUT" python3 scripts/puturls-client.py "$ADDR" "$OUT/stubs" "$N" "$H" \
    --pid "$SERVER" "${CLIENT_ARGS[@]}" | tee "$OUT/client.jsonl" || rc=$?
((rc == 0)) || die "the stream failed (exit $rc; see the last line above and $OUT/serve.log)"
du -sh "$OUT/state" | awk '{print "   state on disk: " $1}'
if [[ -n "${LIST:-}" ]]; then
    python3 - "$ADDR" "$OUT/stubs" "$N" "$LIST" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[2])
import grpc, urlfrontier_pb2 as pb, urlfrontier_pb2_grpc as rpc
addr, n, size = sys.argv[1], int(sys.argv[3]), int(sys.argv[4])
stub = rpc.URLFrontierStub(grpc.insecure_channel(addr, options=[("grpc.max_receive_message_length", 1 << 30)]))
def page(start):
    return sum(1 for _ in stub.ListURLs(pb.ListUrlParams(start=start, size=size)))
t = time.time(); got = page(n - size); cold = time.time() - t
print(f"   ListURLs: one page of {got} at start {n - size}, cold: {cold:.3f} s")
t = time.time(); total = 0; start = 0
while True:
    got = page(start)
    total += got; start += size
    if got < size:
        break
secs = time.time() - t
print(f"   ListURLs: {total} URLs in pages of {size}, each going on from the last: {secs:.1f} s ({total / secs:.0f} URLs/s)")
PY
fi
