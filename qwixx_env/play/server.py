"""The play page's server: a Starlette app over the games and replays a `Store` holds.

``qwixx serve`` calls `serve`; tests build the app with `create_app` and drive it with
Starlette's TestClient. The routes (every body and answer is JSON; a refusal is a 4xx
``{"error": message}`` and changes nothing):

====== =============================== ==========================================================
GET    /                               the page (static files under /static, shipped in the package)
GET    /api/info                       bots (the tables each plays, a pretrained bot's game), limits
GET    /api/games                      the games held: id, options, decisions, over
POST   /api/games                      a new game: {variant, lucky, players, bots, start_player, seed}
GET    /api/games/{id}?since=N         the game, with its events from index N on
POST   /api/games/{id}/moves           your decision {seat, action, decision}; the bots answer
GET    /api/games/{id}/record          the game record (JSON, as a download)
GET    /api/games/{id}/coach?bot=NAME  the coach's value of each of your options; what NAME would play
GET    /api/games/{id}/summary         after the game: the coach's review of your decisions
POST   /api/replays                    open a record in the replay viewer: its frames
GET    /api/replays/{id}               a replay's frames again
GET    /api/replays/{id}/coach?step=I  the coach at position I of a replay (and &bot=NAME)
====== =============================== ==========================================================

Bots think in Starlette's thread pool, never on the event loop, so one game's bot never holds
up another game's request. No route takes a file path: records come in as request bodies, bots
by registered name only.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from qwixx_env.core.options import MAX_PLAYERS
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES
from qwixx_env.play.games import Game, PlayError, Store, bot_catalogue, make_bots, parse_new_game
from qwixx_env.play.replays import Replay

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 2**20  # bytes; a 5-player record is far smaller
DEFAULT_MAX_GAMES = 100
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]


async def _body(request: Request) -> Any:
    """The request body as JSON, read up to `MAX_BODY` bytes."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise PlayError(413, f"request body: more than {MAX_BODY} bytes; a game record is far smaller")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except ValueError as err:
        raise PlayError(400, f"request body: not JSON ({err})") from None


def _since(request: Request) -> int:
    text = request.query_params.get("since", "0")
    if not text.isdigit():
        raise PlayError(400, f"since: got {text!r}; expected a number of events (0 or more)")
    return int(text)


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PlayError)
    return JSONResponse({"error": exc.message}, status_code=exc.status)


def create_app(max_games: int = DEFAULT_MAX_GAMES, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app. It holds at most `max_games` games (and as many replays), the oldest dropped
    first; `allowed_hosts`, when given, refuses requests whose Host header names another host
    (`serve` passes the loopback names when it binds to loopback, against DNS rebinding)."""
    games: Store[Game] = Store("game", max_games)
    replays: Store[Replay] = Store("replay", max_games)
    catalogue: list[dict[str, Any]] = []

    async def page(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def info(request: Request) -> JSONResponse:
        if not catalogue:
            catalogue.extend(await run_in_threadpool(bot_catalogue))
        return JSONResponse(
            {
                "bots": catalogue, "variants": list(VARIANT_NAMES), "lucky_rules": list(LUCKY_RULES),
                "max_players": MAX_PLAYERS, "max_games": games.max_items, "games_held": len(games),
            }
        )

    async def list_games(request: Request) -> JSONResponse:
        held = [
            {"id": gid, "options": g.options(), "decisions": g.decisions, "over": g.over}
            for gid, g in games.items()
        ]
        return JSONResponse({"games": held, "max_games": games.max_items})

    async def new_game(request: Request) -> JSONResponse:
        new = parse_new_game(await _body(request))
        seat_bots = await run_in_threadpool(make_bots, new)
        game_id = games.new_id()
        game = await run_in_threadpool(Game, game_id, new, seat_bots)
        dropped = games.add(game_id, game)
        view = await run_in_threadpool(_locked_view, game, 0)
        view["dropped"] = dropped
        if dropped:
            view["notice"] = (
                f"the server holds at most {games.max_items} games: the oldest, {', '.join(dropped)}, was dropped"
            )
        return JSONResponse(view, status_code=201)

    async def show_game(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        return JSONResponse(await run_in_threadpool(_locked_view, game, _since(request)))

    async def move(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        body = await _body(request)
        return JSONResponse(await run_in_threadpool(_move, game, body))

    async def record(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        rec = await run_in_threadpool(_locked_record, game)
        disposition = f'attachment; filename="qwixx-{game.id}.json"'
        return JSONResponse(rec, headers={"Content-Disposition": disposition})

    async def game_coach(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        bot = request.query_params.get("bot") or None
        return JSONResponse(await run_in_threadpool(_locked, game, lambda: game.advice(bot)))

    async def summary(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        return JSONResponse(await run_in_threadpool(_locked, game, game.review))

    async def replay_coach(request: Request) -> JSONResponse:
        item = replays.get(request.path_params["replay_id"])
        text = request.query_params.get("step", "")
        if not text.isdigit():
            raise PlayError(400, f"step: got {text!r}; expected a position number (0 or more)")
        bot = request.query_params.get("bot") or None
        return JSONResponse(await run_in_threadpool(item.advice, int(text), bot))

    async def open_replay(request: Request) -> JSONResponse:
        body = await _body(request)
        replay_id = replays.new_id()
        item = await run_in_threadpool(Replay, replay_id, body)
        replays.add(replay_id, item)
        return JSONResponse(item.view(), status_code=201)

    async def show_replay(request: Request) -> JSONResponse:
        return JSONResponse(replays.get(request.path_params["replay_id"]).view())

    routes = [
        Route("/", page),
        Route("/api/info", info),
        Route("/api/games", list_games, methods=["GET"]),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", show_game),
        Route("/api/games/{game_id}/moves", move, methods=["POST"]),
        Route("/api/games/{game_id}/record", record),
        Route("/api/games/{game_id}/coach", game_coach),
        Route("/api/games/{game_id}/summary", summary),
        Route("/api/replays", open_replay, methods=["POST"]),
        Route("/api/replays/{replay_id}", show_replay),
        Route("/api/replays/{replay_id}/coach", replay_coach),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)] if allowed_hosts else []
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={PlayError: _refused})
    app.state.games = games
    app.state.replays = replays
    return app


def _locked(game: Game, work: Callable[[], Any]) -> Any:
    with game.lock:
        return work()


def _locked_view(game: Game, since: int) -> dict[str, Any]:
    with game.lock:
        return game.view(since)


def _locked_record(game: Game) -> dict[str, Any]:
    with game.lock:
        return game.record()


def _move(game: Game, body: Any) -> dict[str, Any]:
    with game.lock:
        first = game.move(body)
        return game.view(first)


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    host: str = "127.0.0.1", port: int = 8000, open_page: bool = False, max_games: int = DEFAULT_MAX_GAMES
) -> None:
    """Run the server until Ctrl-C, printing the page's address (and opening it if asked)."""
    app = create_app(max_games, allowed_hosts=LOCAL_HOSTS if is_loopback(host) else None)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    print(f"qwixx serve: the page is at {url}  (holds at most {max_games} games; Ctrl-C stops)", flush=True)
    if open_page:
        threading.Timer(1.0, webbrowser.open, [url]).start()
    uvicorn.run(app, host=host, port=port, log_level="warning")
