"""A small driver for the system Chromium over the DevTools protocol, for the report's browser tests.

It starts Debian's `chromium` headless with a throw-away profile, attaches to its first page over
a websocket (`websocket-client`), and offers the handful of commands the tests need: load a page,
evaluate JavaScript, type text, take a screenshot. Nothing is downloaded; where the browser or the
websocket package is missing, `start()` raises `Unavailable` and the tests skip.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


class Unavailable(Exception):
    """No usable headless browser here."""


class Browser:
    def __init__(self, proc: subprocess.Popen, profile: str, ws) -> None:
        self.proc, self.profile, self.ws, self._id = proc, profile, ws, 0

    def call(self, method: str, **params) -> dict:
        """Send one DevTools command and wait for its answer (events met on the way are dropped)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def load(self, url: str, timeout: float = 20.0) -> None:
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while self.eval("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not finish loading")
            time.sleep(0.05)

    def eval(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression!r}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 10.0):
        """The value of `expression` once it is truthy (events such as `toggle` arrive as tasks)."""
        deadline = time.monotonic() + timeout
        while not (value := self.eval(expression)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{expression!r} stayed {value!r}")
            time.sleep(0.05)
        return value

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element and type as a user would (the page sees real input events)."""
        self.eval(f"document.querySelector({json.dumps(selector)}).focus()")
        for ch in text:
            self.call("Input.dispatchKeyEvent", type="keyDown", text=ch, key=ch, unmodifiedText=ch)
            self.call("Input.dispatchKeyEvent", type="keyUp", key=ch)
        self.settle()

    def settle(self, ms: int = 300) -> None:
        """Let the page's timers run (the search filters on a zero or short timeout after typing)."""
        self.eval(f"new Promise(done => setTimeout(done, {int(ms)}))")

    def screenshot(self, path: Path, width: int = 1280, height: int = 900, scale: float = 1.0) -> bytes:
        """A PNG of the viewport at `width` x `height` CSS pixels (a phone below 600), scaled by `scale`."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=width < 600)
        x, y = self.eval("[window.scrollX, window.scrollY]")  # the clip is in page coordinates
        clip = {"x": x, "y": y, "width": width, "height": height, "scale": scale}
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png", clip=clip)["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
            shutil.rmtree(self.profile, ignore_errors=True)


def find_chromium() -> str | None:
    for c in (os.environ.get("MUSIFY_TEST_CHROMIUM"), *CANDIDATES):
        if c and os.access(c, os.X_OK):
            return c
    return shutil.which("chromium")


def start(timeout: float = 30.0) -> Browser:
    try:
        import websocket  # websocket-client
    except ImportError as exc:
        raise Unavailable("websocket-client is not installed") from exc
    exe = find_chromium()
    if exe is None:
        raise Unavailable("no chromium here (apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="musify-chromium-")
    proc = subprocess.Popen(
        [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
         "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = Path(profile) / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    try:
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise Unavailable(f"{exe} did not start (exit {proc.poll()})")
            time.sleep(0.05)
        port = int(port_file.read_text().split("\n")[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as fh:
            pages = [t for t in json.load(fh) if t.get("type") == "page"]
        ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
    except BaseException:
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
        raise
    browser = Browser(proc, profile, ws)
    browser.call("Page.enable")
    return browser
