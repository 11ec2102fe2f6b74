"""LangChain's SessionsPythonREPLTool, unchanged, against `sessionpad serve`.

ENDPOINT and TOKEN come from the environment. Exits non-zero on any mismatch.
"""

import base64
import io
import os
import warnings

warnings.simplefilter("ignore", DeprecationWarning)

from langchain_azure_dynamic_sessions import SessionsPythonREPLTool  # noqa: E402

tool = SessionsPythonREPLTool(
    pool_management_endpoint=os.environ["ENDPOINT"],
    access_token_provider=lambda: os.environ["TOKEN"],
)

r = tool.execute("x = 6*7\nprint('hi')")
assert r["status"] == "Success", r
assert r["stdout"] == "hi\n", r
assert tool.execute("x")["result"] == 42, "state persists and results are typed"

content, artifact = tool._run("1/0")
assert "ZeroDivisionError" in artifact["stderr"], artifact
assert artifact["status"] == "Failure", artifact

img = tool.execute("import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")["result"]
assert img["type"] == "image" and img["format"] == "png", img
assert base64.b64decode(img["base64_data"])[:8] == b"\x89PNG\r\n\x1a\n"
content, _ = tool._run("import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()")
assert "base64_data" not in content, "LangChain strips the image data from the tool output"

meta = tool.upload_file(data=io.BytesIO(b"a,b\n1,2\n"), remote_file_path="data.csv")
assert meta.filename == "data.csv" and meta.size_in_bytes == 8, meta
assert "data.csv" in [f.filename for f in tool.list_files()]
assert tool.download_file(remote_file_path="data.csv").read() == b"a,b\n1,2\n"
assert tool.execute("open('/mnt/data/data.csv').read()")["result"] == "a,b\n1,2\n"

tool.execute("open('/mnt/data/made by code.txt', 'w').write('from the session')")
assert tool.download_file(remote_file_path="made by code.txt").read() == b"from the session"

session = tool.session_id
tool._delete_session_sync(session)  # DELETE session, api-version 2025-10-02-preview
print("LANGCHAIN OK")
