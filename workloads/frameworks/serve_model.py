#!/usr/bin/python3
"""serve_model.py - a PyTorch model behind a small HTTP server: infer.py's CNN
(fixed seed) answers `GET /predict?batch=N&seed=S` with the batch's
predictions, computed from inputs drawn from seed S, so the same request
always gets the same answer.  One Python thread per connection (HTTP/1.1
keep-alive), one torch thread: requests are served one at a time under the
GIL, and every one allocates activations of its own batch size.

    serve_model.py [--port 0] [--host 127.0.0.1] [--seed 0] [--max-batch 256]

Prints `ready: http://HOST:PORT` (port 0: the one the kernel chose) once it
listens, then serves until SIGTERM or SIGINT; then prints `served: N`.
Drive it with client.py (prints requests/s, p50, p99 and a checksum) or with
wrk -s wrk_predict.lua.  `GET /health` answers `ok`."""
import argparse
import http.server
import json
import signal
import sys
import threading
import urllib.parse

import fwcommon
import torch

import infer


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: wrk and client.py reuse connections
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

    def log_message(self, fmt, *args):  # no line per request
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/health":
            return self.reply(200, "ok\n", "text/plain")
        if url.path != "/predict":
            return self.reply(404, '{"error": "not found"}\n')
        q = urllib.parse.parse_qs(url.query)
        try:
            batch = int(q.get("batch", ["1"])[0])
            seed = int(q.get("seed", ["0"])[0])
            if not 1 <= batch <= self.server.max_batch:
                raise ValueError(f"batch {batch} is not in 1..{self.server.max_batch}")
        except ValueError as e:
            return self.reply(400, json.dumps({"error": str(e)}) + "\n")
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            x = torch.rand(batch, 1, 28, 28, generator=gen)
            logits = self.server.net(x)
        ck = fwcommon.Checksum()
        ck.add(logits.sum().item())
        pred = logits.argmax(1).tolist()
        with self.server.count_lock:
            self.server.served += 1
        self.reply(200, json.dumps({"batch": batch, "pred": pred, "checksum": ck.hex()}) + "\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that hangs up mid-answer (wrk does at its end) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0, help="0: any free port (printed on the ready line)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-batch", type=fwcommon.positive, default=256)
    a = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    srv = Server((a.host, a.port), Handler)
    srv.net = infer.model().eval()
    srv.max_batch = a.max_batch
    srv.served = 0
    srv.count_lock = threading.Lock()

    def stop(signum, frame):
        threading.Thread(target=srv.shutdown).start()  # shutdown() waits for serve_forever
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = srv.server_address[:2]
    print(f"ready: http://{host}:{port}", flush=True)
    srv.serve_forever()
    srv.server_close()
    print(f"served: {srv.served}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
