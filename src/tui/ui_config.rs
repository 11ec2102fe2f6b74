//! The notebook's sections of the config file: the theme, the image protocol and
//! `[keys.<mode>]`. The config module keeps them as written; they are read here
//! with the notebook's own types and checked (theme names, keys, actions), each
//! error naming the line and key as the config module's own errors do.

use serde::Deserialize;
use toml::Spanned;

use crate::config::{Config, ImageProtocol, locate};
use crate::tui::keymap::{KeyOverrides, Keymap, KeymapError};
use crate::tui::theme::Theme;

/// What the terminal UI takes from the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UiConfig {
    /// The theme's name; `None` for the default.
    pub theme: Option<String>,
    /// How images are drawn.
    pub image_protocol: ImageProtocol,
    /// Key bindings over the defaults (already checked by [`UiConfig::from_config`]).
    pub keys: KeyOverrides,
}

/// The sections read here; every other key of the file is the config module's.
#[derive(Deserialize)]
struct Sections {
    theme: Option<Spanned<String>>,
    #[serde(default)]
    keys: KeyOverrides,
}

impl UiConfig {
    /// The notebook's settings of `config`, read from the text it was parsed
    /// from ([`Config::source`]).
    ///
    /// # Errors
    ///
    /// A message naming the line, column and key: a `[keys.*]` table of an
    /// unknown mode, a key that does not parse, an unknown action, two keys of
    /// one table that are the same key, or an unknown theme.
    pub fn from_config(config: &Config) -> Result<Self, String> {
        let text = config.source.as_str();
        let sections: Sections =
            toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        if let Some(theme) = &sections.theme {
            Theme::named(theme.get_ref(), false)
                .map_err(|e| format!("{}: theme: {e}", locate(text, theme.span())))?;
        }
        Keymap::with_overrides(&sections.keys).map_err(|e| keymap_error(text, &e))?;
        Ok(Self {
            theme: sections.theme.map(Spanned::into_inner),
            image_protocol: config.image_protocol.unwrap_or_default(),
            keys: sections.keys,
        })
    }
}

fn keymap_error(text: &str, e: &KeymapError) -> String {
    let earlier = e
        .earlier
        .clone()
        .map(|span| format!(" (at {})", locate(text, span)))
        .unwrap_or_default();
    format!("{}: {}{earlier}", locate(text, e.span.clone()), e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ui(text: &str) -> Result<UiConfig, String> {
        UiConfig::from_config(&Config::parse(text)?)
    }

    #[test]
    fn ui_settings_parse() {
        let ui = ui(
            "theme = \"light\"\nimage_protocol = \"halfblocks\"\n[keys.editor]\n\"<C-r>\" = \"run_cell\"\n[keys.outputs]\nx = { run = \"quit\", desc = \"Leave\" }\n",
        )
        .unwrap();
        assert_eq!(ui.theme.as_deref(), Some("light"));
        assert_eq!(ui.image_protocol, ImageProtocol::Halfblocks);
        assert_eq!(ui.keys.len(), 2);
        let keymap = Keymap::with_overrides(&ui.keys).unwrap();
        let x = crate::tui::keymap::KeyPress::new(
            crossterm::event::KeyCode::Char('x'),
            crossterm::event::KeyModifiers::NONE,
        );
        let bound = keymap.lookup(crate::tui::keymap::Mode::Outputs, x).unwrap();
        assert_eq!(bound.desc, "Leave");
        assert_eq!(
            UiConfig::from_config(&Config::default()).unwrap(),
            UiConfig::default()
        );
    }

    #[test]
    fn broken_ui_settings_name_the_line_and_key() {
        let cases = [
            (
                "timeout = 5\ntheme = \"solarized\"\n",
                "line 2",
                "solarized",
            ),
            ("image_protocol = \"braille\"\n", "line 1", "braille"),
            (
                "[keys.editr]\n\"<C-r>\" = \"run_cell\"\n",
                "line 1",
                "editr",
            ),
            (
                "[keys.editor]\n\"<F5>\" = \"help\"\n\"<C-r>\" = \"run_cel\"\n",
                "line 3",
                "<C-r>",
            ),
            (
                "[keys.outputs]\n\n\"<C-nope>\" = \"quit\"\n",
                "line 3",
                "<C-nope>",
            ),
            (
                "[keys.editor]\n\"<C-r>\" = { run = \"quit\", colour = 1 }\n",
                "line 2",
                "colour",
            ),
        ];
        for (text, line, key) in cases {
            let e = ui(text).unwrap_err();
            assert!(e.contains(line) && e.contains(key), "{text:?}: {e}");
        }
        let e = ui("[keys.editor]\n\"<C-x>\" = \"quit\"\n\"<c-x>\" = \"help\"\n").unwrap_err();
        assert!(
            e.contains("line 3, column 1") && e.contains("same key"),
            "{e}"
        );
        assert!(e.contains("(at line 2, column 1)"), "{e}");
        let e = ui("[keys.editor]\n\"<C-r>\" = \"run_cel\"\n").unwrap_err();
        assert!(e.contains("run_cel") && e.contains("[keys.editor]"), "{e}");
    }
}
