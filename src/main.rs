//! The `sessionpad` binary: everything is in the library's
//! [`sessionpad::cli::entry::main`] (why: its module's doc).

fn main() -> std::process::ExitCode {
    sessionpad::cli::entry::main()
}
