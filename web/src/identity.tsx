// The signed-in player in the header: the name (a link to their profile), then the
// rating and rank of the board size they last played rated ("Alice · 1500 · 6k?", the "?"
// while provisional). Read again whenever the feed says one of their games ended or
// (re)subscribes, and once a minute in case a feed event was missed.
import { useEffect, useState } from "preact/hooks";
import type { JSX } from "preact";
import type { PlayerClient, Rating } from "./client.js";
import type { PlayerFeed } from "./feed.js";
import type { Lang } from "./i18n.js";
import { t } from "./i18n.js";
import { headlineRating, rankLabel } from "./rating.js";

const REFRESH_MS = 60_000;

export function Identity(p: { players: PlayerClient; feed: PlayerFeed; id: string; name: string; lang: Lang }): JSX.Element {
  const [ratings, setRatings] = useState<Rating[]>([]);
  useEffect(() => {
    let alive = true;
    const read = () =>
      p.players
        .whoAmI({})
        .then((r) => alive && setRatings(r.player?.ratings ?? []))
        .catch(() => undefined);
    void read();
    // A rating is recorded as its game ends: read a moment later too, in case the
    // feed's event came first. A feed that (re)subscribes may have missed games that
    // ended while it was not open: read then too.
    const off = p.feed.on((ev) => {
      if (ev.event.case === "gameEnded") {
        void read();
        setTimeout(read, 1500);
      } else if (ev.event.case === "subscribed") {
        void read();
      }
    });
    const timer = setInterval(read, REFRESH_MS);
    return () => {
      alive = false;
      off();
      clearInterval(timer);
    };
  }, [p.players, p.feed, p.id]);
  const r = headlineRating(ratings);
  return (
    <span class="me">
      <a href={`#/player/${encodeURIComponent(p.id)}`} data-testid="me" title={t(p.lang, "profile")}>
        {p.name}
      </a>
      {r ? (
        <span data-testid="my-rating" title={`${r.boardSize}×${r.boardSize}`}>
          {" · "}
          {Math.round(r.rating)} · {rankLabel(r)}
        </span>
      ) : null}
    </span>
  );
}
