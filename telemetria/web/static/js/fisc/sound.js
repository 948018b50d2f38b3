// A short two-tone chime for new alerts, made with the Web Audio API (no audio file), and the user's choice to
// hear it or not, kept in localStorage. Browsers start audio only after a user gesture: the first click or key on
// the page resumes the context, so the first alert after that is heard.
const KEY = "telemetria.alerts.sound";
let ctx = null;

export function soundOn() {
  return localStorage.getItem(KEY) !== "off";
}

export function setSound(on) {
  localStorage.setItem(KEY, on ? "on" : "off");
}

function context() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  if (!ctx) ctx = new Ctx();
  return ctx;
}

// Resume audio on the first gesture (autoplay rules).
export function unlockOnGesture() {
  const unlock = () => {
    const c = context();
    if (c && c.state === "suspended") c.resume();
  };
  for (const ev of ["click", "keydown", "touchstart"]) document.addEventListener(ev, unlock, { once: true, capture: true });
}

// Play the chime when sound is on; returns whether it was played (the page records it for tests and screen readers).
export function chime() {
  if (!soundOn()) return false;
  const c = context();
  if (!c) return false;
  const t = c.currentTime;
  for (const [i, freq] of [880, 660].entries()) {
    const osc = c.createOscillator();
    const gain = c.createGain();
    osc.type = "sine";
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t + i * 0.18);
    gain.gain.exponentialRampToValueAtTime(0.25, t + i * 0.18 + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + i * 0.18 + 0.16);
    osc.connect(gain).connect(c.destination);
    osc.start(t + i * 0.18);
    osc.stop(t + i * 0.18 + 0.17);
  }
  return true;
}
