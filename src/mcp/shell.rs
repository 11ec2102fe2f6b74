//! Shell commands of the MCP tool `runShellCommandInRemoteEnvironment`: the
//! two forms the service takes (`shellCommand`, a line for `/bin/sh -c`, or
//! `execCommandAndArgs`, an argument vector run without a shell; `aca-api.md`
//! §4.7, §13) and how a command runs through a Python session's kernel until
//! the pool runs shell commands itself (the seam is
//! [`super::SessionHost::run_shell`]).

use std::time::Duration;

use super::host::HostError;
use crate::protocol::Execution;

/// A shell command as the MCP tool (and the Shell pools' `executions` body)
/// gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellCommand {
    /// `shellCommand`: one line, run by `/bin/sh -c` (pipes, `&&`, globs).
    Line(String),
    /// `execCommandAndArgs`: the program and its arguments, run without a
    /// shell (no quoting needed); never empty.
    Argv(Vec<String>),
}

/// Exit code given to a command whose program does not exist, as a shell does.
const NOT_FOUND: i64 = 127;

/// Exit code given to a command whose program may not be run, as a shell does.
const NOT_EXECUTABLE: i64 = 126;

impl ShellCommand {
    /// The command of the tool's arguments: exactly one of `shellCommand` and
    /// `execCommandAndArgs` (a non-empty list).
    ///
    /// # Errors
    ///
    /// A sentence naming what is wrong: both given, neither, an empty list or
    /// an empty line.
    pub fn from_arguments(
        shell_command: Option<String>,
        exec_command_and_args: Option<Vec<String>>,
    ) -> Result<Self, String> {
        match (shell_command, exec_command_and_args) {
            (Some(_), Some(_)) => {
                Err("give either shellCommand or execCommandAndArgs, not both".into())
            }
            (None, None) => Err("shellCommand or execCommandAndArgs is required".into()),
            (Some(line), None) if line.trim().is_empty() => Err("shellCommand is empty".into()),
            (Some(line), None) => Ok(Self::Line(line)),
            (None, Some(argv)) if argv.is_empty() => Err("execCommandAndArgs is empty".into()),
            (None, Some(argv)) => Ok(Self::Argv(argv)),
        }
    }

    /// Python code that runs this command as a child process of the session's
    /// kernel (so in the kernel's sandbox, limits and working directory
    /// `/mnt/data`), with standard input closed, writes its standard output
    /// and error to the cell's, and whose value is the exit code (127 when the
    /// program is missing, 126 when it may not be run, `-N` for a signal `N`).
    /// The command travels as a JSON literal, which Python reads as the same
    /// string or list: nothing in it is ever parsed as code. The helper
    /// leaves no name behind in the session's namespace.
    pub fn as_python(&self) -> String {
        let (command, shell) = match self {
            Self::Line(line) => (serde_json::Value::from(line.as_str()), "True"),
            Self::Argv(argv) => (serde_json::Value::from(argv.clone()), "False"),
        };
        format!(
            r#"def _sessionpad_shell(command, shell):
    import subprocess, sys
    try:
        done = subprocess.run(command, shell=shell, stdin=subprocess.DEVNULL, capture_output=True)
    except FileNotFoundError as e:
        sys.stderr.write(f"{{e.filename}}: command not found\n")
        return {NOT_FOUND}
    except PermissionError as e:
        sys.stderr.write(f"{{e.filename}}: permission denied\n")
        return {NOT_EXECUTABLE}
    sys.stdout.write(done.stdout.decode("utf-8", "replace"))
    sys.stderr.write(done.stderr.decode("utf-8", "replace"))
    return done.returncode
try:
    _sessionpad_exit = _sessionpad_shell({command}, {shell})
finally:
    del _sessionpad_shell
globals().pop("_sessionpad_exit")"#
        )
    }
}

/// The outcome of a shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRun {
    /// The exit code; `None` when the command did not finish (the execution
    /// limit stopped it, or the session's kernel died): `stderr` says why.
    pub exit_code: Option<i64>,
    /// Its standard output (UTF-8, invalid bytes replaced).
    pub stdout: String,
    /// Its standard error, and why it did not finish when it did not.
    pub stderr: String,
    /// How long it ran.
    pub duration: Duration,
    /// What it tried to reach through a local pool's egress proxy (issue
    /// 29; [`Execution::network`]).
    pub network: Vec<crate::protocol::egress::NetworkAttempt>,
}

impl ShellRun {
    /// The outcome of a command run through [`ShellCommand::as_python`]: the
    /// exit code is the execution's value (its JSON number, or its text where
    /// the pool sent Jupyter's `text/plain`).
    ///
    /// # Errors
    ///
    /// [`HostError`] when the execution succeeded but its value is not an
    /// integer (the session's Python did not run the helper as written).
    pub fn from_python(exec: Execution) -> Result<Self, HostError> {
        let exit_code = if exec.succeeded() {
            let value = exec.result.as_ref();
            let code = value
                .and_then(|v| v.json.as_ref().and_then(serde_json::Value::as_i64))
                .or_else(|| value.and_then(|v| v.text.trim().parse().ok()));
            match code {
                Some(code) => Some(code),
                None => {
                    return Err(HostError(format!(
                        "the session did not report the command's exit code (value {:?})",
                        value.map(|v| v.text.as_str())
                    )));
                }
            }
        } else {
            None
        };
        Ok(Self {
            exit_code,
            stdout: exec.stdout,
            stderr: exec.stderr,
            duration: exec.duration,
            network: exec.network,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ExecutionStatus, ExecutionValue};
    #[test]
    fn exactly_one_form_of_command_is_taken() {
        assert_eq!(
            ShellCommand::from_arguments(Some("ls".into()), None),
            Ok(ShellCommand::Line("ls".into()))
        );
        assert_eq!(
            ShellCommand::from_arguments(None, Some(vec!["ls".into(), "-l".into()])),
            Ok(ShellCommand::Argv(vec!["ls".into(), "-l".into()]))
        );
        for (line, argv) in [
            (Some("ls".to_string()), Some(vec!["ls".to_string()])),
            (None, None),
            (Some("  ".into()), None),
            (None, Some(vec![])),
        ] {
            assert!(ShellCommand::from_arguments(line, argv).is_err());
        }
    }

    #[test]
    fn the_command_reaches_python_as_a_literal_only() {
        let code = ShellCommand::Line("echo \"$HOME\"\n'''\"\"\" \\ }{".into()).as_python();
        assert!(
            code.contains(r#"_sessionpad_shell("echo \"$HOME\"\n'''\"\"\" \\ }{", True)"#),
            "{code}"
        );
        let code = ShellCommand::Argv(vec!["printf".into(), "%s\n".into()]).as_python();
        assert!(
            code.contains(r#"_sessionpad_shell(["printf","%s\n"], False)"#),
            "{code}"
        );
    }

    fn exec(status: ExecutionStatus, value: Option<ExecutionValue>) -> Execution {
        Execution {
            execution_count: None,
            id: None,
            status,
            stdout: "out".into(),
            stderr: "err".into(),
            result: value,
            images: vec![],
            duration: Duration::from_millis(3),
            network: Vec::new(),
        }
    }

    #[test]
    fn the_exit_code_is_the_value_as_json_or_text() {
        let json = ExecutionValue {
            text: "2".into(),
            json: Some(serde_json::json!(2)),
        };
        let run = ShellRun::from_python(exec(ExecutionStatus::Succeeded, Some(json))).unwrap();
        assert_eq!(run.exit_code, Some(2));
        assert_eq!((run.stdout.as_str(), run.stderr.as_str()), ("out", "err"));
        let text = ExecutionValue::text("-9");
        let run = ShellRun::from_python(exec(ExecutionStatus::Succeeded, Some(text))).unwrap();
        assert_eq!(run.exit_code, Some(-9));
        let run = ShellRun::from_python(exec(ExecutionStatus::Failed, None)).unwrap();
        assert_eq!(run.exit_code, None);
        let odd = ExecutionValue::text("'x'");
        assert!(ShellRun::from_python(exec(ExecutionStatus::Succeeded, Some(odd))).is_err());
        assert!(ShellRun::from_python(exec(ExecutionStatus::Succeeded, None)).is_err());
    }
}
