//! The pools chooser as the app opens it and routes its keys: choosing a pool
//! ends this pool's run of the loop and starts one for the chosen pool
//! (`tui/pools/` holds the chooser's state and view; `impl App` lives only in
//! `tui/app/`).

use super::App;
use crate::tui::action::Effect;
use crate::tui::pools::PoolsMenu;
use ratatui_textarea::Input;
use ratatui_textarea::Key;

impl App {
    /// Opens the pools chooser on the pool in use (`p` in the sessions pane).
    pub fn open_pools(&mut self) {
        let pools = &mut self.pools;
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
        pools.menu = Some(PoolsMenu { selected });
    }

    /// A key while the chooser is open: Up/Down (or k/j) move, Enter switches,
    /// Esc (or q) closes.
    pub fn pools_key(&mut self, input: &Input) -> Vec<Effect> {
        let count = self.pools.choices.len();
        let Some(menu) = self.pools.menu.as_mut() else {
            return Vec::new();
        };
        match input.key {
            Key::Down | Key::Char('j') => menu.selected = (menu.selected + 1) % count.max(1),
            Key::Up | Key::Char('k') => {
                menu.selected = menu
                    .selected
                    .checked_sub(1)
                    .unwrap_or(count.saturating_sub(1));
            }
            Key::Esc | Key::Char('q') => self.pools.menu = None,
            Key::Enter => {
                let index = menu.selected;
                self.pools.menu = None;
                return self.choose_pool(index).into_iter().collect();
            }
            _ => {}
        }
        Vec::new()
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
