//! Keymap tests: the embedded defaults, key resolution per mode, the conditional
//! history keys, merging overrides and the errors of broken ones.

use crossterm::event::{KeyCode, KeyModifiers};
use pretty_assertions::assert_eq;

use super::*;

fn ctx(empty: bool, first: bool, last: bool, mode: Mode) -> KeyContext {
    KeyContext {
        mode,
        typing: false,
        empty,
        on_first_line: first,
        on_last_line: last,
    }
}

const EMPTY: KeyContext = KeyContext {
    mode: Mode::Editor,
    typing: false,
    empty: true,
    on_first_line: true,
    on_last_line: true,
};
const MIDDLE: KeyContext = KeyContext {
    mode: Mode::Editor,
    typing: false,
    empty: false,
    on_first_line: false,
    on_last_line: false,
};

fn notebook() -> KeyContext {
    ctx(true, true, true, Mode::Outputs)
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn defaults() -> Keymap {
    match Keymap::builtin() {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    }
}

fn merged(toml_text: &str) -> Result<Keymap, KeymapError> {
    let overrides: KeyOverrides = match toml::from_str(toml_text) {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    Keymap::with_overrides(&overrides)
}

#[test]
fn the_embedded_defaults_parse_and_cover_every_mode() {
    let keymap = defaults();
    for mode in Mode::ALL {
        assert!(keymap.modes.contains_key(&mode), "{mode:?}");
    }
    assert!(!keymap.bindings(Mode::Editor).is_empty());
    assert!(!keymap.bindings(Mode::Outputs).is_empty());
    assert_eq!(Keymap::default(), keymap);
}

#[test]
fn run_keys() {
    let keymap = defaults();
    for k in [
        key(KeyCode::F(5), KeyModifiers::NONE),
        key(KeyCode::Enter, KeyModifiers::ALT),
        key(KeyCode::Enter, KeyModifiers::CONTROL),
        key(KeyCode::Char('j'), KeyModifiers::CONTROL),
    ] {
        assert_eq!(
            keymap.action_for_key(k, MIDDLE),
            Some(Action::Notebook(NotebookAction::RunCell)),
            "{k:?}"
        );
    }
    let enter = keymap.action_for_key(key(KeyCode::Enter, KeyModifiers::NONE), MIDDLE);
    assert_eq!(enter, Some(Action::Notebook(NotebookAction::Newline)));
    let shift_enter = keymap.action_for_key(key(KeyCode::Enter, KeyModifiers::SHIFT), MIDDLE);
    assert!(
        matches!(shift_enter, Some(Action::Edit(_))),
        "{shift_enter:?}"
    );
}

#[test]
fn q_quits_only_with_the_notebook_focused() {
    let keymap = defaults();
    let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
    // In the editor `q` is text, even in an empty editor (`q = 1`).
    assert!(matches!(
        keymap.action_for_key(q, EMPTY),
        Some(Action::Edit(_))
    ));
    assert!(matches!(
        keymap.action_for_key(q, MIDDLE),
        Some(Action::Edit(_))
    ));
    let esc = key(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(
        keymap.action_for_key(esc, MIDDLE),
        Some(Action::Notebook(NotebookAction::FocusOutputs))
    );
    assert_eq!(keymap.action_for_key(q, notebook()), Some(Action::Quit));
    assert_eq!(
        keymap.action_for_key(esc, notebook()),
        Some(Action::FocusEditor)
    );
    let ctrl_q = key(KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert_eq!(keymap.action_for_key(ctrl_q, MIDDLE), Some(Action::Quit));
    assert_eq!(
        keymap.action_for_key(ctrl_q, notebook()),
        Some(Action::Quit)
    );
    // Caps Lock or Shift held: the terminal may send an upper-case letter.
    let ctrl_shift_q = key(
        KeyCode::Char('Q'),
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    );
    assert_eq!(
        keymap.action_for_key(ctrl_shift_q, MIDDLE),
        Some(Action::Quit)
    );
    // Unbound keys do nothing in the notebook.
    let z = key(KeyCode::Char('z'), KeyModifiers::NONE);
    assert_eq!(keymap.action_for_key(z, notebook()), None);
}

#[test]
fn up_recalls_history_only_from_the_first_line() {
    let keymap = defaults();
    let up = key(KeyCode::Up, KeyModifiers::NONE);
    let down = key(KeyCode::Down, KeyModifiers::NONE);
    assert_eq!(
        keymap.action_for_key(up, EMPTY),
        Some(Action::Notebook(NotebookAction::HistoryPrev))
    );
    assert!(matches!(
        keymap.action_for_key(up, MIDDLE),
        Some(Action::Edit(_))
    ));
    let last = ctx(false, false, true, Mode::Editor);
    assert_eq!(
        keymap.action_for_key(down, last),
        Some(Action::Notebook(NotebookAction::HistoryNext))
    );
    assert!(matches!(
        keymap.action_for_key(down, MIDDLE),
        Some(Action::Edit(_))
    ));
    // Shift+Up selects text; only bare arrows walk the history.
    let shift_up = key(KeyCode::Up, KeyModifiers::SHIFT);
    assert!(matches!(
        keymap.action_for_key(shift_up, EMPTY),
        Some(Action::Edit(_))
    ));
}

#[test]
fn help_opens_with_f1_anywhere_and_question_mark_in_the_notebook() {
    let keymap = defaults();
    let f1 = key(KeyCode::F(1), KeyModifiers::NONE);
    let question = key(KeyCode::Char('?'), KeyModifiers::NONE);
    let help = ctx(false, true, true, Mode::Help);
    assert_eq!(
        keymap.action_for_key(f1, MIDDLE),
        Some(Action::Help(crate::tui::help::HelpAction::Open))
    );
    assert_eq!(
        keymap.action_for_key(f1, notebook()),
        Some(Action::Help(crate::tui::help::HelpAction::Open))
    );
    assert_eq!(
        keymap.action_for_key(question, notebook()),
        Some(Action::Help(crate::tui::help::HelpAction::Open))
    );
    assert!(matches!(
        keymap.action_for_key(question, MIDDLE),
        Some(Action::Edit(_))
    ));
    for close in [
        KeyCode::Esc,
        KeyCode::Char('?'),
        KeyCode::F(1),
        KeyCode::Char('q'),
    ] {
        let k = key(close, KeyModifiers::NONE);
        assert_eq!(
            keymap.action_for_key(k, help),
            Some(Action::Help(crate::tui::help::HelpAction::Close)),
            "{close:?}"
        );
    }
    let j = key(KeyCode::Char('j'), KeyModifiers::NONE);
    assert_eq!(
        keymap.action_for_key(j, help),
        Some(Action::Help(crate::tui::help::HelpAction::Scroll(1)))
    );
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    };
    assert_eq!(
        keymap.action_for_event(Event::Mouse(wheel), help),
        Some(Action::Help(crate::tui::help::HelpAction::Scroll(
            WHEEL_LINES
        )))
    );
    assert_eq!(
        keymap.action_for_event(Event::Mouse(wheel), MIDDLE),
        Some(Action::ScrollLines(WHEEL_LINES))
    );
}

#[test]
fn editing_keys_of_the_editor() {
    let keymap = defaults();
    let ctrl = |c| key(KeyCode::Char(c), KeyModifiers::CONTROL);
    assert_eq!(
        keymap.action_for_key(ctrl('z'), MIDDLE),
        Some(Action::Notebook(NotebookAction::Undo))
    );
    assert_eq!(
        keymap.action_for_key(ctrl('e'), MIDDLE),
        Some(Action::Notebook(NotebookAction::ExternalEditor))
    );
    // Readline's keys, as IPython has them (issue 27): Ctrl+_ undoes (sent as
    // the byte crossterm reads as Ctrl+7), Ctrl+U and Ctrl+K kill, Ctrl+Y
    // yanks; redo is Alt+Z (Ctrl+Shift+Z where the terminal reports it).
    let editor = |k| keymap.action_for_key(k, MIDDLE);
    let notebook = |a| Some(Action::Notebook(a));
    assert_eq!(editor(ctrl('7')), notebook(NotebookAction::Undo));
    assert_eq!(editor(ctrl('_')), notebook(NotebookAction::Undo));
    assert_eq!(editor(ctrl('u')), notebook(NotebookAction::KillToStart));
    assert_eq!(editor(ctrl('k')), notebook(NotebookAction::KillToEnd));
    assert_eq!(editor(ctrl('y')), notebook(NotebookAction::Yank));
    assert_eq!(
        editor(key(KeyCode::Char('z'), KeyModifiers::ALT)),
        notebook(NotebookAction::Redo)
    );
    let ctrl_shift_z = key(
        KeyCode::Char('Z'),
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    );
    assert_eq!(editor(ctrl_shift_z), notebook(NotebookAction::Redo));
    assert_eq!(
        editor(key(KeyCode::BackTab, KeyModifiers::SHIFT)),
        notebook(NotebookAction::Dedent)
    );
    assert_eq!(
        editor(ctrl('c')),
        notebook(NotebookAction::ClearOrInterrupt)
    );
}

#[test]
fn the_pager_prompt_takes_every_key() {
    let keymap = defaults();
    let typing = KeyContext {
        typing: true,
        ..ctx(false, true, true, Mode::Pager)
    };
    let q = key(KeyCode::Char('q'), KeyModifiers::NONE);
    assert!(matches!(
        keymap.action_for_key(q, typing),
        Some(Action::Edit(_))
    ));
    let pager = ctx(false, true, true, Mode::Pager);
    assert_eq!(pager.mode, Mode::Pager);
}

#[test]
fn releases_are_ignored() {
    let keymap = defaults();
    let mut k = key(KeyCode::F(5), KeyModifiers::NONE);
    k.kind = KeyEventKind::Release;
    assert_eq!(keymap.action_for_key(k, EMPTY), None);
}

#[test]
fn the_notebooks_actions_keep_their_flat_names() {
    let notebook = |a| Ok(Action::Notebook(a));
    assert_eq!(
        parse_run("select_cell -1"),
        notebook(NotebookAction::SelectCell(-1))
    );
    assert_eq!(parse_run("stop_cell"), notebook(NotebookAction::StopCell));
    assert_eq!(parse_run("interrupt"), notebook(NotebookAction::Interrupt));
    assert_eq!(
        parse_run("run_cell_with_stdin"),
        notebook(NotebookAction::RunCellWithStdin)
    );
    // A wrong argument is said by the enum that knows the name.
    let bad = parse_run("select_cell x").unwrap_err();
    assert!(
        bad.contains("select_cell x") && bad.contains("i32"),
        "{bad}"
    );
    let bad = parse_run("files frobnicate").unwrap_err();
    assert!(bad.contains("frobnicate") && bad.contains("down"), "{bad}");
    // The unknown name's message lists both halves' names.
    let unknown = parse_run("frobnicate").unwrap_err();
    assert!(
        unknown.contains("`quit`") && unknown.contains("`stop_cell`"),
        "{unknown}"
    );
    // The notebook is not a name of its own.
    assert!(parse_run("notebook run_cell").is_err());
}

#[test]
fn run_names_actions_with_an_optional_argument() {
    assert_eq!(
        parse_run("run_cell"),
        Ok(Action::Notebook(NotebookAction::RunCell))
    );
    assert_eq!(parse_run("scroll_lines -3"), Ok(Action::ScrollLines(-3)));
    assert_eq!(parse_run(" quit "), Ok(Action::Quit));
    let unknown = parse_run("frobnicate").unwrap_err();
    assert!(
        unknown.contains("frobnicate") && unknown.contains("run_cell"),
        "{unknown}"
    );
    // Actions only the terminal produces cannot be bound.
    assert!(parse_run("paste").is_err());
    assert!(parse_run("resize").is_err());
    assert!(parse_run("scroll_lines").is_err());
    assert!(parse_run("scroll_lines x").is_err());
    assert!(parse_run("quit now please").is_err());
    assert!(parse_run("").is_err());
}

#[test]
fn overrides_merge_per_key() {
    let keymap = match merged(
        r#"
        [editor]
        "<C-t>" = "run_cell"
        "<F5>" = { run = "help", desc = "Keys!" }
        "<C-q>" = "none"
        [outputs]
        "z" = { run = "quit", hint = true }
        "#,
    ) {
        Ok(k) => k,
        Err(e) => panic!("{e:?}"),
    };
    let defaults = defaults();
    let editor = keymap.bindings(Mode::Editor);
    // A new key goes at the end, described like the action's default key.
    let last = editor
        .last()
        .map(|b| (b.key.to_string(), b.action.clone(), b.desc.clone()));
    assert_eq!(
        last,
        Some((
            "Ctrl+T".into(),
            Action::Notebook(NotebookAction::RunCell),
            "Run the cell".into()
        ))
    );
    // A rebound key keeps its place.
    assert_eq!(editor[0].key.to_string(), "F5");
    assert_eq!(
        editor[0].action,
        Action::Help(crate::tui::help::HelpAction::Open)
    );
    assert_eq!(editor[0].desc, "Keys!");
    // An unbound key types (or does nothing) again.
    let ctrl_q = key(KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert!(matches!(
        keymap.action_for_key(ctrl_q, MIDDLE),
        Some(Action::Edit(_))
    ));
    assert_eq!(editor.len(), defaults.bindings(Mode::Editor).len());
    // Other modes keep their defaults, plus what was added.
    let z = key(KeyCode::Char('z'), KeyModifiers::NONE);
    assert_eq!(keymap.action_for_key(z, notebook()), Some(Action::Quit));
    assert!(keymap.hint_line(Mode::Outputs, 200).ends_with("z Quit"));
    assert_eq!(
        keymap.action_for_key(ctrl_q, notebook()),
        Some(Action::Quit)
    );
}

#[test]
fn broken_overrides_say_which_key() {
    let text = "[editor]\n\"<C-r>\" = \"run_cel\"\n";
    let e = merged(text).unwrap_err();
    assert!(e.message.contains("[keys.editor]"), "{e:?}");
    assert!(
        e.message.contains("<C-r>") && e.message.contains("run_cel"),
        "{e:?}"
    );
    assert_eq!(&text[e.span.clone()], "\"run_cel\"");

    let text = "[outputs]\n\"<C-nope>\" = \"quit\"\n";
    let e = merged(text).unwrap_err();
    assert!(e.message.contains("<C-nope>"), "{e:?}");
    assert_eq!(&text[e.span.clone()], "\"<C-nope>\"");

    let text = "[editor]\n\"<C-x>\" = \"quit\"\n\"<c-x>\" = \"help\"\n";
    let e = merged(text).unwrap_err();
    assert!(e.message.contains("same key"), "{e:?}");
    assert_eq!(&text[e.span.clone()], "\"<c-x>\"");
    assert_eq!(e.earlier.map(|r| &text[r]), Some("\"<C-x>\""));
}

#[test]
fn hints_group_keys_by_label_and_fit_the_width() {
    let keymap = defaults();
    assert_eq!(
        keymap.hint_line(Mode::Editor, 200),
        "F5/Alt+Enter run · Esc notebook · F1 help · Ctrl+Q quit · PgUp/PgDn scroll · Ctrl+R history"
    );
    assert_eq!(
        keymap.hint_line(Mode::Outputs, 200),
        "j/k select · x stop · Esc/Enter back to the cell · ? help · q quit · f files · y copy · s save"
    );
    assert_eq!(
        keymap.hint_line(Mode::Editor, 40),
        "F5/Alt+Enter run · Esc notebook"
    );
    assert_eq!(keymap.hint_line(Mode::Editor, 5), "");
}

#[test]
fn an_open_prompt_takes_every_key_and_no_mouse() {
    let keymap = defaults();
    let prompt = KeyContext {
        typing: true,
        ..notebook()
    };
    for code in [
        KeyCode::Char('q'),
        KeyCode::Esc,
        KeyCode::Enter,
        KeyCode::F(1),
    ] {
        let k = key(code, KeyModifiers::NONE);
        assert!(
            matches!(keymap.action_for_key(k, prompt), Some(Action::Edit(_))),
            "{code:?}"
        );
    }
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    };
    assert_eq!(keymap.action_for_event(Event::Mouse(wheel), prompt), None);
    // But Ctrl+Q quits from anywhere (and confirms the quit question).
    let ctrl_q = key(KeyCode::Char('q'), KeyModifiers::CONTROL);
    assert_eq!(keymap.action_for_key(ctrl_q, prompt), Some(Action::Quit));
}

#[test]
fn a_left_click_names_its_position() {
    let keymap = defaults();
    let click = MouseEvent {
        kind: MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: 7,
        row: 3,
        modifiers: KeyModifiers::NONE,
    };
    assert_eq!(
        keymap.action_for_event(Event::Mouse(click), MIDDLE),
        Some(Action::Click { column: 7, row: 3 })
    );
    let help = KeyContext {
        mode: Mode::Help,
        ..MIDDLE
    };
    assert_eq!(keymap.action_for_event(Event::Mouse(click), help), None);
}

#[test]
fn feature_actions_parse_nested_and_by_their_older_names() {
    use crate::tui::help::HelpAction;
    use crate::tui::pager::PagerAction;
    let scroll = Ok(Action::Pager(PagerAction::Scroll(-1)));
    assert_eq!(parse_run("pager scroll -1"), scroll);
    assert_eq!(parse_run("pager_scroll -1"), scroll);
    let open = Ok(Action::Pager(PagerAction::Open));
    assert_eq!(parse_run("pager open"), open);
    assert_eq!(parse_run("open_pager"), open);
    assert_eq!(parse_run("help"), Ok(Action::Help(HelpAction::Open)));
    assert_eq!(parse_run("help open"), Ok(Action::Help(HelpAction::Open)));
    assert_eq!(parse_run("close_help"), Ok(Action::Help(HelpAction::Close)));
    assert_eq!(
        parse_run("help_scroll 10"),
        Ok(Action::Help(HelpAction::Scroll(10)))
    );
    assert_eq!(
        parse_run("files down"),
        Ok(Action::Files(crate::tui::files::FilesAction::Down))
    );
    // A feature's action it does not have, or a fourth word, is an error.
    assert!(parse_run("pager frobnicate").is_err());
    assert!(parse_run("pager scroll 1 2").is_err());
    assert!(parse_run("pager").is_err());
}
