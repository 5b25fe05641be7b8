// The generated weiqi client over gRPC-Web, usable from a browser or Node (fetch).
// Everything here is a thin layer over the messages generated from proto/ (src/gen).
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import type { DescService } from "@bufbuild/protobuf";
import { GameService } from "./gen/weiqi/v1/game_pb.js";
import { PlayerService } from "./gen/weiqi/v1/player_pb.js";
import { TournamentService } from "./gen/weiqi/v1/tournament_pb.js";
import { ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";

export * from "./gen/weiqi/v1/game_pb.js";
export * from "./gen/weiqi/v1/player_pb.js";
export * from "./gen/weiqi/v1/tournament_pb.js";
export { Code, ConnectError };

export type GameClient = Client<typeof GameService>;
export type PlayerClient = Client<typeof PlayerService>;
export type TournamentClient = Client<typeof TournamentService>;

/**
 * A client for the service at `baseUrl` (the origin that serves gRPC-Web, e.g.
 * `http://127.0.0.1:8080`). `token` gives the seat token for a game id; a call with no
 * seat token for its game (CreateGame, JoinGame) carries the player's credential from
 * `player` instead (a guest token or the platform's JWT), so the seat records who holds
 * it. Either is sent as `authorization: Bearer <token>`.
 */
export function createGameClient(
  baseUrl: string,
  token?: (gameId: string) => string | undefined,
  player?: () => string | undefined,
): GameClient {
  const auth: Interceptor = (next) => async (req) => {
    let first: unknown = req.message;
    if (req.stream) {
      // A server-streaming call (WatchGame) hands its one request as a stream: read it
      // for the game id (a seat's own stream must carry the seat's token, or its player
      // never counts as present), then pass it on unchanged.
      const sent: unknown[] = [];
      for await (const m of req.message) sent.push(m);
      first = sent[0];
      req = { ...req, message: (async function* () { yield* sent; })() } as typeof req;
    }
    const msg = (first ?? {}) as { mutation?: { gameId?: string }; gameId?: string };
    const id = msg.mutation?.gameId ?? msg.gameId;
    setBearer(req.header, (id && token?.(id)) || player?.());
    // A proxy in front of several servers routes a game's calls by this header.
    if (id) req.header.set("x-weiqi-game", id);
    return next(req);
  };
  return createClient(GameService, createGrpcWebTransport({ baseUrl, interceptors: [auth] }));
}

/** The credential as `authorization: Bearer <token>`, when there is one. */
function setBearer(header: Headers, token: string | undefined): void {
  if (token) header.set("authorization", `Bearer ${token}`);
}

/** A service's client that sends the player's credential, when there is one, on every call. */
function withPlayer<S extends DescService>(service: S, baseUrl: string, player?: () => string | undefined): Client<S> {
  const bearer: Interceptor = (next) => async (req) => {
    setBearer(req.header, player?.());
    return next(req);
  };
  return createClient(service, createGrpcWebTransport({ baseUrl, interceptors: [bearer] }));
}

/** The players' service (guests, ratings, leaderboards), with the player's credential. */
export function createPlayerClient(baseUrl: string, player?: () => string | undefined): PlayerClient {
  return withPlayer(PlayerService, baseUrl, player);
}

/** The tournaments' service (list, register, watch), with the player's credential. */
export function createTournamentClient(baseUrl: string, player?: () => string | undefined): TournamentClient {
  return withPlayer(TournamentService, baseUrl, player);
}

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** A request id for a mutation's idempotency key (a retry sends the same one). */
export function requestId(): string {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return hex(b);
}

/** A commitment to a secret revealed later (the nigiri handful, a sealed komi bid). */
export async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}

/** The kinds of failure the app tells apart. */
export interface Failure {
  kind: "refused" | "stale" | "not_found" | "seat" | "network";
  /** The server's words. */
  message: string;
  /** `google.rpc.ErrorInfo` reason (domain weiqi.v1): "ko", "stale", "not_your_turn"... */
  reason: string;
}

export function failure(err: unknown): Failure {
  const e = ConnectError.from(err);
  const message = e.rawMessage || e.message;
  const reason = e.findDetails(ErrorInfoSchema)[0]?.reason ?? "";
  const f = (kind: Failure["kind"]): Failure => ({ kind, message, reason });
  if (reason === "stale") return f("stale");
  if (reason === "game_not_found") return f("not_found");
  if (reason === "missing_token" || reason === "wrong_token") return f("seat");
  switch (e.code) {
    case Code.NotFound:
      return f("not_found");
    case Code.Unauthenticated:
      return f("seat");
    case Code.Unavailable:
    case Code.Unknown:
    case Code.Canceled:
    case Code.DeadlineExceeded:
    case Code.Internal:
      return f("network");
    default:
      return f("refused");
  }
}

/** How long the server asks to wait before trying again (google.rpc.RetryInfo, sent with
 * RESOURCE_EXHAUSTED), in ms; undefined when it says nothing readable. */
export function retryDelayMs(err: unknown): number | undefined {
  const d = ConnectError.from(err).findDetails(RetryInfoSchema)[0]?.retryDelay;
  return d ? Number(d.seconds) * 1000 + Math.round(d.nanos / 1e6) : undefined;
}
