//! Shared helpers of the integration tests: a real local pool (real kernels, real
//! HTTP on loopback) and clients for it.

#![allow(dead_code)]

use std::time::Duration;

use sessionpad::client::{ApiVersion, SessionClient, Target};
use sessionpad::pool::{LocalPool, PoolOptions};

/// A local pool on an ephemeral port with its session folders in a temp dir.
pub struct TestPool {
    pub pool: LocalPool,
    pub dir: tempfile::TempDir,
}

impl TestPool {
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = PoolOptions::embedded();
        opts.sessions_dir = dir.path().join("sessions");
        let pool = LocalPool::start(opts, &|line| eprintln!("[python env] {line}"))
            .await
            .expect("local pool starts");
        Self { pool, dir }
    }

    pub fn client(&self, version: ApiVersion) -> SessionClient {
        SessionClient::new(Target {
            endpoint: self.pool.endpoint(),
            api_version: version,
            token: self.pool.token().map(str::to_string),
        })
        .expect("client")
    }
}

pub const LIMIT: Duration = Duration::from_secs(60);

/// A fresh random session identifier.
pub fn identifier() -> String {
    format!("test-{}", uuid::Uuid::new_v4().simple())
}
