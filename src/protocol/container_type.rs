//! The kind of container a session pool runs, which decides what an execution
//! request carries: Python code, a shell command or JavaScript.
//!
//! Wire source: ARM `Microsoft.App/sessionPools` 2025-10-02-preview,
//! `properties.containerType` = `CustomContainer | PythonLTS | Shell | GpuBase |
//! NodeLTS` (`aca-api.md` §13). The data plane never says which kind it is, so
//! sessionpad learns it from configuration: `container_type` in a profile of
//! the config file, or `--container-type` on the command line.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::model::PoolType;

/// A session pool's container type (ARM `containerType`, 2025-10-02-preview).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ContainerType {
    /// `PythonLTS`: the Python code interpreter (IPython kernel); executions send
    /// `code` (the default, and what sessionpad's local pool ran before).
    #[default]
    PythonLts,
    /// `NodeLTS`: the JavaScript code interpreter; executions send JavaScript in
    /// `code` (`sessions-tutorial-nodejs.md`).
    NodeLts,
    /// `Shell`: a Linux shell; executions send `shellCommand` or
    /// `execCommandAndArgs` and the reply's `status` is the exit code
    /// (`aca-api.md` §4.7, §13).
    Shell,
    /// `CustomContainer`: the pool's own image; requests pass through to it
    /// (`aca-api.md` §5). Executions send `code` as to a code interpreter.
    CustomContainer,
    /// `GpuBase`: a GPU base image (ARM 2025-10-02-preview only; no data-plane
    /// document describes its executions, so they are sent as to a code
    /// interpreter).
    GpuBase,
}

/// The field of a sessionpad local pool's `GET metadata` that names its
/// container type (the ARM name); Azure's pools do not send it.
pub const METADATA_FIELD: &str = "sessionpadContainerType";

impl ContainerType {
    /// Every container type, in the order the ARM spec lists the common ones first.
    pub const ALL: [ContainerType; 5] = [
        Self::PythonLts,
        Self::NodeLts,
        Self::Shell,
        Self::CustomContainer,
        Self::GpuBase,
    ];

    /// The ARM name: `PythonLTS`, `NodeLTS`, `Shell`, `CustomContainer`, `GpuBase`.
    pub fn arm_name(self) -> &'static str {
        match self {
            Self::PythonLts => "PythonLTS",
            Self::NodeLts => "NodeLTS",
            Self::Shell => "Shell",
            Self::CustomContainer => "CustomContainer",
            Self::GpuBase => "GpuBase",
        }
    }

    /// How the pool's sessions are listed, read and ended: through
    /// `.management/*` on a custom-container pool, else the built-in calls
    /// (`aca-api.md` §4.4, §5.2).
    pub fn pool_type(self) -> PoolType {
        match self {
            Self::CustomContainer => PoolType::CustomContainer,
            _ => PoolType::CodeInterpreter,
        }
    }

    /// Whether executions on this pool are shell commands (`shellCommand`,
    /// `execCommandAndArgs`) rather than `code`.
    pub fn is_shell(self) -> bool {
        self == Self::Shell
    }
}

impl fmt::Display for ContainerType {
    /// The ARM name ([`ContainerType::arm_name`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.arm_name())
    }
}

/// A container type name that is none of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown container type {0:?}: use python (PythonLTS), node (NodeLTS), shell (Shell), custom-container (CustomContainer) or gpu (GpuBase)"
)]
pub struct UnknownContainerType(pub String);

impl FromStr for ContainerType {
    type Err = UnknownContainerType;

    /// Parses the ARM name or a short name, ignoring case, `-` and `_`:
    /// `PythonLTS`/`python`, `NodeLTS`/`node`/`nodejs`, `Shell`/`bash`,
    /// `CustomContainer`, `GpuBase`/`gpu`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key: String = s
            .trim()
            .chars()
            .filter(|c| !matches!(c, '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect();
        match key.as_str() {
            "pythonlts" | "python" => Ok(Self::PythonLts),
            "nodelts" | "node" | "nodejs" => Ok(Self::NodeLts),
            "shell" | "bash" => Ok(Self::Shell),
            "customcontainer" | "custom" => Ok(Self::CustomContainer),
            "gpubase" | "gpu" => Ok(Self::GpuBase),
            _ => Err(UnknownContainerType(s.to_string())),
        }
    }
}

impl Serialize for ContainerType {
    /// As its ARM name (`Shell`), which [`ContainerType::from_str`] reads back.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.arm_name())
    }
}

impl<'de> Deserialize<'de> for ContainerType {
    /// From a config file string, as [`ContainerType::from_str`] reads it.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_names_and_short_names_parse() {
        for t in ContainerType::ALL {
            assert_eq!(t.arm_name().parse::<ContainerType>(), Ok(t));
            assert_eq!(t.to_string().to_lowercase().parse::<ContainerType>(), Ok(t));
        }
        assert_eq!("python".parse(), Ok(ContainerType::PythonLts));
        assert_eq!("node".parse(), Ok(ContainerType::NodeLts));
        assert_eq!(" Shell ".parse(), Ok(ContainerType::Shell));
        assert_eq!(
            "custom-container".parse(),
            Ok(ContainerType::CustomContainer)
        );
        assert_eq!("gpu".parse(), Ok(ContainerType::GpuBase));
    }

    #[test]
    fn an_unknown_name_is_an_error_naming_the_choices() {
        let e = "ruby".parse::<ContainerType>().unwrap_err();
        assert!(e.to_string().contains("\"ruby\"") && e.to_string().contains("shell"));
    }

    #[test]
    fn only_custom_containers_manage_sessions_through_management_calls() {
        for t in ContainerType::ALL {
            let custom = t == ContainerType::CustomContainer;
            assert_eq!(t.pool_type() == PoolType::CustomContainer, custom);
        }
    }

    #[test]
    fn it_reads_from_toml() {
        #[derive(Deserialize)]
        struct P {
            container_type: ContainerType,
        }
        let p: P = toml::from_str("container_type = \"shell\"").unwrap();
        assert_eq!(p.container_type, ContainerType::Shell);
        assert!(toml::from_str::<P>("container_type = \"x\"").is_err());
    }
}
