//! The pool card: a session pool's ARM resource ([`SessionPoolResource`]) as
//! labelled lines for `sessionpad pool info`, and as one short line for the
//! notebook's sessions pane ("egress off · cooldown 300 s · 3 of 100 alive").
//! Plain text: the caller sanitises and prints it.

use super::arm::{
    ContainerResources, LifecycleConfiguration, SessionContainer, SessionPoolProperties,
    SessionPoolResource, TemplateStatus,
};

impl SessionPoolResource {
    /// Every field the resource has, as `(label, value)` lines, in the order a
    /// person reads a pool: what and where, its state, egress, lifecycle,
    /// scale (with `alive`, the sessions the data plane lists, as "N of max
    /// alive"), images, MCP server, health. Fields ARM did not send are left out.
    pub fn card(&self, alive: Option<usize>) -> Vec<(String, String)> {
        let mut lines = Vec::new();
        let mut push = |label: &str, value: String| lines.push((label.to_string(), value));
        if let Some(name) = &self.name {
            push("name", name.clone());
        }
        if let Some(id) = &self.id {
            push("resource", id.clone());
        }
        if let Some(t) = &self.resource_type {
            push("type", t.clone());
        }
        if let Some(l) = &self.location {
            push("location", l.clone());
        }
        let props = self.properties.clone().unwrap_or_default();
        if let Some(s) = &props.provisioning_state {
            push("provisioning", s.clone());
        }
        if let Some(t) = &props.container_type {
            push("container type", t.clone());
        }
        if let Some(e) = egress(&props) {
            push("egress", e);
        }
        if let Some(l) = lifecycle(&props) {
            push("lifecycle", l);
        }
        if let Some(s) = scale(&props, alive) {
            push("sessions", s);
        }
        if let Some(m) = management(&props) {
            push("management", m);
        }
        for (label, value) in template_lines(&props) {
            push(&label, value);
        }
        if let Some(e) = &props.environment_id {
            push("environment", e.clone());
        }
        if let Some(i) = &self.identity {
            let mut text = i.identity_type.clone().unwrap_or_else(|| "-".into());
            let ids: Vec<String> = [("principal", &i.principal_id), ("tenant", &i.tenant_id)]
                .into_iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} {v}")))
                .collect();
            if !ids.is_empty() {
                text.push_str(&format!(" ({})", ids.join(", ")));
            }
            push("identity", text);
        }
        for s in props.managed_identity_settings.iter().flatten() {
            let who = s.identity.clone().unwrap_or_else(|| "-".into());
            let when = s.lifecycle.as_deref().unwrap_or("None");
            push("session identity", format!("{who} (lifecycle {when})"));
        }
        if let Some(e) = &props.pool_management_endpoint {
            push("endpoint", e.clone());
        }
        if let Some(m) = mcp(&props) {
            push("MCP server", m);
        }
        for (label, value) in health_lines(&props) {
            push(&label, value);
        }
        lines
    }

    /// One short line for a pane's header: egress, lifecycle, "N of max alive"
    /// (`alive`: the sessions the data plane lists), and what is wrong when
    /// something is (provisioning not `Succeeded`, crashes, failed image
    /// pulls), joined with ` · `. Empty when ARM said none of it.
    pub fn summary(&self, alive: Option<usize>) -> String {
        let props = self.properties.clone().unwrap_or_default();
        let mut parts = Vec::new();
        if let Some(status) = props
            .session_network_configuration
            .as_ref()
            .and_then(|n| n.status.as_deref())
        {
            parts.push(match status {
                "EgressEnabled" => "egress on".to_string(),
                "EgressDisabled" => "egress off".to_string(),
                other => format!("egress {other}"),
            });
        }
        if let Some(l) = lifecycle_config(&props) {
            match (l.cooldown_period_in_seconds, l.max_alive_period_in_seconds) {
                (Some(c), _) if l.lifecycle_type.as_deref() != Some("OnContainerExit") => {
                    parts.push(format!("cooldown {c} s"));
                }
                (_, Some(m)) => parts.push(format!("max alive {m} s")),
                (Some(c), None) => parts.push(format!("cooldown {c} s")),
                (None, None) => {}
            }
        }
        let max = props
            .scale_configuration
            .as_ref()
            .and_then(|s| s.max_concurrent_sessions);
        match (alive, max) {
            (Some(n), Some(max)) => parts.push(format!("{n} of {max} alive")),
            (None, Some(max)) => parts.push(format!("max {max} sessions")),
            (Some(n), None) => parts.push(format!("{n} alive")),
            (None, None) => {}
        }
        if let Some(state) = props
            .provisioning_state
            .as_deref()
            .filter(|s| *s != "Succeeded")
        {
            parts.push(state.to_string());
        }
        let status = props
            .template_update_status
            .as_ref()
            .and_then(|t| t.active_template.as_ref())
            .and_then(|t| t.status.as_ref());
        if let Some(s) = status {
            if let Some(c) = s.crash_count.filter(|c| *c > 0) {
                parts.push(format!("{c} crashed"));
            }
            if let Some(c) = s.image_pull_fail_count.filter(|c| *c > 0) {
                parts.push(format!("{c} image pulls failed"));
            }
        }
        parts.join(" · ")
    }
}

fn egress(props: &SessionPoolProperties) -> Option<String> {
    let status = props
        .session_network_configuration
        .as_ref()?
        .status
        .as_ref()?;
    Some(match status.as_str() {
        "EgressEnabled" => format!("on ({status}): sessions reach the internet"),
        "EgressDisabled" => format!("off ({status}): sessions cannot reach the internet"),
        _ => status.clone(),
    })
}

/// The lifecycle, from `lifecycleConfiguration` or, in api-versions before it,
/// the cooldown right in `dynamicPoolConfiguration`.
fn lifecycle_config(props: &SessionPoolProperties) -> Option<LifecycleConfiguration> {
    let dynamic = props.dynamic_pool_configuration.as_ref()?;
    dynamic.lifecycle_configuration.clone().or_else(|| {
        dynamic
            .cooldown_period_in_seconds
            .map(|c| LifecycleConfiguration {
                lifecycle_type: dynamic.execution_type.clone(),
                cooldown_period_in_seconds: Some(c),
                max_alive_period_in_seconds: None,
            })
    })
}

fn lifecycle(props: &SessionPoolProperties) -> Option<String> {
    let l = lifecycle_config(props)?;
    let mut parts = vec![l.lifecycle_type.clone().unwrap_or_else(|| "-".into())];
    if let Some(c) = l.cooldown_period_in_seconds {
        parts.push(format!(
            "cooldown {c} s (a session ends {c} s after its last use)"
        ));
    }
    if let Some(m) = l.max_alive_period_in_seconds {
        parts.push(format!(
            "max alive {m} s (a session ends at most {m} s after it starts)"
        ));
    }
    Some(parts.join(", "))
}

fn scale(props: &SessionPoolProperties, alive: Option<usize>) -> Option<String> {
    let s = props.scale_configuration.as_ref();
    let max = s.and_then(|s| s.max_concurrent_sessions);
    let ready = s.and_then(|s| s.ready_session_instances);
    let mut parts = Vec::new();
    match (alive, max) {
        (Some(n), Some(m)) => parts.push(format!("{n} of {m} alive")),
        (Some(n), None) => parts.push(format!("{n} alive")),
        (None, Some(m)) => parts.push(format!("at most {m} at once")),
        (None, None) => {}
    }
    if let Some(r) = ready {
        parts.push(format!("{r} kept ready"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn management(props: &SessionPoolProperties) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(t) = &props.pool_management_type {
        parts.push(t.clone());
    }
    if let Some(n) = props.node_count {
        parts.push(format!("{n} node{}", if n == 1 { "" } else { "s" }));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn resources(r: &ContainerResources) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(cpu) = r.cpu {
        parts.push(format!("{cpu} CPU"));
    }
    if let Some(m) = &r.memory {
        parts.push(format!("{m} memory"));
    }
    parts
}

/// A container as one value: its image, then its name, resources and command.
fn container(c: &SessionContainer) -> String {
    let mut text = c.image.clone().unwrap_or_else(|| "-".into());
    let mut parts = Vec::new();
    if let Some(n) = &c.name {
        parts.push(format!("container {n}"));
    }
    if let Some(r) = &c.resources {
        parts.extend(resources(r));
    }
    let argv: Vec<&str> = c
        .command
        .iter()
        .flatten()
        .chain(c.args.iter().flatten())
        .map(String::as_str)
        .collect();
    if !argv.is_empty() {
        let joined = shlex::try_join(argv.iter().copied()).unwrap_or_else(|_| argv.join(" "));
        parts.push(format!("runs {joined}"));
    }
    if !parts.is_empty() {
        text.push_str(&format!(" ({})", parts.join(", ")));
    }
    text
}

fn template_lines(props: &SessionPoolProperties) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let Some(t) = &props.custom_container_template else {
        return lines;
    };
    for c in t.containers.iter().flatten() {
        lines.push(("image".to_string(), container(c)));
    }
    if let Some(p) = t.ingress.as_ref().and_then(|i| i.target_port) {
        lines.push(("ingress".to_string(), format!("port {p}")));
    }
    if let Some(r) = &t.registry_credentials {
        let mut parts = vec![r.server.clone().unwrap_or_else(|| "-".into())];
        if let Some(i) = &r.identity {
            parts.push(format!("pulled with identity {i}"));
        }
        if let Some(u) = &r.username {
            parts.push(format!("user {u}"));
        }
        if let Some(p) = &r.password_secret_ref {
            parts.push(format!("password in secret {p}"));
        }
        lines.push(("registry".to_string(), parts.join(", ")));
    }
    lines
}

fn mcp(props: &SessionPoolProperties) -> Option<String> {
    let m = props.mcp_server_settings.as_ref()?;
    let mut parts = vec![
        match m.is_mcp_server_enabled {
            Some(true) => "on",
            Some(false) => "off",
            None => "-",
        }
        .to_string(),
    ];
    match m.is_mcp_server_api_key_disabled {
        Some(true) => parts.push("no API key asked".into()),
        Some(false) => parts.push("API key required".into()),
        None => {}
    }
    if let Some(e) = &m.mcp_server_endpoint {
        parts.push(e.clone());
    }
    Some(parts.join(", "))
}

/// One template's health: its state, when it was made, its pods' counts.
fn template_health(t: &TemplateStatus) -> String {
    let mut text = t.details.clone().unwrap_or_else(|| "-".into());
    if let Some(c) = &t.created_time {
        text.push_str(&format!(" (template of {c})"));
    }
    if let Some(s) = &t.status {
        let mut counts = Vec::new();
        match (s.ready_count, s.expected_count) {
            (Some(r), Some(e)) => counts.push(format!("{r} of {e} pods ready")),
            (Some(r), None) => counts.push(format!("{r} pods ready")),
            (None, Some(e)) => counts.push(format!("{e} pods expected")),
            (None, None) => {}
        }
        for (n, what) in [
            (s.pending_count, "pending"),
            (s.allocated_count, "allocated"),
            (s.crash_count, "crashed"),
            (s.image_pull_fail_count, "image pulls failed"),
        ] {
            if let Some(n) = n {
                counts.push(format!("{n} {what}"));
            }
        }
        if !counts.is_empty() {
            text.push_str(&format!(": {}", counts.join(", ")));
        }
    }
    text
}

fn health_lines(props: &SessionPoolProperties) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let Some(u) = &props.template_update_status else {
        return lines;
    };
    for (label, t) in [
        ("health", &u.active_template),
        ("update", &u.desired_template),
    ] {
        let Some(t) = t else { continue };
        lines.push((label.to_string(), template_health(t)));
        let image_label = format!("{label} image");
        for c in t.containers.iter().flatten() {
            lines.push((image_label.clone(), container(c)));
        }
        if let Some(p) = t.ingress.as_ref().and_then(|i| i.target_port) {
            lines.push((format!("{label} ingress"), format!("port {p}")));
        }
    }
    lines
}
