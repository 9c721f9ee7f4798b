"""The play server's request guard: what every request must be before a route sees it.

`Guard` is ASGI middleware (``Middleware(Guard, ...)`` in `server.create_app`); it answers a
refused request itself with a JSON ``{"error": message}`` (an HTML page for a browser's page
request without the token) and changes nothing. In order:

1. **Host**: with `allowed_hosts` given, the Host header must name one of them (400), so a
   web page whose name resolves to this machine (DNS rebinding) is refused. `hosts_for` gives
   the names of a bind address: the loopback names and the bound address (for a wildcard
   bind, this machine's names and addresses) and the names given with ``--allow-host``.
2. **Token**: with a `token`, every request must carry it (401): as ``?token=`` (a page's GET
   is then redirected to the same URL without it, with the token in an HttpOnly,
   SameSite=Strict cookie, so that the page's own requests carry it), as that cookie, or as an
   ``Authorization: Bearer`` header. Tokens are compared in constant time.
3. **State-changing requests** (POST, PUT, PATCH, DELETE): a declared body over `MAX_BODY`
   is 413; an ``Origin`` header must be this server's own (403; a request without one, from
   a script, passes); the body must be declared ``Content-Type: application/json`` (415). A
   web page elsewhere can send a ``text/plain`` POST without asking; it cannot send JSON or
   hide its Origin. A WebSocket handshake passes the same Host, token and Origin checks (a
   refused one is closed before it opens).
4. **Failures**: an unexpected exception in a route is logged with its traceback and
   answered with a 500 ``{"error": "internal error ..."}`` that shows neither.

`read_json` is the routes' body reader: at most `MAX_BODY` bytes, nested at most `MAX_DEPTH`
deep (checked by a scan before parsing, so a deep body never reaches the recursive parser);
anything else is a 4xx `PlayError`. `public_message` takes server paths out of a refusal's
message; `refused` is the app's handler for `PlayError`.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
import secrets
import socket
import sys
from collections.abc import Iterable
from html import escape
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qwixx_env.core.compile import cache_root
from qwixx_env.play.games import PlayError
from qwixx_env.play.prepare import NotReady

logger = logging.getLogger("qwixx_env.play")

MAX_BODY = 2**20  # bytes; a 5-player record is far smaller
MAX_DEPTH = 32  # JSON nesting; a game record nests 5 deep
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]{16,}")  # URL-safe as it stands, so the printed URL works
TOO_LONG = f"request body: more than {MAX_BODY} bytes; a game record is far smaller"
INTERNAL_ERROR = "internal error (the server logged it); the request may be tried again"

_PACKAGE = Path(__file__).resolve().parents[1]
# An absolute path of two or more parts left after the known folders are replaced.
_PATH = re.compile(r"(?<![\w.:/~<>-])(?:/[\w.+@-]+){2,}/?")


def public_message(message: str) -> str:
    """`message` with this server's paths taken out: the package, the cache, Python's and the
    home folder become ``<qwixx_env>``, ``<cache>``, ``<python>``, ``~``; any other absolute
    path becomes ``<path>``. What a refusal names stays; where the server keeps it does not."""
    known = [(_PACKAGE, "<qwixx_env>"), (cache_root(), "<cache>"), (Path(sys.prefix), "<python>"),
             (Path(sys.base_prefix), "<python>"), (Path.home(), "~")]
    for folder, name in sorted(known, key=lambda pair: -len(str(pair[0]))):  # the longest first
        if len(folder.parts) > 1:  # never "/" itself
            message = message.replace(str(folder), name)
    return _PATH.sub("<path>", message)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, a method the path does not take) as the API's
    other errors: ``{"error": message}`` with the status, and the Allow header of a 405. The
    page's own paths (not under /api/) keep Starlette's plain text."""
    if not isinstance(exc, HTTPException):  # Starlette passes the handler's exception class only
        raise TypeError(f"http_error: got {type(exc).__name__}; expected an HTTPException")
    headers = dict(exc.headers or {})
    if not request.url.path.startswith("/api/"):
        return PlainTextResponse(str(exc.detail), status_code=exc.status_code, headers=headers)
    what = f"{request.method} {request.url.path}"
    if exc.status_code == 404:
        message = f"{what}: no such API path (the API is /api/info, /api/games and /api/replays, and below them)"
    elif exc.status_code == 405:
        allow = {k.lower(): v for k, v in headers.items()}.get("allow", "?")
        allow = ", ".join(sorted(m.strip() for m in allow.split(",")))  # Starlette's order is a set's
        message = f"{what}: the path does not take {request.method}; it takes {allow}"
    else:
        message = f"{what}: {exc.detail}"
    return JSONResponse({"error": message}, status_code=exc.status_code, headers=headers)


async def refused(request: Request, exc: Exception) -> JSONResponse:
    """The app's answer to a `PlayError`: its status and ``{"error": message}`` without server
    paths; a `NotReady` adds what is being prepared (``"ready"``) and a Retry-After header."""
    if not isinstance(exc, PlayError):  # Starlette passes the handler's exception class only
        raise TypeError(f"refused: got {type(exc).__name__}; expected a PlayError")
    body: dict[str, Any] = {"error": public_message(exc.message)}
    headers = {}
    if isinstance(exc, NotReady):
        body["ready"] = exc.ready
        headers["Retry-After"] = str(exc.retry_after)
    return JSONResponse(body, status_code=exc.status, headers=headers)


def json_depth_problem(data: bytes, limit: int = MAX_DEPTH) -> str | None:
    """Why `data` nests deeper than `limit` arrays and objects (None when it does not), found
    by one scan over the bytes that skips strings: no recursion, so no depth breaks it."""
    depth, in_string, escaped = 0, False, False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return f"nested deeper than {limit} levels of arrays and objects"
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return None


def parse_json(data: bytes) -> Any:
    """A request body as JSON: at most `MAX_BODY` bytes and `MAX_DEPTH` levels deep, or a
    `PlayError` (413, 400) naming the limit or the parse failure."""
    if len(data) > MAX_BODY:
        raise PlayError(413, TOO_LONG)
    problem = json_depth_problem(data)
    if problem:
        raise PlayError(400, f"request body: {problem}; a game record nests 5 deep")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise PlayError(400, f"request body: not JSON ({err})") from None


async def read_json(request: Request) -> Any:
    """The request body as JSON (`parse_json`), read up to `MAX_BODY` bytes: a longer body is
    refused as soon as it is longer, before the rest is read."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise PlayError(413, TOO_LONG)
        chunks.append(chunk)
    return parse_json(b"".join(chunks))


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Whether `host` binds every address of the machine (0.0.0.0, ::, or empty)."""
    try:
        return host == "" or ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def machine_addresses() -> list[str]:
    """This machine's name and the addresses it is reached at on the network, as far as it
    knows them without asking anyone (the hosts file, the route a datagram would take)."""
    name = socket.gethostname()
    found = [name, f"{name}.local"]
    try:
        found += [str(info[4][0]) for info in socket.getaddrinfo(name, None)]
    except OSError:  # a machine whose own name does not resolve
        pass
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a datagram socket sends nothing on connect
            found.append(probe.getsockname()[0])
        except OSError:  # no network at all
            pass
    return list(dict.fromkeys(found))


def hosts_for(bind: str, extra: Iterable[str] = ()) -> list[str]:
    """The Host names a server bound to `bind` answers to: the loopback names; the bound
    address (another loopback one too, such as 127.0.0.2: the server prints it), or for a
    wildcard bind this machine's names and addresses; and every name in `extra`
    (``--allow-host``)."""
    names = [*LOCAL_HOSTS, *(machine_addresses() if is_wildcard(bind) else [bind]), *extra]
    bracketed = [f"[{n}]" for n in names if ":" in n and not n.startswith("[")]  # IPv6 as a Host header writes it
    return list(dict.fromkeys(n.lower() for n in [*names, *bracketed]))


def check_token(token: str) -> str:
    """A token given with ``--token``: at least 16 URL-safe characters, or a `ValueError`."""
    if not isinstance(token, str) or not TOKEN_CHARS.fullmatch(token):
        shown = f"{len(token)} characters" if isinstance(token, str) else type(token).__name__
        raise ValueError(f"token: got {shown}; expected at least 16 of A-Z a-z 0-9 . _ ~ - "
                         "(or leave it out for a random one)")
    return token


def new_token() -> str:
    """A random token for a server bound beyond loopback (as Jupyter draws one)."""
    return secrets.token_urlsafe(32)


def _host_name(host_header: str) -> str:
    """The name of a Host header without its port: ``[::1]:8000`` -> ``[::1]``."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def _origin_matches(origin: str, host_header: str, scheme: str) -> bool:
    """Whether an Origin header names the server at `host_header` (the default port spelled or not)."""
    parts = urlsplit(origin)
    default = {"http": 80, "https": 443}
    here = urlsplit(f"{scheme}://{host_header}")
    try:
        return (
            parts.scheme == scheme
            and (parts.hostname or "") == (here.hostname or "")
            and (parts.port or default.get(parts.scheme)) == (here.port or default.get(scheme))
            and parts.path in ("", "/")
        )
    except ValueError:  # a port that is not a number
        return False


class Guard:
    """ASGI middleware that checks every HTTP request before the app sees it (the module
    docstring says what, in which order). `allowed_hosts` (None: any Host) and `token` (None:
    none needed; `check_token` checks one) are fixed when the app is made."""

    def __init__(self, app: ASGIApp, allowed_hosts: list[str] | None = None, token: str | None = None):
        self.app = app
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        answer = self.refusal(scope)
        if answer is not None and scope["type"] == "websocket":
            await receive()  # the handshake, refused: the server answers it with a 403
            await send({"type": "websocket.close", "code": 1008})
            return
        if answer is not None:
            await answer(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            logger.exception("play server: %s %s failed", scope["method"], scope["path"])
            if not started:  # else the client sees a cut-off answer, and the log says why
                await JSONResponse({"error": INTERNAL_ERROR}, status_code=500)(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        """The answer that refuses this request, or None when it may go on to the app."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.allowed_hosts is not None and _host_name(host).lower() not in self.allowed_hosts:
            return JSONResponse(
                {"error": f"host: got {host!r}; this server answers to {sorted(self.allowed_hosts)} "
                          "(qwixx serve --allow-host NAME adds a name)"},
                status_code=400,
            )
        if self.token is not None:
            answer = self._token_refusal(scope, headers)
            if answer is not None:
                return answer
        method = scope.get("method", "WEBSOCKET")  # a WebSocket handshake has none; a page elsewhere can open one
        if method in STATE_CHANGING or scope["type"] == "websocket":
            return self._write_refusal(scope, headers, host, method)
        return None

    def _token_refusal(self, scope: Scope, headers: Headers) -> Response | None:
        assert self.token is not None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == "token"]
        page = scope.get("method") == "GET" and not scope["path"].startswith("/api/")
        if given and self._matches(given[0]):
            if not page:  # a script's call: nothing to take out of an address bar
                return None
            rest = urlencode([(k, v) for k, v in query if k != "token"])
            answer = RedirectResponse(scope["path"] + (f"?{rest}" if rest else ""), status_code=303)
            answer.set_cookie(self.cookie_name(scope), self.token, httponly=True, samesite="strict", path="/")
            return answer
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 (http.cookies raises CookieError and others on junk)
            cookie = SimpleCookie()
        name = self.cookie_name(scope)
        if name in cookie and self._matches(cookie[name].value):
            return None
        scheme, _, bearer = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self._matches(bearer.strip()):
            return None
        why = "a wrong token" if given or bearer else "no token"
        if not page:
            return JSONResponse(
                {"error": f"token: {why}; this server needs the token `qwixx serve` printed, as ?token=, "
                          "its cookie or an 'Authorization: Bearer' header"},
                status_code=401, headers={"WWW-Authenticate": "Bearer"},
            )
        return HTMLResponse(
            "<!doctype html><title>Qwixx: the token is missing</title><h1>This table needs its link</h1>"
            f"<p>The server was started with a token ({escape(why)} came with this request): open the "
            "address <code>qwixx serve</code> printed, the one ending in <code>?token=...</code>.</p>",
            status_code=401,
        )

    def _matches(self, given: str) -> bool:
        assert self.token is not None
        return secrets.compare_digest(given.encode(), self.token.encode())

    @staticmethod
    def cookie_name(scope: Scope) -> str:
        """The token cookie's name: one per port, as browsers share cookies across ports."""
        server = scope.get("server") or ("", 0)
        return f"qwixx_token_{server[1] or 0}"

    def _write_refusal(self, scope: Scope, headers: Headers, host: str, method: str) -> Response | None:
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            return JSONResponse({"error": TOO_LONG}, status_code=413)
        origin = headers.get("origin")
        if origin is not None and not _origin_matches(origin, host, scope.get("scheme", "http")):
            return JSONResponse(
                {"error": f"origin: got {origin!r}; a {method} must come from this server's own page "
                          f"(http://{host}) or from a script without an Origin"},
                status_code=403,
            )
        kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/json" and scope["type"] == "http":
            return JSONResponse(
                {"error": f"content-type: got {kind or 'none'!r}; a {method} sends application/json"},
                status_code=415,
            )
        return None
