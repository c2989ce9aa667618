#!/usr/bin/env python3
"""fakes3.py - a lying S3 endpoint for offwheel's tests: the lies a real
store (SeaweedFS) never tells.

Python 3 standard library only.  Binds 127.0.0.1 (port 0 by default) and
prints the port on the first line of stdout.

  fakes3.py --root DIR [--port N]

Path-style requests, signatures never checked: GET /BUCKET/KEY serves
DIR/KEY, GET /BUCKET?list-type=2&prefix=P lists the files under DIR/P in
one page (ListObjectsV2).  The bucket's name says which lie it tells:

  honest      nothing but the truth
  listbig     the listing is a valid page padded to 17 MiB
  liststall   the listing: headers, half a page, then silence (?stall, 45 s)
  endless     every listing page is empty, truncated, with a new token
  sametoken   every listing page is truncated with the token it was asked with
  getstall    GET of an object: headers, half of it, then silence (45 s)
  bigsums     SHA256SUMS is 300 MB (streamed, never stored)
  echo        every request: 403 AccessDenied whose message echoes the
              request's access key id and session token, and the secret
              given in $FAKES3_SECRET (a misconfigured store's debug text)

GET /stats gives {"requests": N} (every request but /stats itself).
"""
import argparse
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

STALL_S = 45
LOCK = threading.Lock()
STATS = {"requests": 0}


def list_keys(root, prefix):
    """(key, size) of every regular file under root whose key starts with prefix."""
    base = os.path.join(root, os.path.dirname(prefix.rstrip("/")) if not prefix.endswith("/")
                        else prefix)
    out = []
    for dirpath, _, files in os.walk(base):
        for f in files:
            full = os.path.join(dirpath, f)
            key = os.path.relpath(full, root)
            if key.startswith(prefix) and os.path.isfile(full) and not os.path.islink(full):
                out.append((key, os.path.getsize(full)))
    return sorted(out)


def page(bucket, prefix, keys, token=None):
    items = "".join("<Contents><Key>%s</Key><Size>%d</Size></Contents>" % (escape(k), s)
                    for k, s in keys)
    more = ("<IsTruncated>true</IsTruncated><NextContinuationToken>%s</NextContinuationToken>"
            % escape(token)) if token else "<IsTruncated>false</IsTruncated>"
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            "<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>1000</MaxKeys>"
            "%s%s</ListBucketResult>" % (escape(bucket), escape(prefix), len(keys), more,
                                         items)).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, ctype="application/xml"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def half_then_silence(self, body):
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:len(body) // 2])
        self.wfile.flush()
        time.sleep(STALL_S)
        self.close_connection = True

    def do_HEAD(self):
        self.do_GET()

    def do_PUT(self):
        self.do_GET()

    def do_DELETE(self):
        self.do_GET()

    def do_POST(self):
        self.do_GET()

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/stats":
            return self.send(200, ('{"requests": %d}' % STATS["requests"]).encode(),
                             "application/json")
        with LOCK:
            STATS["requests"] += 1
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        parts = u.path.lstrip("/").split("/", 1)
        bucket, key = parts[0], urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
        if bucket == "echo":
            return self.echo()
        if not key and "list-type" in q:
            return self.listing(bucket, q)
        path = os.path.join(self.server.root, key)
        if ".." in key.split("/") or not os.path.isfile(path):
            return self.send(404, b"<Error><Code>NoSuchKey</Code><Message>The specified key "
                                  b"does not exist.</Message></Error>")
        if bucket == "bigsums" and key.endswith("/SHA256SUMS"):
            return self.big_body(300 << 20)
        with open(path, "rb") as f:
            body = f.read()
        if bucket == "getstall":
            return self.half_then_silence(body)
        return self.send(200, body, "application/octet-stream")

    def big_body(self, size):
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        line = b"0" * 64 + b"  wheels/x.whl\n"
        chunk = line * ((1 << 20) // len(line) + 1)
        sent = 0
        try:
            while sent < size:
                n = min(len(chunk), size - sent)
                self.wfile.write(chunk[:n])
                sent += n
        except OSError:
            pass
        self.close_connection = True

    def listing(self, bucket, q):
        prefix = q.get("prefix", "")
        token = q.get("continuation-token")
        if bucket == "endless":
            nxt = "page-%d" % (int(token.split("-")[1]) + 1 if token else 1)
            return self.send(200, page(bucket, prefix, [], nxt))
        if bucket == "sametoken":
            return self.send(200, page(bucket, prefix, [], token or "again"))
        body = page(bucket, prefix, list_keys(self.server.root, prefix))
        if bucket == "listbig":
            body = body.replace(b"</ListBucketResult>",
                                b"<!--" + b"x" * (17 << 20) + b"--></ListBucketResult>")
        if bucket == "liststall":
            return self.half_then_silence(body)
        return self.send(200, body)

    def echo(self):
        auth = self.headers.get("Authorization", "")
        m = re.search(r"Credential=([^/,]+)", auth)
        said = "Access denied for key %s (token %s, secret %s)" % (
            m.group(1) if m else "-", self.headers.get("x-amz-security-token", "-"),
            os.environ.get("FAKES3_SECRET", "-"))
        self.send(403, ("<Error><Code>AccessDenied</Code><Message>%s</Message></Error>"
                        % escape(said)).encode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.root = os.path.abspath(a.root)
    print(srv.server_address[1], flush=True)
    sys.stdout.close()
    srv.serve_forever()


if __name__ == "__main__":
    main()
