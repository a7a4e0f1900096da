#!/usr/bin/env python3
"""Streams N discovered URLs on H hosts through ONE PutURLs call of a Python grpcio client,
one URL a message (as a crawler's scheduler writes them), and reports the acks as they come.

    python3 scripts/puturls-client.py ADDR STUBS N H [--every K] [--pid PID] [--raw]
        [--batch B] [--timeout S] [--no-grpc]

ADDR: the service (host:port). STUBS: a folder holding urlfrontier_pb2*.py, generated from
crates/urlfrontier/proto/urlfrontier.proto by grpc_tools.protoc. URL i is
http://h<i mod H>.example/p<i>: N distinct URLs on H hosts.

Prints one JSON line every K acks (default 10^6) and a last one with "done": the acks so far,
the seconds since the call started, the URLs/s over the whole call and since the last line,
and, with --pid, the VmRSS and VmHWM (KiB) of that process (the service) read from /proc.
The last line also counts the acks by status and, when the call failed, says how
("error": the gRPC code and details); the exit status is then 1.

--raw: the messages are encoded by hand rather than built as protobuf objects (the same
bytes), to tell the cost of the client's message building from the service's.
--batch B: B URLs a message through PutDiscovered (URLFrontier's batched put: one ack a
batch, a status per URL) instead of one a message through PutURLs; acks are counted in URLs.
--no-grpc: only builds and serialises the N messages, without a server: the client's own
ceiling.
--aio: the same stream through grpcio's asyncio API (grpc.aio), the messages written by one
task while the acks are read by another.
With --raw, the acks are read from their bytes too (no message objects built on either side).
"""
import argparse
import json
import sys
import time


def status_of(pid):
    out = {}
    if pid is None:
        return out
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key.lower() + "_kib"] = int(value.split()[0])
    except OSError:
        pass
    return out


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def raw_item(url):
    """URLItem{discovered: DiscoveredURLItem{info: URLInfo{url}}}, encoded by hand."""
    u = url.encode()
    info = b"\x0a" + varint(len(u)) + u  # URLInfo.url = 1
    disc = b"\x0a" + varint(len(info)) + info  # DiscoveredURLItem.info = 1
    return b"\x0a" + varint(len(disc)) + disc  # URLItem.discovered = 1


class RawAck:
    """An AckMessage read from its bytes: its status is field 2, a varint (absent: OK, 0);
    the ID (field 1) comes first, a length-prefixed string."""
    __slots__ = ("status",)

    def __init__(self, b):
        i, status = 0, 0
        while i < len(b):
            tag = b[i]
            i += 1
            if tag == 0x0A:
                n, shift = 0, 0
                while True:
                    c = b[i]
                    i += 1
                    n |= (c & 0x7F) << shift
                    shift += 7
                    if c < 0x80:
                        break
                i += n
            elif tag == 0x10:
                status = b[i]
                i += 1
            else:
                break
        self.status = status


def raw_ack(b):
    return RawAck(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("addr")
    p.add_argument("stubs")
    p.add_argument("n", type=int)
    p.add_argument("hosts", type=int)
    p.add_argument("--every", type=int, default=1_000_000)
    p.add_argument("--pid", type=int)
    p.add_argument("--raw", action="store_true")
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument("--no-grpc", action="store_true")
    p.add_argument("--aio", action="store_true")
    a = p.parse_args()
    sys.path.insert(0, a.stubs)
    import urlfrontier_pb2 as uf

    def url(i):
        return f"http://h{i % a.hosts}.example/p{i}"

    if a.batch > 0:
        def items():
            for start in range(0, a.n, a.batch):
                infos = [uf.URLInfo(url=url(i)) for i in range(start, min(a.n, start + a.batch))]
                yield uf.DiscoveredBatch(ID=str(start), items=infos)
    elif a.raw:
        def items():
            for i in range(a.n):
                yield raw_item(url(i))
    else:
        def items():
            for i in range(a.n):
                yield uf.URLItem(discovered=uf.DiscoveredURLItem(info=uf.URLInfo(url=url(i))))

    start = time.monotonic()
    if a.no_grpc:
        size = 0
        for m in items():
            size += len(m if a.raw and a.batch == 0 else m.SerializeToString())
        s = time.monotonic() - start
        print(json.dumps({"done": True, "messages": a.n, "bytes": size, "s": round(s, 3),
                          "urls_per_s": round(a.n / s)}), flush=True)
        return 0

    import grpc

    # Large messages are not the point; the defaults are a stock client's.
    channel = grpc.insecure_channel(a.addr)
    grpc.channel_ready_future(channel).result(timeout=30)
    if a.batch > 0:
        method = "/urlfrontier.URLFrontier/PutDiscovered"
        codec = dict(request_serializer=uf.DiscoveredBatch.SerializeToString,
                     response_deserializer=uf.BatchAck.FromString)
    else:
        method = "/urlfrontier.URLFrontier/PutURLs"
        codec = dict(request_serializer=(lambda b: b) if a.raw else uf.URLItem.SerializeToString,
                     response_deserializer=raw_ack if a.raw else uf.AckMessage.FromString)
    put = channel.stream_stream(method, **codec)
    acks, statuses, error = 0, {}, None
    last_t, last_acks = start, 0

    def line(done):
        nonlocal last_t, last_acks
        now = time.monotonic()
        s = now - start
        out = {"acks": acks, "s": round(s, 3), "urls_per_s": round(acks / s) if s else 0,
               "recent_urls_per_s": round((acks - last_acks) / (now - last_t)) if now > last_t else 0}
        out.update(status_of(a.pid))
        if done:
            out["done"] = True
            out["statuses"] = statuses
            if error:
                out["error"] = error
        last_t, last_acks = now, acks
        print(json.dumps(out), flush=True)

    def count(ack):
        nonlocal acks
        for status in (ack.statuses if a.batch > 0 else [ack.status]):
            acks += 1
            statuses[status] = statuses.get(status, 0) + 1
            if acks % a.every == 0:
                line(False)

    if a.aio:
        import asyncio

        async def stream():
            async with grpc.aio.insecure_channel(a.addr) as ch:
                await ch.channel_ready()
                aput = ch.stream_stream(method, **codec)
                async for ack in aput(items(), timeout=a.timeout):
                    count(ack)
        try:
            asyncio.run(stream())
        except grpc.RpcError as e:
            error = f"{e.code().name}: {e.details()}"
    else:
        try:
            for ack in put(items(), timeout=a.timeout):
                count(ack)
        except grpc.RpcError as e:
            error = f"{e.code().name}: {e.details()}"
    line(True)
    channel.close()
    return 1 if error or acks != a.n else 0


if __name__ == "__main__":
    sys.exit(main())
