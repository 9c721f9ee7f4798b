"""The play page's server: a Starlette app over the games and replays a `Store` holds.

``qwixx serve`` calls `serve`; tests build the app with `create_app` and drive it with
Starlette's TestClient. The routes (every body and answer is JSON; a refusal is a 4xx
``{"error": message}`` and changes nothing):

====== =============================== ==========================================================
GET    /                               the page (static files under /static, shipped in the package)
GET    /api/info                       bots (the tables each plays, a pretrained bot's game), limits
GET    /api/games                      your games (those of the seat secrets in X-Qwixx-Seats)
POST   /api/games                      a new table: {variant, lucky, players, seats or bots, start_player,
                                       seed}; the answer has a join link per person's seat
GET    /api/games/{id}?since=N         the game as your seat sees it, with its events from index N on
GET    /api/games/{id}/events          server-sent events: "version N" each time the game changes
POST   /api/games/{id}/moves           your decision {seat, action, decision}; the bots answer
GET    /api/games/{id}/record          the game record (JSON, as a download)
GET    /api/games/{id}/coach?bot=NAME  the coach's value of each of your options; what NAME would play
GET    /api/games/{id}/summary         after the game: the coach's review of your decisions
POST   /api/replays                    open a record in the replay viewer: its frames
GET    /api/replays/{id}               a replay's frames again
GET    /api/replays/{id}/coach?step=I  the coach at position I of a replay (and &bot=NAME)
====== =============================== ==========================================================

A person's seat is named by its secret in the ``X-Qwixx-Seat`` header: moves, the coach and the
summary need it (403 otherwise, the game unchanged), and the game's view shows that seat's own
pending white choice and options only (without the header: a spectator's view). The page keeps
the secrets it holds in its localStorage and lists them in ``X-Qwixx-Seats`` (comma-separated)
to see its games. With ``store`` (``qwixx serve --store DIR``) every game is written to DIR
after each decision and read back at start (`play.saved`).

Bots think in Starlette's thread pool, never on the event loop, so one game's bot never holds
up another game's request. No route takes a file path: records come in as request bodies, bots
by registered name only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import sys
import threading
import webbrowser
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from qwixx_env.core.options import MAX_PLAYERS
from qwixx_env.core.variant import LUCKY_RULES, VARIANT_NAMES
from qwixx_env.play import saved
from qwixx_env.play.games import (
    DEFAULT_IDLE_LIMIT,
    Game,
    PlayError,
    Store,
    bot_catalogue,
    drop_finished_or_idle,
    make_bots,
    parse_new_game,
)
from qwixx_env.play.replays import Replay

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 2**20  # bytes; a 5-player record is far smaller
DEFAULT_MAX_GAMES = 100
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
SEAT_HEADER = "X-Qwixx-Seat"  # the secret of the seat a request acts as
SEATS_HEADER = "X-Qwixx-Seats"  # the secrets a page holds, comma-separated: whose games to list
STREAM_SECONDS = 30.0  # an event stream ends after this long without a change; the page reconnects
STREAM_RETRY_MS = 500  # how soon the page's EventSource reconnects


class Watchers:
    """The open event streams of every game, by game id: each a queue that `changed` feeds the
    game's new version. Used on the event loop only (the routes call it after a move)."""

    def __init__(self) -> None:
        self._queues: dict[str, set[asyncio.Queue[int]]] = {}

    def watch(self, game_id: str) -> asyncio.Queue[int]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        self._queues.setdefault(game_id, set()).add(queue)
        return queue

    def leave(self, game_id: str, queue: asyncio.Queue[int]) -> None:
        left = self._queues.get(game_id, set())
        left.discard(queue)
        if not left:
            self._queues.pop(game_id, None)

    def changed(self, game_id: str, version: int) -> None:
        for queue in self._queues.get(game_id, ()):
            queue.put_nowait(version)


def _secret(request: Request) -> str | None:
    return request.headers.get(SEAT_HEADER)


def _held_secrets(request: Request) -> list[str]:
    return [s.strip() for s in request.headers.get(SEATS_HEADER, "").split(",") if s.strip()]


def join_link(game_id: str, secret: str) -> str:
    """The page's address that opens `game_id` as the seat of `secret` (relative to the server)."""
    return f"/#join={game_id}.{secret}"


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


def create_app(
    max_games: int = DEFAULT_MAX_GAMES,
    allowed_hosts: list[str] | None = None,
    store: str | Path | None = None,
    idle_limit: float = DEFAULT_IDLE_LIMIT,
) -> Starlette:
    """The app. It holds at most `max_games` games (and as many replays): when full it drops
    a finished game, else one left without a decision for over `idle_limit` seconds, else it
    refuses the new game (503); replays go oldest first. `allowed_hosts`, when given, refuses
    requests whose Host header names another host (`serve` passes the loopback names when it
    binds to loopback, against DNS rebinding). `store`, a folder: every game is kept there
    and the games kept there are resumed now (`app.state.store_problems` names the files
    that could not be); a `ValueError` when it is not a writable folder."""
    games: Store[Game] = Store(
        "game", max_games, drop_finished_or_idle(idle_limit),
        drop_rule=f"drops finished games first, then games left without a decision for {idle_limit:g} s",
    )
    replays: Store[Replay] = Store("replay", max_games)
    catalogue: list[dict[str, Any]] = []
    watchers = Watchers()
    folder = None if store is None else saved.check_folder(store)
    problems: list[str] = []
    if folder is not None:
        kept, problems = saved.load_folder(folder)
        for game in kept:
            try:
                games.add(game.id, game)
            except PlayError as err:
                problems.append(f"{saved.game_file(folder, game.id)}: not resumed: {err.message}")

    def keep(game: Game, dropped: list[str]) -> None:
        """Write `game` to the store folder (if any) and remove the dropped games' files."""
        if folder is not None:
            saved.save(game, folder)
            for game_id in dropped:
                saved.forget(folder, game_id)

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
        held = _held_secrets(request)
        mine = []
        for gid, g in games.items():
            seats = [seat for seat in (g.seat_of(secret) for secret in held) if seat is not None]
            if seats:
                mine.append({"id": gid, "options": g.options(), "seats": g.seats(), "yours": sorted(set(seats)),
                             "decisions": g.decisions, "over": g.over})
        return JSONResponse({"games": mine, "max_games": games.max_items, "held": len(games)})

    async def new_game(request: Request) -> JSONResponse:
        new = parse_new_game(await _body(request))
        seat_bots = await run_in_threadpool(make_bots, new)
        game_id = games.new_id()
        game = await run_in_threadpool(Game, game_id, new, seat_bots)
        dropped = games.add(game_id, game)
        await run_in_threadpool(_locked, game, lambda: keep(game, dropped))
        view = await run_in_threadpool(_locked_view, game, 0, new.humans[0])
        view["joins"] = [
            {"seat": seat, "name": new.seats[seat].name, "secret": secret, "link": join_link(game_id, secret)}
            for seat, secret in game.seat_secrets.items()
        ]
        view["dropped"] = dropped
        if dropped:
            view["notice"] = (
                f"the server holds at most {games.max_items} games: {', '.join(dropped)} (finished or left) "
                "was dropped"
            )
        return JSONResponse(view, status_code=201)

    async def show_game(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        viewer = game.viewer(_secret(request), "game")
        return JSONResponse(await run_in_threadpool(_locked_view, game, _since(request), viewer))

    async def move(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        body = await _body(request)
        secret = _secret(request)

        def decide() -> dict[str, Any]:
            first = game.move(body, secret)
            keep(game, [])
            return game.view(first, game.seat_of(secret))

        view = await run_in_threadpool(_locked, game, decide)
        watchers.changed(game.id, view["decisions"])
        return JSONResponse(view)

    async def game_events(request: Request) -> StreamingResponse:
        game = games.get(request.path_params["game_id"])
        queue = watchers.watch(game.id)

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"retry: {STREAM_RETRY_MS}\n\n"
                version = -1
                while True:
                    now = game.decisions
                    if now != version:
                        version = now
                        yield f"data: {json.dumps({'version': version, 'over': game.over})}\n\n"
                    if game.over:
                        return
                    try:
                        await asyncio.wait_for(queue.get(), STREAM_SECONDS)
                    except TimeoutError:
                        return  # the page's EventSource opens a new stream
            finally:
                watchers.leave(game.id, queue)

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def record(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        rec = await run_in_threadpool(_locked_record, game)
        disposition = f'attachment; filename="qwixx-{game.id}.json"'
        return JSONResponse(rec, headers={"Content-Disposition": disposition})

    async def game_coach(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        bot = request.query_params.get("bot") or None
        secret = _secret(request)
        return JSONResponse(await run_in_threadpool(_locked, game, lambda: game.advice(bot, secret)))

    async def summary(request: Request) -> JSONResponse:
        game = games.get(request.path_params["game_id"])
        secret = _secret(request)
        return JSONResponse(await run_in_threadpool(_locked, game, lambda: game.review(secret)))

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
        Route("/api/games/{game_id}/events", game_events),
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
    app.state.store_problems = problems
    return app


def _locked(game: Game, work: Callable[[], Any]) -> Any:
    with game.lock:
        return work()


def _locked_view(game: Game, since: int, viewer: int | None = None) -> dict[str, Any]:
    with game.lock:
        return game.view(since, viewer)


def _locked_record(game: Game) -> dict[str, Any]:
    with game.lock:
        return game.record()


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    open_page: bool = False,
    max_games: int = DEFAULT_MAX_GAMES,
    store: str | Path | None = None,
) -> None:
    """Run the server until Ctrl-C, printing the page's address (and opening it if asked);
    with `store`, games are kept in that folder and the ones kept there resumed."""
    app = create_app(max_games, allowed_hosts=LOCAL_HOSTS if is_loopback(host) else None, store=store)
    for problem in app.state.store_problems:
        print(f"qwixx serve: {problem}", file=sys.stderr)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    kept = f"; keeps games in {store}, {len(app.state.games)} resumed" if store is not None else ""
    print(f"qwixx serve: the page is at {url}  (holds at most {max_games} games{kept}; Ctrl-C stops)", flush=True)
    if open_page:
        threading.Timer(1.0, webbrowser.open, [url]).start()
    # open event streams would hold a stop up; they reconnect to the next server by themselves
    uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)
