"""A real MCP client (the official `mcp` Python SDK) against sessionpad's MCP
server: over HTTP (MODE=http: URL, KEY) or over stdio (MODE=stdio: COMMAND and
ARGS, a JSON list, start `sessionpad mcp`). Lists the tools, launches an
environment, runs Python twice in it (state persists), runs shell commands in
both forms, writes a file, and asks for an unknown environment, naming itself
`acme-agent` 0.3 in `initialize`. Prints `ENVIRONMENT <id>` and, when every
check passed, `MCP OK`."""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

# How this MCP host names itself in `initialize` (`clientInfo`): the pool
# records its commands under this name.
CLIENT_INFO = Implementation(name="acme-agent", version="0.3")


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", flush=True)
        sys.exit(1)


async def exercise(session):
    init = await session.initialize()
    check(init.server_info.name == "Microsoft Container Apps MCP Server", f"server name {init.server_info}")
    check(str(init.protocol_version) == "2025-03-26", f"protocol version {init.protocol_version}")

    tools = {t.name for t in (await session.list_tools()).tools}
    for name in ("launchShell", "launchPythonEnvironment", "runPythonCodeInRemoteEnvironment",
                 "runShellCommandInRemoteEnvironment"):
        check(name in tools, f"tool {name} in {tools}")

    launched = await session.call_tool("launchShell", {})
    env = launched.structured_content["environmentId"]
    check(isinstance(env, str) and len(env) >= 4, f"environmentId {launched}")
    print(f"ENVIRONMENT {env}", flush=True)
    other = (await session.call_tool("launchPythonEnvironment", {})).structured_content["environmentId"]
    check(other != env, "each launch is a new environment")

    first = await session.call_tool("runPythonCodeInRemoteEnvironment",
                                    {"environmentId": env, "pythonCode": "x = 6 * 7\nprint('set', x)\nx"})
    check(not first.is_error, f"first run {first}")
    check(first.structured_content["stdout"] == "set 42\n", f"stdout {first.structured_content}")
    check(first.structured_content["executionResult"] == "42", f"value {first.structured_content}")
    second = await session.call_tool(
        "runPythonCodeInRemoteEnvironment",
        {"environmentId": env,
         "pythonCode": "open('/mnt/data/from-mcp.txt', 'w').write('written by MCP')\nprint(x + 1)"})
    check(second.structured_content["stdout"] == "43\n", f"state kept {second.structured_content}")

    failed = await session.call_tool("runPythonCodeInRemoteEnvironment",
                                     {"environmentId": env, "pythonCode": "1/0"})
    check(failed.is_error and "ZeroDivisionError" in failed.structured_content["stderr"], f"error {failed}")

    line = await session.call_tool("runShellCommandInRemoteEnvironment",
                                   {"environmentId": env, "shellCommand": "cat from-mcp.txt; echo; echo oops >&2; exit 3"})
    sc = line.structured_content
    check(sc["stdout"] == "written by MCP\n" and sc["stderr"] == "oops\n" and sc["exitCode"] == 3, f"shell {sc}")
    argv = await session.call_tool("runShellCommandInRemoteEnvironment",
                                   {"environmentId": env, "execCommandAndArgs": ["printf", "%s|", "a b", "$HOME"]})
    check(argv.structured_content["stdout"] == "a b|$HOME|" and argv.structured_content["exitCode"] == 0,
          f"argv {argv.structured_content}")

    unknown = await session.call_tool("runPythonCodeInRemoteEnvironment",
                                      {"environmentId": "no-such-environment", "pythonCode": "1"})
    text = " ".join(c.text for c in unknown.content if c.type == "text")
    check(unknown.is_error and "environment ID not found" in text, f"unknown environment {unknown}")
    print("MCP OK", flush=True)


async def main():
    mode = os.environ["MODE"]
    if mode == "http":
        import httpx2
        async with httpx2.AsyncClient(headers={"x-ms-apikey": os.environ["KEY"]}, timeout=120) as http:
            async with streamable_http_client(os.environ["URL"], http_client=http) as (read, write):
                async with ClientSession(read, write, client_info=CLIENT_INFO) as session:
                    await exercise(session)
    else:
        params = StdioServerParameters(command=os.environ["COMMAND"], args=json.loads(os.environ["ARGS"]),
                                       env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, client_info=CLIENT_INFO) as session:
                await exercise(session)


asyncio.run(main())
