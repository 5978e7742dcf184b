#!/usr/bin/env python3
"""Write the seed corpus of fuzz_frame: one valid frame per request op and
one per reply type, encoded independently of lib/ from the layouts in
frame.h and proto.h (so a seed that fails to decode points at a layout
drift). Usage: tests/fuzz/make-corpus.py [outdir]  (default: next to this
script, in corpus/)."""

import os
import struct
import sys

MAGIC = 0x4F465331
RESPONSE = 0x8000
(PING, GET_ROOT, CREATE, REMOVE, GETATTR, SETATTR, READ, WRITE, KV_GET,
 KV_PUT, KV_DEL, KV_LIST, DIRENT_CREATE, DIRENT_REMOVE, DIRENT_LOOKUP,
 DIRENT_LIST, COMMIT, SERVERS, SERVER_SET, STATS, REPORT, SET_ROOT, BEHIND,
 STALE_FOR, SUMMARY, TASK_START, TASK_POLL, TASK_CTL, POINTS, VERIFY,
 REPAIR_FETCH, STALE_CLEAR, FREEZE, ROOT_MOVE, STOP_CHECK) = range(1, 36)
METAFILE, DFILE, DIRECTORY, DIRDATA = 1, 2, 3, 4


def u8(v): return struct.pack(">B", v)
def u16(v): return struct.pack(">H", v)
def u32(v): return struct.pack(">I", v)
def u64(v): return struct.pack(">Q", v)
def i64(v): return struct.pack(">q", v)
def blob(b): return u32(len(b)) + b
def string(s): return u16(len(s)) + s
def oid(seed): return bytes((seed + 7 * i) & 0xFF for i in range(16))


def handle(seed, nsids):
    return oid(seed) + u8(nsids) + b"".join(oid(seed + 100 + i) for i in range(nsids))


def attr(typ, nparts=2):
    return (u8(typ) + u64(3) + u64(1 << 20) + u32(0o644) + u32(1000) + u32(1000)
            + i64(1700000000 * 10**9) + i64(1700000001 * 10**9) + u32(1 << 20)
            + oid(0x40) + u32(0) + string(b"file.txt")
            + u8(2) + oid(0x50) + oid(0x51)
            + u8(1) + oid(0x51)
            + string(b"simple_stripe") + u32(65536) + u8(2) + u8(1)
            + u16(nparts) + b"".join(handle(0x60 + i, 2) for i in range(nparts)))


def dirent(typ, seed, nsids):
    return u8(typ) + handle(seed, nsids)


def frame(op, body, reqid=1, status=0, cred=b"", cap=b""):
    hdr = (u32(MAGIC) + u16(1) + u16(op) + u64(reqid) + struct.pack(">i", status)
           + u16(len(cred)) + u16(len(cap)) + u32(len(body)))
    return hdr + cred + cap + body


REQUESTS = {
    "req-ping": (PING, b""),
    "req-get-root": (GET_ROOT, b""),
    "req-create": (CREATE, oid(1) + attr(METAFILE)),
    "req-remove": (REMOVE, oid(1)),
    "req-getattr": (GETATTR, oid(2)),
    "req-setattr": (SETATTR, oid(3) + u32(0xFF) + attr(DFILE, 0)),
    "req-read": (READ, oid(4) + u64(4096) + u32(65536)),
    "req-write": (WRITE, oid(5) + u64(10) + u32(1) + blob(b"hello, world")),
    "req-commit": (COMMIT, oid(5)),
    "req-kv-get": (KV_GET, oid(6) + blob(b"user.color")),
    "req-kv-put": (KV_PUT, oid(6) + blob(b"user.color") + blob(b"blue")),
    "req-kv-del": (KV_DEL, oid(6) + blob(b"user.color")),
    "req-kv-list": (KV_LIST, oid(6) + blob(b"") + u32(100)),
    "req-dirent-create": (DIRENT_CREATE, oid(7) + string(b"notes.md")
                          + dirent(METAFILE, 8, 3) + u32(1)),
    "req-dirent-remove": (DIRENT_REMOVE, oid(7) + string(b"notes.md")),
    "req-dirent-lookup": (DIRENT_LOOKUP, oid(7) + string(b"notes.md")),
    "req-dirent-list": (DIRENT_LIST, oid(7) + string(b"") + u32(1000)),
    "req-stats": (STATS, b""),
    "req-report": (REPORT, oid(20) + oid(21) + string(b"checksum mismatch on read")),
    "req-set-root": (SET_ROOT, handle(22, 3) + i64(1700000000 * 10**9)),
    "req-behind": (BEHIND, oid(23) + oid(24) + string(b"write not applied: timeout")),
    "req-stale-for": (STALE_FOR, oid(0) + oid(25) + string(b"")),
    "req-summary": (SUMMARY, oid(30)),
    "req-task-start": (TASK_START, u64(7) + u8(1) + u32(3) + u64(50 << 20) + oid(31) + u64(10) + u64(4096)
                    + u64(16) + u32(2) + oid(39) + oid(40) + u8(0)),
    "req-task-start-rebalance": (TASK_START, u64(8) + u8(3) + u32(0) + u64(50 << 20) + oid(0)
                                 + u64(0) + u64(0) + u64(0) + u32(0) + u8(2)
                                 + oid(49) + u64(1 << 20) + oid(50) + u64(4096)),
    "req-freeze": (FREEZE, oid(51) + u32(20000)),
    "req-root-move": (ROOT_MOVE, handle(52, 3) + i64(1700000000 * 10**9)),
    "req-stop-check": (STOP_CHECK, u32(10)),
    "req-task-poll": (TASK_POLL, u64(7) + u64(3) + u64(16)),
    "req-verify": (VERIFY, oid(41)),
    "req-repair-fetch": (REPAIR_FETCH, oid(42) + u32(1) + u64(64 << 20) + u8(2) + oid(43) + oid(44)
                         + string(b"repair")),
    "req-stale-clear": (STALE_CLEAR, oid(45) + oid(46) + u64(9)),
    "req-task-ctl": (TASK_CTL, u64(7) + u8(1)),
    "req-points": (POINTS, oid(37) + oid(38) + u32(0) + string(b"notes.md")),
}

REPLIES = {
    "rep-ping": (PING, oid(9) + string(b"0.1.0")),
    "rep-get-root": (GET_ROOT, handle(10, 3)),
    "rep-create": (CREATE, oid(11)),
    "rep-getattr": (GETATTR, attr(DIRECTORY, 4)),
    "rep-write": (WRITE, u64(7) + u64(22)),
    "rep-dirent-lookup": (DIRENT_LOOKUP, u8(1) + dirent(DIRECTORY, 12, 2)),
    "rep-dirent-absent": (DIRENT_REMOVE, u8(0)),
    "rep-kv-list": (KV_LIST, u32(2) + blob(b"a") + blob(b"1") + blob(b"bb")
                    + blob(b"") + u8(1)),
    "rep-summary": (SUMMARY, u8(1) + u64(4) + u64(4096) + oid(32) + u8(3) + oid(36)
                    + u32(1) + string(b"")),
    "rep-task-status": (TASK_POLL, u8(1) + u64(3) + u64(9) + u64(1 << 20) + u64(5 << 20)
                        + oid(33) + string(b"") + u64(1) + u8(0) + u32(0) + u32(1) + u64(1) + oid(34)
                        + oid(35)
                        + string(b"checksum_mismatch") + string(b"chunk 3 does not match")
                        + u8(1) + oid(47) + string(b"fetched version 3") + oid(0)),
    "rep-stop-check": (STOP_CHECK, u64(10) + u64(2) + u32(2) + oid(53) + u8(0) + u8(1)
                       + oid(54) + u8(2) + u8(3)),
    "rep-stats": (STATS, u64(10) + u64(4096) + u64(1 << 30) + u64(4 << 30) + u8(3)),
    "rep-repair-fetch": (REPAIR_FETCH, u8(1) + oid(48) + u64(3) + u64(4096) + string(b"fetched")),
    "rep-stale-list": (STALE_FOR, u32(2) + oid(26) + string(b"create not applied")
                       + oid(27) + string(b"") + u8(1)),
    "rep-dirent-list": (DIRENT_LIST, u32(2) + string(b"docs") + dirent(DIRECTORY, 13, 1)
                        + string(b"readme") + dirent(METAFILE, 14, 4) + u8(0)),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    seeds = {}
    for i, (name, (op, body)) in enumerate(sorted(REQUESTS.items())):
        seeds[name] = frame(op, body, reqid=i + 1)
    for i, (name, (op, body)) in enumerate(sorted(REPLIES.items())):
        seeds[name] = frame(op | RESPONSE, body, reqid=100 + i)
    seeds["rep-error"] = frame(READ | RESPONSE, b"", reqid=200, status=-10002)
    seeds["req-with-cred"] = frame(GETATTR, oid(15), reqid=201,
                                   cred=b"user=alice", cap=b"cap")
    for name, data in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
