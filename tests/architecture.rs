//! The import rules of `ARCHITECTURE.md`, checked on the source so that they
//! stay true: the layers of `src/` import downwards only (so the lower modules
//! form no cycle), and the named rules a newcomer can check with grep hold.
//!
//! Only code counts: comments (doc links name modules of any layer) and test
//! code (`tests.rs`, `*_tests.rs`, an inline `#[cfg(test)] mod … {`) are left
//! out, since a test may drive its module with a higher layer's parts.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may import modules of its own layer's
/// lower layers only (never its own layer's siblings, never a higher layer).
/// Kept in the same order as the picture in `ARCHITECTURE.md`.
const LAYERS: &[&[&str]] = &[
    &["protocol", "text", "dirs", "localname"],
    &["events"],
    &["ledger"],
    &["client"],
    &["mcp"],
    &["pool"],
    &["proxy"],
    &["notebook", "config", "target"],
    &["background"],
    &["session"],
    &["tui"],
    &["cli"],
];

/// One source file of the library, its top-level module and its code lines
/// (comments and test code removed), numbered as in the file.
struct Source {
    path: PathBuf,
    module: String,
    lines: Vec<(usize, String)>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// The code lines of `text`: without comment lines, trailing `//` comments
/// and an inline test module (from `#[cfg(test)]` before `mod … {` to the end).
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let all: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in all.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && all[i + 1..]
                .iter()
                .take(2)
                .any(|l| l.trim_start().contains("mod ") && l.trim_end().ends_with('{'))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let code = match line.find(" // ") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push((i + 1, code.to_string()));
    }
    out
}

/// The library's source files without test files, with their code lines.
fn sources() -> Vec<Source> {
    all_files()
        .into_iter()
        .filter(|rel| !is_test_file(rel))
        .filter_map(|rel| {
            let first = rel.components().next()?.as_os_str().to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                return None;
            }
            let text = std::fs::read_to_string(src().join(&rel)).unwrap();
            Some(Source {
                path: rel,
                module,
                lines: code_lines(&text),
            })
        })
        .collect()
}

/// The top-level modules a line names as `crate::X`.
fn crate_paths(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        let tail = &rest[at + "crate::".len()..];
        rest = tail;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `sessionpad_crate::…` or the like
        }
        let name: String = tail
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            found.push(name);
        }
    }
    found
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

#[test]
fn every_top_level_module_has_a_layer() {
    let modules: BTreeSet<String> = sources().into_iter().map(|s| s.module).collect();
    let missing: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules with no layer in LAYERS (and ARCHITECTURE.md): {missing:?}"
    );
}

#[test]
fn layers_import_downwards_only() {
    let mut breaches = Vec::new();
    for s in sources() {
        let Some(own) = layer_of(&s.module) else {
            continue;
        };
        for (n, line) in &s.lines {
            for target in crate_paths(line) {
                if target == s.module {
                    continue;
                }
                match layer_of(&target) {
                    Some(t) if t < own => {}
                    _ => breaches.push(format!(
                        "src/{}:{n}: {} imports crate::{target}",
                        s.path.display(),
                        s.module
                    )),
                }
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "imports against the layers (a module may use lower layers only; ARCHITECTURE.md):\n{}",
        breaches.join("\n")
    );
}

/// The lower modules form no cycle: the graph of top-level modules below the
/// front ends (`session`, `tui`, `cli`) has a topological order. Implied by
/// the layers, and checked on its own so that a change of `LAYERS` cannot
/// hide a cycle.
#[test]
fn the_lower_modules_form_no_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in sources() {
        for (_, line) in &s.lines {
            for target in crate_paths(line) {
                if target != s.module {
                    edges.entry(s.module.clone()).or_default().insert(target);
                }
            }
        }
    }
    let front = ["session", "tui", "cli"];
    let mut left: BTreeSet<String> = edges
        .keys()
        .chain(edges.values().flatten())
        .filter(|m| !front.contains(&m.as_str()))
        .cloned()
        .collect();
    loop {
        let leaf = left
            .iter()
            .find(|m| {
                edges
                    .get(*m)
                    .is_none_or(|to| to.iter().all(|t| !left.contains(t)))
            })
            .cloned();
        match leaf {
            Some(m) => {
                left.remove(&m);
            }
            None => break,
        }
    }
    assert!(
        left.is_empty(),
        "these modules import each other in a cycle: {left:?}"
    );
}

/// Every `.rs` file below `src/` (test files too), sorted, relative to `src/`.
fn all_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = src();
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
        .collect()
}

/// A named rule, as a newcomer checks it with grep: no line under `under`
/// (code, comments and tests alike) names `forbidden`.
fn assert_no(under: &str, forbidden: &str) {
    let mut hits = Vec::new();
    for rel in all_files() {
        let path = rel.to_string_lossy().replace('\\', "/");
        if !(path == under || path.starts_with(&format!("{under}/"))) {
            continue;
        }
        let text = std::fs::read_to_string(src().join(&rel)).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains(forbidden) {
                hits.push(format!("src/{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "`{forbidden}` in src/{under} (ARCHITECTURE.md forbids it):\n{}",
        hits.join("\n")
    );
}

#[test]
fn client_tui_and_config_know_no_pool_internals() {
    for under in ["client", "tui", "config.rs"] {
        assert_no(under, "crate::pool");
    }
}

#[test]
fn the_client_records_through_its_sink_and_never_imports_the_ledger() {
    assert_no("client", "crate::ledger");
}

#[test]
fn the_ledger_stores_protocol_types_and_never_imports_the_client() {
    assert_no("ledger", "crate::client");
}

/// What the recording proxy may use of the client: its transport, that is the
/// auth of the upstream's token, the error a failed forward maps from, and
/// the client itself. It reads what the upstream answered with
/// `protocol::reply`, the client's own readers, never with the client's
/// internals (its `executions` or `shell` modules).
const PROXY_USES_OF_CLIENT: &[&str] = &["auth", "ClientError", "SessionClient", "Target"];

/// The items code `lines` name right below `crate::client::`, each with the
/// number of the line its `crate::client::` is on:
/// `crate::client::auth::TokenSource` names `auth`,
/// `crate::client::{ClientError, shell::X}` names `ClientError` and `shell`
/// (a brace group may span lines).
fn client_items(lines: &[(usize, String)]) -> Vec<(usize, String)> {
    let text: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    let line_at = |at: usize| lines[text[..at].matches('\n').count()].0;
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("crate::client::").map(|i| from + i) {
        let tail = &text[at + "crate::client::".len()..];
        from = at + "crate::client::".len();
        match tail.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let name = ident(item);
                    if !name.is_empty() {
                        found.push((line_at(at), name));
                    }
                }
            }
            None => found.push((line_at(at), ident(tail))),
        }
    }
    found
}

#[test]
fn the_proxy_uses_the_client_only_for_transport() {
    let mut hits = Vec::new();
    for s in sources().into_iter().filter(|s| s.module == "proxy") {
        for (n, item) in client_items(&s.lines) {
            if !PROXY_USES_OF_CLIENT.contains(&item.as_str()) {
                hits.push(format!(
                    "src/{}:{n}: crate::client::{item}",
                    s.path.display()
                ));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "the proxy uses the client for more than its transport ({PROXY_USES_OF_CLIENT:?}); \
         read replies with crate::protocol::reply (ARCHITECTURE.md):\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_protocol_does_no_io() {
    for io in [
        "tokio::",
        "reqwest",
        "axum",
        "rusqlite",
        "std::fs",
        "std::net",
        "std::process",
    ] {
        assert_no("protocol", io);
    }
}

#[test]
fn the_rules_find_what_they_look_for() {
    // The checks above would pass on anything if the reading were wrong: the
    // reader must see the imports that are there.
    let all = sources();
    let tui_uses_session = all
        .iter()
        .filter(|s| s.module == "tui")
        .flat_map(|s| s.lines.iter())
        .any(|(_, l)| crate_paths(l).contains(&"session".to_string()));
    assert!(
        tui_uses_session,
        "the tui's imports of the session worker are not seen"
    );
    assert_eq!(
        crate_paths("use crate::protocol::{Execution}; crate::client::SessionClient"),
        ["protocol", "client"]
    );
    let lines = code_lines(
        "use a;\n// crate::pool\nuse b; // crate::x\n#[cfg(test)]\nmod tests {\nuse crate::cli;\n}\n",
    );
    assert_eq!(
        lines,
        [(1, "use a;".to_string()), (3, "use b;".to_string())]
    );
    // The proxy's rule sees the client parsers it once called, in each form.
    let proxy_lines = code_lines(
        "use crate::client::shell::parse_shell_reply;\nuse crate::client::{\n    ClientError,\n    executions::parse_family_a,\n};\nlet e = crate::client::executions::parse_family_b(&mut v, f);\n",
    );
    assert_eq!(
        client_items(&proxy_lines),
        [
            (1, "shell".to_string()),
            (2, "ClientError".to_string()),
            (2, "executions".to_string()),
            (6, "executions".to_string()),
        ]
    );
}

#[test]
fn impl_app_lives_only_in_tui_app() {
    let mut hits = Vec::new();
    for s in sources() {
        let path = s.path.to_string_lossy().replace('\\', "/");
        if path.starts_with("tui/app/") {
            continue;
        }
        for (n, line) in &s.lines {
            let t = line.trim_start();
            if t.starts_with("impl App ") || t.starts_with("impl App{") || t == "impl App" {
                hits.push(format!("src/{path}:{n}"));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "`impl App` outside src/tui/app/ (ARCHITECTURE.md: a pane's App-level code goes in tui/app/<pane>.rs):\n{}",
        hits.join("\n")
    );
}

/// The TUI's feature folders.
const FEATURES: &[&str] = &[
    "notebook", "files", "sessions", "pools", "picker", "pager", "help",
];

#[test]
fn a_feature_folder_imports_no_other_feature() {
    let mut found: BTreeSet<(String, String)> = BTreeSet::new();
    for s in sources() {
        let path = s.path.to_string_lossy().replace('\\', "/");
        let Some(rest) = path.strip_prefix("tui/") else {
            continue;
        };
        let Some(own) = FEATURES.iter().find(|f| rest.starts_with(&format!("{f}/"))) else {
            continue;
        };
        for (_, line) in &s.lines {
            for other in FEATURES.iter().filter(|f| *f != own) {
                if line.contains(&format!("crate::tui::{other}::"))
                    || line.contains(&format!("crate::tui::{other};"))
                    || line.contains(&format!("super::super::{other}"))
                {
                    found.insert((rest.to_string(), (*other).to_string()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a feature folder imports another feature (ARCHITECTURE.md: what two features share goes in widgets/ or the app): {found:?}"
    );
}

#[test]
fn a_feature_folder_imports_not_the_app_outside_its_tests() {
    let mut found = Vec::new();
    for s in sources() {
        let path = s.path.to_string_lossy().replace('\\', "/");
        let Some(rest) = path.strip_prefix("tui/") else {
            continue;
        };
        // Test code (left out of `sources`) drives the app; a feature's code does not.
        if !FEATURES.iter().any(|f| rest.starts_with(&format!("{f}/"))) {
            continue;
        }
        for (n, line) in &s.lines {
            if line.contains("crate::tui::app") || line.contains("super::super::app") {
                found.push(format!("src/{path}:{n}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a feature's code imports the app (ARCHITECTURE.md: the app composes features, never the other way): {found:?}"
    );
}

#[test]
fn widgets_import_no_feature_and_not_the_app() {
    for feature in FEATURES.iter().chain(&["app"]) {
        assert_no("tui/widgets", &format!("crate::tui::{feature}::"));
        assert_no("tui/widgets", &format!("crate::tui::{feature};"));
    }
}

/// The longest a function may be, in lines from its `fn` line to its closing
/// brace (`ARCHITECTURE.md`: split by responsibility, never to meet a count).
const MAX_FN_LINES: usize = 100;

/// The functions of `text` (test code left out) longer than `max` lines:
/// `(line, name, lines)`. A function ends at the first `}` line with the
/// indentation of its `fn` line (rustfmt's layout).
fn long_functions(text: &str, max: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..end].iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = ["pub", "async", "unsafe", "const", "extern"];
        if !words[..at]
            .iter()
            .all(|w| qualifiers.contains(w) || w.starts_with("pub("))
            || trimmed.starts_with("//")
        {
            continue;
        }
        let name: String = words
            .get(at + 1)
            .map(|w| {
                w.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .unwrap_or_default();
        // A declaration without a body (a trait method) ends with `;`, a
        // one-line function with `}`.
        let Some(open) = lines[i..end].iter().position(|l| {
            let l = l.trim_end();
            l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
        }) else {
            continue;
        };
        if !lines[i + open].trim_end().ends_with('{') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(len) = lines[i + open + 1..end]
            .iter()
            .position(|l| l.trim_end() == close)
        {
            let total = open + len + 2;
            if total > max {
                out.push((i + 1, name, total));
            }
        }
    }
    out
}

#[test]
fn no_function_is_over_100_lines() {
    let root = src();
    let mut long = Vec::new();
    for s in sources() {
        let text = std::fs::read_to_string(root.join(&s.path)).unwrap();
        for (line, name, lines) in long_functions(&text, MAX_FN_LINES) {
            long.push(format!(
                "src/{}:{line}: {name} ({lines} lines)",
                s.path.display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them by responsibility):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_measure_counts_what_it_should() {
    let body = "    x();\n".repeat(5);
    let text = format!(
        "pub async fn big() {{\n{body}}}\n\nfn small() {{}}\n    fn method(&self) -> u8 {{\n{body}    }}\ntrait T {{\n    fn decl(&self);\n}}\n#[cfg(test)]\nfn test_only() {{\n{body}}}\n"
    );
    let found = long_functions(&text, 3);
    assert_eq!(
        found,
        [(1, "big".to_string(), 7), (10, "method".to_string(), 7)]
    );
}
