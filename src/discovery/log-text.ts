/**
 * Pure reader of the port lines agy 1.2.x writes to its log
 * (`~/.gemini/antigravity-cli/cli.log`, spike-notes §10.2):
 * `listening on random port at <p> for HTTP` and `… for HTTPS (gRPC)`.
 * The log holds no pid, so these ports are only candidates to probe.
 */

export interface LogPorts {
  http?: number;
  https?: number;
}

/** The last HTTP and HTTPS port lines of `text`; a truncated last line is ignored. */
export function parseLogPorts(text: string): LogPorts {
  const out: LogPorts = {};
  const complete = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
  for (const match of complete.matchAll(/listening on random port at (\d{1,5}) for (HTTPS|HTTP)\b/g)) {
    const port = Number(match[1]);
    if (port < 1 || port > 65535) continue;
    if (match[2] === "HTTPS") out.https = port;
    else out.http = port;
  }
  return out;
}
