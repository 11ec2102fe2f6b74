//! Shared widgets and text helpers every view may use: fitting text to columns,
//! wrapping, syntax highlighting, images, SGR colours, sanitising session text,
//! line indexes of long texts and their collapsed view. A leaf: it imports no
//! feature and not the app.

pub mod fit;
pub mod highlight;
pub mod image;
pub mod line_prompt;
pub mod long_output;
pub mod prompt;
pub mod sanitize;
pub mod sgr;
pub mod text_index;
pub mod wrap;
