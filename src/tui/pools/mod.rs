//! Switching pools without restarting: the pools the TUI can talk to (each
//! profile of the config file, the pool the command line named, and the
//! embedded local pool), the chooser the sessions pane opens with `p`, and the
//! switch the loop carries out ([`crate::tui::action::Effect::SwitchPool`]).
//!
//! A switch ends the UI loop's run for the current pool: `tui::run_with` saves
//! its notebook, stops its worker (keeping the embedded local pool and its
//! kernels alive, so switching back finds the sessions as they were) and builds
//! the app again for the chosen pool, its own notebook and its own identifier.
//! The cell being typed moves along.

pub mod view;

use ratatui_textarea::{Input, Key};

use crate::protocol::PoolType;

pub use crate::target::PoolTarget;

/// A pool to offer in the chooser: its name and how to reach it, or why it
/// cannot be reached (a profile whose token variable is unset, say).
#[derive(Debug, Clone, PartialEq)]
pub struct PoolChoice {
    /// The profile name (`local` for the built-in local pool).
    pub name: String,
    /// The resolved target, or what is wrong with the profile.
    pub target: Result<PoolTarget, String>,
}

impl PoolChoice {
    /// One line about where the pool is: `local pool (embedded)`, or the
    /// endpoint's host with the api-version.
    pub fn detail(&self) -> String {
        match &self.target {
            Err(e) => format!("unusable: {e}"),
            Ok(t) => match &t.endpoint {
                None => "local pool (embedded)".into(),
                Some(endpoint) => {
                    let kind = match t.pool_type {
                        PoolType::CodeInterpreter => "",
                        PoolType::CustomContainer => ", custom container",
                    };
                    format!(
                        "{} · {}{kind}",
                        crate::target::endpoint_label(endpoint),
                        t.api_version
                    )
                }
            },
        }
    }
}

/// The pools chooser while it is open (a layer of the app's overlays).
#[derive(Debug, Clone, PartialEq)]
pub struct PoolsMenu {
    /// The row under the cursor.
    pub selected: usize,
}

/// What a key in the chooser asks of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuOutcome {
    /// Stay open.
    Stay,
    /// Close without switching.
    Close,
    /// Switch to the choice at this row.
    Choose(usize),
}

impl PoolsMenu {
    /// The chooser's reducer: Up/Down (or k/j) move over `count` rows,
    /// wrapping; Enter chooses; Esc (or q) closes.
    pub fn update(&mut self, input: &Input, count: usize) -> MenuOutcome {
        match input.key {
            Key::Down | Key::Char('j') => self.selected = (self.selected + 1) % count.max(1),
            Key::Up | Key::Char('k') => {
                self.selected = self
                    .selected
                    .checked_sub(1)
                    .unwrap_or(count.saturating_sub(1));
            }
            Key::Esc | Key::Char('q') => return MenuOutcome::Close,
            Key::Enter => return MenuOutcome::Choose(self.selected),
            _ => {}
        }
        MenuOutcome::Stay
    }
}

/// The pools part of the app state.
#[derive(Debug, Default)]
pub struct PoolsUi {
    /// Every pool that can be chosen, in the chooser's order.
    pub choices: Vec<PoolChoice>,
    /// The name of the pool in use.
    pub current: String,
}

impl PoolsUi {
    /// The choices, with `current` in use.
    pub fn new(choices: Vec<PoolChoice>, current: &str) -> Self {
        Self {
            choices,
            current: current.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use std::time::Duration;

    use super::*;
    use crate::protocol::ApiVersion;
    use crate::session::{RunId, SessionEvent};
    use crate::tui::action::Effect;
    use crate::tui::app::App;
    use crate::tui::app::{AppConfig, PoolState};
    use ratatui_textarea::{Input, Key};

    fn target(endpoint: Option<&str>) -> PoolTarget {
        PoolTarget {
            endpoint: endpoint.map(str::to_string),
            token: None,
            auth: None,
            api_version: ApiVersion::V2025_10_02,
            identifier: "sp-1".into(),
            timeout: Duration::from_secs(220),
            pool_type: PoolType::CodeInterpreter,
            container_type: crate::protocol::ContainerType::default(),
            empty_kernel: false,
            egress: None,
        }
    }

    fn app() -> App {
        let mut app = App::new(
            AppConfig {
                pool_label: "local".into(),
                identifier: "sp-1".into(),
                api_version: ApiVersion::V2025_10_02,
                language: crate::notebook::language::Language::Python,
            },
            PoolState::Ready,
        );
        app.pools = PoolsUi::new(
            vec![
                PoolChoice {
                    name: "local".into(),
                    target: Ok(target(None)),
                },
                PoolChoice {
                    name: "dev".into(),
                    target: Ok(target(Some("https://eastus.dynamicsessions.io/p"))),
                },
                PoolChoice {
                    name: "broken".into(),
                    target: Err("the profile's token variable X is not set".into()),
                },
            ],
            "local",
        );
        app
    }

    fn key(app: &mut App, key: Key) -> Vec<Effect> {
        app.update(
            crate::tui::action::Action::Edit(Input {
                key,
                ..Input::default()
            }),
            Instant::now(),
        )
    }

    #[test]
    fn the_chooser_opens_on_the_pool_in_use_and_enter_switches() {
        let mut app = app();
        app.open_pools();
        assert_eq!(app.overlays.pools_menu(), Some(&PoolsMenu { selected: 0 }));
        key(&mut app, Key::Down);
        let effects = key(&mut app, Key::Enter);
        assert!(app.overlays.pools_menu().is_none());
        let [Effect::SwitchPool(choice)] = effects.as_slice() else {
            panic!("expected one switch: {effects:?}");
        };
        assert_eq!(choice.name, "dev");
        assert_eq!(
            choice.detail(),
            "eastus.dynamicsessions.io · 2025-10-02-preview"
        );
    }

    #[test]
    fn unusable_current_and_busy_choices_say_why_and_do_not_switch() {
        let mut app = app();
        assert_eq!(app.choose_pool(2), None);
        assert!(app.notice.as_deref().unwrap().contains("token variable X"));
        assert_eq!(app.choose_pool(0), None);
        assert_eq!(app.notice.as_deref(), Some("already on pool local"));
        // A cell in flight would lose its reply.
        app.update(
            crate::tui::action::Action::Paste("1".into()),
            Instant::now(),
        );
        let effects = app.update(
            crate::tui::action::Action::Notebook(crate::tui::notebook::NotebookAction::RunCell),
            Instant::now(),
        );
        assert!(!effects.is_empty());
        app.handle_event(SessionEvent::ExecutionStarted(RunId(1)), Instant::now());
        assert_eq!(app.choose_pool(1), None);
        assert!(app.notice.as_deref().unwrap().contains("still running"));
    }

    #[test]
    fn a_transfer_under_way_holds_the_switch() {
        let mut app = app();
        app.files.transfer = Some(crate::tui::files::Transfer {
            label: "report.csv".into(),
            done: 1,
            total: Some(2),
        });
        assert_eq!(app.choose_pool(1), None);
        assert!(app.notice.as_deref().unwrap().contains("transfer"));
    }

    #[test]
    fn esc_closes_and_wraps_around() {
        let mut app = app();
        app.open_pools();
        key(&mut app, Key::Up);
        assert_eq!(app.overlays.pools_menu(), Some(&PoolsMenu { selected: 2 }));
        assert!(key(&mut app, Key::Esc).is_empty());
        assert!(app.overlays.pools_menu().is_none());
    }

    #[test]
    fn with_one_pool_there_is_nothing_to_choose() {
        let mut app = app();
        app.pools.choices.truncate(1);
        app.open_pools();
        assert!(app.overlays.pools_menu().is_none());
        assert!(app.notice.as_deref().unwrap().contains("[profiles.NAME]"));
    }
}
