"""The play page's server: a Starlette app over the games and replays a `Store` holds.

``qwixx serve`` calls `serve`; tests build the app with `create_app` and drive it with
Starlette's TestClient. The routes (every body and answer is JSON; a refusal is a 4xx
``{"error": message}`` and changes nothing):

====== =============================== ==========================================================
GET    /                               the page (static files under /static, shipped in the package)
GET    /api/info                       bots (and the one game a pretrained bot plays), limits, "ready"
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
by registered name only. Every request passes `guard.Guard` first (Host, token, Origin and
Content-Type, bounded JSON, a JSON 500 for the unexpected); what games need is prepared in
the background (`prepare`), and a request for what is not ready yet is a 503 "getting ready".
"""

from __future__ import annotations

import contextlib
import threading
import webbrowser
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from qwixx_env.core.options import MAX_PLAYERS
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES
from qwixx_env.play.games import Game, PlayError, Store, bot_catalogue, make_bots, parse_new_game
from qwixx_env.play.guard import (
    LOCAL_HOSTS,
    MAX_BODY,
    Guard,
    check_token,
    hosts_for,
    is_loopback,
    is_wildcard,
    machine_addresses,
    new_token,
    read_json,
    refused,
)
from qwixx_env.play.prepare import Preparation, default_tasks, needs_of_coach, needs_of_game
from qwixx_env.play.replays import Replay

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_MAX_GAMES = 100
# The server's public names; the request limits are the guard's, named here as before.
__all__ = ["DEFAULT_MAX_GAMES", "LOCAL_HOSTS", "MAX_BODY", "STATIC", "create_app", "page_urls", "serve"]


def _since(request: Request) -> int:
    text = request.query_params.get("since", "0")
    if not text.isdigit():
        raise PlayError(400, f"since: got {text!r}; expected a number of events (0 or more)")
    return int(text)


def create_app(
    max_games: int = DEFAULT_MAX_GAMES,
    allowed_hosts: list[str] | None = None,
    *,
    token: str | None = None,
    prepare: Preparation | None = None,
) -> Starlette:
    """The app. It holds at most `max_games` games (and as many replays), the oldest dropped
    first; `allowed_hosts`, when given, refuses requests whose Host header names another host
    (`serve` always passes `guard.hosts_for` its bind address, against DNS rebinding); `token`,
    when given, is needed by every request (`guard.Guard`). `prepare` is what the server
    prepares in the background from its start (`serve` passes `prepare.default_tasks`);
    None prepares nothing, so what a request needs is computed in it on first use."""
    games: Store[Game] = Store("game", max_games)
    replays: Store[Replay] = Store("replay", max_games)
    catalogue: list[dict[str, Any]] = []
    preparation = Preparation([]) if prepare is None else prepare
    token = None if token is None else check_token(token)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        preparation.start()
        yield

    async def page(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def info(request: Request) -> JSONResponse:
        if not catalogue:
            catalogue.extend(await run_in_threadpool(bot_catalogue))
        return JSONResponse(
            {
                "bots": catalogue, "variants": list(VARIANT_NAMES), "lucky_rules": list(LUCKY_RULES),
                "max_players": MAX_PLAYERS, "max_games": games.max_items, "games_held": len(games),
                "max_body": MAX_BODY, "ready": preparation.status(),
            }
        )

    async def list_games(request: Request) -> JSONResponse:
        held = [
            {"id": gid, "options": g.options(), "decisions": g.decisions, "over": g.over}
            for gid, g in games.items()
        ]
        return JSONResponse({"games": held, "max_games": games.max_items})

    async def new_game(request: Request) -> JSONResponse:
        new = parse_new_game(await read_json(request))
        preparation.require(_who(new.bots), needs_of_game(new))
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
        body = await read_json(request)
        return JSONResponse(await run_in_threadpool(_move, game, body))

    async def record(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        rec = await run_in_threadpool(_locked_record, game)
        disposition = f'attachment; filename="qwixx-{game.id}.json"'
        return JSONResponse(rec, headers={"Content-Disposition": disposition})

    async def game_coach(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        bot = request.query_params.get("bot") or None
        preparation.require(bot or "the coach", needs_of_coach(game.new.table, bot))
        return JSONResponse(await run_in_threadpool(_locked, game, lambda: game.advice(bot)))

    async def summary(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        preparation.require("the coach's review", needs_of_coach(game.new.table, None))
        return JSONResponse(await run_in_threadpool(_locked, game, game.review))

    async def replay_coach(request: Request) -> JSONResponse:
        item = replays.get(request.path_params["replay_id"])
        text = request.query_params.get("step", "")
        if not text.isdigit():
            raise PlayError(400, f"step: got {text!r}; expected a position number (0 or more)")
        bot = request.query_params.get("bot") or None
        preparation.require(bot or "the coach", needs_of_coach(item.table, bot))
        return JSONResponse(await run_in_threadpool(item.advice, int(text), bot))

    async def open_replay(request: Request) -> JSONResponse:
        body = await read_json(request)
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
    middleware = [Middleware(Guard, allowed_hosts=allowed_hosts, token=token)]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={PlayError: refused}, lifespan=lifespan)
    app.state.games = games
    app.state.replays = replays
    app.state.preparation = preparation
    return app


def _who(seat_bots: Sequence[str]) -> str:
    """What a new game asks for, for a "getting ready" message: its bots, or the game itself."""
    return ", ".join(dict.fromkeys(seat_bots)) or "the game"


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


class _Server(uvicorn.Server):
    """uvicorn's server, calling `listening` once its socket is bound: the address is printed
    (and the page opened) only when a browser can reach it, never before a failed bind."""

    def __init__(self, config: uvicorn.Config, listening: Callable[[], None]):
        super().__init__(config)
        self.listening = listening

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.listening()


def page_urls(host: str, port: int, token: str | None) -> list[str]:
    """The page's addresses to print for a server bound to `host`: the bound one, or for a
    wildcard bind this machine's network address and its loopback one; with ``?token=``."""
    names = [host]
    if is_wildcard(host):
        found = [a for a in machine_addresses() if not is_loopback(a) and ":" not in a and "." in a]
        numeric = [a for a in found if a.replace(".", "").isdigit()]
        names = [*(numeric[-1:] or found[:1]), "127.0.0.1"]
    query = f"?token={token}" if token else ""
    return [f"http://{f'[{n}]' if ':' in n else n}:{port}/{query}" for n in names]


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    open_page: bool = False,
    max_games: int = DEFAULT_MAX_GAMES,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
) -> None:
    """Run the server until Ctrl-C, printing the page's address once it listens (and opening
    it if asked). Bound beyond loopback it needs a token (`token`, else a random one, in the
    printed address); on loopback only when `token` is given. `allow_hosts` adds Host names
    it answers to (`guard.hosts_for`). What games need is prepared in the background. A bad
    `token` is a `ValueError` (`guard.check_token`) before anything starts."""
    if token is None:
        token = None if is_loopback(host) else new_token()
    else:
        check_token(token)
    app = create_app(max_games, allowed_hosts=hosts_for(host, allow_hosts), token=token,
                     prepare=Preparation(default_tasks(bot_catalogue())))
    urls = page_urls(host, port, token)

    def listening() -> None:
        lines = [f"qwixx serve: the page is at {urls[0]}  (holds at most {max_games} games; Ctrl-C stops)"]
        lines += [f"             or at {url}" for url in urls[1:]]
        if token is not None:
            lines.append("             the token in the address lets a browser in; share it only with your table")
        print("\n".join(lines), flush=True)
        if open_page:
            threading.Thread(target=webbrowser.open, args=[urls[-1]], daemon=True).start()

    _Server(uvicorn.Config(app, host=host, port=port, log_level="warning"), listening).run()
