// Package web is the web UI of corral's task service, served by
// `corral serve` at / beside the JSON API: people watch and steer agent
// runs in a browser instead of reading JSON.
//
// Pages: agents (capacity meter, queue, recent success rate, next
// scheduled fire; create, edit and delete), executions (a live list with
// filters by agent, status and time), one execution (its output streamed
// live over the API's Server-Sent Events while it runs; for headless
// agent turns the tool-call timeline with durations, errors and stalls,
// the final answer, cost, turns and session id; exit status, containment
// tier, processes killed; cancel, retry, full log download), schedules
// (enable, disable, trigger now, next fire times) and a chart of runs and
// durations over time, drawn as inline SVG on the server. A headless
// turn's page reads the stream lines the service logged with
// headless.Parser and headless.Timeline, the code that built the turn's own
// result.
//
// The pages are rendered on the server with html/template; a small
// script (no build step, no framework) makes them live. Templates, style
// sheet, script and icon are embedded in the binary, so the UI works
// offline. The script only enhances: every page and every action works
// without it, minus the live updates.
//
// # Security
//
// The login page takes the service's API token, compares it in constant
// time, throttles addresses that fail repeatedly, and sets a session
// cookie (HttpOnly, SameSite=Strict, Path=/, Secure over TLS). The cookie
// holds an expiry and a random nonce signed with a key derived from the
// token: it never holds the token, it survives restarts of the service,
// and it stops working when the token changes, when it expires, and when
// its holder logs out (on this process). Every state-changing request must
// pass net/http's cross-origin protection (Sec-Fetch-Site, or Origin
// against Host) and carry the session's CSRF token, a MAC of its nonce,
// in a form field or the X-CSRF-Token header. Pages are served with a
// strict Content-Security-Policy (no inline script or style) and may not
// be framed.
//
// Mount a UI on an api.Server with api.Config.UI and
// api.Config.SessionAuth (UI.SessionAuth), which lets the browser read the
// API (the execution event stream) with its session.
package web
