// The published retry policy (deploy/grpc/service-config.json, the gRPC service config
// every gRPC client library can apply), read by the bundle at build time, so the app
// retries as any other client of the service does: which codes, how many tries, how long
// between them. (connect-web does not read service configs itself.)
import serviceConfig from "../../deploy/grpc/service-config.json" with { type: "json" };

export interface RetryPolicy {
  /** Tries in all, the first included. */
  maxAttempts: number;
  /** gRPC code names, e.g. "UNAVAILABLE". */
  retryableStatusCodes: string[];
  initialBackoffMs: number;
  maxBackoffMs: number;
  multiplier: number;
}

const seconds = (s: string): number => {
  if (!s.endsWith("s")) throw new Error(`not a duration: ${s}`);
  return Number(s.slice(0, -1)) * 1000;
};

/** The policy of the published service config (the same for every method). */
export function publishedPolicy(config: typeof serviceConfig = serviceConfig): RetryPolicy {
  const p = config.methodConfig[0]!.retryPolicy;
  return {
    maxAttempts: p.maxAttempts,
    retryableStatusCodes: p.retryableStatusCodes,
    initialBackoffMs: seconds(p.initialBackoff),
    maxBackoffMs: seconds(p.maxBackoff),
    multiplier: p.backoffMultiplier,
  };
}

/** The wait after try `attempt` (from 1), as gRPC computes it without the jitter. */
export function backoffMs(p: RetryPolicy, attempt: number): number {
  return Math.min(p.initialBackoffMs * p.multiplier ** (attempt - 1), p.maxBackoffMs);
}
