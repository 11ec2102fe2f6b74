//! Static bearer tokens (`--token`, `SESSIONPAD_TOKEN`): normalisation and, when the
//! token is a JWT, a look at its `exp` and `aud` claims so that an expired token or
//! one for the wrong audience is reported before a request is sent. The signature is
//! not verified: that is the service's job. Nothing here ever logs the token.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The audience a dynamic-sessions token must carry (`aca-api.md` §2).
pub(super) const AUDIENCE: &str = "https://dynamicsessions.io";
/// The old audience some clients (Semantic Kernel) still request (`aca-api.md` §2).
pub(super) const LEGACY_AUDIENCE: &str = "https://acasessions.io";

const GET_ONE: &str = "get a new one with `az account get-access-token --resource \
                       https://dynamicsessions.io --query accessToken -o tsv`";

/// The claims of a JWT this module looks at.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Claims {
    /// `exp`: expiry, in seconds since the Unix epoch.
    pub exp: Option<i64>,
    /// `aud`: a string or an array of strings in the token; always a list here.
    pub aud: Vec<String>,
}

/// A checked static token.
pub(super) struct StaticToken {
    /// The header value, `Bearer <token>`.
    pub header: String,
    /// The JWT's expiry (Unix seconds), when the token is a JWT with an `exp` claim.
    pub exp: Option<i64>,
    /// A warning to show once (the legacy audience), if any.
    pub warning: Option<String>,
}

/// Normalises `raw` (trims it, drops a leading `Bearer `) and checks it: it must be
/// a non-empty header-safe string; if it is a JWT, it must not be expired and its
/// audience must be dynamic sessions'.
pub(super) fn check(raw: &str, now: SystemTime) -> Result<StaticToken, String> {
    let mut token = raw.trim();
    if token.len() > 7 && token[..7].eq_ignore_ascii_case("bearer ") {
        token = token[7..].trim_start();
    }
    if token.is_empty() || token.eq_ignore_ascii_case("bearer") {
        return Err(format!("the static token is empty: {GET_ONE}"));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(
            "the static token contains spaces, line breaks or non-ASCII characters: \
             pass only the access token itself"
                .into(),
        );
    }
    let claims = claims(token).unwrap_or_default();
    check_expiry(claims.exp, now)?;
    let warning = check_audience(&claims.aud)?;
    Ok(StaticToken {
        header: format!("Bearer {token}"),
        exp: claims.exp,
        warning,
    })
}

/// Decodes the payload of a JWT (three base64url parts) without verifying it.
/// `None` when `token` is not a JWT: such opaque tokens are sent as they are.
pub(super) fn claims(token: &str) -> Option<Claims> {
    let mut parts = token.split('.');
    let (header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let decode = |part: &str| -> Option<serde_json::Value> {
        let bytes = URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')).ok()?;
        serde_json::from_slice(&bytes).ok()
    };
    decode(header)?.as_object()?;
    let payload = decode(payload)?;
    let payload = payload.as_object()?;
    let exp = payload
        .get("exp")
        // A float `exp` (some issuers) counts whole seconds; `as` saturates.
        .and_then(|e| {
            #[allow(clippy::cast_possible_truncation)]
            e.as_i64().or_else(|| e.as_f64().map(|f| f as i64))
        });
    let aud = match payload.get("aud") {
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    Some(Claims { exp, aud })
}

/// An error when `exp` is in the past.
pub(super) fn check_expiry(exp: Option<i64>, now: SystemTime) -> Result<(), String> {
    let Some(exp) = exp else { return Ok(()) };
    let now = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    if exp > now {
        return Ok(());
    }
    let at = chrono::DateTime::from_timestamp(exp, 0).map_or_else(
        || exp.to_string(),
        |t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    Err(format!(
        "the static token expired at {at} ({} ago): {GET_ONE}",
        ago(now - exp)
    ))
}

/// An error when the audience is a URL other than dynamic sessions' (old or new);
/// a warning for the legacy audience or an audience that is not a URL (an application
/// id, which cannot be told apart here). No `aud` claim: nothing to say.
pub(super) fn check_audience(aud: &[String]) -> Result<Option<String>, String> {
    if aud.is_empty() {
        return Ok(None);
    }
    let norm = |a: &str| a.trim_end_matches('/').to_ascii_lowercase();
    if aud.iter().any(|a| norm(a) == AUDIENCE) {
        return Ok(None);
    }
    if aud.iter().any(|a| norm(a) == LEGACY_AUDIENCE) {
        return Ok(Some(format!(
            "the static token is for the old audience {LEGACY_AUDIENCE}; Azure session pools \
             expect {AUDIENCE} and may answer 401"
        )));
    }
    let shown = aud.join(", ");
    if aud.iter().any(|a| a.contains("://")) {
        return Err(format!(
            "the static token is for audience {shown}, not {AUDIENCE}: {GET_ONE}"
        ));
    }
    Ok(Some(format!(
        "the static token's audience is {shown}, not {AUDIENCE}; if the pool answers 401, {GET_ONE}"
    )))
}

fn ago(secs: i64) -> String {
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 2 * 3600 => format!("{} min", s / 60),
        s if s < 2 * 86400 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn jwt(payload: &str) -> String {
        let enc = |s: &str| URL_SAFE_NO_PAD.encode(s.as_bytes());
        format!(
            "{}.{}.c2lnbmF0dXJl",
            enc(r#"{"alg":"RS256","typ":"JWT"}"#),
            enc(payload)
        )
    }

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn claims_of_a_jwt() {
        let c = claims(&jwt(
            r#"{"aud":"https://dynamicsessions.io","exp":1700000000}"#,
        ));
        assert_eq!(
            c,
            Some(Claims {
                exp: Some(1_700_000_000),
                aud: vec![AUDIENCE.into()]
            })
        );
        let c = claims(&jwt(r#"{"aud":["a","b"],"exp":1.5e9}"#)).unwrap();
        assert_eq!(c.aud, vec!["a", "b"]);
        assert_eq!(c.exp, Some(1_500_000_000));
    }

    #[test]
    fn opaque_tokens_have_no_claims() {
        assert_eq!(claims("opaque-token"), None);
        assert_eq!(claims("a.b.c"), None);
        assert_eq!(claims("a.b.c.d.e"), None);
        // A JSON payload but a header that is not JSON: not a JWT.
        let payload = URL_SAFE_NO_PAD.encode(br#"{"exp":1}"#);
        assert_eq!(claims(&format!("xyz.{payload}.sig")), None);
    }

    #[test]
    fn expired_jwt_is_an_error() {
        let t = jwt(r#"{"aud":"https://dynamicsessions.io","exp":1000}"#);
        let err = check(&t, at(1000 + 3 * 3600)).err().unwrap();
        assert!(
            err.contains("expired at 1970-01-01T00:16:40Z (3 h ago)"),
            "{err}"
        );
        assert!(!err.contains(&t));
        assert!(check(&t, at(999)).is_ok());
    }

    #[test]
    fn audiences() {
        let ok = check(
            &jwt(r#"{"aud":"https://dynamicsessions.io/","exp":2000}"#),
            at(1),
        )
        .unwrap();
        assert!(ok.warning.is_none());
        assert_eq!(ok.exp, Some(2000));

        let legacy = check(&jwt(r#"{"aud":"https://acasessions.io"}"#), at(1)).unwrap();
        assert!(legacy.warning.unwrap().contains("old audience"));

        let err = check(&jwt(r#"{"aud":"https://management.azure.com"}"#), at(1))
            .err()
            .unwrap();
        assert!(err.contains("https://management.azure.com"), "{err}");

        let guid = check(
            &jwt(r#"{"aud":"00000000-1111-2222-3333-444444444444"}"#),
            at(1),
        )
        .unwrap();
        assert!(guid.warning.unwrap().contains("00000000-1111"));
    }

    #[test]
    fn normalisation() {
        let t = check("  Bearer abc123\n", at(1)).unwrap();
        assert_eq!(t.header, "Bearer abc123");
        assert!(check("  ", at(1)).is_err());
        assert!(check("two words", at(1)).is_err());
        assert!(check("bearer ", at(1)).is_err());
    }
}
