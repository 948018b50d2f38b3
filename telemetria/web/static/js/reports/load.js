// A report's JSON as the API sends it, read in pieces to show how much has arrived (a track can be many
// megabytes), and refused past what a screen can hold.
import { ApiError } from "../api.js";

const SCREEN_MAX_BYTES = 96 * 1048576; // no answer bigger than this goes to the screen (a route's vehicles are not known ahead)

// Like api(); past SCREEN_MAX_BYTES it stops reading and throws a RangeError.
export async function fetchReport(url, signal, onProgress) {
  const resp = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin", signal });
  if (!resp.ok) {
    let data = null;
    try { data = await resp.json(); } catch { /* not JSON */ }
    if (resp.status === 401) location.assign("/entrar?next=" + encodeURIComponent(location.pathname + location.search));
    throw new ApiError(resp.status, data);
  }
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let body = "";
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.length;
    if (received > SCREEN_MAX_BYTES) {
      reader.cancel();
      throw new RangeError("too big for the screen");
    }
    body += decoder.decode(value, { stream: true });
    onProgress(received);
  }
  return JSON.parse(body + decoder.decode());
}
