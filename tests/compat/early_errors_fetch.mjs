// Errors the pool answers before reading a large request body, seen by Node's
// built-in fetch (undici), as JavaScript agent SDKs use it. Same cases and output
// as early_errors_client.py: ENDPOINT, TOKEN, REPEAT (default 20; cases of 64 MiB
// and more a quarter as often); one line per
// case `fetch case ok=N reset=N wrong=N`, then `EARLY ERRORS OK`; exit 1 otherwise.

const endpoint = process.env.ENDPOINT.replace(/\/+$/, "");
const token = process.env.TOKEN;
const repeat = Number(process.env.REPEAT ?? "20");
const MIB = 1024 * 1024;
const version = "2025-10-02-preview";

const big = Math.max(Math.floor(repeat / 4), 1);

// [name, token, query, file bytes, repetitions, expected status, expected code]
const cases = [
  ["wrong-token-8MiB", "not-the-token", "identifier={id}", 8 * MIB, repeat, 401, "Unauthorized"],
  ["bad-identifier-16MiB", token, "identifier=x", 16 * MIB, repeat, 400, "SessionRequestValidationFailed"],
  ["wrong-token-64MiB", "not-the-token", "identifier={id}", 64 * MIB, big, 401, "Unauthorized"],
  ["too-large-129MiB", token, "identifier={id}", 129 * MIB, big, 413, "FileTooLarge"],
  ["too-large-200MiB", token, "identifier={id}", 200 * MIB, big, 413, "FileTooLarge"],
];

function url(query) {
  const id = "early-" + Math.random().toString(16).slice(2, 14);
  return `${endpoint}/files?api-version=${version}&${query.replace("{id}", id)}`;
}

let good = true;
for (const [name, tok, query, size, times, wantStatus, wantCode] of cases) {
  const data = new Uint8Array(size);
  const counts = { ok: 0, reset: 0, wrong: 0 };
  let last = "";
  for (let i = 0; i < times; i++) {
    const form = new FormData();
    form.append("file", new Blob([data], { type: "application/octet-stream" }), "big.bin");
    try {
      const r = await fetch(url(query), {
        method: "POST",
        headers: { Authorization: `Bearer ${tok}` },
        body: form,
      });
      const text = await r.text();
      let code = null;
      try {
        code = JSON.parse(text).error.code;
      } catch {}
      if (r.status === wantStatus && code === wantCode && r.headers.get("x-ms-error-code") === wantCode) {
        counts.ok++;
      } else {
        counts.wrong++;
        last = `${r.status} ${text.slice(0, 200)}`;
      }
    } catch (e) {
      counts.reset++;
      last = `${e} ${e.cause ?? ""}`;
    }
  }
  let line = `fetch ${name} ok=${counts.ok} reset=${counts.reset} wrong=${counts.wrong}`;
  if (counts.ok !== times) {
    good = false;
    line += ` last=${last}`;
  }
  console.log(line);
}
if (good) console.log("EARLY ERRORS OK");
process.exit(good ? 0 : 1);
