#!/usr/bin/env python3
"""A misbehaving HTTP remote cache on 127.0.0.1 for gpujit's tests: every GET answers with the
fault named on the command line; PUT and HEAD are accepted and dropped.
usage: fault_server.py PORTFILE MODE   (MODE: garbage, truncated, oversized, error500, slow)"""
import http.server
import os
import socketserver
import sys
import time

MODE = sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if MODE == "error500":
            self.send_response(500)
            self.end_headers()
            return
        if MODE == "slow":
            time.sleep(5)
        body = os.urandom(4096)
        if MODE == "truncated":  # a zstd frame that stops short
            body = b"\x28\xb5\x2f\xfd" + os.urandom(64)
        if MODE == "oversized":
            body = b"x" * (4 << 20)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except BrokenPipeError:
            pass

    def do_PUT(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        self.send_response(201)
        self.end_headers()

    def do_HEAD(self):
        self.send_response(404)
        self.end_headers()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Handler)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
