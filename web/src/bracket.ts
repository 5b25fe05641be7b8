// A tournament's knockout as columns of matches (pure, for the unit tests): the rounds
// played so far, then empty places for the rounds still to come, so the whole bracket is
// drawn from the first knockout round on.

/** The fields of a `TournamentBoard` the bracket reads. */
export interface BoardLike {
  gameId: string;
  blackPlayerId: string;
  whitePlayerId: string;
  slot: number;
  attempt: number;
  /** BoardResult: 0 not played, 1 Black wins, 2 White wins, 3 draw, 4 both lose, 5 no result. */
  result: number;
  walkover: boolean;
}

export interface RoundLike<B extends BoardLike = BoardLike> {
  number: number;
  /** TournamentStage: 2 the knockout. */
  stage: number;
  boards: B[];
}

export interface Match<B extends BoardLike = BoardLike> {
  slot: number;
  /** The deciding game (the last replay), none for a match still to be paired. */
  board?: B;
  /** Its players (empty while not known). */
  players: [string, string];
  winner?: string;
}

const KNOCKOUT = 2;

/** The winner of a board, when it has one. */
export function boardWinner(b: BoardLike): string | undefined {
  if (b.walkover) return b.blackPlayerId || b.whitePlayerId || undefined;
  if (b.result === 1) return b.blackPlayerId || undefined;
  if (b.result === 2) return b.whitePlayerId || undefined;
  return undefined;
}

/** Knockout rounds in all: the top two of each group go through, so 2 × groups players. */
export function knockoutRounds(groups: number): number {
  return Math.max(1, Math.ceil(Math.log2(Math.max(2, groups * 2))));
}

/** The knockout's columns, first round to final; a later round's matches are empty until
 * paired. A match replayed (a draw or no result) shows its last game. */
export function bracketColumns<B extends BoardLike>(rounds: readonly RoundLike<B>[], groups: number): Match<B>[][] {
  const played = rounds.filter((r) => r.stage === KNOCKOUT).sort((a, b) => a.number - b.number);
  const total = Math.max(knockoutRounds(groups), played.length);
  const cols: Match<B>[][] = [];
  for (let i = 0; i < total; i++) {
    const matches = 2 ** (total - 1 - i);
    const round = played[i];
    const col: Match<B>[] = [];
    for (let slot = 0; slot < matches; slot++) {
      const board = round?.boards.filter((b) => b.slot === slot).sort((a, b) => b.attempt - a.attempt)[0];
      col.push(
        board
          ? { slot, board, players: [board.blackPlayerId, board.whitePlayerId], winner: boardWinner(board) }
          : { slot, players: ["", ""] },
      );
    }
    // Slots the server numbered past the expected count are kept, not dropped.
    for (const b of round?.boards ?? []) {
      if (b.slot >= matches && !col.some((m) => m.slot === b.slot))
        col.push({ slot: b.slot, board: b, players: [b.blackPlayerId, b.whitePlayerId], winner: boardWinner(b) });
    }
    cols.push(col);
  }
  return cols;
}
