#!/usr/bin/env python3
"""faultserver.py - a misbehaving HTTP(S) file server for offwheel's tests.

Python 3 standard library only.  Binds 127.0.0.1 (port 0 by default) and
prints the port on the first line of stdout.

  faultserver.py --root DIR [--port N] [--cert PEM --key PEM] [--log FILE]

Normal files: GET /<file> serves DIR/<file> with a strong ETag,
Last-Modified, If-None-Match / If-Modified-Since (304), Range "bytes=N-" /
"bytes=N-M" with If-Range (206), HEAD.

Faults: GET /fault/<mode>/<file>[?fail=N&...] (or /fault/<mode>,fail=N,.../<file>;
a directory is served as its index.html).  With fail=N the fault hits
only the first N requests for that exact mode+file+query, later ones are served
normally (transient faults); without it the fault is persistent.

  truncate          Content-Length, half the body, close
  nocl              whole body, no Content-Length (close-delimited)
  truncate-nocl     no Content-Length (close-delimited), half the body, close
  reset             Content-Length, half the body, TCP RST
  stall             Content-Length, half the body, then silence (?stall=S, 30)
  trickle           one byte every ?every=S seconds (0.5)
  hang              read the request, never answer (?stall=S, 30)
  flip              whole body, one byte flipped (at ?at=N, default middle)
  lie-cl-short      Content-Length 10 bytes short, whole body sent
  lie-cl-long       Content-Length 10 bytes long, body, close
  cl-garbage        Content-Length: 12abc
  cl-negative       Content-Length: -5
  cl-huge           Content-Length: 999999999999999
  cl-double         two different Content-Length headers
  range-wrong       206 whose Content-Range starts one byte off
  range-badtotal    206 with the right start but a wrong total
  range-ignore      200 with the whole body to a Range request
  range-norange     206 "bytes 0-(n-1)/n" even without Range
  range-truncate    the right 206 to a Range, half its body, close
  redirect          ?n=K (1) redirects: to itself with n=K-1, at 1 to /<file>
  redirect-http     302 to http://<same host:port>/<file>
  redirect-file     302 to file:///etc/passwd
  redirect-other-host  302 to the same server under the other loopback
                    name (127.0.0.1 <-> localhost)
  redirect-loop     302 to /fault/redirect-loop2/<file>, which comes back
  echo-auth         200 whose body is the request's Authorization header
                    ("none" without one)
  redirect-project  302 from a project page to the page of project ?p=NAME
  <3-digit status>  that status with a short body; Retry-After from ?ra=
                    (raw value, or "date+N" / "date-N" for an HTTP date)
  gzip              Content-Encoding: gzip body
  endless           close-delimited endless zeros
  endless-chunked   chunked endless zeros
  header-flood      ?count=N (5000) extra header lines, then the file
  header-huge       one header line of ?size=N (200000) bytes, then the file
  slow              wait ?delay=S (0.3) before serving normally
  not-modified      304 with an ETag to every request, conditional or not
                    (a captive portal or broken proxy)
  early-close       HTTP/1.0, no Content-Length: the body up to the first
                    "</a>" after ?at=P (60) percent of it, then close
  http10            HTTP/1.0, no Content-Length, the whole body, then close
  other-project     the page of project ?p=NAME served at this project's URL
  etag-hostile      the file with an ETag holding ESC and other control
                    characters (?kind=long: a 200-byte printable ETag)
  no-validators     the file without ETag or Last-Modified (as many caching
                    proxies and mirrors serve it), Range honoured, an
                    If-Range never matching (a 200, as RFC 9110 wants)
  ifrange-swap      a wheel whose METADATA is stored and has an "X-Forge:"
                    header line: requests without If-Range are served
                    normally; every request WITH If-Range is answered 206
                    from another version of the file (its ETag differs),
                    If-Range ignored: the METADATA with ?add=NAME (a
                    Requires-Dist added) or ?drop=NAME (one removed), of the
                    same length and CRC-32 (see forge_metadata)
  ifrange-ignore    Range honoured but If-Range ignored, the 206 carrying
                    another ETag and Last-Modified (another version's)
  range-lie         the same forged version, with the file's own validators,
                    to every Range request; a GET without Range gets the
                    real file (the one the page's hash names)
  meta-contradict   FILE.metadata with its Name and Version lines replaced
                    by ?name= (evil-torch) and ?version= (9.9.9); other
                    files served normally

GET /stats gives JSON: max_active, max_active_per_host {host: n},
connections (TCP connections accepted, the /stats request's own included),
requests [{path, host, range, if_range, if_none_match, if_modified_since,
status}]; GET /stats/reset clears it.
"""
import argparse
import email.utils
import gzip
import io
import json
import os
import select
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import zipfile
import zlib
from http.server import BaseHTTPRequestHandler, HTTPServer

LOCK = threading.Lock()
STATE = {"active": 0, "max_active": 0, "host_active": {}, "host_max": {},
         "requests": [], "counters": {}, "connections": 0}


def reset_stats():
    with LOCK:
        STATE["max_active"] = STATE["active"]
        STATE["host_max"] = dict(STATE["host_active"])
        STATE["requests"] = []
        STATE["counters"] = {}
        STATE["connections"] = 0


def enter(host):
    with LOCK:
        STATE["active"] += 1
        STATE["max_active"] = max(STATE["max_active"], STATE["active"])
        n = STATE["host_active"].get(host, 0) + 1
        STATE["host_active"][host] = n
        STATE["host_max"][host] = max(STATE["host_max"].get(host, 0), n)


def leave(host):
    with LOCK:
        STATE["active"] -= 1
        STATE["host_active"][host] -= 1


def bump(key):
    with LOCK:
        n = STATE["counters"].get(key, 0) + 1
        STATE["counters"][key] = n
        return n


def http_date(t):
    return email.utils.formatdate(t, usegmt=True)


class File:
    def __init__(self, path):
        st = os.stat(path)
        with open(path, "rb") as f:
            self.data = f.read()
        self.size = len(self.data)
        self.mtime = int(st.st_mtime)
        self.etag = '"%x-%x"' % (st.st_mtime_ns, self.size)
        self.lastmod = http_date(self.mtime)


class Blob:
    """Bytes served like a File (the validators of another)."""
    def __init__(self, data, like):
        self.data, self.size = data, len(data)
        self.mtime, self.etag, self.lastmod = like.mtime, like.etag + "x", like.lastmod


def crc_solve(deltas, want):
    """Indexes of deltas (32-bit ints) whose XOR is want, or None."""
    basis = {}  # top bit -> (vector, set of indexes)
    for i, d in enumerate(deltas):
        used = {i}
        while d:
            top = d.bit_length() - 1
            if top not in basis:
                basis[top] = (d, used)
                break
            d ^= basis[top][0]
            used ^= basis[top][1]
    used = set()
    while want:
        top = want.bit_length() - 1
        if top not in basis:
            return None
        want ^= basis[top][0]
        used ^= basis[top][1]
    return used


def forge_metadata(data, q):
    """The wheel `data` with its stored METADATA member changed in place
    (q: add=NAME, drop=NAME), its length and CRC-32 kept: the letters of
    its "X-Forge: aaa..." line make up the difference ('a' or 'c' each, and
    CRC-32 is affine in the bits), so every other byte of the file, its
    central directory and local header included, stays the same."""
    z = zipfile.ZipFile(io.BytesIO(data))
    info = next(i for i in z.infolist() if i.filename.endswith(".dist-info/METADATA"))
    if info.compress_type != zipfile.ZIP_STORED:
        raise ValueError("forge_metadata: the METADATA must be stored")
    h = info.header_offset
    nl, el = struct.unpack("<HH", data[h + 26:h + 30])
    start = h + 30 + nl + el
    text = data[start:start + info.file_size]
    lines = text.split(b"\n")
    pad = next(i for i, l in enumerate(lines) if l.startswith(b"X-Forge: "))
    if q.get("drop"):
        dep = b"Requires-Dist: " + q["drop"].encode()
        k = next(i for i, l in enumerate(lines) if l == dep or l.startswith(dep + b";"))
        lines[pad] += b"a" * (len(lines[k]) + 1)
        del lines[k]
    if q.get("add"):
        line = b"Requires-Dist: " + q["add"].encode()
        lines[pad] = lines[pad][:-(len(line) + 1)]
        lines.insert(pad + 1, line)
    pad = next(i for i, l in enumerate(lines) if l.startswith(b"X-Forge: "))
    new = bytearray(b"\n".join(lines))
    assert len(new) == len(text)
    first = sum(len(l) + 1 for l in lines[:pad]) + len(b"X-Forge: ")
    spots = list(range(first, first + len(lines[pad]) - len(b"X-Forge: ")))
    zero = zlib.crc32(bytes(len(new)))
    deltas = []
    for p in spots:
        e = bytearray(len(new))
        e[p] = 0x02
        deltas.append(zlib.crc32(bytes(e)) ^ zero)
    used = crc_solve(deltas, zlib.crc32(text) ^ zlib.crc32(bytes(new)))
    if used is None:
        raise ValueError("forge_metadata: no CRC match with this X-Forge line")
    for i in used:
        new[spots[i]] ^= 0x02
    assert zlib.crc32(bytes(new)) == zlib.crc32(text)
    return data[:start] + bytes(new) + data[start + len(text):]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "faultserver/1"

    def log_message(self, fmt, *args):
        if self.server.logf:
            self.server.logf.write("%s\n" % (fmt % args))
            self.server.logf.flush()

    def host(self):
        h = self.headers.get("Host", "")
        if h.startswith("["):
            return h.split("]")[0] + "]"
        return h.split(":")[0]

    def record(self, status):
        h = self.headers
        with LOCK:
            STATE["requests"].append({
                "path": self.path, "host": self.host(), "status": status,
                "range": h.get("Range"), "if_range": h.get("If-Range"),
                "if_none_match": h.get("If-None-Match"),
                "if_modified_since": h.get("If-Modified-Since"),
                "accept_encoding": h.get("Accept-Encoding")})

    def do_HEAD(self):
        self.do_GET(head=True)

    def do_GET(self, head=False):
        host = self.host()
        enter(host)
        try:
            self.route(head)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True
        finally:
            leave(host)

    # --- plumbing -------------------------------------------------------
    def start(self, status, headers, file=None):
        self.record(status)
        self.send_response(status)
        if file is not None:
            if file.etag:
                self.send_header("ETag", file.etag)
            if file.lastmod:
                self.send_header("Last-Modified", file.lastmod)
            self.send_header("Accept-Ranges", "bytes")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()

    def simple(self, status, text, extra=()):
        body = text.encode()
        self.start(status, [("Content-Length", str(len(body))),
                            ("Content-Type", "text/plain")] + list(extra))
        self.wfile.write(body)

    def close_now(self, rst=False):
        self.wfile.flush()
        if rst:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        self.close_connection = True
        try:
            if isinstance(self.connection, ssl.SSLSocket) and not rst:
                self.connection.unwrap()
        except (ssl.SSLError, OSError):
            pass
        self.connection.close()

    def load(self, rel):
        rel = urllib.parse.unquote(rel).lstrip("/")
        path = os.path.realpath(os.path.join(self.server.root, rel))
        if os.path.isdir(path):  # index pages: <dir>/index.html, as nginx does
            path = os.path.join(path, "index.html")
        if not path.startswith(self.server.root + os.sep) or not os.path.isfile(path):
            return None
        return File(path)

    # --- routing --------------------------------------------------------
    def route(self, head):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        if u.path == "/stats":
            with LOCK:
                doc = {"max_active": STATE["max_active"],
                       "max_active_per_host": STATE["host_max"],
                       "connections": STATE["connections"],
                       "requests": STATE["requests"]}
            body = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if u.path == "/stats/reset":
            reset_stats()
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if u.path.startswith("/fault/"):
            parts = u.path.split("/", 3)
            if len(parts) == 4:
                mode, rel = parts[2], parts[3]
                # parameters may also ride in the mode segment, for clients
                # that append to a base URL: /fault/503,fail=2,ra=1/<file>
                mode, *extra = mode.split(",")
                q.update(dict(kv.split("=", 1) for kv in extra if "=" in kv))
                n = bump((mode, rel, u.query))
                fail = q.get("fail")
                if fail is None or n <= int(fail):
                    return self.fault(mode, rel, q, head)
                return self.serve(rel, head)
        return self.serve(u.path, head)

    # --- normal serving -------------------------------------------------
    def not_modified(self, f):
        inm = self.headers.get("If-None-Match")
        if inm is not None:
            return f.etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*"
        ims = self.headers.get("If-Modified-Since")
        if ims and f.lastmod:
            t = email.utils.parsedate_to_datetime(ims)
            return t is not None and f.mtime <= t.timestamp()
        return False

    def wanted_range(self, f, honour_if_range=True):
        r = self.headers.get("Range")
        if not r or not r.startswith("bytes="):
            return None
        ir = self.headers.get("If-Range")
        if honour_if_range and ir is not None and ir not in (f.etag, f.lastmod):
            return None
        a, _, b = r[6:].partition("-")
        try:
            if not a:  # a suffix: the last b bytes
                n = int(b)
                return (max(f.size - n, 0), f.size - 1) if n > 0 else None
            start = int(a)
            end = int(b) if b else f.size - 1
        except ValueError:
            return None
        return start, min(end, f.size - 1)

    def serve(self, rel, head):
        f = self.load(rel)
        if f is None:
            return self.simple(404, "not found\n")
        return self.serve_loaded(f, head)

    def serve_loaded(self, f, head, honour_if_range=True):
        if self.not_modified(f):
            return self.start(304, [], f)
        rng = self.wanted_range(f, honour_if_range)
        if rng and rng[0] >= f.size:
            return self.simple(416, "range not satisfiable\n",
                               [("Content-Range", "bytes */%d" % f.size)])
        if rng:
            a, b = rng
            self.start(206, [("Content-Length", str(b - a + 1)),
                             ("Content-Range", "bytes %d-%d/%d" % (a, b, f.size))], f)
            body = f.data[a:b + 1]
        else:
            self.start(200, [("Content-Length", str(f.size))], f)
            body = f.data
        if not head:
            self.wfile.write(body)

    # --- faults ---------------------------------------------------------
    def fault(self, mode, rel, q, head):
        if mode.isdigit() and len(mode) == 3:
            return self.status_fault(int(mode), q)
        fn = getattr(self, "f_" + mode.replace("-", "_"), None)
        if fn is None:
            return self.simple(400, "unknown fault mode %s\n" % mode)
        if mode.startswith(("redirect", "endless", "slow", "other-project")):
            return fn(rel, q)
        f = self.load(rel)
        if f is None:
            return self.simple(404, "not found\n")
        return fn(f, q)

    def status_fault(self, status, q):
        extra = []
        ra = q.get("ra")
        if ra is not None:
            if ra.startswith("date"):
                ra = http_date(time.time() + int(ra[4:]))
            extra.append(("Retry-After", ra))
        self.simple(status, "fault status %d\n" % status, extra)

    def half(self, f, headers, rst=False, keep=0):
        self.start(200, headers, f)
        self.wfile.write(f.data[:f.size // 2])
        self.wfile.flush()
        if keep:
            self.wait_gone(keep)
        self.close_now(rst)

    def wait_gone(self, secs):
        """Sleep up to secs, returning True early once the client hung up."""
        end = time.time() + secs
        sock = self.connection
        while time.time() < end:
            r, _, _ = select.select([sock], [], [], min(0.1, max(end - time.time(), 0)))
            if r:
                try:
                    if not sock.recv(1, socket.MSG_PEEK):
                        return True
                except (OSError, ValueError):
                    return True
                time.sleep(0.1)
        return False

    def f_truncate(self, f, q):
        self.half(f, [("Content-Length", str(f.size))])

    def f_nocl(self, f, q):
        self.start(200, [("Connection", "close")], f)
        self.wfile.write(f.data)
        self.close_now()

    def f_truncate_nocl(self, f, q):
        self.half(f, [("Connection", "close")])

    def f_reset(self, f, q):
        self.half(f, [("Content-Length", str(f.size))], rst=True)

    def f_stall(self, f, q):
        self.half(f, [("Content-Length", str(f.size))], keep=float(q.get("stall", 30)))

    def f_hang(self, f, q):
        self.record(0)
        self.wait_gone(float(q.get("stall", 30)))
        self.close_now()

    def f_trickle(self, f, q):
        self.start(200, [("Content-Length", str(f.size))], f)
        for i in range(f.size):
            self.wfile.write(f.data[i:i + 1])
            self.wfile.flush()
            if self.wait_gone(float(q.get("every", 0.5))):
                return  # a trickle outliving its client would skew /stats

    def f_flip(self, f, q):
        at = int(q.get("at", f.size // 2))
        body = bytearray(f.data)
        body[at] ^= 0x01
        self.start(200, [("Content-Length", str(f.size))], f)
        self.wfile.write(bytes(body))

    def f_lie_cl_short(self, f, q):
        self.start(200, [("Content-Length", str(max(f.size - 10, 0)))], f)
        self.wfile.write(f.data)
        self.close_now()

    def f_lie_cl_long(self, f, q):
        self.start(200, [("Content-Length", str(f.size + 10))], f)
        self.wfile.write(f.data)
        self.close_now()

    def bad_cl(self, f, values):
        self.start(200, [("Content-Length", v) for v in values] + [("Connection", "close")], f)
        self.wfile.write(f.data)
        self.close_now()

    def f_cl_garbage(self, f, q):
        self.bad_cl(f, ["12abc"])

    def f_cl_negative(self, f, q):
        self.bad_cl(f, ["-5"])

    def f_cl_huge(self, f, q):
        self.bad_cl(f, ["999999999999999"])

    def f_cl_double(self, f, q):
        self.bad_cl(f, [str(f.size), str(f.size + 1)])

    def partial(self, f, a, total):
        self.start(206, [("Content-Length", str(f.size - a)),
                         ("Content-Range", "bytes %d-%d/%d" % (a, f.size - 1, total))], f)
        self.wfile.write(f.data[a:])

    def f_range_wrong(self, f, q):
        rng = self.wanted_range(f)
        if not rng:
            return self.serve_file(f)
        a = rng[0] - 1 if rng[0] > 0 else 1
        self.partial(f, a, f.size)

    def f_range_badtotal(self, f, q):
        rng = self.wanted_range(f)
        if not rng:
            return self.serve_file(f)
        self.partial(f, rng[0], f.size + 1)

    def f_range_ignore(self, f, q):
        self.serve_file(f)

    def f_range_truncate(self, f, q):
        rng = self.wanted_range(f)
        if not rng:
            return self.f_truncate(f, q)
        a, b = rng
        self.start(206, [("Content-Length", str(b - a + 1)),
                         ("Content-Range", "bytes %d-%d/%d" % (a, b, f.size))], f)
        self.wfile.write(f.data[a:a + (b - a + 1) // 2])
        self.wfile.flush()
        self.close_now()

    def f_range_norange(self, f, q):
        self.partial(f, 0, f.size)

    def serve_file(self, f):
        self.start(200, [("Content-Length", str(f.size))], f)
        self.wfile.write(f.data)

    def redirect_to(self, loc):
        self.simple(302, "moved\n", [("Location", loc)])

    def f_redirect(self, rel, q):
        n = int(q.get("n", 1))
        if n <= 1:
            return self.redirect_to("/" + rel)
        self.redirect_to("/fault/redirect/%s?n=%d" % (rel, n - 1))

    def f_redirect_http(self, rel, q):
        self.redirect_to("http://%s/%s" % (self.headers.get("Host"), rel))

    def f_redirect_file(self, rel, q):
        self.redirect_to("file:///etc/passwd")

    def f_redirect_other_host(self, rel, q):
        other = "localhost" if self.host() == "127.0.0.1" else "127.0.0.1"
        scheme = "https" if self.server.tls else "http"
        self.redirect_to("%s://%s:%d/%s" % (scheme, other, self.server.server_port, rel))

    def f_echo_auth(self, f, q):
        self.simple(200, (self.headers.get("Authorization") or "none") + "\n")

    def f_redirect_loop(self, rel, q):
        self.redirect_to("/fault/redirect-loop2/" + rel)

    def f_redirect_project(self, rel, q):
        parts = [x for x in rel.split("/") if x]
        parts[-1] = q.get("p", "other")
        self.redirect_to("/" + "/".join(parts) + "/")

    def f_redirect_loop2(self, rel, q):
        self.redirect_to("/fault/redirect-loop/" + rel)

    def f_gzip(self, f, q):
        body = gzip.compress(f.data)
        self.start(200, [("Content-Length", str(len(body))),
                         ("Content-Encoding", "gzip")], f)
        self.wfile.write(body)

    def f_endless(self, rel, q):
        self.start(200, [("Connection", "close")])
        chunk = b"\0" * 65536
        while True:
            self.wfile.write(chunk)

    def f_endless_chunked(self, rel, q):
        self.start(200, [("Transfer-Encoding", "chunked")])
        chunk = b"10000\r\n" + b"\0" * 65536 + b"\r\n"
        while True:
            self.wfile.write(chunk)

    def f_header_flood(self, f, q):
        self.record(200)
        self.send_response(200)
        for i in range(int(q.get("count", 5000))):
            self.send_header("X-Flood-%d" % i, "y" * 64)
        self.send_header("Content-Length", str(f.size))
        self.end_headers()
        self.wfile.write(f.data)

    def f_header_huge(self, f, q):
        self.record(200)
        self.send_response(200)
        self.send_header("X-Huge", "h" * int(q.get("size", 200000)))
        self.send_header("Content-Length", str(f.size))
        self.end_headers()
        self.wfile.write(f.data)

    def f_not_modified(self, f, q):
        self.start(304, [], f)

    def raw10(self, body):
        """An HTTP/1.0 response without Content-Length: only the close ends it."""
        self.record(200)
        self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n"
                         b"Connection: close\r\n\r\n" + body)
        self.close_now()

    def f_early_close(self, f, q):
        at = f.size * int(q.get("at", 60)) // 100
        end = f.data.find(b"</a>", at)
        self.raw10(f.data[:end + 4] if end >= 0 else f.data[:at])

    def f_http10(self, f, q):
        self.raw10(f.data)

    def f_other_project(self, rel, q):
        parts = [x for x in rel.split("/") if x]
        parts[-1] = q.get("p", "other")
        return self.serve("/" + "/".join(parts) + "/", False)

    def f_etag_hostile(self, f, q):
        if q.get("kind") == "long":
            tag = '"' + "e" * 198 + '"'
        else:
            tag = '"ab\x1b[31m\x01\x7fcd"'
        self.record(200)
        self.send_response(200)
        self.send_header("ETag", tag)
        self.send_header("Content-Length", str(f.size))
        self.end_headers()
        self.wfile.write(f.data)

    def f_no_validators(self, f, q):
        f.etag = f.lastmod = None
        return self.serve_loaded(f, False)

    def f_ifrange_swap(self, f, q):
        if self.headers.get("If-Range") is None:
            return self.serve_loaded(f, False)
        return self.serve_loaded(Blob(forge_metadata(f.data, q), f), False, False)

    def f_ifrange_ignore(self, f, q):
        other = Blob(f.data, f)
        other.lastmod = http_date(f.mtime + 86400)
        return self.serve_loaded(other, False, False)

    def f_range_lie(self, f, q):
        if self.headers.get("Range") is None:
            return self.serve_loaded(f, False)
        lie = Blob(forge_metadata(f.data, q), f)
        lie.etag = f.etag
        return self.serve_loaded(lie, False)

    def f_meta_contradict(self, f, q):
        if not self.path.split("?")[0].endswith(".metadata"):
            return self.serve_file(f)
        lines = f.data.decode().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("Name:"):
                lines[i] = "Name: " + q.get("name", "evil-torch")
            elif line.startswith("Version:"):
                lines[i] = "Version: " + q.get("version", "9.9.9")
        self.serve_file(Blob("\n".join(lines).encode(), f))

    def f_slow(self, rel, q):
        time.sleep(float(q.get("delay", 0.3)))
        return self.serve(rel, False)


class Server(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        pass  # clients hanging up mid-fault are the point of this server

    def process_request(self, request, client_address):
        with LOCK:
            STATE["connections"] += 1
        super().process_request(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--log")
    a = ap.parse_args()
    srv = Server((a.bind, a.port), Handler)
    srv.root = os.path.realpath(a.root)
    srv.logf = open(a.log, "a") if a.log else None
    srv.tls = bool(a.cert)
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)
    sys.stdout.write("%d\n" % srv.server_port)
    sys.stdout.flush()
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
