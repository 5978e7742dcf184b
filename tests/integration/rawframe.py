#!/usr/bin/env python3
"""rawframe.py - speak the OFS frame protocol by hand, to send bad input.

    rawframe.py HOST:PORT ping                  one PING on a fresh connection
    rawframe.py HOST:PORT case NAME [--file NAME] [--local PATH]
                                               send one bad input, check the reply
    rawframe.py HOST:PORT cases                 list the case names
    rawframe.py HOST:PORT freeze OID MS HOLDER  one FREEZE (MS 0: lift) of OID by
                                               HOLDER (a SID); prints its status
    rawframe.py HOST:PORT statuses [--forwarded] OP...
                                               each OP (a number) with an empty
                                               body on one connection; prints
                                               "OP STATUS" for each
    rawframe.py HOST:PORT hello                 a TLS handshake and a PING; prints
                                               "ok", "error STATUS" (an error
                                               frame), "closed", or "tls: REASON"
                                               (the handshake or the first read
                                               failed: REASON is OpenSSL's)
    rawframe.py HOST:PORT pingpause            a PING, "ok" printed, then, on the
                                               same connection once stdin closes,
                                               another: printed as hello prints
    rawframe.py HOST:PORT stall [--idle N] [--seconds S]
                                               hold N silent connections, one
                                               that sent half a frame header
                                               and one that sent part of a body;
                                               print "ready", then wait for
                                               stdin to close (or S seconds)
    rawframe.py HOST:PORT capget OID           GETATTR of OID; prints "STATUS CAP"
                                               (the capability the reply grants,
                                               in hex; "-" when none)
    rawframe.py HOST:PORT capcreate OID|proven UID GID [PART...]
                                               CREATE of a metafile (mode 0600,
                                               owner UID:GID) under OID ("proven":
                                               a new one with UID's proof,
                                               lib/cap.h) whose layout names each
                                               PART; prints "STATUS CAP OID"
    rawframe.py HOST:PORT setlayout OID PART... SETATTR of OID's layout to the
                                               PARTs; prints its status
    rawframe.py HOST:PORT setnothing OID        SETATTR of OID with an empty
                                               mask; prints its status
    rawframe.py HOST:PORT getmany OID           GETATTR_MANY of OID alone;
                                               prints that object's status
    rawframe.py HOST:PORT flood [--silent N] [--sources K] [--stalled N] [--idle N]
                                               N silent TCP connections from each of
                                               K addresses 127.0.0.2.. (reopened as
                                               the server drops them), N handshakes
                                               stalled after their first bytes (from
                                               127.0.0.200), and up to --idle idle
                                               connections as OFS_IDENTITY, each
                                               PINGed once; prints "ready ADMITTED
                                               REFUSED STATUS" (STATUS: the first
                                               refusal's), then "idle-closed N" once
                                               the server has closed N of the idle
                                               ones; holds all until stdin closes
    rawframe.py HOST:PORT capuse read|write OID CAP
                                               a READ of 16 bytes at 0, or a
                                               WRITE of 16 bytes there, of OID,
                                               carrying CAP (hex; "-": none);
                                               prints its status
    rawframe.py HOST:PORT capread OID CAP OFF N
                                               a READ of N bytes at OFF of OID
                                               carrying CAP; prints "STATUS HEX"
    rawframe.py HOST:PORT capwrite OID CAP OFF HEX
                                               a WRITE of the bytes HEX at OFF
                                               of OID carrying CAP; prints its
                                               status
    rawframe.py HOST:PORT send OP FILE          one request of op OP (a number)
                                               whose body is FILE's bytes ("-":
                                               stdin); prints "STATUS HEAD", HEAD
                                               the reply body's first 8 bytes in
                                               hex ("-": an empty body)
    rawframe.py HOST:PORT serverspush SID [SID:FIELD=VALUE...]
                                               a SERVERS push as server SID (the
                                               identity's): the server's own
                                               table, pulled, SID's entry first,
                                               each entry named changed
                                               (FIELD address, state - a number
                                               - or weight, in thousandths)
                                               with both its versions far
                                               ahead; prints its status
    rawframe.py HOST:PORT oldrevoked SERIAL...  REVOKED with the previous
                                               release's unsigned list of these
                                               serials (hex); prints its status
    rawframe.py HOST:PORT fwdmode OID MODE AGE_MS
                                               a forwarded SETATTR of OID's mode
                                               (octal MODE) whose deadline
                                               (lib/frame.h) was AGE_MS ago
                                               (negative: that far ahead); as a
                                               server's identity; prints its status
    rawframe.py HOST:PORT oldkeys ID            CAPKEYS with the previous
                                               release's unsigned key set: one
                                               key of id ID, random bytes;
                                               prints its status

Exit status 0 when the server behaved as expected, 1 otherwise (the reason
on stderr). Connections are TLS 1.3 as the identity in OFS_IDENTITY
(IDDIR with key.pem, cert.pem, ca.pem), or plaintext when it is unset or
RAWFRAME_PLAIN=1; RAWFRAME_NOCERT=1 offers no certificate (the server's
is still checked against OFS_IDENTITY's ca.pem). The frame (lib/frame.h): a 28-byte big-endian header
    magic u32 | version u16 | op u16 | reqid u64 | status i32 |
    cred_len u16 | cap_len u16 | body_len u32
then credential, capability and body. Bodies follow lib/proto.c.
Only the standard library is used.
"""
import os
import select
import socket
import ssl
import struct
import sys
import time

MAGIC = 0x4F465331
VERSION = 1
HDR = struct.Struct(">IHHQiHHI")  # 28 bytes
assert HDR.size == 28
RESPONSE = 0x8000
MAX_IO = 4 << 20
MAX_BODY = MAX_IO + 65536
MAX_CRED = 4096

(PING, GET_ROOT, CREATE, REMOVE, GETATTR, SETATTR, READ, WRITE, KV_GET, KV_PUT,
 KV_DEL, KV_LIST, DIRENT_CREATE, DIRENT_REMOVE, DIRENT_LOOKUP, DIRENT_LIST,
 COMMIT) = range(1, 18)
REVOKED, CAPKEYS = 38, 39        # (lib/proto.h)
CREATE_SMALL = 40                # (lib/proto.h: the op after CAPKEYS)
GETATTR_MANY = 42
ATTR_LAYOUT = 1 << 7             # (lib/proto.h: OFS_ATTR_LAYOUT)
SMALL_MAX = 64 << 10

OBJ_METAFILE, OBJ_DFILE, OBJ_DIRECTORY, OBJ_DIRDATA = 1, 2, 3, 4

# lib/ofs_error.h
OFS_EBASE = 10000
ECHECKSUM, ECORRUPT, EPROTO, ETYPE, ENAME, ETOOBIG, EUNKNOWNOP, EVERSION = (
    OFS_EBASE + i for i in range(1, 9))
ENOENT = 2
EINVAL, EFBIG = 22, 27
OFS_ENOOBJ = 10014   # this server holds no copy of the object (lib/ofs_error.h)

TIMEOUT = float(os.environ.get("RAWFRAME_TIMEOUT", "20"))


class Fail(Exception):
    pass


def hdr(op, reqid=1, body_len=0, version=VERSION, magic=MAGIC, status=0,
        cred_len=0, cap_len=0):
    return HDR.pack(magic, version, op, reqid, status, cred_len, cap_len, body_len)


def frame(op, body=b"", reqid=1, cap=b"", cred=b""):
    return hdr(op, reqid, len(body), cred_len=len(cred), cap_len=len(cap)) + cred + cap + body


IDENTITY = None if os.environ.get("RAWFRAME_PLAIN") else os.environ.get("OFS_IDENTITY")


def tls_context(iddir):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False      # the cluster CA is the only issuer trusted
    ctx.load_verify_locations(os.path.join(iddir, "ca.pem"))
    if not os.environ.get("RAWFRAME_NOCERT"):
        ctx.load_cert_chain(os.path.join(iddir, "cert.pem"), os.path.join(iddir, "key.pem"))
    return ctx


def connect(addr, iddir=None):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    iddir = iddir or IDENTITY
    if iddir:
        s = tls_context(iddir).wrap_socket(s)
    return s


def half_close(s):
    """No more bytes from us: a TLS close_notify (answered by the
    server's), or a TCP half-close on plaintext. The socket to read from."""
    if isinstance(s, ssl.SSLSocket):
        return s.unwrap()
    s.shutdown(socket.SHUT_WR)
    return s


def recv_exact(s, n, deadline):
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        s.settimeout(left)
        try:
            chunk = s.recv(n - len(buf))
        except socket.timeout:
            raise TimeoutError
        except ConnectionResetError:
            return buf
        if not chunk:
            return buf
        buf += chunk
    return buf


def read_reply(s, timeout=TIMEOUT):
    """('reply', fields, body) or ('closed', None, None) or ('timeout', ...)."""
    deadline = time.monotonic() + timeout
    try:
        h = recv_exact(s, HDR.size, deadline)
        if len(h) < HDR.size:
            if h:
                raise Fail("connection closed inside a reply header (%d bytes)" % len(h))
            return "closed", None, None
        magic, ver, op, reqid, status, cl, pl, bl = HDR.unpack(h)
        if magic != MAGIC:
            raise Fail("reply with bad magic %#x" % magic)
        if ver != VERSION:
            raise Fail("reply with version %d" % ver)
        if not op & RESPONSE:
            raise Fail("reply without the response bit: op %#x" % op)
        if bl > MAX_BODY or cl > MAX_CRED or pl > MAX_CRED:
            raise Fail("reply with oversized lengths %d/%d/%d" % (cl, pl, bl))
        rest = recv_exact(s, cl + pl + bl, deadline)
        if len(rest) < cl + pl + bl:
            raise Fail("connection closed inside a reply body")
        f = dict(op=op, reqid=reqid, status=status, cap=rest[cl:cl + pl])
        return "reply", f, rest[cl + pl:]
    except TimeoutError:
        return "timeout", None, None


def call(s, op, body=b"", reqid=7, cap=b"", want_cap=False, cred=b""):
    s.sendall(frame(op, body, reqid, cap, cred))
    kind, f, b = read_reply(s)
    if kind != "reply":
        raise Fail("%s: no reply (%s)" % (opname(op), kind))
    if f["op"] != (op | RESPONSE) & 0xFFFF:
        raise Fail("%s: reply op %#x, expected %#x" % (opname(op), f["op"], op | RESPONSE))
    if f["reqid"] != reqid:
        raise Fail("%s: reply reqid %d, expected %d" % (opname(op), f["reqid"], reqid))
    if f["status"] > 0:
        raise Fail("%s: positive status %d" % (opname(op), f["status"]))
    if f["status"] != 0 and b:
        raise Fail("%s: error reply %d carries a %d-byte body" % (opname(op), f["status"], len(b)))
    if want_cap:
        return f["status"], b, f["cap"]
    return f["status"], b


def status_once(addr, op, body, **kw):
    """One request on a connection of its own: the reply's status."""
    s = connect(addr)
    try:
        st, _ = call(s, op, body, **kw)
    finally:
        s.close()
    return st


def capget(addr, oid):
    """GETATTR of oid: its status and the capability the reply grants."""
    s = connect(addr)
    st, _, cap = call(s, GETATTR, bytes.fromhex(oid), want_cap=True)
    print(st, cap.hex() if cap else "-")


def capuse(addr, what, oid, caphex):
    """READ (16 bytes at 0) or WRITE (16 bytes "rawframe-wrote!!" at 0) of
    oid carrying the capability caphex ("-": none): its status."""
    s = connect(addr)
    cap = b"" if caphex == "-" else bytes.fromhex(caphex)
    if what == "read":
        st, _ = call(s, READ, bytes.fromhex(oid) + struct.pack(">QI", 0, 16), cap=cap)
    else:
        data = b"rawframe-wrote!!"
        st, _ = call(s, WRITE, bytes.fromhex(oid) + struct.pack(">QII", 0, 0, len(data)) + data,
                     cap=cap)
    print(st)


def capread(addr, oid, caphex, off, n):
    """READ of n bytes at off of oid with the capability caphex: its
    status and the bytes in hex ("-": none)."""
    s = connect(addr)
    cap = b"" if caphex == "-" else bytes.fromhex(caphex)
    st, b = call(s, READ, bytes.fromhex(oid) + struct.pack(">QI", off, n), cap=cap)
    got = b""
    if st == 0:
        r = R(b)
        got = r.blob()
        r.done()
    print(st, got.hex() if got else "-")


def capwrite(addr, oid, caphex, off, datahex):
    """WRITE of the bytes datahex at off of oid with the capability
    caphex: its status."""
    s = connect(addr)
    cap = b"" if caphex == "-" else bytes.fromhex(caphex)
    data = bytes.fromhex(datahex)
    st, _ = call(s, WRITE, bytes.fromhex(oid) + struct.pack(">QII", off, 0, len(data)) + data,
                 cap=cap)
    print(st)


def proven_oid(uid):
    """A new OID carrying uid's proof (lib/cap.h: cap_oid_generate)."""
    import hashlib
    nonce = os.urandom(8)
    return nonce + hashlib.sha256(b"ofs-oid-1" + struct.pack(">I", uid) + nonce).digest()[:8]


def enc_owned_attr(typ, uid, gid, mode, parts):
    """Attributes of an object owned by uid:gid whose layout names parts
    (OIDs, each on one made-up server)."""
    b = bytes([typ]) + struct.pack(">QQIIIqqI", 0, 0, mode, uid, gid, 0, 0, 0)
    b += b"\0" * 16 + struct.pack(">I", 0) + enc_str(b"")          # backref
    b += b"\0" + b"\0"                                               # sids, stale
    b += enc_str(b"") + struct.pack(">IBBH", 0, 0, 0, len(parts))
    b += b"".join(p + b"\1" + b"\1" * 16 for p in parts)
    return b


def capcreate(addr, oid, uid, gid, parts):
    s = connect(addr)
    o = proven_oid(uid) if oid == "proven" else bytes.fromhex(oid)
    a = enc_owned_attr(OBJ_METAFILE, uid, gid, 0o600, [bytes.fromhex(p) for p in parts])
    st, _, cap = call(s, CREATE, o + a, want_cap=True)
    print(st, cap.hex() if cap else "-", o.hex())


def setattr_(addr, oid, mask, parts):
    s = connect(addr)
    a = enc_owned_attr(OBJ_METAFILE, 0, 0, 0, [bytes.fromhex(p) for p in parts])
    st, _ = call(s, SETATTR, bytes.fromhex(oid) + struct.pack(">I", mask) + a)
    print(st)


FORWARDED = 0x4000               # (lib/proto.h: OFS_OP_FORWARDED)
ATTR_MODE = 1 << 1               # (lib/proto.h: OFS_ATTR_MODE)


def fwdmode(addr, oid, mode, age_ms):
    """A forwarded SETATTR of oid's mode, its deadline age_ms in the past."""
    deadline = int(time.time() * 1000) - age_ms
    cred = b"D" + bytes([1]) + struct.pack(">Q", deadline)
    a = enc_owned_attr(OBJ_METAFILE, 0, 0, mode, [])
    print(status_once(addr, SETATTR | FORWARDED,
                      bytes.fromhex(oid) + struct.pack(">I", ATTR_MODE) + a, cred=cred))


def getmany(addr, oid):
    s = connect(addr)
    st, b = call(s, GETATTR_MANY, struct.pack(">I", 1) + bytes.fromhex(oid))
    if st:
        print(st)
        return
    print(struct.unpack(">i", b[4:8])[0])


def opname(op):
    names = {PING: "PING", GET_ROOT: "GET_ROOT", GETATTR: "GETATTR", READ: "READ",
             WRITE: "WRITE", DIRENT_CREATE: "DIRENT_CREATE", DIRENT_LOOKUP: "DIRENT_LOOKUP",
             DIRENT_LIST: "DIRENT_LIST"}
    return names.get(op, "op %d" % op)


# ---- body codec (lib/wire.c, lib/proto.c) ---------------------------------

class R:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, n):
        if self.p + n > len(self.b):
            raise Fail("reply body too short")
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def u8(self): return self.take(1)[0]
    def u16(self): return struct.unpack(">H", self.take(2))[0]
    def u32(self): return struct.unpack(">I", self.take(4))[0]
    def u64(self): return struct.unpack(">Q", self.take(8))[0]
    def oid(self): return self.take(16)
    def str(self): return self.take(self.u16())
    def blob(self): return self.take(self.u32())

    def handle(self):
        oid = self.oid()
        sids = [self.oid() for _ in range(self.u8())]
        return (oid, sids)

    def done(self):
        if self.p != len(self.b):
            raise Fail("reply body has %d trailing bytes" % (len(self.b) - self.p))


def enc_str(s):
    return struct.pack(">H", len(s)) + s


def enc_handle(h):
    oid, sids = h
    return oid + bytes([len(sids)]) + b"".join(sids)


def dec_attr(b):
    r = R(b)
    a = {}
    a["type"] = r.u8()
    a["version"] = r.u64()
    a["size"] = r.u64()
    r.u32(); r.u32(); r.u32()          # mode uid gid
    r.u64(); r.u64()                   # ctime mtime
    a["chunk_size"] = r.u32()
    r.oid(); r.u32(); r.str()          # backref
    a["sids"] = [r.oid() for _ in range(r.u8())]
    [r.oid() for _ in range(r.u8())]   # stale
    r.str(); r.u32(); r.u8(); r.u8()   # dist strip replicas confidence
    a["parts"] = [r.handle() for _ in range(r.u16())]
    r.done()
    return a


def getattr_(s, oid):
    st, b = call(s, GETATTR, oid)
    if st:
        raise Fail("GETATTR of a known object failed: %d" % st)
    return dec_attr(b)


def lookup(s, dirdata_oid, name):
    st, b = call(s, DIRENT_LOOKUP, dirdata_oid + enc_str(name))
    if st:
        return None
    r = R(b)
    if r.u8() != 1:
        return None
    typ = r.u8()
    h = r.handle()
    r.done()
    return typ, h


class Objects:
    """The objects of the root directory and of file /NAME."""

    def __init__(self, s, name):
        st, b = call(s, GET_ROOT)
        if st:
            raise Fail("GET_ROOT failed: %d" % st)
        r = R(b)
        self.root = r.handle()
        r.done()
        self.sid = self.root[1][0]
        a = getattr_(s, self.root[0])
        if a["type"] != OBJ_DIRECTORY:
            raise Fail("root is type %d, not a directory" % a["type"])
        self.dirdata = [h[0] for h in a["parts"]]
        if not self.dirdata:
            raise Fail("root directory lists no dirdata")
        self.meta = None
        for dd in self.dirdata:
            e = lookup(s, dd, name)
            if e:
                if e[0] != OBJ_METAFILE:
                    raise Fail("/%s is not a file" % name.decode())
                self.meta = e[1]
        if not self.meta:
            raise Fail("/%s not found in the root's dirdata" % name.decode())
        m = getattr_(s, self.meta[0])
        self.dfile = m["parts"][0][0]
        d = getattr_(s, self.dfile)
        if d["type"] != OBJ_DFILE:
            raise Fail("the file's part is type %d, not a dfile" % d["type"])
        self.dfile_size = d["size"]


# ---- cases ------------------------------------------------------------------

def expect_status(s, op, body, want, what):
    st, _ = call(s, op, body)
    if st != want:
        raise Fail("%s: status %d, expected %d" % (what, st, want))


def expect_error_or_close(s, what, want=None, timeout=TIMEOUT):
    """After a broken frame: an error reply (status want, if given) or a
    close, within the timeout - never silence with the socket open."""
    kind, f, _ = read_reply(s, timeout)
    if kind == "timeout":
        raise Fail("%s: no reply and no close within %ss" % (what, timeout))
    if kind == "reply":
        if f["status"] >= 0:
            raise Fail("%s: reply with status %d, expected an error" % (what, f["status"]))
        if want is not None and f["status"] != want:
            raise Fail("%s: status %d, expected %d" % (what, f["status"], want))


def still_usable(s, what):
    st, _ = call(s, PING, reqid=99)
    if st:
        raise Fail("%s: PING on the same connection afterwards failed: %d" % (what, st))


def case_garbage(addr, ctx):
    s = connect(addr)
    junk = b"GET / HTTP/1.0\r\n\r\n" + os.urandom(200)
    s.sendall(junk)
    expect_error_or_close(s, "garbage bytes")
    s.close()


def case_truncated_header(addr, ctx):
    s = connect(addr)
    s.sendall(frame(PING)[:11])
    s.close()


def case_truncated_body(addr, ctx):
    s = connect(addr)
    s.sendall(hdr(PING, body_len=1000) + b"\0" * 100)
    s = half_close(s)
    expect_error_or_close(s, "body_len 1000 with 100 bytes sent")
    s.close()


def case_body_over_limit(addr, ctx):
    s = connect(addr)
    s.sendall(hdr(WRITE, body_len=MAX_BODY + 1))
    expect_error_or_close(s, "body_len OFS_MAX_BODY+1", -ETOOBIG)
    s.close()
    s = connect(addr)
    s.sendall(hdr(PING, body_len=0xFFFFFFFF))
    expect_error_or_close(s, "body_len 0xffffffff", -ETOOBIG)
    s.close()
    s = connect(addr)
    s.sendall(hdr(PING, cred_len=MAX_CRED + 1))
    expect_error_or_close(s, "cred_len OFS_MAX_CRED+1", -ETOOBIG)
    s.close()


def case_bad_version(addr, ctx):
    s = connect(addr)
    s.sendall(hdr(PING, version=2))
    expect_error_or_close(s, "protocol version 2", -EVERSION)
    s.close()


def case_response_bit(addr, ctx):
    s = connect(addr)
    s.sendall(hdr(PING | RESPONSE))
    expect_error_or_close(s, "a request with the response bit", -EPROTO)
    s.close()


def case_unknown_op(addr, ctx):
    s = connect(addr)
    for op in (999, 0, 200, 0x7FFF):
        expect_status(s, op, b"", -EUNKNOWNOP, "op %d" % op)
    still_usable(s, "unknown ops")
    s.close()


def case_trailing_bytes(addr, ctx):
    s = connect(addr)
    expect_status(s, PING, b"xx", -ECORRUPT, "PING with 2 trailing body bytes")
    still_usable(s, "trailing bytes")
    s.close()


def case_bad_names(addr, ctx):
    s = connect(addr)
    o = Objects(s, ctx["file"])
    dirent = bytes([OBJ_METAFILE]) + enc_handle(o.meta)
    for name, what in ((b"a/b", "'/'"), (b"a\0b", "NUL"), (b"x" * 256, "256 bytes"),
                       (b".", "'.'"), (b"..", "'..'"), (b"", "empty"),
                       (b"/", "'/' alone"), (b"y" * 1000, "1000 bytes")):
        for dd in o.dirdata:
            for flags in (0, 1):
                body = dd + enc_str(name) + dirent + struct.pack(">I", flags)
                expect_status(s, DIRENT_CREATE, body, -ENAME,
                              "DIRENT_CREATE name %s flags %d" % (what, flags))
    # A name of 255 bytes is legal to look up (absent, not malformed).
    st, _ = call(s, DIRENT_LOOKUP, o.dirdata[0] + enc_str(b"z" * 255))
    if st != -ENOENT:
        raise Fail("DIRENT_LOOKUP of an absent 255-byte name: status %d, expected %d" % (st, -ENOENT))
    still_usable(s, "bad names")
    s.close()


def case_read_past_eof(addr, ctx):
    s = connect(addr)
    o = Objects(s, ctx["file"])
    with open(ctx["local"], "rb") as f:
        want = f.read()
    size = o.dfile_size
    if size != len(want):
        raise Fail("dfile size %d, local file %d bytes" % (size, len(want)))
    for off, length in ((size, 4096), (size + 1000, 4096), (1 << 62, 16), (2**64 - 1, 1)):
        st, b = call(s, READ, o.dfile + struct.pack(">QI", off, length))
        if st == 0:
            r = R(b)
            got = r.blob()
            r.done()
            if got:
                raise Fail("READ at %d (size %d) returned %d bytes" % (off, size, len(got)))
        elif st not in (-22, -ETOOBIG):   # -EINVAL, -OFS_ETOOBIG: sane refusals
            raise Fail("READ at %d past EOF: status %d" % (off, st))
    # A read straddling EOF is short and returns the file's last bytes.
    st, b = call(s, READ, o.dfile + struct.pack(">QI", size - 10, 100))
    if st:
        raise Fail("READ straddling EOF: status %d" % st)
    r = R(b)
    got = r.blob()
    r.done()
    if got != want[-10:]:
        raise Fail("READ straddling EOF returned %r, expected the last 10 bytes" % got[:32])
    st, _ = call(s, READ, o.dfile + struct.pack(">QI", 0, MAX_IO + 1))
    if st != -ETOOBIG:
        raise Fail("READ of OFS_MAX_IO+1 bytes: status %d, expected %d" % (st, -ETOOBIG))
    still_usable(s, "reads past EOF")
    s.close()


def case_wrong_type(addr, ctx):
    s = connect(addr)
    o = Objects(s, ctx["file"])
    w = struct.pack(">QII", 0, 0, 5) + b"hello"
    expect_status(s, WRITE, o.root[0] + w, -ETYPE, "WRITE to the root directory")
    expect_status(s, WRITE, o.dirdata[0] + w, -ETYPE, "WRITE to a dirdata")
    expect_status(s, WRITE, o.meta[0] + w, -ETYPE, "WRITE to a metafile")
    expect_status(s, DIRENT_LOOKUP, o.dfile + enc_str(b"f"), -ETYPE, "DIRENT_LOOKUP on a dfile")
    expect_status(s, DIRENT_LOOKUP, o.meta[0] + enc_str(b"f"), -ETYPE,
                  "DIRENT_LOOKUP on a metafile")
    dirent = bytes([OBJ_METAFILE]) + enc_handle(o.meta)
    expect_status(s, DIRENT_CREATE, o.dfile + enc_str(b"new") + dirent + struct.pack(">I", 0),
                  -ETYPE, "DIRENT_CREATE on a dfile")
    expect_status(s, READ, o.root[0] + struct.pack(">QI", 0, 10), -ETYPE,
                  "READ of a directory")
    # A dirdata's keys are its entries: only DIRENT_* may change them.
    blob = lambda b: struct.pack(">I", len(b)) + b
    expect_status(s, KV_PUT, o.dirdata[0] + blob(b"evil/name") + blob(b"junk"), -ETYPE,
                  "KV_PUT into a dirdata")
    expect_status(s, KV_PUT, o.dirdata[0] + blob(ctx["file"]) + blob(b"junk"), -ETYPE,
                  "KV_PUT over an entry of a dirdata")
    expect_status(s, KV_DEL, o.dirdata[0] + blob(ctx["file"]), -ETYPE,
                  "KV_DEL of an entry of a dirdata")
    still_usable(s, "wrong types")
    s.close()


def case_missing_object(addr, ctx):
    s = connect(addr)
    ghost = os.urandom(16)
    # (not ENOENT, which for an entry operation means "no such entry")
    expect_status(s, GETATTR, ghost, -OFS_ENOOBJ, "GETATTR of an unknown OID")
    expect_status(s, READ, ghost + struct.pack(">QI", 0, 10), -OFS_ENOOBJ, "READ of an unknown OID")
    expect_status(s, WRITE, ghost + struct.pack(">QII", 0, 0, 1) + b"x", -OFS_ENOOBJ,
                  "WRITE to an unknown OID")
    still_usable(s, "unknown OIDs")
    s.close()


def case_write_huge_offset(addr, ctx):
    """WRITE whose end lies past what any file can hold (offset + length
    overflows a signed 64-bit file offset) is refused, not wrapped."""
    s = connect(addr)
    o = Objects(s, ctx["file"])
    for off in (2**63 - 2, 2**63, 2**64 - 2):
        st, _ = call(s, WRITE, o.dfile + struct.pack(">QII", off, 0, 5) + b"hello")
        if st == 0:
            raise Fail("WRITE of 5 bytes at offset %d was accepted" % off)
    still_usable(s, "huge write offsets")
    s.close()


def enc_attr(typ=OBJ_DFILE, name=b"", nsids=0, nstale=0, nparts=0, dist=b"", size=0, strip=0,
             replicas=0, confidence=0, parts=None):
    b = bytes([typ]) + struct.pack(">QQIIIqqI", 0, size, 0o644, 0, 0, 0, 0, 0)
    b += b"\0" * 16 + struct.pack(">I", 0) + enc_str(name)           # backref
    b += bytes([nsids]) + b"\1" * 16 * nsids
    b += bytes([nstale]) + b"\2" * 16 * nstale
    b += enc_str(dist) + struct.pack(">IBBH", strip, replicas, confidence, nparts)
    for i in range(nparts):
        b += (parts[i] if parts else b"\3" * 16) + b"\0"
    return b


def case_bad_create(addr, ctx):
    """CREATE with attributes no object may have is refused (and creates
    nothing: the caller compares the data dir before and after)."""
    s = connect(addr)
    bad = (
        (enc_attr(typ=0), "type 0"),
        (enc_attr(typ=9), "type 9"),
        (enc_attr(nsids=5), "5 SIDs (max 4)"),
        (enc_attr(nstale=200), "200 stale SIDs"),
        (enc_attr(typ=OBJ_METAFILE, nparts=65), "65 parts (max 64)"),
        (enc_attr(name=b"a/b"), "backref name with '/'"),
        (enc_attr(name=b".."), "backref name '..'"),
        (enc_attr(dist=b"d" * 40), "distribution name of 40 bytes"),
        (enc_attr()[:-1], "truncated attributes"),
        (enc_attr() + b"\0", "a trailing byte"),
        (b"", "an empty body"),
    )
    for body, what in bad:
        st, _ = call(s, CREATE, bytes(16) + body)
        if st >= 0:
            raise Fail("CREATE with %s: status %d, expected an error" % (what, st))
    still_usable(s, "bad creates")
    s.close()


def case_layout_limits(addr, ctx):
    """CREATE of a metafile whose layout or size is past its limit
    (docs/design.md, "Limits"): a strip size outside 4 KiB..4 MiB, more
    than 4 replicas or a write confidence over 4: EINVAL; a size more than
    its dfiles hold (1 TiB each): EFBIG. The same at the limits is taken."""
    s = connect(addr)
    TIB = 1 << 40

    def create(**kw):
        """Its status; one made is removed again (an orphan metafile
        would be a scrub's finding)."""
        parts = [os.urandom(16) for _ in range(kw.get("nparts", 1))]
        kw.setdefault("nparts", 1)
        body = os.urandom(16) + enc_attr(typ=OBJ_METAFILE, parts=parts, **kw)
        st, b = call(s, CREATE, body)
        if st == 0:
            rst, _ = call(s, REMOVE, b[:16])
            if rst != 0:
                raise Fail("REMOVE of the metafile just made: status %d" % rst)
        return st

    bad = (
        (dict(strip=4095), -EINVAL, "strip size 4095"),
        (dict(strip=(4 << 20) + 1), -EINVAL, "strip size 4 MiB + 1"),
        (dict(strip=2**32 - 1), -EINVAL, "strip size 2^32 - 1"),
        (dict(replicas=5), -EINVAL, "5 replicas"),
        (dict(confidence=5), -EINVAL, "write confidence 5"),
        (dict(size=TIB + 1), -EFBIG, "size 1 TiB + 1 with one dfile"),
        (dict(size=3 * TIB + 1, nparts=3), -EFBIG, "size 3 TiB + 1 with three dfiles"),
        (dict(size=2**64 - 1), -EFBIG, "size 2^64 - 1"),
    )
    for kw, want, what in bad:
        st = create(**kw)
        if st != want:
            raise Fail("CREATE of a metafile with %s: status %d, expected %d" % (what, st, want))
    good = (
        (dict(strip=4096, replicas=4, confidence=4, size=TIB), "the smallest strip, 4 copies, 1 TiB"),
        (dict(strip=4 << 20, size=64 * TIB, nparts=64), "the largest strip, 64 dfiles, 64 TiB"),
    )
    for kw, what in good:
        st = create(**kw)
        if st != 0:
            raise Fail("CREATE of a metafile with %s: status %d, expected 0" % (what, st))
    still_usable(s, "layout limits")
    s.close()


def case_bad_create_small(addr, ctx):
    """CREATE_SMALL (a whole small file in one request) that is not one
    metafile with one dfile of its size, on its own servers, is refused and
    makes nothing."""
    s = connect(addr)
    mf = os.urandom(16)

    def body(oid=mf, attr=None, data=b"hello"):
        a = attr if attr is not None else enc_attr(typ=OBJ_METAFILE, nparts=1, nsids=1)
        return oid + a + struct.pack(">I", len(data)) + data

    bad = (
        (body(), "a size (0) other than the bytes' (5)"),
        (body(attr=enc_attr(typ=OBJ_METAFILE, nparts=0, nsids=1), data=b""), "no dfile"),
        (body(attr=enc_attr(typ=OBJ_METAFILE, nparts=2, nsids=1), data=b""), "two dfiles"),
        (body(attr=enc_attr(typ=OBJ_DFILE, nparts=1), data=b""), "a dfile for the file"),
        (body(oid=bytes(16), data=b""), "a zero OID"),
        (body(oid=b"\3" * 16, data=b""), "the dfile's OID for the metafile"),
        (body(data=b"x" * (SMALL_MAX + 1)), "%d bytes (max %d)" % (SMALL_MAX + 1, SMALL_MAX)),
        (body(attr=enc_attr(typ=OBJ_METAFILE, nparts=1, nsids=0), data=b""),
         "no servers for its copies"),
        (body()[:-1], "truncated bytes"),
        (body() + b"\0", "a trailing byte"),
    )
    for b, what in bad:
        st, _ = call(s, CREATE_SMALL, b)
        if st >= 0:
            raise Fail("CREATE_SMALL with %s: status %d, expected an error" % (what, st))
    still_usable(s, "bad small creates")
    s.close()


CASES = {
    "garbage": case_garbage,
    "truncated_header": case_truncated_header,
    "truncated_body": case_truncated_body,
    "body_over_limit": case_body_over_limit,
    "bad_version": case_bad_version,
    "response_bit": case_response_bit,
    "unknown_op": case_unknown_op,
    "trailing_bytes": case_trailing_bytes,
    "bad_names": case_bad_names,
    "read_past_eof": case_read_past_eof,
    "wrong_type": case_wrong_type,
    "missing_object": case_missing_object,
    "write_huge_offset": case_write_huge_offset,
    "bad_create": case_bad_create,
    "bad_create_small": case_bad_create_small,
    "layout_limits": case_layout_limits,
}


FREEZE = 33  # lib/proto.h enum ofs_op


def freeze(addr, oid, ms, holder):
    s = connect(addr)
    try:
        st, _ = call(s, FREEZE, bytes.fromhex(oid) + struct.pack(">I", ms) + bytes.fromhex(holder))
    finally:
        s.close()
    print(st)


def send(addr, op, path):
    body = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    s = connect(addr)
    try:
        st, b = call(s, op, body)
    finally:
        s.close()
    print(st, b[:8].hex() if b else "-")


SERVERS = 18                     # (lib/proto.h)
AHEAD = 10 ** 15                 # versions far ahead (ns: 11 days)


def dec_server(r):
    """One entry (lib/proto_reply.c proto_encode_server) as a dict."""
    e = {"sid": r.oid(), "address": r.str(), "state": r.u8(), "weight": r.u32()}
    e["attrs"] = [r.str() for _ in range(r.u8())]
    e["version"], e["last_seen"] = r.u64(), r.u64()
    e["root"], e["root_birth"] = r.handle(), r.u64()
    e["self_version"], e["root_version"] = r.u64(), r.u64()
    return e


def enc_server(e):
    return (e["sid"] + enc_str(e["address"]) + bytes([e["state"]]) +
            struct.pack(">IB", e["weight"], len(e["attrs"])) +
            b"".join(enc_str(a) for a in e["attrs"]) +
            struct.pack(">QQ", e["version"], e["last_seen"]) + enc_handle(e["root"]) +
            struct.pack(">QQQ", e["root_birth"], e["self_version"], e["root_version"]))


def serverspush(addr, me, edits):
    s = connect(addr)
    try:
        st, b = call(s, SERVERS, struct.pack(">I", 0))
        if st:
            raise Fail("SERVERS pull: status %d" % st)
        r = R(b)
        r.oid()
        table = [dec_server(r) for _ in range(r.u32())]
        r.done()
        by = {e["sid"].hex(): e for e in table}
        if me not in by:
            raise Fail("%s is not in the server's table" % me)
        push = [by[me]]
        for ed in edits:
            sid, _, kv = ed.partition(":")
            field, _, value = kv.partition("=")
            if sid not in by or field not in ("address", "state", "weight"):
                raise Fail("bad change %s" % ed)
            e = by[sid]
            e[field] = value.encode() if field == "address" else int(value)
            e["version"] += AHEAD
            e["self_version"] += AHEAD
            if e is not push[0] and e not in push:
                push.append(e)
        body = struct.pack(">I", len(push)) + b"".join(enc_server(e) for e in push)
        st, b = call(s, SERVERS, body, reqid=8)
    finally:
        s.close()
    print(st)


def oldrevoked(addr, serials):
    """The previous release's REVOKED body: u16 n, n times u8 len + bytes."""
    body = struct.pack(">H", len(serials))
    for h in serials:
        b = bytes.fromhex(h)
        body += struct.pack(">B", len(b)) + b
    print(status_once(addr, REVOKED, body))


def oldkeys(addr, key_id):
    """The previous release's CAPKEYS body: u8 n, n times u32 id + 32 bytes."""
    body = struct.pack(">BI", 1, key_id) + os.urandom(32)
    print(status_once(addr, CAPKEYS, body))


def ping(addr):
    s = connect(addr)
    st, b = call(s, PING, reqid=0x123456789)
    if st:
        raise Fail("PING: status %d" % st)
    r = R(b)
    r.oid()
    v = r.str()
    r.done()
    if not v:
        raise Fail("PING: empty server version")
    s.close()


FORWARDED = 0x4000


def statuses(addr, ops, forwarded):
    s = connect(addr)
    for i, op in enumerate(ops):
        wire = op | (FORWARDED if forwarded else 0)
        s.sendall(frame(wire, b"", 100 + i))
        kind, f, _ = read_reply(s)
        if kind != "reply":
            raise Fail("op %d: no reply (%s)" % (op, kind))
        if f["op"] != (wire | RESPONSE) or f["reqid"] != 100 + i:
            raise Fail("op %d: reply op %#x reqid %d" % (op, f["op"], f["reqid"]))
        print(op, f["status"])
    s.close()


def hello(addr):
    try:
        s = connect(addr)
        s.sendall(frame(PING))
        kind, f, _ = read_reply(s)
    except ssl.SSLError as e:
        print("tls: %s" % (e.reason or e))
        return
    except (ConnectionResetError, BrokenPipeError):
        print("closed")
        return
    if kind == "reply" and f["status"] == 0:
        print("ok")
    elif kind == "reply":
        print("error %d" % f["status"])
    else:
        print(kind)
    s.close()


def ping_outcome(s, reqid):
    try:
        s.sendall(frame(PING, b"", reqid))
        kind, f, _ = read_reply(s)
    except ssl.SSLError as e:
        return "tls: %s" % (e.reason or e)
    except (ConnectionResetError, BrokenPipeError):
        return "closed"
    if kind == "reply" and f["status"] == 0:
        return "ok"
    if kind == "reply":
        return "error %d" % f["status"]
    return kind


def pingpause(addr):
    s = connect(addr)
    print(ping_outcome(s, 1), flush=True)
    while sys.stdin.buffer.read1(4096):
        pass
    print(ping_outcome(s, 2), flush=True)
    s.close()


def stall(addr, idle, seconds):
    socks = [connect(addr) for _ in range(idle)]
    half = connect(addr)
    half.sendall(frame(PING)[:14])      # half a header, then nothing
    socks.append(half)
    body = connect(addr)                # a header, part of the body, nothing
    body.sendall(hdr(WRITE, body_len=4096) + b"\0" * 100)
    socks.append(body)
    print("ready", flush=True)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        r, _, _ = select.select([sys.stdin], [], [], 0.5)
        if r and not sys.stdin.buffer.read1(4096):
            break
    for s in socks:
        s.close()


def tcp_from(addr, src):
    host, port = addr.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(TIMEOUT)
    s.connect((host, int(port)))
    return s


def flood(addr, silent, sources, stalled, idle):
    srcs = ["127.0.0.%d" % (2 + i) for i in range(sources)]
    quiet = {}                           # socket -> its source
    for src in srcs:
        for _ in range(silent):
            quiet[tcp_from(addr, src)] = src
    hello = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(16)
    stall_socks = []
    for _ in range(stalled):
        t = tcp_from(addr, "127.0.0.200")
        t.sendall(hello)                 # part of a ClientHello, then nothing
        stall_socks.append(t)
    admitted, refused, first = [], 0, None
    for i in range(idle):
        try:
            t = connect(addr)
            t.sendall(frame(PING, b"", 1))
            kind, f, _ = read_reply(t)
        except (ssl.SSLError, OSError) as e:
            kind, f = "error", None
            print("rawframe: idle connection %d: %s" % (i, e), file=sys.stderr)
        if kind == "reply" and f["status"] == 0:
            admitted.append(t)
        else:
            refused += 1
            if first is None:
                first = f["status"] if f else kind
    print("ready %d %d %s" % (len(admitted), refused, first), flush=True)
    closed = set()
    while True:
        socks = list(quiet) + admitted
        r, _, _ = select.select(socks + [sys.stdin], [], [], 1.0)
        if sys.stdin in r and not sys.stdin.buffer.read1(4096):
            break
        for t in r:
            if t is sys.stdin:
                continue
            if t in quiet:               # dropped: open another in its place
                src = quiet.pop(t)
                t.close()
                try:
                    quiet[tcp_from(addr, src)] = src
                except OSError:
                    pass
            elif t not in closed:
                try:
                    gone = t.recv(4096) == b""
                except (ssl.SSLError, OSError):
                    gone = True
                if gone:
                    closed.add(t)
                    admitted.remove(t)
                    print("idle-closed %d" % len(closed), flush=True)
    for t in list(quiet) + stall_socks + admitted:
        t.close()


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    addr, cmd, rest = argv[1], argv[2], argv[3:]
    opts = {"file": b"f", "local": None, "idle": 8, "seconds": 120.0, "silent": 8,
            "sources": 4, "stalled": 4}
    pos = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if a in ("--file", "--local", "--idle", "--seconds", "--silent", "--sources",
                 "--stalled"):
            opts[a[2:]] = rest[i + 1]
            i += 2
        else:
            pos.append(a)
            i += 1
    if isinstance(opts["file"], str):
        opts["file"] = opts["file"].encode()
    try:
        if cmd == "ping":
            ping(addr)
        elif cmd == "cases":
            print("\n".join(CASES))
        elif cmd == "case":
            if len(pos) != 1 or pos[0] not in CASES:
                print("rawframe: unknown case %s" % pos, file=sys.stderr)
                return 2
            CASES[pos[0]](addr, opts)
        elif cmd == "freeze":
            if len(pos) != 3 or len(pos[0]) != 32 or len(pos[2]) != 32:
                print("rawframe: freeze OID MS HOLDER", file=sys.stderr)
                return 2
            freeze(addr, pos[0], int(pos[1]), pos[2])
        elif cmd == "statuses":
            statuses(addr, [int(p) for p in pos if p != "--forwarded"], "--forwarded" in pos)
        elif cmd == "hello":
            hello(addr)
        elif cmd == "capget" and len(pos) == 1:
            capget(addr, pos[0])
        elif cmd == "capuse" and len(pos) == 3 and pos[0] in ("read", "write"):
            capuse(addr, pos[0], pos[1], pos[2])
        elif cmd == "capread" and len(pos) == 4:
            capread(addr, pos[0], pos[1], int(pos[2]), int(pos[3]))
        elif cmd == "capwrite" and len(pos) == 4:
            capwrite(addr, pos[0], pos[1], int(pos[2]), pos[3])
        elif cmd == "capcreate" and len(pos) >= 3:
            capcreate(addr, pos[0], int(pos[1]), int(pos[2]), pos[3:])
        elif cmd == "setlayout" and len(pos) >= 2:
            setattr_(addr, pos[0], ATTR_LAYOUT, pos[1:])
        elif cmd == "setnothing" and len(pos) == 1:
            setattr_(addr, pos[0], 0, [])
        elif cmd == "fwdmode" and len(pos) == 3:
            fwdmode(addr, pos[0], int(pos[1], 8), int(pos[2]))
        elif cmd == "getmany" and len(pos) == 1:
            getmany(addr, pos[0])
        elif cmd == "flood":
            flood(addr, int(opts["silent"]), int(opts["sources"]), int(opts["stalled"]),
                  int(opts["idle"]))
        elif cmd == "send" and len(pos) == 2:
            send(addr, int(pos[0]), pos[1])
        elif cmd == "serverspush" and len(pos) >= 1:
            serverspush(addr, pos[0], pos[1:])
        elif cmd == "oldrevoked" and len(pos) >= 1:
            oldrevoked(addr, pos)
        elif cmd == "oldkeys" and len(pos) == 1:
            oldkeys(addr, int(pos[0]))
        elif cmd == "pingpause":
            pingpause(addr)
        elif cmd == "stall":
            stall(addr, int(opts["idle"]), float(opts["seconds"]))
        else:
            print("rawframe: unknown command %s" % cmd, file=sys.stderr)
            return 2
    except Fail as e:
        print("rawframe: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("rawframe: %s: %s" % (cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
