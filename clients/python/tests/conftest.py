"""Fixtures: a real `corral serve`, built from this repository, on a free
loopback port with a temporary data directory, and clients of it.

CORRAL_BIN names a corral binary already built, its companions (corral-serve among them) beside
it; otherwise the session builds one, with its companions beside it (Go must be on PATH). Every
process the service starts carries a tag in its environment, and the
session checks at its end that none is left.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import corral_client  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
TAG_ENV = "CORRAL_TEST_TAG"
#: The operations the tests sent, by operationId (see test_operations.py).
SEEN_OPS: set[str] = set()


def observe(call: corral_client._core.Call) -> None:
    SEEN_OPS.add(call.op)


@pytest.fixture(scope="session")
def corral_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    if b := os.environ.get("CORRAL_BIN"):
        return b
    if not shutil.which("go"):
        pytest.fail("no corral binary: set CORRAL_BIN or put Go on PATH to build ./cmd/corral and its companions")
    bin_dir = tmp_path_factory.mktemp("bin")
    # corral serve runs corral-serve (corral mcp corral-mcp, corral submit corral-client), found beside corral.
    subprocess.run(["go", "build", "-o", str(bin_dir) + "/", "./cmd/corral", "./cmd/corral-client", "./cmd/corral-mcp", "./cmd/corral-serve", "./cmd/corral-shim"], cwd=REPO, check=True)
    return str(bin_dir / "corral")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """A running `corral serve` that can be stopped and started again on
    the same port and data directory."""

    def __init__(self, bin: str, data: Path, tag: str, args: list[str]):
        self.bin, self.data, self.tag, self.args = bin, data, tag, args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: Optional[subprocess.Popen[str]] = None
        self.log: list[str] = []
        self.token = ""

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CORRAL_")}
        env[TAG_ENV] = self.tag
        cmd = [self.bin, "serve", "--addr", f"127.0.0.1:{self.port}", "--data", str(self.data),
               "--pass-env", TAG_ENV, *self.args]
        self.proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        listening = threading.Event()

        def read(p: subprocess.Popen[str]) -> None:
            assert p.stderr
            for line in p.stderr:
                self.log.append(line)
                if "listening on" in line:
                    listening.set()
        threading.Thread(target=read, args=(self.proc,), daemon=True).start()
        deadline = time.monotonic() + 60
        while not listening.wait(0.05):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("corral serve did not start:\n" + "".join(self.log))
        self.token = (self.data / "token").read_text().strip()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stops the service (by its pid) and waits for it."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("corral serve did not stop within 60s of the signal")
        self.proc = None

    def client(self, **kw: object) -> corral_client.Client:
        return corral_client.Client(self.url, self.token, observer=observe, **kw)  # type: ignore[arg-type]

    def async_client(self, **kw: object) -> corral_client.AsyncClient:
        return corral_client.AsyncClient(self.url, self.token, observer=observe, **kw)  # type: ignore[arg-type]


def tagged(tag: str) -> list[int]:
    """Pids of processes whose environment carries the tag."""
    out = []
    needle = f"{TAG_ENV}={tag}".encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if needle in (d / "environ").read_bytes().split(b"\0"):
                out.append(int(d.name))
        except OSError:
            pass
    return out


def start_service(bin: str, args: Optional[list[str]] = None) -> Service:
    data = Path(tempfile.mkdtemp(prefix="corral-py-"))
    svc = Service(bin, data / "data", "py-" + uuid.uuid4().hex[:12], args or [])
    svc.start()
    return svc


def finish_service(svc: Service) -> None:
    svc.stop()
    deadline = time.monotonic() + 30
    while (left := tagged(svc.tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    shutil.rmtree(svc.data.parent, ignore_errors=True)
    assert not left, f"processes of the service's runs outlived it: {left}"


@pytest.fixture(scope="session")
def service(corral_bin: str) -> Iterator[Service]:
    """One service for the session's tests (they name their own agents)."""
    svc = start_service(corral_bin)
    yield svc
    finish_service(svc)


@pytest.fixture
def own_service(corral_bin: str) -> Iterator[Service]:
    """A service of the test's own, which it may stop and start again."""
    svc = start_service(corral_bin, ["--shutdown-timeout", "2s"])
    yield svc
    finish_service(svc)


@pytest.fixture
def client(service: Service) -> corral_client.Client:
    return service.client()


_names = iter(range(1, 1 << 30))


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    """A fresh agent name for the test."""
    base = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40]
    return f"{base}-{next(_names)}"


#: Claude Code's stream-json of a turn that spends 2,142 tokens and
#: reports no cost (corral prices its usage: cost_estimated).
_TURN = [
    {"type": "system", "subtype": "init", "session_id": "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11", "model": "claude-sonnet-4-5",
     "tools": ["Bash"], "mcp_servers": [], "permissionMode": "bypassPermissions", "cwd": "/tmp", "uuid": "u0"},
    {"type": "assistant", "session_id": "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11", "parent_tool_use_id": None,
     "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                 "content": [{"type": "text", "text": "Spent."}], "stop_reason": "end_turn",
                 "usage": {"input_tokens": 12, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000,
                           "output_tokens": 30}}},
    {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": "Spent.",
     "session_id": "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11", "duration_ms": 10, "uuid": "ur",
     "usage": {"input_tokens": 12, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 30}},
]
#: The tokens of _TURN, as corral counts them.
TURN_TOKENS = 2142


def fake_claude(directory: Path) -> list[str]:
    """The command template of a headless agent whose every run prints
    _TURN (a shell script of printf, the shell's builtin: it needs no
    PATH) and exits."""
    script = directory / "fake-claude"
    lines = " ".join("'" + json.dumps(line, separators=(",", ":")) + "'" for line in _TURN)
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' {lines}\n")
    script.chmod(0o755)
    return [str(script), "--", "{{prompt}}"]


class Receiver:
    """A webhook receiver on loopback: it answers every POST 204 and keeps
    each one's path, headers (lower-case names) and body."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], bytes]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer._lock:
                    outer.posts.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.start()

    def received(self) -> list[tuple[str, dict[str, str], bytes]]:
        with self._lock:
            return list(self.posts)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def signed_by(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """Whether a delivery's Corral-Signature is the HMAC-SHA256 of its
    timestamp and body under secret (docs/webhooks.md)."""
    parts = dict(p.split("=", 1) for p in headers.get("corral-signature", "").split(",") if "=" in p)
    mac = hmac.new(secret.encode(), parts.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, parts.get("v1", ""))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()
