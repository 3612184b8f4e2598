"""A slow OpenAI-compatible endpoint, so the browser can watch tokens stream and press Stop mid-answer.

The RAG API reaches it through `OPENAI_BASE_URL` and uses it only for requests
that choose `backend: openai` (the web app's Settings → Model backend); the
default backend stays extractive. It streams one word every `delay_s`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = ("The bluejay is described on page two of the Atlas Field Guide, where readers find it "
         "in the chapter on songbirds, with several sentences of body text about it [1]. ").split(" ") * 3


class _Handler(BaseHTTPRequestHandler):
    delay_s = 0.3

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, obj: object) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        self._json({"object": "list", "data": [{"id": "slow-model", "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            for word in WORDS:
                chunk = {"choices": [{"index": 0, "delta": {"content": word + " "}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(self.delay_s)
            self.wfile.write(b"data: [DONE]\n\n")
        except OSError:
            pass  # the RAG API hung up (the user pressed Stop)


class SlowLLM:
    def __init__(self, port: int, delay_s: float = 0.3) -> None:
        handler = type("Handler", (_Handler,), {"delay_s": delay_s})
        self.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
