// How the app reads the server's refusals: the google.rpc.ErrorInfo reason the server
// attaches decides what the page says (a stale move, a lost seat, a missing game).
import { expect, test } from "@playwright/test";
import { Code, ConnectError, failure } from "../../src/client.js";
import { backoffMs, publishedPolicy } from "../../src/retry.js";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";

const refused = (code: Code, reason: string, message = "m") =>
  new ConnectError(message, code, undefined, [{ desc: ErrorInfoSchema, value: { reason, domain: "weiqi.v1" } }]);

test("reasons decide the kind of failure", () => {
  expect(failure(refused(Code.FailedPrecondition, "stale")).kind).toBe("stale");
  expect(failure(refused(Code.PermissionDenied, "wrong_token")).kind).toBe("seat");
  expect(failure(refused(Code.NotFound, "game_not_found")).kind).toBe("not_found");
  const ko = failure(refused(Code.FailedPrecondition, "ko", "illegal move: ko"));
  expect(ko).toEqual({ kind: "refused", message: "illegal move: ko", reason: "ko" });
});

test("transport failures are network failures (retried with the same request id)", () => {
  expect(failure(new ConnectError("down", Code.Unavailable)).kind).toBe("network");
  expect(failure(new TypeError("Failed to fetch")).kind).toBe("network");
});

test("the app retries as the published service config says", () => {
  const p = publishedPolicy();
  expect(p.maxAttempts).toBe(5);
  expect(p.retryableStatusCodes).toEqual(["UNAVAILABLE"]);
  expect([1, 2, 3, 4, 5].map((a) => backoffMs(p, a))).toEqual([500, 1000, 2000, 4000, 4000]);
});
