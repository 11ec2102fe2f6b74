"""Errors the pool answers before reading a large request body, seen by Python's
async HTTP clients as agent frameworks use them: `httpx.AsyncClient` (Semantic
Kernel) and `aiohttp` (autogen).

Environment: ENDPOINT, TOKEN, CLIENT (`httpx` or `aiohttp`), REPEAT (default 20).
Each case posts a multipart upload REPEAT times (the cases of 64 MiB and more a
quarter as often) and expects the status code and
Azure's JSON error (`{"error":{"code":…}}` and the `x-ms-error-code` header);
a reset connection or any other answer is a failure. Prints one line per case,
`case ok=N reset=N wrong=N`, then `EARLY ERRORS OK` when all were ok; exits 1
otherwise.
"""

import asyncio
import os
import sys
import uuid

ENDPOINT = os.environ["ENDPOINT"].rstrip("/")
TOKEN = os.environ["TOKEN"]
CLIENT = os.environ.get("CLIENT", "httpx")
REPEAT = int(os.environ.get("REPEAT", "20"))
MIB = 1024 * 1024
VERSION = "2025-10-02-preview"

BIG = max(REPEAT // 4, 1)

# (name, token, query, file bytes, repetitions, expected status, expected code).
# 200 MiB declares a Content-Length past the upload limit (413 before reading);
# 129 MiB is found too large while it is read.
CASES = [
    ("wrong-token-8MiB", "not-the-token", "identifier={id}", 8 * MIB, REPEAT, 401, "Unauthorized"),
    ("bad-identifier-16MiB", TOKEN, "identifier=x", 16 * MIB, REPEAT, 400, "SessionRequestValidationFailed"),
    ("wrong-token-64MiB", "not-the-token", "identifier={id}", 64 * MIB, BIG, 401, "Unauthorized"),
    ("too-large-129MiB", TOKEN, "identifier={id}", 129 * MIB, BIG, 413, "FileTooLarge"),
    ("too-large-200MiB", TOKEN, "identifier={id}", 200 * MIB, BIG, 413, "FileTooLarge"),
]


def url(query):
    q = query.format(id="early-" + uuid.uuid4().hex[:12])
    return f"{ENDPOINT}/files?api-version={VERSION}&{q}"


def judge(status, headers_code, body, want_status, want_code):
    try:
        import json

        code = json.loads(body)["error"]["code"]
    except Exception:
        code = None
    return status == want_status and code == want_code and headers_code == want_code


async def run_httpx(cases):
    import httpx

    results = {}
    async with httpx.AsyncClient(timeout=120) as client:
        for name, token, query, size, repeat, want_status, want_code in cases:
            data = b"\0" * size
            counts = {"ok": 0, "reset": 0, "wrong": 0}
            last = ""
            for _ in range(repeat):
                try:
                    r = await client.post(
                        url(query),
                        headers={"Authorization": f"Bearer {token}"},
                        files={"file": ("big.bin", data, "application/octet-stream")},
                    )
                    if judge(r.status_code, r.headers.get("x-ms-error-code"), r.content, want_status, want_code):
                        counts["ok"] += 1
                    else:
                        counts["wrong"] += 1
                        last = f"{r.status_code} {r.content[:200]!r}"
                except httpx.TransportError as e:
                    counts["reset"] += 1
                    last = repr(e)
            results[name] = (counts, last, repeat)
    return results


async def run_aiohttp(cases):
    import aiohttp

    results = {}
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for name, token, query, size, repeat, want_status, want_code in cases:
            data = b"\0" * size
            counts = {"ok": 0, "reset": 0, "wrong": 0}
            last = ""
            for _ in range(repeat):
                form = aiohttp.FormData()
                form.add_field("file", data, filename="big.bin", content_type="application/octet-stream")
                try:
                    async with session.post(
                        url(query), headers={"Authorization": f"Bearer {token}"}, data=form
                    ) as r:
                        body = await r.read()
                        if judge(r.status, r.headers.get("x-ms-error-code"), body, want_status, want_code):
                            counts["ok"] += 1
                        else:
                            counts["wrong"] += 1
                            last = f"{r.status} {body[:200]!r}"
                except (aiohttp.ClientError, ConnectionError) as e:
                    counts["reset"] += 1
                    last = repr(e)
            results[name] = (counts, last, repeat)
    return results


def main():
    runner = {"httpx": run_httpx, "aiohttp": run_aiohttp}[CLIENT]
    results = asyncio.run(runner(CASES))
    good = True
    for name, (counts, last, repeat) in results.items():
        line = f"{CLIENT} {name} ok={counts['ok']} reset={counts['reset']} wrong={counts['wrong']}"
        if counts["ok"] != repeat:
            good = False
            line += f" last={last}"
        print(line, flush=True)
    if good:
        print("EARLY ERRORS OK")
    sys.exit(0 if good else 1)


main()
