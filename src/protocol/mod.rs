//! The wire and domain types of the dynamic-sessions data plane, with no I/O:
//! executions and their outputs and images, files, sessions and pool metadata
//! (`aca-api.md` §4), api-versions and their families (§1.2), container types,
//! the Python literal form of results, shell executions (§4.7), the reading of
//! an execution's answer ([`reply`]), the isolation a local pool reports and
//! its per-session limits, the service's limits a local pool emulates
//! (`--azure-limits`) and the test of a stream the service probably cut,
//! sessionpad's own routes and event-stream wire, and
//! the flight recorder's record of a call, and the egress policy of a local
//! pool's sessions with the record of one network attempt.
//!
//! The ground floor: every other part depends on it (the client, the local
//! pool, the ledger, the event hub, the MCP server, the recording proxy, the
//! notebook model) and it depends on none of them, so that each of those can
//! speak the same types without importing each other. See `ARCHITECTURE.md`.

pub mod api;
pub mod completion;
pub mod container_type;
pub mod egress;
pub mod events;
pub mod identifier;
pub mod image;
pub mod isolation;
pub mod limits;
pub mod model;
pub mod python_repr;
pub mod record;
pub mod reply;
pub mod routes;
pub mod service_limits;
pub mod shell;

pub use api::{ApiVersion, Family};
pub use completion::Completion;
pub use container_type::ContainerType;
pub use isolation::Isolation;
pub use model::{Execution, ExecutionImage, ExecutionStatus, ExecutionValue};
pub use model::{
    FileKind, KernelInfo, NameVersion, PoolMetadata, PoolType, RemoteFile, SessionInfo,
};
pub use shell::{ShellCommand, ShellExecution};
