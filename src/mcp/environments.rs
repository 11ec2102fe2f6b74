//! The MCP server's environments (`aca-api.md` §8, §13): `launchShell` hands
//! out an `environmentId` and no session yet; the environment gets its session
//! lazily, on its first command, and is gone after the pool's cooldown ("environment
//! ID not found"). An environment's session identifier is its id, so a person
//! opens the same session in the notebook (`--identifier <environmentId>`, or
//! `a` in the sessions pane) and finds it in the pool's session listing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::host::SessionHost;

/// One launched environment.
#[derive(Debug, Clone, Copy)]
struct Environment {
    /// When `launchShell` made it.
    launched: Instant,
    /// When its last command was sent; `None` before the first (no session yet).
    last_command: Option<Instant>,
}

/// The environments of one MCP server, by id. Shared by every request of the
/// server (the HTTP transport answers each request with a fresh handler).
#[derive(Debug, Default)]
pub struct Environments {
    by_id: Mutex<HashMap<String, Environment>>,
}

/// Why an environment cannot take a command: the message the service gives.
pub const NOT_FOUND: &str = "environment ID not found";

impl Environments {
    /// Makes a new environment and returns its id, which is also the session
    /// identifier its commands run in: a UUID (36 characters, valid by
    /// `aca-api.md` §4.5). Environments gone after `cooldown` are forgotten
    /// here, so the table only holds live ones.
    pub fn launch(&self, cooldown: Duration) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        let now = Instant::now();
        let mut by_id = self.lock();
        by_id.retain(|_, env| now.duration_since(env.last_use()) <= cooldown);
        by_id.insert(
            id.clone(),
            Environment {
                launched: now,
                last_command: None,
            },
        );
        id
    }

    /// Takes a command for environment `id`: returns the session identifier
    /// to run it in and records the use, or [`NOT_FOUND`] when the id was never
    /// launched or the environment is gone: its session ended (the pool says
    /// so where it can tell, [`SessionHost::session_exists`]) or, where it
    /// cannot, nothing used it for the pool's cooldown. A gone environment is
    /// forgotten.
    ///
    /// # Errors
    ///
    /// [`NOT_FOUND`] with the id.
    pub fn command(&self, id: &str, host: &dyn SessionHost) -> Result<String, String> {
        let now = Instant::now();
        let mut by_id = self.lock();
        let not_found = || format!("{NOT_FOUND}: {id}");
        let env = by_id.get(id).copied().ok_or_else(not_found)?;
        let idle = now.duration_since(env.last_use());
        let gone = match (host.session_exists(id), env.last_command) {
            (Some(true), _) => false,
            // Its session ended (cooldown, or someone ended it).
            (Some(false), Some(_)) => true,
            (Some(false), None) | (None, _) => idle > host.cooldown(),
        };
        if gone {
            by_id.remove(id);
            return Err(not_found());
        }
        if let Some(env) = by_id.get_mut(id) {
            env.last_command = Some(now);
        }
        Ok(id.to_string())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Environment>> {
        // A panic while holding the lock leaves a consistent map (every
        // change is one insert, remove or field write): keep using it.
        self.by_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Environment {
    fn last_use(&self) -> Instant {
        self.last_command.unwrap_or(self.launched)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU8, Ordering};

    use async_trait::async_trait;

    use super::*;
    use crate::mcp::host::HostError;
    use crate::protocol::Execution;

    /// A host whose sessions exist or not as the test says (0 unknown, 1 yes,
    /// 2 no), with a chosen cooldown; it runs nothing.
    struct Host {
        exists: AtomicU8,
        cooldown: Duration,
    }

    #[async_trait]
    impl SessionHost for Host {
        async fn run_python(
            &self,
            _: &str,
            _: &str,
            _: &crate::mcp::Caller,
        ) -> Result<Execution, HostError> {
            Err(HostError("not used".into()))
        }
        fn session_exists(&self, _: &str) -> Option<bool> {
            match self.exists.load(Ordering::SeqCst) {
                0 => None,
                1 => Some(true),
                _ => Some(false),
            }
        }
        fn cooldown(&self) -> Duration {
            self.cooldown
        }
    }

    fn host(exists: u8, cooldown: Duration) -> Host {
        Host {
            exists: AtomicU8::new(exists),
            cooldown,
        }
    }

    #[test]
    fn an_environment_is_its_session_identifier() {
        let envs = Environments::default();
        let h = host(2, Duration::from_secs(300));
        let id = envs.launch(h.cooldown());
        crate::protocol::identifier::check(&id).unwrap();
        // No session yet, within the cooldown: the first command is taken.
        assert_eq!(envs.command(&id, &h), Ok(id.clone()));
        h.exists.store(1, Ordering::SeqCst);
        assert_eq!(envs.command(&id, &h), Ok(id.clone()));
    }

    #[test]
    fn an_unknown_id_is_not_found() {
        let envs = Environments::default();
        let h = host(1, Duration::from_secs(300));
        let err = envs.command("nope-1234", &h).unwrap_err();
        assert_eq!(err, "environment ID not found: nope-1234");
    }

    #[test]
    fn an_environment_whose_session_ended_is_gone_for_good() {
        let envs = Environments::default();
        let h = host(1, Duration::from_secs(300));
        let id = envs.launch(h.cooldown());
        envs.command(&id, &h).unwrap();
        h.exists.store(2, Ordering::SeqCst);
        assert!(envs.command(&id, &h).unwrap_err().starts_with(NOT_FOUND));
        // Forgotten: even a session of that identifier does not bring it back.
        h.exists.store(1, Ordering::SeqCst);
        assert!(envs.command(&id, &h).is_err());
    }

    #[test]
    fn where_the_pool_cannot_tell_the_cooldown_decides() {
        let envs = Environments::default();
        let h = host(0, Duration::ZERO);
        let id = envs.launch(Duration::from_secs(300));
        std::thread::sleep(Duration::from_millis(5));
        assert!(envs.command(&id, &h).is_err(), "idle past a zero cooldown");
        let h = host(0, Duration::from_secs(300));
        let id = envs.launch(h.cooldown());
        assert_eq!(envs.command(&id, &h), Ok(id.clone()));
    }

    #[test]
    fn launching_forgets_the_environments_that_are_gone() {
        let envs = Environments::default();
        let old = envs.launch(Duration::from_secs(300));
        std::thread::sleep(Duration::from_millis(5));
        let _new = envs.launch(Duration::ZERO);
        assert!(!envs.lock().contains_key(&old));
    }
}
