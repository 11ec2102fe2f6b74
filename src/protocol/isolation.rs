//! What keeps a local pool's sessions apart from the host and from each other, as
//! actually in force on this machine: whether kernels run sandboxed (and if not,
//! why), and each per-session limit with the mechanism that enforces it. The pool
//! builds one [`Isolation`] at start; serve prints it, `GET metadata` carries it
//! (as `sessionpadIsolation`, a field of sessionpad's own next to the service's),
//! and the notebook and `exec` warn from it when sessions are not isolated.

use serde::{Deserialize, Serialize};

/// The name of the field of the local pool's `GET metadata` document (`aca-api.md`
/// §4.4) that holds its [`Isolation`]; Azure's pools do not send it.
pub const METADATA_FIELD: &str = "sessionpadIsolation";

/// One per-session limit in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// What is limited, e.g. `memory`, `processes`, `/tmp`, `/mnt/data`, `cpu`.
    pub what: String,
    /// How much, for people, e.g. `2 GiB`, `256`, `weight 100`.
    pub value: String,
    /// What enforces it, e.g. `cgroup v1`, `cgroup v2`, `rlimit`, `tmpfs`.
    pub mechanism: String,
}

/// The isolation of a local pool's sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Isolation {
    /// `None` when kernels run in the sandbox; else why they do not, one sentence
    /// that says sessions are not isolated (from the local pool's `sandbox::NoSandbox`).
    pub unsandboxed: Option<String>,
    /// The per-session limits in force (empty when none could be applied).
    pub limits: Vec<Limit>,
    /// Other facts of the sandbox, one short sentence each (the user id kernels
    /// run as, the seccomp filter, the network).
    pub notes: Vec<String>,
}

impl Isolation {
    /// An isolation of unsandboxed kernels, for the reason `why`.
    pub fn unsandboxed(why: impl Into<String>) -> Self {
        Self {
            unsandboxed: Some(why.into()),
            limits: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Whether kernels run sandboxed.
    pub fn is_sandboxed(&self) -> bool {
        self.unsandboxed.is_none()
    }

    /// One line for a status line or stderr when sessions are not isolated,
    /// `None` when they are.
    pub fn warning(&self) -> Option<String> {
        self.unsandboxed
            .as_ref()
            .map(|why| format!("local pool: {why}"))
    }

    /// The status line's words for a sandboxed pool: `sandboxed · no network`,
    /// `sandboxed · network on` where egress is allowed, `sandboxed · egress
    /// allow-list` or `sandboxed · egress audited` behind the pool's egress
    /// proxy ([`crate::protocol::egress`]); `None` when
    /// sessions are not isolated (then [`Isolation::warning`] speaks).
    pub fn badge(&self) -> Option<&'static str> {
        if !self.is_sandboxed() {
            return None;
        }
        let network = self.notes.iter().find(|n| n.starts_with("network: "));
        Some(match network.map(String::as_str) {
            Some(n) if n.starts_with("network: allowed") => "sandboxed · network on",
            Some(n) if n.starts_with("network: allow-list") => "sandboxed · egress allow-list",
            Some(n) if n.starts_with("network: audit") => "sandboxed · egress audited",
            _ => "sandboxed · no network",
        })
    }

    /// `(label, value)` lines for the pool's info: the sandbox, each limit with
    /// its mechanism, then the notes.
    pub fn lines(&self) -> Vec<(String, String)> {
        let mut out = vec![(
            "sandbox".to_string(),
            match &self.unsandboxed {
                None => "built in".to_string(),
                Some(why) => format!("none: {why}"),
            },
        )];
        for l in &self.limits {
            out.push((l.what.clone(), format!("{} ({})", l.value, l.mechanism)));
        }
        for n in &self.notes {
            out.push((String::new(), n.clone()));
        }
        out
    }
}

/// Whether a pool at `endpoint` may be a sessionpad local pool, which reports
/// its [`Isolation`] in `GET metadata`: one served over plain http (`sessionpad
/// serve` speaks http; Azure's pool management endpoints are https only), so
/// that nothing extra is asked of Azure.
pub fn may_report(endpoint: &str) -> bool {
    url::Url::parse(endpoint.trim()).is_ok_and(|u| u.scheme() == "http")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsandboxed_pools_warn_and_say_why() {
        let iso = Isolation::unsandboxed("bubblewrap is not installed");
        assert!(!iso.is_sandboxed());
        assert_eq!(
            iso.warning().as_deref(),
            Some("local pool: bubblewrap is not installed")
        );
        assert_eq!(iso.lines()[0].1, "none: bubblewrap is not installed");
        assert_eq!(iso.badge(), None);
    }

    #[test]
    fn only_plain_http_endpoints_are_asked() {
        assert!(may_report("http://127.0.0.1:8330"));
        assert!(!may_report(
            "https://eastus.dynamicsessions.io/subscriptions/x/sessionPools/p"
        ));
        assert!(!may_report("not a url"));
    }

    #[test]
    fn sandboxed_pools_list_their_limits() {
        let iso = Isolation {
            unsandboxed: None,
            limits: vec![Limit {
                what: "memory".into(),
                value: "2 GiB".into(),
                mechanism: "cgroup v1".into(),
            }],
            notes: vec!["no network".into()],
        };
        assert!(iso.warning().is_none());
        assert_eq!(iso.badge(), Some("sandboxed · no network"));
        let lines = iso.lines();
        assert_eq!(lines[1], ("memory".into(), "2 GiB (cgroup v1)".into()));
        assert_eq!(lines[2].1, "no network");
        let mut allow = iso.clone();
        allow.notes = vec![
            crate::protocol::egress::Egress::Allow(vec!["pypi.org:443".parse().unwrap()]).note(),
        ];
        assert_eq!(allow.badge(), Some("sandboxed · egress allow-list"));
        assert!(allow.lines()[2].1.ends_with("recorded: pypi.org:443"));
        let json = serde_json::to_value(&iso).unwrap();
        let back: Isolation = serde_json::from_value(json).unwrap();
        assert_eq!(back, iso);
    }
}
