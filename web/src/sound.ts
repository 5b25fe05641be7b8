// Sounds: a click for a stone, and the referee's byo-yomi calls spoken (speech synthesis)
// or, where the browser has no voice, beeped. Only when the player turned sound on.
import { callWords, type Lang } from "./i18n.js";

let ctx: AudioContext | undefined;

function tone(freq: number, ms: number): void {
  try {
    ctx ??= new AudioContext();
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.15, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + ms / 1000);
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + ms / 1000);
  } catch {
    // No audio device: silence is the right fallback.
  }
}

export function stoneSound(): void {
  tone(660, 60);
}

/** Says a referee call; returns the words (the app also shows them). */
export function sayCall(lang: Lang, seconds: number | undefined, count: number | undefined): string {
  const words = callWords(lang, seconds, count);
  const synth = globalThis.speechSynthesis;
  if (synth && typeof SpeechSynthesisUtterance !== "undefined") {
    const u = new SpeechSynthesisUtterance(words);
    u.lang = lang === "zh" ? "zh-CN" : "en-US";
    synth.speak(u);
  } else {
    tone(count !== undefined ? 880 : 440, 120);
  }
  return words;
}
