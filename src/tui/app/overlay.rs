//! What is open over the screen: one stack of [`Layer`]s, each holding its
//! feature's state (the prompt, the history search, the upload picker, the
//! pools chooser, the help, the pager). The newest layer is on top and takes
//! the keys before the focus does; closing it hands the keys to the one
//! beneath, or back to the focus. This is the one place that says whether an
//! overlay is open: no feature keeps an "open" flag of its own.

use super::AppPrompt;
use crate::tui::help::HelpView;
use crate::tui::notebook::history_search::HistorySearch;
use crate::tui::pager::Pager;
use crate::tui::picker::FilePicker;
use crate::tui::pools::PoolsMenu;

/// Which kind of overlay a [`Layer`] is (what `App::update` routes on and the
/// keymap's context is built from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// A prompt or question on the bottom row: every key is typed into it.
    Prompt,
    /// The history search (Ctrl+R): every key is typed into it.
    HistorySearch,
    /// The local file picker of uploads: every key goes to it.
    Picker,
    /// The pools chooser: every key goes to it.
    PoolsMenu,
    /// The help overlay: its own bindings.
    Help,
    /// The pager: its own bindings (its search line takes every key).
    Pager,
    /// The files a recorded cell changed, and one previewed: every key goes
    /// to it.
    RecordedFiles,
}

impl Overlay {
    /// Every key is typed into this overlay (no binding, no mouse).
    pub fn takes_every_key(self) -> bool {
        matches!(
            self,
            Self::Prompt
                | Self::HistorySearch
                | Self::Picker
                | Self::PoolsMenu
                | Self::RecordedFiles
        )
    }
}

/// One overlay and its state.
#[derive(Debug)]
pub enum Layer {
    /// The bottom-row prompt, with the purpose naming the feature that asked.
    Prompt(AppPrompt),
    /// The history search over the notebook's cells.
    HistorySearch(HistorySearch),
    /// The local file picker of uploads (`tui/picker/`).
    Picker(FilePicker),
    /// The pools chooser (`tui/pools/`).
    PoolsMenu(PoolsMenu),
    /// The help overlay, with its scroll position.
    Help(HelpView),
    /// The pager on one long output (`tui/pager/`).
    Pager(Pager),
    /// The files a recorded cell changed (`recorded_files.rs`).
    RecordedFiles(Box<super::recorded_files::RecordedFilesUi>),
}

impl Layer {
    /// The kind of this layer.
    pub fn kind(&self) -> Overlay {
        match self {
            Self::Prompt(_) => Overlay::Prompt,
            Self::HistorySearch(_) => Overlay::HistorySearch,
            Self::Picker(_) => Overlay::Picker,
            Self::PoolsMenu(_) => Overlay::PoolsMenu,
            Self::Help(_) => Overlay::Help,
            Self::Pager(_) => Overlay::Pager,
            Self::RecordedFiles(_) => Overlay::RecordedFiles,
        }
    }
}

/// A layer taken off the stack to be handed to its reducer, with where it was,
/// so [`Overlays::put_back`] returns it beneath anything its reducer opened.
#[derive(Debug)]
pub struct Taken<T> {
    /// Its place in the stack, from the bottom.
    at: usize,
    /// The layer's state.
    pub state: T,
}

/// Every overlay open, oldest first: the last takes the keys. At most one of
/// each [`Overlay`] kind is open.
#[derive(Debug, Default)]
pub struct Overlays {
    layers: Vec<Layer>,
}

/// The getters of one kind: `$get` borrows it, `$get_mut` borrows it to change.
macro_rules! layer_access {
    ($variant:ident, $ty:ty, $get:ident, $get_mut:ident) => {
        #[doc = concat!("The open `", stringify!($variant), "` layer, if any.")]
        pub fn $get(&self) -> Option<&$ty> {
            self.layers.iter().find_map(|l| match l {
                Layer::$variant(state) => Some(state),
                _ => None,
            })
        }

        #[doc = concat!("The open `", stringify!($variant), "` layer, to change it.")]
        pub fn $get_mut(&mut self) -> Option<&mut $ty> {
            self.layers.iter_mut().find_map(|l| match l {
                Layer::$variant(state) => Some(state),
                _ => None,
            })
        }
    };
}

/// For the kinds whose reducer takes its layer out: `$take` takes it off the
/// stack.
macro_rules! layer_take {
    ($variant:ident, $ty:ty, $take:ident) => {
        #[doc = concat!(
                    "Takes the open `", stringify!($variant),
                    "` layer off the stack (for its reducer; [`Overlays::put_back`] returns it)."
                )]
        pub fn $take(&mut self) -> Option<Taken<$ty>> {
            let at = self.position(Overlay::$variant)?;
            match self.layers.remove(at) {
                Layer::$variant(state) => Some(Taken { at, state }),
                // `position` found this kind at `at`.
                other => {
                    self.layers.insert(at, other);
                    None
                }
            }
        }
    };
}

impl Overlays {
    /// The overlay that takes the keys now: the newest open.
    pub fn top(&self) -> Option<Overlay> {
        self.layers.last().map(Layer::kind)
    }

    /// Whether an overlay of `kind` is open (on top or not).
    pub fn is_open(&self, kind: Overlay) -> bool {
        self.position(kind).is_some()
    }

    fn position(&self, kind: Overlay) -> Option<usize> {
        self.layers.iter().position(|l| l.kind() == kind)
    }

    /// Opens `layer` on top of the others; an open layer of the same kind is
    /// closed first (one prompt, one pager…).
    pub fn open(&mut self, layer: Layer) {
        self.close(layer.kind());
        self.layers.push(layer);
    }

    /// Closes the overlay of `kind`, if it is open, and returns its state.
    pub fn close(&mut self, kind: Overlay) -> Option<Layer> {
        let at = self.position(kind)?;
        Some(self.layers.remove(at))
    }

    /// Returns a layer its reducer kept open to the place it was taken from,
    /// beneath any layer opened meanwhile (a question the picker's upload
    /// asked stays over the picker). `wrap` makes the layer of its state.
    pub fn put_back<T>(&mut self, taken: Taken<T>, wrap: fn(T) -> Layer) {
        let layer = wrap(taken.state);
        self.close(layer.kind());
        let at = taken.at.min(self.layers.len());
        self.layers.insert(at, layer);
    }

    layer_access!(Prompt, AppPrompt, prompt, prompt_mut);
    layer_access!(
        HistorySearch,
        HistorySearch,
        history_search,
        history_search_mut
    );
    layer_access!(Picker, FilePicker, picker, picker_mut);
    layer_access!(PoolsMenu, PoolsMenu, pools_menu, pools_menu_mut);
    layer_access!(Pager, Pager, pager, pager_mut);
    layer_access!(
        RecordedFiles,
        Box<super::recorded_files::RecordedFilesUi>,
        recorded_files,
        recorded_files_mut
    );
    layer_take!(Prompt, AppPrompt, take_prompt);
    layer_take!(HistorySearch, HistorySearch, take_history_search);
    layer_take!(Picker, FilePicker, take_picker);
    layer_take!(PoolsMenu, PoolsMenu, take_pools_menu);

    /// The open help overlay's state, to scroll it or draw it.
    pub fn help_mut(&mut self) -> Option<&mut HelpView> {
        self.layers.iter_mut().find_map(|l| match l {
            Layer::Help(view) => Some(view),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::pools::PoolsMenu;

    #[test]
    fn the_newest_layer_takes_the_keys_and_closing_it_uncovers_the_one_beneath() {
        let mut overlays = Overlays::default();
        assert_eq!(overlays.top(), None);
        overlays.open(Layer::Help(HelpView::default()));
        overlays.open(Layer::PoolsMenu(PoolsMenu { selected: 1 }));
        assert_eq!(overlays.top(), Some(Overlay::PoolsMenu));
        assert!(overlays.is_open(Overlay::Help));
        assert!(overlays.close(Overlay::PoolsMenu).is_some());
        assert_eq!(overlays.top(), Some(Overlay::Help));
        assert!(overlays.close(Overlay::PoolsMenu).is_none());
    }

    #[test]
    fn opening_a_kind_again_replaces_it_and_moves_it_on_top() {
        let mut overlays = Overlays::default();
        overlays.open(Layer::PoolsMenu(PoolsMenu { selected: 1 }));
        overlays.open(Layer::Help(HelpView::default()));
        overlays.open(Layer::PoolsMenu(PoolsMenu { selected: 2 }));
        assert_eq!(overlays.top(), Some(Overlay::PoolsMenu));
        assert_eq!(overlays.pools_menu(), Some(&PoolsMenu { selected: 2 }));
        overlays.close(Overlay::PoolsMenu);
        assert_eq!(overlays.top(), Some(Overlay::Help));
        assert_eq!(overlays.top(), overlays.layers.last().map(Layer::kind));
        assert_eq!(overlays.layers.len(), 1);
    }

    #[test]
    fn a_layer_put_back_goes_beneath_what_its_reducer_opened() {
        let mut overlays = Overlays::default();
        overlays.open(Layer::PoolsMenu(PoolsMenu { selected: 0 }));
        let mut taken = overlays.take_pools_menu().expect("open");
        assert_eq!(overlays.top(), None);
        taken.state.selected = 3;
        // Its reducer opened the help meanwhile: the help stays on top.
        overlays.open(Layer::Help(HelpView::default()));
        overlays.put_back(taken, Layer::PoolsMenu);
        assert_eq!(overlays.top(), Some(Overlay::Help));
        assert_eq!(overlays.pools_menu(), Some(&PoolsMenu { selected: 3 }));
    }
}
