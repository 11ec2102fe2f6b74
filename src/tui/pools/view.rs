//! The pools chooser: a popup over the notebook listing every pool the TUI can
//! switch to (config profiles, the command line's pool, the local pool), the
//! one in use marked, each with where it is or why it cannot be used.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::tui::pools::{PoolsMenu, PoolsUi};
use crate::tui::theme::Theme;
use crate::tui::widgets::sanitize;

/// Draws the chooser `menu` over the choices of `pools`, centred in `area`.
pub fn render(pools: &PoolsUi, menu: &PoolsMenu, area: Rect, buf: &mut Buffer, theme: &Theme) {
    let names: Vec<String> = pools
        .choices
        .iter()
        .map(|c| sanitize::plain(&c.name))
        .collect();
    let width_of = |n: &str| Span::raw(n).width();
    let name_width = names.iter().map(|n| width_of(n)).max().unwrap_or(0);
    let lines: Vec<Line<'static>> = pools
        .choices
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (choice, name))| {
            let current = choice.name == pools.current;
            let mark = if current { "● " } else { "  " };
            let detail_style = if choice.target.is_err() {
                theme.error
            } else {
                theme.muted
            };
            let mut line = Line::from(vec![
                Span::styled(mark, theme.accent),
                Span::raw(format!(
                    "{name}{}",
                    " ".repeat(name_width.saturating_sub(width_of(name)))
                )),
                Span::raw("  "),
                Span::styled(sanitize::plain(&choice.detail()), detail_style),
            ]);
            if i == menu.selected {
                line = line.patch_style(theme.selection);
            }
            line
        })
        .collect();
    let widest = lines.iter().map(Line::width).max().unwrap_or(0);
    let width = u16::try_from(widest + 4)
        .unwrap_or(u16::MAX)
        .clamp(30, area.width.max(1));
    let height = u16::try_from(lines.len() + 2)
        .unwrap_or(u16::MAX)
        .min(area.height.max(1));
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    // Keep the selection in view when there are more pools than rows.
    let rows = usize::from(height.saturating_sub(2)).max(1);
    let scroll = menu.selected.saturating_sub(rows - 1);
    Clear.render(popup, buf);
    let block = Block::bordered()
        .border_style(theme.border_focused)
        .title(Span::styled(
            " Pools · Enter switches · Esc closes ",
            theme.accent,
        ));
    Paragraph::new(lines)
        .block(block)
        .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
        .render(popup, buf);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use insta::assert_snapshot;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::protocol::{ApiVersion, PoolType};
    use crate::tui::pools::{PoolChoice, PoolTarget, PoolsMenu};

    fn target(endpoint: Option<&str>, pool_type: PoolType) -> PoolTarget {
        PoolTarget {
            endpoint: endpoint.map(str::to_string),
            token: None,
            auth: None,
            api_version: ApiVersion::V2025_10_02,
            identifier: "sp-1".into(),
            timeout: Duration::from_secs(220),
            pool_type,
            container_type: crate::protocol::ContainerType::default(),
            empty_kernel: false,
            egress: None,
        }
    }

    fn pools() -> PoolsUi {
        PoolsUi::new(
            vec![
                PoolChoice {
                    name: "agents".into(),
                    target: Ok(target(
                        Some(
                            "https://westeurope.dynamicsessions.io/subscriptions/s/sessionPools/cc",
                        ),
                        PoolType::CustomContainer,
                    )),
                },
                PoolChoice {
                    name: "broken".into(),
                    target: Err("the profile's token variable X is not set".into()),
                },
                PoolChoice {
                    name: "dev\u{1b}[2J".into(),
                    target: Ok(target(
                        Some("https://eastus.dynamicsessions.io/subscriptions/s/sessionPools/p"),
                        PoolType::CodeInterpreter,
                    )),
                },
                PoolChoice {
                    name: "local".into(),
                    target: Ok(target(None, PoolType::CodeInterpreter)),
                },
            ],
            "local",
        )
    }

    fn screen(pools: &PoolsUi, width: u16, height: u16) -> TestBackend {
        let menu = PoolsMenu { selected: 2 };
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|f| {
                let area = f.area();
                render(pools, &menu, area, f.buffer_mut(), &Theme::dark());
            })
            .unwrap();
        terminal.backend().clone()
    }

    /// The chooser lists every pool in one column, marks the one in use, says
    /// why one cannot be used, and drops a name's escape sequence.
    #[test]
    fn snapshot_pools_chooser() {
        assert_snapshot!("pools_80x12", screen(&pools(), 80, 12));
        let buffer = screen(&pools(), 80, 12);
        let selected_row: String = (0..80)
            .map(|x| buffer.buffer()[(x, 6)].symbol().to_string())
            .collect();
        assert!(selected_row.contains("│  dev     eastus"), "{selected_row}");
        assert_eq!(
            buffer.buffer()[(24, 6)].bg,
            Theme::dark().selection.bg.unwrap()
        );
    }
}
