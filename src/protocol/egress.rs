//! The egress policy of a local pool's sessions and the record of one network
//! attempt, shared by the CLI (`serve --egress`), the config file (`[pool]
//! egress`), the local pool (which enforces it) and the isolation report,
//! without any of them importing the pool.
//!
//! The policy: `off` (the session's own network namespace with only `lo`, the
//! default, like a pool with egress disabled), `on` (the host's network, like
//! `EgressEnabled`), `allow=HOST[:PORT][,HOST[:PORT]…]` (no route out; HTTP and
//! HTTPS through the pool's proxy to the hosts listed only) and `audit` (as
//! `allow`, but every host is allowed and recorded). Azure's session pools know
//! only on and off (`aca-api.md` §3, `sessionNetworkConfiguration`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a local pool's sessions may connect to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Egress {
    /// No network: the session's own namespace with only `lo` (the default).
    #[default]
    Off,
    /// The host's network, unfiltered and unrecorded (`serve --egress`).
    On,
    /// No route out; HTTP and HTTPS (CONNECT) through the pool's proxy to the
    /// hosts and ports listed, every attempt recorded.
    Allow(Vec<AllowRule>),
    /// No route out; everything through the pool's proxy is allowed and
    /// recorded (to show what code *would* reach).
    Audit,
}

/// One entry of an allow-list: a host (an exact name or address, or
/// `*.domain` for any name under `domain`) and a port (`None`: any port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowRule {
    /// The host, lowercase, without brackets for IPv6; `*.github.com` matches
    /// `api.github.com` and `a.b.github.com`, not `github.com` itself.
    pub host: String,
    /// The TCP port, or `None` for any.
    pub port: Option<u16>,
}

/// Why an egress policy could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "egress policy {given:?}: {why} (expected off, on, audit or allow=HOST[:PORT][,HOST[:PORT]…])"
)]
pub struct EgressParseError {
    /// The text given.
    pub given: String,
    /// What is wrong with it.
    pub why: String,
}

impl Egress {
    /// Whether sessions keep the host's network (only [`Egress::On`]); every
    /// other policy gives them a namespace of their own with only `lo`.
    pub fn host_network(&self) -> bool {
        matches!(self, Self::On)
    }

    /// Whether the pool runs its egress proxy for the sessions (allow-list or
    /// audit).
    pub fn proxied(&self) -> bool {
        matches!(self, Self::Allow(_) | Self::Audit)
    }

    /// Whether a connection to `host` (a name or address, any case) on `port`
    /// is allowed, judged from the names alone (before any DNS lookup).
    pub fn allows(&self, host: &str, port: u16) -> bool {
        match self {
            Self::Off => false,
            Self::On | Self::Audit => true,
            Self::Allow(rules) => rules.iter().any(|r| r.matches(host, port)),
        }
    }

    /// One short sentence for the isolation report: `network: none, every
    /// attempt recorded`,
    /// `network: allowed (--egress)`, `network: allow-list through the pool's
    /// proxy: pypi.org:443, *.github.com` or `network: audit …`.
    pub fn note(&self) -> String {
        match self {
            Self::Off => "network: none, every attempt recorded".to_string(),
            Self::On => "network: allowed (--egress)".to_string(),
            Self::Allow(rules) => format!(
                "network: allow-list through the pool's proxy (HTTP and HTTPS), every attempt \
                 recorded: {}",
                join(rules)
            ),
            Self::Audit => "network: audit, everything through the pool's proxy (HTTP and \
                            HTTPS) allowed and recorded"
                .to_string(),
        }
    }
}

fn join(rules: &[AllowRule]) -> String {
    rules
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

impl AllowRule {
    /// Whether this rule allows `host` (any case, IPv6 with or without
    /// brackets) on `port`.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self.host.strip_prefix("*.") {
            Some(domain) => host
                .strip_suffix(domain)
                .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
            None => host == self.host,
        }
    }
}

impl FromStr for AllowRule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (h, after) = rest
                .split_once(']')
                .ok_or_else(|| format!("{s:?} opens [ without closing it"))?;
            (h, after.strip_prefix(':'))
        } else if s.matches(':').count() > 1 {
            (s, None) // a bare IPv6 address, any port
        } else {
            match s.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            }
        };
        let port = match port {
            None | Some("*") => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| format!("{p:?} is not a port (1-65535 or *)"))?,
            ),
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let name = host.strip_prefix("*.").unwrap_or(&host);
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
        if !valid {
            return Err(format!(
                "{s:?} is not a host name or address (a wildcard only as *.domain)"
            ));
        }
        Ok(Self { host, port })
    }
}

impl fmt::Display for AllowRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.port {
            Some(p) => write!(f, "{host}:{p}"),
            None => f.write_str(&host),
        }
    }
}

impl FromStr for Egress {
    type Err = EgressParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why: String| EgressParseError {
            given: s.to_string(),
            why,
        };
        match s.trim() {
            "off" | "false" => Ok(Self::Off),
            "on" | "true" => Ok(Self::On),
            "audit" => Ok(Self::Audit),
            other => {
                let list = other
                    .strip_prefix("allow=")
                    .ok_or_else(|| err("not a policy".into()))?;
                let rules = list
                    .split(',')
                    .filter(|h| !h.trim().is_empty())
                    .map(AllowRule::from_str)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(err)?;
                if rules.is_empty() {
                    return Err(err("an allow-list names at least one host".into()));
                }
                Ok(Self::Allow(rules))
            }
        }
    }
}

impl fmt::Display for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Off => f.write_str("off"),
            Self::On => f.write_str("on"),
            Self::Audit => f.write_str("audit"),
            Self::Allow(rules) => write!(f, "allow={}", join(rules)),
        }
    }
}

impl Serialize for Egress {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Egress {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// A string policy, or a bool (`true` is on, `false` off).
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Given {
            Bool(bool),
            Text(String),
        }
        match Given::deserialize(d)? {
            Given::Bool(b) => Ok(if b { Self::On } else { Self::Off }),
            Given::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// What the pool's egress proxy decided about one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Forwarded.
    Allowed,
    /// Refused (403 from the proxy), before any DNS lookup.
    Denied,
}

impl Decision {
    /// Its name on the wire and in the ledger: `allowed` or `denied`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Denied => "denied",
        }
    }

    /// The decision named `s` ([`Decision::as_str`]); `None` for another name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "allowed" => Some(Self::Allowed),
            "denied" => Some(Self::Denied),
            _ => None,
        }
    }
}

/// How a session tried to reach an address.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Via {
    /// Through the pool's egress proxy (`HTTP_PROXY`, a `CONNECT` tunnel): the
    /// policy decides.
    #[default]
    Proxy,
    /// A socket of the session's own (`connect`, or `sendto` with an address),
    /// outside the proxy: the session's network namespace, which holds only
    /// `lo`, lets nothing out; seen by the pool's connect notifier.
    Direct,
}

impl Via {
    /// Its name on the wire and in the ledger: `proxy` or `direct`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Proxy => "proxy",
            Self::Direct => "direct",
        }
    }

    /// The route named `s` ([`Via::as_str`]); `None` for another name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "proxy" => Some(Self::Proxy),
            "direct" => Some(Self::Direct),
            _ => None,
        }
    }
}

/// One network attempt of a session, through the pool's egress proxy or
/// straight from a socket of its own, as recorded in the ledger, `sessionpad
/// log --json` (an execution's `network` array) and the execution's reply
/// (`sessionpadNetwork`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkAttempt {
    /// The host asked for (a name or address), as the session gave it; for a
    /// direct attempt, the address (`10.1.2.3`, `::1`).
    pub host: String,
    /// The port asked for (TCP, or UDP for a direct attempt).
    pub port: u16,
    /// What the proxy did; a direct attempt is always `denied` (no route
    /// out of the session's namespace).
    pub decision: Decision,
    /// Through the proxy or direct (`"via"`; absent in records made before
    /// it existed, which were all through the proxy).
    #[serde(default)]
    pub via: Via,
    /// Bytes relayed, both ways together (0 when denied).
    pub bytes: u64,
    /// When the session asked (UTC; RFC 3339 on the wire, like
    /// `2026-11-29T00:30:00.123Z`).
    pub at: chrono::DateTime<chrono::Utc>,
}

/// The name of the field of a local pool's execution reply that lists the
/// execution's [`NetworkAttempt`]s; sessionpad's own, which other clients
/// ignore (like [`crate::protocol::isolation::METADATA_FIELD`]).
pub const REPLY_FIELD: &str = "sessionpadNetwork";

/// How many different attempts [`summary`] names before it counts the rest.
pub const SUMMARY_SHOWN: usize = 8;

/// `host:port allowed · host:port blocked · host:port blocked (direct)`, the
/// one line under a cell and in `sessionpad log`; `None` for no attempts.
/// The same host, port and outcome are named once, with `×N` when made N
/// times (a resolver's retries, a loop), in the order first made; past
/// [`SUMMARY_SHOWN`] different ones, the rest are counted (`· 37 more`).
pub fn summary(attempts: &[NetworkAttempt]) -> Option<String> {
    if attempts.is_empty() {
        return None;
    }
    let mut order: Vec<String> = Vec::new();
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for a in attempts {
        let host = if a.host.contains(':') {
            format!("[{}]", a.host)
        } else {
            a.host.clone()
        };
        let d = match (a.decision, a.via) {
            (Decision::Allowed, _) => "allowed",
            (Decision::Denied, Via::Proxy) => "blocked",
            (Decision::Denied, Via::Direct) => "blocked (direct)",
        };
        let word = format!("{host}:{} {d}", a.port);
        let n = counts.entry(word.clone()).or_insert(0);
        if *n == 0 {
            order.push(word);
        }
        *n += 1;
    }
    let mut words: Vec<String> = order
        .iter()
        .take(SUMMARY_SHOWN)
        .map(|w| match counts[w] {
            1 => w.clone(),
            n => format!("{w} ×{n}"),
        })
        .collect();
    let rest: usize = order.iter().skip(SUMMARY_SHOWN).map(|w| counts[w]).sum();
    if rest > 0 {
        words.push(format!("{rest} more"));
    }
    Some(words.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_and_print_back() {
        for s in [
            "off",
            "on",
            "audit",
            "allow=pypi.org:443,*.github.com,127.0.0.1:8123,[::1]:80",
        ] {
            let p: Egress = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
        }
        assert_eq!("true".parse::<Egress>().unwrap(), Egress::On);
        let p: Egress = "allow=PyPI.org:*".parse().unwrap();
        assert_eq!(
            p,
            Egress::Allow(vec![AllowRule {
                host: "pypi.org".into(),
                port: None
            }])
        );
    }

    #[test]
    fn bad_policies_say_what_is_wrong() {
        for (s, why) in [
            ("allow=", "at least one host"),
            ("allow=a.com:0", "not a port"),
            ("allow=a.com:http", "not a port"),
            ("allow=a*.com", "wildcard"),
            ("allow=[::1", "without closing"),
            ("everything", "not a policy"),
        ] {
            let e = s.parse::<Egress>().unwrap_err().to_string();
            assert!(e.contains(why), "{s}: {e}");
        }
    }

    #[test]
    fn allow_lists_match_hosts_ports_and_wildcards() {
        let p: Egress = "allow=127.0.0.1:8123,*.github.com,pypi.org:443,[::1]"
            .parse()
            .unwrap();
        assert!(p.allows("127.0.0.1", 8123));
        assert!(!p.allows("127.0.0.1", 9));
        assert!(p.allows("api.github.com", 22));
        assert!(p.allows("A.B.GitHub.com.", 443));
        assert!(!p.allows("github.com", 443));
        assert!(!p.allows("evilgithub.com", 443));
        assert!(p.allows("pypi.org", 443));
        assert!(!p.allows("pypi.org", 80));
        assert!(p.allows("[::1]", 5));
        assert!(!p.allows("169.254.169.254", 80));
        assert!(Egress::Audit.allows("169.254.169.254", 80));
        assert!(!Egress::Off.allows("127.0.0.1", 80));
    }

    #[test]
    fn the_config_takes_a_string_or_a_bool() {
        #[derive(Deserialize)]
        struct P {
            egress: Egress,
        }
        let p: P = toml::from_str("egress = \"allow=pypi.org:443\"").unwrap();
        assert!(p.egress.proxied());
        let p: P = toml::from_str("egress = true").unwrap();
        assert!(p.egress.host_network());
        assert!(toml::from_str::<P>("egress = \"sometimes\"").is_err());
    }

    fn at() -> chrono::DateTime<chrono::Utc> {
        "2026-11-29T00:30:00.123Z".parse().unwrap()
    }

    #[test]
    fn attempts_read_as_one_line_and_as_json() {
        let a = vec![
            NetworkAttempt {
                host: "127.0.0.1".into(),
                port: 8123,
                decision: Decision::Allowed,
                via: Via::Proxy,
                bytes: 200,
                at: at(),
            },
            NetworkAttempt {
                host: "127.0.0.1".into(),
                port: 9,
                decision: Decision::Denied,
                via: Via::Proxy,
                bytes: 0,
                at: at(),
            },
            NetworkAttempt {
                host: "10.1.2.3".into(),
                port: 80,
                decision: Decision::Denied,
                via: Via::Direct,
                bytes: 0,
                at: at(),
            },
        ];
        assert_eq!(
            summary(&a).unwrap(),
            "127.0.0.1:8123 allowed · 127.0.0.1:9 blocked · 10.1.2.3:80 blocked (direct)"
        );
        assert_eq!(
            serde_json::to_value(&a[1]).unwrap(),
            serde_json::json!({"host": "127.0.0.1", "port": 9, "decision": "denied",
                "via": "proxy", "bytes": 0, "at": "2026-11-29T00:30:00.123Z"})
        );
        let old: NetworkAttempt = serde_json::from_value(serde_json::json!({"host": "a",
            "port": 1, "decision": "denied", "bytes": 0, "at": "2026-11-29T00:30:00.123Z"}))
        .unwrap();
        assert_eq!(
            old.via,
            Via::Proxy,
            "a record from before `via` was through the proxy"
        );
        assert_eq!(summary(&[]), None);
        // Retries are named once, and a long list ends counted.
        let mut many = vec![a[2].clone(); 3];
        for port in 1..=10 {
            many.push(NetworkAttempt {
                port,
                ..a[1].clone()
            });
        }
        assert_eq!(
            summary(&many).unwrap(),
            "10.1.2.3:80 blocked (direct) ×3 · 127.0.0.1:1 blocked · 127.0.0.1:2 blocked · \
             127.0.0.1:3 blocked · 127.0.0.1:4 blocked · 127.0.0.1:5 blocked · 127.0.0.1:6 \
             blocked · 127.0.0.1:7 blocked · 3 more"
        );
    }
}
