"""The play page's server: a Starlette app over the games and replays a `Store` holds.

``qwixx serve`` calls `serve`; tests build the app with `create_app` and drive it with
Starlette's TestClient. The routes (every body and answer is JSON; a refusal is a 4xx
``{"error": message}`` and changes nothing):

====== =============================== ==========================================================
GET    /                               the page (static files under /static, shipped in the package)
GET    /api/info                       bots (the tables each plays, a pretrained bot's game), limits, "ready"
GET    /api/games                      your games (those of the seat secrets in X-Qwixx-Seats)
POST   /api/games                      a new table: {variant, lucky, players, seats or bots, start_player,
                                       seed}; the answer has a join link per person's seat (and
                                       "getting_ready" while what its bots need is being prepared)
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
by registered name only. Every request passes `guard.Guard` first (Host, token, Origin and
Content-Type, bounded JSON, a JSON 500 for the unexpected); what games need is prepared in
the background (`prepare`) and no request waits for it: a new game is created at once and, if
its bots are not ready, begins by itself on the first request for it once they are (its view
says ``"begun": false`` and what it is ``"getting_ready"`` for until then); a coach request for
what is not ready yet is a 503 "getting ready".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import webbrowser
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
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
    check_bots,
    drop_finished_or_idle,
    make_bots,
    parse_new_game,
    variant_info,
)
from qwixx_env.play.guard import (
    LOCAL_HOSTS,
    MAX_BODY,
    Guard,
    check_token,
    hosts_for,
    http_error,
    is_loopback,
    is_wildcard,
    machine_addresses,
    new_token,
    read_json,
    refused,
)
from qwixx_env.play.prepare import Preparation, default_tasks, needs_of_coach, needs_of_game
from qwixx_env.play.replays import Replay, shown

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_MAX_GAMES = 100
# The server's public names; the request limits are the guard's, named here as before.
__all__ = ["DEFAULT_MAX_GAMES", "LOCAL_HOSTS", "MAX_BODY", "STATIC", "create_app", "join_link", "page_urls", "serve"]
SEAT_HEADER = "X-Qwixx-Seat"  # the secret of the seat a request acts as
SEATS_HEADER = "X-Qwixx-Seats"  # the secrets a page holds, comma-separated: whose games to list
STREAM_SECONDS = 30.0  # an event stream ends after this long without a change; the page reconnects
STREAM_RETRY_MS = 500  # how soon the page's EventSource reconnects
MAX_DIGITS = 9  # of a count in a query (?since=, ?step=): far more events or positions than a game has


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


def join_link(game_id: str, secret: str, token: str | None = None) -> str:
    """The page's address that opens `game_id` as the seat of `secret` (relative to the server);
    with the server's `token`, which the guard moves into a cookie (the fragment survives)."""
    return f"/?token={token}#join={game_id}.{secret}" if token else f"/#join={game_id}.{secret}"


def _count(request: Request, name: str, what: str, default: str | None = None) -> int:
    """The query parameter `name`, a count of `what`: ASCII digits only (`str.isdigit` takes
    "²", which int() does not) and at most `MAX_DIGITS` of them (int() refuses thousands)."""
    text = request.query_params.get(name, default)
    if text is None or not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS):
        raise PlayError(400, f"{name}: got {shown(text)}; expected {what}: a non-negative integer of at most "
                             f"{MAX_DIGITS} digits")
    return int(text)


def create_app(
    max_games: int = DEFAULT_MAX_GAMES,
    allowed_hosts: list[str] | None = None,
    store: str | Path | None = None,
    idle_limit: float = DEFAULT_IDLE_LIMIT,
    *,
    token: str | None = None,
    prepare: Preparation | None = None,
    variants: Sequence[str] = VARIANT_NAMES,
    catalogue: list[dict[str, Any]] | None = None,
) -> Starlette:
    """The app. It holds at most `max_games` games (and as many replays): when full it drops
    a finished game, else one left without a decision for over `idle_limit` seconds, else it
    refuses the new game (503); replays go oldest first. `allowed_hosts`, when given, refuses
    requests whose Host header names another host (`serve` passes the loopback names when it
    binds to loopback, against DNS rebinding; `guard.hosts_for` any other bind address).
    `store`, a folder: every game is kept there and the games kept there are resumed now
    (`app.state.store_problems` names the files that could not be); a `ValueError` when it is
    not a writable folder. `token`, when given, is needed by every request (`guard.Guard`).
    `prepare` is what the server prepares in the background from its start (`serve` passes
    `prepare.default_tasks`); None prepares nothing, so what a request needs is computed in
    it on first use. `variants`: the registered variants a new game may name (``qwixx serve
    --variant FILE`` adds a sheet of the user's to the package's two). `catalogue` is the bots
    ``/api/info`` offers (`games.bot_catalogue`, which reads every pretrained bot's checkpoint:
    `serve` passes the one it computed at start, so no request reads one); None computes it on
    the first ``/api/info``."""
    variants = tuple(variants)
    games: Store[Game] = Store(
        "game", max_games, drop_finished_or_idle(idle_limit),
        drop_rule=f"drops finished games first, then games left without a decision for {idle_limit:g} s",
    )
    replays: Store[Replay] = Store("replay", max_games)
    offered: list[dict[str, Any]] = [] if catalogue is None else list(catalogue)
    watchers = Watchers()
    preparation = Preparation([]) if prepare is None else prepare
    token = None if token is None else check_token(token)
    folder = None if store is None else saved.check_folder(store)
    problems: list[str] = []
    if folder is not None:
        problems = saved.tidy(folder)
        kept, unread = saved.load_folder(folder)
        problems += unread
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

    def begin(game: Game) -> None:
        """Begin `game` with its bots (in the thread pool: the bots play up to a person's first
        decision) and keep it."""
        with game.lock:
            if not game.begun:
                game.begin(make_bots(game.new))
                keep(game, [])

    async def held(request: Request) -> Game:
        """The game the request names, begun first if it was getting ready and what it needs is
        ready now: a page that looks at its game again sees it begin."""
        game = games.get(request.path_params["game_id"])
        if not game.begun and preparation.ready(needs_of_game(game.new)):
            await run_in_threadpool(begin, game)
            watchers.changed(game.id, game.public_decisions)
        return game

    def with_readiness(game: Game, view: dict[str, Any]) -> dict[str, Any]:
        """`view` of `game`, with what it is getting ready for while it has not begun:
        ``{"message", "failed"}`` (failed: an item it needs could not be prepared)."""
        if not game.begun:
            hold = preparation.holdup(_who(game.new.bots), needs_of_game(game.new))
            message, failed = hold or (f"{_who(game.new.bots)} is ready; the game begins", False)
            view["getting_ready"] = {"message": message, "failed": failed}
        return view

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        preparation.start()
        yield
        preparation.stop()

    async def page(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def info(request: Request) -> JSONResponse:
        if catalogue is None and not offered:
            offered.extend(await run_in_threadpool(bot_catalogue, variants))
        return JSONResponse(
            {
                "bots": offered, "variants": list(variants), "sheets": [variant_info(v) for v in variants],
                "lucky_rules": list(LUCKY_RULES),
                "max_players": MAX_PLAYERS, "max_games": games.max_items, "games_held": len(games),
                "max_body": MAX_BODY, "ready": preparation.status(),
            }
        )

    async def list_games(request: Request) -> JSONResponse:
        held = _held_secrets(request)
        mine = []
        for gid, g in games.items():
            seats = [seat for seat in (g.seat_of(secret) for secret in held) if seat is not None]
            if seats:
                mine.append({"id": gid, "options": g.options(), "seats": g.seats(), "yours": sorted(set(seats)),
                             "decisions": g.public_decisions, "over": g.over, "begun": g.begun})
        return JSONResponse({"games": mine, "max_games": games.max_items, "held": len(games)})

    async def new_game(request: Request) -> JSONResponse:
        new = parse_new_game(await read_json(request), variants=variants)
        check_bots(new)  # a bot that cannot play the table is refused now, not when the game begins
        needs = needs_of_game(new)
        preparation.refuse_failed(_who(new.bots), needs)  # an item that failed never will be ready
        game_id = games.new_id()
        game = Game(game_id, new)  # its seats and their secrets; it begins now or once its bots are ready
        if preparation.ready(needs):
            await run_in_threadpool(lambda: game.begin(make_bots(new)))
        dropped = games.add(game_id, game)
        await run_in_threadpool(_locked, game, lambda: keep(game, dropped))
        view = with_readiness(game, await run_in_threadpool(_locked_view, game, 0, new.humans[0]))
        view["joins"] = [
            {"seat": seat, "name": new.seats[seat].name, "secret": secret, "link": join_link(game_id, secret, token)}
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
        game = await held(request)
        viewer = game.viewer(_secret(request), "game")
        since = _count(request, "since", "a number of events", "0")
        return JSONResponse(with_readiness(game, await run_in_threadpool(_locked_view, game, since, viewer)))

    async def move(request: Request) -> JSONResponse:
        game = await held(request)
        body = await read_json(request)
        secret = _secret(request)

        def decide() -> dict[str, Any]:
            first = game.move(body, secret)
            keep(game, [])
            return game.view(first, game.seat_of(secret))

        view = await run_in_threadpool(_locked, game, decide)
        watchers.changed(game.id, view["decisions"])
        return JSONResponse(view)

    async def game_events(request: Request) -> StreamingResponse:
        game = await held(request)
        queue = watchers.watch(game.id)

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"retry: {STREAM_RETRY_MS}\n\n"
                version = -1
                while True:
                    now = game.public_decisions  # a white choice held for its lucky decision is not news
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
        game = await held(request)
        rec = await run_in_threadpool(_locked_record, game)
        disposition = f'attachment; filename="qwixx-{game.id}.json"'
        return JSONResponse(rec, headers={"Content-Disposition": disposition})

    async def game_coach(request: Request) -> JSONResponse:
        game = await held(request)
        bot = request.query_params.get("bot") or None
        secret = _secret(request)
        preparation.require(bot or "the coach", needs_of_coach(game.new.table, bot))
        return JSONResponse(await run_in_threadpool(_locked, game, lambda: game.advice(bot, secret)))

    async def summary(request: Request) -> JSONResponse:
        game = await held(request)
        secret = _secret(request)
        preparation.require("the coach's review", needs_of_coach(game.new.table, None))
        return JSONResponse(await run_in_threadpool(_locked, game, lambda: game.review(secret)))

    async def replay_coach(request: Request) -> JSONResponse:
        item = replays.get(request.path_params["replay_id"])
        step = _count(request, "step", "a position number")
        bot = request.query_params.get("bot") or None
        preparation.require(bot or "the coach", needs_of_coach(item.table, bot))
        return JSONResponse(await run_in_threadpool(item.advice, step, bot))

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
    middleware = [Middleware(Guard, allowed_hosts=allowed_hosts, token=token)]
    handlers = {PlayError: refused, HTTPException: http_error}
    app = Starlette(routes=routes, middleware=middleware, exception_handlers=handlers, lifespan=lifespan)
    app.state.games = games
    app.state.replays = replays
    app.state.store_problems = problems
    app.state.preparation = preparation
    return app


def _who(seat_bots: Sequence[str]) -> str:
    """What a new game asks for, for a "getting ready" message: its bots, or the game itself."""
    return ", ".join(dict.fromkeys(seat_bots)) or "the game"


def _locked(game: Game, work: Callable[[], Any]) -> Any:
    with game.lock:
        return work()


def _locked_view(game: Game, since: int, viewer: int | None = None) -> dict[str, Any]:
    with game.lock:
        return game.view(since, viewer)


def _locked_record(game: Game) -> dict[str, Any]:
    with game.lock:
        return game.record()


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
    store: str | Path | None = None,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
    variants: Sequence[str] = VARIANT_NAMES,
) -> None:
    """Run the server until Ctrl-C, printing the page's address once it listens (and opening
    it if asked); with `store`, games are kept in that folder and the ones kept there resumed.
    Bound beyond loopback it needs a token (`token`, else a random one, in the printed
    address); on loopback only when `token` is given. `allow_hosts` adds Host names it answers
    to (`guard.hosts_for`). What games need is prepared in the background. `variants`: the
    registered variants the page offers. A bad `token` is a `ValueError` (`guard.check_token`)
    before anything starts."""
    if token is None:
        token = None if is_loopback(host) else new_token()
    else:
        check_token(token)
    catalogue = bot_catalogue(variants)  # read once, here: /api/info answers from it
    app = create_app(max_games, allowed_hosts=hosts_for(host, allow_hosts), store=store, token=token,
                     prepare=Preparation(default_tasks(catalogue), in_child=True), variants=variants,
                     catalogue=catalogue)
    for problem in app.state.store_problems:
        print(f"qwixx serve: {problem}", file=sys.stderr)
    urls = page_urls(host, port, token)
    kept = f"; keeps games in {store}, {len(app.state.games)} resumed" if store is not None else ""

    def listening() -> None:
        lines = [f"qwixx serve: the page is at {urls[0]}  (holds at most {max_games} games{kept}; Ctrl-C stops)"]
        lines += [f"             or at {url}" for url in urls[1:]]
        if token is not None:
            lines.append("             the token in the address lets a browser in; share it only with your table")
        print("\n".join(lines), flush=True)
        if open_page:
            threading.Thread(target=webbrowser.open, args=[urls[-1]], daemon=True).start()

    # open event streams would hold a stop up; they reconnect to the next server by themselves
    # log_config None: uvicorn's own dictConfig would close every logging handler already set up
    # (a library's whose stream is the process's stderr, as Ray's is), so it only sets its levels
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", log_config=None,
                            timeout_graceful_shutdown=2)
    _Server(config, listening).run()
