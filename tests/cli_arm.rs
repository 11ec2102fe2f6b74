//! The pool card of an Azure session pool (issue 28 item 4), through the real
//! binary: `pool info` against a loopback stand-in that speaks both the data
//! plane (`aca-api.md` §4.4: `metadata`, `listSessions`, `DELETE session`) and
//! Azure Resource Manager's wire (`GET .../providers/Microsoft.App/sessionPools/{name}`,
//! answering the spec's own example bodies from `tests/fixtures/arm/`, its error
//! bodies `{"error":{"code","message"}}` with ARM's headers). The binary is
//! pointed at it with `SESSIONPAD_ARM_ENDPOINT`; its ARM token is
//! `SESSIONPAD_ARM_TOKEN`, or comes from the credential (a fake `az`).
//! Also `sessions ls|rm --older-than` against the stand-in's fixed creation times.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
#[path = "common/arm.rs"]
mod stand;

use std::path::Path;

use stand::{
    ARM_TOKEN, Arm, DP_TOKEN, GET, IN_PROGRESS, MCP, POOL, STABLE, SUB, body, run, stand_in,
};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Every string and number of `v`.
fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| leaves(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| leaves(v, out)),
        serde_json::Value::Bool(_) | serde_json::Value::Null => {}
    }
}

#[test]
fn pool_info_shows_every_field_of_the_spec_examples() {
    let data = tempfile::tempdir().unwrap();
    for (example, version) in [
        (GET, "2025-10-02-preview"),
        (IN_PROGRESS, "2025-10-02-preview"),
        (MCP, "2025-10-02-preview"),
        (STABLE, "2026-01-01"),
    ] {
        let (stand, base) = stand_in(Arm::Example(example), &[("a", 10), ("b", 20)]);
        let env = [
            ("SESSIONPAD_ARM_TOKEN", ARM_TOKEN),
            ("SESSIONPAD_ARM_API_VERSION", version),
        ];
        let out = run(
            &base,
            data.path(),
            &env,
            &["--token", DP_TOKEN, "pool", "info"],
        );
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
        assert!(
            stdout.contains(&format!("session pool (ARM, api-version {version}):")),
            "{stdout}"
        );
        let mut values = Vec::new();
        leaves(&body(example), &mut values);
        for v in values {
            assert!(stdout.contains(&v), "{v:?} is not in pool info:\n{stdout}");
        }
        // "N of max alive": the sessions the data plane lists, of maxConcurrentSessions.
        let max =
            body(example)["properties"]["scaleConfiguration"]["maxConcurrentSessions"].clone();
        assert!(stdout.contains(&format!("2 of {max} alive")), "{stdout}");
        // The data plane's metadata is still there.
        assert!(stdout.contains("numpy 2.2.3"), "{stdout}");
        // ARM got its own token and the api-version; the data plane its own.
        let seen = stand.arm_seen.lock().unwrap().clone();
        assert_eq!(seen, [(version.to_string(), format!("Bearer {ARM_TOKEN}"))]);
        assert!(
            stand
                .dp_seen
                .lock()
                .unwrap()
                .iter()
                .all(|a| *a == format!("Bearer {DP_TOKEN}"))
        );

        let out = run(
            &base,
            data.path(),
            &env,
            &["--token", DP_TOKEN, "--json", "pool", "info"],
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
        assert_eq!(v["session_pool"]["resource"], body(example));
        assert_eq!(v["session_pool"]["api_version"], version);
        assert_eq!(v["session_pool"]["alive"], 2);
    }
}

#[test]
fn a_403_from_arm_names_the_missing_role_and_a_404_the_place() {
    let data = tempfile::tempdir().unwrap();
    let env = [("SESSIONPAD_ARM_TOKEN", ARM_TOKEN)];
    let (stand, base) = stand_in(Arm::Forbidden, &[]);
    let out = run(
        &base,
        data.path(),
        &env,
        &["--token", DP_TOKEN, "pool", "info"],
    );
    let stdout = text(&out.stdout);
    // The data plane's metadata is still printed: ARM's refusal is said, not fatal.
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("numpy 2.2.3"), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("session pool (ARM): "))
        .unwrap_or_else(|| panic!("no ARM line in\n{stdout}"));
    for words in [
        "403 AuthorizationFailed",
        "\"Reader\" role",
        "Microsoft.App/sessionPools/read",
        "\"Azure ContainerApps Session Executor\" role of the data plane does not include it",
    ] {
        assert!(line.contains(words), "{words:?} not in {line}");
    }
    *stand.arm.lock().unwrap() = Arm::NotFound;
    let out = run(
        &base,
        data.path(),
        &env,
        &["--token", DP_TOKEN, "pool", "info"],
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "ARM has no session pool {POOL} in resource group rg of subscription {SUB} (404 ResourceNotFound)"
        )),
        "{stdout}"
    );
    let out = run(
        &base,
        data.path(),
        &env,
        &["--token", DP_TOKEN, "--json", "pool", "info"],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["session_pool"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("404")),
        "{v}"
    );
}

/// A fake `az` in `dir`: prints a token for whichever resource it is asked,
/// `arm-az` for management.azure.com, `dp-az` for anything else, and records
/// its arguments in `dir/calls`.
fn fake_az(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let d = dir.display();
    let az = format!(
        r#"#!/bin/sh
echo "$*" >> '{d}/calls'
case "$*" in *management.azure.com*) t=arm-az ;; *) t=dp-az ;; esac
exp=$(( $(date +%s) + 3600 ))
printf '{{"accessToken": "%s", "expiresOn": "2030-01-01 00:00:00.000000", "expires_on": %s, "subscription": "s", "tenant": "t", "tokenType": "Bearer"}}\n' "$t" "$exp"
"#
    );
    let azd = "#!/bin/sh\necho 'ERROR: not logged in' >&2\nexit 1\n";
    for (name, body) in [("az", az.as_str()), ("azd", azd)] {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[test]
fn the_arm_token_comes_from_the_pools_own_credential() {
    let data = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    fake_az(bin.path());
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (stand, base) = stand_in(Arm::Example(GET), &[]);
    let out = run(
        &base,
        data.path(),
        &[("PATH", &path)],
        &["--auth", "az", "pool", "info"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("egress: on"),
        "{}",
        text(&out.stdout)
    );
    let seen = stand.arm_seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, "Bearer arm-az");
    assert!(
        stand
            .dp_seen
            .lock()
            .unwrap()
            .iter()
            .all(|a| a == "Bearer dp-az")
    );
    let calls = std::fs::read_to_string(bin.path().join("calls")).unwrap();
    assert!(calls.contains("https://management.azure.com"), "{calls}");
    assert!(calls.contains("https://dynamicsessions.io"), "{calls}");
}

#[test]
fn sessions_older_than_are_listed_and_ended_after_asking() {
    let data = tempfile::tempdir().unwrap();
    let env = [("SESSIONPAD_ARM_TOKEN", ARM_TOKEN)];
    let (stand, base) = stand_in(
        Arm::Example(GET),
        &[("young", 60), ("old", 2 * 3600), ("oldest", 3 * 3600)],
    );
    let flags = |args: &[&'static str]| {
        let mut all = vec!["--token", DP_TOKEN];
        all.extend_from_slice(args);
        all
    };
    let ls = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "ls", "--older-than", "1h"]),
    );
    let listed = text(&ls.stdout);
    assert!(ls.status.success(), "{}", text(&ls.stderr));
    let ids: Vec<_> = listed
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(ids, ["oldest", "old"], "{listed}");
    let none = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "ls", "--older-than", "4h"]),
    );
    assert!(text(&none.stdout).is_empty());
    assert!(
        text(&none.stderr).contains("no sessions older than 4h"),
        "{}",
        text(&none.stderr)
    );
    // Nobody to ask: refused, naming --yes, and nothing ended.
    let refused = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "rm", "--older-than", "1h"]),
    );
    let err = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("--yes") && err.contains("2 sessions"), "{err}");
    assert!(stand.deleted.lock().unwrap().is_empty());
    // A duration that is not one is refused by the parser.
    let bad = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "ls", "--older-than", "an hour"]),
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("30m, 1h, 2d"),
        "{}",
        text(&bad.stderr)
    );
    // Identifiers and --older-than do not mix.
    let both = run(
        &base,
        data.path(),
        &env,
        &flags(&["sessions", "rm", "young", "--older-than", "1h", "--yes"]),
    );
    assert_eq!(both.status.code(), Some(2));
    assert!(stand.deleted.lock().unwrap().is_empty());
    let yes = run(
        &base,
        data.path(),
        &env,
        &flags(&["--json", "sessions", "rm", "--older-than", "1h", "--yes"]),
    );
    assert!(yes.status.success(), "{}", text(&yes.stderr));
    let v: serde_json::Value = serde_json::from_slice(&yes.stdout).unwrap();
    let ended: Vec<_> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["deleted"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ended, ["oldest", "old"]);
    assert_eq!(*stand.deleted.lock().unwrap(), ["oldest", "old"]);
}
