// The records of the API (docs/openapi.yaml), with its JSON field names.
// Times are RFC 3339 strings in UTC; durations are the Go strings the
// service writes ("1m30s", "0s"). A field the service does not send is
// absent.
/** The statuses after which an execution never changes again. */
export const TERMINAL_STATUSES = new Set(["succeeded", "failed", "cancelled", "rejected", "interrupted"]);
