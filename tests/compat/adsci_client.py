"""azure-dynamic-sessions-code-interpreter's CodeInterpreterTool, unchanged, against
a pool management endpoint (`sessionpad serve`, or the recording proxy in front of
one).

ENDPOINT and TOKEN (and SESSION, optional) come from the environment; the tool's own token provider
(DefaultAzureCredential) is swapped for one that returns TOKEN, as a caller with
another credential does. Prints the cells it ran as JSON lines (CELL ...) and
exits non-zero on any mismatch.
"""

import io
import json
import os

from azure_dynamic_sessions_code_interpreter import CodeInterpreterTool

# SESSION, when set, is the session identifier to use (a follower waits on it).
tool = CodeInterpreterTool(
    pool_management_endpoint=os.environ["ENDPOINT"], session_id=os.environ.get("SESSION")
)
tool.access_token_provider = lambda: os.environ["TOKEN"]


def run(code):
    print("CELL " + json.dumps(code), flush=True)
    return tool.execute(code)


r = run("y = 7 * 6\nprint('adsci', y)")
assert r["status"] == "Success", r
assert r["stdout"] == "adsci 42\n", r
assert run("y")["result"] == 42, "state persists and results are typed"
r = run("undefined_name")
assert "NameError" in r["stderr"], r

tool.upload_file(data=io.BytesIO(b"x,y\n3,4\n"), remote_file_path="points.csv")
assert "points.csv" in [f.filename for f in tool.list_files()]
assert tool.download_file(remote_file_path="points.csv").read() == b"x,y\n3,4\n"
assert run("open('/mnt/data/points.csv').read()")["result"] == "x,y\n3,4\n"
print("ADSCI OK")
