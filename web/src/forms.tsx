// What the app's forms share: input handlers that read a number or a checkbox, and the
// board size choice (9, 13, 19).
import type { JSX } from "preact";

/** An input's value as a number, to `set`. */
export const num = (set: (v: number) => void) => (e: Event) => set(Number((e.target as HTMLInputElement).value));

/** A checkbox's state, to `set`. */
export const checked = (set: (v: boolean) => void) => (e: Event) => set((e.target as HTMLInputElement).checked);

export const BOARD_SIZES = [9, 13, 19] as const;

/** The board size select; `name` tells the forms' fields apart. */
export function BoardSizeSelect(p: { name: string; value: number; onChange: (size: number) => void }): JSX.Element {
  return (
    <select name={p.name} value={p.value} onChange={num(p.onChange)}>
      {BOARD_SIZES.map((n) => (
        <option key={n} value={n}>
          {`${n}×${n}`}
        </option>
      ))}
    </select>
  );
}
