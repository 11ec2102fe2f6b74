//! Terminal input to [`Action`]s, through a keymap that is data: the defaults are
//! `assets/keymap.toml`, embedded in the binary; the config file's `[keys.<mode>]`
//! tables override them key by key. Each [`Mode`] (editor, outputs, files,
//! sessions, the pager and the help overlay) has its own list of bindings, in
//! file order; the help overlay and the title hints are made from those lists.
//!
//! A few bindings are conditional, because one key means two things: Up and Down
//! walk the history only from the first or last line of the cell; elsewhere they
//! move the cursor. In the editor every key that is not bound edits the text, so
//! `q` is a letter there and quits only in the notebook.
//!
//! Running a cell must work on every terminal: F5 and Alt+Enter always arrive;
//! Ctrl+Enter arrives only where the terminal reports it (kitty keyboard protocol,
//! which the terminal guard asks for).

mod key;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui_textarea::Input;
use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};
use toml::Spanned;

pub use self::key::KeyPress;
use super::action::Action;
use super::notebook::NotebookAction;

/// The embedded default keymap.
const DEFAULTS: &str = include_str!("../../assets/keymap.toml");

/// Lines the mouse wheel scrolls per notch.
const WHEEL_LINES: i32 = 3;

/// Where the keyboard focus is; each mode has its own bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The cell editor: unbound keys edit the text.
    Editor,
    /// The notebook (the outputs of the cells run so far).
    Outputs,
    /// The file browser of `/mnt/data`.
    Files,
    /// The sessions pane.
    Sessions,
    /// The pager (one long output on the full screen), while it is open.
    Pager,
    /// The help overlay, while it is open.
    Help,
}

impl Mode {
    /// Every mode, in the order the help overlay lists them.
    pub const ALL: [Mode; 6] = [
        Mode::Editor,
        Mode::Outputs,
        Mode::Files,
        Mode::Sessions,
        Mode::Pager,
        Mode::Help,
    ];

    /// The heading of the mode in the help overlay.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Editor => "Cell editor",
            Mode::Outputs => "Notebook (Esc from the editor)",
            Mode::Files => "Files",
            Mode::Sessions => "Sessions",
            Mode::Pager => "Pager (a long output)",
            Mode::Help => "This help",
        }
    }

    /// The name of the mode's table in the keymap files.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Editor => "editor",
            Mode::Outputs => "outputs",
            Mode::Files => "files",
            Mode::Sessions => "sessions",
            Mode::Pager => "pager",
            Mode::Help => "help",
        }
    }
}

/// What the keymap needs to know to turn an event into an action, resolved
/// in one place by the app (`App::key_context`): whose bindings apply, whether
/// an open overlay takes every key as typed text, and where the editor's
/// cursor is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyContext {
    /// The mode whose bindings apply.
    pub mode: Mode,
    /// An open prompt, search or list takes every key as typed (no binding
    /// applies, the mouse does nothing).
    pub typing: bool,
    /// The editor holds no text.
    pub empty: bool,
    /// The cursor is on the first line.
    pub on_first_line: bool,
    /// The cursor is on the last line.
    pub on_last_line: bool,
}

/// One key bound to an action.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// The key.
    pub key: KeyPress,
    /// What it does.
    pub action: Action,
    /// What the help overlay says about it.
    pub desc: String,
    /// The label in the title hints, for the bindings shown there.
    pub hint: Option<String>,
}

/// The bindings of every mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    modes: BTreeMap<Mode, Vec<Binding>>,
}

/// `hint = true` (the label is the description) or `hint = "label"`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum HintSpec {
    /// Shown (true) or not.
    Flag(bool),
    /// Shown with this short label.
    Label(String),
}

impl HintSpec {
    fn label(&self, desc: &str) -> Option<String> {
        match self {
            HintSpec::Flag(false) => None,
            HintSpec::Flag(true) => Some(desc.to_string()),
            HintSpec::Label(l) => Some(l.clone()),
        }
    }
}

/// One entry of the defaults file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    on: String,
    run: String,
    desc: String,
    #[serde(default)]
    hint: Option<HintSpec>,
}

/// One mode's table of the defaults file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeTable {
    keymap: Vec<Entry>,
}

/// The config file's `[keys.<mode>]` tables: per mode, key notation to binding.
pub type KeyOverrides = BTreeMap<Mode, BTreeMap<Spanned<String>, Spanned<KeyOverride>>>;

/// What the config file binds one key to: `"run_cell"`, or
/// `{ run = "run_cell", desc = "…", hint = true }`. `"none"` takes the key's
/// default binding away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOverride {
    /// The action's name (and argument).
    pub run: String,
    /// What the help says; by default the description of the action's default key.
    pub desc: Option<String>,
    /// Whether (and how) the title hints show the key.
    pub hint: Option<HintSpec>,
}

/// The action name that unbinds a key.
const UNBIND: &str = "none";

impl<'de> Deserialize<'de> for KeyOverride {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Full {
            run: String,
            desc: Option<String>,
            hint: Option<HintSpec>,
        }
        struct OverrideVisitor;
        impl<'de> Visitor<'de> for OverrideVisitor {
            type Value = KeyOverride;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an action name or a table { run = …, desc = …, hint = … }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyOverride, E> {
                Ok(KeyOverride {
                    run: v.to_string(),
                    desc: None,
                    hint: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<KeyOverride, A::Error> {
                let full = Full::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(KeyOverride {
                    run: full.run,
                    desc: full.desc,
                    hint: full.hint,
                })
            }
        }
        deserializer.deserialize_any(OverrideVisitor)
    }
}

/// A keymap that could not be built, with the byte range of the culprit in the
/// config file (and of the earlier key it clashes with, for duplicates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeymapError {
    /// Where the problem is in the config file.
    pub span: Range<usize>,
    /// What is wrong, naming the mode table and the key.
    pub message: String,
    /// The other key, when two keys of one table are the same key.
    pub earlier: Option<Range<usize>>,
}

/// The older flat names of actions that are now a feature's (`open_pager` is
/// `pager open`): config files written with them keep working.
const RENAMED: &[(&str, &str)] = &[
    ("help", "help open"),
    ("close_help", "help close"),
    ("help_scroll", "help scroll"),
    ("open_pager", "pager open"),
    ("close_pager", "pager close"),
    ("pager_scroll", "pager scroll"),
    ("pager_page", "pager page"),
    ("pager_top", "pager top"),
    ("pager_bottom", "pager bottom"),
    ("pager_search", "pager search"),
    ("pager_next", "pager next"),
    ("pager_prev", "pager prev"),
];

/// Parses `run` text: an action name, optionally a feature's action name
/// after it (`files down`, `pager scroll 1`) and one number or word of
/// argument (`scroll_lines -1`). The older names of [`RENAMED`] are read as
/// their new ones. The notebook's actions are named without a prefix
/// (`run_cell`, `select_cell -1`) and read as `Action::Notebook(..)`.
///
/// # Errors
///
/// A message quoting `run`: it is empty, has more than three words, or names
/// no action (or an argument the action does not take).
pub fn parse_run(run: &str) -> Result<Action, String> {
    let mut words: Vec<&str> = run.split_whitespace().collect();
    let Some(&first) = words.first() else {
        return Err("run is empty".to_string());
    };
    // `help` alone is the older name of `help open`; `help close` is new.
    let older = |(old, new): &&(&str, &str)| {
        *old == first && !(words.len() > 1 && new.starts_with(&format!("{first} ")))
    };
    if let Some((_, new)) = RENAMED.iter().find(older) {
        words.splice(0..1, new.split_whitespace());
    }
    if words.len() > 3 {
        return Err(format!("run {run:?}: too many words"));
    }
    // The last word is the innermost value; each word before it names the
    // variant holding what follows (`{pager = {scroll = 1}}`).
    let mut rest = words.iter().rev();
    let last = rest.next().copied().unwrap_or_default();
    let mut value = if words.len() == 1 {
        toml::Value::String(last.to_string())
    } else {
        last.parse::<i64>().map_or_else(
            |_| toml::Value::String(last.to_string()),
            toml::Value::Integer,
        )
    };
    for name in rest {
        value = toml::Value::Table(toml::Table::from_iter([((*name).to_string(), value)]));
    }
    // The notebook's names are read by its own enum, so that a wrong
    // argument is reported by the enum that knows the name (serde's
    // untagged fallback would hide why neither enum took it).
    let first = words.first().copied().unwrap_or_default();
    let notebook = variant_names::<NotebookAction>();
    let action = if notebook.contains(&first) {
        NotebookAction::deserialize(value).map(Action::Notebook)
    } else if variant_names::<Action>().contains(&first) {
        Action::deserialize(value)
    } else {
        let names: Vec<String> = variant_names::<Action>()
            .iter()
            .chain(notebook)
            .map(|name| format!("`{name}`"))
            .collect();
        return Err(format!(
            "run {run:?}: unknown variant `{first}`, expected one of {}",
            names.join(", ")
        ));
    };
    action.map_err(|e| format!("run {run:?}: {}", e.to_string().trim()))
}

/// The names an enum's `Deserialize` takes (its variants, as serde's derive
/// lists them): asked for with a name it cannot take, the derive hands the
/// list to the error it makes, which keeps it.
fn variant_names<T: de::DeserializeOwned>() -> &'static [&'static str] {
    /// An error that keeps the names an unknown variant was not one of.
    #[derive(Debug)]
    struct Names(&'static [&'static str]);
    impl fmt::Display for Names {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "one of {:?}", self.0)
        }
    }
    impl std::error::Error for Names {}
    impl de::Error for Names {
        fn custom<T: fmt::Display>(_: T) -> Self {
            Self(&[])
        }
        fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
            Self(expected)
        }
    }
    let probe = de::value::StrDeserializer::<Names>::new("");
    T::deserialize(probe).err().map_or(&[], |names| names.0)
}

impl Keymap {
    /// The embedded defaults.
    ///
    /// # Errors
    ///
    /// The embedded file is broken (a test makes sure it is not).
    pub fn builtin() -> Result<Self, String> {
        Self::from_defaults(DEFAULTS)
    }

    /// Parses a defaults file (the format of `assets/keymap.toml`).
    fn from_defaults(text: &str) -> Result<Self, String> {
        let tables: BTreeMap<Mode, ModeTable> =
            toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        let mut modes = BTreeMap::new();
        for (mode, table) in tables {
            let mut bindings: Vec<Binding> = Vec::new();
            for entry in table.keymap {
                let key: KeyPress = entry.on.parse()?;
                if bindings.iter().any(|b| b.key == key) {
                    return Err(format!("[{}] binds {:?} twice", mode.name(), entry.on));
                }
                bindings.push(Binding {
                    key,
                    action: parse_run(&entry.run)?,
                    hint: entry.hint.and_then(|h| h.label(&entry.desc)),
                    desc: entry.desc,
                });
            }
            modes.insert(mode, bindings);
        }
        Ok(Self { modes })
    }

    /// The defaults with the config file's overrides merged in, key by key: a key
    /// bound again replaces its default binding in place, a new key is added at
    /// the end of its mode, `"none"` removes the key.
    ///
    /// # Errors
    ///
    /// A key that does not parse, an unknown action, or two keys of one
    /// table that are the same key (`<C-q>` and `<c-q>`), with where they are.
    pub fn with_overrides(overrides: &KeyOverrides) -> Result<Self, KeymapError> {
        let mut keymap = Self::builtin().map_err(|message| KeymapError {
            span: 0..0,
            message: format!("the embedded keymap: {message}"),
            earlier: None,
        })?;
        for (&mode, table) in overrides {
            keymap.merge(mode, table)?;
        }
        Ok(keymap)
    }

    fn merge(
        &mut self,
        mode: Mode,
        table: &BTreeMap<Spanned<String>, Spanned<KeyOverride>>,
    ) -> Result<(), KeymapError> {
        let mut entries: Vec<_> = table.iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        let mut seen: Vec<(KeyPress, &Spanned<String>)> = Vec::new();
        let at = |span: Range<usize>, message: String| KeymapError {
            span,
            message: format!("[keys.{}] {message}", mode.name()),
            earlier: None,
        };
        for (on, value) in entries {
            let key: KeyPress = on.get_ref().parse().map_err(|e| at(on.span(), e))?;
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
                let mut e = at(
                    on.span(),
                    format!(
                        "key {:?} is the same key as {:?}",
                        on.get_ref(),
                        first.get_ref()
                    ),
                );
                e.earlier = Some(first.span());
                return Err(e);
            }
            seen.push((key, on));
            let over = value.get_ref();
            if over.run.trim() == UNBIND {
                self.unbind(mode, key);
                continue;
            }
            let action = parse_run(&over.run)
                .map_err(|e| at(value.span(), format!("key {:?}: {e}", on.get_ref())))?;
            let desc = over
                .desc
                .clone()
                .unwrap_or_else(|| self.describe(mode, &action, &over.run));
            let hint = over.hint.as_ref().and_then(|h| h.label(&desc));
            self.bind(
                mode,
                Binding {
                    key,
                    action,
                    desc,
                    hint,
                },
            );
        }
        Ok(())
    }

    /// The description of `action`'s first binding in `mode` (else in any mode),
    /// for a user binding that gives none.
    fn describe(&self, mode: Mode, action: &Action, run: &str) -> String {
        let in_mode = self.bindings(mode).iter();
        let anywhere = self.modes.values().flatten();
        in_mode
            .chain(anywhere)
            .find(|b| &b.action == action)
            .map_or_else(|| run.trim().replace('_', " "), |b| b.desc.clone())
    }

    fn bind(&mut self, mode: Mode, binding: Binding) {
        let list = self.modes.entry(mode).or_default();
        match list.iter_mut().find(|b| b.key == binding.key) {
            Some(slot) => *slot = binding,
            None => list.push(binding),
        }
    }

    fn unbind(&mut self, mode: Mode, key: KeyPress) {
        if let Some(list) = self.modes.get_mut(&mode) {
            list.retain(|b| b.key != key);
        }
    }

    /// The bindings of `mode`, in order.
    pub fn bindings(&self, mode: Mode) -> &[Binding] {
        self.modes.get(&mode).map_or(&[], Vec::as_slice)
    }

    /// The first key bound to `action` in the first of `modes` that binds it,
    /// as the help writes it (`F2`, `Ctrl+O`), for hints that name a key.
    pub fn key_for(&self, action: &Action, modes: &[Mode]) -> Option<String> {
        modes.iter().find_map(|&mode| {
            self.bindings(mode)
                .iter()
                .find(|b| b.action == *action)
                .map(|b| b.key.to_string())
        })
    }

    /// The binding of `key` in `mode`.
    pub fn lookup(&self, mode: Mode, key: KeyPress) -> Option<&Binding> {
        let list = self.bindings(mode);
        let find = |k: KeyPress| list.iter().find(|b| b.key == k);
        find(key).or_else(|| key.lowercase().and_then(find))
    }

    /// The title hints of `mode`: the keys of each hint label, labels in order of
    /// first appearance (`F5/Alt+Enter run`).
    pub fn hints(&self, mode: Mode) -> Vec<(String, String)> {
        let mut groups: Vec<(Vec<String>, String)> = Vec::new();
        for b in self.bindings(mode) {
            let Some(label) = &b.hint else { continue };
            match groups.iter_mut().find(|(_, l)| l == label) {
                Some((keys, _)) => keys.push(b.key.to_string()),
                None => groups.push((vec![b.key.to_string()], label.clone())),
            }
        }
        groups
            .into_iter()
            .map(|(keys, label)| (keys.join("/"), label))
            .collect()
    }

    /// As many hints of `mode` as fit in `width` columns, joined by ` · `.
    pub fn hint_line(&self, mode: Mode, width: usize) -> String {
        let mut line = String::new();
        for (keys, label) in self.hints(mode) {
            let item = format!("{keys} {label}");
            let sep = if line.is_empty() { "" } else { " · " };
            let wanted = line.chars().count() + sep.chars().count() + item.chars().count();
            if wanted > width {
                break;
            }
            line.push_str(sep);
            line.push_str(&item);
        }
        line
    }

    /// The action for a terminal event, if it means anything.
    pub fn action_for_event(&self, event: Event, ctx: KeyContext) -> Option<Action> {
        match event {
            Event::Key(key) => self.action_for_key(key, ctx),
            Event::Mouse(_) if ctx.typing => None,
            Event::Mouse(mouse) => action_for_mouse(mouse, ctx),
            Event::Paste(text) => Some(Action::Paste(text)),
            Event::Resize(..) => Some(Action::Resize),
            Event::FocusGained | Event::FocusLost => None,
        }
    }

    /// The action for a key press: its binding in the current mode when the
    /// binding's condition holds; else, in the editor, the key edits the text.
    /// While an overlay takes every key (a prompt, the history search, the
    /// picker, the pools chooser), every key is typed there, except the
    /// editor's quit key (Ctrl+Q): it quits from anywhere (asking first when
    /// that would leave something behind, and confirming that question).
    pub fn action_for_key(&self, key: KeyEvent, ctx: KeyContext) -> Option<Action> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        if ctx.typing {
            let quit = self
                .lookup(Mode::Editor, KeyPress::from(key))
                .is_some_and(|b| b.action == Action::Quit);
            return Some(if quit {
                Action::Quit
            } else {
                Action::Edit(Input::from(key))
            });
        }
        let mode = ctx.mode;
        if let Some(binding) = self.lookup(mode, KeyPress::from(key))
            && applies(&binding.action, ctx)
        {
            return Some(binding.action.clone());
        }
        (mode == Mode::Editor).then(|| Action::Edit(Input::from(key)))
    }
}

impl Default for Keymap {
    /// The embedded defaults; an empty keymap if they were broken (logged), so
    /// that the editor still takes text.
    fn default() -> Self {
        Self::builtin().unwrap_or_else(|e| {
            tracing::error!("the embedded keymap is broken: {e}");
            Self {
                modes: BTreeMap::new(),
            }
        })
    }
}

/// The conditions of conditional bindings: the history keys act only at the edge
/// of the cell (so Up in the middle of a cell moves the cursor).
fn applies(action: &Action, ctx: KeyContext) -> bool {
    match action {
        Action::Notebook(NotebookAction::HistoryPrev) => ctx.empty || ctx.on_first_line,
        Action::Notebook(NotebookAction::HistoryNext) => ctx.on_last_line,
        _ => true,
    }
}

/// The action for a terminal event with `keymap` (see [`Keymap::action_for_event`]).
pub fn action_for_event(keymap: &Keymap, event: Event, ctx: KeyContext) -> Option<Action> {
    keymap.action_for_event(event, ctx)
}

fn action_for_mouse(mouse: MouseEvent, ctx: KeyContext) -> Option<Action> {
    let lines = match mouse.kind {
        MouseEventKind::ScrollUp => -WHEEL_LINES,
        MouseEventKind::ScrollDown => WHEEL_LINES,
        MouseEventKind::Down(MouseButton::Left)
            if !matches!(ctx.mode, Mode::Help | Mode::Pager) =>
        {
            return Some(Action::Click {
                column: mouse.column,
                row: mouse.row,
            });
        }
        _ => return None,
    };
    Some(if ctx.mode == Mode::Help {
        Action::Help(crate::tui::help::HelpAction::Scroll(lines))
    } else {
        Action::ScrollLines(lines)
    })
}

#[cfg(test)]
mod tests;
