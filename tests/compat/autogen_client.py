"""autogen-ext's ACADynamicSessionsCodeExecutor, unchanged, against `sessionpad serve`.

ENDPOINT and TOKEN come from the environment. Runs every check, prints each
one's outcome, then `AUTOGEN OK (n/n checks)` when all passed; exits non-zero
otherwise.
"""

import asyncio
import os
import tempfile
import time
import warnings

warnings.simplefilter("ignore", DeprecationWarning)

from autogen_core import CancellationToken  # noqa: E402
from autogen_core.code_executor import CodeBlock, with_requirements  # noqa: E402
from autogen_ext.code_executors.azure import ACADynamicSessionsCodeExecutor  # noqa: E402
from azure.core.credentials import AccessToken  # noqa: E402


class StaticToken:
    """A TokenProvider handing out the serve's bearer token."""

    def get_token(self, *scopes, **kwargs):
        assert scopes[0].startswith("https://dynamicsessions.io"), scopes
        return AccessToken(os.environ["TOKEN"], int(time.time()) + 3600)


@with_requirements(global_imports=["pandas"])
def row_count(rows: list) -> int:
    """A user function the executor loads into the session first."""
    return len(pandas.DataFrame(rows))  # noqa: F821


def block(code: str) -> list:
    return [CodeBlock(code=code, language="python")]


async def main() -> int:
    work = tempfile.mkdtemp()
    token = CancellationToken()
    ex = ACADynamicSessionsCodeExecutor(
        pool_management_endpoint=os.environ["ENDPOINT"],
        credential=StaticToken(),
        work_dir=work,
        timeout=120,
    )
    checks = []

    async def check(name, coro_fn):
        try:
            await coro_fn()
            checks.append((name, None))
        except Exception as e:  # noqa: BLE001 - every failure is reported
            checks.append((name, f"{type(e).__name__}: {e}"))

    async def packages():
        # Its first block lists the packages (`import pkg_resources`); code
        # importing one that is not listed is then refused without a call.
        r = await ex.execute_code_blocks(block("import sklearn"), token)
        assert r.exit_code == 0, r
        # The names as autogen parsed them: it splits the list's text at ",\n"
        # (IPython's display of a long list); the local pool answers the list as
        # a JSON array, so they come back as one string (see issue 28's report).
        listed = " ".join(await ex.get_available_packages(token))
        for name in ["numpy", "pandas", "scikit-learn", "scipy", "seaborn", "requests", "polars"]:
            assert f"'{name}'" in listed or listed.startswith(f"{name}'"), (name, listed)

    async def hello():
        r = await ex.execute_code_blocks(block("print('hello from autogen')"), token)
        assert r.exit_code == 0 and "hello from autogen" in r.output, r

    async def state():
        r = await ex.execute_code_blocks(block("x = 6 * 7"), token)
        assert r.exit_code == 0, r
        r = await ex.execute_code_blocks(block("print(x)"), token)
        assert r.exit_code == 0 and "42" in r.output, r

    async def result():
        r = await ex.execute_code_blocks(block("x + 1"), token)
        assert r.exit_code == 0 and "43" in r.output, r

    async def cwd():
        r = await ex.execute_code_blocks(block("import os; print(os.getcwd())"), token)
        assert r.exit_code == 0 and "/mnt/data" in r.output, r

    async def failure():
        r = await ex.execute_code_blocks(block("1/0"), token)
        assert r.exit_code == 1 and "ZeroDivisionError" in r.output, r

    async def image_packages():
        code = "import sklearn, scipy, seaborn, requests\nprint(sklearn.__version__)"
        r = await ex.execute_code_blocks(block(code), token)
        assert r.exit_code == 0, r

    async def unknown_language():
        r = await ex.execute_code_blocks([CodeBlock(code="echo hi", language="bash")], token)
        assert r.exit_code == 1 and "unknown language" in r.output, r

    async def missing_package():
        r = await ex.execute_code_blocks(block("import not_a_package_here"), token)
        assert r.exit_code == 1 and "ModuleNotFoundError" in r.output, r

    async def upload():
        with open(os.path.join(work, "in.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        await ex.upload_files(["in.csv"], token)
        assert "in.csv" in await ex.get_file_list(token)
        code = "import pandas as pd\nprint(pd.read_csv('in.csv')['b'].sum())"
        r = await ex.execute_code_blocks(block(code), token)
        assert r.exit_code == 0 and "2" in r.output, r

    async def download():
        code = "open('out.txt', 'w').write('from the session')"
        r = await ex.execute_code_blocks(block(code), token)
        assert r.exit_code == 0, r
        os.remove(os.path.join(work, "in.csv"))
        paths = await ex.download_files(["out.txt"], token)
        with open(paths[0]) as f:
            assert f.read() == "from the session"

    async def functions():
        fx = ACADynamicSessionsCodeExecutor(
            pool_management_endpoint=os.environ["ENDPOINT"],
            credential=StaticToken(),
            work_dir=work,
            functions=[row_count],
        )
        # Loaded into the session's globals, as autogen's own tests call them.
        code = "print(row_count([{'a': 1}, {'a': 2}]))"
        r = await fx.execute_code_blocks(block(code), token)
        assert r.exit_code == 0 and r.output == "2\n", r

    async def restart():
        await ex.restart()
        r = await ex.execute_code_blocks(block("print('x' in globals())"), token)
        assert r.exit_code == 0 and "False" in r.output, r

    for name, fn in [
        ("package list through pkg_resources", packages),
        ("print", hello),
        ("state between blocks", state),
        ("value of the last expression", result),
        ("working directory /mnt/data", cwd),
        ("a failing block", failure),
        ("scikit-learn, SciPy, seaborn, requests", image_packages),
        ("unknown language", unknown_language),
        ("a package that is not there", missing_package),
        ("upload, list, read", upload),
        ("download", download),
        ("user functions loaded first", functions),
        ("restart: a new session", restart),
    ]:
        await check(name, fn)
    for name, err in checks:
        print(f"{'ok  ' if err is None else 'FAIL'} {name}{'' if err is None else ': ' + err}")
    passed = sum(err is None for _, err in checks)
    if passed == len(checks):
        print(f"AUTOGEN OK ({passed}/{len(checks)} checks)")
        return 0
    print(f"AUTOGEN FAILED ({passed}/{len(checks)} checks)")
    return 1


raise SystemExit(asyncio.run(main()))
