"""LangChain's SessionsBashTool, unchanged, against `sessionpad serve --container-type shell`.

ENDPOINT and TOKEN come from the environment. Exits non-zero on any mismatch.
"""

import io
import json
import os
import warnings

warnings.simplefilter("ignore", DeprecationWarning)

from langchain_azure_dynamic_sessions import SessionsBashTool  # noqa: E402


def bash_tool(**kwargs):
    return SessionsBashTool(
        pool_management_endpoint=os.environ["ENDPOINT"],
        access_token_provider=lambda: os.environ["TOKEN"],
        **kwargs,
    )


tool = bash_tool()

# Execute: the tool's content is JSON with stdout, stderr and the exit code,
# which it reads from the reply's `status` (a string).
out = json.loads(tool.invoke("echo hello"))
assert out == {"stdout": "hello\n", "stderr": "", "exitCode": 0}, out
content, artifact = tool._run("echo oops >&2; exit 3")
assert json.loads(content)["exitCode"] == 3, content
assert artifact["status"] == "3", artifact
assert artifact["result"]["stderr"] == "oops\n", artifact

# An error of the command.
out = json.loads(tool.invoke("ls /no/such/folder"))
assert out["exitCode"] == 2 and "No such file or directory" in out["stderr"], out

# Files: upload (POST files?path=/mnt/data), list, the command sees the file.
meta = tool.upload_file(data=io.BytesIO(b"one\ntwo\n"), remote_file_path="data.txt")
assert meta.filename == "data.txt" and meta.size_in_bytes == 8, meta
assert "data.txt" in [f.filename for f in tool.list_files()]
out = json.loads(tool.invoke("wc -l < /mnt/data/data.txt"))
assert out["stdout"].strip() == "2" and out["exitCode"] == 0, out

# A file the command wrote, downloaded.
out = json.loads(tool.invoke("sort -r /mnt/data/data.txt > /mnt/data/made.txt"))
assert out["exitCode"] == 0, out
assert tool.download_file(remote_file_path="made.txt").read() == b"two\none\n"
assert tool.download_file(remote_file_path="data.txt").read() == b"one\ntwo\n"

# Delete the session (DELETE session, 2025-10-02-preview): its files are gone;
# the same identifier starts over empty.
old = tool.session_id
tool._delete_session_sync(old)
again = bash_tool(session_id=old)
out = json.loads(again.invoke("ls -A /mnt/data | wc -l"))
assert out["stdout"].strip() == "0", out
print("LANGCHAIN BASH OK")
