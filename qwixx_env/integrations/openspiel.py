"""Qwixx and Qwixx Longo as an OpenSpiel game: ``python_qwixx``, over the rules core.

Importing this module registers the game with `pyspiel.register_game` (it needs the
``openspiel`` extra; ``import qwixx_env`` never imports it):

>>> import pyspiel
>>> import qwixx_env.integrations.openspiel  # registers python_qwixx
>>> game = pyspiel.load_game("python_qwixx(players=3,variant=longo,lucky=instead)")
>>> state = game.new_initial_state()

Parameters: ``players`` (1 to 5, default 2), ``variant`` (``"classic"``, ``"longo"``, or the
name of a variant given to `qwixx_env.core.variant.register_variant`),
``lucky`` (Longo's lucky rule, ``"bonus"`` or ``"instead"``), ``start_player`` (the first
active seat, or -1 for a chance node that draws it). They are the env's table options
(`qwixx_env.core.options.TableOptions`), checked there.

The game tree, as `docs/rules.md` plays it:

* at the start (Longo): each seat's two lucky numbers, one chance node each (the first uniform
  over the 15 numbers 2..16, the second over the 14 others; outcome = number - 2); then the
  first active seat when ``start_player=-1`` (uniform over the seats);
* each roll: one chance node per die in play, in the order of `Variant.die_names` (white,
  white, red, yellow, green, blue in classic and Longo; a locked row's lock-cell dice are out of
  play), uniform over its faces (outcome = face - 1);
* the white action: one decision per seat, the active seat first, then clockwise (in Longo
  with ``lucky="bonus"`` a lucky-cross tie adds one more decision for that seat);
* the colour action: one decision of the active seat. Actions are the env's (`r*K + i`
  crosses the i-th number of row r, ``R*K`` passes: R rows of K numbers).

The white action is simultaneous, so the game has imperfect information: a seat's white
choices are hidden from the other seats until every seat has decided, exactly as the AEC
env shows them. `observation_tensor(p)` is the env's observation vector of seat p (the same
vector for the same position; fields named as in `qwixx_env.core.observation`);
`information_state_string(p)` is seat p's perfect-recall view of the history: every chance
outcome, every colour action, the sheets as each white action resolves, p's own decisions,
and when which seat breaks a lucky tie (every seat's observation shows the lucky phase), but
no other seat's white choice. `resample_from_infostate` (what OpenSpiel's ISMCTS calls)
redraws the hidden choices of the current white action uniformly from each seat's legal
actions that agree with what p saw.

Returns are the env's default reward: ``"win"`` with 2+ players (+1 sole winner, 0 for each
seat sharing the top score, -1 the others; zero-sum with 2 players), the final score solo.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pyspiel

from qwixx_env.core.engine import Engine
from qwixx_env.core.observation import SCORE_SCALE, ObservationView, layout_for, state_from_observation
from qwixx_env.core.options import TableOptions
from qwixx_env.core.state import LUCKY, NO_DECISION, OVER, PHASES, WHITE, State, new_state
from qwixx_env.core.variant import Variant, mark_text

GAME_NAME = "python_qwixx"
DEFAULT_PARAMETERS = {"players": 2, "variant": "classic", "lucky": "bonus", "start_player": 0}
RANDOM_START = -1  # start_player: a chance node draws the first active seat

# What a chance node draws (`_Position.draws` holds those to come): die i (0 .. 1 + D, the
# variant's `die_names`; a variant has at most 8 coloured dice), the j-th lucky number of seat
# s (LUCKY_DRAW + 2s + j), the first active seat (START_DRAW).
LUCKY_DRAW = 10
START_DRAW = 20
# In an information state (Longo, lucky="bonus"): "t<seat>" that seat breaks a lucky tie next,
# "b<seat>" it has.
TIE_TOKEN = "t"
TIE_BROKEN_TOKEN = "b"
FIRST_LUCKY = 2  # the lowest number on a sheet: lucky outcome k is number k + 2


def _game_type(utility: pyspiel.GameType.Utility) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Qwixx (qwixx_env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=5,
        min_num_players=1,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=DEFAULT_PARAMETERS,
    )


GAME_TYPE = _game_type(pyspiel.GameType.Utility.GENERAL_SUM)


class QwixxGame(pyspiel.Game):
    """``python_qwixx``: see the module docstring. `table` holds the checked table options."""

    def __init__(self, params: dict[str, Any] | None = None):
        params = {**DEFAULT_PARAMETERS, **(params or {})}
        unknown = sorted(set(params) - set(DEFAULT_PARAMETERS))
        if unknown:
            raise ValueError(f"{GAME_NAME}: got parameter(s) {unknown}; it accepts {sorted(DEFAULT_PARAMETERS)}")
        start = params["start_player"]
        table = TableOptions(
            num_players=params["players"], variant=params["variant"], lucky=params["lucky"],
            start_player="random" if start == RANDOM_START else start,
        )
        P, v = table.num_players, table.rules
        layout = layout_for(v, P)
        if table.reward == "win":
            low, high = -1.0, 1.0
            utility = pyspiel.GameType.Utility.ZERO_SUM if P == 2 else pyspiel.GameType.Utility.GENERAL_SUM
            utility_sum = 0.0 if P == 2 else None
        else:  # solo: the final score
            scores = layout.slices["scores"]
            low = round(float(layout.low[scores][0]) * SCORE_SCALE)
            high = round(float(layout.high[scores][0]) * SCORE_SCALE)
            utility, utility_sum = pyspiel.GameType.Utility.GENERAL_SUM, None
        max_rolls = v.max_rolls(P)
        chance = max(v.faces, P if table.start_player == "random" else 1, 2 * v.faces - 1 if v.lucky_count else 1)
        info = pyspiel.GameInfo(
            num_distinct_actions=v.num_actions,
            max_chance_outcomes=chance,
            num_players=P,
            min_utility=low,
            max_utility=high,
            utility_sum=utility_sum,
            max_game_length=max_rolls * (2 * P + 1),
        )
        super().__init__(_game_type(utility), info, params)
        self.table, self.variant, self.layout = table, v, layout
        # The rules core through one engine (the AEC env's compiled entry points), which plays
        # whichever position's core state it is given (`Engine.attach`).
        self.engine = Engine(table, 1)
        self.no_moves = np.zeros(v.num_actions, np.int8)  # the mask given where none is needed
        self.initial = _Position.initial(self)  # every new state's position, copied on first change

    def start(self, core: State, start_seat: int, lucky_numbers: np.ndarray) -> None:
        """Start the game of `core` with this first active seat and these lucky numbers (the
        set-up chance nodes' outcomes)."""
        self.engine.attach(core, self.no_moves)
        self.engine.start_game(0, start_seat, lucky_numbers)

    def decide(self, core: State, mask: np.ndarray, action: int) -> np.ndarray:
        """Apply a decision legal under `mask` (core's) to `core`; returns the next mask (a new array)."""
        self.engine.attach(core, mask)
        self.engine.step(action)  # apply, then the next mask and every seat's reward
        return self.engine.masks[0].copy()

    def returns_now(self) -> list[float]:
        """Every seat's reward for the decision just made (its return, once the game is over)."""
        return self.engine.rewards[0].astype(float).tolist()

    def legal(self, core: State) -> np.ndarray:
        """The legal-action mask of the seat to decide in `core` (a new array)."""
        self.engine.attach(core)  # computes the masks
        return self.engine.masks[0].copy()

    def observe(self, core: State, seat: int, out: np.ndarray) -> None:
        """Write the env's observation of `seat` into `out` (shape (1, size))."""
        self.engine.attach(core, self.no_moves)  # an observation needs no mask
        out[...] = self.engine.observe(seat)

    def new_initial_state(self) -> QwixxState:
        return QwixxState(self)

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None, params=None) -> QwixxObserver:
        return QwixxObserver(self, iig_obs_type, params)

    def state_from_observation(self, observation: Any, rng: np.random.Generator | None = None) -> QwixxState:
        """A state at the decision an observation dict (or vector) of the env shows, from what
        that seat sees: the observer becomes seat 0, the other seats are renumbered clockwise
        from it (`core.observation.state_from_observation`). The white choices that seats
        before it made in this white action, which it cannot see, are drawn uniformly from
        their legal actions with `rng`. Its history starts here (`history()` is empty).
        A search bot playing the env (`openspiel_bots.SearchBot`) searches from it."""
        vector = observation["observation"] if isinstance(observation, dict) else observation
        view = ObservationView(vector, self.variant, self.num_players())
        core = state_from_observation(view)
        state = QwixxState(self)
        state.set_position(core, "from-observation " + self.observation_text(view.vector), rng)
        return state

    def observation_text(self, vector: np.ndarray) -> str:
        """An observation vector as one line of text (what `observation_string` returns): the
        phase, the dice (- out of play or not drawn yet), the active seat (+j: j seats clockwise
        from the observer), then each sheet from the observer's on: its rows in sheet order (x a
        crossed number, after the row's initial), locks, penalties, score and (Longo) lucky numbers."""
        field, P, K = self.layout.field, self.num_players(), self.variant.cells
        names = self.variant.row_names
        R = len(names)
        faces = field(vector, "dice")
        dice = np.where(faces.any(axis=1), faces.argmax(axis=1) + 1, 0).tolist()
        parts = [
            f"{PHASES[int(np.argmax(field(vector, 'phase')))]} action, "
            f"active +{int(np.argmax(field(vector, 'active_seat')))}, "
            f"dice {','.join(str(d) if d else '-' for d in dice)}"
        ]
        # every row as one character per number: one conversion for all sheets
        rows = np.where(field(vector, "crosses") > 0.5, ord("x"), ord(".")).astype(np.uint8).tobytes().decode()
        locks = (field(vector, "locks") > 0.5).tolist()
        penalties = np.rint(field(vector, "penalties").sum(axis=1)).astype(int).tolist()
        scores = np.rint(field(vector, "scores") * SCORE_SCALE).astype(int).tolist()
        lucky = field(vector, "lucky_numbers")
        for j in range(P):
            sheet = " ".join(
                names[r][0] + rows[(R * j + r) * K : (R * j + r + 1) * K] + ("L" if locks[j][r] else "")
                for r in range(R)
            )
            numbers = f" lucky {(np.flatnonzero(lucky[j]) + FIRST_LUCKY).tolist()}" if lucky.shape[1] else ""
            parts.append(f"+{j}: {sheet} pen {penalties[j]} score {scores[j]}{numbers}")
        pending = np.flatnonzero(field(vector, "pending_cross"))
        if pending.size:
            parts.append(f"own white cross {mark_text(int(pending[0]), self.variant)}")
        return " | ".join(parts)


class _Position:
    """Everything a state holds, as one object: OpenSpiel clones a Python state by building a
    new initial state and deep-copying each attribute (PyState::Clone), and this copies in one
    array copy per field of the core state, sharing the immutable parts."""

    def __init__(self, game: QwixxGame):
        self.game: QwixxGame | None = game
        self.core: State = new_state(game.num_players(), variant=game.variant)
        self.draws: tuple[int, ...] = ()  # the chance nodes to come before the next decision
        self.lucky = np.zeros((game.num_players(), 2), np.int64)  # drawn at the start (Longo)
        self.start = game.table.start_seat  # the first active seat (-1: still to draw)
        self.roll_start: State | None = None  # the core state as this white action began
        self.roll_log = 0  # len(log) then
        self.log: tuple[tuple[int, str], ...] = ()  # (seat who sees it or -1 for all, token)
        self.own: tuple[tuple[int, int], ...] = ()  # (seat, action) of this white action so far
        self.mask: np.ndarray | None = None  # the legal actions, once known
        self.returns: list[float] | None = None  # at the end
        self.shared = False  # the game's initial position: copy before changing it

    @staticmethod
    def initial(game: QwixxGame) -> _Position:
        """The position every game starts from: its set-up chance nodes, or its first roll."""
        pos = _Position(game)
        draws = []
        if game.variant.lucky_count:
            draws += [LUCKY_DRAW + 2 * s + j for s in range(game.num_players()) for j in range(2)]
        if pos.start < 0:
            draws.append(START_DRAW)
        pos.draws = tuple(draws)
        if not draws:
            pos.first_roll()
        pos.shared = True
        return pos

    def played_in(self) -> QwixxGame:
        """The game of this position; a deserialized one has it once its state's `_p` set it."""
        if self.game is None:
            raise RuntimeError("this position was deserialized and has no game yet; reach it through its state")
        return self.game

    def first_roll(self) -> None:
        self.played_in().start(self.core, self.start, self.lucky)
        self.queue_dice()

    def queue_dice(self) -> None:
        """The core rolled a new roll's dice from its own generator; they become chance nodes
        instead, one per die in play (the core leaves the dice of a locked row's lock cells out
        of play, 0)."""
        in_play = tuple(i for i in range(self.core.dice.shape[1]) if self.core.dice[0, i] > 0)
        self.core.dice[0, list(in_play)] = 0
        self.draws, self.mask = in_play, None

    def __getstate__(self) -> dict:  # `serialize` pickles it; the deserializing state has the game
        return {**self.__dict__, "game": None}

    def __deepcopy__(self, memo: dict) -> _Position:
        new = _Position.__new__(_Position)
        new.__dict__.update(self.__dict__)
        new.core = self.core.clone()
        new.lucky = self.lucky.copy()
        new.shared = False
        return new


class QwixxState(pyspiel.State):
    """A position of ``python_qwixx`` (see the module docstring)."""

    def __init__(self, game: QwixxGame):
        super().__init__(game)
        self._pos = game.initial  # shared until the first change (`_p`)

    @property
    def _p(self) -> _Position:
        """The position, to change: the game's shared initial one is copied first."""
        pos = self._pos
        if pos.shared:
            pos = self._pos = copy.deepcopy(pos)
        if pos.game is None:  # a deserialized state: its game is not pickled with it
            pos.game = self.get_game()
        return pos

    # --- the chance nodes ---------------------------------------------------------------

    def chance_outcomes(self) -> list[tuple[int, float]]:
        pos = self._pos
        draw = pos.draws[0]
        if draw < LUCKY_DRAW:
            faces = self._game().variant.faces
            return [(k, 1.0 / faces) for k in range(faces)]
        if draw == START_DRAW:
            P = pos.core.marks.shape[1]
            return [(s, 1.0 / P) for s in range(P)]
        numbers = 2 * self._game().variant.faces - 1
        seat, j = divmod(draw - LUCKY_DRAW, 2)
        taken = int(pos.lucky[seat, 0]) - FIRST_LUCKY if j == 1 else -1
        return [(k, 1.0 / (numbers - (j == 1))) for k in range(numbers) if k != taken]

    def _game(self) -> QwixxGame:
        return self._p.game if self._pos.game is None else self._pos.game

    def _draw(self, outcome: int) -> None:
        possible = [k for k, _ in self.chance_outcomes()]
        pos = self._p
        draw = pos.draws[0]
        if outcome not in possible:
            name = _draw_name(draw, pos.played_in().variant)
            raise ValueError(f"chance outcome {outcome} is not possible for {name}; possible: {possible}")
        pos.draws = pos.draws[1:]
        if draw < LUCKY_DRAW:
            pos.core.dice[0, draw] = outcome + 1
        elif draw == START_DRAW:
            pos.start = outcome
        else:
            seat, j = divmod(draw - LUCKY_DRAW, 2)
            pos.lucky[seat, j] = outcome + FIRST_LUCKY
        pos.log += ((-1, f"{_draw_token(draw)}{_outcome_value(draw, outcome)}"),)
        if pos.draws:
            return
        if draw < LUCKY_DRAW:  # the roll's dice are all drawn: the white action begins
            pos.roll_start, pos.roll_log, pos.own = pos.core.clone(), len(pos.log), ()
        else:
            pos.first_roll()

    # --- the decisions -----------------------------------------------------------------

    def current_player(self) -> int:
        pos = self._pos
        if pos.draws:
            return pyspiel.PlayerId.CHANCE
        if pos.core.phase[0] == OVER:
            return pyspiel.PlayerId.TERMINAL
        return int(pos.core.turn[0])

    def _legal_mask(self) -> np.ndarray:
        pos = self._pos
        if pos.mask is None:
            pos.mask = self._game().legal(pos.core)  # on the shared initial position too: it is the same
        return pos.mask

    def _legal_actions(self, player: int) -> list[int]:
        return np.flatnonzero(self._legal_mask()).tolist()

    def _apply_action(self, action: int) -> None:
        if self._pos.draws:
            self._draw(int(action))
            return
        mask = self._legal_mask()
        if not (0 <= action < mask.shape[0] and mask[action]):
            raise ValueError(
                f"{GAME_NAME}: action {action} ({self._action_to_string(self.current_player(), action)}) is "
                f"illegal for seat {self.current_player()} now; legal: {np.flatnonzero(mask).tolist()}"
            )
        self._decide(int(action))

    def _decide(self, action: int) -> None:
        """Apply a legal decision through the rules core, and log what each seat sees of it."""
        pos = self._p
        core, game = pos.core, pos.played_in()
        seat, phase, roll = int(core.turn[0]), int(core.phase[0]), int(core.roll[0])
        pos.mask = game.decide(core, self._legal_mask(), action)
        if phase in (WHITE, LUCKY):
            pos.log += ((seat, f"w{action}"),)  # hidden from the other seats
            pos.own += ((seat, action),)
            # every seat's observation shows the lucky phase begin and end: who breaks a tie is public
            if core.phase[0] == LUCKY:
                pos.log += ((-1, f"{TIE_TOKEN}{seat}"),)
            elif phase == LUCKY:
                pos.log += ((-1, f"{TIE_BROKEN_TOKEN}{seat}"),)
            if core.phase[0] not in (WHITE, LUCKY):  # all decided: every sheet shows the crosses
                pos.log += ((-1, "sheets:" + ",".join(map(str, core.marks[0].ravel().tolist())) + ";"),)
        else:
            pos.log += ((-1, f"c{action}"),)
            if core.roll[0] != roll and core.phase[0] != OVER:
                pos.queue_dice()
        if core.phase[0] == OVER:
            pos.returns = game.returns_now()

    def _replay_white_action(self, player: int, own: list[int], draw, ties: set[int] | None = None) -> None:
        """Replay the current white action from its start, up to `player`'s decision with its
        own decisions `own` done: `player` decides as given, every other seat draws uniformly
        from its legal actions (`draw()` a float in [0, 1)); with `ties`, from those that make
        it break a lucky tie if and only if it is in `ties` (what `player` saw)."""
        pos = self._p
        if pos.roll_start is None:
            raise RuntimeError(f"replay: seat {player} is in no white action to replay")
        pos.core.copy_from(pos.roll_start)
        pos.log, pos.own, pos.mask = pos.log[: pos.roll_log], (), None
        own = list(own)
        while not (int(pos.core.turn[0]) == player and not own):
            seat = int(pos.core.turn[0])
            if seat == player:
                action = own.pop(0)
            else:
                legal = np.flatnonzero(self._legal_mask())
                if ties is not None and pos.core.phase[0] == WHITE:
                    legal = legal[[self._breaks_tie(int(a)) == (seat in ties) for a in legal]]
                action = int(legal[min(int(draw() * len(legal)), len(legal) - 1)])
            self._decide(action)
            if pos.core.phase[0] not in (WHITE, LUCKY):
                raise RuntimeError("replaying the white action resolved it before the player's decision")

    def _breaks_tie(self, action: int) -> bool:
        """Whether the seat to decide would break a lucky tie next after this white choice."""
        pos = self._pos
        core = pos.core.clone()
        self._game().decide(core, self._legal_mask().copy(), action)
        return bool(core.phase[0] == LUCKY)

    def resample_from_infostate(self, player_id: int, probability_sampler) -> QwixxState:
        """A state the seat `player_id` cannot tell from this one, with the hidden white choices
        of the current white action drawn again, each uniformly from that seat's legal actions
        that agree with what `player_id` saw (whether that seat broke a lucky tie)
        (`probability_sampler()` gives the uniform numbers, e.g. `pyspiel.UniformProbabilitySampler`).
        Only the seat to decide can be resampled while choices are hidden. The copy's
        `history()` still lists this state's actions; its position and information states are
        the resampled ones."""
        pos = self._pos
        hidden = any(s != player_id for s, _ in pos.own)
        if not hidden or pos.draws or pos.core.phase[0] not in (WHITE, LUCKY):
            return self.clone()
        if player_id != self.current_player():
            raise ValueError(
                f"resample_from_infostate: got player_id {player_id}; while white choices are hidden "
                f"only the seat to decide ({self.current_player()}) can be resampled"
            )
        clone = self.clone()
        clone.redraw_white_action(player_id, probability_sampler)
        return clone

    def redraw_white_action(self, player_id: int, probability_sampler) -> None:
        """Replay this white action with `player_id`'s own choices as made and every hidden
        choice of the other seats drawn again (`resample_from_infostate` on a copy)."""
        pos = self._pos
        own = [a for s, a in pos.own if s == player_id]
        ties = {int(t[len(TIE_TOKEN):]) for s, t in pos.log[pos.roll_log:] if s < 0 and t.startswith(TIE_TOKEN)}
        self._replay_white_action(player_id, own, probability_sampler, ties)

    # --- the end ------------------------------------------------------------------------

    def is_terminal(self) -> bool:
        return self._pos.returns is not None

    def returns(self) -> list[float]:
        returns = self._pos.returns
        return [0.0] * self._pos.core.marks.shape[1] if returns is None else list(returns)

    def scores(self) -> list[int]:
        """Every seat's score now (committed crosses only)."""
        return ObservationView(self._observation(0), self._game().variant, self.num_players()).scores.tolist()

    @property
    def core_state(self) -> State:
        """The rules core's one-game `State` (read it; do not change it). During a roll's chance
        nodes, the dice not drawn yet are 0."""
        return self._pos.core

    # --- text -----------------------------------------------------------------------------

    def _action_to_string(self, player: int, action: int) -> str:
        draws, variant = self._pos.draws, self._game().variant
        if player == pyspiel.PlayerId.CHANCE:
            if not draws:
                return f"outcome {action}"
            return f"{_draw_name(draws[0], variant)}={_outcome_value(draws[0], action)}"
        if not 0 <= action < variant.num_actions:
            return f"action {action}"
        return mark_text(action, variant)

    def __str__(self) -> str:
        pos, variant = self._pos, self._game().variant
        if pos.draws and pos.roll_start is None and pos.core.phase[0] == OVER:
            return "set-up | next chance: " + _draw_name(pos.draws[0], variant)
        text = self._game().observation_text(self._observation(0))
        return text + (" | next chance: " + _draw_name(pos.draws[0], variant) if pos.draws else "")

    def _observation(self, seat: int) -> np.ndarray:
        """The env's observation vector of `seat`."""
        game = self._game()
        out = np.zeros((1, game.layout.size), np.float32)
        game.observe(self._pos.core, seat, out)
        return out[0]

    # --- for the game and its observer ------------------------------------------------------

    def log_of(self, player: int) -> str:
        """What `player` has seen of the game, as text: the perfect-recall information state."""
        return f"seat {player}: " + " ".join(t for owner, t in self._pos.log if owner < 0 or owner == player)

    def set_position(self, core: State, log: str, rng: np.random.Generator | None) -> None:
        """Stand at the decision `core` shows (from an observation, the observer as seat 0),
        its history starting here; hidden white choices of this white action drawn with `rng`."""
        pos = self._p
        pos.core, pos.draws, pos.lucky[:] = core, (), core.lucky_numbers[0]
        pos.log = ((-1, log),)
        if core.phase[0] in (WHITE, LUCKY):
            own = []
            if core.phase[0] == LUCKY:  # its own white choice, which the observation shows
                pass_action = self._game().variant.num_actions - 1
                own = [int(core.pending[0, 0]) if core.pending[0, 0] != NO_DECISION else pass_action]
            start = core.clone()
            start.turn[0], start.phase[0] = start.active[0], WHITE
            start.pending[0] = NO_DECISION
            start.pending_lucky[0] = NO_DECISION
            pos.roll_start, pos.roll_log = start, len(pos.log)
            draw = (rng or np.random.default_rng()).random
            self._replay_white_action(0, own, draw)


def _draw_name(draw: int, variant: Variant) -> str:
    """A chance node in words: ``die 2 (red)``, ``start seat``, ``lucky number 1 of seat 0``."""
    if draw < LUCKY_DRAW:
        return f"die {draw} ({variant.die_names[draw]})"
    if draw == START_DRAW:
        return "start seat"
    seat, j = divmod(draw - LUCKY_DRAW, 2)
    return f"lucky number {j + 1} of seat {seat}"


def _draw_token(draw: int) -> str:
    """How a chance outcome shows in an information state: d<die>=, l<seat>.<j>=, s=."""
    if draw < LUCKY_DRAW:
        return f"d{draw}="
    if draw == START_DRAW:
        return "s="
    return "l{}.{}=".format(*divmod(draw - LUCKY_DRAW, 2))


def _outcome_value(draw: int, outcome: int) -> int:
    if draw < LUCKY_DRAW:
        return outcome + 1
    return outcome if draw == START_DRAW else outcome + FIRST_LUCKY


class QwixxObserver:
    """OpenSpiel's observer protocol: `tensor` (a flat float32 vector) with named views in
    `dict`, `set_from(state, player)` and `string_from(state, player)`.

    The default observation (``perfect_recall=False``) is the env's observation vector of the
    seat, its fields named as in `qwixx_env.core.observation`. The information state
    (``perfect_recall=True``) is given as a string only.
    """

    def __init__(self, game: QwixxGame, iig_obs_type: pyspiel.IIGObservationType | None, params):
        if params:
            raise ValueError(f"{GAME_NAME} observer: got params {params!r}; it takes none")
        obs_type = iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False)
        if not obs_type.public_info or obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError(
                f"{GAME_NAME} observer: got {obs_type}; it observes what one seat sees (public_info=True, "
                "private_info=SINGLE_PLAYER), with or without perfect recall"
            )
        self.game = game
        self.perfect_recall = obs_type.perfect_recall
        if self.perfect_recall:
            self.tensor, self.dict = None, {}
            return
        layout = game.layout
        self.tensor = np.zeros(layout.size, np.float32)
        self._out = self.tensor.reshape(1, -1)  # the encoder writes a batch of one
        self.dict = {n: layout.field(self.tensor, n) for n, s in layout.slices.items() if s.stop > s.start}

    def set_from(self, state: QwixxState, player: int) -> None:
        if self.perfect_recall:
            return
        self.game.observe(state.core_state, player, self._out)

    def string_from(self, state: QwixxState, player: int) -> str:
        if self.perfect_recall or self.tensor is None:  # the same: perfect recall keeps no tensor
            return state.log_of(player)
        self.set_from(state, player)
        return f"seat {player}: " + self.game.observation_text(self.tensor)


pyspiel.register_game(GAME_TYPE, QwixxGame)
