use super::*;

const GET: &str = include_str!("../../tests/fixtures/arm/2025-10-02-preview_SessionPools_Get.json");
const IN_PROGRESS: &str =
    include_str!("../../tests/fixtures/arm/2025-10-02-preview_SessionPools_Get_InProgress.json");
const MCP: &str = include_str!(
    "../../tests/fixtures/arm/2025-10-02-preview_SessionPools_McpServer_CreateOrUpdate.json"
);
const STABLE: &str = include_str!("../../tests/fixtures/arm/2026-01-01_SessionPools_Get.json");

/// The `200` body of a spec example file.
fn body(example: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(example).expect("example JSON");
    v["responses"]["200"]["body"].clone()
}

/// Every string and number in `v` (booleans are words on the card, checked apart).
fn leaves(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| leaves(v, out)),
        serde_json::Value::Object(o) => o.values().for_each(|v| leaves(v, out)),
        _ => {}
    }
}

fn card_text(resource: &SessionPoolResource, alive: Option<usize>) -> String {
    resource
        .card(alive)
        .iter()
        .map(|(l, v)| format!("{l}: {v}\n"))
        .collect()
}

#[test]
fn the_card_shows_every_value_of_each_spec_example() {
    for example in [GET, IN_PROGRESS, MCP, STABLE] {
        let body = body(example);
        let resource: SessionPoolResource =
            serde_json::from_value(body.clone()).expect("the example reads");
        let text = card_text(&resource, None);
        let mut values = Vec::new();
        leaves(&body, &mut values);
        for v in values {
            assert!(text.contains(&v), "{v:?} is not on the card:\n{text}");
        }
    }
}

#[test]
fn the_resource_serialises_back_to_the_example() {
    // `--json` prints the resource as ARM sent it (every modelled field).
    for example in [GET, IN_PROGRESS, MCP, STABLE] {
        let body = body(example);
        let resource: SessionPoolResource = serde_json::from_value(body.clone()).unwrap();
        assert_eq!(serde_json::to_value(&resource).unwrap(), body);
    }
}

#[test]
fn the_card_reads_health_lifecycle_egress_and_mcp_in_words() {
    let get: SessionPoolResource = serde_json::from_value(body(GET)).unwrap();
    let text = card_text(&get, Some(3));
    for line in [
        "egress: on (EgressEnabled)",
        "lifecycle: Timed, cooldown 600 s",
        "sessions: 3 of 500 alive",
        "100 kept ready",
        "health: Running (template of 2025-10-02T00:00:00.000000Z): 100 of 100 pods ready, 0 pending, 0 allocated, 0 crashed, 0 image pulls failed",
        "image: repo/testcontainer:v4 (container testinitcontainer, 0.25 CPU, 0.5Gi memory, runs /bin/sh -c 'while true; do echo hello; sleep 10;done')",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    let mcp: SessionPoolResource = serde_json::from_value(body(MCP)).unwrap();
    let text = card_text(&mcp, None);
    assert!(
        text.contains("MCP server: on, API key required, https://eastus.dynamicsessions.io/"),
        "{text}"
    );
    let updating: SessionPoolResource = serde_json::from_value(body(IN_PROGRESS)).unwrap();
    let text = card_text(&updating, None);
    assert!(text.contains("update: Updating"), "{text}");
    assert!(
        text.contains("update image: repo/testcontainer:v5"),
        "{text}"
    );
}

#[test]
fn the_summary_is_egress_lifecycle_and_alive_of_max() {
    let get: SessionPoolResource = serde_json::from_value(body(GET)).unwrap();
    assert_eq!(
        get.summary(Some(3)),
        "egress on · cooldown 600 s · 3 of 500 alive"
    );
    assert_eq!(
        get.summary(None),
        "egress on · cooldown 600 s · max 500 sessions"
    );
    let updating: SessionPoolResource = serde_json::from_value(body(IN_PROGRESS)).unwrap();
    assert_eq!(
        updating.summary(Some(0)),
        "egress on · cooldown 600 s · 0 of 500 alive · InProgress"
    );
    let sick: SessionPoolResource = serde_json::from_value(serde_json::json!({
        "properties": {
            "sessionNetworkConfiguration": {"status": "EgressDisabled"},
            "dynamicPoolConfiguration": {"lifecycleConfiguration": {
                "lifecycleType": "OnContainerExit", "maxAlivePeriodInSeconds": 3600}},
            "scaleConfiguration": {"maxConcurrentSessions": 100},
            "templateUpdateStatus": {"activeTemplate": {"status": {
                "crashCount": 2, "imagePullFailCount": 1}}},
            "somethingNew": {"x": 1}
        }
    }))
    .unwrap();
    assert_eq!(
        sick.summary(Some(3)),
        "egress off · max alive 3600 s · 3 of 100 alive · 2 crashed · 1 image pulls failed"
    );
    assert_eq!(SessionPoolResource::default().summary(None), "");
}

#[test]
fn the_endpoint_names_subscription_group_and_pool() {
    let id = PoolResourceId::from_endpoint(
        "https://eastus.dynamicsessions.io/subscriptions/34adfa4f/resourceGroups/rg/sessionPools/testsessionpool/",
    )
    .expect("an Azure endpoint");
    assert_eq!(
        id,
        PoolResourceId {
            subscription: "34adfa4f".into(),
            resource_group: "rg".into(),
            name: "testsessionpool".into(),
        }
    );
    assert_eq!(
        id.arm_id(),
        "/subscriptions/34adfa4f/resourceGroups/rg/providers/Microsoft.App/sessionPools/testsessionpool"
    );
    // ARM's names match without regard to case; any host will do.
    assert!(
        PoolResourceId::from_endpoint(
            "http://127.0.0.1:9/SUBSCRIPTIONS/s/resourcegroups/g/sessionpools/p"
        )
        .is_some()
    );
    for local in [
        "http://127.0.0.1:8341",
        "http://127.0.0.1:8341/",
        "https://eastus.dynamicsessions.io/subscriptions/s/resourceGroups/g",
        "https://x/subscriptions/s/resourceGroups/g/sessionPools/p/extra",
        "not a url",
    ] {
        assert_eq!(PoolResourceId::from_endpoint(local), None, "{local}");
    }
}

#[test]
fn arm_api_versions_parse_by_name() {
    for v in ArmApiVersion::ALL {
        assert_eq!(v.as_str().parse::<ArmApiVersion>(), Ok(v));
    }
    assert_eq!(ArmApiVersion::default().as_str(), "2025-10-02-preview");
    let err = "2023-01-01".parse::<ArmApiVersion>().unwrap_err();
    assert!(err.contains("2026-01-01"), "{err}");
}

#[test]
fn the_url_is_the_resource_with_its_api_version() {
    let client = ArmClient::new(
        "http://127.0.0.1:9/",
        ArmApiVersion::V2026_01_01,
        Some("t".into()),
        &AuthConfig::None,
    )
    .unwrap();
    let id = PoolResourceId {
        subscription: "s".into(),
        resource_group: "g".into(),
        name: "p".into(),
    };
    assert_eq!(
        client.url(&id).unwrap().as_str(),
        "http://127.0.0.1:9/subscriptions/s/resourceGroups/g/providers/Microsoft.App/sessionPools/p?api-version=2026-01-01"
    );
}

#[test]
fn a_403_names_the_reader_role_and_a_404_the_place_looked_in() {
    let forbidden = ArmError::Forbidden {
        name: "p".into(),
        code: Some("AuthorizationFailed".into()),
        message: Some(
            "does not have authorization to perform action 'Microsoft.App/sessionPools/read'"
                .into(),
        ),
    }
    .to_string();
    assert!(forbidden.contains("\"Reader\" role"), "{forbidden}");
    assert!(
        forbidden.contains("Microsoft.App/sessionPools/read"),
        "{forbidden}"
    );
    assert!(forbidden.contains("AuthorizationFailed"), "{forbidden}");
    let missing = ArmError::NotFound {
        name: "p".into(),
        resource_group: "g".into(),
        subscription: "s".into(),
        code: Some("ResourceNotFound".into()),
        message: None,
    }
    .to_string();
    assert!(
        missing.contains("no session pool p in resource group g of subscription s"),
        "{missing}"
    );
}
