"""With --ssl-certfile/--ssl-keyfile the server speaks only HTTPS (uvicorn in a thread of the test,
with a self-signed certificate made by the openssl command)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
import time

import httpx
import pytest
import uvicorn
from servers import free_port

from paddlectl.serving.app import Server, build_app
from paddlectl.serving.server import uvicorn_config
from paddlectl.serving.settings import load_settings


@pytest.fixture
def certificate(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed; it makes the test's self-signed certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_serves_https_and_refuses_plain_http(lenet, certificate):
    cert, key = certificate
    settings = load_settings([f"digits={lenet}"])
    port = free_port()
    server = uvicorn.Server(uvicorn_config(build_app(Server(settings)), settings, "127.0.0.1", port, cert, key))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url, trust = f"https://127.0.0.1:{port}", ssl.create_default_context(cafile=str(cert))
        for _ in range(600):
            try:
                if httpx.get(f"{url}/v2/health/ready", verify=trust, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        assert httpx.get(f"{url}/v2/models/digits", verify=trust).json()["name"] == "digits"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/v2/health/live", timeout=5)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
