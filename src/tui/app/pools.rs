//! The pools chooser as the app opens it and routes its keys: choosing a pool
//! ends this pool's run of the loop and starts one for the chosen pool
//! (`tui/pools/` holds the chooser's state and view; `impl App` lives only in
//! `tui/app/`).

use super::{App, Layer, Overlay};
use crate::tui::action::{Action, Effect};
use crate::tui::pools::{MenuOutcome, PoolsMenu};

impl App {
    /// Opens the pools chooser on the pool in use (`p` in the sessions pane).
    pub fn open_pools(&mut self) {
        let pools = &self.pools;
        if pools.choices.len() < 2 {
            self.notice =
                Some("no other pool to switch to: add [profiles.NAME] to the config file".into());
            return;
        }
        let selected = pools
            .choices
            .iter()
            .position(|c| c.name == pools.current)
            .unwrap_or(0);
        self.overlays.open(Layer::PoolsMenu(PoolsMenu { selected }));
    }

    /// An action while the chooser is open: its keys go to its reducer
    /// ([`PoolsMenu::update`]); Ctrl+Q still quits (asking first when that
    /// would leave something behind).
    pub fn pools_menu_action(&mut self, action: Action) -> Vec<Effect> {
        let count = self.pools.choices.len();
        let outcome = match (action, self.overlays.pools_menu_mut()) {
            (Action::Edit(input), Some(menu)) => menu.update(&input, count),
            (Action::Quit, _) => {
                self.ask_to_quit();
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        match outcome {
            MenuOutcome::Stay => Vec::new(),
            MenuOutcome::Close => {
                self.overlays.close(Overlay::PoolsMenu);
                Vec::new()
            }
            MenuOutcome::Choose(index) => {
                self.overlays.close(Overlay::PoolsMenu);
                self.choose_pool(index).into_iter().collect()
            }
        }
    }

    /// Asks the loop to switch to choice `index` ([`Effect::SwitchPool`]),
    /// unless it is the pool in use, it cannot be reached, or a cell still runs
    /// or a transfer is under way (the reply, or the transfer, would be lost):
    /// then a notice says why and there is no effect.
    pub fn choose_pool(&mut self, index: usize) -> Option<Effect> {
        let choice = self.pools.choices.get(index).cloned()?;
        let refused = if choice.name == self.pools.current {
            format!("already on pool {}", choice.name)
        } else if let Err(e) = &choice.target {
            format!("cannot switch to {}: {e}", choice.name)
        } else if self.pending() > 0 {
            "a cell is still running: wait for it or stop it first".into()
        } else if self.files.transfer.is_some() {
            "a transfer is under way: wait for it or cancel it (Esc)".into()
        } else {
            return Some(Effect::SwitchPool(choice));
        };
        self.notice = Some(refused);
        None
    }
}
