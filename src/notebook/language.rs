//! The language a notebook's cells are written in, which follows the session
//! pool's container type (`aca-api.md` §4.7, §13): Python for `PythonLTS` pools
//! (and custom containers, which run Python code interpreters), shell commands
//! for Shell pools, JavaScript for `NodeLTS` pools. It decides how cells are
//! highlighted, what a saved `.ipynb` says in `kernelspec` and `language_info`
//! (nbformat v4: the fields Jupyter and nbconvert read), and what an exported
//! script looks like.

use serde_json::{Value, json};

use crate::protocol::ContainerType;

/// The language of a notebook's cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Language {
    /// Python (`PythonLTS` and custom-container pools).
    #[default]
    Python,
    /// Shell commands, run by bash (Shell pools).
    Shell,
    /// JavaScript, run by Node.js (`NodeLTS` pools).
    JavaScript,
}

impl Language {
    /// Every language, in the order they are listed.
    pub const ALL: [Self; 3] = [Self::Python, Self::Shell, Self::JavaScript];

    /// The name people use for it (`Python`, `Shell`, `JavaScript`).
    pub fn label(self) -> &'static str {
        match self {
            Self::Python => "Python",
            Self::Shell => "Shell",
            Self::JavaScript => "JavaScript",
        }
    }

    /// The file extension of a script in this language, without the dot
    /// (`py`, `sh`, `js`); also what syntect finds its syntax by.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Python => "py",
            Self::Shell => "sh",
            Self::JavaScript => "js",
        }
    }

    /// What starts a line comment (`#`, `//`).
    pub fn comment(self) -> &'static str {
        match self {
            Self::Python | Self::Shell => "#",
            Self::JavaScript => "//",
        }
    }

    /// The `.ipynb` `metadata.kernelspec`: the names Jupyter's own kernels for
    /// the language use (ipykernel's `python3`, `bash_kernel`'s `bash`,
    /// `IJavascript`'s `javascript`), so Jupyter opens the notebook with one.
    pub fn kernelspec(self) -> Value {
        let (name, display) = match self {
            Self::Python => ("python3", "Python 3 (sessionpad)"),
            Self::Shell => ("bash", "Bash (sessionpad)"),
            Self::JavaScript => ("javascript", "JavaScript (Node.js, sessionpad)"),
        };
        json!({
            "name": name,
            "display_name": display,
            "language": self.language_name(),
        })
    }

    /// The `.ipynb` `metadata.language_info` (name, file extension, MIME type).
    pub fn language_info(self) -> Value {
        let mimetype = match self {
            Self::Python => "text/x-python",
            Self::Shell => "text/x-sh",
            Self::JavaScript => "application/javascript",
        };
        json!({
            "name": self.language_name(),
            "file_extension": format!(".{}", self.extension()),
            "mimetype": mimetype,
        })
    }

    /// The language's name in `kernelspec.language` and `language_info.name`.
    fn language_name(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::Shell => "bash",
            Self::JavaScript => "javascript",
        }
    }

    /// The language a notebook's `metadata` names (`language_info.name`, else
    /// `kernelspec.language`); `None` when it names none or one sessionpad does
    /// not run.
    pub fn from_metadata(metadata: &Value) -> Option<Self> {
        let named = metadata
            .pointer("/language_info/name")
            .or_else(|| metadata.pointer("/kernelspec/language"))
            .and_then(Value::as_str)?;
        match named.to_ascii_lowercase().as_str() {
            "python" | "python3" => Some(Self::Python),
            "bash" | "sh" | "shell" => Some(Self::Shell),
            "javascript" | "js" | "node" | "nodejs" => Some(Self::JavaScript),
            _ => None,
        }
    }
}

impl Language {
    /// The container type of the pools that run this language (`PythonLTS`
    /// for Python, the inverse of `From<ContainerType>` elsewhere).
    pub fn container_type(self) -> ContainerType {
        match self {
            Self::Python => ContainerType::PythonLts,
            Self::Shell => ContainerType::Shell,
            Self::JavaScript => ContainerType::NodeLts,
        }
    }
}

impl From<ContainerType> for Language {
    /// The language a pool of this container type runs: shell commands on
    /// `Shell`, JavaScript on `NodeLTS`, Python elsewhere (custom containers
    /// and `GpuBase` are sent code as code interpreters are).
    fn from(container_type: ContainerType) -> Self {
        match container_type {
            ContainerType::Shell => Self::Shell,
            ContainerType::NodeLts => Self::JavaScript,
            ContainerType::PythonLts | ContainerType::CustomContainer | ContainerType::GpuBase => {
                Self::Python
            }
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_names_round_trip() {
        for language in Language::ALL {
            let metadata = json!({
                "kernelspec": language.kernelspec(),
                "language_info": language.language_info(),
            });
            assert_eq!(Language::from_metadata(&metadata), Some(language));
        }
        let only_kernelspec = json!({"kernelspec": {"language": "javascript"}});
        assert_eq!(
            Language::from_metadata(&only_kernelspec),
            Some(Language::JavaScript)
        );
        assert_eq!(
            Language::from_metadata(&json!({"language_info": {"name": "R"}})),
            None
        );
        assert_eq!(Language::from_metadata(&json!({})), None);
    }

    #[test]
    fn scripts_and_comments() {
        assert_eq!(Language::Shell.extension(), "sh");
        assert_eq!(Language::JavaScript.comment(), "//");
        assert_eq!(
            Language::JavaScript.language_info()["file_extension"],
            ".js"
        );
    }
}
