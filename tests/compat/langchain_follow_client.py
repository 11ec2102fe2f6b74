"""LangChain's SessionsPythonREPLTool, unchanged, as the agent a person follows.

ENDPOINT, TOKEN and SESSION come from the environment. Runs one scripted cell
per line read from standard input (the test paces it: each cell is checked on
the follower's screen before the next), printing `STEP n DONE` after each; at
the end of input prints `SENT <json list of the codes sent>`.
"""

import json
import os
import sys
import warnings

warnings.simplefilter("ignore", DeprecationWarning)

from langchain_azure_dynamic_sessions import SessionsPythonREPLTool  # noqa: E402

tool = SessionsPythonREPLTool(
    pool_management_endpoint=os.environ["ENDPOINT"],
    access_token_provider=lambda: os.environ["TOKEN"],
    session_id=os.environ["SESSION"],
)

STEPS = [
    ("x_agent = 6*7\nprint('agent says', x_agent)", lambda r: r["stdout"] == "agent says 42\n"),
    ("import math\nmath.sqrt(x_agent * x_agent)", lambda r: r["result"] == 42.0),
    # The person defined y_person in the same session meanwhile.
    ("print('agent sees', y_person)", lambda r: r["stdout"] == "agent sees 5\n"),
]

sent = []
for n, line in enumerate(sys.stdin):
    if n >= len(STEPS):
        break
    code, check = STEPS[n]
    r = tool.execute(code)
    sent.append(code)
    assert r["status"] == "Success", r
    assert check(r), r
    print(f"STEP {n + 1} DONE", flush=True)
print("SENT " + json.dumps(sent), flush=True)
